import HangWatch
import HangWatchCapture
import HangWatchLive

/// Parsed `hangwatch attach PID [options]` command line.
struct AttachOptions {
    var pid: Int32 = 0
    var capture = CaptureConfig()
    /// How long to watch; nil: until Ctrl-C or the target exits.
    var durationSeconds: Double? = CaptureOptions.Defaults.attachDurationSeconds
    var output: String?
    /// The live outputs, as a session takes them.
    var live = LiveOutputSettings()
    var format: ReportFormat = .standard
    var gates = RunGates()
    var showHelp = false
    /// HANGWATCH_ATTACH_STOP_BLOCKED=1 (tests): stop blocked threads too, the worst case for the target.
    var stopBlockedThreads = CaptureOptions.attachStopBlocked.environmentSwitch ?? false

    static func parse(_ args: [String]) throws(UsageError) -> AttachOptions {
        var options = AttachOptions()
        var pids: [String] = []
        var words = ArgumentWords(args)
        var liveWords = LiveOptions()
        while let word = words.next() {
            switch word {
            case .positional(let text):
                pids.append(text)
            case .option(let flag, let inline):
                if inline != nil && ["--source-lines", "--help"].contains(flag) {
                    throw UsageError("option \(flag) takes no value")
                }
                func value() throws(UsageError) -> String { try words.value(of: flag, inline: inline) }
                switch flag {
                case "-h", "--help": options.showHelp = true
                case "--duration": options.durationSeconds = try duration(value())
                case CaptureOptions.hangMs.flag: options.capture.hangMs = try OptionValues.number(value(), for: CaptureOptions.hangMs)
                case CaptureOptions.reportMs.flag:
                    options.capture.reportMs = try OptionValues.number(value(), for: CaptureOptions.reportMs)
                case CaptureOptions.sampleHz.flag:
                    options.capture.sampleHz = try OptionValues.number(value(), for: CaptureOptions.sampleHz)
                case "--thread":
                    let name = try OptionValues.nonEmpty(value(), for: flag)
                    guard name.utf8.count <= 100 else { throw UsageError("invalid thread name '\(name)' for --thread") }
                    options.capture.threadPatterns.append(name)
                case "--source-lines": options.capture.sourceLines = true
                case "-o", "--output": options.output = try OptionValues.nonEmpty(value(), for: flag)
                case "--format": options.format = try OptionValues.reportFormat(value())
                case "--fail-on-hang":
                    if let inline {
                        options.gates.hang = .ms(try OptionValues.number(inline, for: CaptureOptions.failOnHang))
                    } else {
                        options.gates.hang = .reportThreshold
                    }
                case "--frame-ms", "--fail-on-hitch-ratio":
                    throw UsageError("\(flag) is not available with attach: frame loops are only measured under 'hangwatch run'")
                case let live where LiveOptions.flags.contains(live): try liveWords.take(live, value: value())
                default: throw UsageError("unknown option '\(flag)' (try 'hangwatch attach --help')")
                }
            }
        }
        if options.showHelp { return options }
        guard pids.count == 1, let text = pids.first else {
            throw UsageError(pids.isEmpty ? "no process id given (usage: hangwatch attach PID [options])"
                                          : "one process id at a time (got \(pids.count))")
        }
        options.pid = try pid(text)
        options.live = try liveWords.settings()
        if options.capture.reportMs < options.capture.hangMs {
            throw UsageError("--report-ms (\(options.capture.reportMs.clean)) must not be below --hang-ms (\(options.capture.hangMs.clean))")
        }
        if case .ms(let limit)? = options.gates.hang, limit < options.capture.hangMs {
            throw UsageError("--fail-on-hang=\(limit.clean) is below --hang-ms (\(options.capture.hangMs.clean)): shorter hangs are not recorded")
        }
        return options
    }

    static func pid(_ text: String) throws(UsageError) -> Int32 {
        guard let pid = Int32(text), pid > 0 else { throw UsageError("invalid process id '\(text)'") }
        return pid
    }

    /// `30s`, `500ms`, `2m`, `1h`, or plain seconds; `0` or `forever`: until Ctrl-C or exit.
    static func duration(_ text: String) throws(UsageError) -> Double? {
        if text == "forever" { return nil }
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        var number = text, scale = 1.0
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            number = String(text.dropLast(suffix.count))
            scale = factor
            break
        }
        guard let value = Double(number), value.isFinite, value >= 0, value * scale <= CaptureOptions.Defaults.attachDurationLimitSeconds else {
            throw UsageError("invalid duration '\(text)' (examples: 30s, 500ms, 2m, forever)")
        }
        return value == 0 ? nil : value * scale
    }
}
