#if canImport(Glibc)
import Glibc
#endif

/// The environment `run` starts the program with: hangwatch's own `environ`,
/// entry for entry and byte for byte (its order, bytes that are not UTF-8,
/// entries without `=`, names given more than once), changed only where
/// `set` puts a variable the agent needs.
struct ProgramEnvironment {
    /// The entries as execve gets them, each without its NUL.
    private(set) var entries: [[UInt8]]

    /// This process's `environ` as it is now, copied.
    static func current() -> ProgramEnvironment {
        var entries: [[UInt8]] = []
        var next = environ
        while let entry = next.pointee {
            entries.append([UInt8](cString: entry))
            next += 1
        }
        return ProgramEnvironment(entries: entries)
    }

    /// The value of the last entry named `name`, or nil. The last is the
    /// one the dynamic loader goes by: it reads every LD_ entry, each
    /// overriding the one before (getenv finds the first).
    func lastValue(of name: String) -> [UInt8]? {
        entries.last { Self.entry($0, isNamed: name) }.map { Array($0.dropFirst(name.utf8.count + 1)) }
    }

    /// Makes `name=value` the only entry of that name, in the place of the
    /// first one (later ones are removed, so that readers that take the
    /// first and readers that take the last find the same value), or at the
    /// end when there is none. Every other entry stays where it was.
    mutating func set(_ name: String, to value: [UInt8]) {
        let entry = Array(name.utf8) + [UInt8(ascii: "=")] + value
        guard let first = entries.firstIndex(where: { Self.entry($0, isNamed: name) }) else {
            entries.append(entry)
            return
        }
        entries = entries[..<first] + [entry] + entries[(first + 1)...].filter { !Self.entry($0, isNamed: name) }
    }

    /// An entry is named `name` when it starts with `name=`; one without
    /// `=` defines no variable (getenv and ld.so both pass it by).
    private static func entry(_ entry: [UInt8], isNamed name: String) -> Bool {
        let name = name.utf8
        return entry.count > name.count && entry.starts(with: name) && entry[name.count] == UInt8(ascii: "=")
    }
}
