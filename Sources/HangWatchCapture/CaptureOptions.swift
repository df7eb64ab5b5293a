#if canImport(Glibc)
import Glibc
#endif

/// One option of a capture, defined once: its flag, the environment variable
/// the library reads for it, its default, its limits and its help. The
/// command lines parse with it, `HangWatcher.Configuration.fromEnvironment()`
/// reads the variables with it, `--help` prints its lines from it (and the man
/// page and completions are made from `--help`).
package struct OptionSpec: Sendable {
    /// What its value is.
    package enum Value: Sendable {
        /// A number in `range`; `defaultValue` nil: none by default.
        case number(ClosedRange<Double>, defaultValue: Double?)
        /// A whole number in `range`; `defaultValue` nil: none by default.
        case integer(ClosedRange<Int>, defaultValue: Int?)
        /// One of `names`, the first by default.
        case choice([String])
        /// Any non-empty text.
        case text
        /// No value: present or not.
        case presence
    }

    /// `--hang-ms`.
    package let flag: String
    /// The value's name in the help (`MS`); nil for an option without a value.
    package let valueName: String?
    /// The variable the library reads (`HANGWATCH_HANG_MS`); nil: none.
    package let environment: String?
    /// What the value is, its default and limits.
    package let value: Value
    /// The help, without the default and limits (added from `value`); lines after the first are continued.
    package let help: String

    /// An option; `help` is wrapped by `helpLines`, which adds the default and limits.
    package init(flag: String, valueName: String?, environment: String?, value: Value, help: String) {
        self.flag = flag
        self.valueName = valueName
        self.environment = environment
        self.value = value
        self.help = help
    }

    /// The default as a number (nil for other kinds, or none).
    package var defaultNumber: Double? {
        if case let .number(_, value) = value { return value }
        return nil
    }

    /// The allowed range of a number.
    package var range: ClosedRange<Double> {
        if case let .number(range, _) = value { return range }
        if case let .integer(range, _) = value { return Double(range.lowerBound)...Double(range.upperBound) }
        return -Double.infinity...Double.infinity
    }

    /// `text` read as this option's number; the message for the user when it is not one in range.
    package func number(_ text: String) -> Result<Double, OptionError> {
        guard let v = Double(text), v.isFinite, range.contains(v) else {
            return .failure(OptionError("invalid value '\(text)' for \(flag) (expected a number in "
                                        + "\(Self.clean(range.lowerBound))...\(Self.clean(range.upperBound)))"))
        }
        return .success(v)
    }

    /// `text` read as this option's whole number; the message for the user when it is not one in range.
    package func integer(_ text: String) -> Result<Int, OptionError> {
        guard case let .integer(range, _) = value, let v = Int(text), range.contains(v) else {
            let r = range
            return .failure(OptionError("invalid value '\(text)' for \(flag) (expected a whole number in "
                                        + "\(Self.clean(r.lowerBound))...\(Self.clean(r.upperBound)))"))
        }
        return .success(v)
    }

    /// `text` read as one of this option's choices; the message for the user when it is none.
    package func choice(_ text: String) -> Result<String, OptionError> {
        guard case let .choice(names) = value, names.contains(text) else {
            let names: [String]
            if case let .choice(all) = value { names = all } else { names = [] }
            return .failure(OptionError("invalid value '\(text)' for \(flag) (expected \(names.joined(separator: " or ")))"))
        }
        return .success(text)
    }

    /// The environment variable's text, when set and not empty.
    package var environmentText: String? {
        guard let name = environment, let raw = getenv(name) else { return nil }
        let text = String(cString: raw)
        return text.isEmpty ? nil : text
    }

    /// The environment variable read as a switch: nil when unset or empty, false for
    /// `0`, `off`, `false` or `no` (any case), true for anything else.
    package var environmentSwitch: Bool? {
        guard let text = environmentText else { return nil }
        return !["0", "off", "false", "no"].contains(text.lowercased())
    }

    /// The environment variable as this option's number; nil when unset or not a number in range.
    package var environmentNumber: Double? {
        guard let text = environmentText, case let .success(v) = number(text) else { return nil }
        return v
    }

    /// The option's lines for `--help`: the flag and its value name, then the
    /// help from column 21, with the default and limits it has.
    package var helpLines: String {
        let head = "  " + flag + (valueName.map { " " + $0 } ?? "")
        var facts: [String] = []
        switch value {
        case let .number(range, defaultValue):
            if let defaultValue { facts.append("default \(Self.clean(defaultValue))") }
            facts.append("\(Self.clean(range.lowerBound))...\(Self.clean(range.upperBound))")
        case let .integer(range, defaultValue):
            if let defaultValue { facts.append("default \(defaultValue)") } else { facts.append("\(range.lowerBound)...\(range.upperBound)") }
        case let .choice(names):
            facts.append("default \(names[0])")
        case .text, .presence:
            break
        }
        // The help and its facts, wrapped to 80 columns from column 21; the facts stay on one line.
        let width = 80 - 21
        var words = help.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
        if !facts.isEmpty { words.append("(" + facts.joined(separator: ", ") + ")") }
        var lines: [String] = []
        for word in words {
            if let last = lines.last, last.count + 1 + word.count <= width {
                lines[lines.count - 1] = last + " " + word
            } else {
                lines.append(word)
            }
        }
        let indent = String(repeating: " ", count: 21)
        var out = head.count <= 19 ? head.padding(toLength: 21, withPad: " ", startingAt: 0) + (lines.first ?? "")
                                   : head + "\n" + indent + (lines.first ?? "")
        for line in lines.dropFirst() { out += "\n" + indent + line }
        return out
    }

    /// 100 rather than 100.0.
    package static func clean(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
    }
}

