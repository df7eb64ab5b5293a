// Symbolication against the real objects loaded in this test process: the
// test binary itself, glibc and the vDSO. No fixtures: the same code paths
// hangwatch uses on a profiled program, pointed at ourselves.

import Testing
import HangWatch
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

    @Test func unreadableInputsThrow() {
        #expect(throws: ElfReadError.self) { try ElfSymbolTable(path: "/nonexistent/file") }
        #expect(throws: ElfReadError.notARegularFile(path: "/tmp")) { try ElfSymbolTable(path: "/tmp") }
        if let script = try? temporaryFile(containing: "#!/bin/sh\necho hi\n") {
            defer { unlink(script) }
            #expect(throws: ElfReadError.notELF) { try ElfSymbolTable(path: script) }
        }
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

    @Test func tenThousandSamplesOfThirtyFramesAreFast() throws {
        let symbolicator = symbolicatorForThisProcess()
        var pcs = try ["qsort", "malloc", "free", "memcpy", "strlen", "printf", "read", "write", "poll", "nanosleep"]
            .map { try address(ofCFunction: $0) }
        pcs.append(probeAddress())
        // 30 distinct stack slots, as a deep hang stack would have.
        let frames = (0..<30).map { pcs[$0 % pcs.count] + UInt64($0 / pcs.count) }

        let clock = ContinuousClock()
        var resolved = 0
        let elapsed = clock.measure {
            for _ in 0..<10_000 {
                for (depth, pc) in frames.enumerated() {
                    let frame = symbolicator.symbolicate(pc: pc, isReturnAddress: depth > 0)
                    resolved &+= frame.symbol.utf8.count
                }
            }
        }
        #expect(resolved > 0)
        #expect(elapsed < .milliseconds(500), "took \(elapsed)")
    }
}
