import HangWatchAnalysis
import HangWatchModel
import HangWatchRender
import Testing

/// Findings name the caller that tells hangs apart when their time is in a
/// shared helper (issue 9, item 4).
@Suite struct DistinguishingFrameTests {
    static func hang(_ id: Int, caller: String) -> Hang {
        let f = { (s: String) in Frame(symbol: s, image: "app") }
        let stacks = [WeightedStack(frames: [f("main"), f(caller), f("burn(ms:)")], weight: 300),
                      WeightedStack(frames: [f("main"), f(caller), f("memcpy")], weight: 10)]
        let tree = CallTreeBuilder.build(stacks, msPerSample: 1)
        return Hang(id: id, thread: ThreadRef(tid: 1, name: "main"), startMs: Double(id) * 1000, durationMs: 310,
                    reported: true, inProgress: false, kind: .cpu, blockedIn: nil, sampleCount: 310,
                    sampleCoverage: 1, callTree: tree)
    }

    static func report(_ hangs: [Hang]) -> Report {
        Report(process: ProcessInfoRecord(pid: 1, executable: "app", arguments: [], exitCode: 0, signal: nil, wallMs: 5000),
               thresholds: Thresholds(), summary: Summary(hangs: hangs), hangs: hangs)
    }

    @Test func sharedHelperIsChargedToTheCallerThatDiffers() {
        let findings = HangFinding.group(Self.report([Self.hang(1, caller: "loadA()"), Self.hang(2, caller: "loadB()"),
                                                      Self.hang(3, caller: "loadA()")]))
        let names = findings.map { finding -> String in
            if case .code(let frame) = finding.cause { return frame.symbol }
            return "?"
        }
        #expect(names == ["loadA()", "loadB()"], "\(names)")
        #expect(findings.first?.hangs.map(\.id) == [1, 3])
    }

    @Test func identicalPathsStayOneFinding() {
        let findings = HangFinding.group(Self.report([Self.hang(1, caller: "loadA()"), Self.hang(2, caller: "loadA()")]))
        #expect(findings.count == 1)
        if case .code(let frame)? = findings.first?.cause { #expect(frame.symbol == "burn(ms:)") }
        else { Issue.record("not a code finding") }
    }
}