/// The message for the user when an option's value is refused.
package struct OptionError: Error, Sendable, CustomStringConvertible {
    /// One line.
    package var description: String
    init(_ description: String) { self.description = description }
}

/// Every option a capture takes, whichever way in (`run`, `attach`, the library).
package enum CaptureOptions {
    /// The defaults of the numbers, which `CaptureConfig` starts from too.
    package enum Defaults {
        package static let hangMs: Double = 100
        package static let reportMs: Double = 250
        package static let sampleHz: Double = 1000
        package static let keep = 5
        /// How long `attach` watches when `--duration` is not given (s).
        package static let attachDurationSeconds: Double = 30
        /// The longest `--duration` (s): 31 days.
        package static let attachDurationLimitSeconds: Double = 31 * 86400
        /// How long the OTLP exporter may take at the end of `run` and `attach` to send what is left (s).
        package static let finalExportSeconds: Double = 5
    }

    package static let hangMs = OptionSpec(
        flag: "--hang-ms", valueName: "MS", environment: "HANGWATCH_HANG_MS",
        value: .number(1...3_600_000, defaultValue: Defaults.hangMs), help: "busy time that counts as a hang")
    package static let reportMs = OptionSpec(
        flag: "--report-ms", valueName: "MS", environment: "HANGWATCH_REPORT_MS",
        value: .number(1...3_600_000, defaultValue: Defaults.reportMs), help: "hang duration that gets a call tree, >= --hang-ms")
    /// `attach` samples at most once per poll of its poller (1 ms): the session refuses more there.
    package static let sampleHz = OptionSpec(
        flag: "--sample-hz", valueName: "HZ", environment: "HANGWATCH_SAMPLE_HZ",
        value: .number(1...10_000, defaultValue: Defaults.sampleHz),
        help: "stack samples per second during a hang")
    package static let sampler = OptionSpec(
        flag: "--sampler", valueName: "WAY", environment: "HANGWATCH_SAMPLER",
        value: .choice(CaptureConfig.Sampler.allCases.map(\.rawValue)),
        help: """
        how running threads are sampled: 'kernel' (perf_event,
        no signal reaches the program; falls back to 'signal' where
        perf_event_open is refused) or 'signal' (SIGPROF).
        HANGWATCH_SAMPLER, when set, changes the default
        """)
    package static let heartbeatClock = OptionSpec(
        flag: "--heartbeat-clock", valueName: "C", environment: "HANGWATCH_HEARTBEAT_CLOCK",
        value: .choice(CaptureConfig.HeartbeatClock.allCases.map(\.rawValue)),
        help: """
        what stamps each loop wait: 'tsc' (the CPU's
        counter where the kernel trusts it, else clock_gettime)
        or 'vdso' (always clock_gettime). HANGWATCH_HEARTBEAT_CLOCK,
        when set, changes the default
        """)
    package static let thread = OptionSpec(
        flag: "--thread", valueName: "NAME", environment: "HANGWATCH_THREADS", value: .text,
        help: """
        watch the event loop of threads named NAME (exact, or a glob
        such as 'NIO-ELT-*'); repeatable; 'main' is the main thread
        (under dispatchMain(), attach watches the libdispatch workers
        running the main queue). Default: the main thread only
        """)
    package static let frameMs = OptionSpec(
        flag: "--frame-ms", valueName: "MS", environment: "HANGWATCH_FRAME_MS",
        value: .number(0.1...10_000, defaultValue: nil),
        help: "the loop is a frame loop with this deadline: count hitches")
    package static let sourceLines = OptionSpec(
        flag: "--source-lines", valueName: nil, environment: nil, value: .presence,
        help: """
        show where each function of a call tree is defined
        (File.swift:42; the full path in json), from the DWARF
        debug info, read by llvm-symbolizer (found in PATH or
        next to swift). Without either, the report says so
        """)
    package static let events = OptionSpec(
        flag: "--events", valueName: "FILE", environment: "HANGWATCH_EVENTS", value: .text,
        help: """
        append one JSON line per hang to FILE about 50 ms after it
        ends, and one when a running hang reaches --report-ms; each line
        is one write, so a crash never tears a line in the middle.
        'hangwatch report FILE' reads the stream as a report
        """)
    package static let rotate = OptionSpec(
        flag: "--rotate", valueName: "SIZE|INTERVAL", environment: "HANGWATCH_ROTATE", value: .text,
        help: """
        with --events: close FILE before a line would take it past
        SIZE (4K and up: 512K, 10M, 1G) or once it is INTERVAL old
        (1s and up: 30s, 10m, 1h, 1d); a unit is required. Each file
        ends with a summary line (hangs, s/hour, hitch ratio) and
        moves to FILE.1.EXT, older ones up by one. Hangs written out
        leave hangwatch's memory, and the report at the end covers the
        interval since the last rotation
        """)
    package static let keep = OptionSpec(
        flag: "--keep", valueName: "N", environment: "HANGWATCH_KEEP", value: .integer(1...10_000, defaultValue: Defaults.keep),
        help: "closed files kept besides FILE")
    package static let otlpEndpoint = OptionSpec(
        flag: "--otlp-endpoint", valueName: "URL", environment: "HANGWATCH_OTLP_ENDPOINT", value: .text,
        help: """
        send each hang as an OpenTelemetry log record (OTLP/HTTP,
        protobuf) to URL, e.g. http://127.0.0.1:4318, when it ends
        (and once while it runs, past --report-ms); retried with
        backoff, then dropped and counted in the report's notes;
        at the end, unsent records get at most \(OptionSpec.clean(Defaults.finalExportSeconds)) s
        """)

    /// `--duration TIME` (attach): how long to watch. Read by `attach`'s own
    /// parser (units, `forever`); its default and limit are `Defaults`'.
    package static let duration = OptionSpec(
        flag: "--duration", valueName: "TIME", environment: nil, value: .text,
        help: "how long to watch: \(OptionSpec.clean(Defaults.attachDurationSeconds))s (default), 500ms, 2m, or forever")

    /// `--fail-on-hang=MS` (run, attach): its limit (the help is the gates' own, in `hangwatch`).
    package static let failOnHang = OptionSpec(
        flag: "--fail-on-hang", valueName: "MS", environment: nil, value: .number(1...3_600_000, defaultValue: nil),
        help: "fail when a hang lasted MS or more")
    /// `--fail-on-hitch-ratio=X` (run): its limit.
    package static let failOnHitchRatio = OptionSpec(
        flag: "--fail-on-hitch-ratio", valueName: "X", environment: nil, value: .number(0...1000, defaultValue: nil),
        help: "fail when the frame loop hitched more than X ms per second")

    /// `HANGWATCH_POOL` (the library only; `run` always watches the pool): off leaves Swift
    /// Concurrency's cooperative pool unwatched. A variable with no flag: its "flag" is its name.
    package static let watchPool = OptionSpec(
        flag: "HANGWATCH_POOL", valueName: nil, environment: "HANGWATCH_POOL", value: .presence,
        help: "0, off, false or no: leave Swift Concurrency's cooperative pool unwatched")
    /// `HANGWATCH_ATTACH_STOP_BLOCKED=1` (tests only): `attach` and `dump` stop blocked threads
    /// too, the worst case for the target (a blocked call may then see EINTR). No flag, on purpose.
    package static let attachStopBlocked = OptionSpec(
        flag: "HANGWATCH_ATTACH_STOP_BLOCKED", valueName: nil, environment: "HANGWATCH_ATTACH_STOP_BLOCKED",
        value: .presence, help: "1: attach and dump stop blocked threads too (tests only)")

    /// The options that set `CaptureConfig` (in their help's order).
    package static let capture = [hangMs, reportMs, sampleHz, sampler, heartbeatClock, thread, frameMs, sourceLines]
    /// The live outputs.
    package static let live = [events, rotate, keep, otlpEndpoint]
}
