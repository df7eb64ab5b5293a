import Foundation
import HangWatchAnalysis
import HangWatchCapture
import HangWatchModel
import HangWatchRender
import Testing

/// The kind thresholds and the JSON of the new fields, without running anything.
@Suite struct HangStateUnitTests {
    static func window(spanMs: Double, cpuMs: Double, runqMs: Double?) -> CPUWindow {
        CPUWindow(osTid: 1, firstNs: 1_000_000_000, lastNs: 1_000_000_000 + UInt64(spanMs * 1e6),
                  firstCPUNs: 5_000_000, lastCPUNs: 5_000_000 + UInt64(cpuMs * 1e6),
                  firstRunqNs: runqMs.map { _ in 0 }, lastRunqNs: runqMs.map { UInt64($0 * 1e6) })
    }

    @Test func sharesOverTheMeasuredWindows() throws {
        let two = [Self.window(spanMs: 100, cpuMs: 50, runqMs: 10), Self.window(spanMs: 300, cpuMs: 30, runqMs: 30)]
        let shares = try #require(HangStateAnalysis.measure(two))
        #expect(abs(shares.cpuShare - 0.2) < 1e-9)
        #expect(abs((shares.runqShare ?? -1) - 0.1) < 1e-9)
        #expect(HangStateAnalysis.measure([Self.window(spanMs: 100, cpuMs: 10, runqMs: nil)])?.runqShare == nil)
        // Too short a window says nothing: the sample-based kind is used instead.
        #expect(HangStateAnalysis.measure([Self.window(spanMs: 2, cpuMs: 1, runqMs: 0)]) == nil)
    }

    /// Time neither running nor runnable while no tick found the thread asleep is
    /// stolen time (the CI's VM lends its CPUs out): the hang is CPU work.
    /// Ticks of a hang: `running` of them found the thread running, `blocked` found it in futex.
    static func ticks(running: Int, blocked: Int) -> BlockedProfile {
        BlockedProfile(samples: [CapturedSample(timeNs: 0, source: .signal, call: BlockedCall(code: -1), stack: 0, weight: running,
                                                truncated: false)]
            + (blocked == 0 ? [] : [CapturedSample(timeNs: 1, source: .blockedSyscall, call: BlockedCall(code: 202), stack: 1,
                                                   weight: blocked, truncated: false)]))
    }

    @Test func stolenTimeIsNotSleep() {
        func kind(_ shares: HangStateAnalysis.Shares, running: Int, blocked: Int, complete: Bool = true,
                  blockedComplete: Bool? = nil) -> HangKind {
            HangStateAnalysis.kind(shares, ticks: Self.ticks(running: running, blocked: blocked), ticksComplete: complete,
                                   blockedTicksComplete: blockedComplete)
        }
        let shares = HangStateAnalysis.Shares(cpuShare: 0.65, runqShare: 0.05)
        #expect(kind(shares, running: 200, blocked: 0) == .cpu)
        // Sleep shows in the ticks: the share stands, when the ticks found the
        // thread asleep as often as a mixed hang is (a fifth of them or more).
        #expect(kind(shares, running: 200, blocked: 60) == .mixed)
        #expect(kind(shares, running: 200, blocked: 50) == .mixed)
        // A tick or a few asleep (a page fault) in a CPU hang that lost CPU time: cpu.
        #expect(kind(shares, running: 200, blocked: 1) == .cpu)
        #expect(kind(shares, running: 200, blocked: 49) == .cpu)
        // Ticks left unsampled or samples lost: they cannot show the sleep.
        #expect(kind(shares, running: 200, blocked: 0, complete: false) == .mixed)
        #expect(kind(shares, running: 200, blocked: 0, complete: false, blockedComplete: false) == .mixed)
        // Only running ticks lost (the kernel's ring read late): the ticks asleep
        // are all there, and their share of what is left is an upper bound.
        #expect(kind(shares, running: 200, blocked: 10, complete: false, blockedComplete: true) == .cpu)
        #expect(kind(shares, running: 150, blocked: 50, complete: false, blockedComplete: true) == .mixed)
        // Too few ticks to tell.
        #expect(kind(shares, running: 20, blocked: 0) == .mixed)
        // A blocked share is never taken for steal; a CPU share needs no ticks.
        #expect(kind(.init(cpuShare: 0.1, runqShare: 0), running: 200, blocked: 0) == .blocked)
        #expect(kind(.init(cpuShare: 0.75, runqShare: 0.1), running: 0, blocked: 0) == .cpu)
    }

