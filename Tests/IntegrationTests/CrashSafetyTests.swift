import Foundation
import HangWatch
import HangWatchAnalysis
import HangWatchRender
import HangWatchSymbols
import HangWatchTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    @Suite struct CrashSafety {
        /// SIGKILL mid-hang: the samples already in the shared log survive,
        /// and the hang is reported as still in progress.
        @Test func sigkillMidHangStillReportsTheInProgressHang() throws {
            let scratch = try TestPaths.scratch()
            let pidFile = scratch.appendingPathComponent("pid").path
            nonisolated(unsafe) var killedAtNs: UInt64 = 0
            let run = try HangwatchRun.run(TestPaths.runLoopDemo, ["--scenario", "kill", "--pid-file", pidFile],
                                           measure: false, scratch: scratch) { _ in
                // The demo writes <pid-file>.hang (its CLOCK_MONOTONIC time) when its 10 s spin
                // starts; kill it 400 ms in.
                let deadline = Date().addingTimeInterval(20)
                while !FileManager.default.fileExists(atPath: pidFile + ".hang") && Date() < deadline { usleep(10_000) }
                usleep(400_000)
                if let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
                   let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                    var now = timespec()
                    clock_gettime(CLOCK_MONOTONIC, &now)
                    killedAtNs = UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
                    kill(pid, SIGKILL)
                }
            }
            #expect(run.result.status == 137, "stderr: \(run.result.stderr)")
            #expect(run.report.process.signal == 9)
            #expect(run.report.process.exitCode == nil)
            // The scenario's short stall ended before the spin began.
            #expect(run.report.hangs.count == 2, "\(run.report.hangs.map(\.durationMs))")
            #expect(run.report.hangs.first?.inProgress == false)
            let hang = try #require(run.report.hangs.last)
            #expect(hang.inProgress)
            #expect(hang.reported)
            // Its length runs from the spin's start (by the demo's clock) to the kill (by ours, the
            // same CLOCK_MONOTONIC), plus what the design adds: the loop's dispatch before the
            // spin (under 1 ms), and up to one 10 ms wait4 poll plus a drain before hangwatch
            // sees the death and ends the hang there. 40 ms covers a loaded machine.
            let spinStart = try #require(UInt64((try String(contentsOfFile: pidFile + ".hang", encoding: .utf8))
                .trimmingCharacters(in: .whitespacesAndNewlines)))
            let killedMs = Double(killedAtNs - spinStart) / 1e6
            #expect(killedAtNs > spinStart && hang.durationMs >= killedMs - 1 && hang.durationMs <= killedMs + 40,
                    "duration \(hang.durationMs) ms, killed \(killedMs) ms into the spin")
            #expect(hang.sampleCount >= 200)
            let tree = try #require(hang.callTree)
            #expect(tree.allSymbols.contains { $0.contains("spinForever") })
            #expect(run.result.stderr.isEmpty || !run.result.stderr.contains("hangwatch: "),
                    "no hangwatch error expected: \(run.result.stderr)")
        }

        /// SIGINT or SIGTERM sent to hangwatch (not to the program): forwarded
        /// to the program, the report is still written, and the exit status
        /// is the program's (128+N).
        @Test(arguments: [SIGINT, SIGTERM])
        func signalsToHangwatchReachTheProgramAndTheReportIsWritten(signal: Int32) throws {
            let scratch = try TestPaths.scratch()
            let pidFile = scratch.appendingPathComponent("pid").path
            // The test runner blocks these signals, and a program inherits its parent's mask
            // (hangwatch passes it on unchanged): start from a terminal's clean state instead.
            let reportPath = scratch.appendingPathComponent("report.json").path
            let result = try Self.runFromCleanSignalState(["run", "--format", "json", "-o", reportPath, "--",
                                                           TestPaths.runLoopDemo, "--scenario", "kill",
                                                           "--pid-file", pidFile]) { hangwatch in
                let deadline = Date().addingTimeInterval(20)
                while !FileManager.default.fileExists(atPath: pidFile + ".hang") && Date() < deadline { usleep(10_000) }
                usleep(300_000)
                kill(hangwatch.processIdentifier, signal) // the launcher exec'd hangwatch: same pid
            }
            #expect(result.status == 128 + signal, "stderr: \(result.stderr)")
            let report = try JSONReport.decode(try #require(FileManager.default.contents(atPath: reportPath)))
            #expect(report.process.signal == Int(signal))
            let hang = try #require(report.hangs.last)
            #expect(hang.inProgress)
            #expect(hang.callTree?.allSymbols.contains { $0.contains("spinForever") } == true)
            // The program is gone with hangwatch: nothing left running under the pid.
            if let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
               let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                #expect(kill(pid, 0) != 0)
            }
        }

        /// A signal that reaches hangwatch while the program is being started is
        /// forwarded once its pid is known; hangwatch is never killed alone.
        @Test func aSignalDuringStartIsForwardedNotFatalToHangwatchAlone() throws {
            for _ in 0..<5 {
                let scratch = try TestPaths.scratch()
                let report = scratch.appendingPathComponent("report.json").path
                let result = try Self.runFromCleanSignalState(["run", "--format", "json", "-o", report, "--",
                                                               TestPaths.runLoopDemo]) {
                    kill($0.processIdentifier, SIGTERM) // as early as the test can
                }
                // Either hangwatch had not yet installed its handlers (killed before it could
                // start anything: no report, status 143 from hangwatch itself) or it forwarded
                // the signal: then the program got it and the report says so.
                #expect(result.status == 128 + SIGTERM)
                if let data = FileManager.default.contents(atPath: report) {
                    #expect(try JSONReport.decode(data).process.signal == Int(SIGTERM))
                }
            }
        }

        /// hangwatch unblocks the signals it forwards in itself, but the program
        /// starts with the mask (and ignored signals) its parent gave hangwatch,
        /// as it would plain.
        @Test func theProgramInheritsTheSignalMaskHangwatchWasGiven() throws {
            let probe = ["/bin/sh", "-c", "exec grep -E '^Sig(Blk|Ign)' /proc/self/status"]
            let plain = try ProcessRunner.run(probe[0], Array(probe.dropFirst()))
            let scratch = try TestPaths.scratch()
            let watched = try ProcessRunner.run(TestPaths.hangwatch,
                                                ["run", "-o", scratch.appendingPathComponent("r.txt").path, "--"] + probe)
            #expect(plain.status == 0 && watched.status == 0)
            // Signals 32 and 33 are glibc's own (thread cancel, setxid): any threaded
            // glibc process catches them, so a child of one never inherits them
            // ignored. Programs cannot use them (SIGRTMIN is 34); they are left out.
            func masks(_ text: String) -> [String: UInt64] {
                var result: [String: UInt64] = [:]
                for line in text.split(separator: "\n") {
                    let parts = line.split(separator: "\t")
                    guard parts.count == 2, let bits = UInt64(parts[1], radix: 16) else { continue }
                    result[String(parts[0])] = bits & ~UInt64(0x1_8000_0000)
                }
                return result
            }
            #expect(masks(plain.stdout).count == 2)
            #expect(masks(watched.stdout) == masks(plain.stdout), "plain \(plain.stdout) watched \(watched.stdout)")
        }

        /// `nohup hangwatch run -- server`, or `hangwatch run -- job &` in a script:
        /// the signals hangwatch forwards arrive ignored, and the program must
        /// get them ignored too. Plain, a shell that ignored them on entry survives
        /// sending them to itself; it must under hangwatch as well (a handler in
        /// hangwatch used to reset them to the default: exit status 129).
        @Test func signalsIgnoredByTheParentStayIgnoredInTheProgram() throws {
            let python = try #require(Validators.python3)
            let launcher = "import os, signal, sys\n"
                + "for s in (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGTERM): signal.signal(s, signal.SIG_IGN)\n"
                + "os.execv(sys.argv[1], sys.argv[1:])\n"
            let script = "grep '^SigIgn' /proc/self/status; for s in HUP INT QUIT TERM; do kill -$s $$; done; echo survived"
            let scratch = try TestPaths.scratch()
            let plain = try ProcessRunner.run(python, ["-c", launcher, "/bin/sh", "-c", script])
            let watched = try ProcessRunner.run(python, ["-c", launcher, TestPaths.hangwatch, "run",
                                                         "-o", scratch.appendingPathComponent("r.txt").path,
                                                         "--", "/bin/sh", "-c", script])
            #expect(plain.status == 0 && plain.stdout.hasSuffix("survived\n"), "plain: \(plain.status) \(plain.stdout)")
            #expect(watched.status == plain.status, "watched: \(watched.status) \(watched.stderr)")
            #expect(watched.stdout.hasSuffix("survived\n"), "watched: \(watched.stdout)")
            // The four signals (bits 0, 1, 2 and 14), as the plain run has them; glibc's 32 and 33 aside.
            func ignored(_ text: String) -> UInt64? {
                text.split(separator: "\n").first { $0.hasPrefix("SigIgn:") }
                    .flatMap { UInt64($0.split(separator: "\t").last ?? "", radix: 16) }
                    .map { $0 & ~UInt64(0x1_8000_0000) }
            }
            let plainIgnored = try #require(ignored(plain.stdout))
            #expect(plainIgnored & 0x4007 == 0x4007)
            #expect(ignored(watched.stdout) == plainIgnored, "plain \(plain.stdout) watched \(watched.stdout)")
        }

        /// A parent that ignores SIGCHLD (and execs hangwatch): the program starts
        /// with it ignored, as plain, and its exit status still reaches the report
        /// and hangwatch's own status. hangwatch used to inherit the ignore, the
        /// kernel reaped the program at once, and a program that exited 3 made
        /// hangwatch exit 0.
        @Test func aParentIgnoringSIGCHLDKeepsTheExitStatus() throws {
            let python = try #require(Validators.python3)
            let launcher = "import os, signal, sys\n"
                + "signal.signal(signal.SIGCHLD, signal.SIG_IGN)\n"
                + "os.execv(sys.argv[1], sys.argv[1:])\n"
            // The probe is not a shell: dash takes SIGCHLD back for its own jobs.
            let probe = [python, "-c", "import sys\n"
                + "print([l for l in open('/proc/self/status') if l.startswith('SigIgn')][0], end='')\n"
                + "sys.exit(3)\n"]
            let scratch = try TestPaths.scratch()
            let reportPath = scratch.appendingPathComponent("r.json").path
            let plain = try ProcessRunner.run(python, ["-c", launcher] + probe)
            let watched = try ProcessRunner.run(python, ["-c", launcher, TestPaths.hangwatch, "run", "-o", reportPath,
                                                         "--format", "json", "--"] + probe)
            #expect(plain.status == 3)
            #expect(watched.status == 3, "watched: \(watched.status) \(watched.stderr)")
            let report = try JSONReport.decode(try #require(FileManager.default.contents(atPath: reportPath)))
            #expect(report.process.exitCode == 3)
            func ignored(_ text: String) -> UInt64? {
                text.split(separator: "\n").first { $0.hasPrefix("SigIgn:") }
                    .flatMap { UInt64($0.split(separator: "\t").last ?? "", radix: 16) }
                    .map { $0 & ~UInt64(0x1_8000_0000) }
            }
            let plainIgnored = try #require(ignored(plain.stdout))
            #expect(plainIgnored & 0x10000 != 0) // SIGCHLD (17)
            #expect(ignored(watched.stdout) == plainIgnored, "plain \(plain.stdout) watched \(watched.stdout)")
        }

        /// Runs hangwatch as a terminal would start it: no signal blocked, SIGINT and
        /// SIGTERM at their defaults. (The test runner blocks them, and a program
        /// inherits its parent's mask, which hangwatch passes on unchanged.) The
        /// launcher execs hangwatch, so the pid `whileRunning` sees is hangwatch's.
        static func runFromCleanSignalState(_ arguments: [String],
                                            whileRunning: @escaping (Process) -> Void) throws -> ProcessResult {
            let python = try #require(Validators.python3)
            let launcher = "import os, signal, sys\n"
                + "signal.pthread_sigmask(signal.SIG_SETMASK, [])\n"
                + "for s in (signal.SIGINT, signal.SIGTERM): signal.signal(s, signal.SIG_DFL)\n"
                + "os.execv(sys.argv[1], sys.argv[1:])\n"
            return try ProcessRunner.run(python, ["-c", launcher, TestPaths.hangwatch] + arguments,
                                         whileRunning: whileRunning)
        }
    }
}
