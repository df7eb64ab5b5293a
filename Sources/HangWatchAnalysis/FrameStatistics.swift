import HangWatchModel

/// Hitch metrics of a frame-deadline loop, after Apple's definitions applied
/// per frame: a hitch is a frame whose work exceeds the deadline D; hitch
/// time sums (frame − D) over hitches; missed frames sum ⌈frame / D⌉ − 1;
/// the hitch ratio is hitch ms per second of the measured interval.
package enum FrameStatistics {
    /// Ratio bands in ms/s: below 5 good, 5 to 10 warning, above 10 critical.
    package static func band(forRatio ratio: Double) -> String {
        ratio < 5 ? "good" : (ratio <= 10 ? "warning" : "critical")
    }

    /// - Parameters:
    ///   - durationsMs: each frame's busy time, in order.
    ///   - intervalMs: the measured interval (first frame start to last frame end).
    package static func compute(name: String, deadlineMs: Double, durationsMs: [Double], intervalMs: Double) -> FrameStats {
        let hitches = durationsMs.filter { $0 > deadlineMs }
        let hitchMs = hitches.reduce(0) { $0 + ($1 - deadlineMs) }
        let missed = durationsMs.reduce(0) { total, d in
            total + max(0, Int((d / deadlineMs).rounded(.up)) - 1)
        }
        let ratio = intervalMs > 0 ? hitchMs / (intervalMs / 1000) : 0
        let sorted = durationsMs.sorted()
        return FrameStats(name: name, deadlineMs: deadlineMs, frameCount: durationsMs.count,
                          hitchCount: hitches.count, missedFrames: missed, hitchMs: hitchMs,
                          hitchRatioMsPerS: ratio, band: band(forRatio: ratio),
                          p50Ms: percentile(sorted, 0.50), p95Ms: percentile(sorted, 0.95),
                          p99Ms: percentile(sorted, 0.99), maxMs: sorted.last ?? 0,
                          histogram: histogram(durationsMs, deadlineMs: deadlineMs))
    }

    /// Nearest-rank percentile of an ascending array.
    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((p * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }

    /// Buckets at fractions and multiples of the deadline, so the shape reads
    /// the same at 60 Hz and at 30 Hz.
    static func histogram(_ durations: [Double], deadlineMs d: Double) -> [HistogramBucket] {
        let bounds = [0.25, 0.5, 0.75, 1, 1.5, 2, 4, 8].map { $0 * d }
        var counts = [Int](repeating: 0, count: bounds.count + 1)
        for x in durations {
            counts[bounds.firstIndex { x <= $0 } ?? bounds.count] += 1
        }
        return zip(bounds.map(Optional.some) + [nil], counts).map { HistogramBucket(upToMs: $0, count: $1) }
    }
}
