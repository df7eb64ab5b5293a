// Where distributions put the symbols they strip from shipped binaries.
//
// Debian's *-dbg / *-dbgsym packages (libc6-dbg for glibc), Fedora's
// debuginfo and Ubuntu's ddebs all install the removed `.symtab` as a
// separate ELF file named after the binary's build-id:
// <debug dir>/.build-id/<first byte in hex>/<remaining bytes in hex>.debug
// The build-id ties the debug file to exactly one link of the binary, so the
// name alone finds the right file; its own build-id is still checked.

/// Finds separate debug files by build-id.
package struct DebugFileLocator: Sendable, Equatable {
    /// Roots searched in order; each holds a `.build-id` directory.
    package var directories: [String]

    /// The system's standard location, used by gdb and the distributions' packages.
    package static let standardDirectories = ["/usr/lib/debug"]

    package init(directories: [String] = DebugFileLocator.standardDirectories) {
        self.directories = directories
    }

    /// Candidate paths for the debug file of the binary with `buildId`, in
    /// search order; `[]` for a build-id too short to split (fewer than 2 bytes).
    package func candidatePaths(forBuildId buildId: [UInt8]) -> [String] {
        guard buildId.count >= 2, let first = buildId.first else { return [] }
        let relative = ".build-id/" + Self.hex([first]) + "/" + Self.hex(buildId.dropFirst()) + ".debug"
        return directories.map { directory in
            directory.hasSuffix("/") ? directory + relative : directory + "/" + relative
        }
    }

    private static func hex<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        let digits = Array("0123456789abcdef")
        var text = ""
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return text
    }
}
