// Number formatting for the text report, done by hand on purpose.

/// Fixed-point formatting that is locale-free and cannot trap.
///
/// `String(format:)` depends on Foundation's locale handling, and converting a
/// Double to Int traps when it is out of range; a report read back from a file
/// can hold any number, so the renderer must survive `1e300` or a negative zero.
package enum NumberFormat {
    /// `value` with exactly `decimals` digits after the point ("412.3", "-0.5", "100").
    package static func fixed(_ value: Double, _ decimals: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
        let decimals = min(max(decimals, 0), 6)
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        // Beyond 2^53 a Double has no fractional digits left to show anyway.
        guard scaled < 9.0e15 else { return "\(value)" }
        let units = Int(scaled)
        let factor = Int(scale)
        var text = String(units / factor)
        if decimals > 0 {
            let fraction = String(units % factor)
            text += "." + String(repeating: "0", count: decimals - fraction.count) + fraction
        }
        return (value < 0 && units != 0 ? "-" : "") + text
    }

    /// Milliseconds with one decimal: "412.3 ms".
    package static func ms(_ value: Double) -> String { fixed(value, 1) + " ms" }

    /// A threshold as the user typed it: "250 ms", or "16.7 ms" when not whole.
    package static func thresholdMs(_ value: Double) -> String {
        let whole = value.isFinite && value == value.rounded()
        return fixed(value, whole ? 0 : 1) + " ms"
    }

    /// Seconds with two decimals, for whole-run durations: "2.41 s".
    package static func seconds(fromMs value: Double) -> String { fixed(value / 1000, 2) + " s" }

    /// A time since process start: "+1.234 s".
    package static func offset(fromMs value: Double) -> String { "+" + fixed(value / 1000, 3) + " s" }

    /// A fraction of a whole as a percentage with `decimals` digits: "99.4%".
    package static func percent(_ part: Double, of whole: Double, decimals: Int = 1) -> String {
        guard whole > 0 else { return fixed(0, decimals) + "%" }
        return fixed(part / whole * 100, decimals) + "%"
    }
}
