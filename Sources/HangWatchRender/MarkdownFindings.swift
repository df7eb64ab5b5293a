// Grouping hangs into findings, and each finding's symptom and likely cause.

import HangWatchAnalysis
import HangWatchModel

/// Hangs that share a likely cause, and the time they cost.
package struct HangFinding {
    package enum Cause: Equatable {
        /// The user-code function the hangs' weight runs through (`UserCodeHotspots.owner`).
        case code(Frame)
        /// Sampled, but no frame of the user's own code carries the weight.
        case systemOnly
        /// Long enough to report, yet no stack was sampled.
        case noSamples
        /// Below the report threshold, so recorded without a call tree.
        case belowReportThreshold
    }

    package var cause: Cause
    package var hangs: [Hang]

    var totalMs: Double { hangs.reduce(0) { $0 + $1.durationMs } }
    /// Pool hangs form findings of their own: their time is also their jobs' time.
    package var isPool: Bool { hangs.first?.thread.role == Hang.cooperativePoolRole }
    /// Whether `hang` belongs with this finding's hangs, cause aside.
    func sharesLane(with hang: Hang) -> Bool { isPool == (hang.thread.role == Hang.cooperativePoolRole) }
    var trees: [CallTreeNode] { hangs.compactMap(\.callTree) }
    /// The hang whose tree is shown as evidence: the longest one with a tree.
    var exemplar: Hang? { hangs.filter { $0.callTree != nil }.max { $0.durationMs < $1.durationMs } }

    /// One finding per cause, the most hang time first (ties: the earliest hang first).
    package static func group(_ report: Report) -> [HangFinding] {
        var findings: [HangFinding] = []
        for hang in report.hangs {
            let cause: Cause
            if !hang.reported {
                cause = .belowReportThreshold
            } else if let tree = hang.callTree {
                let frame = UserCodeHotspots.owner(of: tree)
                    ?? UserCodeHotspots.rank([tree]).first.map { Frame(symbol: $0.symbol, image: $0.image) }
                cause = frame.map(Cause.code) ?? .systemOnly
            } else {
                cause = .noSamples
            }
            if let index = findings.firstIndex(where: { $0.cause == cause && $0.sharesLane(with: hang) }) {
                findings[index].hangs.append(hang)
            } else {
                findings.append(HangFinding(cause: cause, hangs: [hang]))
            }
        }
        findings = DistinguishingFrames.split(findings)
        // Stable: equal totals keep the order of their first hang.
        return findings.enumerated().sorted {
            $0.element.totalMs != $1.element.totalMs ? $0.element.totalMs > $1.element.totalMs : $0.offset < $1.offset
        }.map(\.element)
    }
}

enum MarkdownFindings {
    static func title(_ finding: HangFinding, reportMs: Double) -> String {
        let count = finding.hangs.count
        let cost = "\(NumberFormat.ms(finding.totalMs)) in \(count) \(count == 1 ? "hang" : "hangs")"
        let title = causeTitle(finding, reportMs: reportMs, cost: cost)
        return finding.isPool ? "Cooperative pool starved: " + title : title
    }

    static func causeTitle(_ finding: HangFinding, reportMs: Double, cost: String) -> String {
        switch finding.cause {
        case .code(let frame): return "Hangs in \(MarkdownSyntax.code(SymbolDisplayName(symbol: frame.symbol, image: frame.image).text)) — \(cost)"
        case .systemOnly: return "Hangs inside system libraries — \(cost)"
        case .noSamples: return "Hangs without samples — \(cost)"
        case .belowReportThreshold:
            return "Hangs below the \(NumberFormat.thresholdMs(reportMs)) report threshold — \(cost)"
        }
    }

