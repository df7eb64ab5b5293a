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
    /// The wait-for chain past the lock's owner: each link names its own waiter, in order written.
    public var waitLinks: [BusyKey: [CapturedWaitLink]] = [:]
    /// The cgroup's CPU throttling over each sampled hang (the latest reading).
    public var cpuLimits: [BusyKey: CapturedCPULimit] = [:]
    /// Spans during which the whole process was stopped or frozen, per image generation.
    public var stops: [CapturedStop] = []
    /// Nothing measured yet.
    public init() {}
}

/// The first and last CPU-clock readings of one thread over one busy period.
public struct CPUWindow: Sendable, Equatable {
    /// The OS thread that ran the period's work while these readings were taken.
    public var osTid: Int32
    /// CLOCK_MONOTONIC ns of the first reading.
    public var firstNs: UInt64
    /// CLOCK_MONOTONIC ns of the last reading.
    public var lastNs: UInt64
    /// The thread's CPU clock (ns) at the first reading.
    public var firstCPUNs: UInt64
    /// The thread's CPU clock (ns) at the last reading.
    public var lastCPUNs: UInt64
    /// Run-queue wait (schedstat) at the first and last reading; nil when unreadable.
    public var firstRunqNs: UInt64?
    /// Run-queue wait (ns) at the last reading; nil when unreadable.
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
    /// The futex word's address in the target.
    public var address: UInt64
    /// The futex operation the thread was in (FUTEX_WAIT, FUTEX_LOCK_PI, ...).
    public var op: UInt32
    /// How the owner was read.
    public var evidence: LockOwnerEvidence
    /// The owner's thread id; 0 when none is known.
    public var ownerTid: Int32
    /// The owner's name (comm), when known.
    public var ownerName: String
    /// CLOCK_MONOTONIC ns the wait was seen.
    public var timeNs: UInt64
    /// A wait with every field given.
    public init(address: UInt64, op: UInt32, evidence: LockOwnerEvidence, ownerTid: Int32, ownerName: String,
                timeNs: UInt64) {
        self.address = address
        self.op = op
        self.evidence = evidence
        self.ownerTid = ownerTid
        self.ownerName = ownerName
        self.timeNs = timeNs
    }
}

/// Threads that used CPU while the busy thread waited, most first.
public struct CapturedRanDuring: Sendable, Equatable {
    /// One thread that ran, and how much.
    public struct Entry: Sendable, Equatable {
        /// Its thread id.
        public var tid: Int32
        /// Its name (comm).
        public var name: String
        /// CPU time it used over the measure (ns).
        public var cpuNs: UInt64
    }
    /// CLOCK_MONOTONIC ns the measure began.
    public var sinceNs: UInt64
    /// CLOCK_MONOTONIC ns the measure ended.
    public var untilNs: UInt64
    /// The threads that ran, most CPU first.
    public var threads: [Entry]
}

/// One link of a wait-for chain past the lock's owner: `waiter` waits on
/// `wait.address`, held by `wait.ownerTid` (0: no known owner, the chain ends).
public struct CapturedWaitLink: Sendable, Equatable {
    /// The thread that waits.
    public var waiter: Int32
    /// What it waits on, and who holds it.
    public var wait: CapturedLockWait
    /// A link with every field given.
    public init(waiter: Int32, wait: CapturedLockWait) {
        self.waiter = waiter
        self.wait = wait
    }
}

/// The cgroup's CPU accounting between two readings of one busy period.
public struct CapturedCPULimit: Sendable, Equatable {
    /// 1 or 2 (cgroup version); 0 when cpu.stat could not be read (`errno` says why).
    public var version: UInt32
    /// Why cpu.stat could not be read (an errno); 0 when it was.
    public var errno: UInt32
    /// CLOCK_MONOTONIC ns of the first reading.
    public var firstNs: UInt64
    /// CLOCK_MONOTONIC ns of the last reading.
    public var lastNs: UInt64
    /// Time the group was throttled between the readings (ns).
    public var throttledNs: UInt64
    /// Enforcement periods the group was throttled in between the readings.
    public var throttledPeriods: UInt64
    /// nil when the group has no quota.
    public var quotaUs: UInt64?
    /// The quota's enforcement period (µs).
    public var periodUs: UInt64
    /// /proc/loadavg's 1-minute load and running tasks at the last reading; nil when unread.
    public var loadAverage: Double?
    /// Runnable tasks system-wide at the last reading; nil when unread.
    public var runnableTasks: Int?
    /// Online CPUs (sysconf) at the last reading; 0 when unknown.
    public var cpus: Int
}

/// The process was stopped for `stoppedNs` between `fromNs` and `toNs`.
public struct CapturedStop: Sendable, Equatable {
    /// The engine generation (process image) the stop belongs to.
    public var generation: UInt32
    /// CLOCK_MONOTONIC ns the span begins.
    public var fromNs: UInt64
    /// CLOCK_MONOTONIC ns the span ends.
    public var toNs: UInt64
    /// Of the span, the time the process was stopped (ns).
    public var stoppedNs: UInt64
    package init(generation: UInt32, fromNs: UInt64, toNs: UInt64, stoppedNs: UInt64) {
        self.generation = generation
        self.fromNs = fromNs
        self.toNs = toNs
        self.stoppedNs = stoppedNs
    }
}
