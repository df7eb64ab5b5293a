import Foundation
import HangWatch
import HangWatchTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Why a hang lasted when the loop's own code does not say (issue 33): a lock
/// cycle, the process stopped, the cgroup's CPU limit. Each program
/// (`Tests/safety/hang_causes.c`) runs plain and under `hangwatch run`, and
/// must print the same thing both ways.
extension Integration {
    @Suite struct HangCauses {
        static func program() throws -> SafetyProgram { try SafetyProgram.build("hang_causes", libraries: ["-lpthread"]) }

        /// Runs `hang_causes deadlock` until its deadlock, then sends `signal`:
        /// to hangwatch (which forwards it) when watched, to the program when plain.
        static func deadlock(watched: Bool, signal: Int32) throws -> (ProcessResult, Report?) {
            let path = try program().path
            let scratch = try TestPaths.scratch()
            let marker = scratch.appendingPathComponent("deadlocked").path
            let reportPath = scratch.appendingPathComponent("report.json").path
            let args = watched ? [TestPaths.hangwatch, "run", "--format", "json", "-o", reportPath, "--", path, "deadlock", marker]
                               : [path, "deadlock", marker]
            let result = try Self.runFromCleanSignalState(args) { process in
                let deadline = Date().addingTimeInterval(20)
                while !FileManager.default.fileExists(atPath: marker) && Date() < deadline { usleep(10_000) }
                usleep(700_000) // past the report threshold, with time to follow the chain
                // SIGTERM goes to hangwatch, which forwards it; SIGKILL cannot be, so it goes to the program.
                let target = watched && signal == SIGKILL ? Self.child(of: process.processIdentifier) : process.processIdentifier
                if let target { kill(target, signal) } // the launcher exec'd it: same pid
            }
            let report = FileManager.default.contents(atPath: reportPath).flatMap { try? JSONReport.decode($0) }
            return (result, report)
        }

        /// The two-lock cycle, ended by SIGTERM (or SIGKILL to the program, which
        /// hangwatch outlives): an in-progress hang called a deadlock, naming both
        /// threads and both functions, in the JSON and in the text report's one line.
        @Test(arguments: [SIGTERM, SIGKILL])
        func twoLockCycleIsADeadlock(signal: Int32) throws {
            let (plain, _) = try Self.deadlock(watched: false, signal: signal)
            let (watched, report) = try Self.deadlock(watched: true, signal: signal)
            #expect(plain.status == 128 + signal && watched.status == plain.status,
                    "plain \(plain.status) \(plain.stderr), watched \(watched.status): \(watched.stderr)")
            #expect(plain.stdout == watched.stdout, "plain \(plain.stdout) watched \(watched.stdout)")
            let r = try #require(report, "no report: \(watched.stderr)")
            try Self.expectTwoLockDeadlock(r)
        }

        /// The deadlock `hang_causes deadlock` forms, as the report must tell it:
        /// the last hang in progress, its cause `deadlock` naming both threads
        /// (the hung one in settle_order, auditor in record_audit), each waiting
        /// for the other by a mutex's owner field, the auditor sampled, and the
        /// text report's one line.
        static func expectTwoLockDeadlock(_ r: Report) throws {
            let hang = try #require(r.hangs.last, "\(Safety.describe(r))")
            #expect(hang.inProgress)
            let cause = try #require(hang.cause, "no cause: \(Safety.describe(r))")
            #expect(cause.kind == .deadlock)
            let threads = cause.threads ?? []
            #expect(threads.count == 2, "\(threads)")
            #expect(threads.first?.tid == hang.thread.tid && threads.first?.function == "settle_order", "\(threads)")
            #expect(threads.last?.name == "auditor" && threads.last?.function == "record_audit", "\(threads)")
            #expect(threads.first?.waitsFor == threads.last?.tid && threads.last?.waitsFor == threads.first?.tid)
            #expect(threads.allSatisfy { $0.evidence == "mutex" })
            let auditorTree = try #require(threads.last?.callTree, "the auditor was not sampled")
            #expect(auditorTree.allSymbols.contains("record_audit"))
            // The text report says it in one line.
            let text = try ProcessRunner.run(TestPaths.hangwatch, ["report", try Self.save(r)])
            let line = "deadlock: \(hang.thread.name) (settle_order) waits for auditor (record_audit), which waits for \(hang.thread.name)"
            #expect(text.stdout.contains(line), "\(text.stdout)")
        }

