// The Summary paragraph: the most likely bottleneck and how well samples back it.

import HangWatchAnalysis
import HangWatchModel

enum MarkdownSummary {
    /// Fewer samples than this, or less coverage, and a conclusion is only a hypothesis.
    static let minimumSamples = 20
    static let minimumCoverage = 0.5

    static func paragraph(_ report: Report) -> String {
        let hangs = report.hangs
        let thresholds = report.thresholds
        let wall = NumberFormat.seconds(fromMs: report.process.wallMs)
        guard !hangs.isEmpty else {
            return "No hang of \(NumberFormat.thresholdMs(thresholds.hangMs)) or more was seen in \(wall) of run time: "
                + "on this evidence the loop stayed responsive. Shorter stalls are not counted; lower `--hang-ms` to look for them."
        }
        let reported = hangs.filter(\.reported)
        let trees = reported.compactMap(\.callTree)
        guard !reported.isEmpty else {
            return "\(count(hangs.count, "hang")) of \(NumberFormat.thresholdMs(thresholds.hangMs)) or more, none "
                + "reaching the \(NumberFormat.thresholdMs(thresholds.reportMs)) report threshold, so there is no call tree "
                + "to name a bottleneck. Capture again with `--report-ms \(NumberFormat.fixed(thresholds.hangMs, 0))` to sample them."
        }
        guard let top = UserCodeHotspots.rank(trees).first else {
            return "\(count(reported.count, "reported hang")), but no frame of the program's own code was sampled "
                + "in them; the notes below say what the sampler saw. This is not yet an explanation."
        }
        let sampledMs = trees.reduce(0) { $0 + $1.weightMs }
        let inHangs = reported.filter { hang in
            UserCodeHotspots.rank([hang.callTree].compactMap { $0 }).contains { $0.symbol == top.symbol && $0.image == top.image }
        }
        var text = "The most likely bottleneck is \(MarkdownSyntax.code(SymbolDisplayName(symbol: top.symbol, image: top.image).text))"
            + (top.image.isEmpty ? "" : " in \(MarkdownSyntax.code(TextLayout.basename(top.image)))")
            + ": \(NumberFormat.ms(top.selfMs)) of self time, counting the system-library calls it makes "
            + "(\(NumberFormat.percent(top.selfMs, of: sampledMs, decimals: 0)) of the sampled hang time), "
            + "in \(inHangs.count) of \(count(reported.count, "reported hang")). "
        if let first = HangFinding.group(report).first, case .code(let owner) = first.cause,
           owner.symbol != top.symbol, first.totalMs > inHangs.reduce(0, { $0 + $1.durationMs }) {
            text += "By hang time the costliest finding is another one: hangs in \(MarkdownSyntax.code(SymbolDisplayName(symbol: owner.symbol, image: owner.image).text)), "
                + "\(NumberFormat.ms(first.totalMs)) (finding 1). "
        }
        let samples = reported.reduce(0) { $0 &+ max(0, $1.sampleCount) }
        let coverage = NumberFormat.percent(weightedCoverage(reported), of: 1, decimals: 0)
        if let weak = weakEvidence(reported) {
            text += "The samples are thin (\(weak)): treat this as a hypothesis and capture again, with a longer run or a higher `--sample-hz`."
        } else {
            text += "Backed by samples: \(samples) stack samples covering \(coverage) of the reported hang time."
        }
        return text
    }

    /// Why the samples of `hangs` do not settle the question, or nil when they do.
    static func weakEvidence(_ hangs: [Hang]) -> String? {
        let sampled = hangs.filter(\.reported)
        guard !sampled.isEmpty else { return nil }
        let samples = sampled.reduce(0) { $0 &+ max(0, $1.sampleCount) }
        let coverage = weightedCoverage(sampled)
        var reasons: [String] = []
        if samples < minimumSamples { reasons.append("only \(count(samples, "sample"))") }
        if !(coverage >= minimumCoverage) {
            reasons.append("samples cover \(NumberFormat.percent(coverage, of: 1, decimals: 0)) of the hang time")
        }
        return reasons.isEmpty ? nil : reasons.joined(separator: ", ")
    }

    /// Coverage of all `hangs` together: each hang's coverage weighted by its duration.
    static func weightedCoverage(_ hangs: [Hang]) -> Double {
        let total = hangs.reduce(0) { $0 + max(0, $1.durationMs) }
        guard total > 0 else { return 0 }
        return hangs.reduce(0) { $0 + max(0, $1.durationMs) * $1.sampleCoverage } / total
    }

    static func count(_ n: Int, _ noun: String) -> String {
        "\(n) \(noun)\(n == 1 ? "" : "s")"
    }
}
