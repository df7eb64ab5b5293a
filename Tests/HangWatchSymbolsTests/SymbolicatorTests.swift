// Symbolication against the real objects loaded in this test process: the
// test binary itself, glibc and the vDSO. No fixtures: the same code paths
// hangwatch uses on a profiled program, pointed at ourselves.

import HangWatchModel
import HangWatchSymbols
import HangWatchTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// MARK: - A known Swift function

/// Its address is taken through a C function pointer below; the name must come back.
@inline(never)
func symbolicatorProbeTarget(_ value: Int32) -> Int32 {
    value &* 7 &+ 3
}

private func probeAddress() -> UInt64 {
    let pointer: @convention(c) (Int32) -> Int32 = symbolicatorProbeTarget
    return UInt64(UInt(bitPattern: unsafeBitCast(pointer, to: Int.self)))
}

// MARK: - The modules of this process, via dl_iterate_phdr

// Glibc's Swift overlay does not import <link.h>, so declare the entry point
// and read the 64-bit dl_phdr_info / Elf64_Phdr layouts by offset.
private typealias PhdrCallback = @convention(c) (UnsafeRawPointer?, Int, UnsafeMutableRawPointer?) -> Int32
@_silgen_name("dl_iterate_phdr")
private func dlIteratePhdr(_ callback: PhdrCallback, _ context: UnsafeMutableRawPointer?) -> Int32

private final class ModuleCollector {
    var modules: [ModuleImage] = []
}

private let executablePath: String = {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    return length > 0 ? String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
}()

/// Every object loaded in this process, described the way the real recorder will.
private let currentModules: [ModuleImage] = {
    let collector = ModuleCollector()
    withExtendedLifetime(collector) {
        _ = dlIteratePhdr({ info, _, context in
            guard let info, let context else { return 0 }
            let collector = Unmanaged<ModuleCollector>.fromOpaque(context).takeUnretainedValue()
            let bias = info.load(fromByteOffset: 0, as: UInt64.self)
            let namePointer = info.load(fromByteOffset: 8, as: UnsafePointer<CChar>?.self)
            let headers = info.load(fromByteOffset: 16, as: UnsafeRawPointer?.self)
            let headerCount = Int(info.load(fromByteOffset: 24, as: UInt16.self))
            guard let headers else { return 0 }

            var low = UInt64.max, high = UInt64.zero
            var buildId: [UInt8] = []
            for index in 0..<headerCount {
                let header = headers + index * 56
                let type = header.load(fromByteOffset: 0, as: UInt32.self)
                let vaddr = header.load(fromByteOffset: 16, as: UInt64.self)
                let memsz = header.load(fromByteOffset: 40, as: UInt64.self)
                let align = header.load(fromByteOffset: 48, as: UInt64.self)
                if type == 1 /* PT_LOAD */ {
                    low = min(low, bias &+ vaddr)
                    high = max(high, bias &+ vaddr &+ memsz)
                } else if type == 4 /* PT_NOTE */, buildId.isEmpty {
                    buildId = buildIdInMemory(UnsafeRawPointer(bitPattern: UInt(bias &+ vaddr)),
                                              size: Int(memsz), align: Int(max(align, 4)))
                }
            }
            guard low < high else { return 0 }

            let name = namePointer.map { String(cString: $0) } ?? ""
            var path = name.isEmpty ? executablePath : name
            var inline: [UInt8]? = nil
            if name.hasPrefix("linux-vdso") || name.hasPrefix("linux-gate") {
                path = "[vdso]"
                inline = Array(UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: UInt(low)),
                                                      count: Int(high - low)))
            }
            collector.modules.append(ModuleImage(path: path, loadBias: bias, start: low, end: high,
                                                 buildId: buildId, inlineImage: inline))
            return 0
        }, Unmanaged.passUnretained(collector).toOpaque())
    }
    return collector.modules
}()

/// Parses ELF notes in mapped memory; an independent check on ElfSymbolTable's libelf path.
private func buildIdInMemory(_ base: UnsafeRawPointer?, size: Int, align: Int) -> [UInt8] {
    guard let base else { return [] }
    func padded(_ n: Int) -> Int { (n + align - 1) / align * align }
    var offset = 0
    while offset + 12 <= size {
        let nameSize = Int(base.load(fromByteOffset: offset, as: UInt32.self))
        let descSize = Int(base.load(fromByteOffset: offset + 4, as: UInt32.self))
        let type = base.load(fromByteOffset: offset + 8, as: UInt32.self)
        let nameStart = offset + 12
        let descStart = nameStart + padded(nameSize)
        guard descStart + descSize <= size else { return [] }
        let name = Array(UnsafeRawBufferPointer(start: base + nameStart, count: nameSize))
        if type == 3 /* NT_GNU_BUILD_ID */, name == Array("GNU\0".utf8) {
            return Array(UnsafeRawBufferPointer(start: base + descStart, count: descSize))
        }
        offset = descStart + padded(descSize)
    }
    return []
}

