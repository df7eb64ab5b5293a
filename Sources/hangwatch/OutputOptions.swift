import HangWatchRender

/// `-o/--output` and `--format`, which every command that writes has: their
/// help and the defaults it names come from here and from the formats' own
/// `standard`, so no command writes them again.
enum OutputOptions {
    /// "  -o, --output FILE  write WHAT to FILE instead of OTHERWISE".
    static func outputHelp(_ what: String, otherwise: String) -> String {
        "  -o, --output FILE  write \(what)to FILE instead of \(otherwise)"
    }

    /// "  --format FORMAT    text, json, ... (default text)" for the report formats.
    static var reportFormatHelp: String {
        "  --format FORMAT    \(ReportFormat.allCases.map(\.rawValue).joined(separator: ", ")) "
            + "(default \(ReportFormat.standard.rawValue))"
    }

    /// "text (default), markdown or json": the diff formats, with the default marked or not.
    static func diffFormatNames(markingDefault: Bool) -> String {
        let names = DiffFormat.allCases.map { markingDefault && $0 == .standard ? "\($0.rawValue) (default)" : $0.rawValue }
        return names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "")
    }
}
