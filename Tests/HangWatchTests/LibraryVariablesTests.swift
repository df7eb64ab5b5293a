import Foundation
@testable import HangWatch
import HangWatchCapture
import HangWatchRender
import Testing

/// Issue 30, item 2: the library's `HANGWATCH_*` variables come from the one
/// option table, and the README's table of them names every one.
@Suite(.serialized) struct LibraryVariablesTests {
    /// Every variable `Configuration.fromEnvironment()` reads.
    static let variables: [OptionSpec] = CaptureOptions.capture + CaptureOptions.live
        + [CaptureOptions.watchPool, ReportOutputOptions.format, ReportOutputOptions.output]

    @Test func theReadmeNamesEveryVariableTheLibraryReads() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        for name in Self.variables.compactMap(\.environment) {
            // The README shortens a row's later names to `_ROTATE`; either spelling counts.
            let short = "`_" + name.dropFirst("HANGWATCH_".count) + "`"
            #expect(text.contains("`\(name)`") || text.contains(short), "README does not name \(name)")
        }
    }

    @Test func theTablesVariablesSetTheConfiguration() {
        let set: [String: String] = ["HANGWATCH_HANG_MS": "120", "HANGWATCH_POOL": "off",
                                     "HANGWATCH_FORMAT": "json", "HANGWATCH_REPORT": "/tmp/r.json"]
        for (key, value) in set { setenv(key, value, 1) }
        defer { for key in set.keys { unsetenv(key) } }
        let c = HangWatcher.Configuration.fromEnvironment()
        #expect(c.capture.hangMs == 120)
        #expect(c.watchPool == false)
        #expect(c.reportFormat == .json)
        #expect(c.reportPath == "/tmp/r.json")
        setenv("HANGWATCH_POOL", "1", 1)
        #expect(HangWatcher.Configuration.fromEnvironment().watchPool == true)
        setenv("HANGWATCH_FORMAT", "yaml", 1)
        #expect(HangWatcher.Configuration.fromEnvironment().reportFormat == ReportFormat.standard)
    }
}
