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
            let run = try HangwatchRun.run(TestPaths.runLoopDemo, ["--scenario", "kill", "--pid-file", pidFile],
                                           measure: false, scratch: scratch) { _ in
                // The demo touches <pid-file>.hang when its 10 s spin starts; kill it 400 ms in.
                let deadline = Date().addingTimeInterval(20)
                while !FileManager.default.fileExists(atPath: pidFile + ".hang") && Date() < deadline { usleep(10_000) }
                usleep(400_000)
                if let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
                   let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
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
            #expect(hang.durationMs >= 300 && hang.durationMs < 5000, "duration \(hang.durationMs)")
            #expect(hang.sampleCount >= 200)
            let tree = try #require(hang.callTree)
            #expect(tree.allSymbols.contains { $0.contains("spinForever") })
            #expect(run.result.stderr.isEmpty || !run.result.stderr.contains("hangwatch: "),
                    "no hangwatch error expected: \(run.result.stderr)")
        }
    }
}
