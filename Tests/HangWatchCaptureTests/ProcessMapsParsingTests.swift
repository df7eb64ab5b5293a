import Foundation
import HangWatchCapture
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The maps parser on text written by hand: every kind of line the kernel prints.
@Suite struct ProcessMapsParsing {
    private let text = """
        55d0c0a00000-55d0c0a02000 r--p 00000000 fe:00 253911                     /usr/bin/my app
        55d0c0a02000-55d0c0a07000 r-xp 00002000 fe:00 253911                     /usr/bin/my app
        7f0000000000-7f0000001000 r-xp 00001000 00:05 1234                       /memfd:jit code (deleted)
        7f0000001000-7f0000002000 r-xp 00000000 08:10 99                         /tmp/a\\012b.so (deleted)
        7f0000002000-7f0000003000 rwxp 00000000 00:00 0 
        7f0000003000-7f0000004000 r-xp 00000000 00:00 0                          [anon:jit]
        7ffd1e1fe000-7ffd1e200000 r-xp 00000000 00:00 0                          [vdso]
        7f0000004000-7f0000005000 r--s 0001f000 FD:0a 18446744073709551615       /dev/shm/x  
        not a mapping line
        7f0000006000-7f0000005000 r--p 00000000 00:00 0
        ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
        """

    @Test func everyWellFormedLineIsParsed() throws {
        let maps = ProcessMaps.parse(text)
        // The malformed line and the one whose end precedes its start are skipped.
        #expect(maps.count == 9)
        let exe = maps[1]
        #expect(exe.start == 0x55d0_c0a0_2000 && exe.end == 0x55d0_c0a0_7000)
        #expect(exe.readable && !exe.writable && exe.executable && !exe.shared)
        #expect(exe.offset == 0x2000 && exe.deviceMajor == 0xfe && exe.deviceMinor == 0 && exe.inode == 253911)
        #expect(exe.path == "/usr/bin/my app", "a space inside a path is part of it")
        #expect(!exe.deleted && exe.isFileBacked)
    }

    @Test func deletedFilesMemfdAndEscapedNewlines() {
        let maps = ProcessMaps.parse(text)
        #expect(maps[2].path == "/memfd:jit code" && maps[2].deleted && maps[2].isFileBacked)
        #expect(maps[2].displayPath == "/memfd:jit code (deleted)")
        #expect(maps[3].path == "/tmp/a\nb.so" && maps[3].deleted)
    }

    @Test func anonymousAndPseudoMappingsAreNotFiles() {
        let maps = ProcessMaps.parse(text)
        #expect(maps[4].path == nil && maps[4].inode == 0 && !maps[4].isFileBacked)
        #expect(maps[4].writable && maps[4].executable)
        #expect(maps[5].path == "[anon:jit]" && !maps[5].isFileBacked)
        #expect(maps[6].path == "[vdso]" && !maps[6].isFileBacked)
        #expect(maps[8].path == "[vsyscall]" && !maps[8].readable && maps[8].executable)
    }

    @Test func sharedUppercaseDeviceHugeInodeAndTrailingSpaces() {
        let shm = ProcessMaps.parse(text)[7]
        #expect(shm.shared && shm.offset == 0x1f000)
        #expect(shm.deviceMajor == 0xfd && shm.deviceMinor == 0x0a)
        #expect(shm.inode == UInt64.max)
        #expect(shm.path == "/dev/shm/x  ", "trailing spaces belong to the file name")
    }

