import HangWatchCapture
import HangWatchModel

/// Hitch metrics of a frame-deadline loop, after Apple's definitions applied
/// per frame: a hitch is a frame whose work exceeds the deadline D; hitch
/// time sums (frame − D) over hitches; missed frames sum ⌈frame / D⌉ − 1;
/// the hitch ratio is hitch ms per second of the measured interval. The
/// frames are folded as they end (`FrameTally`).
package enum FrameStatistics {
    /// Ratio bands in ms/s: below 5 good, 5 to 10 warning, above 10 critical.
    package static func band(forRatio ratio: Double) -> String {
        ratio < 5 ? "good" : (ratio <= 10 ? "warning" : "critical")
    }

    /// - Parameters:
    ///   - tally: the loop's frames.
    ///   - intervalMs: the measured interval (first frame start to last frame end).
    package static func compute(name: String, tally: FrameTally, intervalMs: Double) -> FrameStats {
        let ratio = intervalMs > 0 ? tally.hitchMs / (intervalMs / 1000) : 0
        let percentiles = tally.percentilesMs([0.50, 0.95, 0.99])
        let bounds = FrameTally.histogramMultiples.map { Optional($0 * tally.deadlineMs) } + [nil]
        return FrameStats(name: name, deadlineMs: tally.deadlineMs, frameCount: tally.frameCount,
                          hitchCount: tally.hitchCount, missedFrames: tally.missedFrames, hitchMs: tally.hitchMs,
                          hitchRatioMsPerS: ratio, band: band(forRatio: ratio),
                          p50Ms: percentiles[0], p95Ms: percentiles[1], p99Ms: percentiles[2], maxMs: tally.maxMs,
                          histogram: zip(bounds, tally.histogramCounts).map { HistogramBucket(upToMs: $0, count: $1) })
    }
}
