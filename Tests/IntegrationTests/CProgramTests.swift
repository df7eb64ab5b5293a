import Foundation
import HangWatch
import HangWatchAnalysis
import HangWatchRender
import HangWatchSymbols
import HangWatchTestSupport
import Testing

extension Integration {
    @Suite struct CPrograms {
        /// A plain C epoll loop (no Swift runtime anywhere) works the same way.
        @Test func plainCEpollLoop() throws {
            let scratch = try TestPaths.scratch()
            let program = try ProcessRunner.compileC(TestPaths.demoSource("epoll_loop.c"), into: scratch, name: "epoll_loop")
            let run = try HangwatchRun.run(program, scratch: scratch)
            #expect(run.result.status == 0)
            #expect(run.result.stdout.isEmpty)
            #expect(run.report.hangs.count == 2, "hangs: \(run.report.hangs.map(\.durationMs))")
            let batch = try #require(run.work("process_batch").first)
            let hang = try #require(run.hang(startingNear: batch))
            #expect(abs(hang.durationMs - batch.durationMs) <= 5 + run.stolenMs)
            #expect(hang.reported)
            let path = try #require(hang.callTree).heaviestPathSymbols
            #expect(path.contains("process_batch"), "heaviest path: \(path)")
            #expect(path.contains("main"))
            let compressWork = try #require(run.work("compress_block").first)
            let compress = try #require(run.hang(startingNear: compressWork))
            #expect(!compress.reported)
            #expect(abs(compress.durationMs - 180) <= 10)
        }
    }
}