        /// The same cycle found from outside by `hangwatch attach PID`, which
        /// follows the wait-for chain as the engine does (the walk is
        /// CSupport/os/wait_chain.c, both ways): the program, started without
        /// hangwatch, idles 1.5 s in its loop first so that attach watches it
        /// and learns its loop's wait; once both threads are about to wait, it
        /// is ended by SIGTERM 700 ms later, and attach reports on the exit.
        @Test func twoLockCycleIsADeadlockUnderAttach() throws {
            let path = try Self.program().path
            let scratch = try TestPaths.scratch()
            let marker = scratch.appendingPathComponent("deadlocked").path
            let python = try #require(Validators.python3)
            let program = try AttachedProgram.start(path, ["deadlock", marker, "1500"], scratch: scratch,
                                                    prefix: [python, "-c", Self.cleanSignalLauncher])
            let pid = program.pid // the launcher exec'd it: the same pid
            // Attached after the launcher's exec, not to Python.
            let started = Date().addingTimeInterval(20)
            while (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) != "hang_causes\n" && Date() < started {
                usleep(2_000)
            }
            let killer = Thread {
                let deadline = Date().addingTimeInterval(20)
                while !FileManager.default.fileExists(atPath: marker) && Date() < deadline { usleep(10_000) }
                usleep(700_000) // past the report threshold, with time to follow the chain
                kill(pid, SIGTERM)
            }
            killer.start()
            let attach = try AttachReport.attach(pid, ["--duration", "30s"], scratch: scratch)
            let result = try program.finish()
            #expect(FileManager.default.fileExists(atPath: marker), "the program never deadlocked: \(result)")
            #expect(result.status == 128 + SIGTERM && result.stdout == "settling\n", "\(result)")
            #expect(attach.result.status == 0, "stderr: \(attach.result.stderr)")
            try Self.expectTwoLockDeadlock(attach.report)
        }

        /// The Python launcher of `runFromCleanSignalState`: execs its arguments
        /// with no signal blocked and SIGINT and SIGTERM at their defaults.
        static let cleanSignalLauncher = "import os, signal, sys\n"
            + "signal.pthread_sigmask(signal.SIG_SETMASK, [])\n"
            + "for s in (signal.SIGINT, signal.SIGTERM): signal.signal(s, signal.SIG_DFL)\n"
            + "os.execv(sys.argv[1], sys.argv[1:])\n"

        /// Runs `arguments` (executable first) with no signal blocked and SIGINT and
        /// SIGTERM at their defaults, as from a terminal (the test runner blocks them).
        static func runFromCleanSignalState(_ arguments: [String],
                                            whileRunning: @escaping (Process) -> Void) throws -> ProcessResult {
            let python = try #require(Validators.python3)
            return try ProcessRunner.run(python, ["-c", cleanSignalLauncher] + arguments, whileRunning: whileRunning)
        }

        static func save(_ report: Report) throws -> String {
            let path = try TestPaths.scratch().appendingPathComponent("saved.json").path
            try JSONReport.encode(report).write(to: URL(fileURLWithPath: path))
            return path
        }

        /// A CPU-bound request stopped by SIGSTOP for 600 ms: a hang with the
        /// cause `stopped` and about 600 ms stopped, which `--fail-on-hang`
        /// passes unless `--count-stopped` is given. Plain and watched print the same.
        @Test func aStoppedProcessIsStoppedNotSlow() throws {
            let program = try Self.program()
            for countStopped in [false, true] {
                let scratch = try TestPaths.scratch()
                let marker = scratch.appendingPathComponent("request").path
                var stopMs = 0.0
                let gate = ["--fail-on-hang"] + (countStopped ? ["--count-stopped"] : [])
                let run = try program.watched(["spin", "300", "1", "200", marker], hangwatchArgs: gate) { hangwatch in
                    let deadline = Date().addingTimeInterval(20)
                    while !FileManager.default.fileExists(atPath: marker + ".1") && Date() < deadline { usleep(2_000) }
                    usleep(50_000)
                    guard let pid = Self.child(of: hangwatch.processIdentifier) else { return }
                    let start = Date()
                    kill(pid, SIGSTOP)
                    usleep(600_000)
                    stopMs = Date().timeIntervalSince(start) * 1000
                    kill(pid, SIGCONT)
                }
                let plain = try program.plain(["spin", "300", "1", "200"])
                #expect(plain.result.stdout == run.result.stdout, "plain \(plain.result.stdout) watched \(run.result.stdout)")
                let hang = try #require(run.report.hangs.first { $0.durationMs > 700 }, "\(Safety.describe(run.report))")
                #expect(hang.cause?.kind == .stopped, "\(String(describing: hang.cause)) \(Safety.describe(run.report))")
                let stopped = try #require(hang.stoppedMs)
                // The stop as the test timed it (sleep plus two kills), within a watchdog tick and slack.
                #expect(abs(stopped - stopMs) <= 15, "stopped \(stopped) ms, the test stopped it \(stopMs) ms")
                #expect(run.result.status == (countStopped ? 4 : 0), "status \(run.result.status): \(run.result.stderr)")
            }
        }

