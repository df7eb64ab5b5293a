import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// CPU time the hypervisor took from this VM (`steal` in /proc/stat), per CPU.
///
/// Why: a test that holds a hang's length to the program's own measurement
/// within a few milliseconds measures the VM instead when the host takes a CPU
/// away for tens of milliseconds between the program's clock reading and its
/// next wait (seen in CI). The time stolen during a run bounds how far that can
/// move a length, so the run's tolerance grows by it; on a machine that lost
/// nothing it stays as strict as written.
package enum StolenTime {
    /// Steal jiffies of each CPU now (empty where /proc/stat cannot be read).
    package static func perCPU() -> [UInt64] {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line -> UInt64? in
            let fields = line.split(separator: " ")
            // "cpuN user nice system idle iowait irq softirq steal ...": the per-CPU lines only.
            guard let name = fields.first, name.hasPrefix("cpu"), name.count > 3, fields.count > 8 else { return nil }
            return UInt64(fields[8])
        }
    }

    /// The most any one CPU lost between two readings, in milliseconds.
    package static func maxMs(from before: [UInt64], to after: [UInt64]) -> Double {
        let ticksPerSecond = Double(max(sysconf(Int32(_SC_CLK_TCK)), 1))
        let most = zip(before, after).map { $1 >= $0 ? $1 - $0 : 0 }.max() ?? 0
        return Double(most) * 1000 / ticksPerSecond
    }
}
