import HangWatch
import HangWatchAnalysis
import HangWatchRender

/// Parsed `hangwatch report FILE.json [options]` command line.
struct ReportOptions {
    var input = ""
    var format: ReportFormat = .standard
    var output: String?
    var filters = ReportFilterSet()
    var showHelp = false

    static func parse(_ args: [String]) throws(UsageError) -> ReportOptions {
        var options = ReportOptions()
        var inputs: [String] = []
        var words = ArgumentWords(args)
        while let word = words.next() {
            switch word {
            case .positional(let path):
                inputs.append(path)
            case .option(let flag, let inline):
                typealias F = ReportFilterOptions
                if inline != nil && [F.inverted.flag, F.hideSystem.flag, "--help"].contains(flag) {
                    throw UsageError("option \(flag) takes no value")
                }
                func value() throws(UsageError) -> String { try words.value(of: flag, inline: inline) }
                switch flag {
                case "-h", "--help": options.showHelp = true
                case "--format": options.format = try OptionValues.reportFormat(value())
                case "-o", "--output": options.output = try OptionValues.nonEmpty(value(), for: flag)
                case F.minMs.flag: options.filters.minimumMs = try OptionValues.number(value(), for: F.minMs)
                case F.top.flag: options.filters.top = try OptionValues.integer(value(), for: F.top)
                case F.inverted.flag: options.filters.inverted = true
                case F.hideSystem.flag: options.filters.hideSystem = true
                case F.focus.flag: options.filters.focus = try OptionValues.nonEmpty(value(), for: flag)
                case F.thread.flag: options.filters.thread = try OptionValues.nonEmpty(value(), for: flag)
                default: throw UsageError("unknown option '\(flag)' (try 'hangwatch report --help')")
                }
            }
        }
        if options.showHelp { return options }
        guard inputs.count == 1, let input = inputs.first else {
            throw UsageError(inputs.isEmpty ? "no report file given (usage: hangwatch report FILE.json [options])"
                                            : "one report file at a time (got \(inputs.count)); to compare two, use 'hangwatch diff'")
        }
        options.input = input
        return options
    }
}
