// What the reader makes of a sample log, in Swift values only: the engine's
// codes are decoded here (Decoded/), so no later stage reads a C record.
// Public, yet out of the library's reach: it does not re-export this stage.

import HangWatchSymbols

/// Everything read from a sample log, unwound but not yet symbolicated.
/// Times are CLOCK_MONOTONIC nanoseconds, as the engine wrote them.
public struct CapturedRun: Sendable {
    package var modules: [ModuleImage] = []
    /// Start addresses of hangwatch's own agent images: frames there are the agent's, not the program's.
    public var agentModuleStarts: Set<UInt64> = []
    /// Code of hangwatch's own inside a program image (the library's wait
    /// wrappers and job trampolines): on the program's stacks, not its work.
    package var wrapperCode: [ClosedRange<UInt64>] = []
    /// Watched threads by OS thread id.
    public var threads: [Int32: CapturedThread] = [:]
    /// Busy periods that reached the hang threshold, keyed by image, thread and sequence.
    public var busyPeriods: [BusyKey: BusyPeriod] = [:]
    /// The samples of each busy period, folded: one entry per distinct stack,
    /// source and call, in the order they were first seen, weighted by how many
    /// ticks saw it.
    public var samples: [BusyKey: [CapturedSample]] = [:]
    /// The stacks the samples refer to.
    public var stacks = StackTable()
    /// What the engine said about its own evidence, each kept once (see CaptureCollector).
    public var notes: [CaptureNote] = []
    /// Swift Concurrency's pool queues: how many jobs each can run at once, by
    /// queue number (the `poolQueue` of its jobs' busy periods).
    public var poolWidths: [UInt32: Int] = [:]
    /// Jobs enqueued on a pool queue the watchdog saw full: the first of each
    /// such spell, in the order noted.
    public var poolJobsWaiting: [CapturedWaitingJob] = []
    /// Where the main thread parked outside any loop during its launch, in order.
    public var launchParks: [CapturedPark] = []
    /// Frame loops: their frames (busy periods) folded, by slot id.
    public var frames: [Int32: FrameTally] = [:]
    /// CLOCK_MONOTONIC ns the process exited, when the log saw it.
    public var exitTimeNs: UInt64?
    /// Records the ring refused because it was full (all kinds).
    public var droppedRecords: UInt64 = 0
    /// Of those, samples: a full ring drops these first.
    public var droppedSamples: UInt64 = 0
    /// Records a writer reserved and never committed (its thread died mid-write).
    public var abandonedRecords: UInt64 = 0
    /// Records ignored because no watched thread of the current image wrote them.
    public var unattributedRecords: UInt64 = 0
    /// CPU time, lock owners and what ran while a busy thread waited (ThreadStates.swift).
    public var threadStates = ThreadStates()
    /// An empty run.
    public init() {}
}

/// A watched thread as its THREAD record named it.
public struct CapturedThread: Sendable, Equatable {
    /// Its OS thread id.
    public var tid: Int32
    /// Its name (comm) when it was announced.
    public var name: String
    /// What it is to the program.
    public var role: ThreadRole
    package init(tid: Int32, name: String, role: ThreadRole) {
        self.tid = tid
        self.name = name
        self.role = role
    }
}

/// Names one busy period: its watch slot, sequence and engine generation.
public struct BusyKey: Hashable, Sendable {
    /// The watch slot (a thread id, or the main queue's id).
    public var tid: Int32
    /// The period's sequence number within its slot and generation.
    public var seq: UInt64
    /// The engine generation (process image): an exec restarts sequences.
    /// No default: a key built without it would silently match nothing.
    public var generation: UInt32
    /// The key of period `seq` of slot `tid` in image `generation`.
    public init(tid: Int32, seq: UInt64, generation: UInt32) {
        self.tid = tid
        self.seq = seq
        self.generation = generation
    }

    /// Two words rather than three fields: the reader hashes a key several
    /// times per sample. Equality still compares every field.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(seq)
        hasher.combine(UInt64(UInt32(bitPattern: tid)) << 32 | UInt64(generation))
    }
}

