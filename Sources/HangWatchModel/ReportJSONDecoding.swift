// Reading report files back (every version in JSONReport.readableVersions), tolerant of fields older files lack.
//
// The model's synthesized Decodable requires every non-optional field, so a
// file written before `frameLoops`, the process metrics or the frame histogram
// existed would be refused. (Call-tree nodes keep the synthesized one: their
// only late field, `source`, is optional, which it already reads as absent-or-null.) These readers take each field by name and give the
// late additions their empty value when absent. Required fields stay required,
// and error paths (`hangs[0].thread.tid`) come from the same coding keys.

struct ReportFileJSON: Decodable {
    var report: Report

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: JSONKey.self)
        var report = Report(
            process: try c.decode(ProcessFileJSON.self, forKey: "process").process,
            thresholds: try c.decode(Thresholds.self, forKey: "thresholds"),
            summary: try c.decode(Summary.self, forKey: "summary"),
            hangs: try c.decode([HangFileJSON].self, forKey: "hangs").map(\.hang),
            frames: try c.decodeIfPresent(FramesFileJSON.self, forKey: "frames")?.frames,
            frameLoops: try c.decodeIfPresent([FramesFileJSON].self, forKey: "frameLoops")?.map(\.frames) ?? [],
            launch: try c.decodeIfPresent(Launch.self, forKey: "launch"),
            notes: try c.decodeIfPresent([String].self, forKey: "notes") ?? [])
        report.schemaVersion = try c.decode(Int.self, forKey: "schemaVersion")
        self.report = report
    }
}

struct ProcessFileJSON: Decodable {
    var process: ProcessInfoRecord

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: JSONKey.self)
        process = ProcessInfoRecord(
            pid: try c.decode(Int.self, forKey: "pid"),
            executable: try c.decode(String.self, forKey: "executable"),
            arguments: try c.decode([String].self, forKey: "arguments"),
            exitCode: try c.decodeIfPresent(Int.self, forKey: "exitCode"),
            signal: try c.decodeIfPresent(Int.self, forKey: "signal"),
            wallMs: try c.decode(Double.self, forKey: "wallMs"),
            cpuUserMs: try c.decodeIfPresent(Double.self, forKey: "cpuUserMs"),
            cpuSystemMs: try c.decodeIfPresent(Double.self, forKey: "cpuSystemMs"),
            peakRssKb: try c.decodeIfPresent(Int.self, forKey: "peakRssKb"),
            startTimeUnixNs: try c.decodeIfPresent(Int64.self, forKey: "startTimeUnixNs"))
    }
}

struct FramesFileJSON: Decodable {
    var frames: FrameStats

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: JSONKey.self)
        frames = FrameStats(
            // Files from before loops were named only had the main loop's statistics.
            name: try c.decodeIfPresent(String.self, forKey: "name") ?? "",
            deadlineMs: try c.decode(Double.self, forKey: "deadlineMs"),
            frameCount: try c.decode(Int.self, forKey: "frameCount"),
            hitchCount: try c.decode(Int.self, forKey: "hitchCount"),
            missedFrames: try c.decode(Int.self, forKey: "missedFrames"),
            hitchMs: try c.decode(Double.self, forKey: "hitchMs"),
            hitchRatioMsPerS: try c.decode(Double.self, forKey: "hitchRatioMsPerS"),
            band: try c.decode(String.self, forKey: "band"),
            p50Ms: try c.decode(Double.self, forKey: "p50Ms"),
            p95Ms: try c.decode(Double.self, forKey: "p95Ms"),
            p99Ms: try c.decode(Double.self, forKey: "p99Ms"),
            maxMs: try c.decode(Double.self, forKey: "maxMs"),
            histogram: try c.decodeIfPresent([HistogramBucket].self, forKey: "histogram") ?? [])
    }
}

/// A hang of either schema version: in version 1 `blockedIn` is the call's
/// name, in version 2 an object `{syscall, symbol}`; the thread-state fields
/// of version 2 are absent from version 1 files.
struct HangFileJSON: Decodable {
    var hang: Hang

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: JSONKey.self)
        var syscall: String?
        var symbol: String?
        if let call = try? c.decodeIfPresent(BlockedCall.self, forKey: "blockedIn") {
            syscall = call.syscall
            symbol = call.symbol
        } else {
            syscall = try c.decodeIfPresent(String.self, forKey: "blockedIn")  // version 1
        }
        hang = Hang(
            id: try c.decode(Int.self, forKey: "id"),
            thread: try c.decode(ThreadRef.self, forKey: "thread"),
            startMs: try c.decode(Double.self, forKey: "startMs"),
            durationMs: try c.decode(Double.self, forKey: "durationMs"),
            reported: try c.decode(Bool.self, forKey: "reported"),
            inProgress: try c.decode(Bool.self, forKey: "inProgress"),
            kind: try c.decode(HangKind.self, forKey: "kind"),
            blockedIn: syscall,
            sampleCount: try c.decode(Int.self, forKey: "sampleCount"),
            sampleCoverage: try c.decode(Double.self, forKey: "sampleCoverage"),
            callTree: try c.decodeIfPresent(CallTreeNode.self, forKey: "callTree"),
            cpuMs: try c.decodeIfPresent(Double.self, forKey: "cpuMs"),
            runnableMs: try c.decodeIfPresent(Double.self, forKey: "runnableMs"),
            blockedSymbol: symbol,
            lockOwner: try c.decodeIfPresent(LockOwner.self, forKey: "lockOwner"),
            runningThreads: try c.decodeIfPresent([RunningThread].self, forKey: "runningThreads") ?? [],
            poolThreads: try c.decodeIfPresent([PoolThread].self, forKey: "poolThreads"),
            poolJobWaitMs: try c.decodeIfPresent(Double.self, forKey: "poolJobWaitMs"),
            cause: try c.decodeIfPresent(HangCause.self, forKey: "cause"),
            stoppedMs: try c.decodeIfPresent(Double.self, forKey: "stoppedMs"),
            throttle: try c.decodeIfPresent(CPUThrottle.self, forKey: "throttle"))
    }
}
