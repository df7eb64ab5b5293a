// The output formats of `hangwatch diff`, and the value formatting they share.

import Foundation
import HangWatchAnalysis
import HangWatchModel

/// An output format of `hangwatch diff --format`.
package enum DiffFormat: String, CaseIterable, Sendable {
    case text, markdown, json

    /// The format a diff is written in when `--format` is not given.
    package static let standard: DiffFormat = .text

    /// The comparison in this format. `before` and `after` name the two inputs (file names).
    package func render(_ diff: ReportDiff, before: String, after: String) throws -> Data {
        switch self {
        case .text: return Data(DiffTextRenderer.render(diff, before: before, after: after).utf8)
        case .markdown: return Data(DiffMarkdownRenderer.render(diff, before: before, after: after).utf8)
        case .json: return try DiffJSON.encode(diff, before: before, after: after)
        }
    }
}

/// Values and changes in each metric's unit, for the text and markdown diffs.
enum DiffValueFormat {
    static func value(_ value: Double?, unit: String) -> String {
        guard let value else { return "n/a" }
        return magnitude(value, unit: unit)
    }

    static func change(_ metric: ReportDiff.MetricChange) -> String {
        guard let change = metric.change else { return "n/a" }
        return signed(change, unit: metric.unit)
    }

    static func percent(_ metric: ReportDiff.MetricChange) -> String {
        guard let percent = metric.changePercent else { return metric.change == nil || metric.change == 0 ? "n/a" : "new" }
        return (percent > 0 ? "+" : "") + NumberFormat.fixed(percent, 1) + "%"
    }

    /// " (+3 on the same path)" when other symbols share the row.
    static func sameChange(_ symbol: ReportDiff.SymbolChange) -> String {
        symbol.sameChange.isEmpty ? "" : " (+\(symbol.sameChange.count) on the same path)"
    }

    /// "+12.0 ms", "-3", "0.0 ms".
    static func signed(_ value: Double, unit: String) -> String {
        (value > 0 ? "+" : "") + magnitude(value, unit: unit)
    }

    private static func magnitude(_ value: Double, unit: String) -> String {
        switch unit {
        case "count": return NumberFormat.fixed(value, 0)
        case "ms": return NumberFormat.ms(value)
        case "KiB": return NumberFormat.fixed(value / 1024, 1) + " MiB"
        default: return NumberFormat.fixed(value, 1) + " " + unit
        }
    }
}
