/// Folds a busy period's samples as they arrive: ticks that saw the same
/// stack the same way (source, call, where the stack stops) become one weighted entry,
/// so a minutes-long hang holds one entry per distinct stack, not one per
/// tick. Entries keep the order in which they were first seen, which is all
/// the call-tree builder depends on (it merges frames by name and sorts
/// siblings by weight), so reports come out as if every tick were kept.
package struct SampleFolds {
    private struct Shape: Hashable {
        var stack: Int32
        var source: UInt32
        var call: Int32
        var truncated: Bool
        var unwindStopped: Bool

        init(_ sample: CapturedSample) {
            stack = sample.stack
            source = sample.source.rawValue
            call = sample.call.code
            truncated = sample.truncated
            unwindStopped = sample.unwindStopped
        }

        // Two words rather than five fields: this is hashed for every sample.
        func hash(into hasher: inout Hasher) {
            hasher.combine(UInt64(UInt32(bitPattern: stack)) << 32 | UInt64(source))
            hasher.combine(UInt64(UInt32(bitPattern: call)) << 2 | (truncated ? 1 : 0) | (unwindStopped ? 2 : 0))
        }
    }

    /// One busy period's folding state.
    private struct Period {
        /// The entry each shape went to.
        var shapes: [Shape: Int] = [:]
        /// The entry of its latest sample (a REPEAT adds to it).
        var latest: Int?
    }

    private var periods: [BusyKey: Period] = [:]

    package init() {}

    /// Counts `sample` into busy period `key`'s entries in `samples`. One
    /// lookup of the period in each table: this runs for every sample.
    package mutating func add(_ sample: CapturedSample, to key: BusyKey, in samples: inout [BusyKey: [CapturedSample]]) {
        Self.fold(sample, shape: Shape(sample), into: &samples[key, default: []], period: &periods[key, default: Period()])
    }

    private static func fold(_ sample: CapturedSample, shape: Shape, into list: inout [CapturedSample],
                             period: inout Period) {
        if let at = period.shapes[shape], at < list.count {
            list[at].weight += sample.weight
            list[at].timeNs = sample.timeNs
            period.latest = at
            return
        }
        period.shapes[shape] = list.count
        period.latest = list.count
        list.append(sample)
    }

    /// More ticks of the period's latest sample (the thread is still blocked in the same place).
    package mutating func repeatLatest(of key: BusyKey, at timeNs: UInt64, ticks: Int = 1,
                               in samples: inout [BusyKey: [CapturedSample]]) {
        guard let at = periods[key]?.latest, at < samples[key]?.count ?? 0 else { return }
        samples[key]?[at].weight += ticks
        samples[key]?[at].timeNs = timeNs
    }

    /// Forgets a period whose samples were discarded.
    package mutating func forget(_ key: BusyKey) {
        periods[key] = nil
    }

    /// After the stack table was renumbered: each period's shapes are made
    /// again from its entries (every entry is one shape), so later ticks of a
    /// stack still fold into the entry they went to before.
    package mutating func rebuild(from samples: [BusyKey: [CapturedSample]]) {
        for key in periods.keys {
            var shapes: [Shape: Int] = [:]
            for (at, sample) in (samples[key] ?? []).enumerated() {
                shapes[Shape(sample)] = at
            }
            periods[key]?.shapes = shapes
        }
    }
}
