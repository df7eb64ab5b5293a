// `hangwatch diff --format json`: a small, documented file shape (diffVersion 1).
//
//     {
//       "diffVersion": 1,
//       "before": "before.json",            // the inputs as named on the command line
//       "after": "after.json",
//       "metrics": {                        // one entry per metric, keyed by ReportDiff.MetricChange.key:
//         "hangCount": {                    // hangCount, reportedHangCount, longestHangMs, totalHangMs,
//           "unit": "count",                // hangRateSPerHour, hitchRatioMsPerS, cpuMs, peakRssKb
//           "before": 3, "after": 1,        // null when that report lacks the metric
//           "change": -2,                   // after - before; null unless both are known
//           "changePercent": -66.667        // change / |before| × 100; null when before is 0 or unknown
//         }, ...
//       },
//       "symbols": [                        // at most 10, the largest |changeMs| first
//         { "symbol": "...", "image": "...",
//           "beforeMs": 420, "afterMs": 0, "changeMs": -420,               // inclusive, once per stack
//           "beforeSelfMs": 200, "afterSelfMs": 0, "selfChangeMs": -200,   // self time
//           "sameChange": ["main", ...] }   // symbols with the very same times, shown as this one row
//       ]
//     }
//
// Keys are sorted, numbers rounded to 3 decimals; every key is always present.

import Foundation
import HangWatchAnalysis
import HangWatchModel

enum DiffJSON {
    static let version = 1

    static func encode(_ diff: ReportDiff, before: String, after: String) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(DiffFileJSON(diff: diff, before: before, after: after))
    }

    /// JSON has no NaN or infinity; such values only come from hostile input and are written as null.
    static func number(_ value: Double?) -> Double? {
        guard let value, value.isFinite else { return nil }
        return roundedForJSON(value)
    }
}

private struct DiffFileJSON: Encodable {
    var diff: ReportDiff
    var before: String
    var after: String

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: JSONKey.self)
        try c.encode(DiffJSON.version, forKey: "diffVersion")
        try c.encode(before, forKey: "before")
        try c.encode(after, forKey: "after")
        var metrics = c.nestedContainer(keyedBy: JSONKey.self, forKey: "metrics")
        for metric in diff.metrics {
            var m = metrics.nestedContainer(keyedBy: JSONKey.self, forKey: JSONKey(stringValue: metric.key))
            try m.encode(metric.unit, forKey: "unit")
            try m.encode(DiffJSON.number(metric.before), forKey: "before")
            try m.encode(DiffJSON.number(metric.after), forKey: "after")
            try m.encode(DiffJSON.number(metric.change), forKey: "change")
            try m.encode(DiffJSON.number(metric.changePercent), forKey: "changePercent")
        }
        var symbols = c.nestedUnkeyedContainer(forKey: "symbols")
        for symbol in diff.symbols {
            var s = symbols.nestedContainer(keyedBy: JSONKey.self)
            try s.encode(symbol.symbol, forKey: "symbol")
            try s.encode(symbol.image, forKey: "image")
            try s.encode(DiffJSON.number(symbol.beforeMs), forKey: "beforeMs")
            try s.encode(DiffJSON.number(symbol.afterMs), forKey: "afterMs")
            try s.encode(DiffJSON.number(symbol.changeMs), forKey: "changeMs")
            try s.encode(DiffJSON.number(symbol.beforeSelfMs), forKey: "beforeSelfMs")
            try s.encode(DiffJSON.number(symbol.afterSelfMs), forKey: "afterSelfMs")
            try s.encode(DiffJSON.number(symbol.selfChangeMs), forKey: "selfChangeMs")
            try s.encode(symbol.sameChange, forKey: "sameChange")
        }
    }
}
