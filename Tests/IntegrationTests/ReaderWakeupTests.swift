import Foundation
import HangWatchTestSupport
import Testing

extension Integration {
    /// How often the hangwatch process wakes while it waits for the program:
    /// each wake-up costs it 20-40 µs on a 2-vCPU VM, which at 1 kHz sampling
    /// was most of its cost per sample. It drains every 50 ms unless live events
    /// are asked for (the exit itself wakes it at once, through a pidfd:
    /// BENCHMARKS.md, row (e)).
    @Suite struct ReaderWakeups {
        /// voluntary + involuntary context switches of process `pid` (its main thread), or nil once it is gone.
        static func switches(_ pid: Int32) -> Int? {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
            let counts = status.split(separator: "\n").filter { $0.contains("ctxt_switches:") }
                .compactMap { Int($0.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") }
            return counts.count == 2 ? counts.reduce(0, +) : nil
        }

        @Test func drainsEveryFiftyMillisecondsWithoutLiveEvents() throws {
            let scratch = try TestPaths.scratch()
            let source = TestPaths.packageRoot.appendingPathComponent("Bench/idle_loop.c").path
            let program = try ProcessRunner.compileC(source, into: scratch, name: "idle_loop")
            let stamps = scratch.appendingPathComponent("stamps.txt").path
            var wakes: Int?
            let run = try HangwatchRun.run(program, ["--ms", "2500", "--out", stamps], measure: false, timeout: 60,
                                           scratch: scratch) { process in
                let pid = process.processIdentifier
                usleep(700_000) // start-up is over
                guard let first = Self.switches(pid) else { return }
                usleep(1_000_000)
                if let second = Self.switches(pid) { wakes = second - first }
                while process.isRunning { usleep(20_000) }
            }
            #expect(run.result.status == 0)
            // 20 drains in that second; the 10 ms poll it replaces woke 100 times.
            let counted = try #require(wakes)
            #expect(counted >= 15 && counted <= 40, "the hangwatch process woke \(counted) times in 1 s")
        }
    }
}
