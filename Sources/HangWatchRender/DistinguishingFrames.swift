// Findings name the frame that tells hangs apart, not a helper they share.

import HangWatchAnalysis
import HangWatchModel

/// Hangs grouped under one function because their time is in a shared
/// helper (`burn(ms:)`, a parser both call) are different problems when they
/// come from different callers. Time Profiler users find the owner by
/// charging library time to callers; the same is done here with the
/// program's own helpers: each hang is named by the deepest frame of the
/// program's own code, on its heaviest path, that not every hang of the
/// group shares.
enum DistinguishingFrames {
    /// The program's own frames along a tree's heaviest path (system libraries hidden), outermost first.
    static func userPath(_ tree: CallTreeNode) -> [Frame] {
        guard let folded = tree.hidingSystemFrames() else { return [] }
        return CallTreeBuilder.heaviestPath(of: folded).filter(SystemImages.isUserCode)
            .map { Frame(symbol: $0.symbol, image: $0.image) }
    }

    /// Splits each code finding whose hangs reach its function from different
    /// callers into one finding per distinguishing caller (merged with a
    /// finding that already names it), in first-seen order.
    static func split(_ findings: [HangFinding]) -> [HangFinding] {
        var result: [HangFinding] = []
        for finding in findings {
            guard case .code = finding.cause, finding.hangs.count > 1 else {
                for hang in finding.hangs { append(hang, cause: finding.cause, to: &result) }
                continue
            }
            let paths = finding.hangs.map { $0.callTree.map(userPath) ?? [] }
            let shared = paths.dropFirst().reduce(Set(paths.first ?? [])) { $0.intersection($1) }
            for (hang, path) in zip(finding.hangs, paths) {
                // Nothing tells this hang apart: it stays under the group's function.
                let own = path.last { !shared.contains($0) }
                append(hang, cause: own.map(HangFinding.Cause.code) ?? finding.cause, to: &result)
            }
        }
        return result
    }

    private static func append(_ hang: Hang, cause: HangFinding.Cause, to findings: inout [HangFinding]) {
        if let index = findings.firstIndex(where: { $0.cause == cause && $0.sharesLane(with: hang) }) {
            findings[index].hangs.append(hang)
        } else {
            findings.append(HangFinding(cause: cause, hangs: [hang]))
        }
    }
}
