import Foundation
import HangWatch
import HangWatchTestSupport
import Testing

extension Integration {
    /// Issue 11: an idle program's watchdog cost does not grow with the number
    /// of loop threads it watches. Idle loops, each woken every 100 ms by its
    /// own timer, the 64 timers 5 ms apart in all (threads started one after
    /// another): the watchdog wakes about as often as for one loop. It used to
    /// poll on for 100 ms after any tick that saw a loop busy, so the 64 kept
    /// it polling: 234-253 wakeups in 2 s against about 50 (now about 60 for both).
    @Suite struct WatchdogWakeups {
        private func wakeups(threads: Int, program: String, scratch: URL, tickMs: Int = 100) throws -> (wakeups: Int, ticks: Int) {
            let out = scratch.appendingPathComponent("idle-\(threads)-\(tickMs).txt").path
            let result = try ProcessRunner.run(TestPaths.hangwatch,
                                               ["run", "--thread", "loop-*", "-o", "/dev/null", "--", program,
                                                "--ms", "2000", "--threads", "\(threads)", "--spread-ms", "5",
                                                "--tick-ms", "\(tickMs)", "--out", out])
            #expect(result.status == 0, "\(result.stderr)")
            let line = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
            func field(_ key: String) -> Int {
                line.split(separator: " ").first { $0.hasPrefix("\(key)=") }
                    .flatMap { Int($0.dropFirst(key.count + 1).trimmingCharacters(in: .whitespacesAndNewlines)) } ?? -1
            }
            return (field("watchdog_switches"), field("ticks"))
        }

        @Test func idleLoopThreadsDoNotMultiplyTheWatchdogsWakeups() throws {
            let scratch = try TestPaths.scratch()
            let program = try ProcessRunner.compileBench("idle_loop", into: scratch, flags: ["-Wall"])
            let one = try wakeups(threads: 1, program: program, scratch: scratch)
            let many = try wakeups(threads: 64, program: program, scratch: scratch)
            #expect(one.ticks >= 2 * 19 && many.ticks >= 65 * 19, "the loops ran: \(one.ticks), \(many.ticks) timer ticks")
            #expect(one.wakeups > 0, "the watchdog's wakeups were counted")
            // 2 s: each 100 ms round of timers wakes it once from its park, and once
            // more to see the round's busy periods end; its park times out every 50 ms.
            #expect(many.wakeups <= one.wakeups * 3 / 2 + 20, "64 loops: \(many.wakeups) wakeups, 1 loop: \(one.wakeups)")
            #expect(many.wakeups <= 100, "\(many.wakeups) wakeups in 2 s")
        }

        /// A loop woken every 10 ms (a responsive app's timer) keeps the
        /// watchdog from parking; it polls every 20 ms, not every 10 (each
        /// wake-up costs it 15-20 µs here): 200 wake-ups in 2 s before, about
        /// 110 now. Hangs are still found and sampled (RunLoopHangs, OptionEffects).
        @Test func aTenMillisecondLoopWakesTheWatchdogEveryOtherTick() throws {
            let scratch = try TestPaths.scratch()
            let program = try ProcessRunner.compileBench("idle_loop", into: scratch, flags: ["-Wall"])
            let fast = try wakeups(threads: 1, program: program, scratch: scratch, tickMs: 10)
            #expect(fast.ticks >= 2 * 190, "the loops ran: \(fast.ticks) timer ticks")
            #expect(fast.wakeups > 50 && fast.wakeups <= 150, "\(fast.wakeups) wakeups in 2 s")
        }
    }
}
