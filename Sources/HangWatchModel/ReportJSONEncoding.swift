// Explicit, null-preserving JSON encodings of the report model (schema v2).
//
// Synthesized Codable omits nil optionals, but the file format promises every
// field is present (`"exitCode": null`) so consumers in other languages can
// rely on the keys. These wrappers write each field by name; ReportJSONDecoding
// reads the files back, tolerating the fields older files lack.

/// A string coding key, so field names read here exactly as in the schema.
package struct JSONKey: CodingKey, ExpressibleByStringLiteral {
    package var stringValue: String
    package var intValue: Int? { nil }
    package init(stringValue: String) { self.stringValue = stringValue }
    package init?(intValue: Int) { return nil }
    package init(stringLiteral value: String) { stringValue = value }
}

/// Rounds to 3 decimals (microsecond precision on millisecond fields): more digits
/// are noise from `samples × msPerSample` and only make files harder to read and diff.
package func roundedForJSON(_ value: Double) -> Double {
    guard value.isFinite, abs(value) < 1e12 else { return value }
    return (value * 1000).rounded() / 1000
}

struct ReportJSON: Encodable {
    var report: Report
    var maxTreeDepth: Int

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: JSONKey.self)
        try c.encode(JSONReport.schemaVersion, forKey: "schemaVersion")  // an older report read back is written as the current version
        try c.encode(ProcessJSON(process: report.process), forKey: "process")
        try c.encode(ThresholdsJSON(thresholds: report.thresholds), forKey: "thresholds")
        try c.encode(SummaryJSON(summary: report.summary), forKey: "summary")
        try c.encode(report.hangs.map { HangJSON(hang: $0, maxTreeDepth: maxTreeDepth) }, forKey: "hangs")
        try c.encode(report.frames.map(FramesJSON.init), forKey: "frames")
        try c.encode(report.frameLoops.map(FramesJSON.init), forKey: "frameLoops")
        try c.encode(report.launch.map { LaunchJSON(launch: $0, maxTreeDepth: maxTreeDepth) }, forKey: "launch")
        try c.encode(report.notes, forKey: "notes")
    }
}

struct ProcessJSON: Encodable {
    var process: ProcessInfoRecord
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: JSONKey.self)
        try c.encode(process.pid, forKey: "pid")
        try c.encode(process.executable, forKey: "executable")
        try c.encode(process.arguments, forKey: "arguments")
        try c.encode(process.exitCode, forKey: "exitCode")
        try c.encode(process.signal, forKey: "signal")
        try c.encode(roundedForJSON(process.wallMs), forKey: "wallMs")
        try c.encode(process.cpuUserMs.map(roundedForJSON), forKey: "cpuUserMs")
        try c.encode(process.cpuSystemMs.map(roundedForJSON), forKey: "cpuSystemMs")
        try c.encode(process.peakRssKb, forKey: "peakRssKb")
        try c.encode(process.startTimeUnixNs, forKey: "startTimeUnixNs")
    }
}

struct ThresholdsJSON: Encodable {
    var thresholds: Thresholds
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: JSONKey.self)
        try c.encode(roundedForJSON(thresholds.hangMs), forKey: "hangMs")
        try c.encode(roundedForJSON(thresholds.reportMs), forKey: "reportMs")
        try c.encode(roundedForJSON(thresholds.sampleHz), forKey: "sampleHz")
        try c.encode(thresholds.frameMs.map(roundedForJSON), forKey: "frameMs")
    }
}

struct SummaryJSON: Encodable {
    var summary: Summary
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: JSONKey.self)
        try c.encode(summary.hangCount, forKey: "hangCount")
        try c.encode(summary.reportedHangCount, forKey: "reportedHangCount")
        try c.encode(roundedForJSON(summary.totalHangMs), forKey: "totalHangMs")
        try c.encode(roundedForJSON(summary.longestHangMs), forKey: "longestHangMs")
    }
}

struct HangJSON: Encodable {
    var hang: Hang
    var maxTreeDepth: Int
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: JSONKey.self)
        try c.encode(hang.id, forKey: "id")
        try c.encode(hang.thread, forKey: "thread")  // tid, name, role: no optionals, no doubles
        try c.encode(roundedForJSON(hang.startMs), forKey: "startMs")
        try c.encode(roundedForJSON(hang.durationMs), forKey: "durationMs")
        try c.encode(hang.reported, forKey: "reported")
        try c.encode(hang.inProgress, forKey: "inProgress")
        try c.encode(hang.kind, forKey: "kind")
        try c.encode(hang.blockedIn.map { BlockedCallJSON(call: BlockedCall(syscall: $0, symbol: hang.blockedSymbol)) },
                     forKey: "blockedIn")
        try c.encode(hang.sampleCount, forKey: "sampleCount")
        try c.encode(roundedForJSON(hang.sampleCoverage), forKey: "sampleCoverage")
        try c.encode(hang.callTree.map { NodeJSON(node: $0, levelsLeft: maxTreeDepth) }, forKey: "callTree")
        try c.encode(hang.cpuMs.map(roundedForJSON), forKey: "cpuMs")
        try c.encode(hang.runnableMs.map(roundedForJSON), forKey: "runnableMs")
        try c.encode(hang.lockOwner.map { LockOwnerJSON(owner: $0, maxTreeDepth: maxTreeDepth) }, forKey: "lockOwner")
        try c.encode(hang.runningThreads.map(RunningThreadJSON.init), forKey: "runningThreads")
    }
}

