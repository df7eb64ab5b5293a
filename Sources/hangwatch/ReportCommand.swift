import HangWatch
import HangWatchModel

/// `hangwatch report FILE.json`: re-render a saved JSON report, optionally filtered.
enum ReportCommand {
    static func main(_ args: [String]) -> Int32 {
        let options: ReportOptions
        do {
            options = try ReportOptions.parse(args)
        } catch {
            return usageError(error.message)
        }
        if options.showHelp {
            print(Usage.report)
            return 0
        }
        let report: Report
        do {
            report = try ReportInput.read(options.input)
        } catch {
            writeStderr("hangwatch: \(error.message)")
            return error.status
        }
        let filtered = options.filters.apply(to: report)
        return ReportOutput.write(filtered, format: options.format,
                                  to: OutputDestination(path: options.output, otherwise: .standardOutput))
    }
}
