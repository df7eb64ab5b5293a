import Foundation
import HangWatch
import HangWatchTestSupport
import Testing

extension Integration {
    /// The hangwatch process's memory during a long hang: samples are folded
    /// into distinct stacks as they arrive and the ring pages it has read are
    /// handed back, so it stays flat however long the hang lasts.
    @Suite struct ReaderMemory {
        /// VmRSS or VmHWM of process `pid` in kB (0 once it is gone).
        static func memoryKb(_ pid: Int32, _ field: String) -> Int {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
            let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") }
            return line.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        }

        @Test func longHangKeepsTheReaderFlat() throws {
            let scratch = try TestPaths.scratch()
            let program = try ProcessRunner.compileBench("cpu_hang", into: scratch)
            let iterations = try ProcessRunner.calibratedIterations(program, ms: 7000)

            // Samples every 100 ms: the RSS 2 s in (the reader is set up, the
            // hang under way) and the high-water mark at the end.
            var early = 0, peak = 0
            let run = try HangwatchRun.run(program, ["--iters", "\(iterations)", "--variants", "--depth", "6"],
                                           measure: false, timeout: 120, scratch: scratch) { process in
                let pid = process.processIdentifier
                let start = Date()
                while process.isRunning {
                    if early == 0, Date().timeIntervalSince(start) >= 2 { early = Self.memoryKb(pid, "VmRSS") }
                    peak = max(peak, Self.memoryKb(pid, "VmHWM"))
                    usleep(100_000)
                }
            }
            #expect(run.result.status == 0)
            let hang = try #require(run.report.hangs.max { $0.durationMs < $1.durationMs })
            // Calibrated for 7 s of work at depth 1; deeper stacks and a busy VM change that.
            #expect(hang.durationMs > 5_000, "the hang itself: \(hang.durationMs) ms")
            #expect(hang.sampleCount > 3_000)
            #expect(early > 0 && peak > 0)
            // Before folding, this grew about 4.5 MB per second of hang (2 KiB
            // of pcs per sample, plus every ring page read): over 20 MB here.
            #expect(peak - early < 8 * 1024,
                    "grew \(peak - early) kB during a \(Int(hang.durationMs)) ms hang (2 s: \(early) kB, peak \(peak) kB)")
            #expect(peak < 45 * 1024, "peak RSS \(peak) kB")
        }
    }
}
