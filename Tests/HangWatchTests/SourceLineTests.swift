import Foundation
import HangWatch
import Testing

/// `--source-lines` below the CLI: reading llvm-symbolizer's answers, running
/// it (or failing to), and carrying sources through trees, JSON and text.
@Suite struct SourceLineTests {
    // MARK: llvm-symbolizer's JSON lines

    /// Lines captured from real `llvm-symbolizer --output-style=JSON` runs
    /// (LLVM 21 from the Swift toolchain, and Debian's LLVM 14 for the error line).
    enum Captured {
        /// A Swift function of RunLoopDemo (release build, with DWARF).
        static let swiftFunction = #"{"Address":"0xbf660","ModuleName":".build/release/RunLoopDemo","Symbol":[{"Column":0,"Discriminator":0,"FileName":"/work/main/Demos/RunLoopDemo/Work.swift","FunctionName":"$s11RunLoopDemo18parseLargeDocumentyyF","Line":66,"StartAddress":"0xbf660","StartFileName":"/work/main/Demos/RunLoopDemo/Work.swift","StartLine":66}]}"#
        /// The Swift toolchain's libFoundation.so: symbols, but no DWARF.
        static let noDwarf = #"{"Address":"0x2a8940","ModuleName":"/opt/swift/usr/lib/swift/linux/libFoundation.so","Symbol":[{"Column":0,"Discriminator":0,"FileName":"","FunctionName":"$s10Foundation014_CFErrorSPIForA10XMLUseOnlyV018unsafelyAssumingIsB0ACyXl_tcfC","Line":0,"StartAddress":"0x2a8940","StartFileName":"","StartLine":0}]}"#
        /// A module file that is gone.
        static let missingFile = #"{"Address":"0x1000","Error":{"Message":"No such file or directory"},"ModuleName":"/nonexistent/libgone.so"}"#
        /// glibc through libc6-dbg's separate debug file: declaration line 23, first instruction on 24.
        static let libcWithDeclaration = #"{"Address":"0xff250","ModuleName":"/usr/lib/x86_64-linux-gnu/libc.so.6","Symbol":[{"Column":1,"Discriminator":0,"FileName":"./misc/../sysdeps/posix/usleep.c","FunctionName":"usleep","Line":24,"StartAddress":"0xff250","StartFileName":"./misc/../sysdeps/posix/usleep.c","StartLine":23}]}"#
        /// A C function built by gcc (`cc -g -O2`, DWARF 5): LLVM gives its declaration line but no file.
        static let gccFunction = #"{"Address":"0x1df0","ModuleName":"/tmp/epoll_loop","Symbol":[{"Column":1,"Discriminator":0,"FileName":"/work/main/Demos/c/epoll_loop.c","FunctionName":"process_batch","Line":155,"StartAddress":"0x1df0","StartFileName":"","StartLine":154}]}"#
        /// glibc, the same way, at an address inside the function.
        static let libcWithoutDeclarationFile = #"{"Address":"0x29d90","ModuleName":"/usr/lib/x86_64-linux-gnu/libc.so.6","Symbol":[{"Column":10,"Discriminator":0,"FileName":"./iconv/gconv_conf.c","FunctionName":"__gconv_read_conf","Line":492,"StartAddress":"0x29b50","StartFileName":"","StartLine":462}]}"#
        /// An address in inlined code: innermost frame first (no line of its own), the function last.
        static let inlined = #"{"Address":"0xbf68f","ModuleName":".build/release/RunLoopDemo","Symbol":[{"Column":23,"Discriminator":0,"FileName":"/work/main/Sources/HangWatch/Render/TextTable.swift","FunctionName":"$sSlsE3mapySayqd__Gqd__7ElementQzqd_0_YKXEqd_0_YKs5ErrorRd_0_r0_lFSnySiG_Sis5NeverOTg5","Line":0,"StartAddress":"","StartFileName":"","StartLine":0},{"Column":38,"Discriminator":0,"FileName":"/work/main/Sources/HangWatch/Render/TextTable.swift","FunctionName":"$s9HangWatch9TextTableV5lines5width6marginSaySSGSi_SStF","Line":19,"StartAddress":"0xbf470","StartFileName":"/work/main/Sources/HangWatch/Render/TextTable.swift","StartLine":18}]}"#
    }

