import Foundation
import HangWatch
import Testing

extension Integration {
    /// `--frame-ms`: each busy period of the loop is a frame; frames over the
    /// deadline are hitches (Apple's hitch metrics, per frame).
    @Suite struct FrameLoops {
        @Test func sixtyHertzDemoHitchesAndItsHang() throws {
            let scratch = try TestPaths.scratch()
            let program = try ProcessRunner.compileC(TestPaths.demoSource("frame_loop.c"), into: scratch, name: "frame_loop")
            let run = try HangwatchRun.run(program, hangwatchArgs: ["--frame-ms", "16.667"], scratch: scratch)
            #expect(run.result.status == 0)
            let frames = try #require(run.report.frames, "no frame statistics in the report")
            let measured = run.work("simulate_frame")
            #expect(measured.count == 120)
            // The program's own frames over the deadline are exactly the hitches.
            let expectedHitches = measured.filter { $0.durationMs > 16.667 }
            #expect(expectedHitches.count == 4)
            #expect(frames.hitchCount == expectedHitches.count, "hitches: \(frames.hitchCount)")
            #expect(abs(frames.frameCount - measured.count) <= 1, "frames: \(frames.frameCount)")
            let expectedHitchMs = expectedHitches.reduce(0) { $0 + $1.durationMs - 16.667 }
            #expect(abs(frames.hitchMs - expectedHitchMs) <= 2 * Double(expectedHitches.count),
                    "hitch time \(frames.hitchMs) vs \(expectedHitchMs)")
            let expectedMissed = expectedHitches.reduce(0) { $0 + Int(($1.durationMs / 16.667).rounded(.up)) - 1 }
            #expect(frames.missedFrames == expectedMissed)
            #expect(frames.band == FrameStatistics.band(forRatio: frames.hitchRatioMsPerS))
            #expect(frames.hitchRatioMsPerS > 10, "\(frames.hitchRatioMsPerS) ms/s should be critical")
            #expect(abs(frames.maxMs - 130) <= 5)
            #expect(frames.p50Ms < 8)
            #expect(run.report.frameLoops.count == 1)
            // The 130 ms frame is also a hang.
            #expect(run.report.hangs.count == 1, "hangs: \(run.report.hangs.map(\.durationMs))")
            let hang = try #require(run.report.hangs.first)
            #expect(abs(hang.durationMs - 130) <= 5)
        }

        @Test func withoutFrameModeTheSleepIsPartOfNothing() throws {
            // Without --frame-ms the loop's sleep is not an event wait: the whole
            // run is one long launch period, not a series of frames or hangs.
            let scratch = try TestPaths.scratch()
            let program = try ProcessRunner.compileC(TestPaths.demoSource("frame_loop.c"), into: scratch, name: "frame_loop")
            let run = try HangwatchRun.run(program, scratch: scratch)
            #expect(run.report.frames == nil)
            #expect(run.report.hangs.isEmpty)
            #expect(run.report.launch?.reachedFirstWait == false)
        }
    }
}
