#if canImport(Glibc)
import Glibc
import HangWatchCapture
import HangWatchLive
import HangWatchRender
import HangWatchSession
#endif

extension HangWatcher {
    /// How the in-process watcher runs. Every field can also be set without a
    /// code change through the environment (see `fromEnvironment()`).
    public struct Configuration: Sendable, Equatable {
        /// Thresholds, sample rate, frame deadline and watched threads (see `CaptureConfig`).
        public var capture = CaptureConfig()
        /// Where to write the report when the process exits; nil: only on demand.
        public var reportPath: String?
        /// The format of the report written at exit (`HANGWATCH_FORMAT`); text by default.
        public var reportFormat: ReportFormat = .standard
        /// Watch the main run loop with a CFRunLoop observer (RunLoop programs).
        public var observeMainRunLoop = true
        /// Watch Swift Concurrency's cooperative pool: a job that runs `hangMs` or
        /// more without returning to the executor, and a pool whose every thread
        /// is taken, are hangs (`HANGWATCH_POOL=0` switches it off; the library's own
        /// variable, with no command-line flag: `hangwatch run` always watches it).
        public var watchPool = true
        /// A JSON-lines file each hang is appended to as it happens
        /// (`HANGWATCH_EVENTS`); nil: no stream. The format of `hangwatch run --events`.
        public var eventsPath: String?
        /// When the event file rotates (`HANGWATCH_ROTATE`): a size with a unit
        /// (`10M`) or an interval (`1h`), as `hangwatch run --rotate`; nil: never.
        /// Rotating also forgets the hangs and engine-measured frames each closed file holds
        /// (not a `FrameMonitor`'s), so `report()` then covers the interval since the last
        /// rotation.
        public var rotateEvents: String?
        /// Closed event files kept besides the current one (`HANGWATCH_KEEP`), as `--keep`.
        public var keepEvents = CaptureOptions.Defaults.keep
        /// An OTLP/HTTP endpoint (`http://HOST:PORT`) each hang is sent to as a log record
        /// (`HANGWATCH_OTLP_ENDPOINT`); nil: none. As `hangwatch run --otlp-endpoint`.
        public var otlpEndpoint: String?

        /// The live outputs as a capture session takes them; throws the message for the user
        /// when the rotation cannot be read or has no events path.
        func liveOutputs() throws(CaptureSessionError) -> LiveOutputSettings {
            var rotation: RotationPolicy?
            if let rotate = rotateEvents {
                guard eventsPath != nil else { throw .invalid("rotateEvents needs an events path") }
                do { rotation = try RotationPolicy.parse(rotate, keep: keepEvents) } catch { throw .invalid("\(error)") }
            }
            return LiveOutputSettings(eventsPath: eventsPath, rotation: rotation, otlpEndpoint: otlpEndpoint)
        }

        /// The defaults: the command line's thresholds, no report at exit, the main run loop
        /// observed.
        public init() {}

        /// Reads HANGWATCH_HANG_MS, HANGWATCH_REPORT_MS, HANGWATCH_SAMPLE_HZ,
        /// HANGWATCH_FRAME_MS, HANGWATCH_THREADS (comma-separated names or
        /// globs), HANGWATCH_SAMPLER (`kernel` or `signal`), HANGWATCH_HEARTBEAT_CLOCK
        /// (`tsc` or `vdso`), HANGWATCH_REPORT
        /// (a path, or "stderr"), HANGWATCH_FORMAT, HANGWATCH_EVENTS (a path),
        /// HANGWATCH_ROTATE and HANGWATCH_KEEP (its rotation),
        /// HANGWATCH_OTLP_ENDPOINT (an http:// URL) and HANGWATCH_POOL (`0`, `off`,
        /// `false` or `no` leave the cooperative pool unwatched).
        /// Unset or invalid values keep the defaults; an events path that cannot be
        /// opened, a rotation that cannot be read or an endpoint that is not an
        /// http:// URL makes `start` throw.
        public static func fromEnvironment(_ base: Configuration = Configuration()) -> Configuration {
            var c = base
            typealias O = CaptureOptions
            if let v = O.hangMs.environmentNumber { c.capture.hangMs = v }
            if let v = O.reportMs.environmentNumber { c.capture.reportMs = v }
            if c.capture.reportMs < c.capture.hangMs { c.capture.reportMs = c.capture.hangMs }
            if let v = O.sampleHz.environmentNumber { c.capture.sampleHz = v }
            if let v = O.frameMs.environmentNumber { c.capture.frameMs = v }
            if let v = O.thread.environmentText {
                c.capture.threadPatterns = v.split(separator: ",").map { String($0) }.filter { !$0.isEmpty }
            }
            if let v = O.sampler.environmentText, let sampler = CaptureConfig.Sampler(rawValue: v) { c.capture.sampler = sampler }
            if let v = O.heartbeatClock.environmentText, let clock = CaptureConfig.HeartbeatClock(rawValue: v) {
                c.capture.heartbeatClock = clock
            }
            if let v = ReportOutputOptions.output.environmentText { c.reportPath = v }
            if let f = ReportOutputOptions.environmentFormat { c.reportFormat = f }
            if let v = O.events.environmentText { c.eventsPath = v }
            if let v = O.rotate.environmentText { c.rotateEvents = v }
            if let v = O.keep.environmentNumber { c.keepEvents = Int(v) }
            if let v = O.otlpEndpoint.environmentText { c.otlpEndpoint = v }
            if let on = O.watchPool.environmentSwitch { c.watchPool = on }
            return c
        }
    }
}
