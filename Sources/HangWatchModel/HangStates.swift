// Report-model types for what a hung thread was doing besides running code:
// the call it was blocked in and, for a lock, who held it.

/// The call a blocked or mixed hang waited in most: the syscall (or the
/// wrapped libc wait) and the innermost frame of the program's own code
/// that made it.
public struct BlockedCall: Codable, Sendable, Equatable {
    /// `futex`, `read`, `usleep`, `poll`, ...
    public var syscall: String
    /// The program's frame that made the call (its display name); nil when no
    /// frame of the program's own code was on the stack.
    public var symbol: String?
    /// The call `syscall`, made from the program's frame `symbol`.
    public init(syscall: String, symbol: String?) {
        self.syscall = syscall
        self.symbol = symbol
    }
}

/// The thread that held the lock a hang waited for, and what it did meanwhile.
public struct LockOwner: Codable, Sendable, Equatable {
    /// The owner's OS thread id.
    public var tid: Int
    /// The owner thread's name; may be empty.
    public var name: String
    /// How the owner was known: `mutex` (glibc pthread_mutex_t: NSLock,
    /// pthread_mutex_lock), `pi-futex` (Swift's Mutex, PI mutexes) or `join`
    /// (pthread_join waits for that thread to end).
    public var evidence: String
    /// Its samples while the hang waited; nil when none could be taken.
    public var callTree: CallTreeNode?
    /// An owner with every field given.
    public init(tid: Int, name: String, evidence: String, callTree: CallTreeNode?) {
        self.tid = tid
        self.name = name
        self.evidence = evidence
        self.callTree = callTree
    }
}

/// A thread that used CPU while a hang waited on something with no known owner.
public struct RunningThread: Codable, Sendable, Equatable {
    /// Its OS thread id.
    public var tid: Int
    /// Its name; may be empty.
    public var name: String
    /// CPU time it used while the hang waited.
    public var cpuMs: Double
    /// A thread that used `cpuMs` of CPU.
    public init(tid: Int, name: String, cpuMs: Double) {
        self.tid = tid
        self.name = name
        self.cpuMs = cpuMs
    }
}
