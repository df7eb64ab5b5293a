import Foundation
import HangWatch
import HangWatchTestSupport
import Testing

extension Integration {
    /// Issue 8, "It kills the host": programs that hangwatch must never kill.
    /// Each runs plain and under `hangwatch run` and must end the same way.
    @Suite struct HostSafetyKill {
        // Item 1: a sampling signal pending across exec kills the new image.
        @Test func execvItselfAfterBusyWork150Times() throws {
            let program = try SafetyProgram.build("exec_chain")
            let plain = try program.plain(["execv", "150"])
            #expect(plain.result.status == 0 && plain.result.lines == ["execv generations 150"],
                    "the program itself is broken: \(plain.result)")
            let run = try program.watched(["execv", "150"])
            #expect(Safety.difference(plain: plain.result, watched: run.result) == nil,
                    "\(Safety.difference(plain: plain.result, watched: run.result) ?? "")")
        }

        /// The other ways to replace or start a program (item 1's variants).
        @Test(arguments: [
            ("fexecve", "60", [String]()),
            ("execvp", "60", []),
            ("thread", "60", ["--thread", "exec-worker"]),
            ("system", "30", []),
            ("spawn", "30", []),
        ])
        func execVariants(mode: String, generations: String, hangwatchArgs: [String]) throws {
            let program = try SafetyProgram.build("exec_chain")
            let plain = try program.plain([mode, generations])
            #expect(plain.result.status == 0, "plain: \(plain.result)")
            let run = try program.watched([mode, generations], hangwatchArgs: hangwatchArgs)
            #expect(Safety.difference(plain: plain.result, watched: run.result) == nil,
                    "\(Safety.difference(plain: plain.result, watched: run.result) ?? "")")
        }

        // Item 2: a thread cancelled inside a wrapped wait, its stack freed.
        @Test func threadCancelledInUsleepThenStackFreed() throws {
            let program = try SafetyProgram.build("dead_stack")
            let plain = try program.plain(["cancel"])
            #expect(plain.result.status == 0 && plain.result.lines.last?.hasPrefix("survived") == true,
                    "plain: \(plain.result)")
            let run = try program.watched(["cancel"], hangwatchArgs: ["--thread", "victim", "--thread", "main"])
            #expect(Safety.difference(plain: plain.result, watched: run.result) == nil,
                    "\(Safety.difference(plain: plain.result, watched: run.result) ?? "")")
            // The report: the main loop's 150 ms piece of work, nothing of the dead thread's.
            let (lost, phantoms) = Safety.check(run.report, work: run.work("main_loop_work"),
                                                incidental: run.work("cancel_and_join"), toleranceMs: 10 + run.stolenMs)
            #expect(lost.isEmpty && phantoms.isEmpty, "\(Safety.describe(run.report))")
        }

        // Item 2: siglongjmp out of a wrapped wait must not leave it "blocked".
        @Test func siglongjmpOutOfUsleep() throws {
            let program = try SafetyProgram.build("dead_stack")
            let plain = try program.plain(["longjmp"])
            #expect(plain.result.status == 0 && plain.result.lines == ["escaped: alarms 1, after ok", "survived"],
                    "plain: \(plain.result)")
            let run = try program.watched(["longjmp"])
            #expect(Safety.difference(plain: plain.result, watched: run.result) == nil,
                    "\(Safety.difference(plain: plain.result, watched: run.result) ?? "")")
            // The CPU-bound hang after the jump is sampled as such, not as the abandoned sleep.
            let work = try #require(run.work("after_longjmp_work").first)
            let hang = try #require(run.report.hangs.first { abs($0.durationMs - work.durationMs) <= 5 + run.stolenMs },
                                    "\(Safety.describe(run.report))")
            #expect(hang.kind == .cpu, "kind \(hang.kind), blocked in \(hang.blockedIn ?? "-")")
            #expect(Safety.symbols(hang).contains { $0.contains("after_longjmp_work") },
                    "call tree: \(Safety.symbols(hang))")
        }

        // Item 3: select/pselect with fd sets only as large as nfds needs.
        @Test(arguments: ["select", "pselect"])
        func rightSizedFdSetsAtPageEnd(call: String) throws {
            let program = try SafetyProgram.build("fdset_edge")
            let plain = try program.plain([call])
            #expect(plain.result.status == 0 && plain.result.lines.count == 2, "plain: \(plain.result)")
            let run = try program.watched([call])
            #expect(Safety.difference(plain: plain.result, watched: run.result) == nil,
                    "\(Safety.difference(plain: plain.result, watched: run.result) ?? "")")
            let (lost, phantoms) = Safety.match(run.work("busy_with_select"), in: run.report.hangs, toleranceMs: 5 + run.stolenMs)
            #expect(lost.isEmpty && phantoms.isEmpty, "\(Safety.describe(run.report))")
        }
    }
}