        /// Requests of 100 ms of CPU each, on a CPU shared with two busy rival
        /// processes (the program pins itself and them to one CPU): each request
        /// waits for that CPU most of its time, so each hang is `starved-of-cpu`,
        /// with the machine's load shown. The rivals are the program's children
        /// and die with it. Plain and watched print the same.
        @Test func aThreadWithNoFreeCPUIsStarved() throws {
            let program = try Self.program()
            let args = ["crowded", "100", "2", "150", "2"]
            let run = try program.watched(args)
            let plain = try program.plain(args)
            #expect(plain.result.status == 0 && run.result.status == 0, "plain \(plain.result.status) watched \(run.result.status): \(run.result.stderr)")
            #expect(plain.result.stdout == run.result.stdout, "plain \(plain.result.stdout) watched \(run.result.stdout)")
            let requests = run.work("request")
            #expect(requests.count == 2)
            let hangs = run.report.hangs.filter { $0.durationMs >= 100 }
            #expect(hangs.count == requests.count, "\(Safety.describe(run.report))")
            for (hang, request) in zip(hangs, requests) {
                #expect(abs(hang.durationMs - request.durationMs) <= 5 + run.stolenMs, "\(hang.durationMs) vs \(request.durationMs)")
                let cause = try #require(hang.cause, "no cause: \(hang.durationMs) ms, cpu \(hang.cpuMs ?? -1), runnable \(hang.runnableMs ?? -1)")
                #expect(cause.kind == .starvedOfCPU, "\(cause.kind): cpu \(hang.cpuMs ?? -1) runnable \(hang.runnableMs ?? -1)")
                let runnable = try #require(cause.ms)
                // A third of one CPU for the request: about two thirds of it spent waiting.
                #expect(runnable > hang.durationMs / 2 && runnable <= hang.durationMs + 1, "runnable \(runnable) of \(hang.durationMs)")
                #expect((cause.loadAverage ?? -1) >= 0 && (cause.cpus ?? 0) >= 1, "\(cause)")
            }
            let text = try ProcessRunner.run(TestPaths.hangwatch, ["report", try Self.save(run.report)])
            #expect(text.stdout.contains("starved of CPU: runnable but waiting for a CPU") && text.stdout.contains("load "),
                    "\(text.stdout)")
        }

        /// The program hangwatch runs: its only child.
        static func child(of pid: Int32) -> Int32? {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8) else { return nil }
            return text.split(separator: " ").compactMap { Int32($0) }.first
        }

        /// A 60 ms-per-request loop in a cgroup limited to 20 % of a CPU: hangs
        /// whose throttled time adds up to the group's cpu.stat (within 5 ms a
        /// hang), each `throttled`. The test makes the group and removes it;
        /// without a writable cgroup v1 cpu controller it is skipped, and says so.
        @Test func aCPULimitIsThrottling() throws {
            let base = "/sys/fs/cgroup/cpu"
            let group = "\(base)/hangwatch-test-\(getpid())"
            guard mkdir(group, 0o755) == 0 else {
                print("skipped: no cgroup can be created under \(base) (\(String(cString: strerror(errno)))): "
                      + "the throttling test needs a writable cgroup v1 cpu controller")
                return
            }
            defer { rmdir(group) }
            try "20000".write(toFile: "\(group)/cpu.cfs_quota_us", atomically: false, encoding: .utf8)
            let program = try Self.program()
            // The program joins the group before it execs (sh writes its own pid, then execs it).
            let run = try HangwatchRun.run("/bin/sh", ["-c", "echo $$ > \(group)/cgroup.procs && exec \"$0\" \"$@\"",
                                                       program.path, "spin", "60", "5", "300"], measure: true)
            let stat = try String(contentsOfFile: "\(group)/cpu.stat", encoding: .utf8)
            let throttledNs = stat.split(separator: "\n").first { $0.hasPrefix("throttled_time ") }
                .flatMap { Double($0.split(separator: " ")[1]) } ?? -1
            let plain = try program.plain(["spin", "60", "5", "300"])
            #expect(plain.result.stdout == run.result.stdout)
            let hangs = run.report.hangs.filter { $0.durationMs >= 100 }
            #expect(hangs.count == 5, "\(Safety.describe(run.report))")
            let sum = hangs.compactMap(\.throttle?.throttledMs).reduce(0, +)
            #expect(abs(sum - throttledNs / 1e6) <= 5 * Double(hangs.count),
                    "hangs' throttled \(sum) ms, cpu.stat \(throttledNs / 1e6) ms")
            for hang in hangs {
                #expect(hang.cause?.kind == .throttled, "\(hang.durationMs) ms: \(String(describing: hang.throttle)) cpu \(hang.cpuMs ?? -1)")
                #expect(hang.throttle?.quotaMs == 20 && hang.throttle?.periodMs == 100)
            }
        }
    }
}
