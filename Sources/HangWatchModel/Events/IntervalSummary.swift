// The last line of each file of a rotating event stream (`--rotate`): what
// the file's interval held, so a directory of rotated files reads as a
// history without adding up every hang line.

/// What one interval of a running program held: the hangs that ended in it
/// and the frames read in it. Intervals do not overlap and leave no gap, so
/// the summaries of consecutive files add up to the run's totals.
public struct IntervalSummary: Sendable, Equatable {
    /// Why the interval's file was closed.
    public enum ClosedBy: String, Sendable, Equatable {
        /// The next line would have taken the file past `--rotate SIZE`.
        case size
        /// `--rotate INTERVAL` had passed since the file was opened.
        case interval
        /// The program ended (or, in the library, is exiting).
        case exit
    }

    /// When the interval began (the file was opened), in ns since the Unix epoch.
    public var startUnixNs: Int64
    /// When it ended (the file was closed), in ns since the Unix epoch.
    public var endUnixNs: Int64
    /// Why the file was closed.
    public var closedBy: ClosedBy
    /// The watched process.
    public var process: ProcessInfoRecord
    /// The thresholds in force.
    public var thresholds: Thresholds
    /// The hangs told as ended in the interval (a hang that began in an
    /// earlier interval counts in the one it ended in).
    public var summary: Summary
    /// Frame statistics of the frames read in the interval, per loop.
    public var frameLoops: [FrameStats]

    /// A summary of the interval from `startUnixNs` to `endUnixNs`.
    public init(startUnixNs: Int64, endUnixNs: Int64, closedBy: ClosedBy, process: ProcessInfoRecord,
                thresholds: Thresholds, summary: Summary, frameLoops: [FrameStats]) {
        self.startUnixNs = startUnixNs
        self.endUnixNs = endUnixNs
        self.closedBy = closedBy
        self.process = process
        self.thresholds = thresholds
        self.summary = summary
        self.frameLoops = frameLoops
    }

    /// The interval's length in seconds.
    public var seconds: Double { Double(max(0, endUnixNs - startUnixNs)) / 1e9 }

    /// Seconds of hang per hour of the interval, as Apple's Organizer states a
    /// hang rate; 0 for an empty interval.
    public var hangRateSecondsPerHour: Double {
        seconds > 0 ? (summary.totalHangMs / 1000) / (seconds / 3600) : 0
    }
}

struct IntervalSummaryJSON: Encodable {
    var interval: IntervalSummary
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: JSONKey.self)
        try c.encode(HangEventLines.schema, forKey: "schema")
        try c.encode(HangEventLines.schemaVersion, forKey: "schemaVersion")
        try c.encode(HangEventLines.summaryEvent, forKey: "event")
        try c.encode(interval.endUnixNs, forKey: "timeUnixNs")
        try c.encode(interval.startUnixNs, forKey: "startUnixNs")
        try c.encode(interval.endUnixNs, forKey: "endUnixNs")
        try c.encode(roundedForJSON(interval.seconds), forKey: "seconds")
        try c.encode(interval.closedBy.rawValue, forKey: "closedBy")
        try c.encode(ProcessJSON(process: interval.process), forKey: "process")
        try c.encode(ThresholdsJSON(thresholds: interval.thresholds), forKey: "thresholds")
        try c.encode(SummaryJSON(summary: interval.summary), forKey: "summary")
        try c.encode(roundedForJSON(interval.hangRateSecondsPerHour), forKey: "hangRateSecondsPerHour")
        try c.encode(interval.frameLoops.map(FramesJSON.init), forKey: "frameLoops")
    }
}

struct IntervalSummaryFileJSON: Decodable {
    var interval: IntervalSummary
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: JSONKey.self)
        let closedBy = try c.decode(String.self, forKey: "closedBy")
        guard let why = IntervalSummary.ClosedBy(rawValue: closedBy) else {
            throw ReportFileError.malformedJSON(detail: "unknown closedBy '\(closedBy)'")
        }
        interval = IntervalSummary(startUnixNs: try c.decode(Int64.self, forKey: "startUnixNs"),
                                   endUnixNs: try c.decode(Int64.self, forKey: "endUnixNs"),
                                   closedBy: why,
                                   process: try c.decode(ProcessFileJSON.self, forKey: "process").process,
                                   thresholds: try c.decode(Thresholds.self, forKey: "thresholds"),
                                   summary: try c.decode(Summary.self, forKey: "summary"),
                                   frameLoops: try c.decode([FramesFileJSON].self, forKey: "frameLoops").map(\.frames))
    }
}
