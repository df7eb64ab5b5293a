import Foundation
import HangWatch
import HangWatchAnalysis
import HangWatchRender
import HangWatchSymbols
import HangWatchTestSupport
import Testing

extension Integration {
    /// The program keeps its own SIGPROF; hangwatch chains to it or steps aside.
    @Suite struct SignalOwnership {
        private func build() throws -> (String, URL) {
            let scratch = try TestPaths.scratch()
            return (try ProcessRunner.compileC(TestPaths.demoSource("signal_owner.c"), into: scratch, name: "signal_owner"), scratch)
        }

        @Test func programsOwnProfilingTimerStillTicks() throws {
            let (program, scratch) = try build()
            let run = try HangwatchRun.run(program, ["--own-sigprof"], scratch: scratch)
            #expect(run.result.status == 0)
            let ticks = try #require(run.work("prof-ticks").first?.fields)
            let count = Int(ticks[1]) ?? 0, cpuMs = Double(ticks[2]) ?? 0
            // ITIMER_PROF fires every 10 ms of CPU time: the program's handler must
            // still see its ticks (none stolen by hangwatch's handler).
            #expect(Double(count) >= cpuMs / 10 * 0.7, "ticks \(count) for \(cpuMs) ms of CPU")
            let hang = try #require(run.report.hangs.first)
            #expect(hang.sampleCount > 100, "hangwatch's own samples still arrive")
            #expect(try #require(hang.callTree).heaviestPathSymbols.contains { $0.contains("busy_work") })
            #expect(run.report.notes.contains { $0.contains("own SIGPROF handler") })
        }

        /// A thread that blocks SIGPROF: the signal sampler cannot sample it while it runs and
        /// says so; the kernel's sampler needs no signal and samples it all the same.
        @Test(arguments: ["signal", "kernel"])
        func blockedSigprof(sampler: String) throws {
            let (program, scratch) = try build()
            let run = try HangwatchRun.run(program, ["--block-sigprof"], hangwatchArgs: ["--sampler", sampler],
                                           scratch: scratch)
            #expect(run.result.status == 0)
            let hang = try #require(run.report.hangs.first)
            let work = try #require(run.work("busy_work").first)
            #expect(abs(hang.durationMs - work.durationMs) <= 5, "the hang itself is still measured")
            let said = run.report.notes.contains { $0.contains("blocks SIGPROF") }
            if sampler == "signal" {
                #expect(said, "notes: \(run.report.notes)")
            } else {
                #expect(!said && hang.sampleCount > 100, "notes: \(run.report.notes), \(hang.sampleCount) samples")
                #expect(try #require(hang.callTree).heaviestPathSymbols.contains { $0.contains("busy_work") })
            }
        }
    }
}
