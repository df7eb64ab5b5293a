// The part of an ELF file that says where its segments land in memory: the
// PT_LOAD program headers, plus the build-id. With it, one mapping seen in
// /proc/PID/maps (its address and file offset) gives the image's load bias
// and its whole address range, the same values dl_iterate_phdr reports.

import CLibElf
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The loadable segments and the build-id of one ELF image.
package struct ElfLoadLayout: Sendable, Equatable {
    package struct Segment: Sendable, Equatable {
        package var vaddr: UInt64
        package var memsz: UInt64
        package var offset: UInt64
        package var executable: Bool
    }

    package var segments: [Segment]
    package var buildId: [UInt8]

    /// Reads the layout of the file open at `fd` (libelf maps it, reads the
    /// headers and the notes, and unmaps it). Nil when it is not a usable ELF image.
    package static func read(fd: Int32) -> ElfLoadLayout? {
        guard libelfReady, let elf = elf_begin(fd, ELF_C_READ_MMAP, nil) else { return nil }
        defer { elf_end(elf) }
        return read(elf)
    }

    /// Reads the layout of an image held in memory (the vDSO, a deleted file's bytes).
    package static func read(image: [UInt8]) -> ElfLoadLayout? {
        guard libelfReady else { return nil }
        var bytes = image
        return bytes.withUnsafeMutableBytes { raw -> ElfLoadLayout? in
            guard let base = raw.baseAddress, raw.count > 0,
                  let elf = elf_memory(base.assumingMemoryBound(to: CChar.self), raw.count) else { return nil }
            defer { elf_end(elf) }
            return read(elf)
        }
    }

    private static func read(_ elf: OpaquePointer) -> ElfLoadLayout? {
        guard elf_kind(elf) == ELF_K_ELF else { return nil }
        var count = 0
        guard elf_getphdrnum(elf, &count) == 0 else { return nil }
        var segments: [Segment] = []
        for index in 0..<count {
            var header = GElf_Phdr()
            guard gelf_getphdr(elf, Int32(clamping: index), &header) != nil,
                  header.p_type == UInt32(PT_LOAD), header.p_memsz > 0 else { continue }
            segments.append(Segment(vaddr: header.p_vaddr, memsz: header.p_memsz, offset: header.p_offset,
                                    executable: header.p_flags & UInt32(PF_X) != 0))
        }
        guard !segments.isEmpty else { return nil }
        return ElfLoadLayout(segments: segments, buildId: ElfReader(elf: elf).buildId())
    }

    /// Lowest virtual address of the loadable segments.
    package var lowVaddr: UInt64 { segments.map(\.vaddr).min() ?? 0 }
    /// One past the highest virtual address of the loadable segments.
    package var highVaddr: UInt64 { segments.map { $0.vaddr &+ $0.memsz }.max() ?? 0 }

    /// The load bias implied by a mapping of this file at `start` with file
    /// offset `offset`: the loader maps each PT_LOAD from its page-aligned
    /// offset to bias + its page-aligned vaddr. Nil when no segment starts at
    /// that offset (the mapping is not one the loader made for this file).
    /// When several segments share the page (tiny images), the executable one
    /// is taken, as the mapping is executable.
    package func bias(ofMappingAt start: UInt64, offset: UInt64, executable: Bool, pageSize: UInt64) -> UInt64? {
        let mask = ~(pageSize - 1)
        let candidates = segments.filter { $0.offset & mask == offset }
        guard let segment = candidates.first(where: { $0.executable == executable }) ?? candidates.first else {
            return nil
        }
        let pageVaddr = segment.vaddr & mask
        guard start >= pageVaddr else { return nil }
        return start - pageVaddr
    }
}

/// libelf refuses every call until the version is negotiated; once per process.
private let libelfReady: Bool = elf_version(UInt32(EV_CURRENT)) != UInt32(EV_NONE)
