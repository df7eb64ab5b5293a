import HangWatch
import HangWatchAnalysis
import HangWatchCapture
import HangWatchRender
import Glibc

/// Parsed `hangwatch run` command line.
struct RunOptions {
    var capture = CaptureConfig()
    var output: String?
    /// `--events FILE.jsonl`: append each hang there as it happens.
    var eventsPath: String?
    /// `--rotate SIZE|INTERVAL` and `--keep N`: rotate the event file.
    var rotation: RotationPolicy?
    /// `--otlp-endpoint http://HOST:PORT`: send each hang as an OTLP log record.
    var otlpEndpoint: String?
    var format: ReportFormat = .text
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
        if let raw = getenv("HANGWATCH_SAMPLER"), let sampler = CaptureConfig.Sampler(rawValue: String(cString: raw)) {
            options.capture.sampler = sampler
        }
        if let raw = getenv("HANGWATCH_HEARTBEAT_CLOCK"),
           let clock = CaptureConfig.HeartbeatClock(rawValue: String(cString: raw)) {
            options.capture.heartbeatClock = clock
        }
        var i = 0
        var rotate: String?
        var keep: Int?
        func value(_ flag: String) throws(ParseError) -> String {
            i += 1
            guard i < args.count else { throw .message("option \(flag) needs a value") }
            return args[i]
        }
        func number(_ flag: String, _ text: String, in range: ClosedRange<Double>) throws(ParseError) -> Double {
            guard let v = Double(text), v.isFinite, range.contains(v) else {
                throw .message("invalid value '\(text)' for \(flag) (expected a number in \(range.lowerBound.clean)...\(range.upperBound.clean))")
            }
            return v
        }
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
            case "--hang-ms": options.capture.hangMs = try number(arg, next(), in: 1...3_600_000)
            case "--report-ms": options.capture.reportMs = try number(arg, next(), in: 1...3_600_000)
            case "--sample-hz": options.capture.sampleHz = try number(arg, next(), in: 1...10_000)
            case "--sampler":
                let name = try next()
                guard let sampler = CaptureConfig.Sampler(rawValue: name) else {
                    throw .message("invalid value '\(name)' for --sampler (expected kernel or signal)")
                }
                options.capture.sampler = sampler
            case "--heartbeat-clock":
                let name = try next()
                guard let clock = CaptureConfig.HeartbeatClock(rawValue: name) else {
                    throw .message("invalid value '\(name)' for --heartbeat-clock (expected tsc or vdso)")
                }
                options.capture.heartbeatClock = clock
            case "--frame-ms": options.capture.frameMs = try number(arg, next(), in: 0.1...10_000)
            case "--thread":
                let name = try next()
                guard !name.isEmpty, name.utf8.count <= 100 else { throw .message("invalid thread name '\(name)' for --thread") }
                options.capture.threadPatterns.append(name)
            case "--source-lines":
                guard inline == nil else { throw .message("--source-lines takes no value") }
                options.capture.sourceLines = true
            case "-o", "--output": options.output = try next()
            case "--events":
                let path = try next()
                guard !path.isEmpty else { throw .message("--events needs a file path") }
                options.eventsPath = path
            case "--rotate": rotate = try next()
            case "--keep":
                let text = try next()
                guard let n = Int(text) else { throw .message("invalid value '\(text)' for --keep (expected a whole number)") }
                keep = n
            case "--otlp-endpoint":
                let url = try next()
                guard HTTPPost.Endpoint(url, defaultPath: "/v1/logs") != nil else {
                    throw .message("invalid value '\(url)' for --otlp-endpoint (expected http://HOST:PORT[/PATH]; https is not supported)")
                }
                options.otlpEndpoint = url
            case "--format":
                let name = try next()
                do { options.format = try OptionValues.reportFormat(name) } catch { throw .message(error.message) }
            case "--fail-on-hang":
                // The limit is optional, so it is only ever taken from `=MS`: the next word may be the program.
                if let inline {
                    options.gates.hang = .ms(try number(arg, inline, in: 1...3_600_000))
                } else if i + 1 < args.count, Double(args[i + 1]) != nil {
                    throw .message("write the limit as --fail-on-hang=\(args[i + 1]) (a bare --fail-on-hang uses the report threshold)")
                } else {
                    options.gates.hang = .reportThreshold
                }
            case "--fail-on-hitch-ratio":
                options.gates.hitchRatioMsPerS = try number(arg, next(), in: 0...1000)
            case "--count-stopped":
                guard inline == nil else { throw .message("--count-stopped takes no value") }
                options.gates.countStopped = true
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
        if let rotate {
            guard options.eventsPath != nil else { throw .message("--rotate rotates the --events file: give --events FILE.jsonl too") }
            do {
                options.rotation = try RotationPolicy.parse(rotate, keep: keep ?? RotationPolicy.defaultKeep)
            } catch {
                throw .message(error.description)
            }
        } else if keep != nil {
            throw .message("--keep needs --rotate")
        }
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
