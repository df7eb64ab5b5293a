/// What the watchdog measured about a busy thread besides its stacks: its CPU
/// clock, the lock it waited on and that lock's owner (with the owner's own
/// samples), or the threads that ran while it waited. Keyed like the samples,
/// by busy period.
public struct ThreadStates: Sendable {
    /// CPU-clock windows of each busy period, one per OS thread that ran it.
    public var cpu: [BusyKey: [CPUWindow]] = [:]
    /// Each distinct (futex, owner) the busy thread was found waiting on, in order.
    public var locks: [BusyKey: [CapturedLockWait]] = [:]
    /// The lock owners' samples, per busy period and owner thread, folded like
    /// the busy thread's own (stacks in `CapturedRun.stacks`).
    public var ownerSamples: [BusyKey: [Int32: [CapturedSample]]] = [:]
    /// Threads that used CPU while the busy thread waited with no owner known (the latest measure).
    public var ranDuring: [BusyKey: CapturedRanDuring] = [:]
    public init() {}
}

/// The first and last CPU-clock readings of one thread over one busy period.
public struct CPUWindow: Sendable, Equatable {
    public var osTid: Int32
    public var firstNs: UInt64
    public var lastNs: UInt64
    public var firstCPUNs: UInt64
    public var lastCPUNs: UInt64
    /// Run-queue wait (schedstat) at the first and last reading; nil when unreadable.
    public var firstRunqNs: UInt64?
    public var lastRunqNs: UInt64?

    package init(osTid: Int32, firstNs: UInt64, lastNs: UInt64, firstCPUNs: UInt64, lastCPUNs: UInt64,
                 firstRunqNs: UInt64?, lastRunqNs: UInt64?) {
        self.osTid = osTid
        self.firstNs = firstNs
        self.lastNs = lastNs
        self.firstCPUNs = firstCPUNs
        self.lastCPUNs = lastCPUNs
        self.firstRunqNs = firstRunqNs
        self.lastRunqNs = lastRunqNs
    }

    /// Wall time the window covers.
    public var spanNs: UInt64 { lastNs &- firstNs }
    /// CPU time used in it.
    public var cpuNs: UInt64 { lastCPUNs >= firstCPUNs ? lastCPUNs - firstCPUNs : 0 }
    /// Time runnable but waiting for a CPU in it (nil when unknown).
    public var runqNs: UInt64? {
        guard let a = firstRunqNs, let b = lastRunqNs, b >= a else { return nil }
        return b - a
    }
}

/// How the owner of a waited-on futex was read (HW_OWNER_*).
public enum LockOwnerEvidence: UInt32, Sendable {
    case none = 0, priorityInheritance = 1, pthreadMutex = 2, wordIsThread = 3
}

/// The busy thread blocked in futex on `address`; `ownerTid` held it (0: none known).
public struct CapturedLockWait: Sendable, Equatable {
    public var address: UInt64
    public var op: UInt32
    public var evidence: LockOwnerEvidence
    public var ownerTid: Int32
    public var ownerName: String
    public var timeNs: UInt64
}

/// Threads that used CPU while the busy thread waited, most first.
public struct CapturedRanDuring: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var tid: Int32
        public var name: String
        public var cpuNs: UInt64
    }
    public var sinceNs: UInt64
    public var untilNs: UInt64
    public var threads: [Entry]
}
