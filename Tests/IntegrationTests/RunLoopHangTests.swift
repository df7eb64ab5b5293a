import Foundation
import HangWatch
import HangWatchAnalysis
import HangWatchRender
import HangWatchSymbols
import HangWatchTestSupport
import Testing

extension Integration {
    @Suite struct RunLoopHangs {
        /// One run of the standard demo for the three checks below. Not
        /// DemoReports': these check hangwatch's accuracy (durations, no
        /// phantom hang from a 60 ms callback), which its second chance at a
        /// disturbed run would hide.
        private static let standard = Result { try HangwatchRun.run(TestPaths.runLoopDemo, ["--scenario", "standard"]) }

        /// The standard demo: 420, 300 and 150 ms hangs, five 60 ms callbacks.
        @Test func findsHangsWithTheProgramsOwnDurations() throws {
            let run = try Self.standard.get()
            #expect(run.result.status == 0)
            #expect(run.result.stdout.isEmpty, "hangwatch must not write to the program's stdout")
            let expected = ["parseLargeDocument", "renderThumbnails", "refreshCache"]
            #expect(run.report.hangs.count == expected.count,
                    "hangs: \(run.report.hangs.map(\.durationMs))")
            var pairs: [(work: MeasuredWork, hang: Hang)] = []
            for name in expected {
                let work = try #require(run.work(name).first, "demo did not measure \(name)")
                let hang = try #require(run.hang(startingNear: work), "no hang near \(name) \(work.durationMs) ms")
                // The heartbeat measures the whole busy period; the program measures its work
                // inside it. The difference is the run loop's own dispatch: well under 5 ms.
                #expect(abs(hang.durationMs - work.durationMs) <= 5,
                        "\(name): hangwatch \(hang.durationMs) ms vs program \(work.durationMs) ms")
                #expect(hang.reported == (work.durationMs >= 250))
                #expect(hang.inProgress == false)
                #expect(hang.kind == .cpu)
                #expect(hang.thread.tid == run.report.process.pid)
                pairs.append((work, hang))
            }
            #expect(run.report.summary.reportedHangCount == 2)
            // The README's "well under a millisecond": runs here give 0.14-0.36 ms. The median of
            // the three is held to 1 ms; one hang may take up to 5 ms (above) when a neighbour
            // delays the loop between the callback's end and its next wait.
            let differences = pairs.map { abs($0.hang.durationMs - $0.work.durationMs) }.sorted()
            #expect(differences.count == 3 && differences[1] <= 1, "duration differences \(differences) ms")
            // Starts, on the program's own clock: each hang starts where its work started, counted
            // from the first one (the program cannot see hangwatch's process start).
            if let first = pairs.first {
                for (work, hang) in pairs.dropFirst() {
                    let programMs = Double(work.startNs - first.work.startNs) / 1e6
                    let reportMs = hang.startMs - first.hang.startMs
                    #expect(abs(reportMs - programMs) <= 2,
                            "\(work.name) starts \(reportMs) ms after the first hang, \(programMs) ms by the program's clock")
                }
            }
        }

        @Test func sixtyMillisecondCallbacksAreNotHangs() throws {
            let run = try Self.standard.get()
            let small = run.work("smallUpdate")
            #expect(small.count == 5)
            #expect(run.report.hangs.allSatisfy { $0.durationMs >= 100 })
            #expect(!run.report.hangs.contains { $0.callTree?.first(containing: "smallUpdate") != nil })
        }

        @Test func heaviestPathNamesTheFunctionThatDidTheWork() throws {
            let run = try Self.standard.get()
            let reported = run.report.hangs.filter(\.reported)
            #expect(reported.count == 2)
            for (hang, name) in zip(reported, ["parseLargeDocument", "renderThumbnails"]) {
                let tree = try #require(hang.callTree)
                let path = tree.heaviestPathSymbols
                #expect(path.contains { $0.contains(name) }, "heaviest path: \(path)")
                // Samples cover the hang from early on: sampling starts 10 ms in. An idle
                // machine gives 90-97%; signals coalesce when the 2 cores are contended.
                #expect(hang.sampleCoverage >= 0.6, "coverage \(hang.sampleCoverage)")
                let node = try #require(tree.first(containing: name))
                #expect(node.weightMs >= 0.9 * tree.weightMs, "\(name) holds \(node.weightMs) of \(tree.weightMs) ms")
            }
            // The demo's helpers show up beneath the function that calls them.
            let parse = try #require(reported[0].callTree?.first(containing: "parseLargeDocument"))
            #expect(parse.children.contains { $0.symbol.contains("tokenize") })
        }
    }
}