    @Test func parsesCapturedSymbolizerLines() throws {
        #expect(SymbolizerAnswer(jsonLine: Captured.swiftFunction)
            == SymbolizerAnswer(modulePath: ".build/release/RunLoopDemo", address: 0xbf660,
                                source: "/work/main/Demos/RunLoopDemo/Work.swift:66"))
        // No DWARF: the empty file and line 0 are dropped, not shown as ":0".
        #expect(SymbolizerAnswer(jsonLine: Captured.noDwarf)
            == SymbolizerAnswer(modulePath: "/opt/swift/usr/lib/swift/linux/libFoundation.so", address: 0x2a8940, source: nil))
        #expect(SymbolizerAnswer(jsonLine: Captured.missingFile)
            == SymbolizerAnswer(modulePath: "/nonexistent/libgone.so", address: 0x1000, source: nil,
                                error: "No such file or directory"))
        // The declaration line wins over the first instruction's line.
        #expect(SymbolizerAnswer(jsonLine: Captured.libcWithDeclaration)?.source == "./misc/../sysdeps/posix/usleep.c:23")
        // No declaration file: the address's file with the declaration line.
        #expect(SymbolizerAnswer(jsonLine: Captured.gccFunction)?.source == "/work/main/Demos/c/epoll_loop.c:154")
        #expect(SymbolizerAnswer(jsonLine: Captured.libcWithoutDeclarationFile)?.source == "./iconv/gconv_conf.c:462")
        // The function, not the inlined callee, and its declaration.
        #expect(SymbolizerAnswer(jsonLine: Captured.inlined)?.source
            == "/work/main/Sources/HangWatch/Render/TextTable.swift:18")
    }

    @Test func refusesLinesThatAreNotAnswers() {
        #expect(SymbolizerAnswer(jsonLine: "") == nil)
        #expect(SymbolizerAnswer(jsonLine: "??:0:0") == nil)
        #expect(SymbolizerAnswer(jsonLine: #"{"Address":"zz","ModuleName":"/a"}"#) == nil)
        #expect(SymbolizerAnswer(jsonLine: String(Captured.swiftFunction.dropLast(3))) == nil)
    }

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

    // MARK: trees, JSON and text

    static let demo = "/opt/app/RunLoopDemo"
    static let main = Frame(symbol: "main", image: demo, source: "/src/Demo/main.swift:1")
    static let parse = Frame(symbol: "RunLoopDemo.parseLargeDocument() -> ()", image: demo, source: "/src/Demo/Work.swift:66")
    static let tokenize = Frame(symbol: "RunLoopDemo.tokenize(_: Swift.UnsafeBufferPointer<Swift.UInt8>, until: Swift.UInt64) -> Swift.UInt64",
                                image: demo, source: "/src/Demo/Work.swift:100")
    static let usleep = Frame(symbol: "usleep", image: "/lib/libc.so.6")

    static func report(_ tree: CallTreeNode?) -> Report {
        let hang = Hang(id: 1, thread: ThreadRef(tid: 7, name: "main"), startMs: 10, durationMs: 420, reported: true,
                        inProgress: false, kind: .cpu, blockedIn: nil, sampleCount: 420, sampleCoverage: 1, callTree: tree)
        return Report(process: ProcessInfoRecord(pid: 7, executable: demo, arguments: [], exitCode: 0, signal: nil, wallMs: 900),
                      thresholds: Thresholds(), summary: Summary(hangs: [hang]), hangs: [hang])
    }

    static func tree() throws -> CallTreeNode {
        try #require(CallTreeBuilder.build([
            WeightedStack(frames: [main, parse, tokenize], weight: 200),
            WeightedStack(frames: [main, parse], weight: 150),
            WeightedStack(frames: [main, parse, usleep], weight: 70),
        ], msPerSample: 1))
    }

    @Test func treesCarryTheSourceWithoutSplittingNodes() throws {
        var sourceless = Self.parse
        sourceless.source = nil
        let tree = try #require(CallTreeBuilder.build([
            WeightedStack(frames: [Self.main, Self.parse], weight: 3),
            // The same function seen without a source merges into the node; its first frame's source stays.
            WeightedStack(frames: [Self.main, sourceless], weight: 2),
        ], msPerSample: 1))
        #expect(tree.source == "/src/Demo/main.swift:1")
        #expect(tree.children.count == 1)
        #expect(tree.children.first?.sampleCount == 5)
        #expect(tree.children.first?.source == "/src/Demo/Work.swift:66")

        // The text view collapses direct recursion; the merged node keeps its source.
        let recursive = try #require(CallTreeBuilder.build([
            WeightedStack(frames: [Self.main, Self.parse, Self.parse, Self.tokenize], weight: 4),
        ], msPerSample: 1)).collapsingDirectRecursion()
        #expect(recursive.children.first?.source == "/src/Demo/Work.swift:66")
        #expect(recursive.children.first?.children.first?.source == "/src/Demo/Work.swift:100")
    }

    @Test func jsonWritesSourcesAndNullsAndReadsOlderFiles() throws {
        let report = Self.report(try Self.tree())
        let text = String(decoding: try JSONReport.encode(report), as: UTF8.self)
        #expect(text.contains(#""source" : "/src/Demo/Work.swift:66""#))
        #expect(text.contains(#""source" : null"#), "usleep has no source and must say so")
        #expect(try JSONReport.decode(JSONReport.encode(report)) == report)

        // A file written before sources existed has no "source" key at all.
        let older = text.split(separator: "\n").filter { !$0.contains(#""source" : "#) }.joined(separator: "\n")
        #expect(!older.contains("source"))
        let decoded = try JSONReport.decode(Data(older.utf8))
        #expect(SourceFacts.nodes(decoded).allSatisfy { $0.source == nil })
        #expect(decoded.hangs.first?.callTree?.sampleCount == 420)
    }

    @Test func textShowsTheFileNameAndLineAfterTheImage() throws {
        let lines = TextRenderer.render(Self.report(try Self.tree()), width: 100).split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasSuffix("  main [RunLoopDemo main.swift:1]") }, "\(lines)")
        #expect(lines.contains { $0.hasSuffix("    parseLargeDocument() [RunLoopDemo Work.swift:66]") })
        #expect(lines.contains { $0.hasSuffix("      tokenize(_:until:) [RunLoopDemo Work.swift:100]") })
        #expect(lines.contains { $0.hasSuffix("      usleep [libc.so.6]") })
        #expect(!lines.contains { $0.contains("/src/Demo") }, "the text shows file names, not paths")
    }

    /// Every line fits; as room shrinks the source goes before the symbol is cut.
    @Test(arguments: [40, 50, 60, 70, 80, 100, 140])
    func textWithSourcesFitsTheWidth(width: Int) throws {
        let text = TextRenderer.render(Self.report(try Self.tree()), width: width)
        let lines = text.split(separator: "\n").map(String.init)
        for line in lines {
            #expect(line.count <= width, "\(line.count) > \(width): \(line)")
        }
        // A source is shown whole, after the whole image, or not at all.
        let wholeSources = [" Work.swift:66]", " Work.swift:100]", " main.swift:1]"]
        for line in lines {
            guard let open = line.lastIndex(of: "["), line[open...].contains(".swift") else { continue }
            let bracket = line[open...]
            #expect(bracket.hasPrefix("[RunLoopDemo ") && wholeSources.contains { bracket.hasSuffix($0) },
                    "width \(width): \(line)")
        }
        // From 80 columns on there is room for the whole name and its source.
        if width >= 80 {
            #expect(lines.contains { $0.hasSuffix("    parseLargeDocument() [RunLoopDemo Work.swift:66]") }, "\(text)")
        }
    }
}
