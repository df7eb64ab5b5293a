// The report model: plain value types shared by every renderer and by the
// JSON file format (schemaVersion 5). Field names are a public contract.

/// A whole run: the process, the thresholds in force and every hang found.
public struct Report: Codable, Sendable, Equatable {
    /// The version of the file it was read from; files are always written at `JSONReport.schemaVersion`.
    public var schemaVersion: Int = JSONReport.schemaVersion
    /// The program that ran: how it was started, how it ended, what it cost.
    public var process: ProcessInfoRecord
    /// The thresholds and sample rate the run used.
    public var thresholds: Thresholds
    /// Counts and totals over `hangs`.
    public var summary: Summary
    /// Every hang, in order of start time; ids count from 1.
    public var hangs: [Hang]
    /// Frame-deadline statistics; null unless a frame deadline was set.
    public var frames: FrameStats?
    /// Every frame loop measured (the main one is also `frames`).
    public var frameLoops: [FrameStats]
    /// Launch: time from process start to the watched loop's first wait.
    public var launch: Launch?
    /// Things the reader should know about the evidence (blocked signals, dropped samples, ...).
    public var notes: [String]

    /// A report of `hangs` in `process`; `schemaVersion` is the current one.
    public init(process: ProcessInfoRecord, thresholds: Thresholds, summary: Summary,
                hangs: [Hang], frames: FrameStats? = nil, frameLoops: [FrameStats] = [],
                launch: Launch? = nil, notes: [String] = []) {
        self.process = process
        self.thresholds = thresholds
        self.summary = summary
        self.hangs = hangs
        self.frames = frames
        self.frameLoops = frameLoops
        self.launch = launch
        self.notes = notes
    }
}

/// The profiled program: how it was started, how it ended, and what it cost.
public struct ProcessInfoRecord: Codable, Sendable, Equatable {
    /// Its process id.
    public var pid: Int
    /// The program as it was given on the command line (or the running executable's path, in the
    /// library).
    public var executable: String
    /// Its arguments, without the program name.
    public var arguments: [String]
    /// Exit code when the program exited normally.
    public var exitCode: Int?
    /// Signal number when the program was killed by a signal.
    public var signal: Int?
    /// Wall time from process start to its end (or to the report, in the library), in ms.
    public var wallMs: Double
    /// The program's own CPU time and peak memory (from wait4's rusage); nil when unknown.
    public var cpuUserMs: Double?
    /// System CPU time in ms; nil when unknown (see `cpuUserMs`).
    public var cpuSystemMs: Double?
    /// Peak resident set size in KiB; nil when unknown.
    public var peakRssKb: Int?
    /// When the process started, in ns since the Unix epoch (CLOCK_REALTIME); nil in files
    /// written before it was recorded. Hang starts (`Hang.startMs`) are relative to it.
    public var startTimeUnixNs: Int64?
    /// A process record; the CPU and memory figures are optional because the library cannot measure
    /// them at exit.
    public init(pid: Int, executable: String, arguments: [String], exitCode: Int?, signal: Int?, wallMs: Double,
                cpuUserMs: Double? = nil, cpuSystemMs: Double? = nil, peakRssKb: Int? = nil,
                startTimeUnixNs: Int64? = nil) {
        self.startTimeUnixNs = startTimeUnixNs
        self.cpuUserMs = cpuUserMs
        self.cpuSystemMs = cpuSystemMs
        self.peakRssKb = peakRssKb
        self.pid = pid
        self.executable = executable
        self.arguments = arguments
        self.exitCode = exitCode
        self.signal = signal
        self.wallMs = wallMs
    }
}

/// The thresholds a run used, so a report can be read without knowing the command line.
public struct Thresholds: Codable, Sendable, Equatable {
    /// Busy time of the watched loop, in ms, from which it counts as a hang (`--hang-ms`, default
    /// 100).
    public var hangMs: Double
    /// Hang duration in ms from which a hang is reported with a call tree (`--report-ms`, default
    /// 250).
    public var reportMs: Double
    /// Samples per second taken during a hang (`--sample-hz`, default 1000); one sample stands for
    /// 1000 / sampleHz ms.
    public var sampleHz: Double
    /// The frame deadline in ms (`--frame-ms`); nil unless the loop is a frame loop.
    public var frameMs: Double?
    /// Thresholds with the command line's defaults.
    public init(hangMs: Double = 100, reportMs: Double = 250, sampleHz: Double = 1000, frameMs: Double? = nil) {
        self.hangMs = hangMs
        self.reportMs = reportMs
        self.sampleHz = sampleHz
        self.frameMs = frameMs
    }
}