private func module(named displayName: String) -> ModuleImage? {
    currentModules.first { $0.displayName == displayName }
}

private func executableModule() throws -> ModuleImage {
    try #require(currentModules.first { $0.path == executablePath })
}

private func address(ofCFunction name: String) throws -> UInt64 {
    let handle = try #require(dlsym(UnsafeMutableRawPointer(bitPattern: 0), name))
    return UInt64(UInt(bitPattern: handle))
}

/// A fresh file in /tmp holding `text`; the caller unlinks it.
private func temporaryFile(containing text: String) throws -> String {
    var template = Array("/tmp/hangwatch-symtest-XXXXXX".utf8CString)
    let fd = mkstemp(&template)
    try #require(fd >= 0)
    defer { close(fd) }
    let bytes = Array(text.utf8)
    try #require(write(fd, bytes, bytes.count) == bytes.count)
    return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

private func symbolicatorForThisProcess() -> Symbolicator {
    let symbolicator = Symbolicator()
    currentModules.forEach(symbolicator.addModule)
    return symbolicator
}

// MARK: - Tests

@Suite struct SymbolicatorTests {
    @Test func resolvesSwiftFunctionInTestBinary() throws {
        let symbolicator = symbolicatorForThisProcess()
        let executable = try executableModule()
        let pc = probeAddress()

        let leaf = symbolicator.symbolicate(pc: pc, isReturnAddress: false)
        #expect(leaf.symbol.contains("symbolicatorProbeTarget"))
        #expect(leaf.image == executable.displayName)
        // A return address one byte past the entry still belongs to the function.
        let caller = symbolicator.symbolicate(pc: pc + 1, isReturnAddress: true)
        #expect(caller.symbol == leaf.symbol)
        #expect(symbolicator.notes.isEmpty)
    }

    @Test func resolvesLibcFunction() throws {
        let symbolicator = symbolicatorForThisProcess()
        let qsort = try address(ofCFunction: "qsort")

        let frame = symbolicator.symbolicate(pc: qsort, isReturnAddress: false)
        #expect(frame == Frame(symbol: "qsort", image: "libc.so.6"))
        #expect(symbolicator.symbolicate(pc: qsort + 2, isReturnAddress: false).symbol == "qsort")
    }

    @Test func symbolTableLookupBoundaries() throws {
        let libc = try #require(module(named: "libc.so.6"))
        let table = try ElfSymbolTable(path: libc.path)
        let fileAddress = try address(ofCFunction: "qsort") - libc.loadBias
        let symbol = try #require(table.symbols.first { $0.start == fileAddress })

        #expect(symbol.name == "qsort")
        #expect(table.lookup(symbol.start)?.name == "qsort")
        #expect(table.lookup(symbol.start)?.offset == 0)
        #expect(table.lookup(symbol.end - 1)?.offset == symbol.end - 1 - symbol.start)
        #expect(table.lookup(symbol.end)?.name != "qsort")
        #expect(table.lookup(0) == nil)
        #expect(zip(table.symbols, table.symbols.dropFirst()).allSatisfy { $0.end <= $1.start })
    }

    @Test func readsBuildIdMatchingTheLoadedImage() throws {
        let executable = try executableModule()
        let libc = try #require(module(named: "libc.so.6"))
        #expect(!executable.buildId.isEmpty)
        #expect(try ElfSymbolTable(path: executable.path).buildId == executable.buildId)
        #expect(try ElfSymbolTable(path: libc.path).buildId == libc.buildId)
    }

    @Test func buildIdMismatchFallsBackToOffsets() throws {
        var stale = try executableModule()
        stale.buildId = Array(repeating: 0xab, count: 20)
        let symbolicator = Symbolicator()
        symbolicator.addModule(stale)
        let pc = probeAddress()

        let frame = symbolicator.symbolicate(pc: pc, isReturnAddress: false)
        let name = stale.displayName
        #expect(frame == Frame(symbol: "\(name)+0x\(String(pc - stale.start, radix: 16))", image: name))
        _ = symbolicator.symbolicate(pc: pc + 8, isReturnAddress: true)
        #expect(symbolicator.notes
            == ["\(name): build-id mismatch (file was rebuilt since the run); its frames are shown as offsets"])
    }

    @Test func missingFileYieldsOffsetsWithoutCrashing() {
        let symbolicator = Symbolicator()
        symbolicator.addModule(ModuleImage(path: "/nonexistent/dir/libnothing.so", loadBias: 0x7000_0000,
                                           start: 0x7000_1000, end: 0x7000_9000, buildId: [1, 2, 3]))

        let frame = symbolicator.symbolicate(pc: 0x7000_1abc, isReturnAddress: true)
        #expect(frame == Frame(symbol: "libnothing.so+0xabc", image: "libnothing.so"))
        #expect(symbolicator.notes.count == 1)
        #expect(symbolicator.notes.first?.hasPrefix("libnothing.so: symbols unavailable") == true)
    }

    @Test func addressOutsideEveryModule() {
        let symbolicator = symbolicatorForThisProcess()
        #expect(symbolicator.symbolicate(pc: 0x10, isReturnAddress: false) == Frame(symbol: "0x10", image: "???"))
        #expect(symbolicator.symbolicate(pc: 0, isReturnAddress: true) == Frame(symbol: "0x0", image: "???"))
    }

    @Test func unreadableInputsThrow() throws {
        #expect(throws: ElfReadError.self) { try ElfSymbolTable(path: "/nonexistent/file") }
        #expect(throws: ElfReadError.notARegularFile(path: "/tmp")) { try ElfSymbolTable(path: "/tmp") }
        let script = try temporaryFile(containing: "#!/bin/sh\necho hi\n")
        defer { unlink(script) }
        #expect(throws: ElfReadError.notELF) { try ElfSymbolTable(path: script) }
        #expect(throws: ElfReadError.self) { try ElfSymbolTable(image: []) }
        #expect(throws: ElfReadError.self) { try ElfSymbolTable(image: Array("#!/bin/sh\necho hi\n".utf8)) }
        // A truncated ELF header: libelf must reject it, not read past the buffer.
        #expect(throws: ElfReadError.self) { try ElfSymbolTable(image: [0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]) }
    }

    @Test func resolvesVDSOFromInlineImage() throws {
        let vdso = try #require(module(named: "[vdso]"), "this kernel maps no vDSO")
        // The collected image stops at the end of PT_LOAD, before the section
        // headers, so this goes through the dynamic-segment fallback.
        let bytes = try #require(vdso.inlineImage)
        let table = try ElfSymbolTable(image: bytes)
        #expect(table.buildId == vdso.buildId)
        let clock = try #require(table.symbols.first { $0.name.contains("clock_gettime") })

        // The whole page-rounded mapping includes the section headers: same answer via .dynsym.
        let pageSize = UInt64(sysconf(Int32(_SC_PAGESIZE)))
        let mappedEnd = (vdso.end + pageSize - 1) / pageSize * pageSize
        let wholeMapping = Array(UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: UInt(vdso.start)),
                                                        count: Int(mappedEnd - vdso.start)))
        let sectionTable = try ElfSymbolTable(image: wholeMapping)
        #expect(sectionTable.symbols == table.symbols)
        #expect(sectionTable.buildId == vdso.buildId)

        let symbolicator = symbolicatorForThisProcess()
        let frame = symbolicator.symbolicate(pc: clock.start + vdso.loadBias, isReturnAddress: false)
        #expect(frame == Frame(symbol: clock.name, image: "[vdso]"))
        // Without section headers the unwind table is found through PT_GNU_EH_FRAME.
        #expect(table.functionStarts.contains(clock.start))
        #expect(sectionTable.functionStarts == table.functionStarts)
    }

    @Test func demanglesSwiftAndCxx() {
        var demangler = Demangler()
        #expect(demangler.demangle("$sSi") == "Swift.Int")
        #expect(demangler.demangle("_$sSS") == "Swift.String")
        #expect(demangler.demangle("_ZNSt6vectorIiSaIiEE9push_backERKi").contains("std::vector"))
        // Plain C names and malformed manglings come back unchanged.
        #expect(demangler.demangle("qsort") == "qsort")
        #expect(demangler.demangle("_Znot_a_mangling(") == "_Znot_a_mangling(")
        #expect(demangler.demangle("$sBOGUS!") == "$sBOGUS!")
        // Cached answers are the same answers.
        #expect(demangler.demangle("$sSi") == "Swift.Int")
    }

    /// 10,000 samples of 30 frames, every frame a different address (no answer
    /// can come from a per-address cache), each resolved to the libc function
    /// that contains it.
    @Test func tenThousandSamplesOfThirtyFramesAreFast() throws {
        let libc = try #require(module(named: "libc.so.6"))
        let table = try ElfSymbolTable(path: libc.path)
        let samples = 10_000, depth = 30
        let count = samples * depth
        // Every (function, offset) pair once: offset 1 of every function, then offset 2 of those
        // longer than 2 bytes, and so on, until there are `count` addresses.
        let functions = table.symbols.filter { $0.end - $0.start >= 2 }
        var pcs: [UInt64] = [], starts: [UInt64] = []
        pcs.reserveCapacity(count)
        starts.reserveCapacity(count)
        var offset: UInt64 = 1
        while pcs.count < count {
            let before = pcs.count
            for function in functions where function.end - function.start > offset && pcs.count < count {
                pcs.append(libc.loadBias + function.start + offset)
                starts.append(function.start)
            }
            try #require(pcs.count > before, "libc has only \(pcs.count) function bytes")
            offset += 1
        }
        #expect(Set(pcs).count == count)
        // The name each function is shown with (an alias may win over `Symbol.name`), from a
        // symbolicator of its own so the timed one starts cold; never an offset.
        let naming = symbolicatorForThisProcess()
        var names: [UInt64: String] = [:]
        for function in functions {
            let name = naming.symbolicate(pc: libc.loadBias + function.start, isReturnAddress: false).symbol
            #expect(!name.contains("+0x"), "\(function.name) has no name")
            names[function.start] = name
        }
        let expected = starts.map { names[$0] ?? "" }

        let symbolicator = symbolicatorForThisProcess()
        var frames: [Frame] = []
        frames.reserveCapacity(count)
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            for (n, pc) in pcs.enumerated() {
                frames.append(symbolicator.symbolicate(pc: pc, isReturnAddress: n % depth > 0))
            }
        }
        // BENCHMARKS.md (e)'s target, 1 s to symbolicate and render 10,000 samples, for the
        // symbolication alone of 300,000 different addresses (no cached answer; the benchmark has 16 stacks).
        #expect(elapsed < .seconds(1), "took \(elapsed)")
        // Every frame is the function its address is in (a return address is looked up one byte back,
        // still inside: offsets start at 1).
        let wrong = (0..<count).filter { frames[$0] != Frame(symbol: expected[$0], image: "libc.so.6") }
        #expect(wrong.isEmpty, "\(wrong.count) wrong, first: \(wrong.first.map { "\(frames[$0]) for \(expected[$0])" } ?? "")")
    }
}

