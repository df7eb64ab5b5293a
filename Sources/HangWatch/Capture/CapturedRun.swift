/// Everything read from a sample log, unwound but not yet symbolicated.
/// Times are CLOCK_MONOTONIC nanoseconds, as the engine wrote them.
public struct CapturedRun: Sendable {
    public var modules: [ModuleImage] = []
    public var agentModuleStarts: Set<UInt64> = []
    /// Watched threads by OS thread id.
    public var threads: [Int32: CapturedThread] = [:]
    /// Busy periods that reached the hang threshold, keyed by thread and sequence.
    public var busyPeriods: [BusyKey: BusyPeriod] = [:]
    public var samples: [BusyKey: [CapturedSample]] = [:]
    public var notes: [CaptureNote] = []
    /// Frame loops: every frame (busy period) by slot id.
    public var frames: [Int32: [CapturedFrame]] = [:]
    public var exitTimeNs: UInt64?
    public var droppedRecords: UInt64 = 0
    public init() {}
}

public struct CapturedThread: Sendable, Equatable {
    public var tid: Int32
    public var name: String
    public var role: UInt32
}

public struct BusyKey: Hashable, Sendable {
    public var tid: Int32
    public var seq: UInt64
}

public struct BusyPeriod: Sendable, Equatable {
    public var tid: Int32
    public var seq: UInt64
    /// The OS thread that ran the work (for the main queue, the worker that drained it).
    public var osTid: Int32
    public var startNs: UInt64
    /// nil while in progress (no end was logged before the process stopped).
    public var endNs: UInt64?
    /// The period before the thread's first loop wait.
    public var isLaunch: Bool
}

public struct CapturedSample: Sendable, Equatable {
    public enum Source: UInt32, Sendable { case signal = 1, blockedWrapper = 2, blockedSyscall = 3 }
    public var timeNs: UInt64
    public var source: Source
    /// HW_CALL_* for interposed waits, or 1000 + syscall number.
    public var call: Int32
    /// Innermost first; pcs[0] is the exact pc, the rest are return addresses.
    public var pcs: [UInt64]
    /// How many sampling ticks saw this same stack (a long blocked wait repeats).
    public var weight: Int
    public var truncated: Bool
}

public struct CaptureNote: Sendable, Equatable {
    public var tid: Int32
    public var code: UInt32
    public var value: UInt64
}

public struct CapturedFrame: Sendable, Equatable {
    public var startNs: UInt64
    public var durationNs: UInt64
}
