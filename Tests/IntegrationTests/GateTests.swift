import Foundation
import HangWatch
import HangWatchAnalysis
import HangWatchRender
import HangWatchSymbols
import HangWatchTestSupport
import Testing

extension Integration {
    /// CI gates of `hangwatch run`, and the report formats `run` writes.
    @Suite struct Gates {
        private func run(_ options: [String], _ scenario: String, output: String? = nil) throws -> ProcessResult {
            let out = try output ?? TestPaths.scratch().appendingPathComponent("report.json").path
            return try hangwatch(["run"] + options + ["-o", out, "--format", "json", "--", TestPaths.runLoopDemo,
                                                     "--scenario", scenario])
        }

        @Test func hangGateFailsWithStatus4AfterWritingTheReport() throws {
            let out = try TestPaths.scratch().appendingPathComponent("gated.json").path
            // qsort: one 350 ms hang, above the default report threshold (250 ms).
            let r = try run(["--fail-on-hang"], "qsort", output: out)
            #expect(r.status == 4, "\(r.stderr)")
            #expect(r.stderr.contains("hang gate failed: 1 hang of 250 ms or more"), "\(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1)
            let report = try JSONReport.decode(Data(contentsOf: URL(fileURLWithPath: out)))
            #expect(report.hangs.count == 1, "the report is written before the gate decides")

            // A limit above the hang: the gate passes and the program's own status (0) stands.
            let pass = try run(["--fail-on-hang=1000"], "qsort")
            #expect(pass.status == 0, "\(pass.stderr)")
            #expect(pass.stderr.isEmpty)
        }

        @Test func gateStatusWinsOnlyWhenBreached() throws {
            // The exit scenario stalls 120 ms and exits 3.
            let quiet = try run(["--fail-on-hang"], "exit")
            #expect(quiet.status == 3, "no breach: the program's status")
            let breached = try run(["--fail-on-hang=110"], "exit")
            #expect(breached.status == 4, "\(breached.stderr)")
            #expect(breached.stderr.contains("110 ms or more"))
        }

        @Test func hitchRatioGate() throws {
            // The standard demo hitches a 16 ms frame loop badly (a 420 ms frame, and more).
            let fail = try run(["--frame-ms", "16", "--fail-on-hitch-ratio=5"], "standard")
            #expect(fail.status == 5, "\(fail.stderr)")
            #expect(fail.stderr.contains("hitch-ratio gate failed"))
            let pass = try run(["--frame-ms", "16", "--fail-on-hitch-ratio", "1000"], "standard")
            #expect(pass.status == 0, "\(pass.stderr)")
            // Both gates breached: the hang gate's status comes first, and both say why.
            let both = try run(["--frame-ms", "16", "--fail-on-hitch-ratio=5", "--fail-on-hang"], "standard")
            #expect(both.status == 4)
            #expect(both.stderr.split(separator: "\n").count == 2, "\(both.stderr)")

            // A program that never runs a frame cannot pass a hitch-ratio gate.
            let out = try TestPaths.scratch().appendingPathComponent("none.json").path
            let none = try hangwatch(["run", "--frame-ms", "16", "--fail-on-hitch-ratio=5", "-o", out, "--", "/bin/true"])
            #expect(none.status == 6, "\(none.stderr)")
            #expect(none.stderr.contains("no frame was measured"))
        }

        @Test func gateMisuseIsAUsageError() throws {
            let cases: [([String], String)] = [
                (["--fail-on-hitch-ratio=5"], "--frame-ms"),
                (["--fail-on-hang", "300"], "--fail-on-hang=300"),
                (["--fail-on-hang=abc"], "abc"),
                (["--hang-ms", "200", "--fail-on-hang=150"], "--hang-ms"),
                (["--frame-ms", "16", "--fail-on-hitch-ratio=-1"], "--fail-on-hitch-ratio"),
            ]
            for (options, word) in cases {
                let r = try hangwatch(["run"] + options + ["--", "/bin/true"])
                #expect(r.status == 2, "\(options): \(r.status) \(r.stderr)")
                #expect(r.stderr.split(separator: "\n").count == 1)
                #expect(r.stderr.contains(word), "\(options): \(r.stderr)")
            }
            let help = try hangwatch(["run", "--help"]).stdout
            for documented in ["--fail-on-hang[=MS]", "--fail-on-hitch-ratio=X", "4 for a hang gate", "5 for a hitch-ratio gate"] {
                #expect(help.contains(documented), "\(documented)")
            }
        }

        @Test func runWritesEveryAvailableFormat() throws {
            let scratch = try TestPaths.scratch()
            for format in ReportFormat.allCases {
                let out = scratch.appendingPathComponent("report.\(format.rawValue)").path
                let r = try hangwatch(["run", "--format", format.rawValue, "-o", out, "--", TestPaths.runLoopDemo,
                                       "--scenario", "exit"])
                #expect(r.status == 3, "\(format): \(r.stderr)")
                let data = try Data(contentsOf: URL(fileURLWithPath: out))
                // This run's only hang is below the report threshold, so it has no
                // stacks: folded stacks are then rightly an empty file.
                #expect(!data.isEmpty || format == .folded, "\(format)")
                // Each file is what its format says it is.
                let text = String(decoding: data, as: UTF8.self)
                switch format {
                case .markdown:
                    #expect(text.hasPrefix("# Hang report: RunLoopDemo"))
                    #expect(text.contains("| Hangs | 1 |"))
                case .json:
                    #expect(try JSONReport.decode(data).hangs.count == 1)
                case .speedscope, .chrome:
                    #expect(throws: Never.self, "\(format) is not JSON") { try JSONSerialization.jsonObject(with: data) }
                case .pprof:
                    #expect(data.prefix(2) == Data([0x1f, 0x8b]), "pprof is gzip")
                case .html:
                    #expect(text.lowercased().contains("<html"))
                case .text:
                    #expect(text.contains("RunLoopDemo"))
                case .folded:
                    #expect(text.isEmpty)
                }
            }
        }
    }
}
