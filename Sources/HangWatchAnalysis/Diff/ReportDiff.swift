// Before → after: what changed between two reports of the same program.

import HangWatchModel

/// The comparison `hangwatch diff BEFORE AFTER` prints: the headline metrics
/// with absolute and relative change, and the symbols whose hang time changed most.
package struct ReportDiff: Sendable, Equatable {
    /// One metric in both reports. Values are nil when a report does not have
    /// the metric (no frames measured, CPU time not recorded).
    package struct MetricChange: Sendable, Equatable {
        /// Stable identifier, used as the JSON key (`hangCount`, `hangRateSPerHour`, ...).
        package var key: String
        /// Human-readable name.
        package var label: String
        /// `count`, `ms`, `s/hour`, `ms/s` or `KiB`.
        package var unit: String
        package var before: Double?
        package var after: Double?
        /// `after - before`; nil unless both are known.
        package var change: Double? {
            guard let before, let after else { return nil }
            return after - before
        }
        /// The change as a percentage of `before`; nil when `before` is 0 or unknown.
        package var changePercent: Double? {
            guard let before, let change, before != 0, before.isFinite else { return nil }
            return change / abs(before) * 100
        }
    }

    /// A symbol's hang time in both reports (see `SymbolWeights`; 0 when absent).
    package struct SymbolChange: Sendable, Equatable {
        package var symbol: String
        package var image: String
        package var beforeMs: Double
        package var afterMs: Double
        package var beforeSelfMs: Double
        package var afterSelfMs: Double
        /// Other symbols with exactly the same time before and after, left out of
        /// the list in favour of this one (see `symbols`), outermost first.
        package var sameChange: [String] = []
        package var changeMs: Double { afterMs - beforeMs }
        package var selfChangeMs: Double { afterSelfMs - beforeSelfMs }
    }

    package static let defaultSymbolLimit = 10

    package var metrics: [MetricChange]
    /// At most `symbolLimit` symbols, the largest |change| of inclusive time first
    /// (then |change| of self time, then by name); unchanged symbols are left out.
    ///
    /// The frames of one call chain that only pass time down (`_start`, `main`,
    /// the run loop's dispatch, `qsort` on the way to a comparator) all carry the
    /// same time and would fill the list with one change repeated. Symbols with
    /// identical before and after times therefore share one row: the deepest
    /// frame of the program's own code among them (the deepest of all when none
    /// is), with the others listed in `sameChange`.
    package var symbols: [SymbolChange]

    package init(before: Report, after: Report, symbolLimit: Int = ReportDiff.defaultSymbolLimit) {
        let b = ReportMetrics(before), a = ReportMetrics(after)
        func metric(_ key: String, _ label: String, _ unit: String, _ value: (ReportMetrics) -> Double?) -> MetricChange {
            MetricChange(key: key, label: label, unit: unit, before: value(b), after: value(a))
        }
        metrics = [
            metric("hangCount", "Hangs", "count") { Double($0.hangCount) },
            metric("reportedHangCount", "Reported hangs", "count") { Double($0.reportedHangCount) },
            metric("longestHangMs", "Longest hang", "ms") { $0.longestHangMs },
            metric("totalHangMs", "Total hang time", "ms") { $0.totalHangMs },
            metric("hangRateSPerHour", "Hang rate (≥ \(NumberFormat.thresholdMs(ReportMetrics.hangRateThresholdMs)))", "s/hour") { $0.hangRateSecondsPerHour },
            metric("hitchRatioMsPerS", "Hitch ratio", "ms/s") { $0.hitchRatioMsPerS },
            metric("cpuMs", "CPU time", "ms") { $0.cpuMs },
            metric("peakRssKb", "Peak RSS", "KiB") { $0.peakRssKb.map(Double.init) },
        ]
        // Hangs by cause, for the causes either report has.
        for kind in HangCause.Kind.allCases where b.causeCounts[kind] != nil || a.causeCounts[kind] != nil {
            metrics.append(metric(Self.causeKey(kind), "Hangs caused by \(kind.rawValue)", "count") {
                Double($0.causeCounts[kind] ?? 0)
            })
        }
        symbols = Self.symbolChanges(before: SymbolWeights.of(before), after: SymbolWeights.of(after), limit: symbolLimit)
    }

    /// The metric key of a cause's hang count: `deadlockHangCount`, `starvedOfCPUHangCount`, ...
    package static func causeKey(_ kind: HangCause.Kind) -> String {
        (kind == .starvedOfCPU ? "starvedOfCPU" : kind.rawValue) + "HangCount"
    }

    static func symbolChanges(before: [String: SymbolWeight], after: [String: SymbolWeight], limit: Int) -> [SymbolChange] {
        struct Candidate {
            var change: SymbolChange
            var depth: Int
            var isUserCode: Bool
        }
        var chains: [String: [Candidate]] = [:]
        for name in Set(before.keys).union(after.keys) {
            let weight = after[name] ?? before[name]
            let change = SymbolChange(symbol: name, image: weight?.image ?? "",
                                      beforeMs: before[name]?.totalMs ?? 0, afterMs: after[name]?.totalMs ?? 0,
                                      beforeSelfMs: before[name]?.selfMs ?? 0, afterSelfMs: after[name]?.selfMs ?? 0)
            // Written so a NaN change (a hostile file) counts as a change and stays visible.
            guard !(change.changeMs == 0 && change.selfChangeMs == 0) else { continue }
            // Exact equality on purpose: frames of one chain get their time from the same samples.
            let key = "\(change.beforeMs.bitPattern):\(change.afterMs.bitPattern)"
            chains[key, default: []].append(Candidate(change: change, depth: weight?.depth ?? 0,
                                                      isUserCode: !SystemImages.contains(change.image)))
        }
        let rows = chains.values.compactMap { chain -> SymbolChange? in
            let ordered = chain.sorted { ($0.depth, $0.change.symbol) < ($1.depth, $1.change.symbol) }
            guard let chosen = ordered.last(where: \.isUserCode) ?? ordered.last else { return nil }
            var row = chosen.change
            row.sameChange = ordered.map(\.change.symbol).filter { $0 != row.symbol }
            return row
        }
        return rows.sorted(by: Self.biggerChangeFirst).prefix(max(0, limit)).map { $0 }
    }

    private static func biggerChangeFirst(_ x: SymbolChange, _ y: SymbolChange) -> Bool {
        let (dx, dy) = (magnitude(x.changeMs), magnitude(y.changeMs))
        if dx != dy { return dx > dy }
        let (sx, sy) = (magnitude(x.selfChangeMs), magnitude(y.selfChangeMs))
        if sx != sy { return sx > sy }
        return (x.symbol, x.image) < (y.symbol, y.image)
    }

    /// |value|, with NaN ranked as the smallest so sorting stays a strict weak order.
    private static func magnitude(_ value: Double) -> Double {
        value.isNaN ? -1 : abs(value)
    }
}