/// One stretch of work of a watched loop that reached the hang threshold.
public struct BusyPeriod: Sendable, Equatable {
    /// The watch slot (a thread id, or the main queue's id).
    public var tid: Int32
    /// The period's sequence number within its slot and generation.
    public var seq: UInt64
    /// The engine generation (process image) it belongs to.
    public var generation: UInt32 = 0
    /// The OS thread that ran the work (for the main queue, the worker that drained it).
    public var osTid: Int32
    /// CLOCK_MONOTONIC ns the work began (the loop's last wait ended).
    public var startNs: UInt64
    /// nil while in progress (no end was logged before the process stopped).
    public var endNs: UInt64?
    /// The period before the thread's first loop wait.
    public var isLaunch: Bool
    /// It ended because its thread exited: the loop was gone, not hung.
    public var endedByThreadExit = false
    /// A Swift Concurrency job's: its pool queue's number (`CapturedRun.poolWidths`); 0 for any other.
    public var poolQueue: UInt32 = 0
    package init(tid: Int32, seq: UInt64, generation: UInt32 = 0, osTid: Int32, startNs: UInt64, endNs: UInt64?,
                 isLaunch: Bool, endedByThreadExit: Bool = false) {
        self.tid = tid
        self.seq = seq
        self.generation = generation
        self.osTid = osTid
        self.startNs = startNs
        self.endNs = endNs
        self.isLaunch = isLaunch
        self.endedByThreadExit = endedByThreadExit
    }
}

/// One or more sampling ticks of a busy period that saw the same stack the same way.
public struct CapturedSample: Sendable, Equatable {
    /// How a sample was taken: a signal on a running thread, or a read of a blocked one.
    public enum Source: UInt32, Sendable { case signal = 1, blockedWrapper = 2, blockedSyscall = 3 }
    /// When the latest tick folded into it was taken.
    public var timeNs: UInt64
    /// How it was taken.
    public var source: Source
    /// The call a blocked sample was taken in; `.none` for a running one.
    public var call: BlockedCall
    /// Index in `CapturedRun.stacks` of the unwound pcs (innermost first;
    /// pcs[0] is the exact pc, the rest are return addresses).
    public var stack: Int32
    /// How many sampling ticks saw this same stack, source and call.
    public var weight: Int
    /// The sampler's copy of the stack ended before the stack did.
    public var truncated: Bool
    /// The unwind stopped short of the thread's entry in a copy that held the
    /// stack (a frame it could not step past, or the frame limit): the
    /// report must not show its outermost frame as the thread's root.
    public var unwindStopped: Bool
    package init(timeNs: UInt64, source: Source, call: BlockedCall, stack: Int32, weight: Int, truncated: Bool,
                 unwindStopped: Bool = false) {
        self.timeNs = timeNs
        self.source = source
        self.call = call
        self.stack = stack
        self.weight = weight
        self.truncated = truncated
        self.unwindStopped = unwindStopped
    }
}

/// A main thread found parked outside any loop during its launch (a server's
/// main waiting for its event loops to close): from `startNs`, when it blocked
/// where it parked, to `endNs`, when the engine saw it move on (nil: still
/// parked when the log ended).
public struct CapturedPark: Sendable, Equatable {
    /// The main thread's OS thread id.
    public var osTid: Int32
    /// CLOCK_MONOTONIC ns it blocked where it parked.
    public var startNs: UInt64
    /// CLOCK_MONOTONIC ns the engine saw it move on; nil while still parked.
    public var endNs: UInt64?
}

/// A job enqueued on a pool queue while every one of its threads was in a
/// long job (the first such job of the spell): it cannot start before one of
/// those jobs ends.
public struct CapturedWaitingJob: Sendable, Equatable {
    /// The queue's number (the `poolQueue` of its jobs' busy periods).
    public var poolQueue: UInt32
    /// A stamp taken just before the enqueue (CLOCK_MONOTONIC ns, rounded down to 10 µs).
    public var enqueuedFromNs: UInt64
    /// A stamp taken just after it (rounded up to 10 µs).
    public var enqueuedByNs: UInt64
    /// A waiting job as noted.
    public init(poolQueue: UInt32, enqueuedFromNs: UInt64, enqueuedByNs: UInt64) {
        self.poolQueue = poolQueue
        self.enqueuedFromNs = enqueuedFromNs
        self.enqueuedByNs = enqueuedByNs
    }
}
