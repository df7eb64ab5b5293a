// The link between a sampled pc and the debug information of its function.

/// Where a named function begins, in the terms a DWARF reader such as
/// `llvm-symbolizer` takes: the module's file and an ELF virtual address.
///
/// Every pc inside one function maps to the same start, so looking up the
/// start (rather than each pc) gives one source location per function.
package struct FunctionStart: Sendable, Hashable {
    /// The module's file, as the profiled process loaded it.
    package var modulePath: String
    /// The function symbol's value: its ELF virtual address in that file.
    package var address: UInt64

    package init(modulePath: String, address: UInt64) {
        self.modulePath = modulePath
        self.address = address
    }
}