/// The headline numbers of a report, derived from its hangs.
public struct Summary: Codable, Sendable, Equatable {
    /// How many hangs there are.
    public var hangCount: Int
    /// How many of them reached the report threshold and carry a call tree.
    public var reportedHangCount: Int
    /// The sum of all hang durations, in ms.
    public var totalHangMs: Double
    /// The longest hang's duration in ms; 0 without hangs.
    public var longestHangMs: Double
    /// A summary with the given numbers (for reports read back or made by hand; see
    /// `init(hangs:)`).
    public init(hangCount: Int, reportedHangCount: Int, totalHangMs: Double, longestHangMs: Double) {
        self.hangCount = hangCount
        self.reportedHangCount = reportedHangCount
        self.totalHangMs = totalHangMs
        self.longestHangMs = longestHangMs
    }

    /// Derives the summary from the hangs themselves so it can never disagree with them.
    public init(hangs: [Hang]) {
        self.init(hangCount: hangs.count,
                  reportedHangCount: hangs.filter(\.reported).count,
                  totalHangMs: hangs.reduce(0) { $0 + $1.durationMs },
                  longestHangMs: hangs.map(\.durationMs).max() ?? 0)
    }
}

/// The thread a hang happened on.
public struct ThreadRef: Codable, Sendable, Equatable, Hashable {
    /// The OS thread id (for main-queue work, the worker thread that ran it).
    public var tid: Int
    /// The thread's name (`pthread_setname_np`, or the process name for the main thread); may be
    /// empty.
    public var name: String
    /// Which loop the thread was running: `main-thread` (the OS main thread's run loop
    /// or `epoll`/`poll` loop), `main-queue` (main dispatch queue work, on whichever
    /// worker ran it), `loop` (an event-loop thread named with `--thread`), `job`
    /// (one Swift Concurrency job on a cooperative-pool thread) or `cooperative-pool`
    /// (the whole pool taken: `tid` 0, the threads are the hang's `poolThreads`).
    public var role: String
    /// A thread reference; the role defaults to `main-thread`.
    public init(tid: Int, name: String, role: String = "main-thread") {
        self.tid = tid
        self.name = name
        self.role = role
    }
}

/// What the hung thread was doing: `cpu`, `blocked` or `mixed`, from its CPU clock or, when none was
/// read, its samples (at most 10 % of them blocked, at least 90 %, in between); `unknown` when neither
/// exists (no sample was taken and no clock read: nothing measured the hang's thread). In JSON, the raw value.
public enum HangKind: String, Codable, Sendable, Equatable {
    case cpu, blocked, mixed, unknown
}

