import Foundation
import HangWatchModel
import HangWatchSymbols

/// Facts about source files and binaries that source-line tests compare
/// hangwatch's answers with, measured independently of hangwatch.
package enum SourceFacts {
    /// The 1-based line of the first line of `file` containing `text` (what `grep -n` prints).
    package static func line(of text: String, in file: String) throws -> Int {
        let contents = try String(contentsOfFile: file, encoding: .utf8)
        let lines = contents.split(separator: "\n", omittingEmptySubsequences: false)
        guard let index = lines.firstIndex(where: { $0.contains(text) }) else {
            throw TestFailure("\(text) not found in \(file)")
        }
        return index + 1
    }

    /// Whether `path` has DWARF line tables of its own, by readelf's section list.
    package static func hasDebugLine(_ path: String) throws -> Bool {
        let result = try ProcessRunner.run("/usr/bin/readelf", ["-S", "-W", path], timeout: 30)
        guard result.status == 0 else { throw TestFailure("readelf failed on \(path): \(result.stderr)") }
        return result.stdout.contains(".debug_line")
    }

    /// Whether a separate debug file for `path` is installed (libc6-dbg for glibc).
    package static func hasSeparateDebugFile(_ path: String) throws -> Bool {
        let buildId = try ElfSymbolTable(path: path).buildId
        return DebugFileLocator().candidatePaths(forBuildId: buildId).contains { FileManager.default.fileExists(atPath: $0) }
    }

    /// The file the dynamic loader picks for library `name` of `program`, from `ldd`.
    package static func library(named name: String, loadedBy program: String) throws -> String {
        let result = try ProcessRunner.run("/usr/bin/ldd", [program], timeout: 30)
        for line in result.stdout.split(separator: "\n") {
            // "\tlibFoundation.so => /opt/swift/usr/lib/swift/linux/libFoundation.so (0x...)"
            let words = line.split(separator: " ").map { $0.trimmingCharacters(in: .whitespaces) }
            if words.count >= 3, words[0] == name, words[1] == "=>" { return words[2] }
        }
        throw TestFailure("ldd does not list \(name) for \(program): \(result.stdout)")
    }

    /// Every node of a tree, depth first.
    package static func nodes(_ tree: CallTreeNode) -> [CallTreeNode] {
        var all: [CallTreeNode] = []
        var pending = [tree]
        while let node = pending.popLast() {
            all.append(node)
            pending.append(contentsOf: node.children.reversed())
        }
        return all
    }

    /// Every node of every call tree in a report (hangs and launch).
    package static func nodes(_ report: Report) -> [CallTreeNode] {
        (report.hangs.compactMap(\.callTree) + [report.launch?.callTree].compactMap { $0 }).flatMap(nodes)
    }
}
