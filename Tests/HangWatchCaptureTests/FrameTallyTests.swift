import Foundation
import HangWatchCapture
import HangWatchTestSupport
import Testing

/// A frame loop's tally stays exact where it can and bounded where it must:
/// a long-running loop's memory stops growing, its counts stay exact, and its
/// percentiles stay within 0.5 % of the true ones.
@Suite struct FrameTallyTests {
    /// What the tally must agree with: every duration kept and sorted.
    struct Reference {
        var durationsMs: [Double] = []
        let deadlineMs: Double

        var hitches: [Double] { durationsMs.filter { $0 > deadlineMs } }
        var missed: Int { durationsMs.reduce(0) { $0 + max(0, Int(($1 / deadlineMs).rounded(.up)) - 1) } }
        func percentile(_ p: Double) -> Double {
            let sorted = durationsMs.sorted()
            return sorted[min(max(Int((p * Double(sorted.count)).rounded(.up)), 1), sorted.count) - 1]
        }
        var histogram: [Int] {
            let bounds = [0.25, 0.5, 0.75, 1, 1.5, 2, 4, 8].map { $0 * deadlineMs }
            var counts = [Int](repeating: 0, count: bounds.count + 1)
            for d in durationsMs { counts[bounds.firstIndex { d <= $0 } ?? bounds.count] += 1 }
            return counts
        }
    }

    /// Frame times of a 60 Hz loop: mostly 2-12 ms, a tail of hitches up to 400 ms, whole µs.
    static func frames(_ count: Int, seed: UInt64) -> [UInt64] {
        var random = SplitMix(seed: seed)
        return (0..<count).map { _ in
            let r = random.next()
            let us = r % 100 < 97 ? 2_000 + r >> 8 % 10_000 : 16_000 + r >> 8 % 384_000
            return us * 1000
        }
    }

    static func tally(_ durationsNs: [UInt64], deadlineMs: Double) -> (FrameTally, Reference) {
        var tally = FrameTally(deadlineMs: deadlineMs)
        var reference = Reference(deadlineMs: deadlineMs)
        var start: UInt64 = 1_000_000_000
        for ns in durationsNs {
            tally.add(startNs: start, durationNs: ns)
            reference.durationsMs.append(Double(ns) / 1e6)
            start += ns + 500_000
        }
        return (tally, reference)
    }

    static func expectExactCounts(_ tally: FrameTally, _ reference: Reference) {
        #expect(tally.frameCount == reference.durationsMs.count)
        #expect(tally.hitchCount == reference.hitches.count)
        #expect(abs(tally.hitchMs - reference.hitches.reduce(0) { $0 + ($1 - reference.deadlineMs) }) < 1e-6)
        #expect(tally.missedFrames == reference.missed)
        #expect(tally.maxMs == reference.durationsMs.max())
        #expect(tally.minMs == reference.durationsMs.min())
        #expect(tally.histogramCounts == reference.histogram)
    }

    @Test func upToTheExactLimitEverythingIsExact() {
        let (tally, reference) = Self.tally(Self.frames(FrameTally.exactFrames, seed: 7), deadlineMs: 16.667)
        Self.expectExactCounts(tally, reference)
        for p in [0.0, 0.5, 0.95, 0.99, 1] { #expect(tally.percentileMs(p) == reference.percentile(p), "p\(p)") }
        #expect(tally.storedValues == FrameTally.exactFrames)
        #expect(tally.firstStartNs == 1_000_000_000)
    }

    @Test func pastTheLimitMemoryStopsGrowingAndPercentilesStayWithinHalfAPercent() {
        let (tally, reference) = Self.tally(Self.frames(300_000, seed: 11), deadlineMs: 16.667)
        Self.expectExactCounts(tally, reference)
        // 300,000 frames in a few thousand buckets, as after the first 65,537.
        let (shorter, _) = Self.tally(Self.frames(FrameTally.exactFrames + 1, seed: 11), deadlineMs: 16.667)
        #expect(tally.storedValues == shorter.storedValues && tally.storedValues < 5_000, "\(tally.storedValues)")
        for p in [0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1] {
            let truth = reference.percentile(p), got = tally.percentileMs(p)
            #expect(abs(got - truth) <= 0.005 * truth + 1e-9, "p\(p): \(got) ms against \(truth) ms")
            #expect(got <= tally.maxMs)
        }
    }

    @Test func zeroAndVeryLongFramesStayInRange() {
        let day: UInt64 = 86_400 * 1_000_000_000
        var durations = [UInt64](repeating: 0, count: FrameTally.exactFrames) + [1, 2 * day]
        durations += [UInt64](repeating: 5_000_000, count: 10)
        let (tally, reference) = Self.tally(durations, deadlineMs: 10)
        Self.expectExactCounts(tally, reference)
        #expect(tally.percentileMs(0.5) == 0)
        #expect(tally.percentileMs(0) == 0 && tally.minMs == 0)
        #expect(tally.percentileMs(1) == tally.maxMs)
        #expect(tally.maxMs == Double(2 * day) / 1e6)
        // Past the buckets' range (78 h) a percentile reads as the longest frame, not as the range's end.
        let (long, _) = Self.tally([UInt64](repeating: 5_000_000, count: FrameTally.exactFrames) + [4 * day, 5 * day],
                                   deadlineMs: 10)
        #expect(long.percentileMs(Double(long.frameCount - 1) / Double(long.frameCount)) == Double(5 * day) / 1e6)
        #expect(abs(long.percentileMs(0.5) - 5) <= 0.025)
    }

    /// Statistics taken on another thread get a copy of their own: the loop's tally is not touched.
    @Test func anUnsharedCopyIsIndependent() {
        var (tally, _) = Self.tally(Self.frames(1_000, seed: 3), deadlineMs: 16.667)
        let copy = tally.unshared()
        tally.add(startNs: tally.lastEndNs, durationNs: 900_000_000)
        #expect(copy.frameCount == 1_000 && tally.frameCount == 1_001)
        #expect(copy.maxMs < 900)
    }
}