// MARK: - Separate debug files and the unwind table

/// libc's debug file where Debian's libc6-dbg installs it; nil when it is not installed.
private let libcDebugFile: String? = {
    guard let libc = module(named: "libc.so.6") else { return nil }
    return DebugFileLocator().candidatePaths(forBuildId: libc.buildId).first { access($0, R_OK) == 0 }
}()

/// A function of libc that the unwind table lists but no symbol of libc's own
/// file covers (a static function), with room for a few pcs inside it.
private func unexportedLibcFunction(_ table: ElfSymbolTable) -> UInt64? {
    zip(table.functionStarts, table.functionStarts.dropFirst()).first { start, next in
        next - start >= 32 && table.lookup(start) == nil && table.lookup(start + 16) == nil
    }?.0
}

/// A fresh, empty directory in /tmp; the caller removes it.
private func temporaryDirectory() throws -> String {
    var template = Array("/tmp/hangwatch-debugdir-XXXXXX".utf8CString)
    try #require(mkdtemp(&template) != nil)
    return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

private func littleEndian32(_ value: Int32) -> [UInt8] {
    let bits = UInt32(bitPattern: value)
    return (0..<4).map { UInt8(truncatingIfNeeded: bits >> (8 * $0)) }
}

private func functionStarts(_ header: [UInt8], address: UInt64) -> [UInt64] {
    header.withUnsafeBytes { EhFrameHeader.functionStarts(in: $0, address: address) }
}

@Suite struct DebugInfoAndUnwindTableTests {
    @Test func locatorFollowsTheBuildIdLayout() {
        let locator = DebugFileLocator(directories: ["/usr/lib/debug", "/opt/debug/"])
        #expect(locator.candidatePaths(forBuildId: [0x93, 0xac, 0x61, 0x0e])
            == ["/usr/lib/debug/.build-id/93/ac610e.debug", "/opt/debug/.build-id/93/ac610e.debug"])
        #expect(locator.candidatePaths(forBuildId: [0x93]).isEmpty)
        #expect(locator.candidatePaths(forBuildId: []).isEmpty)
        #expect(DebugFileLocator().directories == ["/usr/lib/debug"])
    }

    @Test func glibcShipsWithoutSymtabAndSwiftBinariesWithOne() throws {
        let libc = try #require(module(named: "libc.so.6"))
        #expect(try !ElfSymbolTable(path: libc.path).hasStaticSymbols)
        #expect(try ElfSymbolTable(path: executableModule().path).hasStaticSymbols)
    }

    @Test(.enabled(if: libcDebugFile != nil, "libc6-dbg is not installed"))
    func debugFileNamesGlibcStaticFunctions() throws {
        let libc = try #require(module(named: "libc.so.6"))
        let debugPath = try #require(libcDebugFile)
        let debug = try ElfSymbolTable(path: debugPath)
        #expect(debug.buildId == libc.buildId)
        #expect(debug.hasStaticSymbols)
        // glibc's .symtab spells some names with their version (clock_gettime@@GLIBC_2.17).
        #expect(debug.symbols.allSatisfy { !$0.name.contains("@") })
        let msort = try #require(debug.symbols.first { $0.name.hasPrefix("msort_with_tmp") })
        #expect(try ElfSymbolTable(path: libc.path).lookup(msort.start)?.name != msort.name)

        let symbolicator = symbolicatorForThisProcess()
        let inMsort = msort.start + libc.loadBias + 8
        #expect(symbolicator.symbolicate(pc: inMsort, isReturnAddress: true) == Frame(symbol: msort.name, image: "libc.so.6"))
        #expect(symbolicator.symbolicate(pc: try address(ofCFunction: "qsort"), isReturnAddress: false).symbol == "qsort")
        #expect(symbolicator.symbolicate(pc: try address(ofCFunction: "clock_gettime"), isReturnAddress: false).symbol
            == "clock_gettime")
        #expect(symbolicator.notes.isEmpty)
    }

    @Test func withoutDebugFileUnnamedFunctionsAreNamedByTheirStart() throws {
        let libc = try #require(module(named: "libc.so.6"))
        let table = try ElfSymbolTable(path: libc.path)
        let start = try #require(unexportedLibcFunction(table))
        let symbolicator = Symbolicator(debugFiles: DebugFileLocator(directories: []))
        currentModules.forEach(symbolicator.addModule)

        // Every pc of the function gets the one name of its start.
        let expected = Frame(symbol: "libc.so.6+0x" + String(start + libc.loadBias - libc.start, radix: 16),
                             image: "libc.so.6")
        #expect(symbolicator.symbolicate(pc: start + libc.loadBias, isReturnAddress: false) == expected)
        #expect(symbolicator.symbolicate(pc: start + libc.loadBias + 5, isReturnAddress: true) == expected)
        #expect(symbolicator.symbolicate(pc: start + libc.loadBias + 17, isReturnAddress: true) == expected)
        // Named functions keep their names.
        #expect(symbolicator.symbolicate(pc: try address(ofCFunction: "qsort"), isReturnAddress: false).symbol == "qsort")
        #expect(symbolicator.notes.count == 1)
        #expect(symbolicator.notes.first?.hasPrefix("libc.so.6: internal functions have no names") == true)
    }

    @Test func debugFileOfAnotherBuildIsIgnored() throws {
        let libc = try #require(module(named: "libc.so.6"))
        let root = try temporaryDirectory()
        let locator = DebugFileLocator(directories: [root])
        let path = try #require(locator.candidatePaths(forBuildId: libc.buildId).first)
        let slash = try #require(path.lastIndex(of: "/"))
        let directory = String(path[..<slash])
        try #require(mkdir(root + "/.build-id", 0o700) == 0 && mkdir(directory, 0o700) == 0)
        // The test binary, a different link, sits where libc's debug file would be.
        try #require(symlink(executablePath, path) == 0)
        defer {
            unlink(path)
            rmdir(directory)
            rmdir(root + "/.build-id")
            rmdir(root)
        }

        let symbolicator = Symbolicator(debugFiles: locator)
        currentModules.forEach(symbolicator.addModule)
        #expect(symbolicator.symbolicate(pc: try address(ofCFunction: "qsort"), isReturnAddress: false).symbol == "qsort")
        #expect(symbolicator.notes.contains { $0 == "libc.so.6: debug file \(path) belongs to another build; ignored" })
    }

    @Test func unwindTableListsFunctionStarts() throws {
        let libc = try #require(module(named: "libc.so.6"))
        let table = try ElfSymbolTable(path: libc.path)
        let qsort = try address(ofCFunction: "qsort") - libc.loadBias
        #expect(table.functionStarts.count > 1000)
        #expect(zip(table.functionStarts, table.functionStarts.dropFirst()).allSatisfy { $0 < $1 })
        #expect(table.functionStarts.contains(qsort))
        #expect(table.functionStart(containing: qsort) == qsort)
        #expect(table.functionStart(containing: qsort + 3) == qsort)
        #expect(table.functionStart(containing: 0) == nil)

        let executable = try executableModule()
        let probe = probeAddress() - executable.loadBias
        #expect(try ElfSymbolTable(path: executable.path).functionStarts.contains(probe))
    }

    /// A header built by hand from the LSB layout: version, three encodings,
    /// eh_frame_ptr, fde_count, then (initial location, FDE address) pairs.
    @Test func ehFrameHeaderFromTheSpecification() {
        // eh_frame_ptr pcrel|sdata4, fde_count udata4, table datarel|sdata4: what GNU ld writes.
        let head: [UInt8] = [1, 0x1b, 0x03, 0x3b] + littleEndian32(0x100)
        let entries = [(-0x800, 0x10), (0x40, 0x20), (-0x100, 0x30), (0x40, 0x40)]
        let table = entries.flatMap { littleEndian32(Int32($0.0)) + littleEndian32(Int32($0.1)) }
        let header = head + littleEndian32(Int32(entries.count)) + table
        // Data-relative to the header at 0x1000; sorted, duplicates removed.
        #expect(functionStarts(header, address: 0x1000) == [0x800, 0xf00, 0x1040])

        // A count larger than the section: only complete entries are read.
        #expect(functionStarts(head + littleEndian32(1_000_000) + table, address: 0x1000) == [0x800, 0xf00, 0x1040])
        #expect(functionStarts(Array(header.dropLast(3)), address: 0x1000) == [0x800, 0xf00, 0x1040])
        // Unknown version, missing table, variable-length table entries, truncation: nothing.
        #expect(functionStarts([2] + header.dropFirst(), address: 0x1000).isEmpty)
        #expect(functionStarts([1, 0x1b, 0x03, 0xff] + header.dropFirst(4), address: 0x1000).isEmpty)
        #expect(functionStarts([1, 0x1b, 0x03, 0x31] + header.dropFirst(4), address: 0x1000).isEmpty)
        #expect(functionStarts(Array(header.prefix(6)), address: 0x1000).isEmpty)
        #expect(functionStarts([], address: 0).isEmpty)
    }
}

