import Foundation
import HangWatch
import HangWatchAnalysis
import HangWatchRender
import HangWatchSymbols
import HangWatchTestSupport
import Testing

extension Integration {
    /// Under dispatchMain() and async @main the "main thread" is a role: the
    /// main queue's work runs on changing dispatch workers.
    @Suite struct MainQueue {
        @Test func dispatchMainBlocksAreTheHangs() throws {
            let run = try HangwatchRun.run(TestPaths.dispatchMainDemo)
            #expect(run.result.status == 0)
            #expect(run.report.hangs.count == 2, "hangs: \(run.report.hangs.map(\.durationMs))")
            for name in ["importPhotos", "updateBadge"] {
                let work = try #require(run.work(name).first)
                let hang = try #require(run.hang(startingNear: work))
                #expect(abs(hang.durationMs - work.durationMs) <= 20 + run.stolenMs,
                        "\(name): \(hang.durationMs) vs \(work.durationMs)")
                #expect(hang.thread.role == "main-queue")
                // The sampled thread is the worker that ran the block, not the parked main thread.
                #expect(hang.thread.tid != run.report.process.pid)
            }
            // Attribution: the reported one names its function; lower the bar to see the other's tree.
            let photos = try #require(run.report.hangs.first { $0.reported })
            #expect(try #require(photos.callTree).heaviestPathSymbols.contains { $0.contains("importPhotos") })
            let all = try HangwatchRun.run(TestPaths.dispatchMainDemo, hangwatchArgs: ["--report-ms", "100"])
            let badge = try #require(all.report.hangs.first { $0.durationMs < 250 })
            #expect(try #require(badge.callTree).heaviestPathSymbols.contains { $0.contains("updateBadge") })
            // The OS main thread sits in dispatch_main's sigsuspend for good: not a hang.
            #expect(!all.report.hangs.contains { $0.thread.tid == all.report.process.pid })
        }

        @Test func asyncMainActorStallIsReported() throws {
            let run = try HangwatchRun.run(TestPaths.asyncMainDemo)
            #expect(run.result.status == 0)
            #expect(run.report.hangs.count == 1, "hangs: \(run.report.hangs.map(\.durationMs))")
            let hang = try #require(run.report.hangs.first)
            let work = try #require(run.work("rebuildSearchIndex").first)
            #expect(abs(hang.durationMs - work.durationMs) <= 20)
            #expect(hang.reported)
            #expect(hang.thread.role == "main-queue")
            #expect(try #require(hang.callTree).heaviestPathSymbols.contains { $0.contains("rebuildSearchIndex") })
        }
    }

    /// `--thread NAME` watches named event-loop threads, such as NIO's.
    @Suite struct LoopThreads {
        @Test func namedWorkerLoopIsWatchedOnlyWhenAsked() throws {
            let scratch = try TestPaths.scratch()
            let program = try ProcessRunner.compileC(TestPaths.demoSource("epoll_loop.c"), into: scratch, name: "epoll_loop")
            let watched = try HangwatchRun.run(program, ["--worker", "io-worker-1"],
                                               hangwatchArgs: ["--thread", "io-worker-*"], scratch: scratch)
            #expect(watched.result.status == 0)
            #expect(watched.report.hangs.count == 1, "hangs: \(watched.report.hangs.map(\.durationMs))")
            let hang = try #require(watched.report.hangs.first)
            #expect(abs(hang.durationMs - 260) <= 10)
            #expect(hang.thread.name == "io-worker-1")
            #expect(hang.thread.role == "loop")
            #expect(hang.thread.tid != watched.report.process.pid)
            #expect(try #require(hang.callTree).heaviestPathSymbols.contains("worker_stall"))

            let unwatched = try HangwatchRun.run(program, ["--worker", "io-worker-1"], scratch: scratch)
            #expect(unwatched.result.status == 0)
            #expect(unwatched.report.hangs.isEmpty, "the idle main thread has no hangs; the worker is not watched")
        }
    }
}