struct LaunchJSON: Encodable {
    var launch: Launch
    var maxTreeDepth: Int
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: JSONKey.self)
        try c.encode(roundedForJSON(launch.durationMs), forKey: "durationMs")
        try c.encode(launch.reachedFirstWait, forKey: "reachedFirstWait")
        try c.encode(launch.sampleCount, forKey: "sampleCount")
        try c.encode(launch.callTree.map { NodeJSON(node: $0, levelsLeft: maxTreeDepth) }, forKey: "callTree")
    }
}

struct FramesJSON: Encodable {
    var frames: FrameStats
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: JSONKey.self)
        try c.encode(frames.name, forKey: "name")
        try c.encode(roundedForJSON(frames.deadlineMs), forKey: "deadlineMs")
        try c.encode(frames.frameCount, forKey: "frameCount")
        try c.encode(frames.hitchCount, forKey: "hitchCount")
        try c.encode(frames.missedFrames, forKey: "missedFrames")
        try c.encode(roundedForJSON(frames.hitchMs), forKey: "hitchMs")
        try c.encode(roundedForJSON(frames.hitchRatioMsPerS), forKey: "hitchRatioMsPerS")
        try c.encode(frames.band, forKey: "band")
        try c.encode(roundedForJSON(frames.p50Ms), forKey: "p50Ms")
        try c.encode(roundedForJSON(frames.p95Ms), forKey: "p95Ms")
        try c.encode(roundedForJSON(frames.p99Ms), forKey: "p99Ms")
        try c.encode(roundedForJSON(frames.maxMs), forKey: "maxMs")
        try c.encode(frames.histogram.map(HistogramBucketJSON.init), forKey: "histogram")
    }
}

struct HistogramBucketJSON: Encodable {
    var bucket: HistogramBucket
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: JSONKey.self)
        try c.encode(bucket.upToMs.map(roundedForJSON), forKey: "upToMs")  // null: the open-ended last bucket
        try c.encode(bucket.count, forKey: "count")
    }
}

/// A call-tree node; below `levelsLeft` levels its children are dropped (see `JSONReport.maxTreeDepth`).
struct NodeJSON: Encodable {
    var node: CallTreeNode
    var levelsLeft: Int
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: JSONKey.self)
        try c.encode(node.symbol, forKey: "symbol")
        try c.encode(node.image, forKey: "image")
        try c.encode(roundedForJSON(node.weightMs), forKey: "weightMs")
        try c.encode(roundedForJSON(node.selfMs), forKey: "selfMs")
        try c.encode(node.sampleCount, forKey: "sampleCount")
        try c.encode(node.source, forKey: "source")  // null unless the run asked for source lines
        try c.encode(node.waitingMs.map(roundedForJSON), forKey: "waitingMs")  // null when the thread state is unknown
        let children = levelsLeft > 1 ? node.children : []
        try c.encode(children.map { NodeJSON(node: $0, levelsLeft: levelsLeft - 1) }, forKey: "children")
    }
}

struct BlockedCallJSON: Encodable {
    var call: BlockedCall
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: JSONKey.self)
        try c.encode(call.syscall, forKey: "syscall")
        try c.encode(call.symbol, forKey: "symbol")  // null when no frame of the program's own made the call
    }
}

struct LockOwnerJSON: Encodable {
    var owner: LockOwner
    var maxTreeDepth: Int
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: JSONKey.self)
        try c.encode(owner.tid, forKey: "tid")
        try c.encode(owner.name, forKey: "name")
        try c.encode(owner.evidence, forKey: "evidence")
        try c.encode(owner.callTree.map { NodeJSON(node: $0, levelsLeft: maxTreeDepth) }, forKey: "callTree")
    }
}

struct RunningThreadJSON: Encodable {
    var thread: RunningThread
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: JSONKey.self)
        try c.encode(thread.tid, forKey: "tid")
        try c.encode(thread.name, forKey: "name")
        try c.encode(roundedForJSON(thread.cpuMs), forKey: "cpuMs")
    }
}
