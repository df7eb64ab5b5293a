// The libelf-facing half of ElfSymbolTable: walks the symbol-table sections
// of an open `Elf *` and turns them into plain Swift values. Everything here
// must finish before the caller's `elf_end`. The build-id and the
// dynamic-segment fallback live in their own files, as extensions.

import CLibElf
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reads function symbols and the build-id from an open libelf handle.
package struct ElfReader {
    let elf: OpaquePointer

    // MARK: Symbols

    /// A symbol as found in one table, before deduplication.
    package struct RawSymbol {
        /// The name without its version, in libelf's buffers: valid until `elf_end`.
        package var name: UnsafeRawBufferPointer
        package var start: UInt64
        package var size: UInt64
        /// End of the allocated section holding the symbol, when known; bounds size-0 symbols.
        package var sectionEnd: UInt64?
        /// STB_GLOBAL, STB_WEAK or STB_LOCAL.
        package var binding: UInt8

        /// A symbol whose `name` bytes stay valid while it is used.
        package init(name: UnsafeRawBufferPointer, start: UInt64, size: UInt64, sectionEnd: UInt64?, binding: UInt8) {
            (self.name, self.start, self.size, self.sectionEnd, self.binding) = (name, start, size, sectionEnd, binding)
        }
    }

    /// FUNC and GNU_IFUNC symbols with a nonzero address from `.symtab` and
    /// `.dynsym`, one per address, sorted, with non-overlapping ranges.
    ///
    /// An image without symbol-table sections (a memory copy that stops at the
    /// end of the loaded segment, as the vDSO's does, or a file whose section
    /// headers were stripped) falls back to the dynamic segment's symbols.
    func functionSymbols() -> [ElfSymbolTable.Symbol] {
        var raw: [RawSymbol] = []
        let foundTable = forEachFunction(where: { _ in true }) { symbol, _ in raw.append(symbol) }
        if !foundTable { raw = dynamicSegmentFunctions() }
        return Self.deduplicated(raw)
    }

    /// The symbols of ``functionSymbols()`` that answer `addresses` (ELF virtual
    /// addresses): for each, `lookup` of the result gives what the whole table's
    /// would. Other addresses get no meaningful answer from it. One pass, no sort
    /// of the image's symbols (`SymbolQuery` says how).
    func functionSymbols(answering addresses: [UInt64]) -> [ElfSymbolTable.Symbol] {
        var query = SymbolQuery(addresses: addresses)
        let foundTable = forEachFunction(where: { query.matters(start: $0, slot: query.slot(of: $0)) }) { symbol, start in
            query.add(symbol, slot: query.slot(of: start))
        }
        if !foundTable {
            for symbol in dynamicSegmentFunctions() { query.add(symbol, slot: query.slot(of: symbol.start)) }
        }
        return query.symbols()
    }

    /// True when the image carries a `.symtab` with entries: then its local
    /// functions are named and a separate debug file would add nothing.
    func hasStaticSymbolTable() -> Bool {
        var section: OpaquePointer? = nil
        while let current = elf_nextscn(elf, section) {
            section = current
            var header = GElf_Shdr()
            if gelf_getshdr(current, &header) != nil, header.sh_type == UInt32(SHT_SYMTAB),
               header.sh_size > 0 {
                return true
            }
        }
        return false
    }

    /// ELF64_ST_TYPE / ELF64_ST_BIND are C macros Swift cannot import; true
    /// for the symbol kinds that name code.
    static func isFunction(_ info: UInt8) -> Bool {
        let type = info & 0xf
        return type == UInt8(STT_FUNC) || type == UInt8(STT_GNU_IFUNC)
    }

    /// Calls `body` with each function symbol of the `.symtab` and `.dynsym`
    /// sections whose start `wanted` accepts; the name and section end are
    /// only read for those. Returns whether the image has such a section.
    private func forEachFunction(where wanted: (UInt64) -> Bool, _ body: (RawSymbol, UInt64) -> Void) -> Bool {
        var sectionEnds: [Int: UInt64?] = [:]
        var foundTable = false
        var section: OpaquePointer? = nil
        while let current = elf_nextscn(elf, section) {
            section = current
            var header = GElf_Shdr()
            guard gelf_getshdr(current, &header) != nil,
                  header.sh_type == UInt32(SHT_SYMTAB) || header.sh_type == UInt32(SHT_DYNSYM)
            else { continue }
            foundTable = true
            forEachFunction(in: current, stringTable: Int(header.sh_link), sectionEnds: &sectionEnds,
                            where: wanted, body)
        }
        return foundTable
    }

    private func forEachFunction(in section: OpaquePointer, stringTable: Int, sectionEnds: inout [Int: UInt64?],
                                 where wanted: (UInt64) -> Bool, _ body: (RawSymbol, UInt64) -> Void) {
        guard let data = elf_getdata(section, nil), data.pointee.d_buf != nil else { return }
        let entrySize = gelf_fsize(elf, ELF_T_SYM, 1, UInt32(EV_CURRENT))
        guard entrySize > 0 else { return }
        let count = data.pointee.d_size / entrySize
        // Functions come grouped by section (nearly all in .text): the last one's end is kept at hand.
        var lastSection: (index: Int, end: UInt64?) = (-1, nil)

        for index in 0..<count {
            var symbol = GElf_Sym()
            guard gelf_getsym(data, Int32(clamping: index), &symbol) != nil else { break }
            guard Self.isFunction(symbol.st_info),
                  symbol.st_value != 0,
                  symbol.st_shndx != UInt16(SHN_UNDEF),
                  wanted(symbol.st_value),
                  let cName = elf_strptr(elf, stringTable, Int(symbol.st_name)),
                  cName.pointee != 0
            else { continue }

            let sectionIndex = Int(symbol.st_shndx)
            let sectionEnd: UInt64?
            if sectionIndex == lastSection.index {
                sectionEnd = lastSection.end
            } else if let cached = sectionEnds[sectionIndex] {
                sectionEnd = cached
            } else {
                sectionEnd = allocatedSectionEnd(index: sectionIndex)
                sectionEnds[sectionIndex] = sectionEnd
            }
            lastSection = (sectionIndex, sectionEnd)
            body(RawSymbol(name: Self.unversioned(UnsafeRawBufferPointer(start: cName, count: strlen(cName))),
                           start: symbol.st_value, size: symbol.st_size, sectionEnd: sectionEnd,
                           binding: symbol.st_info >> 4), symbol.st_value)
        }
    }

    /// `clock_gettime@@GLIBC_2.17` -> `clock_gettime`. A `.symtab` (glibc's,
    /// in its debug file) spells symbols defined with `.symver` with their
    /// version; the version says nothing about what ran. No C, C++ or Swift
    /// mangled name contains `@`, so everything from it on is the version.
    static func unversioned(_ name: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        guard let at = name.firstIndex(of: UInt8(ascii: "@")), at != name.startIndex else { return name }
        return UnsafeRawBufferPointer(rebasing: name[..<at])
    }

    /// `sh_addr + sh_size` of an ordinary allocated section; nil for the
    /// reserved indices (ABS, COMMON, XINDEX) and non-loaded sections.
    private func allocatedSectionEnd(index: Int) -> UInt64? {
        guard index > 0, index < Int(SHN_LORESERVE), let section = elf_getscn(elf, index) else { return nil }
        var header = GElf_Shdr()
        guard gelf_getshdr(section, &header) != nil, header.sh_flags & UInt64(SHF_ALLOC) != 0 else { return nil }
        return header.sh_addr &+ header.sh_size
    }

    /// Keeps one name per address and fixes each symbol's end.
    ///
    /// Several names often share an address (`.symtab` and `.dynsym` repeat each
    /// other; glibc exports `__send`/`send`, `pwrite`/`pwrite64`/`__libc_pwrite`).
    /// The public-looking one is the most useful in a report: fewest leading
    /// underscores, then global over weak over local, then the shortest.
    package static func deduplicated(_ raw: [RawSymbol]) -> [ElfSymbolTable.Symbol] {
        // Sorted as (address, index) pairs, not the symbols themselves, and by
        // address alone: the name each address keeps is chosen afterwards
        // among its aliases (moving whole symbols through the sort, each with
        // a String, and comparing names inside it, dominated the report of a
        // hang in a program linked with libc; BENCHMARKS.md).
        let order = addressOrder(raw.map(\.start)).map { (start: raw[$0].start, index: $0) }
        // One group per address: its start, size and section end, and where its chosen name is in `names`.
        var groups: [(start: UInt64, size: UInt64, sectionEnd: UInt64?, name: (offset: UInt32, length: UInt32))] = []
        var names: [UInt8] = []
        var index = 0
        while index < order.count {
            var best = raw[order[index].index]
            // Aliases may disagree on size (one is often 0); take the largest.
            var size = best.size
            var anySectionEnd = best.sectionEnd
            var next = index + 1
            while next < order.count, order[next].start == best.start {
                let alias = raw[order[next].index]
                size = max(size, alias.size)
                anySectionEnd = anySectionEnd ?? alias.sectionEnd
                if isPreferredName(alias, over: best) { best = alias }
                next += 1
            }
            // Offsets are 32-bit: past 4 GiB of names, a name that does not fit is left empty.
            let offset = UInt32(clamping: names.count), length = UInt32(clamping: best.name.count)
            let fits = UInt64(offset) + UInt64(length) < UInt64(UInt32.max)
            if fits { names.append(contentsOf: best.name) }
            groups.append((best.start, size, best.sectionEnd ?? anySectionEnd, fits ? (offset, length) : (0, 0)))
            index = next
        }
        let store = SymbolNames(names)
        var result: [ElfSymbolTable.Symbol] = []
        result.reserveCapacity(groups.count)
        for (at, group) in groups.enumerated() {
            let nextStart = at + 1 < groups.count ? groups[at + 1].start : nil
            let end = symbolEnd(start: group.start, size: group.size, nextStart: nextStart, sectionEnd: group.sectionEnd)
            result.append(ElfSymbolTable.Symbol(names: store, nameOffset: group.name.offset, nameLength: group.name.length,
                                                start: group.start, end: end))
        }
        return result
    }

    /// Where the function group at `start` ends: at `start + size` when sized;
    /// unsized (typically assembly), where something else starts or its section
    /// ends, or after its first byte with neither known. A group nested inside a
    /// bigger one ends where the next starts.
    static func symbolEnd(start: UInt64, size: UInt64, nextStart: UInt64?, sectionEnd: UInt64?) -> UInt64 {
        var end: UInt64
        if size > 0 {
            end = start &+ size
            if end < start { end = .max }  // corrupt size; keep the range well-formed
        } else {
            end = [nextStart, sectionEnd].compactMap { $0 }.filter { $0 > start }.min() ?? start &+ 1
        }
        if let nextStart, end > nextStart { end = nextStart }
        return end
    }

    /// The indices of `starts` by address, then by index. Packed into one
    /// integer each when they fit (file addresses below 2^44, fewer than 2^20
    /// symbols: every real image), the sort compares plain integers, far
    /// cheaper than a sort with a comparison closure.
    package static func addressOrder(_ starts: [UInt64]) -> [Int] {
        let indexBits: UInt64 = 20
        guard starts.count < 1 << indexBits, starts.allSatisfy({ $0 < 1 << (64 - indexBits) }) else {
            return starts.indices.sorted { starts[$0] != starts[$1] ? starts[$0] < starts[$1] : $0 < $1 }
        }
        var keys = starts.enumerated().map { $0.element << indexBits | UInt64($0.offset) }
        keys.sort()
        return keys.map { Int($0 & (1 << indexBits - 1)) }
    }

    static func isPreferredName(_ lhs: RawSymbol, over rhs: RawSymbol) -> Bool {
        let lhsUnderscores = lhs.name.prefix { $0 == UInt8(ascii: "_") }.count
        let rhsUnderscores = rhs.name.prefix { $0 == UInt8(ascii: "_") }.count
        if lhsUnderscores != rhsUnderscores { return lhsUnderscores < rhsUnderscores }
        let lhsRank = bindingRank(lhs.binding), rhsRank = bindingRank(rhs.binding)
        if lhsRank != rhsRank { return lhsRank < rhsRank }
        if lhs.name.count != rhs.name.count { return lhs.name.count < rhs.name.count }
        return lhs.name.lexicographicallyPrecedes(rhs.name)
    }

    private static func bindingRank(_ binding: UInt8) -> Int {
        switch binding {
        case UInt8(STB_GLOBAL): return 0
        case UInt8(STB_WEAK): return 1
        default: return 2
        }
    }
}
