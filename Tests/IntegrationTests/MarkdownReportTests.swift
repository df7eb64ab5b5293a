import Foundation
import HangWatch
import HangWatchAnalysis
import HangWatchRender
import HangWatchSymbols
import HangWatchTestSupport
import Testing

extension Integration {
    /// The markdown report of a real run.
    @Suite struct MarkdownReport {
        @Test func markdownOfTheStandardDemo() throws {
            let file = try DemoReports.file(DemoReports.standard)
            let r = try hangwatch(["report", file, "--format", "markdown"])
            #expect(r.status == 0, "\(r.stderr)")
            let text = r.stdout
            let findings = MarkdownText.lines(text).filter { $0.hasPrefix("### ") }
            // The 420 ms parse costs the most, then the 300 ms render, then the unsampled 150 ms refresh.
            #expect(findings.count == 3, "\(findings)")
            // The parse spends ~40% in tokenize (see Demos/README.md); sampling noise may tip that over half.
            #expect(["parseLargeDocument", "tokenize"].contains { findings.first?.contains($0) == true }, "\(findings)")
            #expect(findings.dropFirst().first?.contains("renderThumbnails") == true, "\(findings)")
            #expect(findings.last?.contains("below the 250 ms report threshold") == true)
            let summary = MarkdownText.section(text, "Summary")
            let demoFunctions = ["parseLargeDocument", "tokenize", "checksum", "renderThumbnails"]
            #expect(demoFunctions.contains { summary.contains("The most likely bottleneck is `\($0)") }, "\(summary)")
            #expect(MarkdownText.section(text, "Metrics").contains("| Hangs | 3 |"))
            #expect(text.contains("hangwatch diff before.json after.json"))
            #expect(text.contains("-- \(TestPaths.runLoopDemo) --scenario standard"))
        }
    }
}
