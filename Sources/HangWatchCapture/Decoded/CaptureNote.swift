// The engine's notes about its own evidence (HW_NOTE_*), decoded once here so
// that the report's stages switch over Swift cases, not C codes and bit fields.

import CHangWatchEngine

/// Something the engine logged about what it could or could not sample.
public struct CaptureNote: Sendable, Hashable {
    /// The thread (watch slot) the note is about; 0 for the process as a whole.
    public var tid: Int32
    /// What the note says.
    public var kind: Kind

    /// A note about `tid`.
    public init(tid: Int32, kind: Kind) {
        self.tid = tid
        self.kind = kind
    }

    /// What one note says, with the figures it carries.
    public enum Kind: Sendable, Hashable {
        /// The thread blocks SIGPROF: it has no CPU samples.
        case signalBlocked
        /// The program installed its own SIGPROF handler; the engine chains to it.
        case signalReplaced
        /// Sampling signals sent in one busy period that were never answered.
        case samplesMissed(count: UInt64)
        /// /proc gave only the thread's state: its ticks were left unsampled.
        case stateUnreadable
        /// How running threads were sampled, and why that way.
        case sampler(RunningSampler)
        /// Kernel samples lost in one busy period (the ring filled before it was read).
        case kernelSamplesLost(count: UInt64)
        /// The program ignores SIGPROF, so the kernel drops it.
        case sigprofIgnored
        /// Some cooperative-pool jobs were not watched, and why.
        case poolUnwatched(PoolUnwatchedReason)
        /// A seccomp filter of the program binds the watchdog: sampling stopped
        /// this long after the engine started.
        case seccompStopped(afterNs: UInt64)
        /// The library's in-process wrappers: those asked for and those in place.
        case inProcess(asked: InProcessWrappers, inPlace: InProcessWrappers)
        /// A code this reader does not know (a newer engine): kept, never shown.
        case unknown(code: UInt32, value: UInt64)
    }

    /// How the engine sampled running threads.
    public enum RunningSampler: Sendable, Hashable {
        /// The kernel's task clock; `userTimeOnly` when perf_event_paranoid
        /// allows no samples inside system calls.
        case kernel(userTimeOnly: Bool)
        /// SIGPROF to a thread /proc shows running, because of `reason`.
        case signal(SignalSamplerReason)
        /// A sampler code this reader does not know.
        case unknown(sampler: UInt32, why: UInt32)
    }

    /// Why running threads were sampled with signals rather than by the kernel.
    public enum SignalSamplerReason: Sendable, Hashable {
        /// A seccomp filter is on, and one may kill for perf_event_open: not tried.
        case seccomp
        /// The kernel sampler's ring could not be mapped (locked memory spent).
        case ringUnmapped
        /// perf_event_open failed with this errno.
        case perfEventOpen(errno: Int32)
    }

    /// Why some of the cooperative pool's jobs went unwatched.
    public enum PoolUnwatchedReason: Sendable, Hashable {
        /// libdispatch hands Swift jobs over with dispatch_async_swift_job.
        case swiftJobAPI
        /// More pool priorities than the engine tells apart.
        case tooManyQueues
        /// The watch-slot table was full.
        case slotsFull
        /// No loaded image imports the dispatch calls (a statically linked runtime).
        case notRedirected
        /// A reason code this reader does not know.
        case unknown(UInt32)
    }

    /// The library's in-process wrappers, as bits (HW_INPROCESS_*).
    public struct InProcessWrappers: OptionSet, Sendable, Hashable {
        /// The HW_INPROCESS_* bits.
        public let rawValue: UInt32
        /// Creates the set whose bits are `rawValue`.
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Event-loop waits (poll, epoll_wait, ...) wrapped to watch named threads.
        public static let waits = InProcessWrappers(rawValue: HW_INPROCESS_WAITS)
        /// The dispatch calls that hand jobs to the cooperative pool.
        public static let pool = InProcessWrappers(rawValue: HW_INPROCESS_POOL)
        /// The exec family, guarded so that no sampling signal is pending at an exec.
        public static let exec = InProcessWrappers(rawValue: HW_INPROCESS_EXEC)
    }
}

