import Foundation
import HangWatchAnalysis
import HangWatchModel
import HangWatchRender
import Testing

/// Pool and job hangs in the report model, the JSON file and the text report.
@Suite struct PoolReportTests {
    static func tree(_ leaf: String) -> CallTreeNode {
        CallTreeBuilder.build([WeightedStack(frames: [Frame(symbol: "worker", image: "app"),
                                                      Frame(symbol: leaf, image: "app")], weight: 40)], msPerSample: 1)!
    }

    static func report() -> Report {
        let job1 = Hang(id: 1, thread: ThreadRef(tid: 11, name: "oot.default-qos", role: Hang.jobRole), startMs: 10,
                        durationMs: 402, reported: true, inProgress: false, kind: .blocked, blockedIn: "usleep",
                        sampleCount: 40, sampleCoverage: 0.9, callTree: tree("readConfig"), cpuMs: 1)
        var job2 = job1
        (job2.id, job2.thread.tid, job2.callTree, job2.startMs) = (3, 12, tree("hashPasswords"), 11)
        (job2.kind, job2.blockedIn, job2.cpuMs, job2.durationMs) = (.cpu, nil, 400, 401)
        let threads = [PoolThread(tid: 11, name: "oot.default-qos", state: "blocked", blockedIn: "usleep",
                                  jobHangId: 1, cpuMs: 1, callTree: job1.callTree),
                       PoolThread(tid: 12, name: "oot.default-qos", state: "running", blockedIn: nil,
                                  jobHangId: 3, cpuMs: 400, callTree: job2.callTree)]
        let pool = Hang(id: 2, thread: ThreadRef(tid: 0, name: "cooperative pool (2 threads)",
                                                 role: Hang.cooperativePoolRole),
                        startMs: 11, durationMs: 400, reported: true, inProgress: false, kind: .mixed,
                        blockedIn: "usleep", sampleCount: 80, sampleCoverage: 0.9, callTree: nil, poolThreads: threads,
                        poolJobWaitMs: 212)
        return HangStateUnitTests.report([job1, pool, job2])
    }

    /// A job seen waiting for a thread: said in the text and Markdown from a
    /// millisecond on, and in the file whatever its length (null elsewhere).
    @Test func aJobsWaitForAThreadIsToldWhereItMatters() throws {
        var report = Self.report()
        let line = "a job waited at least 212.0 ms for a thread"
        #expect(TextRenderer.render(report).contains(line))
        #expect(MarkdownRenderer.render(report).contains("a job waited at least 212.0 ms"))
        let object = try #require(JSONSerialization.jsonObject(with: JSONReport.encode(report)) as? [String: Any])
        let hangs = try #require(object["hangs"] as? [[String: Any]])
        #expect(hangs[0]["poolJobWaitMs"] is NSNull)
        #expect(hangs[1]["poolJobWaitMs"] as? Double == 212)
        report.hangs[1].poolJobWaitMs = 0.006
        #expect(!TextRenderer.render(report).contains("a job waited"))
        #expect(!MarkdownRenderer.render(report).contains("a job waited"))
        #expect(try JSONReport.decode(JSONReport.encode(report)).hangs[1].poolJobWaitMs == 0.006)
    }

    @Test func thePoolHangListsEveryThreadWithItsStateAndTree() {
        let text = TextRenderer.render(Self.report())
        #expect(text.contains("pool (2 threads)"))
        #expect(text.contains("job oot.default-qos (11)"))
        #expect(text.contains("Hang #2 — 400.0 ms on the cooperative pool (2 threads)"))
        #expect(text.contains("tid 11 oot.default-qos: blocked in usleep, its job is hang #1"))
        #expect(text.contains("tid 12 oot.default-qos: running, its job is hang #3"))
        #expect(text.contains("readConfig") && text.contains("hashPasswords"))
        #expect(text.contains("on oot.default-qos (tid 11) in one job"))
    }

    @Test func poolThreadsSurviveTheFileAndAreNullElsewhere() throws {
        let report = Self.report()
        let data = try JSONReport.encode(report)
        #expect(try JSONReport.decode(data) == report)
        let object = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        let hangs = try #require(object["hangs"] as? [[String: Any]])
        #expect(hangs[0]["poolThreads"] is NSNull)
        let threads = try #require(hangs[1]["poolThreads"] as? [[String: Any]])
        #expect(Set(threads[0].keys) == ["tid", "name", "state", "blockedIn", "jobHangId", "cpuMs", "callTree"])
        #expect((hangs[1]["thread"] as? [String: Any])?["role"] as? String == "cooperative-pool")
    }

    @Test func aVersion3FileIsStillRead() throws {
        var object = try #require(JSONSerialization.jsonObject(with: JSONReport.encode(HangStateUnitTests.report(
            [Self.report().hangs[0]]))) as? [String: Any])
        object["schemaVersion"] = 3
        var hangs = try #require(object["hangs"] as? [[String: Any]])
        hangs[0]["poolThreads"] = nil
        object["hangs"] = hangs
        let read = try JSONReport.decode(JSONSerialization.data(withJSONObject: object))
        #expect(read.schemaVersion == 3)
        #expect(read.hangs.first?.poolThreads == nil)
        #expect(read.hangs.first?.thread.role == Hang.jobRole)
    }

    @Test func numberingKeepsThePoolThreadsJobIds() {
        var report = Self.report()
        for i in report.hangs.indices { report.hangs[i].id = 10 + i } // ids as built: jobs 10 and 12
        report.hangs[1].poolThreads?[0].jobHangId = 10
        report.hangs[1].poolThreads?[1].jobHangId = 12
        let numbered = ReportBuilder.numbered(report.hangs.reversed())
        #expect(numbered.map(\.id) == [1, 2, 3])
        #expect(numbered[1].thread.role == Hang.cooperativePoolRole) // starts with the second job, listed before it
        #expect(numbered[1].poolThreads?.map(\.jobHangId) == [1, 3])
    }

    @Test func markdownGivesThePoolAFindingOfItsOwn() {
        var report = Self.report()
        report.hangs[1].callTree = Self.tree("readConfig") // a pool tree runs through its jobs' functions
        let findings = HangFinding.group(report)
        let pool = findings.filter(\.isPool)
        #expect(pool.count == 1 && pool.first?.hangs.map(\.id) == [2])
        #expect(!findings.filter { !$0.isPool }.flatMap(\.hangs).contains { $0.thread.role == Hang.cooperativePoolRole })
        let markdown = MarkdownRenderer.render(report)
        #expect(markdown.contains("Cooperative pool starved: "))
        #expect(markdown.contains("every thread of the cooperative pool was taken during hang #2"))
        #expect(markdown.contains("a job ran without returning to its executor"))
    }

    @Test func theTimelineHasALaneForThePoolAndForEachThreadsJobs() {
        let html = HTMLReport.render(Self.report())
        #expect(html.contains("'cooperative-pool': 'every pool thread taken'"))
        #expect(html.contains("`${thread.role}:${thread.tid}`"))
    }
}
