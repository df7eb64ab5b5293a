import Foundation
import HangWatch
import HangWatchAnalysis
import HangWatchRender
import HangWatchSymbols
import HangWatchTestSupport
import Testing

/// Running llvm-symbolizer for `--source-lines`, or failing to: real child processes.
@Suite(.exclusiveMachine) struct SymbolizerProcessTests {
    // MARK: running llvm-symbolizer

    @Test func missingSymbolizerGivesANoteAndNoSources() {
        let start = FunctionStart(modulePath: TestPaths.runLoopDemo, address: 0x1000)
        let absent = SourceLineResolver(symbolizerPath: "/nonexistent/llvm-symbolizer")
        #expect(absent.sources(for: [start]).isEmpty)
        #expect(absent.notes.count == 1)
        #expect(absent.notes.first?.contains("/nonexistent/llvm-symbolizer cannot be run (No such file or directory)") == true,
                "\(absent.notes)")
        let notFound = SourceLineResolver(symbolizerPath: nil)
        #expect(notFound.sources(for: []).isEmpty)
        #expect(notFound.notes.first?.contains("llvm-symbolizer was not found") == true, "\(notFound.notes)")
        // Asking again does not repeat the note.
        _ = notFound.sources(for: [start])
        #expect(notFound.notes.count == 1)
    }

    /// One batch across three modules: a Swift binary with DWARF, a library
    /// without, and a file that is gone.
    @Test func resolvesARealBatch() throws {
        let symbolizer = try #require(SourceLineResolver.findSymbolizer(), "llvm-symbolizer is needed for this test")
        let demo = TestPaths.runLoopDemo
        let parse = try #require(try ElfSymbolTable(path: demo).symbols.first { $0.name == "$s11RunLoopDemo18parseLargeDocumentyyF" })
        let foundationPath = try SourceFacts.library(named: "libFoundation.so", loadedBy: demo)
        try #require(!(try SourceFacts.hasDebugLine(foundationPath)), "\(foundationPath) unexpectedly has DWARF")
        let foundationFunction = try #require(try ElfSymbolTable(path: foundationPath).symbols.first)

        let inDemo = FunctionStart(modulePath: demo, address: parse.start)
        let inFoundation = FunctionStart(modulePath: foundationPath, address: foundationFunction.start)
        let gone = FunctionStart(modulePath: "/nonexistent/libgone.so", address: 0x1000)
        let resolver = SourceLineResolver(symbolizerPath: symbolizer)
        let sources = resolver.sources(for: [inDemo, inFoundation, gone])

        let workSwift = TestPaths.packageRoot.appendingPathComponent("Demos/RunLoopDemo/Work.swift").path
        let line = try SourceFacts.line(of: "func parseLargeDocument(", in: workSwift)
        #expect(sources == [inDemo: "\(workSwift):\(line)"])
        #expect(resolver.notes == ["source lines: /nonexistent/libgone.so: No such file or directory"])
    }

    @Test func aHungSymbolizerIsStoppedAtTheTimeLimit() throws {
        let scratch = try TestPaths.scratch()
        let hung = scratch.appendingPathComponent("hung-symbolizer").path
        try Data("#!/bin/sh\nexec sleep 30\n".utf8).write(to: URL(fileURLWithPath: hung))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: hung)
        let resolver = SourceLineResolver(symbolizerPath: hung, timeoutSeconds: 0.5)
        let began = Date()
        let sources = resolver.sources(for: [FunctionStart(modulePath: TestPaths.runLoopDemo, address: 0x1000)])
        let elapsed = Date().timeIntervalSince(began)
        #expect(sources.isEmpty)
        #expect(elapsed >= 0.5 && elapsed < 5, "took \(elapsed) s")
        #expect(resolver.notes == ["source lines: \(hung) did not finish within 0.5 s and was stopped; "
                                   + "some frames are shown without file:line"])
    }

    @Test func aFailingSymbolizerIsNoted() throws {
        let scratch = try TestPaths.scratch()
        let failing = scratch.appendingPathComponent("failing-symbolizer").path
        try Data("#!/bin/sh\nexit 3\n".utf8).write(to: URL(fileURLWithPath: failing))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: failing)
        let resolver = SourceLineResolver(symbolizerPath: failing)
        #expect(resolver.sources(for: [FunctionStart(modulePath: TestPaths.runLoopDemo, address: 0x1000)]).isEmpty)
        #expect(resolver.notes.first?.contains("exited with status 3") == true, "\(resolver.notes)")
    }

    /// PATH first; else next to `swift`, following its symlink to the toolchain.
    @Test func findsTheSymbolizerInPathOrNextToSwift() throws {
        let scratch = try TestPaths.scratch()
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let swift = try #require(path.split(separator: ":").map { "\($0)/swift" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }, "swift is not in PATH")
        let toolchainBin = URL(fileURLWithPath: swift).resolvingSymlinksInPath().deletingLastPathComponent().path
        try #require(FileManager.default.isExecutableFile(atPath: toolchainBin + "/llvm-symbolizer"))

        let onlySwift = scratch.appendingPathComponent("only-swift")
        try FileManager.default.createDirectory(at: onlySwift, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: onlySwift.path + "/swift", withDestinationPath: swift)
        let empty = scratch.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let ownSymbolizer = scratch.appendingPathComponent("own")
        try FileManager.default.createDirectory(at: ownSymbolizer, withIntermediateDirectories: true)
        try Data("#!/bin/sh\n".utf8).write(to: ownSymbolizer.appendingPathComponent("llvm-symbolizer"))
        try FileManager.default.setAttributes([.posixPermissions: 0o755],
                                              ofItemAtPath: ownSymbolizer.path + "/llvm-symbolizer")

        #expect(SourceLineResolver.findSymbolizer(searchPath: empty.path + ":" + onlySwift.path)
                == toolchainBin + "/llvm-symbolizer")
        #expect(SourceLineResolver.findSymbolizer(searchPath: onlySwift.path + ":" + ownSymbolizer.path)
                == ownSymbolizer.path + "/llvm-symbolizer")
        #expect(SourceLineResolver.findSymbolizer(searchPath: empty.path) == nil)
        #expect(SourceLineResolver.findSymbolizer(searchPath: nil) == nil)
    }

}
