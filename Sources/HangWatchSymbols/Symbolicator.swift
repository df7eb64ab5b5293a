// Runtime addresses -> Frame(symbol:image:), inside the hangwatch process.
//
// The profiled program never symbolicates: reading symbol tables there would
// allocate and take locks in a process we are trying to observe while it is
// stuck. Instead the target records which modules were loaded where, and
// this class resolves the sampled addresses afterwards.

#if canImport(Glibc)
import Glibc
import HangWatchModel
#elseif canImport(Musl)
import Musl
#endif

/// Resolves sampled program counters against the modules of the profiled process.
///
/// Symbol tables are read lazily, the first time an address falls in a
/// module, so modules that never appear in a sample cost nothing. Results are
/// cached per address: a profile of 10,000 samples × 30 frames mostly repeats
/// a few hundred distinct addresses.
///
/// Not thread-safe; use one instance from one thread.
package final class Symbolicator {
    /// One line per module whose symbols could not be used (build-id mismatch,
    /// unreadable file), explaining why its frames appear as `image+0xOFFSET`.
    /// Filled as modules are first consulted by ``symbolicate(pc:isReturnAddress:)``.
    package private(set) var notes: [String] = []

    private enum SymbolSource {
        case notLoaded
        case loaded(ModuleSymbols)
        case unavailable
    }

    /// The tables of one module: its own file, plus the separate debug file
    /// when its own file was shipped without `.symtab` and one is installed.
    private struct ModuleSymbols {
        let own: ElfSymbolTable
        let debug: ElfSymbolTable?
        /// For tables read by ``Symbolicator/prepare(_:)``: the only file
        /// addresses they answer. Nil: the whole tables.
        let answers: Set<UInt64>?
        /// Whether local (static) functions have names; if not, they are named by start offset.
        var namesLocalFunctions: Bool { own.hasStaticSymbols || debug != nil }
    }

    private final class Module {
        let image: ModuleImage
        let displayName: String
        var source: SymbolSource = .notLoaded
        /// Set once a note has said that some of its functions have no name.
        var notedUnnamedFunctions = false
        /// Notes of a load done by `prepare`, published when an address first resolves here:
        /// a module whose frames no report shows says nothing.
        var deferredNotes: [String] = []
        /// Notes already published for this module (a reload of prepared tables repeats them).
        var publishedNotes: Set<String> = []
        init(_ image: ModuleImage) {
            self.image = image
            self.displayName = image.displayName
        }
    }

    private struct CacheKey: Hashable {
        let pc: UInt64
        let isReturnAddress: Bool
    }

    /// What one address resolved to: its frame, and the start of its
    /// function when a symbol named it.
    private struct Resolution {
        let frame: Frame
        let start: FunctionStart?
    }

    /// Sorted by `image.start`.
    private var modules: [Module] = []
    private var cache: [CacheKey: Resolution] = [:]
    private var demangler = Demangler()
    private let debugFiles: DebugFileLocator
    /// Set while `prepare` loads tables: their notes wait for the module's first resolved address.
    private var preparing = false

    /// - Parameter debugFiles: where to look for separate debug files of
    ///   modules whose own file has no `.symtab` (glibc as distributions ship it).
    package init(debugFiles: DebugFileLocator = DebugFileLocator()) {
        self.debugFiles = debugFiles
    }

    /// Registers a module of the profiled process. Empty ranges and exact
    /// duplicates are ignored.
    package func addModule(_ image: ModuleImage) {
        guard image.start < image.end else { return }
        let index = firstModuleIndex(startingAtOrAfter: image.start)
        if index < modules.count, modules[index].image == image { return }
        modules.insert(Module(image), at: index)
        // Addresses that fell outside every module before may now resolve.
        cache.removeAll(keepingCapacity: true)
    }

    /// The frame for a sampled program counter.
    ///
    /// - Parameter isReturnAddress: true for every frame except the interrupted
    ///   leaf. A return address points after the call instruction, possibly
    ///   already into the next function, so one byte is subtracted before lookup.
    /// - Returns: the demangled function and module name. When no symbol covers
    ///   the address, `image+0xSTART` with the offset (from the module's start)
    ///   of the function's first instruction, taken from the unwind table, so
    ///   every pc of one unnamed function gets one name. When even that is
    ///   unknown or the module's file cannot be trusted, `image+0xOFFSET` of
    ///   the pc itself; `0xPC` in image `???` outside every module.
    package func symbolicate(pc: UInt64, isReturnAddress: Bool) -> Frame {
        resolution(pc: pc, isReturnAddress: isReturnAddress).frame
    }

    /// The module file and ELF virtual address of the symbol that names the
    /// frame of `pc` (same `isReturnAddress` rule as ``symbolicate(pc:isReturnAddress:)``),
    /// for looking up its source in the module's debug information.
    ///
    /// Nil when no symbol covers the address (frames named by offset), when
    /// the module's file cannot be trusted, and for modules without a file (the vDSO).
    package func functionStart(pc: UInt64, isReturnAddress: Bool) -> FunctionStart? {
        resolution(pc: pc, isReturnAddress: isReturnAddress).start
    }

    private func resolution(pc: UInt64, isReturnAddress: Bool) -> Resolution {
        let key = CacheKey(pc: pc, isReturnAddress: isReturnAddress)
        if let known = cache[key] { return known }
        let resolved = resolve(pc: pc, isReturnAddress: isReturnAddress)
        cache[key] = resolved
        return resolved
    }

    /// Reads, for every module no address has fallen in yet, only the symbols
    /// that name `pcs` (each with the `isReturnAddress` rule of
    /// ``symbolicate(pc:isReturnAddress:)``): one pass over each image's
    /// symbols instead of a sorted table of all of them. A later address of
    /// such a module that was not prepared reads the whole tables then.
    package func prepare(_ pcs: [(pc: UInt64, isReturnAddress: Bool)]) {
        // Modules in the order their first pc comes, so that their notes do too.
        var wanted: [(module: Module, addresses: [UInt64])] = []
        var index: [ObjectIdentifier: Int] = [:]
        for (pc, isReturnAddress) in pcs {
            guard let module = module(containing: pc), case .notLoaded = module.source,
                  module.image.inlineImage == nil,
                  let address = fileAddress(pc: pc, isReturnAddress: isReturnAddress, in: module)
            else { continue }
            let at = index[ObjectIdentifier(module)] ?? {
                wanted.append((module, []))
                index[ObjectIdentifier(module)] = wanted.count - 1
                return wanted.count - 1
            }()
            wanted[at].addresses.append(address)
        }
        preparing = true
        defer { preparing = false }
        for (module, addresses) in wanted { _ = symbols(of: module, answering: addresses) }
    }

    /// The ELF virtual address `pc` is looked up at: less the load bias, and
    /// one byte back for a return address. Nil where either would underflow.
    private func fileAddress(pc: UInt64, isReturnAddress: Bool, in module: Module) -> UInt64? {
        let (biased, underflow1) = pc.subtractingReportingOverflow(module.image.loadBias)
        let (address, underflow2) = biased.subtractingReportingOverflow(isReturnAddress ? 1 : 0)
        return underflow1 || underflow2 ? nil : address
    }

    private func resolve(pc: UInt64, isReturnAddress: Bool) -> Resolution {
        guard let module = module(containing: pc) else {
            return Resolution(frame: Frame(symbol: "0x" + String(pc, radix: 16), image: "???"), start: nil)
        }
        let fallback = Resolution(
            frame: Frame(symbol: "\(module.displayName)+0x\(String(pc - module.image.start, radix: 16))",
                         image: module.displayName),
            start: nil)
        publishDeferredNotes(of: module)
        guard var tables = symbols(of: module) else { return fallback }
        guard let fileAddress = fileAddress(pc: pc, isReturnAddress: isReturnAddress, in: module) else { return fallback }
        if let answers = tables.answers, !answers.contains(fileAddress) {
            // Not prepared: the partial tables cannot answer it; the whole ones can.
            module.source = .notLoaded
            guard let whole = symbols(of: module) else { return fallback }
            tables = whole
        }
        // The debug file's table is complete and sized; the own file's may be
        // only `.dynsym`, whose unsized entries can stretch over static code.
        if let hit = tables.debug?.lookup(fileAddress) ?? tables.own.lookup(fileAddress) {
            // Split debug files keep the addresses of the file they were split
            // from, so the start is valid in the module's own file.
            let start = module.image.inlineImage == nil
                ? FunctionStart(modulePath: module.image.path, address: fileAddress - hit.offset) : nil
            return Resolution(frame: Frame(symbol: demangler.demangle(hit.name), image: module.displayName),
                              start: start)
        }
        guard let start = tables.own.functionStart(containing: fileAddress) else { return fallback }
        let (runtimeStart, overflow) = start.addingReportingOverflow(module.image.loadBias)
        guard !overflow, runtimeStart >= module.image.start, runtimeStart <= pc else { return fallback }
        if !tables.namesLocalFunctions { noteUnnamedFunctions(in: module) }
        return Resolution(
            frame: Frame(symbol: "\(module.displayName)+0x\(String(runtimeStart - module.image.start, radix: 16))",
                         image: module.displayName),
            start: nil)
    }

    /// Adds a note about `module`: at once, or, while `prepare` loads it, when
    /// an address of it first resolves. Each text once per module.
    private func note(about module: Module, _ text: String) {
        if preparing {
            if !module.deferredNotes.contains(text) { module.deferredNotes.append(text) }
        } else if module.publishedNotes.insert(text).inserted {
            notes.append(text)
        }
    }

    private func publishDeferredNotes(of module: Module) {
        guard !module.deferredNotes.isEmpty else { return }
        let pending = module.deferredNotes
        module.deferredNotes = []
        for text in pending { note(about: module, text) }
    }

    private func noteUnnamedFunctions(in module: Module) {
        guard !module.notedUnnamedFunctions else { return }
        module.notedUnnamedFunctions = true
        let places = debugFiles.directories.map { $0 + "/.build-id" }.joined(separator: " or ")
        let debugFile = places.isEmpty ? "no debug file" : "no debug file in " + places
        note(about: module, "\(module.displayName): internal functions have no names (no .symtab, and \(debugFile)); "
            + "they are shown as \(module.displayName)+0xSTART, the offset of the function's start")
    }

    /// The module whose `start..<end` contains `pc`, by binary search.
    private func module(containing pc: UInt64) -> Module? {
        // Index of the first module starting after pc; the one before it is the candidate.
        var low = 0
        var high = modules.count
        while low < high {
            let mid = (low + high) / 2
            if modules[mid].image.start <= pc { low = mid + 1 } else { high = mid }
        }
        guard low > 0 else { return nil }
        let candidate = modules[low - 1]
        return pc < candidate.image.end ? candidate : nil
    }

    private func firstModuleIndex(startingAtOrAfter address: UInt64) -> Int {
        var low = 0
        var high = modules.count
        while low < high {
            let mid = (low + high) / 2
            if modules[mid].image.start < address { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The module's symbol tables, loading them on first use. Nil (with a note)
    /// when the image cannot be read or is not the binary that ran.
    /// With `addresses` (file addresses), only the symbols that answer them.
    private func symbols(of module: Module, answering addresses: [UInt64]? = nil) -> ModuleSymbols? {
        switch module.source {
        case let .loaded(tables): return tables
        case .unavailable: return nil
        case .notLoaded: break
        }
        do {
            let table = if let bytes = module.image.inlineImage {
                try ElfSymbolTable(image: bytes)
            } else {
                try ElfSymbolTable(path: module.image.path, answering: addresses)
            }
            // A rebuilt binary has different addresses; its symbols would name
            // the wrong functions, which is worse than naming none.
            if !module.image.buildId.isEmpty, table.buildId != module.image.buildId {
                note(about: module, "\(module.displayName): build-id mismatch (file was rebuilt since the run); "
                    + "its frames are shown as offsets")
                module.source = .unavailable
                return nil
            }
            let tables = ModuleSymbols(own: table,
                                       debug: table.hasStaticSymbols ? nil : debugTable(for: module, table, answering: addresses),
                                       answers: addresses.map(Set.init))
            module.source = .loaded(tables)
            return tables
        } catch {
            note(about: module, "\(module.displayName): symbols unavailable (\(error)); its frames are shown as offsets")
            module.source = .unavailable
            return nil
        }
    }

    /// The separate debug file of a module whose own file has no `.symtab`,
    /// when one is installed and was split from this very build.
    private func debugTable(for module: Module, _ own: ElfSymbolTable, answering addresses: [UInt64]?) -> ElfSymbolTable? {
        let buildId = module.image.buildId.isEmpty ? own.buildId : module.image.buildId
        for path in debugFiles.candidatePaths(forBuildId: buildId) {
            let table: ElfSymbolTable
            do throws(ElfReadError) {
                table = try ElfSymbolTable(path: path, answering: addresses)
            } catch .cannotOpen(_, ENOENT) {
                continue  // not installed: the common case, nothing to report
            } catch {
                note(about: module, "\(module.displayName): debug file unusable (\(error))")
                continue
            }
            // Same safety rule as for the module itself: symbols of another
            // build would name the wrong functions.
            guard table.buildId == buildId else {
                note(about: module, "\(module.displayName): debug file \(path) belongs to another build; ignored")
                continue
            }
            return table
        }
        return nil
    }
}
