import Foundation
import HangWatch
import HangWatchAnalysis
import HangWatchRender
import HangWatchSymbols
import HangWatchTestSupport
import Testing

extension Integration {
    @Suite struct Unwinding {
        /// glibc's qsort has no frame pointers: only DWARF CFI unwinding gets
        /// from the comparator back to the Swift function that called qsort.
        @Test func qsortComparatorUnwindsToTheSwiftCaller() throws {
            let run = try HangwatchRun.run(TestPaths.runLoopDemo, ["--scenario", "qsort"])
            let hang = try #require(run.report.hangs.first { $0.reported })
            let tree = try #require(hang.callTree)
            let sortRecords = try #require(tree.first(containing: "sortRecords"))
            let qsort = try #require(sortRecords.first(containing: "qsort"))
            let comparator = try #require(qsort.first(containing: "compareRecords"))
            #expect(comparator.weightMs > 0)
            // Most samples reach all the way from main through qsort.
            #expect(sortRecords.weightMs >= 0.9 * tree.weightMs)
            #expect(tree.first(containing: "main") != nil)
        }
    }
}
