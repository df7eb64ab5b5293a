// The report file: `hangwatch run --format json` writes it, `hangwatch report FILE.json` reads it.

import Foundation

/// Reads and writes reports as JSON (schemaVersion 5; versions 1 to 4 are still read).
///
/// Writing goes through explicit encoders so optional fields appear as `null`
/// and keys are sorted, which makes files stable to diff and easy to consume
/// from other languages. Reading is strict about structure and never traps.
public enum JSONReport {
    /// The schema version this build writes and reads.
    /// 2: `blockedIn` became `{syscall, symbol}` (a string in 1), and hangs gained
    /// `cpuMs`, `runnableMs`, `lockOwner` and `runningThreads`.
    /// 3: a hang's `kind` may be `unknown` (nothing measured its thread), which a
    /// version-2 reader would refuse as a bad value rather than as a newer file.
    /// 4: `thread.role` may be `job` or `cooperative-pool`, and a pool hang has
    /// `poolThreads` (null on every other hang).
    /// 5: hangs gained `cause` (`{kind, ...}`: `deadlock`, `throttled`, `stopped`,
    /// `starved-of-cpu`), `stoppedMs` and `throttle`; later a pool hang's
    /// `poolJobWaitMs` (null elsewhere; a reader of 5 that ignores unknown keys
    /// reads such files unchanged).
    public static let schemaVersion = 5
    /// Older versions this build still reads.
    public static let readableVersions: ClosedRange<Int> = 1...5

    /// Call trees are written at most this many levels deep; deeper levels (a runaway
    /// recursion) are dropped, their weight still counted in the last written node.
    /// Deeper files would exceed common JSON parsers' nesting limits (Foundation's is 512).
    public static let maxTreeDepth = 200

    /// Input nested deeper than this is refused before parsing.
    public static let maxNesting = 500

    /// Pretty-printed, sorted keys, explicit nulls, doubles rounded to 3 decimals.
    /// Adds a note to the file when a call tree had to be cut at `maxTreeDepth`.
    public static func encode(_ report: Report) throws -> Data {
        var report = report
        let trees = report.hangs.compactMap(\.callTree) + [report.launch?.callTree].compactMap { $0 }
        if trees.contains(where: { $0.depth > maxTreeDepth }) {
            report.notes.append("call trees deeper than \(maxTreeDepth) levels were cut in this file; "
                                + "the weight of the cut levels is still counted in their callers")
        }
        // JSONEncoder's bytes, written without it (JSONValue says why).
        return try tree(of: report).prettyPrinted()
    }

    /// The report as the JSON tree `encode` writes (before the note on cut trees).
    package static func tree(of report: Report) -> JSONValue {
        ReportJSON(report: report, maxTreeDepth: maxTreeDepth).json
    }

    /// Reads a report file, throwing `ReportFileError` for anything that is not a
    /// complete version-1 report. Optional fields may be `null` or absent, and so may
    /// the fields added after the first files were written (`frameLoops`, `notes`,
    /// the process metrics, a frame loop's `name` and `histogram`).
    public static func decode(_ data: Data) throws -> Report {
        let bytes = [UInt8](data)
        guard bytes.contains(where: { !Self.isWhitespace($0) }) else {
            throw ReportFileError.malformedJSON(detail: "the file is empty")
        }
        if JSONNesting.maxDepth(of: bytes, limit: maxNesting) > maxNesting {
            throw ReportFileError.tooDeeplyNested(limit: maxNesting)
        }
        let decoder = JSONDecoder()
        do {
            let probe = try decoder.decode(VersionProbe.self, from: data)
            guard let version = probe.schemaVersion else { throw ReportFileError.missingField(path: "schemaVersion") }
            guard readableVersions.contains(version) else {
                throw ReportFileError.unsupportedSchemaVersion(found: version, supported: schemaVersion)
            }
            return try decoder.decode(ReportFileJSON.self, from: data).report
        } catch let error as DecodingError {
            throw ReportFileError(error)
        }
    }

    /// Reads only the version, so a future file fails with "unsupported version"
    /// rather than with whichever field happened to change first.
    private struct VersionProbe: Decodable {
        var schemaVersion: Int?
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}

extension ReportFileError {
    /// Translates Foundation's error into one that names the field in schema terms.
    init(_ error: DecodingError) {
        switch error {
        case .keyNotFound(let key, let context):
            self = .missingField(path: Self.path(context.codingPath + [key]))
        case .valueNotFound(_, let context):
            self = .missingField(path: Self.path(context.codingPath))
        case .typeMismatch(let type, let context):
            self = context.codingPath.isEmpty
                ? .notAReport
                : .invalidValue(path: Self.path(context.codingPath), reason: "expected \(type)")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                let underlying = context.underlyingError.map { " (\($0.localizedDescription))" } ?? ""
                self = .malformedJSON(detail: context.debugDescription + underlying)
            } else {
                self = .invalidValue(path: Self.path(context.codingPath), reason: context.debugDescription)
            }
        @unknown default:
            self = .malformedJSON(detail: "\(error)")
        }
    }

    /// `hangs[0].thread.tid` from a coding path.
    private static func path(_ keys: [any CodingKey]) -> String {
        var text = ""
        for key in keys {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return text.isEmpty ? "(top level)" : text
    }
}
