// What the symbolicator needs to know about one loaded ELF object of the
// profiled process. Recorded while the process runs, resolved afterwards.

/// One ELF object mapped into the profiled process.
package struct ModuleImage: Sendable, Hashable {
    /// File the object was loaded from, as the target saw it
    /// (for example `/usr/lib/x86_64-linux-gnu/libc.so.6`, or `[vdso]`).
    package var path: String
    /// Subtract from a runtime address to get the ELF virtual address
    /// (`dl_iterate_phdr`'s `dlpi_addr`).
    package var loadBias: UInt64
    /// Lowest runtime address covered by the object's `PT_LOAD` segments.
    package var start: UInt64
    /// One past the highest runtime address covered by its `PT_LOAD` segments.
    package var end: UInt64
    /// GNU build-id seen in the running process; empty when unknown. When set,
    /// symbols are only taken from a file with the same build-id.
    package var buildId: [UInt8]
    /// The ELF image itself, for objects that have no file (the vDSO).
    package var inlineImage: [UInt8]?

    package init(path: String, loadBias: UInt64, start: UInt64, end: UInt64,
                buildId: [UInt8] = [], inlineImage: [UInt8]? = nil) {
        self.path = path
        self.loadBias = loadBias
        self.start = start
        self.end = end
        self.buildId = buildId
        self.inlineImage = inlineImage
    }

    /// The short name shown in frames: the last path component
    /// (`libc.so.6`, `RunLoopDemo`, `[vdso]`).
    package var displayName: String {
        var trimmed = Substring(path)
        // /proc/<pid>/maps marks files unlinked after mapping; the name is still the right one.
        if trimmed.hasSuffix(" (deleted)") { trimmed = trimmed.dropLast(" (deleted)".count) }
        let last = trimmed.split(separator: "/", omittingEmptySubsequences: true).last ?? trimmed
        return last.isEmpty ? "???" : String(last)
    }
}
