/// A frame loop's frames, folded as each one ends, in memory that does not
/// grow with the run: a loop of 1 ms frames must not cost its host a gigabyte
/// a day. Frame and hitch counts, hitch time, missed deadlines, the longest
/// frame and the histogram are exact. Percentiles are exact for the first
/// `exactFrames` frames (18 minutes at 60 Hz, 512 KiB at most); from then on
/// they come from buckets under 0.8 % of their value wide, so a percentile is
/// within 0.4 % of the true one, or 1 µs (the shortest and the longest frame
/// stay exact; a percentile past 78 hours reads as the longest frame).
public struct FrameTally: Sendable, Equatable {
    /// Frames whose durations are kept one by one before the buckets take over.
    package static let exactFrames = 1 << 16
    /// Upper bounds of the histogram's buckets, as multiples of the deadline
    /// (the last bucket has none), so its shape reads the same at 60 and 30 Hz.
    package static let histogramMultiples: [Double] = [0.25, 0.5, 0.75, 1, 1.5, 2, 4, 8]

    /// The frame deadline D, in ms.
    public let deadlineMs: Double
    /// Frames measured.
    public private(set) var frameCount = 0
    /// Frames whose work exceeded the deadline.
    public private(set) var hitchCount = 0
    /// The sum of (frame − D) over the hitches, in ms.
    public private(set) var hitchMs = 0.0
    /// The sum of ⌈frame / D⌉ − 1 over all frames.
    public private(set) var missedFrames = 0
    /// The longest frame, in ms.
    public private(set) var maxMs = 0.0
    /// The shortest frame, in ms (0 with no frame).
    public private(set) var minMs = 0.0
    /// The first frame's start (CLOCK_MONOTONIC ns).
    public private(set) var firstStartNs: UInt64 = 0
    /// The last frame's end (CLOCK_MONOTONIC ns).
    public private(set) var lastEndNs: UInt64 = 0
    /// Frames per histogram bucket (`histogramMultiples`, then one open-ended).
    public private(set) var histogramCounts: [Int]

    private let histogramBoundsMs: [Double]
    /// Every duration so far, while there are at most `exactFrames`.
    private var exactNs: [UInt64] = []
    /// Frames per logarithmic bucket of nanoseconds, once there are more.
    private var logBuckets: [Int] = []

    /// An empty tally for a loop with deadline `deadlineMs`.
    public init(deadlineMs: Double) {
        self.deadlineMs = deadlineMs
        histogramBoundsMs = Self.histogramMultiples.map { $0 * deadlineMs }
        histogramCounts = [Int](repeating: 0, count: Self.histogramMultiples.count + 1)
    }

    /// Adds a frame that started at `startNs` and was busy for `durationNs`.
    public mutating func add(startNs: UInt64, durationNs: UInt64) {
        if frameCount == 0 { firstStartNs = startNs }
        lastEndNs = startNs &+ durationNs
        let ms = Double(durationNs) / 1e6
        frameCount += 1
        if deadlineMs > 0, ms > deadlineMs { // a deadline that is not above 0 counts no hitch
            hitchCount += 1
            hitchMs += ms - deadlineMs
            // ⌈frame / D⌉ − 1, which is 0 for the frames that are no hitch.
            missedFrames += Int(min((ms / deadlineMs).rounded(.up), 1e15)) - 1
        }
        maxMs = max(maxMs, ms)
        minMs = frameCount == 1 ? ms : min(minMs, ms)
        var bucket = 0
        while bucket < histogramBoundsMs.count, ms > histogramBoundsMs[bucket] { bucket += 1 }
        histogramCounts[bucket] += 1
        // The buckets take over before the array would grow past `exactFrames`.
        if logBuckets.isEmpty, exactNs.count < Self.exactFrames {
            exactNs.append(durationNs)
        } else {
            if logBuckets.isEmpty { moveToBuckets() }
            logBuckets[Self.bucket(ofNs: durationNs)] += 1
        }
    }

    /// A copy that shares no storage with this tally: adding to either one then copies nothing.
    package func unshared() -> FrameTally {
        var copy = self
        copy.exactNs = exactNs.withUnsafeBufferPointer { Array($0) }
        copy.logBuckets = logBuckets.withUnsafeBufferPointer { Array($0) }
        copy.histogramCounts = histogramCounts.withUnsafeBufferPointer { Array($0) }
        return copy
    }

    /// Values stored for the percentiles: the durations one by one, then a fixed
    /// number of buckets. What the tally's memory grows with, and stops growing at.
    package var storedValues: Int { exactNs.count + logBuckets.count }

    /// The nearest-rank percentile `p` (0...1) of the frame durations, in ms; 0 with no frame.
    public func percentileMs(_ p: Double) -> Double {
        percentilesMs([p])[0]
    }

    /// Several nearest-rank percentiles at once (one sort, or one walk of the buckets).
    public func percentilesMs(_ ps: [Double]) -> [Double] {
        guard frameCount > 0 else { return ps.map { _ in 0 } }
        let ranks = ps.map { min(max(Int(($0 * Double(frameCount)).rounded(.up)), 1), frameCount) }
        if logBuckets.isEmpty {
            let sorted = exactNs.sorted()
            return ranks.map { Double(sorted[$0 - 1]) / 1e6 }
        }
        return ranks.map { rank in
            // The extremes are known exactly, and stand for what the first and last
            // buckets hold (under 1 µs; past the buckets' range).
            if rank == 1 { return minMs }
            if rank == frameCount { return maxMs }
            var seen = 0
            for (index, count) in logBuckets.enumerated() {
                seen += count
                guard seen >= rank else { continue }
                if index == 0 { return minMs }
                if index == Self.bucketCount - 1 { return maxMs }
                return min(max(Self.representativeMs(ofBucket: index), minMs), maxMs)
            }
            return maxMs
        }
    }

    // Each power of two of nanoseconds from 2^10 (1 µs) to 2^48 (78 hours) is
    // cut into 128 equal buckets, indexed from the duration's leading bits with
    // no logarithm (a frame's cost stays a few ns): a bucket's midpoint is
    // within 1/256 (0.4 %) of any value in it. Bucket 0 holds frames under
    // 1 µs, the last one frames of 78 hours or more; 4,866 buckets, 38 KiB.
    private static let subBucketBits = 7
    private static let firstOctave = 10, lastOctave = 47
    private static let bucketCount = (lastOctave - firstOctave + 1) << subBucketBits + 2

    private static func bucket(ofNs ns: UInt64) -> Int {
        guard ns >= 1 << firstOctave else { return 0 }
        let octave = 63 - ns.leadingZeroBitCount
        guard octave <= lastOctave else { return bucketCount - 1 }
        let sub = Int(ns >> (octave - subBucketBits)) & (1 << subBucketBits - 1)
        return 1 + (octave - firstOctave) << subBucketBits + sub
    }

    private static func representativeMs(ofBucket index: Int) -> Double {
        let octave = firstOctave + (index - 1) >> subBucketBits
        let sub = (index - 1) & (1 << subBucketBits - 1)
        let step = Double(UInt64(1) << (octave - subBucketBits))
        return (Double(1 << subBucketBits + sub) + 0.5) * step / 1e6
    }

    private mutating func moveToBuckets() {
        logBuckets = [Int](repeating: 0, count: Self.bucketCount)
        for ns in exactNs { logBuckets[Self.bucket(ofNs: ns)] += 1 }
        exactNs = []
    }
}
