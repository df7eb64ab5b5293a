import Foundation
import HangWatch

/// Facts about source files and binaries that source-line tests compare
/// hangwatch's answers with, measured independently of hangwatch.
enum SourceFacts {
    /// The 1-based line of the first line of `file` containing `text` (what `grep -n` prints).
    static func line(of text: String, in file: String) throws -> Int {
        let contents = try String(contentsOfFile: file, encoding: .utf8)
        let lines = contents.split(separator: "\n", omittingEmptySubsequences: false)
        guard let index = lines.firstIndex(where: { $0.contains(text) }) else {
            throw TestFailure("\(text) not found in \(file)")
        }
        return index + 1
    }

    /// Whether `path` has DWARF line tables of its own, by readelf's section list.
    static func hasDebugLine(_ path: String) throws -> Bool {
        let result = try ProcessRunner.run("/usr/bin/readelf", ["-S", "-W", path], timeout: 30)
        guard result.status == 0 else { throw TestFailure("readelf failed on \(path): \(result.stderr)") }
        return result.stdout.contains(".debug_line")
    }

    /// Whether a separate debug file for `path` is installed (libc6-dbg for glibc).
    static func hasSeparateDebugFile(_ path: String) throws -> Bool {
        let buildId = try ElfSymbolTable(path: path).buildId
        return DebugFileLocator().candidatePaths(forBuildId: buildId).contains { FileManager.default.fileExists(atPath: $0) }
    }

    /// The file a library of this test process was loaded from, by its file name.
    static func loadedLibrary(named name: String) throws -> String {
        let maps = try String(contentsOfFile: "/proc/self/maps", encoding: .utf8)
        for line in maps.split(separator: "\n") {
            guard let slash = line.firstIndex(of: "/") else { continue }
            let path = String(line[slash...])
            if path.hasSuffix("/" + name) { return path }
        }
        throw TestFailure("\(name) is not loaded in the test process")
    }

    /// Every node of a tree, depth first.
    static func nodes(_ tree: CallTreeNode) -> [CallTreeNode] {
        var all: [CallTreeNode] = []
        var pending = [tree]
        while let node = pending.popLast() {
            all.append(node)
            pending.append(contentsOf: node.children.reversed())
        }
        return all
    }

    /// Every node of every call tree in a report (hangs and launch).
    static func nodes(_ report: Report) -> [CallTreeNode] {
        (report.hangs.compactMap(\.callTree) + [report.launch?.callTree].compactMap { $0 }).flatMap(nodes)
    }
}
