// The report model: plain value types shared by every renderer and by the
// JSON file format (schemaVersion 1). Field names are a public contract.

/// A whole run: the process, the thresholds in force and every hang found.
public struct Report: Codable, Sendable, Equatable {
    public var schemaVersion: Int = 1
    public var process: ProcessInfoRecord
    public var thresholds: Thresholds
    public var summary: Summary
    public var hangs: [Hang]
    /// Frame-deadline statistics; null unless a frame deadline was set.
    public var frames: FrameStats?
    /// Every frame loop measured (the main one is also `frames`).
    public var frameLoops: [FrameStats]
    /// Launch: time from process start to the watched loop's first wait.
    public var launch: Launch?
    /// Things the reader should know about the evidence (blocked signals, dropped samples, ...).
    public var notes: [String]

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

public struct ProcessInfoRecord: Codable, Sendable, Equatable {
    public var pid: Int
    public var executable: String
    public var arguments: [String]
    /// Exit code when the program exited normally.
    public var exitCode: Int?
    /// Signal number when the program was killed by a signal.
    public var signal: Int?
    public var wallMs: Double
    /// The program's own CPU time and peak memory (from wait4's rusage); nil when unknown.
    public var cpuUserMs: Double?
    public var cpuSystemMs: Double?
    public var peakRssKb: Int?
    public init(pid: Int, executable: String, arguments: [String], exitCode: Int?, signal: Int?, wallMs: Double,
                cpuUserMs: Double? = nil, cpuSystemMs: Double? = nil, peakRssKb: Int? = nil) {
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

public struct Thresholds: Codable, Sendable, Equatable {
    public var hangMs: Double
    public var reportMs: Double
    public var sampleHz: Double
    public var frameMs: Double?
    public init(hangMs: Double = 100, reportMs: Double = 250, sampleHz: Double = 1000, frameMs: Double? = nil) {
        self.hangMs = hangMs
        self.reportMs = reportMs
        self.sampleHz = sampleHz
        self.frameMs = frameMs
    }
}

public struct Summary: Codable, Sendable, Equatable {
    public var hangCount: Int
    public var reportedHangCount: Int
    public var totalHangMs: Double
    public var longestHangMs: Double
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

public struct ThreadRef: Codable, Sendable, Equatable, Hashable {
    public var tid: Int
    public var name: String
    /// `main-thread`, `main-queue` or `loop`.
    public var role: String
    public init(tid: Int, name: String, role: String = "main-thread") {
        self.tid = tid
        self.name = name
        self.role = role
    }
}

public enum HangKind: String, Codable, Sendable, Equatable {
    case cpu, blocked, mixed
}

public struct Hang: Codable, Sendable, Equatable {
    public var id: Int
    public var thread: ThreadRef
    /// Milliseconds from process start to the start of the busy period.
    public var startMs: Double
    public var durationMs: Double
    /// True when the hang reached the report threshold and carries evidence.
    public var reported: Bool
    /// True when the program ended or died while the hang was still going on.
    public var inProgress: Bool
    public var kind: HangKind
    /// For blocked and mixed hangs: the call the thread was waiting in most (`usleep`, `poll`, `read`, ...).
    public var blockedIn: String?
    public var sampleCount: Int
    /// Fraction (0...1) of the hang's duration covered by samples.
    public var sampleCoverage: Double
    public var callTree: CallTreeNode?
    public init(id: Int, thread: ThreadRef, startMs: Double, durationMs: Double, reported: Bool,
                inProgress: Bool, kind: HangKind, blockedIn: String?, sampleCount: Int,
                sampleCoverage: Double, callTree: CallTreeNode?) {
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

public struct Launch: Codable, Sendable, Equatable {
    public var durationMs: Double
    /// False for programs whose watched thread never waited (a batch job): the duration is then the whole run.
    public var reachedFirstWait: Bool
    public var sampleCount: Int
    public var callTree: CallTreeNode?
    public init(durationMs: Double, reachedFirstWait: Bool, sampleCount: Int, callTree: CallTreeNode?) {
        self.durationMs = durationMs
        self.reachedFirstWait = reachedFirstWait
        self.sampleCount = sampleCount
        self.callTree = callTree
    }
}

public struct FrameStats: Codable, Sendable, Equatable {
    /// The loop's name (thread name, or the name given to the library's frame monitor).
    public var name: String
    public var deadlineMs: Double
    public var frameCount: Int
    public var hitchCount: Int
    public var missedFrames: Int
    public var hitchMs: Double
    public var hitchRatioMsPerS: Double
    public var band: String
    public var p50Ms: Double
    public var p95Ms: Double
    public var p99Ms: Double
    public var maxMs: Double
    /// Frame-time histogram: upper bounds in ms and counts (the last bucket is open-ended).
    public var histogram: [HistogramBucket]
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

public struct HistogramBucket: Codable, Sendable, Equatable {
    /// Upper bound of the bucket in ms; nil for the last, open-ended one.
    public var upToMs: Double?
    public var count: Int
    public init(upToMs: Double?, count: Int) {
        self.upToMs = upToMs
        self.count = count
    }
}

/// One node of a top-down call tree: the root first, callees below their callers.
public struct CallTreeNode: Codable, Sendable, Equatable {
    public var symbol: String
    public var image: String
    public var weightMs: Double
    public var selfMs: Double
    public var sampleCount: Int
    public var children: [CallTreeNode]
    /// `path:line` where the node's function is defined (see `Frame.source`);
    /// null unless the run asked for source lines and the debug information had them.
    public var source: String?
    public init(symbol: String, image: String, weightMs: Double, selfMs: Double, sampleCount: Int,
                children: [CallTreeNode], source: String? = nil) {
        self.symbol = symbol
        self.image = image
        self.weightMs = weightMs
        self.selfMs = selfMs
        self.sampleCount = sampleCount
        self.children = children
        self.source = source
    }
}
