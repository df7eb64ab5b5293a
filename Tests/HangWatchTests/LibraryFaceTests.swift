import HangWatch
import Testing

/// What `import HangWatch` alone gives a user: this file imports nothing else,
/// so it stops compiling if the library stops re-exporting what its own API needs.
@Suite struct LibraryFaceTests {
    @Test func theModelConfigurationAndFormatsComeWithTheLibrary() throws {
        var configuration = HangWatcher.Configuration()
        configuration.capture = CaptureConfig()
        configuration.reportFormat = .json
        #expect(configuration.capture.hangMs == 100 && configuration.capture.reportMs == 250)
        #expect(ReportFormat.allCases.map(\.rawValue)
                == ["text", "json", "markdown", "folded", "speedscope", "chrome", "pprof", "html"])

        let report = Report(process: ProcessInfoRecord(pid: 1, executable: "/bin/app", arguments: [], exitCode: 0,
                                                       signal: nil, wallMs: 10),
                            thresholds: Thresholds(), summary: Summary(hangs: []), hangs: [])
        let json = try configuration.reportFormat.render(report)
        #expect(try JSONReport.decode(json) == report)
    }
}
