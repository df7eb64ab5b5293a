// The event stream file: one JSON object per line (JSON Lines), appended as
// hangs happen. Each line is complete on its own, so a reader can follow the
// file while it grows and a crash can at worst tear the last line.

import Foundation

/// Writes and reads `HangEvent`s as JSON lines.
public enum HangEventLines {
    /// The `schema` field of every line.
    public static let schema = "hangwatch-event"
    /// The version this build writes and reads.
    public static let schemaVersion = 1
    /// The `event` field of an interval summary line (`IntervalSummary`).
    public static let summaryEvent = "summary"

    /// One event as one line: compact JSON with sorted keys, ending in "\n".
    /// Call trees are cut at `JSONReport.maxTreeDepth`, as in report files.
    public static func encode(_ event: HangEvent) throws -> Data {
        try line(EventJSON(event: event))
    }

    /// An interval summary as one line, like `encode(_:)` (written as the last
    /// line of each file of a rotating stream).
    public static func encode(_ interval: IntervalSummary) throws -> Data {
        try line(IntervalSummaryJSON(interval: interval))
    }

    private static func line(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var line = try encoder.encode(value)
        line.append(0x0A)
        return line
    }

    /// What a stream file held: its events and interval summaries in file
    /// order, and how many lines could not be read (a torn last line after a
    /// crash, or damage).
    public struct Contents: Sendable {
        /// Every readable event, in the order written.
        public var events: [HangEvent]
        /// Every interval summary, in the order written (one per file of a rotating stream).
        public var summaries: [IntervalSummary] = []
        /// Lines that were not a readable event.
        public var unreadableLines: Int

        /// Contents with the given events, summaries and unreadable-line count.
        public init(events: [HangEvent], summaries: [IntervalSummary] = [], unreadableLines: Int) {
            self.events = events
            self.summaries = summaries
            self.unreadableLines = unreadableLines
        }
    }

    /// Reads every line; unreadable ones are counted, not fatal. Throws
    /// `ReportFileError` only when no line at all is an event or a summary.
    public static func decode(_ data: Data) throws -> Contents {
        var events: [HangEvent] = []
        var summaries: [IntervalSummary] = []
        var unreadable = 0
        var firstError: Error?
        for line in data.split(separator: 0x0A, omittingEmptySubsequences: true) {
            guard line.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) else { continue }
            do {
                let bytes = [UInt8](line)
                if JSONNesting.maxDepth(of: bytes, limit: JSONReport.maxNesting) > JSONReport.maxNesting {
                    throw ReportFileError.tooDeeplyNested(limit: JSONReport.maxNesting)
                }
                switch try JSONDecoder().decode(StreamLineJSON.self, from: Data(bytes)) {
                case let .event(event): events.append(event)
                case let .summary(interval): summaries.append(interval)
                }
            } catch {
                unreadable += 1
                if firstError == nil { firstError = error }
            }
        }
        if events.isEmpty && summaries.isEmpty {
            if let error = firstError as? ReportFileError { throw error }
            if let error = firstError as? DecodingError { throw ReportFileError(error) }
            throw ReportFileError.malformedJSON(detail: "no hang event in the file")
        }
        return Contents(events: events, summaries: summaries, unreadableLines: unreadable)
    }

    /// Whether `data` looks like an event stream rather than a report: its
    /// first non-blank line is an object whose `schema` is this one's.
    public static func looksLikeEvents(_ data: Data) -> Bool {
        guard let first = data.split(separator: 0x0A).first(where: { $0.contains { $0 > 0x20 } }),
              let probe = try? JSONDecoder().decode(SchemaProbe.self, from: Data(first)) else { return false }
        return probe.schema == schema
    }

    private struct SchemaProbe: Decodable { var schema: String? }
}

struct EventJSON: Encodable {
    var event: HangEvent
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: JSONKey.self)
        try c.encode(HangEventLines.schema, forKey: "schema")
        try c.encode(HangEventLines.schemaVersion, forKey: "schemaVersion")
        try c.encode(event.phase.rawValue, forKey: "event")
        try c.encode(event.timeUnixNs, forKey: "timeUnixNs")
        try c.encode(event.hangStartUnixNs, forKey: "hangStartUnixNs")
        try c.encode(ProcessJSON(process: event.process), forKey: "process")
        try c.encode(ThresholdsJSON(thresholds: event.thresholds), forKey: "thresholds")
        try c.encode(HangJSON(hang: event.hang, maxTreeDepth: JSONReport.maxTreeDepth), forKey: "hang")
    }
}

/// One line of a stream: a hang event or an interval summary.
enum StreamLineJSON: Decodable {
    case event(HangEvent)
    case summary(IntervalSummary)

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: JSONKey.self)
        guard try c.decode(String.self, forKey: "schema") == HangEventLines.schema else {
            throw ReportFileError.malformedJSON(detail: "not a hangwatch event")
        }
        let version = try c.decode(Int.self, forKey: "schemaVersion")
        guard version == HangEventLines.schemaVersion else {
            throw ReportFileError.unsupportedSchemaVersion(found: version, supported: HangEventLines.schemaVersion)
        }
        if try c.decode(String.self, forKey: "event") == HangEventLines.summaryEvent {
            self = .summary(try IntervalSummaryFileJSON(from: decoder).interval)
        } else {
            self = .event(try EventFileJSON(from: decoder).event)
        }
    }
}

/// A hang event line (its schema and version already checked by `StreamLineJSON`).
struct EventFileJSON: Decodable {
    var event: HangEvent
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: JSONKey.self)
        let name = try c.decode(String.self, forKey: "event")
        guard let phase = HangEvent.Phase(rawValue: name) else {
            throw ReportFileError.malformedJSON(detail: "unknown event '\(name)'")
        }
        event = HangEvent(phase: phase,
                          timeUnixNs: try c.decode(Int64.self, forKey: "timeUnixNs"),
                          process: try c.decode(ProcessFileJSON.self, forKey: "process").process,
                          thresholds: try c.decode(Thresholds.self, forKey: "thresholds"),
                          hang: try c.decode(HangFileJSON.self, forKey: "hang").hang)
    }
}
