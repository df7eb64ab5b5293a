import Foundation
import HangWatchTestSupport
import Testing

extension Integration {
    /// Issue 32: `swift build` alone builds the agent (Plugins/AgentBuilder), as `make agent` does.
    @Suite struct AgentBuild {
        /// The words of the Makefile's AGENT_FLAGS (its `\` continuations joined).
        private func makefileFlags() throws -> [String] {
            let makefile = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("Makefile"), encoding: .utf8)
            let joined = makefile.replacingOccurrences(of: "\\\n", with: " ")
            let line = try #require(joined.split(separator: "\n").first { $0.hasPrefix("AGENT_FLAGS") })
            return line.split(separator: "=", maxSplits: 1).last.map { $0.split(separator: " ").map(String.init) } ?? []
        }

        /// The string literals of the plugin's `let flags = [...]`.
        private func pluginFlags() throws -> [String] {
            let plugin = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("Plugins/AgentBuilder/plugin.swift"),
                                    encoding: .utf8)
            let start = try #require(plugin.range(of: "let flags = ["))
            let end = try #require(plugin.range(of: "]", range: start.upperBound..<plugin.endIndex))
            return plugin[start.upperBound..<end.lowerBound].matches(of: /"([^"]*)"/).map { String($0.output.1) }
        }

        @Test func pluginCompilesWithTheMakefilesFlags() throws {
            let make = try makefileFlags().filter { !$0.hasPrefix("-I") }
            let plugin = try pluginFlags()
            #expect(!make.isEmpty)
            #expect(plugin == make, "plugin \(plugin) vs Makefile \(make)")
        }

        /// A hangwatch with no agent beside it, only the resource directory SwiftPM made,
        /// runs a program (the agent `swift build` alone leaves).
        @Test func theResourceDirectorysAgentIsFound() throws {
            let built = URL(fileURLWithPath: TestPaths.hangwatch).deletingLastPathComponent()
            let resources = built.appendingPathComponent("hangwatch_hangwatch.resources")
            let agent = resources.appendingPathComponent("libhangwatch-agent.so")
            try #require(FileManager.default.fileExists(atPath: agent.path), "no \(agent.path): the plugin did not run")
            let scratch = try TestPaths.scratch()
            let copy = scratch.appendingPathComponent("hangwatch")
            try FileManager.default.copyItem(at: URL(fileURLWithPath: TestPaths.hangwatch), to: copy)
            try FileManager.default.copyItem(at: resources, to: scratch.appendingPathComponent(resources.lastPathComponent))
            let r = try ProcessRunner.run(copy.path, ["run", "--", "/bin/sh", "-c", "exit 3"], environment: ["HANGWATCH_AGENT": ""])
            #expect(r.status == 3, "\(r.stderr)")
            #expect(r.stderr.hasPrefix("hangwatch: no hangs"), "\(r.stderr)")
            try FileManager.default.removeItem(at: scratch.appendingPathComponent(resources.lastPathComponent))
            let none = try ProcessRunner.run(copy.path, ["run", "--", "/bin/true"], environment: ["HANGWATCH_AGENT": ""])
            #expect(none.status == 70)
            #expect(none.stderr.split(separator: "\n").count == 1 && none.stderr.contains("hangwatch_hangwatch.resources"),
                    "\(none.stderr)")
        }
    }
}
