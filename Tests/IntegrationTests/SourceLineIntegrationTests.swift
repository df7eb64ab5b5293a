import Foundation
import HangWatch
import HangWatchAnalysis
import HangWatchRender
import HangWatchSymbols
import HangWatchTestSupport
import Testing

extension Integration {
    /// `hangwatch run --source-lines` on real programs, checked against the
    /// source files themselves (the line of each function's declaration).
    @Suite struct SourceLines {
        static var workSwift: String { TestPaths.packageRoot.appendingPathComponent("Demos/RunLoopDemo/Work.swift").path }

        static func node(_ report: Report, symbol: String, exactly: Bool = false) throws -> CallTreeNode {
            try #require(SourceFacts.nodes(report).first { exactly ? $0.symbol == symbol : $0.symbol.contains(symbol) },
                         "no \(symbol) node")
        }

        @Test func swiftDemoFramesGetTheirFunctionsDeclarationLines() throws {
            // The demo is a SwiftPM release build: it must carry DWARF line tables for this to mean anything.
            try #require(try SourceFacts.hasDebugLine(TestPaths.runLoopDemo), "RunLoopDemo has no .debug_line")
            let run = try HangwatchRun.run(TestPaths.runLoopDemo, hangwatchArgs: ["--source-lines"])
            #expect(run.result.status == 0, "stderr: \(run.result.stderr)")
            #expect(!run.report.notes.contains { $0.contains("source lines") }, "\(run.report.notes)")

            for (symbol, declaration) in [("parseLargeDocument()", "func parseLargeDocument("),
                                          ("tokenize(", "func tokenize("),
                                          ("renderThumbnails()", "func renderThumbnails(")] {
                let node = try Self.node(run.report, symbol: symbol)
                let line = try SourceFacts.line(of: declaration, in: Self.workSwift)
                #expect(node.source == "\(Self.workSwift):\(line)", "\(symbol)")
            }

            // Libraries without DWARF answer "no file, line 0": dropped, not shown as "??:0".
            let all = SourceFacts.nodes(run.report)
            let foundation = all.filter { $0.image == "libFoundation.so" }
            #expect(!foundation.isEmpty, "the run loop's frames are in libFoundation.so")
            let foundationPath = try SourceFacts.library(named: "libFoundation.so", loadedBy: TestPaths.runLoopDemo)
            try #require(!(try SourceFacts.hasDebugLine(foundationPath)))
            #expect(foundation.allSatisfy { $0.source == nil }, "\(foundation.map(\.source))")
            // `_start` comes from crt1.o, which has no line table even inside the demo.
            #expect(try Self.node(run.report, symbol: "_start", exactly: true).source == nil)
            #expect(!all.contains { ($0.source ?? "").hasPrefix("??") || ($0.source ?? "").hasSuffix(":0") })

            // glibc has sources exactly when its separate debug file (libc6-dbg) is installed.
            let libc = all.filter { $0.image == "libc.so.6" && $0.symbol == "__libc_start_main" }
            #expect(!libc.isEmpty)
            if try SourceFacts.hasSeparateDebugFile(try SourceFacts.library(named: "libc.so.6", loadedBy: TestPaths.runLoopDemo)) {
                #expect(libc.allSatisfy { ($0.source ?? "").contains("libc-start.c:") }, "\(libc.map(\.source))")
            } else {
                #expect(libc.allSatisfy { $0.source == nil })
            }

            // The text report shows the file name after the image and stays within its width.
            // Focused on the function: a hang whose tree has a second root (one sample cut
            // short by the kernel's fitted stack copy, 1 of 404 in a CI run on 2026-12-04)
            // cannot fold its shared root chain, and 13 levels deep there is no room for the file.
            let rendered = try ProcessRunner.run(TestPaths.hangwatch,
                                                 ["report", run.scratch.appendingPathComponent("report.json").path,
                                                  "--focus", "parseLargeDocument"])
            #expect(rendered.status == 0)
            let parseLine = try SourceFacts.line(of: "func parseLargeDocument(", in: Self.workSwift)
            #expect(rendered.stdout.contains("parseLargeDocument() [RunLoopDemo Work.swift:\(parseLine)]"), "\(rendered.stdout)")
            #expect(rendered.stdout.split(separator: "\n").allSatisfy { $0.count <= 100 })
        }

        @Test func withoutTheFlagEverySourceIsNull() throws {
            let run = try DemoReports.standard.get()
            #expect(run.report.hangs.contains { $0.callTree != nil })
            #expect(SourceFacts.nodes(run.report).allSatisfy { $0.source == nil })
            let json = try String(contentsOf: run.scratch.appendingPathComponent("report.json"), encoding: .utf8)
            #expect(json.contains(#""source" : null"#))
            #expect(!json.contains(#""source" : ""#))
        }

        /// A C program built with `cc -g -O2`: the same, through gcc's DWARF.
        @Test func cProgramFramesGetSources() throws {
            let scratch = try TestPaths.scratch()
            let source = TestPaths.demoSource("epoll_loop.c")
            let program = try ProcessRunner.compileC(source, into: scratch, name: "epoll_loop")
            let run = try HangwatchRun.run(program, hangwatchArgs: ["--source-lines"], scratch: scratch)
            #expect(run.result.status == 0)
            let line = try SourceFacts.line(of: "void process_batch(void)", in: source)
            #expect(try Self.node(run.report, symbol: "process_batch").source == "\(source):\(line)")
            let mainLine = try SourceFacts.line(of: "int main(", in: source)
            #expect(try Self.node(run.report, symbol: "main", exactly: true).source == "\(source):\(mainLine)")
        }

        /// No llvm-symbolizer in PATH (nor a swift beside one): the run still
        /// reports its hangs, says why sources are missing, and exits normally.
        @Test func missingSymbolizerIsNotedAndTheRunGoesOn() throws {
            let scratch = try TestPaths.scratch()
            let reportPath = scratch.appendingPathComponent("report.json").path
            let result = try ProcessRunner.run(
                TestPaths.hangwatch,
                ["run", "--source-lines", "-o", reportPath, "--format", "json", "--", TestPaths.runLoopDemo],
                environment: ["PATH": scratch.path], timeout: 60)
            #expect(result.status == 0, "stderr: \(result.stderr)")
            #expect(result.stderr.contains("hangwatch: note: --source-lines needs llvm-symbolizer"), "\(result.stderr)")
            let report = try JSONReport.decode(try Data(contentsOf: URL(fileURLWithPath: reportPath)))
            #expect(report.summary.reportedHangCount == 2)
            #expect(report.notes.contains { $0.contains("llvm-symbolizer was not found") }, "\(report.notes)")
            #expect(SourceFacts.nodes(report).allSatisfy { $0.source == nil })
        }

        @Test func flagTakesNoValueAndIsDocumented() throws {
            let bad = try ProcessRunner.run(TestPaths.hangwatch, ["run", "--source-lines=yes", "--", "/bin/true"])
            #expect(bad.status == 2)
            #expect(bad.stderr.contains("--source-lines takes no value"))
            let help = try ProcessRunner.run(TestPaths.hangwatch, ["run", "--help"])
            #expect(help.stdout.contains("--source-lines"))
        }
    }
}
