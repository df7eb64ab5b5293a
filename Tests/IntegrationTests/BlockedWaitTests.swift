import Foundation
import HangWatch
import HangWatchAnalysis
import HangWatchRender
import HangWatchSymbols
import HangWatchTestSupport
import Testing

extension Integration {
    @Suite struct BlockedWaits {
        /// A callback that sleeps or polls is a hang; sampling it must not cut
        /// the call short (a signal would make usleep/poll return EINTR early).
        @Test func blockedUsleepAndPollAreReportedAndNotShortened() throws {
            let run = try HangwatchRun.run(TestPaths.runLoopDemo, ["--scenario", "blocked"])
            #expect(run.result.status == 0)
            let usleepLine = try #require(run.work("usleep-result").first?.fields)
            let pollLine = try #require(run.work("poll-result").first?.fields)
            #expect(usleepLine[1] == "0" && usleepLine[2] == "0", "usleep returned \(usleepLine)")
            #expect(pollLine[1] == "0" && pollLine[2] == "0", "poll returned \(pollLine)")
            #expect((Double(usleepLine[3]) ?? 0) >= 300, "usleep slept \(usleepLine[3]) ms")
            #expect((Double(pollLine[3]) ?? 0) >= 230, "poll slept \(pollLine[3]) ms")

            let diskWork = try #require(run.work("waitForDisk").first)
            let disk = try #require(run.hang(startingNear: diskWork))
            #expect(disk.kind == .blocked)
            #expect(disk.blockedIn == "usleep")
            #expect(disk.reported)
            let tree = try #require(disk.callTree)
            let caller = try #require(tree.first(containing: "waitForDisk"))
            #expect(caller.children.contains { $0.symbol == "usleep" }, "usleep must sit under its caller")
            #expect(disk.sampleCoverage >= 0.8)

            let socketWork = try #require(run.work("waitForSocket").first)
            let socket = try #require(run.hang(startingNear: socketWork))
            #expect(socket.kind == .blocked)
            #expect(socket.blockedIn == "poll")
        }

        @Test func blockedPollIsReportedWithItsCallerWhenOverTheThreshold() throws {
            // 230 ms is below the default report threshold; lower it to see its tree.
            let run = try HangwatchRun.run(TestPaths.runLoopDemo, ["--scenario", "blocked"],
                                           hangwatchArgs: ["--report-ms", "200"])
            let socket = try #require(run.report.hangs.first { $0.blockedIn == "poll" })
            #expect(socket.reported)
            let caller = try #require(socket.callTree?.first(containing: "waitForSocket"))
            #expect(caller.children.contains { $0.symbol == "poll" })
        }
    }
}