    /// A hang whose thread no sample and no clock reached is `unknown`, not
    /// `cpu` (the library's probe once called an unsampled 300 ms sleep `cpu`).
    @Test func nothingMeasuredIsUnknown() {
        let none = BlockedProfile(samples: [])
        #expect(none.kind == .unknown && none.mainCall == nil)
        #expect(Self.ticks(running: 3, blocked: 0).kind == .cpu)
        #expect(Self.ticks(running: 0, blocked: 3).kind == .blocked)
    }

    /// Run-queue time the ticks contradict is taken out: a thread found blocked at
    /// every tick was not waiting for a CPU (CI saw a 300 ms pthread_join read as
    /// 300 ms runnable, a `cpu` hang).
    @Test func runnableTimeTheTicksContradictIsTakenOut() {
        let read = HangStateAnalysis.Shares(cpuShare: 0.001, runqShare: 0.998)
        let parked = Self.ticks(running: 0, blocked: 237)
        let allBlocked = HangStateAnalysis.checked(read, ticks: parked, ticksComplete: true)
        #expect(allBlocked.runqShare == 0 && allBlocked.cpuShare == 0.001)
        #expect(HangStateAnalysis.kind(allBlocked, ticks: parked, ticksComplete: true) == .blocked)
        // Runnable time the ticks allow stays: a CPU-bound thread on a crowded machine.
        let crowded = HangStateAnalysis.Shares(cpuShare: 0.5, runqShare: 0.45)
        let busy = Self.ticks(running: 150, blocked: 3)
        #expect(HangStateAnalysis.checked(crowded, ticks: busy, ticksComplete: true).runqShare == 0.45)
        // Incomplete or too few ticks: schedstat stands.
        #expect(HangStateAnalysis.checked(read, ticks: parked, ticksComplete: false).runqShare == 0.998)
        let few = Self.ticks(running: 0, blocked: 20)
        #expect(HangStateAnalysis.checked(read, ticks: few, ticksComplete: true).runqShare == 0.998)
    }

    static func hang(blockedIn: String?) -> Hang {
        let owner = CallTreeNode(symbol: "holder_compute", image: "demo", weightMs: 300, selfMs: 300, sampleCount: 300, children: [])
        return Hang(id: 1, thread: ThreadRef(tid: 10, name: "main"), startMs: 100, durationMs: 350, reported: true,
                    inProgress: false, kind: .blocked, blockedIn: blockedIn, sampleCount: 350, sampleCoverage: 1,
                    callTree: CallTreeNode(symbol: "wait_for_lock", image: "demo", weightMs: 350, selfMs: 350, sampleCount: 350,
                                           children: []), cpuMs: 0.2, runnableMs: 0, blockedSymbol: "wait_for_lock",
                    lockOwner: LockOwner(tid: 11, name: "lock-holder", evidence: "mutex", callTree: owner),
                    runningThreads: [RunningThread(tid: 12, name: "worker", cpuMs: 3)])
    }

    static func report(_ hangs: [Hang]) -> Report {
        Report(process: ProcessInfoRecord(pid: 1, executable: "demo", arguments: [], exitCode: 0, signal: nil, wallMs: 700),
               thresholds: Thresholds(), summary: Summary(hangs: hangs), hangs: hangs)
    }

    @Test func nodesSplitRunningFromWaiting() throws {
        let f = { (s: String) in Frame(symbol: s, image: "demo") }
        let stacks = [WeightedStack(frames: [f("main"), f("work")], weight: 30),
                      WeightedStack(frames: [f("main"), f("lock"), f("futex")], weight: 50, waiting: true),
                      WeightedStack(frames: [f("main"), f("lock")], weight: 5)]
        let tree = try #require(CallTreeBuilder.build(stacks, msPerSample: 1, tracksWaiting: true))
        #expect(tree.waitingMs == 50)
        #expect(tree.children.first { $0.symbol == "lock" }?.waitingMs == 50)
        #expect(tree.children.first { $0.symbol == "work" }?.waitingMs == 0)
        #expect(CallTreeBuilder.build(stacks, msPerSample: 1)?.waitingMs == nil)  // unknown unless asked for
        let text = CallTreeText(width: 100).lines(for: tree).joined(separator: "\n")
        #expect(text.contains("Waiting"), "\(text)")
    }

