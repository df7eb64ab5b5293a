import Foundation
import HangWatchTestSupport
import Testing

extension Integration {
    /// How often the hangwatch process wakes while it waits for the program:
    /// each wake-up costs it 20-80 µs on a 2-vCPU VM. While the engine samples
    /// no thread it sleeps on the log (at most a second at a time), and the
    /// watchdog wakes it when it starts sampling one; then it drains every
    /// 200 ms for one sampled thread, down to 50 ms for four or more (every
    /// 10 ms with live events). The exit wakes it at once,
    /// through a thread watching a pidfd (BENCHMARKS.md, row (e)).
    @Suite struct ReaderWakeups {
        /// voluntary + involuntary context switches of process `pid` (its main thread), or nil once it is gone.
        static func switches(_ pid: Int32) -> Int? {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
            let counts = status.split(separator: "\n").filter { $0.contains("ctxt_switches:") }
                .compactMap { Int($0.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") }
            return counts.count == 2 ? counts.reduce(0, +) : nil
        }

        /// CPU time of process `pid`'s main thread in ns (schedstat), or nil once it is gone.
        static func cpuNs(_ pid: Int32) -> UInt64? {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/schedstat", encoding: .utf8) else { return nil }
            return text.split(separator: " ").first.flatMap { UInt64($0) }
        }

        @Test func sleepsWhileTheProgramIdles() throws {
            let scratch = try TestPaths.scratch()
            let program = try ProcessRunner.compileBench("idle_loop", into: scratch)
            let stamps = scratch.appendingPathComponent("stamps.txt").path
            var wakes: Int?
            // A loop woken by a 10 ms timer: it keeps the watchdog polling, not the reader.
            let run = try HangwatchRun.run(program, ["--ms", "2500", "--tick-ms", "10", "--out", stamps], measure: false,
                                           timeout: 60, scratch: scratch) { process in
                let pid = process.processIdentifier
                usleep(700_000) // start-up is over
                guard let first = Self.switches(pid) else { return }
                usleep(1_000_000)
                if let second = Self.switches(pid) { wakes = second - first }
                while process.isRunning { usleep(20_000) }
            }
            #expect(run.result.status == 0)
            #expect(run.report.hangs.isEmpty)
            // One wake-up a second (the idle timeout); a drain every 50 ms made 20, the 10 ms poll before
            // it 100. A loop iteration preempted for 10 ms on a loaded machine starts a session: 2-3 more.
            let counted = try #require(wakes)
            #expect(counted <= 6, "the hangwatch process woke \(counted) times in 1 s")
        }

        /// A parked reader still sees the exit at once: a thread waiting on a
        /// pidfd wakes it. The loop idles 1.2 s and exits, between two idle
        /// timeouts (about 1 s and 2 s in on a quiet machine); without that
        /// wake hangwatch reaped it about 0.8 s late.
        @Test func theExitWakesAParkedReader() throws {
            let scratch = try TestPaths.scratch()
            let program = try ProcessRunner.compileBench("idle_loop", into: scratch)
            let stamps = scratch.appendingPathComponent("stamps.txt").path
            let run = try HangwatchRun.run(program, ["--ms", "1200", "--out", stamps], measure: false, timeout: 60,
                                           scratch: scratch)
            #expect(run.result.status == 0)
            #expect(run.report.hangs.isEmpty)
            let line = try String(contentsOfFile: stamps, encoding: .utf8)
            let wallNs = try #require(line.split(separator: " ").first { $0.hasPrefix("wall_ns=") }
                .flatMap { UInt64($0.dropFirst("wall_ns=".count)) })
            // The report's wall time runs from the spawn to the reap: beside the loop's
            // own time it holds the program's start (loader, agent) and exit, 5-30 ms here.
            let lateMs = run.report.process.wallMs - Double(wallNs) / 1e6
            #expect(lateMs < 300, "hangwatch reaped the program \(lateMs) ms after its loop ended")
        }

        /// The program idles 1.5 s (the reader parks), then hangs for about a
        /// second. The reader must be draining within a few tens of ms of the
        /// hang's start, not at its next idle timeout up to a second later.
        @Test func theStartOfSamplingWakesTheReader() throws {
            let scratch = try TestPaths.scratch()
            let program = try ProcessRunner.compileBench("delayed_hang", into: scratch)
            let iters = try ProcessRunner.calibratedIterations(program, ms: 1000)
            let pidFile = scratch.appendingPathComponent("pid").path
            var idleWakes: Int?, firstDrainMs: Double?
            let run = try HangwatchRun.run(program, ["--iters", "\(iters)", "--wait-ms", "1500", "--pid-file", pidFile],
                                           measure: false, timeout: 60, scratch: scratch) { process in
                let reader = process.processIdentifier
                let deadline = Date().addingTimeInterval(20)
                var target: Int32?
                while target == nil && Date() < deadline {
                    target = (try? String(contentsOfFile: pidFile, encoding: .utf8))
                        .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
                    usleep(5_000)
                }
                guard let target else { return }
                usleep(500_000)
                if let first = Self.switches(reader) {
                    usleep(700_000) // 0.5-1.2 s in: before the hang at 1.5 s
                    idleWakes = Self.switches(reader).map { $0 - first }
                }
                // Every 2 ms: the program's CPU time (the hang has begun when it grows 1.5 ms
                // in one step) and the reader's switch count (each change is the reader
                // going back to sleep: a drain done). Both watched from before the hang,
                // so a drain that comes before this loop sees the hang is not missed.
                var previous = Self.cpuNs(target) ?? 0
                var switchCount = Self.switches(reader) ?? 0
                var changes: [Date] = [], hangSeen: Date?
                while Date() < deadline, let cpu = Self.cpuNs(target), let count = Self.switches(reader) {
                    if count != switchCount { changes.append(Date()); switchCount = count }
                    if hangSeen == nil, cpu - previous >= 1_500_000 { hangSeen = Date() }
                    if let hangSeen, Date().timeIntervalSince(hangSeen) > 0.4 { break }
                    previous = cpu
                    usleep(2_000)
                }
                // The first drain from 30 ms before the hang was seen (seeing it lags its start).
                if let hangSeen, let first = changes.first(where: { $0.timeIntervalSince(hangSeen) >= -0.03 }) {
                    firstDrainMs = first.timeIntervalSince(hangSeen) * 1000
                }
                while process.isRunning { usleep(20_000) }
            }
            #expect(run.result.status == 0)
            let hang = try #require(run.report.hangs.first)
            // Running threads are sampled by their CPU time: a machine busy with other work gives fewer.
            #expect(run.report.hangs.count == 1 && hang.durationMs >= 700 && hang.sampleCount >= 100,
                    "\(run.report.hangs.map { ($0.durationMs, $0.sampleCount) })")
            let idle = try #require(idleWakes), firstDrain = try #require(firstDrainMs, "no drain within 400 ms of the hang")
            #expect(idle <= 2, "the hangwatch process woke \(idle) times in 0.7 s of idling")
            // Woken as sampling starts, 10 ms into the hang: a few ms here. A reader left
            // asleep until its idle timeout (1 s) would drain this soon about one time in eight.
            #expect(firstDrain <= 100, "the first drain came \(firstDrain) ms after the hang began")
        }
    }
}
