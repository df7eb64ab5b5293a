import Foundation
import HangWatchAnalysis
import HangWatchModel
import HangWatchRender
import HangWatchTestSupport
import Testing

// The exchange formats checked without their consumers; the validator-backed
// checks are in IntegrationTests/FormatValidatorTests.swift.

@Suite struct FoldedFormatTests {
    @Test func linesCarryEachStacksOwnSamplesRootFirst() {
        let text = FoldedFormat.render(FormatFixtures.report())
        #expect(text == """
            hang#1 (760 ms);main 5
            hang#1 (760 ms);main;Demo.run();Demo.parse() 50
            hang#1 (760 ms);main;Demo.run();Demo.parse();Demo.tokenize() 200
            hang#1 (760 ms);main;Demo.run();Demo.parse();Demo.checksum() 100
            hang#1 (760 ms);main;Demo.run();weird,name line2 20
            hang#2 (310 ms);[unknown] 3
            hang#2 (310 ms);start_thread;work 100
            hang#2 (310 ms);clone;mystery 50

            """)
    }

    @Test func countsParseBackToEachHangsSamples() throws {
        try FormatChecks.folded(FormatFixtures.report())
    }

    @Test func withoutHangFramesEqualStacksMerge() throws {
        var report = FormatFixtures.report()
        report.hangs[1].callTree = FormatFixtures.mainTree()  // two hangs, the same stacks
        let lines = try FoldedLine.parse(FoldedFormat.render(report, labelHangs: false))
        #expect(lines.count == 5)
        #expect(lines.first { $0.frames.last == "Demo.tokenize()" }?.count == 400)
        #expect(lines.reduce(0) { $0 + $1.count } == 750)
        #expect(lines.allSatisfy { $0.frames.first == "main" })
    }

    @Test func separatorsInsideSymbolsAreReplaced() {
        #expect(FoldedFormat.frameName("a;b\nc\r\nd") == "a,b c  d")
        #expect(FoldedFormat.frameName("") == "[unknown]")
        #expect(FoldedFormat.frameName("Swift.Array<Swift.Int>.sort(by: (Swift.Int, Swift.Int) -> Swift.Bool) -> ()")
                == "Swift.Array<Swift.Int>.sort(by: (Swift.Int, Swift.Int) -> Swift.Bool) -> ()")
    }

    @Test func noReportedHangsGiveNoLines() {
        #expect(FoldedFormat.render(FormatFixtures.empty) == "")
        let unreported = FormatFixtures.report().hangs.filter { !$0.reported }
        #expect(FoldedFormat.render(FormatFixtures.report(hangs: unreported)) == "")
    }

    /// A runaway recursion: one line, every level kept, no stack overflow.
    @Test func deepRecursionIsOneLine() throws {
        let frames = [FormatFixtures.frame("main")] + Array(repeating: FormatFixtures.frame("recurse"), count: 1000)
        let hang = Hang(id: 1, thread: ThreadRef(tid: 1, name: "main"), startMs: 0, durationMs: 300, reported: true,
                        inProgress: false, kind: .cpu, blockedIn: nil, sampleCount: 9, sampleCoverage: 1,
                        callTree: CallTreeBuilder.build([WeightedStack(frames: frames, weight: 9)], msPerSample: 1))
        let lines = try FoldedLine.parse(FoldedFormat.render(FormatFixtures.report(hangs: [hang])))
        #expect(lines.count == 1 && lines.first?.frames.count == 1002 && lines.first?.count == 9)
    }
}

/// The fields speedscope reads besides the profiles; no validator needed.
@Suite struct SpeedscopeFieldTests {
    @Test func fileHoldsExporterAndSchemaFields() throws {
        let object = try JSONSerialization.jsonObject(with: SpeedscopeFormat.render(FormatFixtures.report())) as? [String: Any]
        #expect(object?["$schema"] as? String == "https://www.speedscope.app/file-format-schema.json")
        #expect(object?["exporter"] as? String == "hangwatch@\(HangWatchVersion.string)")
        #expect(object?["activeProfileIndex"] as? Int == 0)
        #expect(object?["name"] as? String == "hangwatch: Demo (pid 100)")
    }
}
