import Foundation

/// Where the built products live. The tests run the real `hangwatch` binary,
/// the real preload agent and the real demo programs: `make test` builds
/// them all into .build/<config> before running `swift test`.
enum TestPaths {
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static var buildDirectory: URL {
        #if DEBUG
        let config = "debug"
        #else
        let config = "release"
        #endif
        return packageRoot.appendingPathComponent(".build/\(config)")
    }

    static var hangwatch: String { buildDirectory.appendingPathComponent("hangwatch").path }
    static var agent: String { buildDirectory.appendingPathComponent("libhangwatch-agent.so").path }
    static var runLoopDemo: String { buildDirectory.appendingPathComponent("RunLoopDemo").path }
    static var dispatchMainDemo: String { buildDirectory.appendingPathComponent("DispatchMainDemo").path }
    static var asyncMainDemo: String { buildDirectory.appendingPathComponent("AsyncMainDemo").path }
    static var frameLoopDemo: String { buildDirectory.appendingPathComponent("FrameLoopDemo").path }

    static func demoSource(_ name: String) -> String {
        packageRoot.appendingPathComponent("Demos/c/\(name)").path
    }

    /// A fresh scratch directory for one test.
    static func scratch() throws -> URL {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("hangwatch-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }
}
