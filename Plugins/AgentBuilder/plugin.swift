// Builds the preload agent (libhangwatch-agent.so) for `swift build`, so the
// CLI works without `make`. The agent stays pure C: it is compiled and linked
// by the system C compiler with the Makefile's flags, never by SwiftPM (which
// would link the Swift runtime into it). The output is a resource of the
// `hangwatch` target, so SwiftPM copies it next to the executable, into
// .build/<config>/hangwatch_hangwatch.resources/, where AgentLocator looks.
import Foundation
import PackagePlugin

@main
struct AgentBuilder: BuildToolPlugin {
    /// One build command: cc over CSupport/os, CSupport/engine and CSupport/agent, rerun when a source or header changes.
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let root = context.package.directoryURL
        let os = root.appending(path: "CSupport/os")
        let engine = root.appending(path: "CSupport/engine")
        let agent = root.appending(path: "CSupport/agent")
        let sources = try files(in: [os, engine, agent], ending: ".c")
        let headers = try files(in: [os.appending(path: "include"), engine, engine.appending(path: "include"), agent],
                                ending: ".h")
        let output = context.pluginWorkDirectoryURL.appending(path: "libhangwatch-agent.so")
        // The Makefile's AGENT_FLAGS but its -I (Integration.AgentBuild holds the two in step).
        let flags = ["-std=gnu11", "-O2", "-g", "-fPIC", "-shared", "-D_GNU_SOURCE", "-fno-omit-frame-pointer",
                     "-funwind-tables", "-fvisibility=hidden", "-flto", "-Wall", "-Wextra",
                     "-Wl,--build-id", "-Wl,-z,nodelete"]
        let includes = ["-I" + os.appending(path: "include").path, "-I" + engine.appending(path: "include").path]
        return [.buildCommand(displayName: "Building the preload agent libhangwatch-agent.so",
                              executable: try compiler(),
                              arguments: flags + includes + ["-o", output.path] + sources.map(\.path) + ["-ldl", "-lpthread"],
                              inputFiles: sources + headers,
                              outputFiles: [output])]
    }

    /// The files of `directories` whose names end with `suffix`, sorted so the command line is stable.
    private func files(in directories: [URL], ending suffix: String) throws -> [URL] {
        try directories.flatMap { dir in
            try FileManager.default.contentsOfDirectory(atPath: dir.path)
                .filter { $0.hasSuffix(suffix) }
                .sorted()
                .map { dir.appending(path: $0) }
        }
    }

    /// $CC when it names an executable (a path, or a name found in PATH), else `cc` from PATH.
    private func compiler() throws -> URL {
        let environment = ProcessInfo.processInfo.environment
        let searchPath = (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        for name in [environment["CC"], "cc"].compactMap({ $0 }).filter({ !$0.isEmpty }) {
            let candidates = name.contains("/") ? [name] : searchPath.map { $0 + "/" + name }
            if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
                return URL(fileURLWithPath: found)
            }
        }
        throw AgentBuilderError.noCompiler
    }
}

/// Why the agent could not be built.
enum AgentBuilderError: Error, CustomStringConvertible {
    case noCompiler

    var description: String {
        "no C compiler: the preload agent needs `cc` in PATH (or $CC); install gcc or clang"
    }
}
