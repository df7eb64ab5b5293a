// Explicit, null-preserving JSON encodings of the report model, at the version JSONReport.schemaVersion names.
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

/// A wrapper that writes its value as a `JSONValue` tree (`json`); as
/// Encodable it writes the same tree through any encoder.
protocol JSONTree: Encodable {
    var json: JSONValue { get }
}

extension JSONTree {
    func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }
}

/// A rounded millisecond (or other fractional) field.
private func ms(_ value: Double) -> JSONValue { .double(roundedForJSON(value)) }

struct ReportJSON: JSONTree {
    var report: Report
    var maxTreeDepth: Int

    var json: JSONValue {
        .object([
            ("schemaVersion", .integer(JSONReport.schemaVersion)),  // an older report read back is written as the current version
            ("process", ProcessJSON(process: report.process).json),
            ("thresholds", ThresholdsJSON(thresholds: report.thresholds).json),
            ("summary", SummaryJSON(summary: report.summary).json),
            ("hangs", .array(report.hangs.map { HangJSON(hang: $0, maxTreeDepth: maxTreeDepth).json })),
            ("frames", .optional(report.frames) { FramesJSON(frames: $0).json }),
            ("frameLoops", .array(report.frameLoops.map { FramesJSON(frames: $0).json })),
            ("launch", .optional(report.launch) { LaunchJSON(launch: $0, maxTreeDepth: maxTreeDepth).json }),
            ("notes", .array(report.notes.map(JSONValue.string))),
        ])
    }
}

struct ProcessJSON: JSONTree {
    var process: ProcessInfoRecord
    var json: JSONValue {
        .object([
            ("pid", .integer(process.pid)),
            ("executable", .string(process.executable)),
            ("arguments", .array(process.arguments.map(JSONValue.string))),
            ("exitCode", .optional(process.exitCode) { .integer($0) }),
            ("signal", .optional(process.signal) { .integer($0) }),
            ("wallMs", ms(process.wallMs)),
            ("cpuUserMs", .optional(process.cpuUserMs, ms)),
            ("cpuSystemMs", .optional(process.cpuSystemMs, ms)),
            ("peakRssKb", .optional(process.peakRssKb) { .integer($0) }),
            ("startTimeUnixNs", .optional(process.startTimeUnixNs) { .integer($0) }),
        ])
    }
}

struct ThresholdsJSON: JSONTree {
    var thresholds: Thresholds
    var json: JSONValue {
        .object([
            ("hangMs", ms(thresholds.hangMs)),
            ("reportMs", ms(thresholds.reportMs)),
            ("sampleHz", ms(thresholds.sampleHz)),
            ("frameMs", .optional(thresholds.frameMs, ms)),
        ])
    }
}

struct SummaryJSON: JSONTree {
    var summary: Summary
    var json: JSONValue {
        .object([
            ("hangCount", .integer(summary.hangCount)),
            ("reportedHangCount", .integer(summary.reportedHangCount)),
            ("totalHangMs", ms(summary.totalHangMs)),
            ("longestHangMs", ms(summary.longestHangMs)),
        ])
    }
}

struct HangJSON: JSONTree {
    var hang: Hang
    var maxTreeDepth: Int
    var json: JSONValue {
        .object([
            ("id", .integer(hang.id)),
            ("thread", .object([("tid", .integer(hang.thread.tid)), ("name", .string(hang.thread.name)),
                                ("role", .string(hang.thread.role))])),
            ("startMs", ms(hang.startMs)),
            ("durationMs", ms(hang.durationMs)),
            ("reported", .bool(hang.reported)),
            ("inProgress", .bool(hang.inProgress)),
            ("kind", .string(hang.kind.rawValue)),
            ("blockedIn", .optional(hang.blockedIn) { BlockedCallJSON(call: BlockedCall(syscall: $0, symbol: hang.blockedSymbol)).json }),
            ("sampleCount", .integer(hang.sampleCount)),
            ("sampleCoverage", ms(hang.sampleCoverage)),
            ("callTree", .optional(hang.callTree) { NodeJSON(node: $0, levelsLeft: maxTreeDepth).json }),
            ("cpuMs", .optional(hang.cpuMs, ms)),
            ("runnableMs", .optional(hang.runnableMs, ms)),
            ("lockOwner", .optional(hang.lockOwner) { LockOwnerJSON(owner: $0, maxTreeDepth: maxTreeDepth).json }),
            ("runningThreads", .array(hang.runningThreads.map { RunningThreadJSON(thread: $0).json })),
            ("poolThreads", .optional(hang.poolThreads) { threads in
                .array(threads.map { PoolThreadJSON(thread: $0, maxTreeDepth: maxTreeDepth).json })
            }),
            ("poolJobWaitMs", .optional(hang.poolJobWaitMs, ms)),
            ("cause", .optional(hang.cause) { HangCauseJSON(cause: $0, maxTreeDepth: maxTreeDepth).json }),
            ("stoppedMs", .optional(hang.stoppedMs, ms)),
            ("throttle", .optional(hang.throttle) { CPUThrottleJSON(throttle: $0).json }),
        ])
    }
}

