import Foundation
import HangWatchAnalysis
import HangWatchModel
import HangWatchRender
import HangWatchTestSupport
import Testing

/// The markdown evidence report: audit layout, conclusions and escaping.
@Suite struct MarkdownTests {
    static func frame(_ symbol: String, _ image: String = "App") -> Frame { Frame(symbol: symbol, image: image) }

    static func hang(_ id: Int, ms: Double, _ stacks: [([Frame], Int)], coverage: Double = 0.95,
                     kind: HangKind = .cpu, blockedIn: String? = nil, thread: String = "main") -> Hang {
        let tree = CallTreeBuilder.build(stacks.map { WeightedStack(frames: $0.0, weight: $0.1) }, msPerSample: 1)
        return Hang(id: id, thread: ThreadRef(tid: 42, name: thread), startMs: Double(id) * 1000, durationMs: ms,
                    reported: ms >= 250, inProgress: false, kind: kind, blockedIn: blockedIn,
                    sampleCount: tree?.sampleCount ?? 0, sampleCoverage: ms >= 250 ? coverage : 0,
                    callTree: ms >= 250 ? tree : nil)
    }

    static func report(_ hangs: [Hang], wallMs: Double = 10_000, frames: FrameStats? = nil) -> Report {
        Report(process: ProcessInfoRecord(pid: 42, executable: "/opt/app/App", arguments: ["--mode", "it's busy"],
                                          exitCode: 0, signal: nil, wallMs: wallMs,
                                          cpuUserMs: 1400, cpuSystemMs: 100, peakRssKb: 20_480),
               thresholds: Thresholds(), summary: Summary(hangs: hangs), hangs: hangs, frames: frames)
    }

    static func lines(_ text: String) -> [String] { MarkdownText.lines(text) }

    static func section(_ text: String, _ title: String) -> String { MarkdownText.section(text, title) }

    /// main → work → memcpy[libc] 300, main → work 50, main → other 200: work owns 350 ms once libc is folded into it.
    static let workTree: [([Frame], Int)] = [
        ([frame("main"), frame("work"), frame("memcpy", "libc.so.6")], 300),
        ([frame("main"), frame("work")], 50),
        ([frame("main"), frame("other")], 200),
    ]

    @Test func auditLayoutInOrder() {
        let text = MarkdownRenderer.render(Self.report([Self.hang(1, ms: 560, Self.workTree)]))
        let headings = Self.lines(text).filter { $0.hasPrefix("#") }
        #expect(headings.first == "# Hang report: App")
        #expect(headings.filter { $0.hasPrefix("## ") } == ["## Summary", "## Findings", "## Metrics"])
        #expect(headings.contains { $0.hasPrefix("### 1. Hangs in `work` — 560.0 ms in 1 hang") }, "\(headings)")
        #expect(text == MarkdownRenderer.render(Self.report([Self.hang(1, ms: 560, Self.workTree)])), "deterministic")
    }

    @Test func summaryNamesTheHeaviestUserFrameNotTheSystemLibrary() {
        let text = MarkdownRenderer.render(Self.report([Self.hang(1, ms: 560, Self.workTree)]))
        let summary = Self.section(text, "Summary")
        // memcpy has the most raw self time, but it is libc's: its time is charged to `work`.
        #expect(summary.contains("The most likely bottleneck is `work` in `App`: 350.0 ms of self time"), "\(summary)")
        #expect(summary.contains("Backed by samples: 550 stack samples covering 95%"), "\(summary)")
        #expect(!summary.contains("memcpy"))

        let thin = MarkdownRenderer.render(Self.report([Self.hang(1, ms: 560, Self.workTree, coverage: 0.2)]))
        #expect(Self.section(thin, "Summary").contains("hypothesis"))
        #expect(Self.section(thin, "Summary").contains("samples cover 20%"))
    }

