import Foundation
import HangWatch
import HangWatchAnalysis
import HangWatchModel
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

        /// A sample at a function's `ret`: the call-frame row there still puts
        /// rbp's save slot below the stack pointer, outside the copy, and the
        /// caller's frame is found from rbp. Both unwinders stopped there, and
        /// 63-70 % of a hang that calls such a function in a loop showed as a
        /// root `returning_spin → epilogue_step` of its own (2026-12-03).
        /// Stepped over by hand, every sample reaches main, and libunwind,
        /// under verification, agrees. The loop's other function jumps with
        /// `push; ret`: the word there is no return address, and its `ret` is
        /// unwound by its call-frame row (taking it for a caller stopped the
        /// unwind there, as a review found). A pause between the epilogue's
        /// `pop %rbp` and its `ret` puts many samples there, where the row's
        /// slot is the word just popped: rbp's value is taken for it (without
        /// that, 13 of 288 ms were a root of their own).
        @Test func samplesAtAReturnUnwindToMain() throws {
            let program = try SafetyProgram.build("return_spin")
            let scratch = try TestPaths.scratch()
            let report = scratch.appendingPathComponent("report.json").path
            let result = try ProcessRunner.run(TestPaths.hangwatch, ["run", "-o", report, "--format", "json", "--", program.path],
                                               environment: ["HANGWATCH_UNWIND_VERIFY": "1"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains(" 0 differed"), "\(result.stderr)")
            let data = try #require(FileManager.default.contents(atPath: report))
            let hang = try #require(try JSONReport.decode(data).hangs.first)
            let tree = try #require(hang.callTree)
            let main = try #require(tree.first(containing: "main"), "\(tree.allSymbols)")
            #expect(main.weightMs == tree.weightMs, "\(tree.weightMs - main.weightMs) ms outside main: \(tree.allSymbols)")
            #expect(!tree.allSymbols.contains { $0.contains("not fully") }, "\(tree.allSymbols)")
            // Each step function once, right under the loop, with a good share of the hang.
            let loop = try #require(main.first(containing: "returning_spin"))
            for step in ["epilogue_step", "jump_step"] {
                let node = try #require(loop.children.first { $0.symbol.contains(step) }, "\(loop.children.map(\.symbol))")
                #expect(node.weightMs >= 0.05 * tree.weightMs, "\(step): \(node.weightMs) of \(tree.weightMs) ms")
                #expect(tree.allSymbols.filter { $0.contains(step) }.count == 1, "\(tree.allSymbols)")
            }
        }

        /// An unwind stops at 256 frames. A stack deeper than that, copied whole,
        /// is rooted at `<stack not fully unwound>` rather than at the outermost
        /// frame kept, which would read as the thread's root; one shallower
        /// reaches main with no mark.
        @Test(arguments: [(200, false), (300, true)])
        func anUnwindThatStopsShortIsMarkedAtTheRoot(frames: Int, stopsShort: Bool) throws {
            let program = try SafetyProgram.build("deep_stack")
            let run = try program.watched(["--frames", String(frames)])
            let hang = try #require(run.report.hangs.first, "\(Safety.describe(run.report))")
            let tree = try #require(hang.callTree)
            // (The report file keeps 200 levels of a tree: bottom_spin lies below them.)
            #expect(Safety.symbols(hang).contains { $0.contains("descend_small") }, "\(tree.symbol)")
            if stopsShort {
                #expect(tree.symbol == "<stack not fully unwound>", "root \(tree.symbol)")
                #expect(tree.first(containing: "main") == nil, "a stack cut at 256 frames cannot reach main")
            } else {
                #expect(!tree.allSymbols.contains { $0.contains("not fully") }, "root \(tree.symbol)")
                #expect(tree.first(containing: "main") != nil)
            }
        }

        /// The flat rule table (cfi_rules.c) unwinds a sample only when every
        /// frame is of a common shape; libunwind checks each such unwind here
        /// (HANGWATCH_UNWIND_VERIFY=1) and must agree on every frame, the end
        /// and the last stack pointer. Swift, Foundation, libdispatch, Swift
        /// concurrency, glibc without frame pointers (qsort), and a hang inside
        /// a signal handler, whose frames (a signal frame) are libunwind's.
        @Test(arguments: [
            (TestPaths.runLoopDemo, ["--scenario", "qsort"], false),
            (TestPaths.runLoopDemo, [], false),
            (TestPaths.asyncMainDemo, [], false),
            (TestPaths.dispatchMainDemo, [], false),
            ("extras", ["altstack"], true),
        ])
        func flatRulesAgreeWithLibunwind(program: String, args: [String], signalFrames: Bool) throws {
            let path = program.hasPrefix("/") ? program : try SafetyProgram.build(program).path
            let scratch = try TestPaths.scratch()
            let report = scratch.appendingPathComponent("report.json").path
            let result = try ProcessRunner.run(TestPaths.hangwatch, ["run", "-o", report, "--format", "json", "--", path] + args,
                                               environment: ["HANGWATCH_UNWIND_VERIFY": "1"])
            #expect(result.status == 0, "\(result.stderr)")
            let line = try #require(result.stderr.split(separator: "\n").first { $0.hasPrefix("hangwatch: unwind check:") },
                                    "\(result.stderr)")
            let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
            try #require(numbers.count == 3, "\(line)")
            let (flat, libunwind, differed) = (numbers[0], numbers[1], numbers[2])
            #expect(differed == 0, "\(result.stderr)")
            let hangs = try JSONReport.decode(try #require(FileManager.default.contents(atPath: report))).hangs
            #expect(hangs.contains { $0.reported })
            if signalFrames {
                #expect(libunwind > 100, "\(line)")
            } else {
                // Nearly every sample; a rare one (an unusual prologue) is libunwind's.
                #expect(flat > 100 && libunwind * 20 < flat, "\(line)")
            }
        }
    }
}
