// The cooperative pool's part of the report model: what each of its threads
// was doing while the whole pool was taken.

/// One thread of Swift Concurrency's cooperative pool during a pool hang.
public struct PoolThread: Codable, Sendable, Equatable {
    /// Its OS thread id.
    public var tid: Int
    /// Its name (libdispatch's worker name; may be empty).
    public var name: String
    /// `running` when its job used a CPU most of the time, `blocked` when it mostly waited.
    public var state: String
    /// For a blocked thread: the call it waited in most (`usleep`, `read`, `futex`...).
    public var blockedIn: String?
    /// The `id` of the job hang this thread's job is: its whole job, which spans the pool hang.
    public var jobHangId: Int
    /// CPU time its job used, from its own CPU clock; nil when not measured.
    public var cpuMs: Double?
    /// The call tree of its job's samples (the whole job's); nil below the report threshold.
    public var callTree: CallTreeNode?
    /// A pool thread with every field given.
    public init(tid: Int, name: String, state: String, blockedIn: String?, jobHangId: Int, cpuMs: Double?,
                callTree: CallTreeNode?) {
        self.tid = tid
        self.name = name
        self.state = state
        self.blockedIn = blockedIn
        self.jobHangId = jobHangId
        self.cpuMs = cpuMs
        self.callTree = callTree
    }
}

extension Hang {
    /// `thread.role` of a hang of the whole cooperative pool.
    public static let cooperativePoolRole = "cooperative-pool"
    /// `thread.role` of one job that ran `--hang-ms` or more without returning to its executor.
    public static let jobRole = "job"
}
