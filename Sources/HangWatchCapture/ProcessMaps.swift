// /proc/PID/maps, read by the hangwatch process (or the library's reader
// thread) instead of asking the target's loader. The kernel builds the text
// under the target's mmap lock only, never the dynamic loader's lock, so a
// target hung inside dl_iterate_phdr or dlopen cannot block this read.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import HangWatchSymbols

/// One line of `/proc/PID/maps`: a contiguous range of the address space with
/// one protection and one backing object.
package struct ProcessMapping: Equatable, Sendable {
    package var start: UInt64
    package var end: UInt64
    package var readable: Bool
    package var writable: Bool
    package var executable: Bool
    /// `s` (MAP_SHARED) rather than `p`.
    package var shared: Bool
    /// Offset in the backing file of `start`.
    package var offset: UInt64
    package var deviceMajor: UInt32
    package var deviceMinor: UInt32
    /// 0 for anonymous memory and the kernel's pseudo-mappings.
    package var inode: UInt64
    /// The pathname column with `\012` turned back into a newline and without
    /// the ` (deleted)` mark; nil when the column is empty (anonymous memory).
    /// Pseudo-mappings keep their brackets: `[vdso]`, `[heap]`, `[anon:name]`.
    package var path: String?
    /// The file was unlinked (or replaced by a rename) after it was mapped;
    /// memfd files always carry this mark.
    package var deleted: Bool

    /// Backed by a file (not anonymous memory, not a pseudo-mapping such as `[vdso]`).
    package var isFileBacked: Bool { inode != 0 && (path?.hasPrefix("/") ?? false) }
    /// The name the target shows for the file, with the ` (deleted)` mark when it has one.
    package var displayPath: String? { path.map { deleted ? $0 + " (deleted)" : $0 } }
}

/// Reading and parsing `/proc/PID/maps`.
package enum ProcessMaps {
    /// The raw text of `/proc/PID/maps`, or nil when the process is gone or
    /// its maps are not readable by us. Plain read(2)s: no Foundation, no locale.
    package static func readText(pid: Int32) -> [UInt8]? {
        let fd = open("/proc/\(pid)/maps", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return bytes
    }

    /// Every well-formed line of a maps text; malformed lines are skipped.
    static func parse<Bytes: Collection<UInt8>>(_ text: Bytes) -> [ProcessMapping] where Bytes.Index == Int {
        var result: [ProcessMapping] = []
        var lineStart = text.startIndex
        while lineStart < text.endIndex {
            let lineEnd = text[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? text.endIndex
            if let mapping = parseLine(text[lineStart..<lineEnd]) { result.append(mapping) }
            lineStart = lineEnd + 1
        }
        return result
    }

    /// Parses a maps text given as a String (tests and diagnostics).
    package static func parse(_ text: String) -> [ProcessMapping] { parse(Array(text.utf8)) }

    /// The images mapped in process `pid` now, as the engine's module records
    /// would give them (one-shot: reads every file's headers).
    package static func moduleImages(ofProcess pid: Int32) -> [ModuleImage] {
        guard let text = readText(pid: pid) else { return [] }
        return MappedModuleScanner(pid: pid, vdso: VDSOImage.current()).images(in: parse(text)).map(\.image)
    }

    /// `start-end perms offset major:minor inode [padding pathname]`.
    /// The pathname is everything after the padding that follows the inode,
    /// spaces included: a path may contain spaces, and only a newline is
    /// escaped (as `\012`).
    static func parseLine<Line: Collection<UInt8>>(_ line: Line) -> ProcessMapping? where Line.Index == Int {
        var cursor = line.startIndex
        func field() -> Line.SubSequence? {
            while cursor < line.endIndex, line[cursor] == UInt8(ascii: " ") { cursor += 1 }
            let begin = cursor
            while cursor < line.endIndex, line[cursor] != UInt8(ascii: " ") { cursor += 1 }
            return begin < cursor ? line[begin..<cursor] : nil
        }
        guard let range = field(), let perms = field(), let offsetText = field(),
              let deviceText = field(), let inodeText = field(),
              let dash = range.firstIndex(of: UInt8(ascii: "-")),
              let start = hex(range[range.startIndex..<dash]), let end = hex(range[(dash + 1)...]),
              start < end,
              perms.count == 4, let offset = hex(offsetText),
              let colon = deviceText.firstIndex(of: UInt8(ascii: ":")),
              let major = hex(deviceText[deviceText.startIndex..<colon]),
              let minor = hex(deviceText[(colon + 1)...]),
              let inode = decimal(inodeText)
        else { return nil }
        while cursor < line.endIndex, line[cursor] == UInt8(ascii: " ") { cursor += 1 }
        var path: String? = nil
        var deleted = false
        if cursor < line.endIndex {
            var name = unescapedNewlines(line[cursor...])
            let mark = Array(" (deleted)".utf8)
            if name.count > mark.count, Array(name.suffix(mark.count)) == mark {
                name.removeLast(mark.count)
                deleted = true
            }
            path = String(decoding: name, as: UTF8.self)
        }
        let p = Array(perms)
        return ProcessMapping(start: start, end: end,
                              readable: p[0] == UInt8(ascii: "r"), writable: p[1] == UInt8(ascii: "w"),
                              executable: p[2] == UInt8(ascii: "x"), shared: p[3] == UInt8(ascii: "s"),
                              offset: offset, deviceMajor: UInt32(truncatingIfNeeded: major),
                              deviceMinor: UInt32(truncatingIfNeeded: minor), inode: inode,
                              path: path, deleted: deleted)
    }

    private static func hex<Digits: Collection<UInt8>>(_ digits: Digits) -> UInt64? {
        guard !digits.isEmpty, digits.count <= 16 else { return nil }
        var value: UInt64 = 0
        for c in digits {
            let d: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = c - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt64(d)
        }
        return value
    }

    private static func decimal<Digits: Collection<UInt8>>(_ digits: Digits) -> UInt64? {
        guard !digits.isEmpty, digits.count <= 20 else { return nil }
        var value: UInt64 = 0
        for c in digits {
            guard c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") else { return nil }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(c - UInt8(ascii: "0")))
            guard !o1, !o2 else { return nil }
            value = sum
        }
        return value
    }

    /// The kernel escapes a newline in a path as the four bytes `\012`.
    private static func unescapedNewlines<Name: Collection<UInt8>>(_ name: Name) -> [UInt8] where Name.Index == Int {
        var out: [UInt8] = []
        out.reserveCapacity(name.count)
        var i = name.startIndex
        let escape = Array("\\012".utf8)
        while i < name.endIndex {
            if name[i] == UInt8(ascii: "\\"), name.endIndex - i >= 4, Array(name[i..<i + 4]) == escape {
                out.append(UInt8(ascii: "\n"))
                i += 4
            } else {
                out.append(name[i])
                i += 1
            }
        }
        return out
    }
}
