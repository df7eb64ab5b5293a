#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HangWatchCapture
import HangWatchAnalysis
import HangWatchModel

/// Clocks and facts about this process for in-process reports.
enum ProcessClock {
    static func monotonicNs() -> UInt64 { SystemClock.monotonicNs() }

    /// When this process started, on the monotonic clock: /proc/self/stat gives
    /// the start in clock ticks since boot (CLOCK_BOOTTIME), so the process's
    /// age is subtracted from now.
    static func processStartNs() -> UInt64 {
        let now = monotonicNs()
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return now }
        // Fields after the command name; starttime is field 22 overall, the 20th after ")".
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let ticks = UInt64(fields[19]) else { return now }
        let hz = UInt64(max(sysconf(Int32(_SC_CLK_TCK)), 1))
        let startBoot = ticks * 1_000_000_000 / hz
        let ageNs = SystemClock.bootNs() &- startBoot
        return ageNs < now ? now - ageNs : now
    }

    static func executablePath() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments.first ?? ""
    }

    /// This process, as events name it (no end yet).
    static func thisProcess(startNs: UInt64) -> ProcessInfoRecord {
        ProcessInfoRecord(pid: Int(getpid()), executable: executablePath(),
                          arguments: Array(CommandLine.arguments.dropFirst()), exitCode: nil, signal: nil,
                          wallMs: 0, startTimeUnixNs: SystemClock.unixNs(ofMonotonic: startNs))
    }

    /// This process from `startNs` to `endNs`, as the report names it.
    static func facts(startNs: UInt64, endNs: UInt64) -> ProcessFacts {
        var facts = ProcessFacts(pid: Int(getpid()), executable: executablePath(),
                                 arguments: Array(CommandLine.arguments.dropFirst()),
                                 exitCode: nil, signal: nil, startNs: startNs, endNs: endNs)
        facts.startUnixNs = SystemClock.unixNs(ofMonotonic: startNs)
        return facts
    }
}
