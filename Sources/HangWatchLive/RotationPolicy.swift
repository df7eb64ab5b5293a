import HangWatchCapture
/// When a rotating event stream closes its file and starts a new one
/// (`--rotate SIZE|INTERVAL`, `--keep N`; library: `HANGWATCH_ROTATE`,
/// `HANGWATCH_KEEP`).
package struct RotationPolicy: Sendable, Equatable {
    /// Close the file before a line that would take it past this many bytes.
    package var maxBytes: Int?
    /// Close the file once it has been open this long.
    package var intervalNs: UInt64?
    /// Closed files kept besides the one being written (`FILE.1.jsonl` is the newest).
    package var keep: Int

    /// Files kept when `--keep` is not given.
    package static let defaultKeep = CaptureOptions.Defaults.keep
    /// The smallest size accepted: a file must hold at least a few hang lines.
    package static let minBytes = 4096
    /// The shortest interval accepted.
    package static let minIntervalNs: UInt64 = 1_000_000_000

    /// A policy from the text of `--rotate`: a size with a unit (`512K`,
    /// `10M`, `1G`; powers of 1024) or an interval with a unit (`30s`, `10m`,
    /// `1h`, `1d`). Units are required, so `10M` (bytes) and `10m` (minutes)
    /// cannot be confused with a bare number. Throws the message for the user.
    package static func parse(_ text: String, keep: Int = defaultKeep) throws(RotationPolicyError) -> RotationPolicy {
        let sizes: [(String, Double)] = [("KiB", 1024), ("KB", 1024), ("K", 1024), ("k", 1024),
                                         ("MiB", 1_048_576), ("MB", 1_048_576), ("M", 1_048_576),
                                         ("GiB", 1_073_741_824), ("GB", 1_073_741_824), ("G", 1_073_741_824), ("B", 1)]
        let times: [(String, Double)] = [("s", 1e9), ("m", 60e9), ("h", 3600e9), ("d", 86400e9)]
        let keeps = CaptureOptions.keep.range
        guard keeps.contains(Double(keep)) else {
            throw RotationPolicyError("invalid --keep '\(keep)' (expected \(Int(keeps.lowerBound)) to \(Int(keeps.upperBound)))")
        }
        for (unit, scale) in sizes where text.hasSuffix(unit) {
            guard let n = Double(text.dropLast(unit.count)), n.isFinite, n * scale >= Double(minBytes),
                  n * scale <= 1_099_511_627_776 else {
                throw RotationPolicyError("invalid size '\(text)' for --rotate (at least 4K, at most 1024G)")
            }
            return RotationPolicy(maxBytes: Int(n * scale), intervalNs: nil, keep: keep)
        }
        for (unit, scale) in times where text.hasSuffix(unit) {
            guard let n = Double(text.dropLast(unit.count)), n.isFinite, n * scale >= Double(minIntervalNs),
                  n * scale <= 366 * 86400e9 else {
                throw RotationPolicyError("invalid interval '\(text)' for --rotate (at least 1s, at most 366d)")
            }
            return RotationPolicy(maxBytes: nil, intervalNs: UInt64(n * scale), keep: keep)
        }
        throw RotationPolicyError("invalid value '\(text)' for --rotate (a size such as 10M or an interval such as 1h; "
                                  + "a unit is required)")
    }
}

/// Why a `--rotate` or `--keep` value was refused: one line for the user.
package struct RotationPolicyError: Error, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
}
