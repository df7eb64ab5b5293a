// Answers a known set of addresses from one pass over an image's symbols,
// without building the image's whole sorted table.
//
// Why: a report names a few dozen of a library's functions, but the full table
// of glibc's debug file is tens of thousands of symbols to sort, deduplicate and
// name, a large part of the hangwatch process's work for the report of a
// short hang (BENCHMARKS.md). Here each symbol costs a binary search in the
// sorted addresses, and only the few that can change an answer are looked at
// further (name, section end).
//
// The answer for an address q is what `ElfSymbolTable.lookup(q)` of the full
// table gives: the group of symbols with the greatest start at or below q (one
// name chosen among its aliases, the largest size), ending where its size, the
// next start above it or its section's end says (`ElfReader.symbolEnd`). With
// the addresses sorted, a symbol starting at s can only be the group of the first
// address at or above s (its "slot"), or of later addresses through it; and the
// next start above an address is the smallest start whose slot lies past it.
// Both are kept per slot and carried over once at the end.

/// The function groups that answer a fixed set of addresses, collected in one pass.
package struct SymbolQuery {
    /// A start address and the aliases seen there so far.
    struct Group {
        var best: ElfReader.RawSymbol
        var size: UInt64
        /// The section end of the first alias that had one (the full table's rule).
        var firstSectionEnd: UInt64?
    }

    /// The queried addresses, sorted and unique.
    package let addresses: [UInt64]
    /// Per slot: the group with the greatest start among symbols whose slot it is.
    private var groups: [Group?]
    /// Per address index k: the smallest start above addresses[k] among symbols of slot k + 1.
    private var nextAbove: [UInt64]

    /// A query for `addresses` (ELF virtual addresses, in any order, repeats allowed).
    package init<S: Sequence>(addresses: S) where S.Element == UInt64 {
        self.addresses = Array(Set(addresses)).sorted()
        groups = Array(repeating: nil, count: self.addresses.count)
        nextAbove = Array(repeating: .max, count: self.addresses.count)
    }

    /// The index of the first address at or above `start` (the count when none is).
    package func slot(of start: UInt64) -> Int {
        var low = 0, high = addresses.count
        while low < high {
            let mid = (low + high) / 2
            if addresses[mid] < start { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Whether a function starting at `start`, of slot `slot`, could change an
    /// answer: the only symbols worth reading a name or a section end for.
    package func matters(start: UInt64, slot: Int) -> Bool {
        (slot < addresses.count && (groups[slot].map { start >= $0.best.start } ?? true))
            || (slot > 0 && start < nextAbove[slot - 1])
    }

    /// Takes one function symbol into account (`slot` from ``slot(of:)``).
    package mutating func add(_ symbol: ElfReader.RawSymbol, slot: Int) {
        if slot > 0, symbol.start < nextAbove[slot - 1] { nextAbove[slot - 1] = symbol.start }
        guard slot < addresses.count else { return }
        guard var group = groups[slot], group.best.start >= symbol.start else {
            groups[slot] = Group(best: symbol, size: symbol.size, firstSectionEnd: symbol.sectionEnd)
            return
        }
        guard group.best.start == symbol.start else { return }
        group.size = max(group.size, symbol.size)
        group.firstSectionEnd = group.firstSectionEnd ?? symbol.sectionEnd
        if ElfReader.isPreferredName(symbol, over: group.best) { group.best = symbol }
        groups[slot] = group
    }

    /// The groups that answer the addresses, sorted by start, one per start;
    /// names are copied out of libelf's buffers here (call before `elf_end`).
    package func symbols() -> [ElfSymbolTable.Symbol] {
        // The next start above each address: the smallest over its own slot's and all later ones.
        var next = nextAbove
        for k in next.indices.reversed().dropFirst() { next[k] = min(next[k], next[k + 1]) }
        var chosen: [(group: Group, nextStart: UInt64?)] = []
        var current: Group?
        for k in addresses.indices {
            if let group = groups[k] { current = group }
            guard let group = current, chosen.last?.group.best.start != group.best.start else { continue }
            // No start lies between the group's and the address, so the next start above
            // the address is the next above the group, as the full table computes it.
            chosen.append((group, next[k] == .max ? nil : next[k]))
        }
        var names: [UInt8] = []
        var placed: [(offset: UInt32, length: UInt32)] = []
        for (group, _) in chosen {
            let offset = UInt32(clamping: names.count), length = UInt32(clamping: group.best.name.count)
            names.append(contentsOf: group.best.name)
            placed.append((offset, length))
        }
        let store = SymbolNames(names)
        return zip(chosen, placed).map { entry, name in
            let group = entry.group
            let end = ElfReader.symbolEnd(start: group.best.start, size: group.size, nextStart: entry.nextStart,
                                          sectionEnd: group.best.sectionEnd ?? group.firstSectionEnd)
            return ElfSymbolTable.Symbol(names: store, nameOffset: name.offset, nameLength: name.length,
                                         start: group.best.start, end: end)
        }
    }
}
