import Foundation
import HangWatchTestSupport

/// Reports of real demo runs, made once per test process and shared by the
/// tests that only read them: report, diff, markdown, fuzz, the format
/// exports, the browser (each run takes a few seconds). Tests of hangwatch's
/// accuracy make their own runs: the re-run below would hide a bad one.
enum DemoReports {
    /// `RunLoopDemo --scenario standard`: parseLargeDocument 420 ms, renderThumbnails 300 ms, refreshCache 150 ms.
    static let standard = Result {
        try steadyRun(["--scenario", "standard"], hangs: ["parseLargeDocument", "renderThumbnails", "refreshCache"])
    }
    /// `RunLoopDemo --scenario qsort`: sortRecords 350 ms through glibc's qsort into compareRecords.
    static let qsort = Result { try steadyRun(["--scenario", "qsort"], hangs: ["sortRecords"]) }

    /// One run feeds many tests, so a run the machine disturbed would fail them all: when the
    /// program's own measurements show it was (work stretched into an extra hang, or a hang's
    /// duration off by more than 5 ms, or a failed exit), the run is made once more, and the
    /// second one is used whatever it shows (the tests then say what went wrong).
    static func steadyRun(_ args: [String], hangs names: [String]) throws -> HangwatchRun {
        let first = try HangwatchRun.run(TestPaths.runLoopDemo, args)
        return isSteady(first, names) ? first : try HangwatchRun.run(TestPaths.runLoopDemo, args)
    }

    static func isSteady(_ run: HangwatchRun, _ names: [String]) -> Bool {
        run.result.status == 0 && run.report.hangs.count == names.count
            && run.measured.filter { $0.durationMs >= 95 }.count == names.count
            && names.allSatisfy { name in
                run.work(name).first.flatMap { run.hang(startingNear: $0, toleranceMs: 5) } != nil
            }
    }

    static func file(_ run: Result<HangwatchRun, any Error>) throws -> String {
        try run.get().scratch.appendingPathComponent("report.json").path
    }
}
