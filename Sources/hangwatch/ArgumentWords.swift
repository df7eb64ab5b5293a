import HangWatchCapture
import HangWatch
import HangWatchRender

/// A bad command line, said in one line.
struct UsageError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// Walks the arguments of `report` and `diff`: options as `--flag VALUE` or
/// `--flag=VALUE`, anything else (including a lone `-`, standard input) as a
/// positional word, and everything after `--` as positional.
struct ArgumentWords {
    enum Word {
        case option(String, inline: String?)
        case positional(String)
    }

    private let args: [String]
    private var index = 0
    private var onlyPositional = false

    init(_ args: [String]) { self.args = args }

    mutating func next() -> Word? {
        while index < args.count {
            let arg = args[index]
            index += 1
            if onlyPositional || arg == "-" || !arg.hasPrefix("-") { return .positional(arg) }
            if arg == "--" {
                onlyPositional = true
                continue
            }
            if arg.hasPrefix("--"), let eq = arg.firstIndex(of: "=") {
                return .option(String(arg[..<eq]), inline: String(arg[arg.index(after: eq)...]))
            }
            return .option(arg, inline: nil)
        }
        return nil
    }

    /// The value of `flag`: its `=VALUE`, else the next argument.
    mutating func value(of flag: String, inline: String?) throws(UsageError) -> String {
        if let inline { return inline }
        guard index < args.count else { throw UsageError("option \(flag) needs a value") }
        index += 1
        return args[index - 1]
    }
}

enum OptionValues {
    /// `text` as `option`'s number, within its limits.
    static func number(_ text: String, for option: OptionSpec) throws(UsageError) -> Double {
        switch option.number(text) {
        case let .success(value): return value
        case let .failure(error): throw UsageError(error.description)
        }
    }

    /// `text` as `option`'s whole number, within its limits.
    static func integer(_ text: String, for option: OptionSpec) throws(UsageError) -> Int {
        switch option.integer(text) {
        case let .success(value): return value
        case let .failure(error): throw UsageError(error.description)
        }
    }

    /// A format name, or a usage error that lists the formats.
    static func reportFormat(_ text: String) throws(UsageError) -> ReportFormat {
        guard let format = ReportFormat(rawValue: text) else {
            let names = ReportFormat.allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError("unknown format '\(text)' (expected one of \(names))")
        }
        return format
    }

    static func nonEmpty(_ text: String, for flag: String) throws(UsageError) -> String {
        guard !text.isEmpty else { throw UsageError("option \(flag) needs a non-empty value") }
        return text
    }
}