/// The order symbols are deduplicated in: by address, then by where they
/// were found, whether the addresses fit the packed sort or not.
@Suite struct SymbolAddressOrder {
    @Test func packedAndPlainSortsAgree() {
        var rng = SplitMix(seed: 5)
        for huge in [false, true] {
            let starts = (0..<5000).map { _ in
                (huge && rng.next() % 7 == 0 ? UInt64(1) << 50 : 0) + rng.next() % 900
            }
            let expected = starts.indices.sorted { (starts[$0], $0) < (starts[$1], $1) }
            #expect(ElfReader.addressOrder(starts) == expected, "huge: \(huge)")
        }
        #expect(ElfReader.addressOrder([]) == [])
        #expect(ElfReader.addressOrder([(1 << 44) - 1, 0, (1 << 44) - 1]) == [1, 0, 2])
    }
}

// MARK: - Tables that answer only the addresses asked

/// Addresses around the edges of `table`'s functions and between them: each
/// symbol's start, second byte, last byte, end and the byte before its start,
/// for every `stride`-th symbol; the unwind table's starts a few bytes in;
/// and random addresses over the whole span.
private func probingAddresses(_ table: ElfSymbolTable, stride: Int, seed: UInt64) -> [UInt64] {
    var addresses: [UInt64] = []
    for symbol in Swift.stride(from: 0, to: table.symbols.count, by: stride).map({ table.symbols[$0] }) {
        addresses += [symbol.start, symbol.start + 1, symbol.end - 1, symbol.end, symbol.start - 1]
    }
    addresses += Swift.stride(from: 0, to: table.functionStarts.count, by: stride).map { table.functionStarts[$0] + 3 }
    if let low = table.symbols.first?.start, let high = table.symbols.last?.end, high > low {
        var random = SplitMix(seed: seed)
        addresses += (0..<2000).map { _ in low + random.next() % (high - low + 64) }
    }
    return addresses
}

