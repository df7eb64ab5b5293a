import Foundation
import HangWatch
import HangWatchAnalysis
import HangWatchRender
import HangWatchSymbols
import HangWatchTestSupport
import Testing

extension Integration {
    /// Time before the loop's first wait is launch, not a hang.
    @Suite struct Launch {
        @Test func slowLaunchIsReportedAsLaunchWithItsTree() throws {
            let run = try HangwatchRun.run(TestPaths.runLoopDemo, ["--scenario", "launch"])
            #expect(run.result.status == 0)
            let launch = try #require(run.report.launch)
            let config = try #require(run.work("loadConfiguration").first)
            #expect(launch.reachedFirstWait)
            #expect(launch.durationMs >= config.durationMs)
            #expect(launch.durationMs < config.durationMs + 200, "launch \(launch.durationMs) ms")
            #expect(try #require(launch.callTree).heaviestPathSymbols.contains { $0.contains("loadConfiguration") })
            // The only hang is the request handled inside the run loop.
            #expect(run.report.hangs.count == 1)
            #expect(run.report.hangs.first?.callTree?.first(containing: "handleRequest") != nil)
            #expect(run.report.hangs.first?.callTree?.first(containing: "loadConfiguration") == nil)
        }

        @Test func aProgramThatNeverWaitsGetsAProfileNotAGiantHang() throws {
            // /bin/sh running a CPU loop never waits on an event loop: a batch job.
            let run = try HangwatchRun.run("/bin/sh", ["-c", Self.shellBusyLoop], measure: false)
            #expect(run.result.status == 0)
            #expect(run.report.hangs.isEmpty)
            let launch = try #require(run.report.launch)
            #expect(!launch.reachedFirstWait)
            #expect(launch.durationMs > 250)
            #expect(launch.sampleCount > 100)
            #expect(launch.callTree != nil)
            let text = try ProcessRunner.run(TestPaths.hangwatch, ["run", "--", "/bin/sh", "-c", Self.shellBusyLoop])
            #expect(text.stderr.localizedCaseInsensitiveContains("never"), "the text report says the thread never waited: \(text.stderr)")
        }

        /// A shell loop that counts until 600 ms have passed on the kernel's
        /// clock (/proc/uptime, read by the shell itself: no child, no wait),
        /// so it runs long enough on any machine; a fixed count did not.
        static let shellBusyLoop = """
            read t0 _ < /proc/uptime; t0=${t0%.*}${t0#*.}; i=0; now=$t0
            while [ $((now - t0)) -lt 60 ]; do
              i=$((i+1))
              if [ $((i % 500)) -eq 0 ]; then read now _ < /proc/uptime; now=${now%.*}${now#*.}; fi
            done
            """
    }
}