    @Test func findingsAreOrderedByHangTime() {
        let a = [([Self.frame("main"), Self.frame("slowA")], 100)]
        let b = [([Self.frame("main"), Self.frame("slowB")], 100)]
        let report = Self.report([Self.hang(1, ms: 300, a), Self.hang(2, ms: 500, b), Self.hang(3, ms: 400, a),
                                  Self.hang(4, ms: 150, [])])
        let findings = Self.lines(MarkdownRenderer.render(report)).filter { $0.hasPrefix("### ") }
        #expect(findings == ["### 1. Hangs in `slowA` — 700.0 ms in 2 hangs",
                             "### 2. Hangs in `slowB` — 500.0 ms in 1 hang",
                             "### 3. Hangs below the 250 ms report threshold — 150.0 ms in 1 hang"])
    }

    @Test func findingHasSymptomCauseEvidenceAndValidation() {
        let blocked = Self.hang(1, ms: 320, [([Self.frame("main"), Self.frame("loadFile"), Self.frame("read", "libc.so.6")], 300)],
                                kind: .blocked, blockedIn: "read")
        let text = MarkdownRenderer.render(Self.report([blocked]))
        let findings = Self.section(text, "Findings")
        #expect(findings.contains("- **Symptom:** the loop did not respond during hang #1 (320.0 ms) on main (tid 42)."))
        #expect(findings.contains("- **Likely cause:** the heaviest frames of the program's own code"))
        #expect(findings.contains("`loadFile` 300.0 ms (100%)"))
        #expect(findings.contains("The thread was blocked in `read`"))
        // Evidence: the raw heaviest path, libc frame included, in a fenced block.
        let fenced = Self.lines(findings).filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("```") }
        #expect(fenced.count == 4, "two fenced blocks: evidence and commands")
        #expect(findings.contains("300.0 ms  100.0%   300.0 ms    read [libc.so.6]"), "\(findings)")
        #expect(findings.contains("hangwatch run --format json -o after.json -- /opt/app/App --mode 'it'\\''s busy'"))
        #expect(findings.contains("hangwatch diff before.json after.json"))
    }

    @Test func metricsTable() throws {
        let hangs = [Self.hang(1, ms: 500, Self.workTree), Self.hang(2, ms: 200, []), Self.hang(3, ms: 400, Self.workTree)]
        let text = MarkdownRenderer.render(Self.report(hangs))
        let rows = Self.lines(Self.section(text, "Metrics")).filter { $0.hasPrefix("| ") }
        func value(_ metric: String) -> String? {
            rows.first { $0.hasPrefix("| \(metric) |") }?.split(separator: "|").dropFirst().first
                .map { $0.trimmingCharacters(in: .whitespaces) }
        }
        #expect(value("Hangs") == "3")
        #expect(value("Longest hang") == "500.0 ms")
        #expect(value("Total hang time") == "1100.0 ms")
        // Only the 500 and 400 ms hangs count: 900 ms over 10 s of wall time is 324 s per hour.
        #expect(value("Hang rate") == "324.0 s/hour")
        #expect(value("Hitch ratio") == "n/a")
        #expect(value("CPU time") == "1.50 s")
        #expect(value("Peak memory") == "20.0 MiB")

        let frames = FrameStats(name: "main", deadlineMs: 16.667, frameCount: 600, hitchCount: 6, missedFrames: 9,
                                hitchMs: 83, hitchRatioMsPerS: 8.3, band: "warning", p50Ms: 8, p95Ms: 15, p99Ms: 30, maxMs: 90)
        let withFrames = MarkdownRenderer.render(Self.report(hangs, frames: frames))
        #expect(withFrames.contains("| Hitch ratio | 8.3 ms/s | warning; 6 of 600 frames missed the 16.7 ms deadline"))
    }

    @Test func noHangsSaysSo() {
        let text = MarkdownRenderer.render(Self.report([]))
        #expect(Self.section(text, "Summary").contains("No hang of 100 ms or more was seen in 10.00 s"))
        #expect(Self.section(text, "Findings").contains("No findings"))
    }

    /// Names come from the program or from a file: none may break the document's structure.
    @Test func hostileNamesCannotBreakTheDocument() {
        let evil = "evil`` | *name* _x_\n# injected heading\r\n<script>"
        let hang = Self.hang(1, ms: 400, [([Self.frame("main"), Self.frame(evil, "lib|x`.so")], 100)], thread: "t|h*r_e`ad\n#")
        let text = MarkdownRenderer.render(Self.report([hang]))
        let lines = Self.lines(text)
        #expect(!lines.contains { $0.hasPrefix("# injected") })
        #expect(lines.filter { $0.hasPrefix("# ") }.count == 1)
        // Fences: every block closes with the fence it opened.
        var open: String?
        for line in lines.map({ $0.trimmingCharacters(in: .whitespaces) }) where line.hasPrefix("```") {
            let fence = String(line.prefix { $0 == "`" })
            if let current = open { if fence == current { open = nil } } else { open = fence }
        }
        #expect(open == nil, "a code fence was left open")
        // The finding title carries the symbol in a code span long enough for the `` inside it.
        #expect(text.contains("```evil`` | *name* _x_ # injected heading  <script>```"), "\(text)")
        // Table rows keep their three columns: every pipe inside a cell is escaped.
        for row in lines where row.hasPrefix("| ") {
            var unescaped = 0
            var previous: Character = " "
            for character in row {
                if character == "|" && previous != "\\" { unescaped += 1 }
                previous = character
            }
            #expect(unescaped == 4, "\(row)")
        }
        #expect(text.contains("t\\|h\\*r\\_e\\`ad \\#"))
    }
}
