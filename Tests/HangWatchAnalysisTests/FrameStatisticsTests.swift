import HangWatchAnalysis
import HangWatchCapture
import HangWatchModel
import HangWatchTestSupport
import Testing

/// Apple's hitch definitions applied per frame, on hand-made frame times.
@Suite struct FrameStatisticsTests {
    @Test func hitchesMissedFramesAndRatio() {
        // 16.667 ms budget; one second of frames: 57 fine, then 25, 40 and 130 ms.
        let d = 16.667
        let durations = [Double](repeating: 4, count: 57) + [25, 40, 130]
        let stats = FrameStatistics.compute(name: "main", deadlineMs: d, durationsMs: durations, intervalMs: 1000)
        #expect(stats.frameCount == 60)
        #expect(stats.hitchCount == 3)
        #expect(abs(stats.hitchMs - ((25 - d) + (40 - d) + (130 - d))) < 1e-9)
        // ⌈25/d⌉−1 = 1, ⌈40/d⌉−1 = 2, ⌈130/d⌉−1 = 7
        #expect(stats.missedFrames == 10)
        #expect(abs(stats.hitchRatioMsPerS - stats.hitchMs) < 1e-9) // over exactly one second
        #expect(stats.band == "critical")
        #expect(stats.p50Ms == 4)
        #expect(stats.maxMs == 130)
        #expect(stats.histogram.reduce(0) { $0 + $1.count } == 60)
        #expect(stats.histogram.last?.upToMs == nil)
    }

    @Test func bands() {
        #expect(FrameStatistics.band(forRatio: 0) == "good")
        #expect(FrameStatistics.band(forRatio: 4.99) == "good")
        #expect(FrameStatistics.band(forRatio: 5) == "warning")
        #expect(FrameStatistics.band(forRatio: 10) == "warning")
        #expect(FrameStatistics.band(forRatio: 10.01) == "critical")
    }

    @Test func aFrameExactlyOnTheDeadlineIsNoHitch() {
        let stats = FrameStatistics.compute(name: "x", deadlineMs: 10, durationsMs: [10, 10, 10], intervalMs: 30)
        #expect(stats.hitchCount == 0)
        #expect(stats.missedFrames == 0)
        #expect(stats.band == "good")
    }
}

extension FrameStatistics {
    /// The statistics of `durationsMs`, frames back to back from time 0, over `intervalMs`.
    static func compute(name: String, deadlineMs: Double, durationsMs: [Double], intervalMs: Double) -> FrameStats {
        var tally = FrameTally(deadlineMs: deadlineMs)
        var start: UInt64 = 0
        for ms in durationsMs {
            let ns = UInt64((ms * 1e6).rounded())
            tally.add(startNs: start, durationNs: ns)
            start &+= ns
        }
        return compute(name: name, tally: tally, intervalMs: intervalMs)
    }
}
