// Fallback symbol source: the dynamic segment.
//
// The dynamic linker finds exported functions through PT_DYNAMIC alone, so
// the symbols are there even when no section headers are: the vDSO copied out
// of a process often ends at its last loaded byte, before the section header
// table, and some stripping tools drop section headers entirely.

import CLibElf

extension ElfReader {
    /// A PT_LOAD segment, used to turn virtual addresses into file offsets.
    private struct LoadSegment {
        var virtualAddress: UInt64
        var fileOffset: UInt64
        var fileSize: UInt64
        var memorySize: UInt64
    }

    /// FUNC / GNU_IFUNC symbols listed by `DT_SYMTAB`, sized with `DT_HASH` or
    /// `DT_GNU_HASH`. Returns `[]` whenever any piece is missing or out of bounds.
    func dynamicSegmentFunctions() -> [RawSymbol] {
        var headerCount = 0
        guard elf_getphdrnum(elf, &headerCount) == 0 else { return [] }
        var loads: [LoadSegment] = []
        var dynamic: GElf_Phdr?
        for index in 0..<headerCount {
            var header = GElf_Phdr()
            guard gelf_getphdr(elf, Int32(clamping: index), &header) != nil else { continue }
            if header.p_type == UInt32(PT_LOAD) {
                loads.append(LoadSegment(virtualAddress: header.p_vaddr, fileOffset: header.p_offset,
                                         fileSize: header.p_filesz, memorySize: header.p_memsz))
            } else if header.p_type == UInt32(PT_DYNAMIC) {
                dynamic = header
            }
        }
        var imageSize = 0
        guard let dynamic, let image = elf_rawfile(elf, &imageSize) else { return [] }
        let bytes = UnsafeRawBufferPointer(start: image, count: imageSize)
        let tags = dynamicTags(dynamic)

        func offset(of address: UInt64) -> Int? {
            guard let segment = loads.first(where: {
                address >= $0.virtualAddress && address - $0.virtualAddress < $0.fileSize
            }) else { return nil }
            return Int(exactly: segment.fileOffset + (address - segment.virtualAddress))
        }

        let symbolSize = gelf_fsize(elf, ELF_T_SYM, 1, UInt32(EV_CURRENT))
        guard symbolSize > 0,
              let symbolTable = tags[Int64(DT_SYMTAB)].flatMap(offset(of:)),
              let stringTable = tags[Int64(DT_STRTAB)].flatMap(offset(of:)),
              let stringSize = tags[Int64(DT_STRSZ)].flatMap({ Int(exactly: $0) }),
              stringTable <= imageSize, stringSize <= imageSize - stringTable,
              symbolTable < imageSize,
              let declared = symbolCount(tags: tags, bytes: bytes, offset: offset(of:))
        else { return [] }
        let count = min(declared, (imageSize - symbolTable) / symbolSize)
        guard count > 0,
              let data = elf_getdata_rawchunk(elf, Int64(symbolTable), count * symbolSize, ELF_T_SYM)
        else { return [] }
        let strings = UnsafeRawBufferPointer(rebasing: bytes[stringTable..<stringTable + stringSize])

        var result: [RawSymbol] = []
        for index in 0..<count {
            var symbol = GElf_Sym()
            guard gelf_getsym(data, Int32(clamping: index), &symbol) != nil else { break }
            guard Self.isFunction(symbol.st_info), symbol.st_value != 0,
                  symbol.st_shndx != UInt16(SHN_UNDEF),
                  let name = Self.string(at: Int(symbol.st_name), in: strings)
            else { continue }
            let segment = loads.first {
                symbol.st_value >= $0.virtualAddress && symbol.st_value - $0.virtualAddress < $0.memorySize
            }
            result.append(RawSymbol(name: name, start: symbol.st_value, size: symbol.st_size,
                                    sectionEnd: segment.map { $0.virtualAddress &+ $0.memorySize },
                                    binding: symbol.st_info >> 4))
        }
        return result
    }

    /// The dynamic array as tag -> value, first occurrence of each tag.
    private func dynamicTags(_ header: GElf_Phdr) -> [Int64: UInt64] {
        let entrySize = gelf_fsize(elf, ELF_T_DYN, 1, UInt32(EV_CURRENT))
        guard entrySize > 0,
              let offset = Int64(exactly: header.p_offset), let size = Int(exactly: header.p_filesz),
              let data = elf_getdata_rawchunk(elf, offset, size, ELF_T_DYN)
        else { return [:] }
        var tags: [Int64: UInt64] = [:]
        for index in 0..<(data.pointee.d_size / entrySize) {
            var entry = GElf_Dyn()
            guard gelf_getdyn(data, Int32(clamping: index), &entry) != nil,
                  entry.d_tag != Int64(DT_NULL)
            else { break }
            if tags[entry.d_tag] == nil { tags[entry.d_tag] = entry.d_un.d_val }
        }
        return tags
    }

    /// Number of dynamic symbols. DT_HASH states it (nchain); DT_GNU_HASH only
    /// implies it: the last chain of the highest bucket ends at the last symbol.
    private func symbolCount(tags: [Int64: UInt64], bytes: UnsafeRawBufferPointer,
                             offset: (UInt64) -> Int?) -> Int? {
        func word(_ at: Int) -> UInt32? {
            guard at >= 0, at <= bytes.count - 4 else { return nil }
            return bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self)
        }
        if let hash = tags[Int64(DT_HASH)].flatMap(offset), let chainCount = word(hash + 4) {
            return Int(chainCount)
        }
        guard let gnuHash = tags[Int64(DT_GNU_HASH)].flatMap(offset),
              let bucketCount = word(gnuHash).map(Int.init),
              let firstHashed = word(gnuHash + 4).map(Int.init),
              let bloomCount = word(gnuHash + 8).map(Int.init)
        else { return nil }
        let bloomWordSize = gelf_getclass(elf) == ELFCLASS64 ? 8 : 4
        let buckets = gnuHash + 16 + bloomCount * bloomWordSize
        let chains = buckets + bucketCount * 4
        var highest = 0
        for bucket in 0..<bucketCount {
            guard let value = word(buckets + bucket * 4) else { return nil }
            highest = max(highest, Int(value))
        }
        guard highest >= firstHashed else { return firstHashed }
        // Each chain ends with the entry whose low bit is set.
        var index = highest
        while let value = word(chains + (index - firstHashed) * 4) {
            if value & 1 == 1 { return index + 1 }
            index += 1
        }
        return nil
    }

    /// The NUL-terminated name at `offset`, only if it ends inside the table,
    /// without a version (as `.symtab` names are read), in `table`'s memory.
    private static func string(at offset: Int, in table: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard offset < table.count else { return nil }
        let tail = UnsafeRawBufferPointer(rebasing: table[offset...])
        guard let end = tail.firstIndex(of: 0), end > 0 else { return nil }
        return unversioned(UnsafeRawBufferPointer(rebasing: tail[..<end]))
    }
}
