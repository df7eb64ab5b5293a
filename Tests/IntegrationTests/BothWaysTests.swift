import Foundation
import HangWatchModel
import HangWatchTestSupport
import Testing

extension Integration {
    /// Issue 14: "every demo runs both ways, and the tests check that the two reports
    /// agree". Each demo runs under `hangwatch run` and with `--library`; both reports
    /// must hold the same hangs, each within its way's tolerance of the program's own
    /// measurement, of the same kind, and the reported ones through the same function.
    /// (RunLoop's standard scenario and the frame loop are compared in `LibraryMode`.)
    @Suite struct BothWays {
        struct Case: Sendable, CustomTestStringConvertible {
            var demo: String
            var args: [String]
            /// The measured work that is a hang, in order.
            var work: [String]
            /// How far the durations may be from the program's: ±5 ms where the loop's own wait is
            /// the heartbeat, ±20 ms (launcher) and ±22 ms (library) for the main-queue probe,
            /// posted every 20 ms (MainQueue and LibraryMode say why).
            var libraryToleranceMs: Double
            /// The function a reported hang's heaviest path goes through; nil: the work's name.
            var function: String? = nil
            var launcherToleranceMs: Double { libraryToleranceMs > 5 ? 20 : 5 }
            var testDescription: String { "\(URL(fileURLWithPath: demo).lastPathComponent) \(args.joined(separator: " "))" }
        }

        static let cases: [Case] = [
            Case(demo: TestPaths.runLoopDemo, args: ["--scenario", "blocked"], work: ["waitForDisk", "waitForSocket"],
                 libraryToleranceMs: 5),
            Case(demo: TestPaths.dispatchMainDemo, args: [], work: ["importPhotos", "updateBadge"], libraryToleranceMs: 22),
            Case(demo: TestPaths.asyncMainDemo, args: [], work: ["rebuildSearchIndex"], libraryToleranceMs: 22),
            Case(demo: TestPaths.waitDemo, args: ["semaphore"], work: ["onEvent"], libraryToleranceMs: 5,
                 function: "waitOnSemaphore"),
            Case(demo: TestPaths.waitDemo, args: ["nslock"], work: ["onEvent"], libraryToleranceMs: 5,
                 function: "waitForNSLock"),
            Case(demo: TestPaths.waitDemo, args: ["mutex"], work: ["onEvent"], libraryToleranceMs: 5,
                 function: "waitForMutex"),
            Case(demo: TestPaths.waitDemo, args: ["cpu"], work: ["onEvent"], libraryToleranceMs: 5,
                 function: "computeOnMain"),
        ]

        /// The hang of each piece of work, within `tolerance` of its measured duration.
        private func hangs(_ run: HangwatchRun, _ names: [String], toleranceMs: Double,
                           way: String) throws -> [(MeasuredWork, Hang)] {
            try names.map { name in
                let work = try #require(run.work(name).first, "\(way): the demo did not measure \(name)")
                let hang = try #require(run.hang(startingNear: work, toleranceMs: toleranceMs),
                                        "\(way): no hang within \(toleranceMs) ms of \(name) (\(work.durationMs) ms); hangs \(run.report.hangs.map(\.durationMs))")
                return (work, hang)
            }
        }

        @Test(arguments: cases)
        func launcherAndLibraryAgree(_ c: Case) throws {
            let launcher = try HangwatchRun.run(c.demo, c.args)
            let library = try HangwatchRun.library(c.demo, c.args)
            #expect(launcher.result.status == 0 && library.result.status == 0,
                    "\(launcher.result.stderr) \(library.result.stderr)")
            #expect(launcher.report.hangs.count == c.work.count && library.report.hangs.count == c.work.count,
                    "launcher \(launcher.report.hangs.map(\.durationMs)), library \(library.report.hangs.map(\.durationMs))")
            let a = try hangs(launcher, c.work, toleranceMs: c.launcherToleranceMs, way: "launcher")
            let b = try hangs(library, c.work, toleranceMs: c.libraryToleranceMs, way: "library")
            for ((work, x), (_, y)) in zip(a, b) {
                #expect(x.kind == y.kind, "\(work.name): launcher \(x.kind), library \(y.kind)")
                #expect(x.reported == y.reported, "\(work.name): reported \(x.reported) vs \(y.reported)")
                #expect(x.thread.role == y.thread.role, "\(work.name): \(x.thread.role) vs \(y.thread.role)")
                if x.reported {
                    let function = c.function ?? work.name
                    let pathA = x.callTree?.heaviestPathSymbols ?? [], pathB = y.callTree?.heaviestPathSymbols ?? []
                    #expect(pathA.contains { $0.contains(function) } && pathB.contains { $0.contains(function) },
                            "\(function): launcher \(pathA), library \(pathB)")
                }
            }
        }
    }
}
