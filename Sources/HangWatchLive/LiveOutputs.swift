import HangWatchAnalysis
import HangWatchCapture
import HangWatchModel

/// What a capture streams while it runs, besides the report at its end: the
/// same for `run`, `attach` and the library.
package struct LiveOutputSettings: Sendable, Equatable {
    /// A JSON-lines file each hang is appended to as it happens; nil: none.
    package var eventsPath: String?
    /// When the event file rotates; nil: never (needs `eventsPath`).
    package var rotation: RotationPolicy?
    /// An OTLP/HTTP endpoint each hang is sent to as a log record; nil: none.
    package var otlpEndpoint: String?

    /// No live output.
    package init(eventsPath: String? = nil, rotation: RotationPolicy? = nil, otlpEndpoint: String? = nil) {
        self.eventsPath = eventsPath
        self.rotation = rotation
        self.otlpEndpoint = otlpEndpoint
    }

    /// The message for the user when these settings cannot work together; nil when they can.
    package var problem: String? {
        if rotation != nil && eventsPath == nil { return "rotation applies to the event file: give an events path too" }
        if let url = otlpEndpoint, HTTPPost.Endpoint(url, defaultPath: "/v1/logs") == nil {
            return "the OTLP endpoint '\(url)' is not an http://HOST:PORT URL"
        }
        return nil
    }
}

/// The live sinks of one capture, opened before the target is watched so that
/// a path that cannot be written is said at once: the event file (rotating or
/// not) and the OTLP exporter.
package final class LiveSinks {
    /// What was asked for.
    package let settings: LiveOutputSettings
    /// The event file, when one was asked for.
    package let eventFile: RotatingEventLog?
    /// The OTLP exporter, when an endpoint was given (Sendable: any thread may flush it).
    package let exporter: OTLPExporter?

    /// Opens the event file (at `nowNs`, which starts a rotation interval).
    package init(_ settings: LiveOutputSettings, nowNs: UInt64) throws(EventFileError) {
        self.settings = settings
        eventFile = try settings.eventsPath.map { path throws(EventFileError) in
            try RotatingEventLog(path: path, rotation: settings.rotation, nowNs: nowNs)
        }
        exporter = settings.otlpEndpoint.flatMap(OTLPExporter.init(url:))
    }

    /// Whether any sink wants hang events.
    package var wantEvents: Bool { eventFile != nil || exporter != nil }

    /// Hands `events` to every sink, in order (`final`: the capture's last ones).
    package func tell(_ events: [HangEvent], live: LiveHangs, collector: CaptureCollector, nowNs: UInt64, final: Bool) {
        eventFile?.append(events, live: live, collector: collector, nowNs: nowNs, final: final)
        exporter?.export(events)
    }

    /// Ends the event file with its summary line.
    package func close(live: LiveHangs, collector: CaptureCollector, nowNs: UInt64) {
        eventFile?.close(live: live, collector: collector, nowNs: nowNs)
    }

    /// The report's notes on what the sinks could not do.
    package var notes: [String] {
        var notes: [String] = []
        if let exporter, let url = settings.otlpEndpoint, let note = exporter.note(endpoint: url) { notes.append(note) }
        if let eventFile, eventFile.failedWrites > 0 {
            notes.append("\(eventFile.failedWrites) hang events could not be written to \(settings.eventsPath ?? "the event file")")
        }
        if let note = eventFile?.reportNote { notes.append(note) }
        return notes
    }
}
