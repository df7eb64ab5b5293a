// Function symbols of one ELF image, sorted for address lookup.
//
// The table is read completely while the file is open and then the file is
// closed, so a table is a plain immutable value: it holds no descriptor, no
// mapping and no libelf handle, and can be shared freely.

import CLibElf
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why an ELF image could not be read. The description is short enough to be
/// quoted in a report note.
package enum ElfReadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `open(2)` or `fstat(2)` failed; carries `errno`.
    case cannotOpen(path: String, errno: Int32)
    /// The path names something other than a regular file (a directory, a FIFO, ...).
    case notARegularFile(path: String)
    /// libelf could not be initialised or refused the input.
    case libelf(String)
    /// The bytes are not an ELF object (for example a script or an archive).
    case notELF

    package var description: String {
        switch self {
        case let .cannotOpen(path, err):
            return "cannot open \(path): \(String(cString: strerror(err)))"
        case let .notARegularFile(path):
            return "\(path) is not a regular file"
        case let .libelf(message):
            return "libelf: \(message)"
        case .notELF:
            return "not an ELF file"
        }
    }
}

/// The function symbols (`STT_FUNC` and `STT_GNU_IFUNC`) of one ELF image plus
/// its GNU build-id.
///
/// Both `.symtab` and `.dynsym` are read: Swift's internal functions only
/// appear in `.symtab`, while system libraries are shipped stripped and only
/// keep `.dynsym`. Addresses are ELF virtual addresses (file addresses), i.e.
/// runtime address minus the module's load bias.
package struct ElfSymbolTable: Sendable {
    /// One function, covering the half-open address range `start..<end`.
    ///
    /// For symbols the linker gave a size, `end` is `start + size`. Hand-written
    /// assembly often has size 0; such a symbol is taken to extend up to the
    /// next symbol or to the end of its section, whichever comes first.
    package struct Symbol: Sendable, Hashable {
        /// The raw (mangled) name as stored in the string table, without a
        /// symbol version. Made when asked: a report names a few dozen of a
        /// library's thousands of functions.
        package var name: String { names.string(at: nameOffset, length: nameLength) }
        package let start: UInt64
        package let end: UInt64
        private let names: SymbolNames
        private let nameOffset: UInt32
        private let nameLength: UInt32

        init(names: SymbolNames, nameOffset: UInt32, nameLength: UInt32, start: UInt64, end: UInt64) {
            self.names = names
            self.nameOffset = nameOffset
            self.nameLength = nameLength
            self.start = start
            self.end = end
        }

        package static func == (lhs: Symbol, rhs: Symbol) -> Bool {
            lhs.start == rhs.start && lhs.end == rhs.end && lhs.name == rhs.name
        }

        package func hash(into hasher: inout Hasher) {
            hasher.combine(start)
            hasher.combine(end)
            hasher.combine(name)
        }
    }

    /// Deduplicated symbols sorted by `start`; ranges never overlap. A table
    /// read with `answering:` holds only those that answer its addresses.
    package let symbols: [Symbol]
    /// The `NT_GNU_BUILD_ID` note's descriptor, or empty if the image has none.
    package let buildId: [UInt8]
    /// True when the image has a `.symtab`, so local functions have names too.
    /// Distribution libraries ship without one (their debug files have it).
    package let hasStaticSymbols: Bool
    /// Start addresses of the functions listed in `.eh_frame_hdr`, sorted;
    /// names functions that no symbol covers (see ``functionStart(containing:)``).
    package let functionStarts: [UInt64]

    /// Reads the ELF file at `path`; with `addresses` (ELF virtual addresses),
    /// only the symbols that answer them: ``lookup(_:)`` then gives for each of
    /// them what the whole table's would, and nothing meaningful for others
    /// (one pass over the file's symbols, none sorted; the build-id, the
    /// `.symtab` flag and the unwind table's starts are read whole either way).
    ///
    /// Throws ``ElfReadError`` when the file is missing, unreadable, not a
    /// regular file or not ELF; it never traps on bad input.
    package init(path: String, answering addresses: [UInt64]? = nil) throws(ElfReadError) {
        (symbols, buildId, hasStaticSymbols, functionStarts) = try Self.withElf(path: path) { elf throws(ElfReadError) in
            try Self.read(elf, answering: addresses)
        }
    }

    /// Opens `path` for libelf, runs `body` on it and closes it again.
    private static func withElf(path: String, _ body: (OpaquePointer) throws(ElfReadError) -> Contents) throws(ElfReadError) -> Contents {
        try requireLibelf()
        // O_NONBLOCK: opening a FIFO that happens to sit at a stale module path
        // must not hang the symbolicator. It has no effect on regular files.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw .cannotOpen(path: path, errno: errno) }
        defer { close(fd) }

        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .cannotOpen(path: path, errno: errno) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw .notARegularFile(path: path) }

        guard let elf = elf_begin(fd, ELF_C_READ_MMAP, nil) else { throw .libelf(libelfMessage()) }
        defer { elf_end(elf) }
        return try body(elf)
    }

    /// Reads an ELF image held in memory, such as the vDSO copied out of the
    /// target process (it has no file on disk).
    package init(image: [UInt8]) throws(ElfReadError) {
        try requireLibelf()
        // elf_memory wants a mutable pointer and keeps using the buffer until
        // elf_end, so all reading happens inside this closure on a private copy.
        var bytes = image
        let result: Result<Contents, ElfReadError> = bytes.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress, raw.count > 0 else { return .failure(.notELF) }
            guard let elf = elf_memory(base.assumingMemoryBound(to: CChar.self), raw.count) else {
                return .failure(.libelf(libelfMessage()))
            }
            defer { elf_end(elf) }
            return Result { () throws(ElfReadError) in try Self.read(elf, answering: nil) }
        }
        (symbols, buildId, hasStaticSymbols, functionStarts) = try result.get()
    }

    private typealias Contents = (symbols: [Symbol], buildId: [UInt8], hasStaticSymbols: Bool, functionStarts: [UInt64])

    /// The whole table, or with `addresses` only the symbols that answer them.
    private static func read(_ elf: OpaquePointer, answering addresses: [UInt64]?) throws(ElfReadError) -> Contents {
        guard elf_kind(elf) == ELF_K_ELF else { throw .notELF }
        let reader = ElfReader(elf: elf)
        let symbols = addresses.map { reader.functionSymbols(answering: $0) } ?? reader.functionSymbols()
        return (symbols, reader.buildId(), reader.hasStaticSymbolTable(), reader.unwindFunctionStarts())
    }

    /// The function containing `address` (an ELF virtual address) and how far
    /// into it the address lies, or nil if no function covers it.
    package func lookup(_ address: UInt64) -> (name: String, offset: UInt64)? {
        Self.lookup(address, in: symbols)
    }

    /// ``lookup(_:)`` in `symbols`, sorted by start with ranges that never overlap.
    package static func lookup(_ address: UInt64, in symbols: [Symbol]) -> (name: String, offset: UInt64)? {
        // Binary search for the last symbol whose start is <= address.
        var low = 0
        var high = symbols.count
        while low < high {
            let mid = (low + high) / 2
            if symbols[mid].start <= address { low = mid + 1 } else { high = mid }
        }
        guard low > 0 else { return nil }
        let candidate = symbols[low - 1]
        guard address < candidate.end else { return nil }
        return (candidate.name, address - candidate.start)
    }

    /// The start of the function holding `address` according to the unwind
    /// table: the greatest listed start at or below it, or nil below the first.
    ///
    /// The table records where functions begin, not where they end, so an
    /// address past the last function still maps to it; callers use this only
    /// for addresses the program really executed, which lie inside some function.
    package func functionStart(containing address: UInt64) -> UInt64? {
        var low = 0
        var high = functionStarts.count
        while low < high {
            let mid = (low + high) / 2
            if functionStarts[mid] <= address { low = mid + 1 } else { high = mid }
        }
        return low > 0 ? functionStarts[low - 1] : nil
    }
}

/// The names of one table's symbols, end to end (UTF-8, no separators):
/// one buffer for the whole table instead of a String per symbol.
final class SymbolNames: Sendable {
    private let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The name stored at `offset` (bytes out of range read as none).
    func string(at offset: UInt32, length: UInt32) -> String {
        let from = min(Int(offset), bytes.count), to = min(from + Int(length), bytes.count)
        return String(decoding: bytes[from..<to], as: UTF8.self)
    }
}

/// libelf refuses every call until the library version has been negotiated
/// once; a lazily initialised global makes that happen exactly once, thread-safely.
private let libelfVersionAccepted: Bool = elf_version(UInt32(EV_CURRENT)) != UInt32(EV_NONE)

private func requireLibelf() throws(ElfReadError) {
    guard libelfVersionAccepted else { throw .libelf("library version mismatch") }
}

private func libelfMessage() -> String {
    guard let message = elf_errmsg(-1) else { return "unknown error" }
    return String(cString: message)
}
