// Sentences about what a hung thread was doing besides running: its CPU time,
// the call it blocked in, and the lock's owner. Shared by the text, Markdown
// and HTML reports so they say the same thing.

import HangWatchAnalysis
import HangWatchModel

enum HangStateText {
    /// "on a CPU 0.1 ms of 350.2 ms (0 %)", plus the time it waited for a CPU when that mattered.
    static func cpu(_ hang: Hang) -> String? {
        guard let cpu = hang.cpuMs else { return nil }
        var text = "on a CPU \(NumberFormat.ms(cpu)) of \(NumberFormat.ms(hang.durationMs)) "
            + "(\(NumberFormat.percent(cpu, of: hang.durationMs, decimals: 0)))"
        if let runnable = hang.runnableMs, runnable >= max(1, hang.durationMs * 0.05) {
            text += ", runnable but waiting for a CPU \(NumberFormat.ms(runnable))"
        }
        return text
    }

    /// "blocked in futex, called from wait_for_lock".
    static func blocked(_ hang: Hang) -> String? {
        guard hang.kind != .cpu, let call = hang.blockedIn else { return nil }
        var text = "\(hang.kind == .blocked ? "blocked" : "partly blocked") in \(call)"
        if let symbol = hang.blockedSymbol { text += ", called from \(short(symbol, image: ""))" }
        return text
    }

    /// "held by thread 1443 (lock-holder), which was doing holder_compute".
    static func owner(_ hang: Hang) -> String? {
        guard let owner = hang.lockOwner else { return nil }
        var text = "held by thread \(owner.tid)" + (owner.name.isEmpty ? "" : " (\(owner.name))")
        if let doing = doing(owner) { text += ", which was doing \(doing)" }
        else { text += ", whose stack could not be sampled" }
        return text
    }

    /// "no owner known; threads that used CPU meanwhile: worker (1200) 290 ms, …".
    static func noOwner(_ hang: Hang) -> String? {
        guard hang.lockOwner == nil, hang.kind != .cpu, hang.blockedIn == "futex" else { return nil }
        guard !hang.runningThreads.isEmpty else { return "no owner known (a condition, semaphore or group keeps none)" }
        let list = hang.runningThreads.map { t in
            (t.name.isEmpty ? "tid \(t.tid)" : "\(t.name) (tid \(t.tid))") + " \(NumberFormat.ms(t.cpuMs))"
        }
        return "no owner known (a condition, semaphore or group keeps none); threads that used CPU meanwhile: "
            + list.joined(separator: ", ")
    }

    /// What the owner's samples were mostly in: the function of its own code
    /// that carries most of its weight, else its heaviest leaf.
    static func doing(_ owner: LockOwner) -> String? {
        guard let tree = owner.callTree else { return nil }
        if let frame = UserCodeHotspots.owner(of: tree) { return short(frame.symbol, image: frame.image) }
        guard let leaf = CallTreeBuilder.heaviestPath(of: tree).last else { return nil }
        return short(leaf.symbol, image: leaf.image)
    }

    static func short(_ symbol: String, image: String) -> String {
        SymbolDisplayName(symbol: symbol, image: image).text
    }

    /// The lines the text report prints under a hang's header.
    static func detailLines(_ hang: Hang, width: Int) -> [String] {
        let facts = [HangCauseText.line(hang), cpu(hang), blocked(hang), owner(hang), noOwner(hang),
                     HangCauseText.measures(hang)].compactMap { $0 }
        return facts.flatMap { TextLayout.wrap("  " + $0, width: width, hangingIndent: 4) }
    }

    /// The owner's call tree, and those of a deadlock's other threads, for the text report.
    static func ownerTreeLines(_ hang: Hang, width: Int) -> [String] {
        var out: [String] = []
        if let owner = hang.lockOwner, let tree = owner.callTree {
            let title = "  Lock owner \(owner.name.isEmpty ? "" : owner.name + " ")(tid \(owner.tid)) during the wait, "
                + "\(tree.sampleCount) \(tree.sampleCount == 1 ? "sample" : "samples"):"
            out += TextLayout.wrap(title, width: width) + CallTreeText(width: width).lines(for: tree)
        }
        for thread in hang.cause?.threads ?? [] where thread.tid != hang.lockOwner?.tid {
            guard let tree = thread.callTree else { continue }
            let title = "  Deadlocked \(thread.name.isEmpty ? "" : thread.name + " ")(tid \(thread.tid)), "
                + "\(tree.sampleCount) \(tree.sampleCount == 1 ? "sample" : "samples"):"
            out += TextLayout.wrap(title, width: width) + CallTreeText(width: width).lines(for: tree)
        }
        return out
    }
}
