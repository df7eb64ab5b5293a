import Foundation
import HangWatch
import HangWatchAnalysis
import HangWatchRender
import HangWatchSymbols
import HangWatchTestSupport
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
            try FrameExpectations.check(frames, against: measured, deadlineMs: 16.667)
            #expect(frames.band == FrameStatistics.band(forRatio: frames.hitchRatioMsPerS))
            #expect(frames.hitchRatioMsPerS > 10, "\(frames.hitchRatioMsPerS) ms/s should be critical")
            let longest = try #require(measured.max { $0.durationMs < $1.durationMs })
            #expect(abs(frames.maxMs - longest.durationMs) <= 3 + run.stolenMs, "max \(frames.maxMs) vs \(longest.durationMs)")
            #expect(frames.p50Ms < 8)
            #expect(run.report.frameLoops.count == 1)
            // The 130 ms frame is also a hang.
            #expect(run.report.hangs.count == 1, "hangs: \(run.report.hangs.map(\.durationMs))")
            let hang = try #require(run.report.hangs.first)
            #expect(abs(hang.durationMs - longest.durationMs) <= 3 + run.stolenMs)
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

/// Compares frame statistics with the program's own measurement of each frame.
enum FrameExpectations {
    /// The demo's designed slow frames: 25, 40, 22 and 130 ms.
    static let designedHitches = 4

    static func check(_ frames: FrameStats, against measured: [MeasuredWork], deadlineMs d: Double,
                      sourceLocation: SourceLocation = #_sourceLocation) throws {
        // A frame the program measured within 1 ms of the deadline may land on
        // either side once the loop's own overhead is added: not counted either way.
        let clear = measured.filter { abs($0.durationMs - d) > 1 }
        let over = clear.filter { $0.durationMs > d }
        let ambiguous = measured.count - clear.count
        #expect(over.count >= designedHitches, "the demo's slow frames: \(over.map(\.durationMs))", sourceLocation: sourceLocation)
        #expect(frames.hitchCount >= over.count && frames.hitchCount <= over.count + ambiguous,
                "hitches \(frames.hitchCount), program measured \(over.count) (+\(ambiguous) ambiguous)", sourceLocation: sourceLocation)
        #expect(abs(frames.frameCount - measured.count) <= 1, "frames: \(frames.frameCount)", sourceLocation: sourceLocation)
        let expectedHitchMs = over.reduce(0) { $0 + $1.durationMs - d }
        #expect(abs(frames.hitchMs - expectedHitchMs) <= 2 * Double(frames.hitchCount),
                "hitch time \(frames.hitchMs) vs \(expectedHitchMs)", sourceLocation: sourceLocation)
        let expectedMissed = over.reduce(0) { $0 + Int(($1.durationMs / d).rounded(.up)) - 1 }
        #expect(abs(frames.missedFrames - expectedMissed) <= ambiguous, sourceLocation: sourceLocation)
    }
}