/// One busy period of a watched loop that reached the hang threshold.
public struct Hang: Codable, Sendable, Equatable {
    /// The hang's number in this report, from 1 in start order.
    public var id: Int
    /// The thread whose loop was busy.
    public var thread: ThreadRef
    /// Milliseconds from process start to the start of the busy period.
    public var startMs: Double
    /// How long the loop was busy, in ms, from the loop's own heartbeat (not from the samples).
    public var durationMs: Double
    /// True when the hang reached the report threshold and carries evidence.
    public var reported: Bool
    /// True when the program ended or died while the hang was still going on.
    public var inProgress: Bool
    /// `cpu`, `blocked`, `mixed` or `unknown` (see `HangKind`).
    public var kind: HangKind
    /// For blocked and mixed hangs: the call the thread was waiting in most
    /// (`usleep`, `poll`, `read`, `futex`...). In JSON (schema v2) this is
    /// `blockedIn.syscall`, beside `blockedIn.symbol` (`blockedSymbol`).
    public var blockedIn: String?
    /// Samples taken during the hang.
    public var sampleCount: Int
    /// Fraction (0...1) of the hang's duration covered by samples.
    public var sampleCoverage: Double
    /// The top-down call tree of the samples; only for reported hangs, nil otherwise.
    public var callTree: CallTreeNode?
    /// Time the thread spent on a CPU during the hang, from its own CPU clock
    /// (nil when it was not measured: library probe mode, older files).
    public var cpuMs: Double?
    /// Time it was runnable but waited for a CPU (a busy machine); nil when unknown.
    public var runnableMs: Double?
    /// The program's frame that made the `blockedIn` call (see `BlockedCall`).
    public var blockedSymbol: String?
    /// For a hang blocked on a lock whose owner is knowable: that thread and its stacks.
    public var lockOwner: LockOwner?
    /// For a wait in futex with no owner known: the threads that used CPU meanwhile, most first.
    public var runningThreads: [RunningThread]
    /// For a `cooperative-pool` hang: every pool thread, each in the job that took it; nil otherwise.
    public var poolThreads: [PoolThread]?
    /// For a `cooperative-pool` hang: how long a job enqueued during it waited
    /// for a thread, at least (the first one enqueued after hangwatch saw the
    /// pool full, to the hang's end: no thread was free before). Nil when no
    /// job was seen enqueued during it, and on every other hang.
    public var poolJobWaitMs: Double?
    /// Why the hang lasted, when something outside the thread's own work explains most of it; nil otherwise.
    public var cause: HangCause?
    /// Time inside the hang the whole process was stopped or frozen; nil when not measured (attach, older files).
    public var stoppedMs: Double?
    /// The cgroup's CPU throttling inside the hang; nil when not read.
    public var throttle: CPUThrottle?
    /// A hang with every field given; the thread-state fields (`cpuMs` and after) default to unknown.
    public init(id: Int, thread: ThreadRef, startMs: Double, durationMs: Double, reported: Bool,
                inProgress: Bool, kind: HangKind, blockedIn: String?, sampleCount: Int,
                sampleCoverage: Double, callTree: CallTreeNode?, cpuMs: Double? = nil, runnableMs: Double? = nil,
                blockedSymbol: String? = nil, lockOwner: LockOwner? = nil, runningThreads: [RunningThread] = [],
                poolThreads: [PoolThread]? = nil, poolJobWaitMs: Double? = nil, cause: HangCause? = nil,
                stoppedMs: Double? = nil, throttle: CPUThrottle? = nil) {
        self.poolThreads = poolThreads
        self.poolJobWaitMs = poolJobWaitMs
        self.cause = cause
        self.stoppedMs = stoppedMs
        self.throttle = throttle
        self.cpuMs = cpuMs
        self.runnableMs = runnableMs
        self.blockedSymbol = blockedSymbol
        self.lockOwner = lockOwner
        self.runningThreads = runningThreads
        self.id = id
        self.thread = thread
        self.startMs = startMs
        self.durationMs = durationMs
        self.reported = reported
        self.inProgress = inProgress
        self.kind = kind
        self.blockedIn = blockedIn
        self.sampleCount = sampleCount
        self.sampleCoverage = sampleCoverage
        self.callTree = callTree
    }
}

/// The time from process start to the watched loop's first wait, which is not a hang.
public struct Launch: Codable, Sendable, Equatable {
    /// From process start to the first wait of the watched loop, in ms.
    public var durationMs: Double
    /// False for programs whose watched thread never waited (a batch job): the duration is then the whole run.
    public var reachedFirstWait: Bool
    /// Samples taken during the launch.
    public var sampleCount: Int
    /// Its call tree when the launch reached the report threshold; nil otherwise.
    public var callTree: CallTreeNode?
    /// Where the watched main thread parked outside any loop, when the launch
    /// ended that way (a server's main thread waiting for its event loops to
    /// close); nil when it reached a loop's wait or never parked. The duration
    /// then runs from process start to the park, which is neither launch nor hang.
    public var parked: LaunchPark?
    /// A launch record with every field given.
    public init(durationMs: Double, reachedFirstWait: Bool, sampleCount: Int, callTree: CallTreeNode?,
                parked: LaunchPark? = nil) {
        self.durationMs = durationMs
        self.reachedFirstWait = reachedFirstWait
        self.sampleCount = sampleCount
        self.callTree = callTree
        self.parked = parked
    }
}

/// Where a main thread parked outside any loop at the end of its launch.
public struct LaunchPark: Codable, Sendable, Equatable {
    /// When it blocked there, in ms from process start.
    public var atMs: Double
    /// The call it blocked in (`futex`, `wait4`, `usleep`…), when sampled.
    public var blockedIn: String?
    /// The program's frame that made that call, when known.
    public var calledFrom: String?
    /// A park record with every field given.
    public init(atMs: Double, blockedIn: String?, calledFrom: String?) {
        self.atMs = atMs
        self.blockedIn = blockedIn
        self.calledFrom = calledFrom
    }
}

