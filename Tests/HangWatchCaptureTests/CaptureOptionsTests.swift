import HangWatchCapture
import Testing

/// Issue 30, item 2: every capture option is defined once (flag, variable,
/// default, limits, help) and the rest reads it from there.
@Suite struct CaptureOptionsTests {
    @Test func theConfigurationStartsFromTheTablesDefaults() {
        let config = CaptureConfig()
        #expect(config.hangMs == CaptureOptions.hangMs.defaultNumber)
        #expect(config.reportMs == CaptureOptions.reportMs.defaultNumber)
        #expect(config.sampleHz == CaptureOptions.sampleHz.defaultNumber)
        #expect(config.frameMs == CaptureOptions.frameMs.defaultNumber)
        // A choice's default is its first name.
        guard case let .choice(samplers) = CaptureOptions.sampler.value,
              case let .choice(clocks) = CaptureOptions.heartbeatClock.value else {
            Issue.record("sampler and heartbeat clock are choices")
            return
        }
        #expect(samplers.first == config.sampler.rawValue)
        #expect(clocks.first == config.heartbeatClock.rawValue)
    }

    @Test func aValueOutsideItsLimitsIsRefusedWithTheLimits() throws {
        let refused = try #require(CaptureOptions.sampleHz.number("20000").failure)
        #expect(refused.description == "invalid value '20000' for --sample-hz (expected a number in 1...10000)")
        #expect(CaptureOptions.sampleHz.number("10000").success == 10000)
        #expect(CaptureOptions.sampler.choice("signal").success == "signal")
        #expect(CaptureOptions.sampler.choice("perf").failure?.description
                == "invalid value 'perf' for --sampler (expected kernel or signal)")
    }

    @Test func helpSaysEachDefaultAndLimitAndFitsEightyColumns() {
        #expect(CaptureOptions.hangMs.helpLines
                == "  --hang-ms MS       busy time that counts as a hang (default 100, 1...3600000)")
        #expect(CaptureOptions.keep.helpLines.hasSuffix("(default 5)"))
        for option in CaptureOptions.capture + CaptureOptions.live {
            for line in option.helpLines.split(separator: "\n") {
                #expect(line.count <= 80, "\(option.flag): \(line)")
            }
        }
    }

    /// Figures a help text names are the ones the code uses: held in step by
    /// deriving both from `CaptureOptions.Defaults`, checked here in words.
    @Test func helpTextsNameTheDefaultsTheCodeUses() {
        #expect(CaptureOptions.duration.helpLines
                == "  --duration TIME    how long to watch: 30s (default), 500ms, 2m, or forever")
        #expect(CaptureOptions.Defaults.attachDurationSeconds == 30)
        let otlp = CaptureOptions.otlpEndpoint.helpLines.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(otlp.hasSuffix("at the end, unsent records get at most "
                               + OptionSpec.clean(CaptureOptions.Defaults.finalExportSeconds) + " s"))
        for line in CaptureOptions.duration.helpLines.split(separator: "\n") { #expect(line.count <= 80) }
    }

    @Test func everyOptionOfTheLibraryHasItsVariable() {
        let variables = (CaptureOptions.capture + CaptureOptions.live).compactMap(\.environment)
        #expect(variables == ["HANGWATCH_HANG_MS", "HANGWATCH_REPORT_MS", "HANGWATCH_SAMPLE_HZ", "HANGWATCH_SAMPLER",
                              "HANGWATCH_HEARTBEAT_CLOCK", "HANGWATCH_THREADS", "HANGWATCH_FRAME_MS",
                              "HANGWATCH_EVENTS", "HANGWATCH_ROTATE", "HANGWATCH_KEEP", "HANGWATCH_OTLP_ENDPOINT"])
    }
}

private extension Result {
    var success: Success? { if case let .success(v) = self { return v } else { return nil } }
    var failure: Failure? { if case let .failure(e) = self { return e } else { return nil } }
}