    /// What the user sees: how long, how often, on which thread, running or waiting.
    static func symptom(_ finding: HangFinding) -> String {
        let hangs = finding.hangs
        let shown = hangs.prefix(6).map { "#\($0.id) (\(NumberFormat.ms($0.durationMs)))" }.joined(separator: ", ")
        let more = hangs.count > 6 ? " and \(hangs.count - 6) more" : ""
        let longest = hangs.map(\.durationMs).max() ?? 0
        var threads: [String] = []
        for hang in hangs {
            let label = hang.thread.name.isEmpty ? "thread" : hang.thread.name
            let name = hang.thread.role == Hang.cooperativePoolRole ? MarkdownSyntax.text(label)
                : "\(MarkdownSyntax.text(label)) (tid \(hang.thread.tid))"
            if !threads.contains(name) { threads.append(name) }
        }
        let thread = threads.count <= 3 ? threads.joined(separator: ", ") : "\(threads.count) threads"
        let what = finding.isPool ? "every thread of the cooperative pool was taken"
            : hangs.allSatisfy({ $0.thread.role == Hang.jobRole }) ? "a job ran without returning to its executor"
            : "the loop did not respond"
        var text = "\(what) during \(hangs.count == 1 ? "hang" : "hangs") \(shown)\(more)"
            + (hangs.count > 1 ? ", longest \(NumberFormat.ms(longest))," : "") + " on \(thread)"
        if let wait = hangs.compactMap(\.poolJobWaitMs).max(), wait >= PoolText.shownWaitMs {
            text += "; a job waited at least \(NumberFormat.ms(wait)) for a thread"
        }
        let unfinished = hangs.filter(\.inProgress).count
        if unfinished > 0 {
            text += "; \(unfinished) still going on when the program ended"
        }
        return text + "."
    }

    /// Why, as far as the samples tell: the heaviest user frames, and whether the thread ran or waited.
    static func likelyCause(_ finding: HangFinding, reportMs: Double) -> String {
        switch finding.cause {
        case .belowReportThreshold:
            return "not sampled: hangs shorter than \(NumberFormat.thresholdMs(reportMs)) are counted but get no "
                + "call tree. Lower the report threshold to see what they do."
        case .noSamples:
            return "unknown: no stack was sampled during these hangs (see the notes: the thread may block "
                + "SIGPROF, or the sampler could not keep up)."
        case .code, .systemOnly:
            break
        }
        let sampledMs = finding.trees.reduce(0) { $0 + $1.weightMs }
        let spots = UserCodeHotspots.rank(finding.trees).prefix(3)
        var text: String
        if spots.isEmpty {
            text = "no frame of the program's own code was sampled; the time is spent inside system libraries"
        } else {
            let list = spots.map {
                "\(MarkdownSyntax.code(SymbolDisplayName(symbol: $0.symbol, image: $0.image).text)) \(NumberFormat.ms($0.selfMs)) "
                    + "(\(NumberFormat.percent($0.selfMs, of: sampledMs, decimals: 0)))"
            }
            text = "the heaviest frames of the program's own code, by self time including the system-library "
                + "calls they make, are " + list.joined(separator: ", ")
        }
        text += ". " + activity(finding.hangs) + HangStateMarkdown.lockSentences(finding.hangs)
        if let weak = MarkdownSummary.weakEvidence(finding.hangs) {
            text += " This is a hypothesis: \(weak)."
        }
        return text
    }

    /// Whether the thread was running or waiting, from the hangs' kinds.
    private static func activity(_ hangs: [Hang]) -> String {
        let blocked = hangs.filter { $0.kind == .blocked }
        let mixed = hangs.filter { $0.kind == .mixed }
        let calls = Set((blocked + mixed).compactMap(\.blockedIn)).sorted().map(MarkdownSyntax.code)
        let waitingIn = calls.isEmpty ? "" : " in " + calls.joined(separator: ", ")
        if blocked.count == hangs.count {
            return "The thread was blocked\(waitingIn), not computing: look for synchronous I/O, sleeps or lock waits on the loop thread."
        }
        if blocked.isEmpty && mixed.isEmpty {
            return "The thread was running (CPU-bound work), not waiting."
        }
        return "The thread was partly computing and partly blocked\(waitingIn)."
    }
}
