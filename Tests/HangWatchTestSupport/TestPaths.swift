import Foundation

/// Where the built products live. The tests run the real `hangwatch` binary,
/// the real preload agent and the real demo programs: `make test` builds
/// them all into .build/<config> before running `swift test`.
package enum TestPaths {
    package static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    package static var buildDirectory: URL {
        #if DEBUG
        let config = "debug"
        #else
        let config = "release"
        #endif
        return packageRoot.appendingPathComponent(".build/\(config)")
    }

    /// The hangwatch under test. `HANGWATCH_TEST_BIN_DIR` points the tests at
    /// another build (a directory holding `hangwatch` and the agent next to
    /// it: an older one to show a test fails there, or a sanitizer build).
    package static var hangwatch: String {
        if let dir = ProcessInfo.processInfo.environment["HANGWATCH_TEST_BIN_DIR"], !dir.isEmpty {
            return URL(fileURLWithPath: dir).appendingPathComponent("hangwatch").path
        }
        return buildDirectory.appendingPathComponent("hangwatch").path
    }
    package static var agent: String { buildDirectory.appendingPathComponent("libhangwatch-agent.so").path }
    package static var runLoopDemo: String { buildDirectory.appendingPathComponent("RunLoopDemo").path }
    package static var dispatchMainDemo: String { buildDirectory.appendingPathComponent("DispatchMainDemo").path }
    package static var asyncMainDemo: String { buildDirectory.appendingPathComponent("AsyncMainDemo").path }
    package static var asyncPoolDemo: String { buildDirectory.appendingPathComponent("AsyncPoolDemo").path }
    package static var concurrencyChecks: String { buildDirectory.appendingPathComponent("ConcurrencyChecks").path }
    package static var inProcessWaitChecks: String { buildDirectory.appendingPathComponent("InProcessWaitChecks").path }
    package static var inProcessHazardChecks: String { buildDirectory.appendingPathComponent("InProcessHazardChecks").path }
    package static var eventLoopServerDemo: String { buildDirectory.appendingPathComponent("EventLoopServerDemo").path }
    package static var frameLoopDemo: String { buildDirectory.appendingPathComponent("FrameLoopDemo").path }
    package static var waitDemo: String { buildDirectory.appendingPathComponent("WaitDemo").path }
    package static var libraryAPIDemo: String { buildDirectory.appendingPathComponent("LibraryAPIDemo").path }
    package static var threadPoolDemo: String { buildDirectory.appendingPathComponent("ThreadPoolDemo").path }

    package static func demoSource(_ name: String) -> String {
        packageRoot.appendingPathComponent("Demos/c/\(name)").path
    }

    /// A fresh scratch directory for one test.
    package static func scratch() throws -> URL {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("hangwatch-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }
}