/// Hitch statistics of a frame loop (`--frame-ms`, or a library `FrameMonitor`).
public struct FrameStats: Codable, Sendable, Equatable {
    /// The loop's name (thread name, or the name given to the library's frame monitor).
    public var name: String
    /// The frame deadline D, in ms.
    public var deadlineMs: Double
    /// Frames measured.
    public var frameCount: Int
    /// Frames whose work exceeded the deadline.
    public var hitchCount: Int
    /// Deadlines missed: the sum of ⌈frame / D⌉ − 1 over all frames.
    public var missedFrames: Int
    /// Hitch time: the sum of (frame − D) over the hitches, in ms.
    public var hitchMs: Double
    /// Hitch time per second of the measured interval, in ms/s.
    public var hitchRatioMsPerS: Double
    /// The hitch ratio's band, as Apple's scrolling guidance defines it: `good` (below 5 ms/s),
    /// `warning` (5 to 10) or `critical` (above 10).
    public var band: String
    /// Median frame time, in ms (nearest rank).
    public var p50Ms: Double
    /// 95th percentile frame time, in ms.
    public var p95Ms: Double
    /// 99th percentile frame time, in ms.
    public var p99Ms: Double
    /// The longest frame, in ms.
    public var maxMs: Double
    /// Frame-time histogram: upper bounds in ms and counts (the last bucket is open-ended).
    public var histogram: [HistogramBucket]
    /// Frame statistics with every field given.
    public init(name: String, deadlineMs: Double, frameCount: Int, hitchCount: Int, missedFrames: Int,
                hitchMs: Double, hitchRatioMsPerS: Double, band: String, p50Ms: Double, p95Ms: Double,
                p99Ms: Double, maxMs: Double, histogram: [HistogramBucket] = []) {
        self.name = name
        self.deadlineMs = deadlineMs
        self.frameCount = frameCount
        self.hitchCount = hitchCount
        self.missedFrames = missedFrames
        self.hitchMs = hitchMs
        self.hitchRatioMsPerS = hitchRatioMsPerS
        self.band = band
        self.p50Ms = p50Ms
        self.p95Ms = p95Ms
        self.p99Ms = p99Ms
        self.maxMs = maxMs
        self.histogram = histogram
    }
}

/// One bucket of a frame-time histogram.
public struct HistogramBucket: Codable, Sendable, Equatable {
    /// Upper bound of the bucket in ms; nil for the last, open-ended one.
    public var upToMs: Double?
    /// Frames that fell in this bucket.
    public var count: Int
    /// A bucket of `count` frames up to `upToMs`.
    public init(upToMs: Double?, count: Int) {
        self.upToMs = upToMs
        self.count = count
    }
}

/// One node of a top-down call tree: the root first, callees below their callers.
public struct CallTreeNode: Codable, Sendable, Equatable {
    /// The function (see `Frame.symbol`); `<all>` for the synthetic root that joins stacks without
    /// a common outermost frame.
    public var symbol: String
    /// The image the function is in (see `Frame.image`); empty for `<all>`.
    public var image: String
    /// Inclusive time: every sample through this node × ms per sample.
    public var weightMs: Double
    /// Self time: the samples whose stack ends at this node × ms per sample.
    public var selfMs: Double
    /// Samples through this node (inclusive, like `weightMs`).
    public var sampleCount: Int
    /// The functions this one called, heaviest first (ties by symbol, then image).
    public var children: [CallTreeNode]
    /// `path:line` where the node's function is defined (see `Frame.source`);
    /// null unless the run asked for source lines and the debug information had them.
    public var source: String?
    /// The part of `weightMs` from samples of the thread blocked in a syscall
    /// (waiting), the rest being from samples of it running: Time Profiler's
    /// "all thread states". Nil when unknown (files before schema v2); the
    /// views rebuilt from a tree (inverted, focused, system frames hidden) keep it.
    public var waitingMs: Double?
    /// A node with every field given.
    public init(symbol: String, image: String, weightMs: Double, selfMs: Double, sampleCount: Int,
                children: [CallTreeNode], source: String? = nil, waitingMs: Double? = nil) {
        self.waitingMs = waitingMs
        self.symbol = symbol
        self.image = image
        self.weightMs = weightMs
        self.selfMs = selfMs
        self.sampleCount = sampleCount
        self.children = children
        self.source = source
    }
}