    /// `report --inverted` of a blocked hang read back from its file: the wait
    /// (`usleep`) is the first row and keeps its self and waiting time. 997 Hz
    /// makes the file's 3-decimal milliseconds inexact, as real files are.
    @Test func invertedBlockedHangShowsTheWaitFirstThroughAFile() throws {
        let f = { (s: String) in Frame(symbol: s, image: "demo") }
        let stacks = [WeightedStack(frames: [f("main"), f("waitForDisk"), Frame(symbol: "usleep", image: "libc.so.6")],
                                    weight: 311, waiting: true),
                      WeightedStack(frames: [f("main"), f("waitForDisk")], weight: 4)]
        var hang = Self.hang(blockedIn: "usleep")
        (hang.lockOwner, hang.blockedSymbol) = (nil, "waitForDisk")
        hang.callTree = try #require(CallTreeBuilder.build(stacks, msPerSample: 1000 / 997, tracksWaiting: true))
        var report = Self.report([hang])
        report.thresholds = Thresholds(sampleHz: 997)
        let read = try JSONReport.decode(JSONReport.encode(report))
        let text = TextRenderer.render(ReportFilterSet(inverted: true).apply(to: read), width: 100)
        let rows = text.split(separator: "\n").map(String.init)
        let header = try #require(rows.firstIndex { $0.hasSuffix("Waiting  Symbol") }, "\(text)")
        #expect(rows.dropFirst(header + 1).prefix(6) == [
            "  315.9 ms  100.0%    0.0 ms  311.9 ms  <all>",
            "  311.9 ms   98.7%  311.9 ms  311.9 ms    usleep [libc.so.6]",
            "  311.9 ms   98.7%    0.0 ms  311.9 ms      waitForDisk [demo]",
            "  311.9 ms   98.7%    0.0 ms  311.9 ms        main [demo]",
            "    4.0 ms    1.3%    4.0 ms    0.0 ms    waitForDisk [demo]",
            "    4.0 ms    1.3%    0.0 ms    0.0 ms      main [demo]",
        ], "\(text)")
    }

    @Test func versionTwoRoundTrips() throws {
        let report = Self.report([Self.hang(blockedIn: "futex")])
        let data = try JSONReport.encode(report)
        let object = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        let hang = try #require((object["hangs"] as? [[String: Any]])?.first)
        let blocked = try #require(hang["blockedIn"] as? [String: Any])
        #expect(blocked["syscall"] as? String == "futex")
        #expect(blocked["symbol"] as? String == "wait_for_lock")
        #expect((hang["lockOwner"] as? [String: Any])?["name"] as? String == "lock-holder")
        #expect(try JSONReport.decode(data) == report)
    }

    /// `unknown` goes through the file and the renderers as itself.
    @Test func anUnknownKindIsWrittenReadAndShown() throws {
        var hang = Self.hang(blockedIn: "usleep")
        hang.kind = .unknown
        (hang.blockedIn, hang.blockedSymbol, hang.lockOwner, hang.cpuMs) = (nil, nil, nil, nil)
        let report = Self.report([hang])
        let data = try JSONReport.encode(report)
        let object = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((object["hangs"] as? [[String: Any]])?.first?["kind"] as? String == "unknown")
        #expect(object["schemaVersion"] as? Int == JSONReport.schemaVersion)
        #expect(try JSONReport.decode(data) == report)
        #expect(TextRenderer.render(report).contains("unknown"))
    }

    @Test func versionOneFilesStillRead() throws {
        var v1 = try #require(JSONSerialization.jsonObject(with: JSONReport.encode(Self.report([Self.hang(blockedIn: "usleep")])))
                              as? [String: Any])
        v1["schemaVersion"] = 1
        var hang = try #require((v1["hangs"] as? [[String: Any]])?.first)
        hang["blockedIn"] = "usleep"
        for key in ["cpuMs", "runnableMs", "lockOwner", "runningThreads"] { hang[key] = nil }
        v1["hangs"] = [hang]
        let read = try JSONReport.decode(JSONSerialization.data(withJSONObject: v1))
        #expect(read.hangs.first?.blockedIn == "usleep")
        #expect(read.hangs.first?.blockedSymbol == nil)
        #expect(read.hangs.first?.lockOwner == nil)
        #expect(read.hangs.first?.cpuMs == nil)
    }

    @Test func reportsSayWhoHeldTheLock() throws {
        let report = Self.report([Self.hang(blockedIn: "futex")])
        let text = TextRenderer.render(report)
        #expect(text.contains("held by thread 11 (lock-holder), which was doing holder_compute"), "\(text)")
        #expect(text.contains("blocked in futex, called from wait_for_lock"))
        #expect(text.contains("on a CPU 0.2 ms of 350.0 ms"), "\(text)")
        let markdown = MarkdownRenderer.render(report)
        #expect(markdown.contains("waited for a lock held by thread 11 (lock-holder), which was doing `holder_compute`: look at that thread"),
                "\(markdown)")
    }
}
