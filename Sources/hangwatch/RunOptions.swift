import HangWatch
import HangWatchAnalysis
import HangWatchCapture
import HangWatchLive
import HangWatchRender
import Glibc

/// Parsed `hangwatch run` command line.
struct RunOptions {
    var capture = CaptureConfig()
    var output: String?
    /// The live outputs (`--events`, `--rotate`, `--keep`, `--otlp-endpoint`).
    var live = LiveOutputSettings()
    var format: ReportFormat = .standard
    var gates = RunGates()
    /// Where PROGRAM is among the parsed words (nil: none given). From there
    /// on they are the program's argv, which `run` hands over as the bytes it
    /// was given; their text serves messages and the report only.
    var programStart: Int?
    var showHelp = false

    enum ParseError: Error { case message(String) }

    /// Parses options up to `--` (or the first non-option word), then the program.
    static func parse(_ args: [String]) throws(ParseError) -> RunOptions {
        var options = RunOptions()
        // The sampler's default may come from the environment (the fallback, chosen for a whole test run).
        if let name = CaptureOptions.sampler.environmentText, let sampler = CaptureConfig.Sampler(rawValue: name) {
            options.capture.sampler = sampler
        }
        if let name = CaptureOptions.heartbeatClock.environmentText, let clock = CaptureConfig.HeartbeatClock(rawValue: name) {
            options.capture.heartbeatClock = clock
        }
        var i = 0
        var liveWords = LiveOptions()
        func value(_ flag: String) throws(ParseError) -> String {
            i += 1
            guard i < args.count else { throw .message("option \(flag) needs a value") }
            return args[i]
        }
        func number(_ option: OptionSpec, _ text: String) throws(ParseError) -> Double {
            switch option.number(text) {
            case let .success(v): return v
            case let .failure(error): throw .message(error.description)
            }
        }
        func choice(_ option: OptionSpec, _ text: String) throws(ParseError) -> String {
            switch option.choice(text) {
            case let .success(v): return v
            case let .failure(error): throw .message(error.description)
            }
        }
        typealias O = CaptureOptions
        while i < args.count {
            var arg = args[i]
            var inline: String?
            if arg.hasPrefix("--"), let eq = arg.firstIndex(of: "=") {
                inline = String(arg[arg.index(after: eq)...])
                arg = String(arg[..<eq])
            }
            func next() throws(ParseError) -> String { if let inline { return inline }; return try value(arg) }
            switch arg {
            case "--":
                options.programStart = i + 1
                i = args.count
                continue
            case "-h", "--help": options.showHelp = true
            case O.hangMs.flag: options.capture.hangMs = try number(O.hangMs, next())
            case O.reportMs.flag: options.capture.reportMs = try number(O.reportMs, next())
            case O.sampleHz.flag: options.capture.sampleHz = try number(O.sampleHz, next())
            case O.sampler.flag:
                if let sampler = CaptureConfig.Sampler(rawValue: try choice(O.sampler, next())) { options.capture.sampler = sampler }
            case O.heartbeatClock.flag:
                if let clock = CaptureConfig.HeartbeatClock(rawValue: try choice(O.heartbeatClock, next())) {
                    options.capture.heartbeatClock = clock
                }
            case O.frameMs.flag: options.capture.frameMs = try number(O.frameMs, next())
            case "--thread":
                let name = try next()
                guard !name.isEmpty, name.utf8.count <= 100 else { throw .message("invalid thread name '\(name)' for --thread") }
                options.capture.threadPatterns.append(name)
            case "--source-lines":
                guard inline == nil else { throw .message("--source-lines takes no value") }
                options.capture.sourceLines = true
            case "-o", "--output": options.output = try next()
            case "--format":
                let name = try next()
                do { options.format = try OptionValues.reportFormat(name) } catch { throw .message(error.message) }
            case "--fail-on-hang":
                // The limit is optional, so it is only ever taken from `=MS`: the next word may be the program.
                if let inline {
                    options.gates.hang = .ms(try number(O.failOnHang, inline))
                } else if i + 1 < args.count, Double(args[i + 1]) != nil {
                    throw .message("write the limit as --fail-on-hang=\(args[i + 1]) (a bare --fail-on-hang uses the report threshold)")
                } else {
                    options.gates.hang = .reportThreshold
                }
            case "--fail-on-hitch-ratio":
                options.gates.hitchRatioMsPerS = try number(O.failOnHitchRatio, next())
            case "--count-stopped":
                guard inline == nil else { throw .message("--count-stopped takes no value") }
                options.gates.countStopped = true
            case let flag where LiveOptions.flags.contains(flag):
                let text = try next()
                do { try liveWords.take(flag, value: text) } catch { throw .message(error.message) }
            default:
                if arg.hasPrefix("-") { throw .message("unknown option '\(args[i])' (try 'hangwatch run --help')") }
                options.programStart = i
                i = args.count
                continue
            }
            i += 1
        }
        if options.showHelp { return options }
        if (options.programStart ?? args.count) >= args.count { throw .message("no program given (usage: hangwatch run [options] -- PROGRAM [ARGS...])") }
        do { options.live = try liveWords.settings() } catch { throw .message(error.message) }
        if options.capture.reportMs < options.capture.hangMs {
            throw .message("--report-ms (\(options.capture.reportMs.clean)) must not be below --hang-ms (\(options.capture.hangMs.clean))")
        }
        if options.gates.hitchRatioMsPerS != nil && options.capture.frameMs == nil {
            throw .message("--fail-on-hitch-ratio needs --frame-ms: hitches are only measured against a frame deadline")
        }
        if options.gates.countStopped && options.gates.hang == nil {
            throw .message("--count-stopped changes --fail-on-hang: give --fail-on-hang too")
        }
        if case .ms(let limit)? = options.gates.hang, limit < options.capture.hangMs {
            throw .message("--fail-on-hang=\(limit.clean) is below --hang-ms (\(options.capture.hangMs.clean)): shorter hangs are not recorded")
        }
        return options
    }
}

extension Double {
    /// 100 rather than 100.0 in messages.
    var clean: String { self == rounded() && abs(self) < 1e15 ? String(Int64(self)) : String(self) }
}
