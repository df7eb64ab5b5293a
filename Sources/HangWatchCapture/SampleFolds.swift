/// Folds a busy period's samples as they arrive: ticks that saw the same
/// stack the same way (source, call, truncation) become one weighted entry,
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
    }

    /// Per busy period: the entry each shape went to.
    private var entries: [BusyKey: [Shape: Int]] = [:]
    /// Per busy period: the entry of its latest sample (a REPEAT adds to it).
    private var latest: [BusyKey: Int] = [:]

    package init() {}

    /// Counts `sample` into busy period `key`'s entries in `samples`.
    package mutating func add(_ sample: CapturedSample, to key: BusyKey, in samples: inout [BusyKey: [CapturedSample]]) {
        let shape = Shape(stack: sample.stack, source: sample.source.rawValue, call: sample.call,
                          truncated: sample.truncated)
        if let at = entries[key]?[shape], at < samples[key]?.count ?? 0 {
            // Optional chaining through the subscripts mutates the stored array in place.
            samples[key]?[at].weight += sample.weight
            samples[key]?[at].timeNs = sample.timeNs
            latest[key] = at
            return
        }
        let at = samples[key]?.count ?? 0
        samples[key, default: []].append(sample)
        entries[key, default: [:]][shape] = at
        latest[key] = at
    }

    /// More ticks of the period's latest sample (the thread is still blocked in the same place).
    package mutating func repeatLatest(of key: BusyKey, at timeNs: UInt64, ticks: Int = 1,
                               in samples: inout [BusyKey: [CapturedSample]]) {
        guard let at = latest[key], at < samples[key]?.count ?? 0 else { return }
        samples[key]?[at].weight += ticks
        samples[key]?[at].timeNs = timeNs
    }

    /// Forgets a period whose samples were discarded.
    package mutating func forget(_ key: BusyKey) {
        entries[key] = nil
        latest[key] = nil
    }

    /// After the stack table was renumbered: each period's shapes are made
    /// again from its entries (every entry is one shape), so later ticks of a
    /// stack still fold into the entry they went to before.
    package mutating func rebuild(from samples: [BusyKey: [CapturedSample]]) {
        for key in entries.keys {
            var shapes: [Shape: Int] = [:]
            for (at, sample) in (samples[key] ?? []).enumerated() {
                shapes[Shape(stack: sample.stack, source: sample.source.rawValue, call: sample.call,
                             truncated: sample.truncated)] = at
            }
            entries[key] = shapes
        }
    }
}