@Suite struct PartialSymbolTableTests {
    /// The images: libc as shipped (`.dynsym` only, many unsized and aliased
    /// symbols), libc's debug file (`.symtab` with versioned names) when
    /// installed, this test binary (thousands of Swift symbols), and the vDSO's
    /// loaded bytes in a file: no section headers, so its symbols come from the
    /// dynamic segment, unsized ranges bounded only by the next symbol.
    static let images: [String] = ["libc", "libc debug file", "test binary", "vDSO"]

    private static func path(of image: String) throws -> String? {
        switch image {
        case "libc": return try #require(module(named: "libc.so.6")).path
        case "libc debug file": return libcDebugFile
        case "vDSO":
            guard let bytes = module(named: "[vdso]")?.inlineImage else { return nil }
            let path = try temporaryDirectory() + "/vdso.so"
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            try #require(fd >= 0 && bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count)
            close(fd)
            return path
        default: return executablePath
        }
    }

    @Test(arguments: images)
    func answersAsTheWholeTableDoes(_ image: String) throws {
        guard let path = try Self.path(of: image) else { return }  // libc6-dbg not installed, or no vDSO
        defer { if image == "vDSO" { unlink(path); rmdir(String(path.dropLast("/vdso.so".count))) } }
        let whole = try ElfSymbolTable(path: path)
        try #require(whole.symbols.count > (image == "vDSO" ? 3 : 500), "\(image): \(whole.symbols.count) symbols")
        let addresses = probingAddresses(whole, stride: image == "vDSO" ? 1 : 3, seed: 0x5EED_0001)
        let partial = try ElfSymbolTable(path: path, answering: addresses)
        // Fewer symbols were kept than the file has (every one is asked of the vDSO), and each address reads the same.
        #expect(image == "vDSO" || partial.symbols.count < whole.symbols.count)
        let differing = addresses.filter { whole.lookup($0)?.name != partial.lookup($0)?.name
            || whole.lookup($0)?.offset != partial.lookup($0)?.offset }
        let first = differing.first.map { "0x\(String($0, radix: 16)): \(String(describing: whole.lookup($0))) "
            + "against \(String(describing: partial.lookup($0)))" } ?? ""
        #expect(differing.isEmpty, "\(image): \(differing.count) of \(addresses.count) differ, first at \(first)")
        #expect(partial.buildId == whole.buildId && partial.functionStarts == whole.functionStarts
            && partial.hasStaticSymbols == whole.hasStaticSymbols)
    }

    /// A symbolicator that prepared some pcs names those and every other pc
    /// (read whole on the first one not prepared) as one that did not.
    @Test func preparedSymbolicatorNamesEveryPCTheSame() throws {
        let libc = try #require(module(named: "libc.so.6"))
        let executable = try executableModule()
        var pcs: [(pc: UInt64, isReturnAddress: Bool)] = []
        for module in [libc, executable] {
            let table = try ElfSymbolTable(path: module.path)
            pcs += probingAddresses(table, stride: 11, seed: 0x5EED_0002).enumerated()
                .map { (module.loadBias + $0.element + ($0.offset % 2 == 0 ? 0 : 1), $0.offset % 2 == 1) }
        }
        let prepared = pcs.enumerated().filter { $0.offset % 3 != 0 }.map(\.element)
        let plain = symbolicatorForThisProcess(), preparing = symbolicatorForThisProcess()
        preparing.prepare(prepared)
        // The prepared pcs first, then all of them: the unprepared ones reload the tables whole.
        for list in [prepared, pcs] {
            let differing = list.filter { plain.symbolicate(pc: $0.pc, isReturnAddress: $0.isReturnAddress)
                != preparing.symbolicate(pc: $0.pc, isReturnAddress: $0.isReturnAddress)
                || plain.functionStart(pc: $0.pc, isReturnAddress: $0.isReturnAddress)
                != preparing.functionStart(pc: $0.pc, isReturnAddress: $0.isReturnAddress) }
            #expect(differing.isEmpty, "\(differing.count) of \(list.count) pcs named differently")
        }
        #expect(plain.notes == preparing.notes)
    }

    /// A prepared module's notes wait for one of its frames to be named, then come in the
    /// order frames name them: a module whose frames no report shows says nothing.
    @Test func notesOfPreparedModulesComeWithTheirFrames() throws {
        var staleLibc = try #require(module(named: "libc.so.6")), staleBinary = try executableModule()
        staleLibc.buildId = Array(repeating: 0xab, count: 20)
        staleBinary.buildId = Array(repeating: 0xcd, count: 20)
        let inLibc = try address(ofCFunction: "qsort"), inBinary = probeAddress()
        let note = { (module: ModuleImage) in
            "\(module.displayName): build-id mismatch (file was rebuilt since the run); its frames are shown as offsets"
        }
        for order in [[inLibc, inBinary], [inBinary, inLibc]] {
            let symbolicator = Symbolicator()
            [staleLibc, staleBinary].forEach(symbolicator.addModule)
            symbolicator.prepare(order.map { ($0, false) })
            #expect(symbolicator.notes.isEmpty, "before any frame: \(symbolicator.notes)")
            _ = symbolicator.symbolicate(pc: order[1], isReturnAddress: false)
            _ = symbolicator.symbolicate(pc: order[0], isReturnAddress: false)
            _ = symbolicator.symbolicate(pc: order[1] + 1, isReturnAddress: true)
            let expected = order.reversed().map { $0 == inLibc ? note(staleLibc) : note(staleBinary) }
            #expect(symbolicator.notes == expected)
        }
        let unused = Symbolicator()
        [staleLibc, staleBinary].forEach(unused.addModule)
        unused.prepare([(inLibc, false), (inBinary, false)])
        _ = unused.symbolicate(pc: inBinary, isReturnAddress: false)
        #expect(unused.notes == [note(staleBinary)], "libc was prepared, never named")
    }
}

