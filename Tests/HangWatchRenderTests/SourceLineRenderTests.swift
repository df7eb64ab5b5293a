import Foundation
import HangWatchAnalysis
import HangWatchModel
import HangWatchRender
import HangWatchTestSupport
import Testing

/// Sources carried through call trees, the JSON file and the text report.
@Suite struct SourceLineRenderTests {
    // MARK: trees, JSON and text

    static let demo = "/opt/app/RunLoopDemo"
    static let main = Frame(symbol: "main", image: demo, source: "/src/Demo/main.swift:1")
    static let parse = Frame(symbol: "RunLoopDemo.parseLargeDocument() -> ()", image: demo, source: "/src/Demo/Work.swift:66")
    static let tokenize = Frame(symbol: "RunLoopDemo.tokenize(_: Swift.UnsafeBufferPointer<Swift.UInt8>, until: Swift.UInt64) -> Swift.UInt64",
                                image: demo, source: "/src/Demo/Work.swift:100")
    static let usleep = Frame(symbol: "usleep", image: "/lib/libc.so.6")

    static func report(_ tree: CallTreeNode?) -> Report {
        let hang = Hang(id: 1, thread: ThreadRef(tid: 7, name: "main"), startMs: 10, durationMs: 420, reported: true,
                        inProgress: false, kind: .cpu, blockedIn: nil, sampleCount: 420, sampleCoverage: 1, callTree: tree)
        return Report(process: ProcessInfoRecord(pid: 7, executable: demo, arguments: [], exitCode: 0, signal: nil, wallMs: 900),
                      thresholds: Thresholds(), summary: Summary(hangs: [hang]), hangs: [hang])
    }

    static func tree() throws -> CallTreeNode {
        try #require(CallTreeBuilder.build([
            WeightedStack(frames: [main, parse, tokenize], weight: 200),
            WeightedStack(frames: [main, parse], weight: 150),
            WeightedStack(frames: [main, parse, usleep], weight: 70),
        ], msPerSample: 1))
    }

    @Test func treesCarryTheSourceWithoutSplittingNodes() throws {
        var sourceless = Self.parse
        sourceless.source = nil
        let tree = try #require(CallTreeBuilder.build([
            WeightedStack(frames: [Self.main, Self.parse], weight: 3),
            // The same function seen without a source merges into the node; its first frame's source stays.
            WeightedStack(frames: [Self.main, sourceless], weight: 2),
        ], msPerSample: 1))
        #expect(tree.source == "/src/Demo/main.swift:1")
        #expect(tree.children.count == 1)
        #expect(tree.children.first?.sampleCount == 5)
        #expect(tree.children.first?.source == "/src/Demo/Work.swift:66")

        // The text view collapses direct recursion; the merged node keeps its source.
        let recursive = try #require(CallTreeBuilder.build([
            WeightedStack(frames: [Self.main, Self.parse, Self.parse, Self.tokenize], weight: 4),
        ], msPerSample: 1)).collapsingDirectRecursion()
        #expect(recursive.children.first?.source == "/src/Demo/Work.swift:66")
        #expect(recursive.children.first?.children.first?.source == "/src/Demo/Work.swift:100")
    }

    @Test func jsonWritesSourcesAndNullsAndReadsOlderFiles() throws {
        let report = Self.report(try Self.tree())
        let text = String(decoding: try JSONReport.encode(report), as: UTF8.self)
        #expect(text.contains(#""source" : "/src/Demo/Work.swift:66""#))
        #expect(text.contains(#""source" : null"#), "usleep has no source and must say so")
        #expect(try JSONReport.decode(JSONReport.encode(report)) == report)

        // A file written before sources existed has no "source" key at all.
        let older = text.split(separator: "\n").filter { !$0.contains(#""source" : "#) }.joined(separator: "\n")
        #expect(!older.contains("source"))
        let decoded = try JSONReport.decode(Data(older.utf8))
        #expect(SourceFacts.nodes(decoded).allSatisfy { $0.source == nil })
        #expect(decoded.hangs.first?.callTree?.sampleCount == 420)
    }

    @Test func textShowsTheFileNameAndLineAfterTheImage() throws {
        let lines = TextRenderer.render(Self.report(try Self.tree()), width: 100).split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasSuffix("  main [RunLoopDemo main.swift:1]") }, "\(lines)")
        #expect(lines.contains { $0.hasSuffix("    parseLargeDocument() [RunLoopDemo Work.swift:66]") })
        #expect(lines.contains { $0.hasSuffix("      tokenize(_:until:) [RunLoopDemo Work.swift:100]") })
        #expect(lines.contains { $0.hasSuffix("      usleep [libc.so.6]") })
        #expect(!lines.contains { $0.contains("/src/Demo") }, "the text shows file names, not paths")
    }

    /// Every line fits; as room shrinks the source goes before the symbol is cut.
    @Test(arguments: [40, 50, 60, 70, 80, 100, 140])
    func textWithSourcesFitsTheWidth(width: Int) throws {
        let text = TextRenderer.render(Self.report(try Self.tree()), width: width)
        let lines = text.split(separator: "\n").map(String.init)
        for line in lines {
            #expect(line.count <= width, "\(line.count) > \(width): \(line)")
        }
        // A source is shown whole, after the whole image, or not at all.
        let wholeSources = [" Work.swift:66]", " Work.swift:100]", " main.swift:1]"]
        for line in lines {
            guard let open = line.lastIndex(of: "["), line[open...].contains(".swift") else { continue }
            let bracket = line[open...]
            #expect(bracket.hasPrefix("[RunLoopDemo ") && wholeSources.contains { bracket.hasSuffix($0) },
                    "width \(width): \(line)")
        }
        // From 80 columns on there is room for the whole name and its source.
        if width >= 80 {
            #expect(lines.contains { $0.hasSuffix("    parseLargeDocument() [RunLoopDemo Work.swift:66]") }, "\(text)")
        }
    }
}
