// The cooperative pool in the text report: a pool hang's threads, each with
// its one-line state and its own call tree.

import Foundation
import HangWatchModel

enum PoolText {
    /// What a hang's header says it was on: "oot.default-qos (tid 812) in one job",
    /// "the cooperative pool (2 threads)", or the thread itself.
    static func threadLabel(_ thread: ThreadRef) -> String {
        label(thread, pool: { "the " + $0 }, job: { $0 + " in one job" }, thread: HangListText.thread)
    }

    /// The hang list's column: "job oot.default-qos (812)", "pool (2 threads)", or "name (tid)".
    static func listLabel(_ thread: ThreadRef) -> String {
        let plain = { (t: ThreadRef) in t.name.isEmpty ? "(\(t.tid))" : "\(t.name) (\(t.tid))" }
        return label(thread, pool: { $0.replacingOccurrences(of: "cooperative pool", with: "pool") },
                     job: { "job " + $0 }, thread: plain)
    }

    /// A label by role: `pool` is given the pool's name, `job` the thread's label.
    private static func label(_ thread: ThreadRef, pool: (String) -> String, job: (String) -> String,
                              thread plain: (ThreadRef) -> String) -> String {
        switch thread.role {
        case Hang.cooperativePoolRole: return pool(thread.name.isEmpty ? "cooperative pool" : thread.name)
        case Hang.jobRole: return job(plain(thread))
        default: return plain(thread)
        }
    }

    /// "tid 812 oot.default-qos: blocked in usleep, its job is hang #1, on a CPU 0.7 ms".
    static func stateLine(_ thread: PoolThread) -> String {
        var text = "tid \(thread.tid)" + (thread.name.isEmpty ? "" : " \(thread.name)") + ": "
        text += thread.state == "blocked" ? "blocked" + (thread.blockedIn.map { " in \($0)" } ?? "") : "running"
        text += ", its job is hang #\(thread.jobHangId)"
        if let cpu = thread.cpuMs { text += ", on a CPU \(NumberFormat.ms(cpu)) of its job" }
        return text
    }

    /// "a job waited at least 212 ms for a thread (the first enqueued once the pool was seen full)".
    /// Nil under `shownWaitMs`: a job enqueued as the spell ended (a task
    /// group's parent, resumed by the first child to finish) says nothing.
    static func waitLine(_ hang: Hang) -> String? {
        guard let wait = hang.poolJobWaitMs, wait >= shownWaitMs else { return nil }
        return "a job waited at least \(NumberFormat.ms(wait)) for a thread (the first enqueued once the pool was seen full)"
    }

    /// The shortest wait the text and Markdown reports tell (JSON and OTLP carry any).
    static let shownWaitMs = 1.0

    /// Every pool thread's state and tree, under a pool hang's header.
    static func lines(_ hang: Hang, width: Int) -> [String] {
        guard let threads = hang.poolThreads else { return [] }
        var out = TextLayout.wrap("  every thread of the pool was inside a job; the threads:", width: width)
        if let wait = waitLine(hang) { out = TextLayout.wrap("  " + wait, width: width, hangingIndent: 4) + out }
        for thread in threads {
            out += TextLayout.wrap("  " + stateLine(thread), width: width, hangingIndent: 4)
            if let tree = thread.callTree { out += CallTreeText(width: width).lines(for: tree) }
        }
        return out
    }
}
