import Foundation
import HangWatch
import HangWatchAnalysis
import HangWatchRender
import HangWatchSymbols
import HangWatchTestSupport
import Testing

extension Integration {
    /// `hangwatch diff` on real runs: the standard demo before, the qsort demo after.
    @Suite struct DiffCommand {
        @Test func diffShowsTheChangeBetweenTwoRealRuns() throws {
            let before = try DemoReports.standard.get().report
            let after = try DemoReports.qsort.get().report
            let beforeFile = try DemoReports.file(DemoReports.standard)
            let afterFile = try DemoReports.file(DemoReports.qsort)

            let json = try hangwatch(["diff", beforeFile, afterFile, "--format", "json"])
            #expect(json.status == 0, "\(json.stderr)")
            let object = try #require(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            let metrics = try #require(object["metrics"] as? [String: [String: Any]])
            #expect(metrics["hangCount"]?["before"] as? Double == Double(before.hangs.count))
            #expect(metrics["hangCount"]?["after"] as? Double == Double(after.hangs.count))
            #expect(before.hangs.count == 3 && after.hangs.count == 1, "the demos' known hangs")
            #expect(metrics["hangCount"]?["change"] as? Double == -2)
            #expect(metrics["cpuMs"]?["before"] as? Double != nil, "run records CPU time")
            let symbols = try #require(object["symbols"] as? [[String: Any]])
            func change(_ name: String) -> Double? {
                symbols.first { row in
                    ([row["symbol"] as? String ?? ""] + (row["sameChange"] as? [String] ?? [])).contains { $0.contains(name) }
                }?["changeMs"] as? Double
            }
            #expect(try #require(change("parseLargeDocument")) < -100, "\(symbols.map { $0["symbol"] ?? "" })")
            #expect(try #require(change("sortRecords")) > 100)

            let text = try hangwatch(["diff", beforeFile, afterFile])
            #expect(text.status == 0)
            let hangsRow = try #require(text.stdout.split(separator: "\n").first { $0.hasPrefix("Hangs ") })
            #expect(hangsRow.split(separator: " ").map(String.init) == ["Hangs", "3", "1", "-2", "-66.7%"])
            #expect(text.stdout.contains("parseLargeDocument"))

            let scratch = try TestPaths.scratch()
            let out = scratch.appendingPathComponent("diff.md").path
            let markdown = try hangwatch(["diff", beforeFile, afterFile, "--format", "markdown", "-o", out])
            #expect(markdown.status == 0)
            #expect(markdown.stdout.isEmpty)
            let md = try String(contentsOfFile: out, encoding: .utf8)
            #expect(md.contains("| Metric | Before | After | Change | Change % |"))
            #expect(md.contains("| Hangs | 3 | 1 | -2 | -66.7% |"))
        }

        @Test func diffOfMissingOrBrokenFiles() throws {
            let good = try DemoReports.file(DemoReports.standard)
            let missing = try hangwatch(["diff", good, "/nonexistent/after.json"])
            #expect(missing.status == 66)
            #expect(missing.stderr.split(separator: "\n").count == 1)
            let scratch = try TestPaths.scratch()
            let broken = scratch.appendingPathComponent("broken.json")
            try Data(#"{"schemaVersion": 1, "process": "#.utf8).write(to: broken)
            let bad = try hangwatch(["diff", broken.path, good])
            #expect(bad.status == 65)
            #expect(bad.stderr.contains("broken.json"))
        }
    }
}
