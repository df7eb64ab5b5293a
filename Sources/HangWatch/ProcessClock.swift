#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HangWatchCapture

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
}
