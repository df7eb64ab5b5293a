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
    @Suite struct CommandLine {
        private func hangwatch(_ args: [String]) throws -> ProcessResult {
            try ProcessRunner.run(TestPaths.hangwatch, args, timeout: 30)
        }

        private func expectUsageError(_ args: [String], mentions word: String) throws {
            let r = try hangwatch(args)
            #expect(r.status == 2, "\(args): status \(r.status)")
            let lines = r.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(args): want one line, got \(r.stderr)")
            #expect(r.stderr.contains(word), "\(args): \(r.stderr)")
            #expect(r.stdout.isEmpty)
        }

        @Test func badFlagsGetOneLineAndStatus2() throws {
            try expectUsageError(["run", "--bogus", "--", "/bin/true"], mentions: "--bogus")
            try expectUsageError(["run", "--hang-ms", "-5", "--", "/bin/true"], mentions: "--hang-ms")
            try expectUsageError(["run", "--hang-ms", "abc", "--", "/bin/true"], mentions: "abc")
            try expectUsageError(["run", "--hang-ms", "300", "--report-ms", "200", "--", "/bin/true"], mentions: "--report-ms")
            try expectUsageError(["run", "--sample-hz", "0", "--", "/bin/true"], mentions: "--sample-hz")
            try expectUsageError(["run", "--format", "xml", "--", "/bin/true"], mentions: "xml")
            try expectUsageError(["run", "--hang-ms"], mentions: "--hang-ms")
            try expectUsageError(["run"], mentions: "no program")
            try expectUsageError(["frobnicate"], mentions: "frobnicate")
        }

        @Test func missingProgramIs127AndNonExecutableIs126() throws {
            let missing = try hangwatch(["run", "--", "/nonexistent/program"])
            #expect(missing.status == 127)
            #expect(missing.stderr.split(separator: "\n").count == 1)
            let missingInPath = try hangwatch(["run", "--", "no-such-program-hangwatch"])
            #expect(missingInPath.status == 127)
            let scratch = try TestPaths.scratch()
            let file = scratch.appendingPathComponent("not-executable").path
            _ = FileManager.default.createFile(atPath: file, contents: Data("#!/bin/sh\n".utf8),
                                           attributes: [.posixPermissions: 0o644])
            let notExec = try hangwatch(["run", "--", file])
            #expect(notExec.status == 126)
            #expect(notExec.stderr.contains("cannot execute"))
        }

        /// 126 when the program exists but the kernel will not start it: a file marked executable
        /// that is no program (execve's ENOEXEC), an ELF whose loader is missing and a script
        /// whose #! program is missing (execve's ENOENT, inside posix_spawn: not "cannot find").
        /// One line each, naming the cause.
        @Test func spawnFailuresAre126() throws {
            let scratch = try TestPaths.scratch()
            let notAProgram = scratch.appendingPathComponent("not-a-program").path
            try "just text, no #! line\n".write(toFile: notAProgram, atomically: true, encoding: .utf8)
            chmod(notAProgram, 0o755)
            let text = try hangwatch(["run", "--", notAProgram])
            #expect(text.status == 126)
            #expect(text.stderr == "hangwatch: cannot execute '\(notAProgram)': Exec format error\n", "\(text.stderr)")
            let source = scratch.appendingPathComponent("tiny.c").path
            try "int main(void) { return 0; }\n".write(toFile: source, atomically: true, encoding: .utf8)
            let noLoader = try ProcessRunner.compileC(source, into: scratch, name: "no-loader",
                                                      flags: ["-Wl,--dynamic-linker=/nonexistent/ld-hangwatch-test.so.2"])
            let script = scratch.appendingPathComponent("no-interpreter").path
            try "#!/nonexistent/hangwatch-test-shell\necho hi\n".write(toFile: script, atomically: true, encoding: .utf8)
            chmod(script, 0o755)
            for program in [noLoader, script] {
                let r = try hangwatch(["run", "--", program])
                #expect(r.status == 126, "\(program): \(r.status)")
                #expect(r.stderr == "hangwatch: cannot start '\(program)': its interpreter is missing (the ELF loader it "
                         + "names, or the program on its #! line)\n", "\(r.stderr)")
            }
        }

        /// The remaining documented statuses: 126 for a directory, 128+N for a
        /// signal other than SIGKILL (the report names it), 70 when hangwatch
        /// itself cannot work (its agent is missing), 73 when --events cannot be
        /// created. Each failure of hangwatch's own is one line on stderr.
        @Test func directorySignalMissingAgentAndEventFileStatuses() throws {
            let directory = try hangwatch(["run", "--", "/tmp"])
            #expect(directory.status == 126)
            #expect(directory.stderr.split(separator: "\n").count == 1)

            let scratch = try TestPaths.scratch()
            let report = scratch.appendingPathComponent("report.json").path
            // From a clean signal state: the test runner blocks SIGABRT, and the program would inherit that.
            let aborted = try CrashSafety.runFromCleanSignalState(["run", "--format", "json", "-o", report, "--",
                                                                   "/bin/sh", "-c", "kill -ABRT $$"]) { _ in }
            #expect(aborted.status == 128 + SIGABRT)
            let decoded = try JSONReport.decode(try #require(FileManager.default.contents(atPath: report)))
            #expect(decoded.process.signal == Int(SIGABRT))
            #expect(decoded.process.exitCode == nil)

            let noAgent = try ProcessRunner.run(TestPaths.hangwatch, ["run", "--", "/bin/true"],
                                                environment: ["HANGWATCH_AGENT": scratch.appendingPathComponent("none.so").path])
            #expect(noAgent.status == 70)
            #expect(noAgent.stderr.split(separator: "\n").count == 1, "\(noAgent.stderr)")

            let noEvents = try hangwatch(["run", "--events", "/nonexistent-dir/events.jsonl", "--", "/bin/true"])
            #expect(noEvents.status == 73)
            #expect(noEvents.stderr.split(separator: "\n").count == 1)
            #expect(noEvents.stderr.contains("events.jsonl"))
        }

        @Test func helpAndVersion() throws {
            for args in [["--help"], ["run", "--help"], ["--version"]] {
                let r = try hangwatch(args)
                #expect(r.status == 0, "\(args)")
                #expect(!r.stdout.isEmpty)
            }
            #expect(try hangwatch(["run", "--help"]).stdout.contains("--report-ms"))
        }

        /// The exit status is the program's; the report still goes to stderr.
        @Test func exitStatusIsTheProgramsAndStdoutStaysClean() throws {
            let r = try ProcessRunner.run(TestPaths.hangwatch, ["run", "--", TestPaths.runLoopDemo, "--scenario", "exit"])
            #expect(r.status == 3)
            #expect(r.stdout.isEmpty)
            #expect(r.stderr.contains("1 hang"), "report: \(r.stderr)")
            let shell = try ProcessRunner.run(TestPaths.hangwatch, ["run", "--", "/bin/sh", "-c", "echo hello; exit 7"])
            #expect(shell.status == 7)
            #expect(shell.stdout == "hello\n")
        }

        /// A RunLoop program's posix_spawn'd child (a /bin/sh) leaves the parent's one hang as it
        /// is. Children that run a loop of their own and hang, made every way (fork, fork+exec,
        /// posix_spawn, vfork, _Fork, raw clone), are `HostSafety.childrenWithoutAtforkHandlers`.
        @Test func childProcessesAreNotWatched() throws {
            let run = try HangwatchRun.run(TestPaths.runLoopDemo, ["--scenario", "fork"])
            #expect(run.result.status == 0)
            #expect(run.report.hangs.count == 1, "hangs: \(run.report.hangs.map { ($0.thread.tid, $0.durationMs) })")
            let hang = try #require(run.report.hangs.first)
            #expect(hang.thread.tid == run.report.process.pid)
            #expect(hang.callTree?.first(containing: "parentWork") != nil)
        }
    }
}