struct HangCauseJSON: JSONTree {
    var cause: HangCause
    var maxTreeDepth: Int
    var json: JSONValue {
        .object([
            ("kind", .string(cause.kind.rawValue)),
            ("threads", .optional(cause.threads) { threads in
                .array(threads.map { t in
                    .object([
                        ("tid", .integer(t.tid)),
                        ("name", .string(t.name)),
                        ("function", .optional(t.function, JSONValue.string)),
                        ("waitsFor", .integer(t.waitsFor)),
                        ("evidence", .string(t.evidence)),
                        ("callTree", .optional(t.callTree) { NodeJSON(node: $0, levelsLeft: maxTreeDepth).json }),
                    ])
                })
            }),
            ("ms", .optional(cause.ms, ms)),
            ("loadAverage", .optional(cause.loadAverage, ms)),
            ("runnableTasks", .optional(cause.runnableTasks, JSONValue.integer)),
            ("cpus", .optional(cause.cpus, JSONValue.integer)),
        ])
    }
}

struct CPUThrottleJSON: JSONTree {
    var throttle: CPUThrottle
    var json: JSONValue {
        .object([
            ("throttledMs", ms(throttle.throttledMs)),
            ("throttledPeriods", .integer(throttle.throttledPeriods)),
            ("quotaMs", .optional(throttle.quotaMs, ms)),
            ("periodMs", ms(throttle.periodMs)),
            ("cgroupVersion", .integer(throttle.cgroupVersion)),
        ])
    }
}

struct PoolThreadJSON: JSONTree {
    var thread: PoolThread
    var maxTreeDepth: Int
    var json: JSONValue {
        .object([
            ("tid", .integer(thread.tid)),
            ("name", .string(thread.name)),
            ("state", .string(thread.state)),
            ("blockedIn", .optional(thread.blockedIn, JSONValue.string)),
            ("jobHangId", .integer(thread.jobHangId)),
            ("cpuMs", .optional(thread.cpuMs, ms)),
            ("callTree", .optional(thread.callTree) { NodeJSON(node: $0, levelsLeft: maxTreeDepth).json }),
        ])
    }
}

struct LaunchJSON: JSONTree {
    var launch: Launch
    var maxTreeDepth: Int
    var json: JSONValue {
        .object([
            ("durationMs", ms(launch.durationMs)),
            ("reachedFirstWait", .bool(launch.reachedFirstWait)),
            ("sampleCount", .integer(launch.sampleCount)),
            ("callTree", .optional(launch.callTree) { NodeJSON(node: $0, levelsLeft: maxTreeDepth).json }),
            ("parked", .optional(launch.parked) { park in
                .object([
                    ("atMs", ms(park.atMs)),
                    ("blockedIn", .optional(park.blockedIn) { .string($0) }),
                    ("calledFrom", .optional(park.calledFrom) { .string($0) }),
                ])
            }),
        ])
    }
}

struct FramesJSON: JSONTree {
    var frames: FrameStats
    var json: JSONValue {
        .object([
            ("name", .string(frames.name)),
            ("deadlineMs", ms(frames.deadlineMs)),
            ("frameCount", .integer(frames.frameCount)),
            ("hitchCount", .integer(frames.hitchCount)),
            ("missedFrames", .integer(frames.missedFrames)),
            ("hitchMs", ms(frames.hitchMs)),
            ("hitchRatioMsPerS", ms(frames.hitchRatioMsPerS)),
            ("band", .string(frames.band)),
            ("p50Ms", ms(frames.p50Ms)),
            ("p95Ms", ms(frames.p95Ms)),
            ("p99Ms", ms(frames.p99Ms)),
            ("maxMs", ms(frames.maxMs)),
            ("histogram", .array(frames.histogram.map { bucket in
                .object([("upToMs", .optional(bucket.upToMs, ms)),  // null: the open-ended last bucket
                         ("count", .integer(bucket.count))])
            })),
        ])
    }
}

/// A call-tree node; below `levelsLeft` levels its children are dropped (see `JSONReport.maxTreeDepth`).
struct NodeJSON: JSONTree {
    var node: CallTreeNode
    var levelsLeft: Int
    var json: JSONValue {
        let children = levelsLeft > 1 ? node.children : []
        return .object([
            ("symbol", .string(node.symbol)),
            ("image", .string(node.image)),
            ("weightMs", ms(node.weightMs)),
            ("selfMs", ms(node.selfMs)),
            ("sampleCount", .integer(node.sampleCount)),
            ("source", .optional(node.source, JSONValue.string)),  // null unless the run asked for source lines
            ("waitingMs", .optional(node.waitingMs, ms)),  // null when the thread state is unknown
            ("children", .array(children.map { NodeJSON(node: $0, levelsLeft: levelsLeft - 1).json })),
        ])
    }
}

struct BlockedCallJSON: JSONTree {
    var call: BlockedCall
    var json: JSONValue {
        .object([
            ("syscall", .string(call.syscall)),
            ("symbol", .optional(call.symbol, JSONValue.string)),  // null when no frame of the program's own made the call
        ])
    }
}

struct LockOwnerJSON: JSONTree {
    var owner: LockOwner
    var maxTreeDepth: Int
    var json: JSONValue {
        .object([
            ("tid", .integer(owner.tid)),
            ("name", .string(owner.name)),
            ("evidence", .string(owner.evidence)),
            ("callTree", .optional(owner.callTree) { NodeJSON(node: $0, levelsLeft: maxTreeDepth).json }),
        ])
    }
}

struct RunningThreadJSON: JSONTree {
    var thread: RunningThread
    var json: JSONValue {
        .object([
            ("tid", .integer(thread.tid)),
            ("name", .string(thread.name)),
            ("cpuMs", ms(thread.cpuMs)),
        ])
    }
}