    /// The images found in this very process's maps are the ones its loader
    /// reports through dl_iterate_phdr: same load bias, same PT_LOAD range,
    /// same build-id (read from memory here, from the file by the reader).
    @Test func imagesMatchWhatTheLoaderReports() throws {
        let fromMaps = ProcessMaps.moduleImages(ofProcess: getpid())
        let fromLoader = try LoaderImages.current()
        #expect(fromLoader.count >= 5)
        for loaded in fromLoader {
            let match = fromMaps.first { $0.loadBias == loaded.bias && $0.start == loaded.start }
            let image = try #require(match, "no image at \(String(loaded.start, radix: 16)) for \(loaded.name)")
            #expect(image.end == loaded.end, "\(loaded.name)")
            #expect(image.buildId == loaded.buildId, "\(loaded.name)")
            if loaded.name.contains("linux-vdso") {
                #expect(image.path == "[vdso]" && image.inlineImage != nil)
            } else if !loaded.name.isEmpty {
                #expect(image.displayName == URL(fileURLWithPath: loaded.name).resolvingSymlinksInPath().lastPathComponent)
            }
        }
        #expect(fromMaps.count == fromLoader.count, "maps: \(fromMaps.map(\.path))")
    }
}

/// dl_iterate_phdr, reached through dlsym (Glibc does not import link.h),
/// as an oracle independent of the maps reader.
private enum LoaderImages {
    struct Image {
        var name: String
        var bias: UInt64
        var start: UInt64
        var end: UInt64
        var buildId: [UInt8]
    }

    private typealias Callback = @convention(c) (UnsafeRawPointer?, Int, UnsafeMutableRawPointer?) -> Int32
    private typealias Iterate = @convention(c) (Callback, UnsafeMutableRawPointer?) -> Int32

    final class Box { var images: [Image] = [] }

    struct Missing: Error, CustomStringConvertible { var description: String }

    static func current() throws -> [Image] {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "dl_iterate_phdr") else {
            throw Missing(description: "dl_iterate_phdr not found")
        }
        let iterate = unsafeBitCast(symbol, to: Iterate.self)
        let box = Box()
        _ = withExtendedLifetime(box) {
            iterate({ info, _, data in
                guard let info, let data else { return 0 }
                // struct dl_phdr_info: addr @0, name @8, phdr @16, phnum @24 (x86_64).
                let bias = info.load(fromByteOffset: 0, as: UInt64.self)
                let name = info.load(fromByteOffset: 8, as: UnsafePointer<CChar>?.self).map { String(cString: $0) } ?? ""
                guard let phdrs = info.load(fromByteOffset: 16, as: UnsafeRawPointer?.self) else { return 0 }
                let count = Int(info.load(fromByteOffset: 24, as: UInt16.self))
                var low = UInt64.max, high: UInt64 = 0
                var buildId: [UInt8] = []
                for i in 0..<count {
                    // Elf64_Phdr: type @0, vaddr @16, memsz @40; 56 bytes.
                    let ph = phdrs + i * 56
                    let type = ph.load(fromByteOffset: 0, as: UInt32.self)
                    let vaddr = ph.load(fromByteOffset: 16, as: UInt64.self)
                    let memsz = ph.load(fromByteOffset: 40, as: UInt64.self)
                    if type == 1, memsz > 0 { // PT_LOAD
                        low = min(low, bias &+ vaddr)
                        high = max(high, bias &+ vaddr &+ memsz)
                    }
                    if type == 4, buildId.isEmpty, let notes = UnsafeRawPointer(bitPattern: UInt(bias &+ vaddr)) {
                        buildId = LoaderImages.buildId(notes: notes, size: Int(memsz))
                    }
                }
                guard low < high else { return 0 }
                let box = Unmanaged<Box>.fromOpaque(data).takeUnretainedValue()
                box.images.append(Image(name: name, bias: bias, start: low, end: high, buildId: buildId))
                return 0
            }, Unmanaged.passUnretained(box).toOpaque())
        }
        return box.images
    }

    static func buildId(notes: UnsafeRawPointer, size: Int) -> [UInt8] {
        var offset = 0
        while offset + 12 <= size {
            let nameSize = Int(notes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            let descSize = Int(notes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
            let type = notes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)
            let desc = offset + 12 + (nameSize + 3) & ~3
            guard desc + descSize <= size else { return [] }
            if type == 3, nameSize == 4 { // NT_GNU_BUILD_ID, "GNU\0"
                return Array(UnsafeRawBufferPointer(start: notes + desc, count: descSize))
            }
            offset = desc + (descSize + 3) & ~3
        }
        return []
    }
}
