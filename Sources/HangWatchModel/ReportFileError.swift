// Why a report file could not be read back.

/// The ways `JSONReport.decode` refuses a file, each with a message that tells
/// the user what to fix instead of a raw `DecodingError` dump.
public enum ReportFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not JSON at all, or cut short (a run killed while the file was being written).
    case malformedJSON(detail: String)
    /// Valid JSON, but not an object at the top level.
    case notAReport
    /// Written by a hangwatch with a different, incompatible file format.
    case unsupportedSchemaVersion(found: Int, supported: Int)
    /// A required field is absent or null; the path looks like `hangs[0].thread.tid`.
    case missingField(path: String)
    /// A field holds the wrong type or an unknown value (e.g. `"kind": "slow"`).
    case invalidValue(path: String, reason: String)
    /// Objects and arrays nested deeper than any file hangwatch writes.
    case tooDeeplyNested(limit: Int)

    /// One line for the user that says what is wrong with the file.
    public var description: String {
        switch self {
        case .malformedJSON(let detail):
            return "not a valid JSON report (truncated or corrupted?): \(detail)"
        case .notAReport:
            return "not a hangwatch report: the top level is not a JSON object"
        case .unsupportedSchemaVersion(let found, let supported):
            return "unsupported report schemaVersion \(found) (this hangwatch reads versions 1 to \(supported))"
        case .missingField(let path):
            return "not a hangwatch report: required field '\(path)' is missing"
        case .invalidValue(let path, let reason):
            return "invalid value for '\(path)' in the report: \(reason)"
        case .tooDeeplyNested(let limit):
            return "report is nested deeper than \(limit) levels; hangwatch never writes such files"
        }
    }
}
