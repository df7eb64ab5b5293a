// The sentence that names a hang's cause (a lock cycle, the CPU limit, a stop,
// no free CPU) and the measures behind it. Shared by the text, Markdown and
// HTML reports and by `diff`, so they all say the same thing.

import HangWatchModel

enum HangCauseText {
    /// "deadlock: main (settle_order) waits for auditor (record_audit), which waits for main".
    static func line(_ hang: Hang) -> String? {
        guard let cause = hang.cause else { return nil }
        let of = NumberFormat.ms(hang.durationMs)
        switch cause.kind {
        case .deadlock:
            let threads = cause.threads ?? []
            guard let first = threads.first else { return "deadlock" }
            var text = "deadlock: " + member(first)
            for (index, thread) in threads.enumerated().dropFirst() {
                text += (index == 1 ? " waits for " : ", which waits for ") + member(thread)
            }
            // The chain ends where it started, or at a thread met before (a cycle it runs into).
            let back = threads.last.flatMap { last in threads.first { $0.tid == last.waitsFor } } ?? first
            return text + ", which waits for " + label(back)
        case .throttled:
            var text = "throttled: the cgroup's CPU limit"
            if let limit = hang.throttle.flatMap(limitText) { text += " (\(limit))" }
            let throttled = cause.ms ?? 0
            let periods = hang.throttle.map { ", in \($0.throttledPeriods) \($0.throttledPeriods == 1 ? "period" : "periods")" } ?? ""
            // cpu.stat sums the time over the group's CPUs, so it can pass the wall time.
            guard throttled > hang.durationMs else { return text + " held the process \(NumberFormat.ms(throttled)) of \(of)" + periods }
            return text + " held the process through most of \(of)" + periods
                + " (cpu.stat: \(NumberFormat.ms(throttled)) throttled, summed over its CPUs)"
        case .stopped:
            return "stopped: the process was stopped \(NumberFormat.ms(cause.ms ?? 0)) of \(of)"
                + " (SIGSTOP, Ctrl-Z, a debugger or the freezer); not counted by --fail-on-hang without --count-stopped"
        case .starvedOfCPU:
            var text = "starved of CPU: runnable but waiting for a CPU \(NumberFormat.ms(cause.ms ?? 0)) of \(of)"
            var load: [String] = []
            if let average = cause.loadAverage { load.append("load \(NumberFormat.fixed(average, 2))") }
            if let cpus = cause.cpus { load.append("\(cpus) \(cpus == 1 ? "CPU" : "CPUs")") }
            if let runnable = cause.runnableTasks { load.append("\(runnable) tasks runnable") }
            if !load.isEmpty { text += " (" + load.joined(separator: ", ") + ")" }
            return text
        }
    }

    /// The measures that are not the verdict: "stopped 40.0 ms", "throttled 12.0 ms by the CPU limit (20 ms per 100 ms)".
    static func measures(_ hang: Hang) -> String? {
        var parts: [String] = []
        if let stopped = hang.stoppedMs, hang.cause?.kind != .stopped {
            parts.append("process stopped \(NumberFormat.ms(stopped))")
        }
        if let throttle = hang.throttle, throttle.throttledMs > 0, hang.cause?.kind != .throttled {
            parts.append("throttled \(NumberFormat.ms(throttle.throttledMs)) by the cgroup's CPU limit"
                         + (limitText(throttle).map { " (\($0))" } ?? ""))
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    /// "20 ms per 100 ms", or nil when the group has no quota.
    static func limitText(_ throttle: CPUThrottle) -> String? {
        guard let quota = throttle.quotaMs else { return nil }
        return "\(NumberFormat.fixed(quota, quota.rounded() == quota ? 0 : 1)) ms per "
            + "\(NumberFormat.fixed(throttle.periodMs, throttle.periodMs.rounded() == throttle.periodMs ? 0 : 1)) ms"
    }

    /// The short name of the kind, for tables and timelines: `deadlock`, `throttled`, `stopped`, `starved-of-cpu`.
    static func kindName(_ hang: Hang) -> String? { hang.cause?.kind.rawValue }

    private static func label(_ thread: DeadlockThread) -> String {
        thread.name.isEmpty ? "tid \(thread.tid)" : thread.name
    }

    private static func member(_ thread: DeadlockThread) -> String {
        label(thread) + (thread.function.map { " (\(HangStateText.short($0, image: "")))" } ?? "")
    }

}
