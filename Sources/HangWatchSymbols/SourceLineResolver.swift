// Function sources (`path:line`) from DWARF, through the toolchain's llvm-symbolizer.
//
// hangwatch reads symbol tables itself but not DWARF line tables: that is a
// large format, and every LLVM or Swift toolchain already ships a reader for
// it. All lookups of one report go to a single llvm-symbolizer process, as
// lines `"<module file>" 0x<address>` on its standard input.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Finds where functions are defined, for `hangwatch run --source-lines`.
///
/// Never fails: whatever goes wrong (no llvm-symbolizer, a module without
/// debug information, a symbolizer that hangs) leaves those functions without
/// a source and, for anything a reader should know, adds a line to ``notes``.
/// Results are cached, so asking again only queries new functions.
///
/// Not thread-safe; use one instance from one thread.
package final class SourceLineResolver {
    package static let defaultTimeoutSeconds: Double = 30

    /// The llvm-symbolizer to run; nil when none was found.
    package let symbolizerPath: String?
    /// Time the symbolizer may take for one batch before it is killed.
    package let timeoutSeconds: Double
    /// What went wrong, one line each, for the report's notes.
    package private(set) var notes: [String] = []

    /// Known answers; a nil value is a function known to have no source.
    private var known: [FunctionStart: String?] = [:]

    /// - Parameter symbolizerPath: the program to run; nil means there is none
    ///   (a note says so). Use ``findSymbolizer(searchPath:)`` to look for one.
    package init(symbolizerPath: String?, timeoutSeconds: Double = SourceLineResolver.defaultTimeoutSeconds) {
        self.symbolizerPath = symbolizerPath
        self.timeoutSeconds = timeoutSeconds
    }

    /// A resolver using the llvm-symbolizer found in `$PATH` or next to `swift`.
    package convenience init() {
        self.init(symbolizerPath: Self.findSymbolizer())
    }

    /// `llvm-symbolizer` from the directories of `searchPath` (`$PATH` by
    /// default); else the one next to the `swift` found there, where Swift
    /// toolchains install it (`/opt/swift/usr/bin/llvm-symbolizer`), even when
    /// `swift` itself is reached through a symlink.
    package static func findSymbolizer(searchPath: String? = getenv("PATH").map { String(cString: $0) }) -> String? {
        let directories = (searchPath ?? "").split(separator: ":").map(String.init)
        for directory in directories where isExecutableFile(directory + "/llvm-symbolizer") {
            return directory + "/llvm-symbolizer"
        }
        for directory in directories where isExecutableFile(directory + "/swift") {
            var candidates = [directory + "/llvm-symbolizer"]
            if let real = realpath(directory + "/swift", nil) {
                let resolved = String(cString: real)
                free(real)
                if let slash = resolved.lastIndex(of: "/") {
                    candidates.append(String(resolved[..<slash]) + "/llvm-symbolizer")
                }
            }
            if let found = candidates.first(where: isExecutableFile) { return found }
        }
        return nil
    }

    /// The sources of the functions in `starts` that have one.
    /// Even with no function to look up, a missing symbolizer is noted: the
    /// reader asked for source lines and should learn why there are none.
    package func sources(for starts: some Sequence<FunctionStart>) -> [FunctionStart: String] {
        guard let symbolizerPath else {
            note("source lines: llvm-symbolizer was not found (looked in PATH and next to the swift compiler); "
                 + "frames are shown without file:line. Install LLVM, or put a Swift toolchain's usr/bin in PATH")
            return [:]
        }
        guard access(symbolizerPath, X_OK) == 0 else {
            note("source lines: \(symbolizerPath) cannot be run (\(errnoDescription())); frames are shown without file:line")
            return [:]
        }
        let wanted = Set(starts)
        let unknown = wanted.filter { known[$0] == nil }
            // A file name cannot be quoted if it holds a quote or a line break.
            .filter { !$0.modulePath.contains("\"") && !$0.modulePath.contains("\n") }
        if !unknown.isEmpty { query(unknown, with: symbolizerPath) }
        var found: [FunctionStart: String] = [:]
        for start in wanted {
            if let source = known[start] ?? nil { found[start] = source }
        }
        return found
    }

    private func query(_ starts: Set<FunctionStart>, with symbolizerPath: String) {
        // Sorted so the input, and thus the symbolizer's work, is the same on every run.
        let ordered = starts.sorted { ($0.modulePath, $0.address) < ($1.modulePath, $1.address) }
        let input = ordered.map { "\"\($0.modulePath)\" 0x\(String($0.address, radix: 16))\n" }.joined()
        let child = TimedChildProcess(
            executable: symbolizerPath, arguments: ["--output-style=JSON"],
            // With DEBUGINFOD_URLS set, LLVM fetches debug files over the network:
            // slow at best, and the report should not wait on a server.
            removedEnvironment: ["DEBUGINFOD_URLS"],
            timeoutSeconds: timeoutSeconds)

        let output: [UInt8]
        switch child.run(input: Array(input.utf8)) {
        case let .cannotStart(why):
            note("source lines: \(why); frames are shown without file:line")
            return
        case let .timedOut(partial):
            note("source lines: \(symbolizerPath) did not finish within \(Self.seconds(timeoutSeconds)) and was stopped; "
                 + "some frames are shown without file:line")
            output = partial
        case let .finished(status, complete):
            if status != 0 {
                note("source lines: \(symbolizerPath) exited with status \(status); some frames may lack file:line")
            }
            output = complete
        }
        record(output: output, for: starts)
    }

    /// Matches answers to queries by module and address (not by position, so
    /// a line the symbolizer skipped cannot shift the others), then marks the
    /// queries left unanswered as having no source.
    private func record(output: [UInt8], for starts: Set<FunctionStart>) {
        var failedModules = Set<String>()
        for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
            guard let answer = SymbolizerAnswer(jsonLine: line) else { continue }
            let start = FunctionStart(modulePath: answer.modulePath, address: answer.address)
            guard starts.contains(start) else { continue }
            known[start] = .some(answer.source)
            if let error = answer.error, failedModules.insert(answer.modulePath).inserted {
                note("source lines: \(answer.modulePath): \(error)")
            }
        }
        for start in starts where known[start] == nil { known[start] = .some(nil) }
    }

    private func note(_ text: String) {
        if !notes.contains(text) { notes.append(text) }
    }

    private static func isExecutableFile(_ path: String) -> Bool {
        var info = stat()
        return access(path, X_OK) == 0 && stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() && value < 1e9 ? "\(Int(value)) s" : "\(value) s"
    }
}