extension CaptureNote.Kind {
    /// The note the engine logged with `code` and `value`; nil for the codes
    /// the reader turns into run facts rather than notes (pool widths, parks).
    init(code: UInt32, value: UInt64) {
        let high = UInt32(truncatingIfNeeded: value >> 32), low = UInt32(truncatingIfNeeded: value)
        switch code {
        case HW_NOTE_SIGNAL_BLOCKED.rawValue: self = .signalBlocked
        case HW_NOTE_SIGNAL_REPLACED.rawValue: self = .signalReplaced
        case HW_NOTE_SAMPLES_MISSED.rawValue: self = .samplesMissed(count: value)
        case HW_NOTE_STATE_UNREADABLE.rawValue: self = .stateUnreadable
        case HW_NOTE_SAMPLER.rawValue: self = .sampler(CaptureNote.RunningSampler(sampler: low, why: high))
        case HW_NOTE_KERNEL_SAMPLES_LOST.rawValue: self = .kernelSamplesLost(count: value)
        case HW_NOTE_SIGPROF_IGNORED.rawValue: self = .sigprofIgnored
        case HW_NOTE_POOL_UNWATCHED.rawValue: self = .poolUnwatched(CaptureNote.PoolUnwatchedReason(low))
        case HW_NOTE_SECCOMP_STOPPED.rawValue: self = .seccompStopped(afterNs: value)
        case HW_NOTE_INPROCESS.rawValue:
            self = .inProcess(asked: CaptureNote.InProcessWrappers(rawValue: high),
                              inPlace: CaptureNote.InProcessWrappers(rawValue: low))
        default: self = .unknown(code: code, value: value)
        }
    }

    /// Whether the text of this note names no figure: such a note is kept once
    /// per thread whatever its value, so per-hang repeats cannot use up the
    /// reader's cap before another thread's first note.
    var namesNoFigure: Bool {
        switch self {
        case .signalBlocked, .signalReplaced, .stateUnreadable, .sigprofIgnored: return true
        default: return false
        }
    }

    /// Whether the note says some of its thread's sampling ticks are missing:
    /// ticks asleep and running (`stateUnreadable`, `samplesMissed`), or, when
    /// `runningOnly` is allowed, ticks of a running thread only (`kernelSamplesLost`).
    public func losesTicks(countingRunningOnly: Bool) -> Bool {
        switch self {
        case .stateUnreadable, .samplesMissed: return true
        case .kernelSamplesLost: return countingRunningOnly
        default: return false
        }
    }
}

extension CaptureNote.RunningSampler {
    init(sampler: UInt32, why: UInt32) {
        switch sampler {
        case HW_SAMPLER_PERF.rawValue: self = .kernel(userTimeOnly: why == UInt32(HW_SAMPLER_WHY_USER_ONLY))
        case HW_SAMPLER_SIGNAL.rawValue:
            switch why {
            case UInt32(HW_SAMPLER_WHY_SECCOMP): self = .signal(.seccomp)
            case UInt32(HW_SAMPLER_WHY_RING): self = .signal(.ringUnmapped)
            default: self = .signal(.perfEventOpen(errno: Int32(bitPattern: why)))
            }
        default: self = .unknown(sampler: sampler, why: why)
        }
    }
}

extension CaptureNote.PoolUnwatchedReason {
    init(_ why: UInt32) {
        switch why {
        case UInt32(HW_POOL_WHY_SWIFT_JOB_API): self = .swiftJobAPI
        case UInt32(HW_POOL_WHY_QUEUES): self = .tooManyQueues
        case UInt32(HW_POOL_WHY_SLOTS): self = .slotsFull
        case UInt32(HW_POOL_WHY_NOT_REDIRECTED): self = .notRedirected
        default: self = .unknown(why)
        }
    }
}
