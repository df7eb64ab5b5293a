// Report-model types for why a hang lasted when the hung thread's own code
// does not say: a lock cycle, the cgroup's CPU limit, the process stopped, or
// no CPU free to run on.

/// The verdict on a hang whose time is mostly explained by something outside
/// the thread's own work. In JSON: `cause: {kind, ...}`, the fields that
/// belong to the kind given, the others null.
public struct HangCause: Codable, Sendable, Equatable {
    /// What held the loop up.
    public enum Kind: String, Codable, Sendable, Equatable, CaseIterable {
        /// The hung thread waits in a cycle of lock owners that can never end.
        case deadlock
        /// The cgroup's CPU bandwidth limit stopped the process for most of the hang.
        case throttled
        /// The process was stopped (SIGSTOP, Ctrl-Z, a tracer, the freezer) for most of it.
        case stopped
        /// The thread was runnable but waited for a CPU for most of it.
        case starvedOfCPU = "starved-of-cpu"
    }
    /// The cause's kind.
    public var kind: Kind
    /// `deadlock`: the cycle's threads, from the hung thread, each waiting for
    /// a lock the next one holds (the last for one the first holds).
    public var threads: [DeadlockThread]?
    /// `throttled`: throttled time inside the hang; `stopped`: stopped time;
    /// `starved-of-cpu`: run-queue time.
    public var ms: Double?
    /// `starved-of-cpu`: the machine's 1-minute load average at the hang.
    public var loadAverage: Double?
    /// `starved-of-cpu`: tasks running or runnable on the machine at the hang.
    public var runnableTasks: Int?
    /// `starved-of-cpu`: online CPUs.
    public var cpus: Int?
    /// A cause with every field given.
    public init(kind: Kind, threads: [DeadlockThread]? = nil, ms: Double? = nil, loadAverage: Double? = nil,
                runnableTasks: Int? = nil, cpus: Int? = nil) {
        self.kind = kind
        self.threads = threads
        self.ms = ms
        self.loadAverage = loadAverage
        self.runnableTasks = runnableTasks
        self.cpus = cpus
    }
}

/// One thread of a deadlock's cycle.
public struct DeadlockThread: Codable, Sendable, Equatable {
    /// Its OS thread id.
    public var tid: Int
    /// Its name; may be empty.
    public var name: String
    /// The program's function that waits for the lock (the caller of the lock call); nil when unknown.
    public var function: String?
    /// The thread that holds the lock it waits for (the next in the list, or for the last one an earlier one).
    public var waitsFor: Int
    /// How that thread was known to hold the lock: `mutex`, `pi-futex` or `join` (see `LockOwner`).
    public var evidence: String
    /// Its samples while the hang waited (the hung thread's own tree is the hang's); nil when none.
    public var callTree: CallTreeNode?
    /// A cycle member with every field given.
    public init(tid: Int, name: String, function: String?, waitsFor: Int, evidence: String, callTree: CallTreeNode?) {
        self.tid = tid
        self.waitsFor = waitsFor
        self.name = name
        self.function = function
        self.evidence = evidence
        self.callTree = callTree
    }
}

/// The process's cgroup CPU limit and how much of a hang it took.
public struct CPUThrottle: Codable, Sendable, Equatable {
    /// Throttled time the group's cpu.stat counted between the hang's first and
    /// last reading (summed over CPUs by the kernel: may exceed wall time).
    public var throttledMs: Double
    /// Periods in which the group was throttled meanwhile.
    public var throttledPeriods: Int
    /// CPU time allowed per period, in ms; nil when the group has no quota.
    public var quotaMs: Double?
    /// The period, in ms.
    public var periodMs: Double
    /// 1 or 2: the cgroup version it was read from.
    public var cgroupVersion: Int
    /// A reading with every field given.
    public init(throttledMs: Double, throttledPeriods: Int, quotaMs: Double?, periodMs: Double, cgroupVersion: Int) {
        self.throttledMs = throttledMs
        self.throttledPeriods = throttledPeriods
        self.quotaMs = quotaMs
        self.periodMs = periodMs
        self.cgroupVersion = cgroupVersion
    }
}
