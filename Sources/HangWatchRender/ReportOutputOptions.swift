// Where a finished report goes and in which format, as options: `--format` and
// `-o` on the command lines, HANGWATCH_FORMAT and HANGWATCH_REPORT in the library.

import HangWatchCapture

/// The report's format and path, defined once for the command lines and the library.
package enum ReportOutputOptions {
    /// `--format`; the default is `ReportFormat.standard`, the first name.
    package static let format = OptionSpec(
        flag: "--format", valueName: "FORMAT", environment: "HANGWATCH_FORMAT",
        value: .choice([ReportFormat.standard.rawValue]
                       + ReportFormat.allCases.map(\.rawValue).filter { $0 != ReportFormat.standard.rawValue }),
        help: "the report's format")
    /// `-o`; in the library, the path the report is written to at exit (`stderr`: the terminal).
    package static let output = OptionSpec(
        flag: "--output", valueName: "FILE", environment: "HANGWATCH_REPORT", value: .text,
        help: "write the report to FILE")

    /// The format variable read: nil when unset or not a format's name.
    package static var environmentFormat: ReportFormat? {
        format.environmentText.flatMap(ReportFormat.init(rawValue:))
    }
}