/// The query against the whole table's deduplication on made-up symbols: the
/// cases real images rarely have (unsized symbols with no section end, nested
/// and overlapping ranges, aliases that disagree on size and section) come up
/// in every round.
@Suite struct SymbolQueryAgainstDeduplication {
    @Test func answersAsTheSortedTableOnRandomSymbols() {
        let pool = ["f", "_f", "__f", "g", "fn", "_g_alias", "h"]
        let names = pool.map { Array($0.utf8) }
        var random = SplitMix(seed: 0x5EED_0003)
        var differing = 0, asked = 0
        for _ in 0..<300 {
            let count = 1 + Int(random.next() % 40)
            let symbols: [(name: Int, start: UInt64, size: UInt64, sectionEnd: UInt64?, binding: UInt8)] = (0..<count).map { _ in
                let start = 0x1000 + random.next() % 400
                let size = random.next() % 3 == 0 ? 0 : random.next() % 60
                let sectionEnd: UInt64? = random.next() % 3 == 0 ? nil : start + random.next() % 200
                return (Int(random.next() % UInt64(pool.count)), start, size, sectionEnd, UInt8(random.next() % 3))
            }
            let addresses = (0..<(1 + Int(random.next() % 30))).map { _ in 0xFC0 + random.next() % 560 }
            names.withUnsafeBufferPointers { buffers in
                let raw = symbols.map { ElfReader.RawSymbol(name: buffers[$0.name], start: $0.start, size: $0.size,
                                                            sectionEnd: $0.sectionEnd, binding: $0.binding) }
                let whole = ElfReader.deduplicated(raw)
                var query = SymbolQuery(addresses: addresses)
                // As ElfReader feeds it: only the symbols `matters` lets through.
                for symbol in raw {
                    let slot = query.slot(of: symbol.start)
                    if query.matters(start: symbol.start, slot: slot) { query.add(symbol, slot: slot) }
                }
                let partial = query.symbols()
                for address in addresses {
                    asked += 1
                    let a = ElfSymbolTable.lookup(address, in: whole), b = ElfSymbolTable.lookup(address, in: partial)
                    if a?.name != b?.name || a?.offset != b?.offset { differing += 1 }
                }
            }
        }
        #expect(differing == 0, "\(differing) of \(asked) addresses answered differently")
    }
}

private extension Array where Element == [UInt8] {
    /// Calls `body` with a raw buffer over each element's bytes, all valid for the call.
    func withUnsafeBufferPointers<R>(_ body: ([UnsafeRawBufferPointer]) -> R) -> R {
        func nest(_ index: Int, _ done: [UnsafeRawBufferPointer]) -> R {
            guard index < count else { return body(done) }
            return self[index].withUnsafeBytes { nest(index + 1, done + [$0]) }
        }
        return nest(0, [])
    }
}
