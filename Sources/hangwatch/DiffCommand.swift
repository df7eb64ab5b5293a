import HangWatch
import HangWatchAnalysis
import HangWatchModel
import HangWatchRender

/// `hangwatch diff BEFORE.json AFTER.json`: what changed between two runs.
enum DiffCommand {
    struct Options {
        var before = ""
        var after = ""
        var format: DiffFormat = .standard
        var output: String?
        var showHelp = false

        static func parse(_ args: [String]) throws(UsageError) -> Options {
            var options = Options()
            var inputs: [String] = []
            var words = ArgumentWords(args)
            while let word = words.next() {
                switch word {
                case .positional(let path):
                    inputs.append(path)
                case .option(let flag, let inline):
                    switch flag {
                    case "-h", "--help": options.showHelp = true
                    case "-o", "--output": options.output = try OptionValues.nonEmpty(words.value(of: flag, inline: inline), for: flag)
                    case "--format":
                        let name = try words.value(of: flag, inline: inline)
                        guard let format = DiffFormat(rawValue: name) else {
                            throw UsageError("unknown diff format '\(name)' (expected \(OutputOptions.diffFormatNames(markingDefault: false)))")
                        }
                        options.format = format
                    default: throw UsageError("unknown option '\(flag)' (try 'hangwatch diff --help')")
                    }
                }
            }
            if options.showHelp { return options }
            guard inputs.count == 2 else {
                throw UsageError("diff needs two report files, got \(inputs.count) (usage: hangwatch diff BEFORE.json AFTER.json)")
            }
            if inputs == ["-", "-"] { throw UsageError("only one of the two reports can come from standard input") }
            options.before = inputs[0]
            options.after = inputs[1]
            return options
        }
    }

    static func main(_ args: [String]) -> Int32 {
        let options: Options
        do {
            options = try Options.parse(args)
        } catch {
            return usageError(error.message)
        }
        if options.showHelp {
            print(Usage.diff)
            return 0
        }
        let before: Report, after: Report
        do {
            before = try ReportInput.read(options.before)
            after = try ReportInput.read(options.after)
        } catch {
            writeStderr("hangwatch: \(error.message)")
            return error.status
        }
        let diff = ReportDiff(before: before, after: after)
        do {
            let data = try options.format.render(diff, before: options.before, after: options.after)
            return ReportOutput.write(data, to: OutputDestination(path: options.output, otherwise: .standardOutput))
        } catch {
            writeStderr("hangwatch: cannot render the comparison: \(error)")
            return ExitCode.dataError
        }
    }
}
