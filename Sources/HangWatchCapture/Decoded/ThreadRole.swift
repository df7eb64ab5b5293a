// What a watched thread is to its program, decoded from the engine's HW_ROLE_*.

import CHangWatchEngine
import HangWatchModel

/// What a watched thread (or watch slot) is to the program it runs in.
public enum ThreadRole: Sendable, Hashable {
    /// The process's main thread, watched through its run loop or launch.
    case mainThread
    /// The main dispatch queue, drained by whichever thread runs it.
    case mainQueue
    /// A thread running an event loop the user named (`--threads`, LoopHeartbeat).
    case loop
    /// A worker of Swift Concurrency's cooperative pool, busy while it runs a job.
    case job

    /// The role the engine logged as `role`; codes this reader does not know
    /// read as the main thread, the engine's default slot.
    public init(engineRole role: UInt32) {
        switch role {
        case UInt32(HW_ROLE_MAIN_QUEUE): self = .mainQueue
        case UInt32(HW_ROLE_LOOP): self = .loop
        case UInt32(HW_ROLE_JOB): self = .job
        default: self = .mainThread
        }
    }

    /// The name the report's `thread.role` field carries.
    public var reportName: String {
        switch self {
        case .mainThread: return "main-thread"
        case .mainQueue: return "main-queue"
        case .loop: return "loop"
        case .job: return Hang.jobRole
        }
    }
}

extension BusyPeriod {
    /// The period is the main dispatch queue's (its slot is the queue, not a thread).
    public var isMainQueue: Bool { tid == HW_MAIN_QUEUE_ID }
}
