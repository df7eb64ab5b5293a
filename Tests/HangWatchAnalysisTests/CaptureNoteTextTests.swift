import HangWatchAnalysis
import HangWatchCapture
import Testing

/// The report's note for each decoded capture note: the exact sentences the
/// report has always printed, so decoding in capture changed no report.
@Suite struct CaptureNoteTextTests {
    static func text(_ kind: CaptureNote.Kind, tid: Int32 = 7) -> [String] {
        var run = CapturedRun()
        run.notes = [CaptureNote(tid: tid, kind: kind)]
        return ReportBuilder.describe(run: run)
    }

    @Test func eachNoteKindReadsAsBefore() {
        #expect(Self.text(.signalBlocked)
                == ["thread 7 blocks SIGPROF: its CPU samples are missing, only blocked waits were sampled"])
        #expect(Self.text(.signalReplaced) == ["the program installed its own SIGPROF handler; hangwatch chains to it"])
        #expect(Self.text(.samplesMissed(count: 12))
                == ["thread 7: sampling signals went unanswered (12 in one hang)"])
        #expect(Self.text(.kernelSamplesLost(count: 5))
                == ["thread 7: the kernel lost 5 samples in one hang (its ring filled before the watchdog read it)"])
        #expect(Self.text(.stateUnreadable) == ["thread 7: /proc gave only its state (a privilege drop, or a thread on "
            + "its way out): blocked ticks have no stack, and no signal was sent while its state was unsure"])
        #expect(Self.text(.seccompStopped(afterNs: 2_050_000_000)).first?.contains("noticed at +2.050 s") == true)
        #expect(Self.text(.poolUnwatched(.swiftJobAPI)) == ["this libdispatch hands Swift jobs over with "
            + "dispatch_async_swift_job: the cooperative pool was not watched"])
        #expect(Self.text(.poolUnwatched(.slotsFull)) == Self.text(.poolUnwatched(.unknown(77))))
        #expect(Self.text(.sampler(.kernel(userTimeOnly: false))).isEmpty)
        #expect(Self.text(.sampler(.kernel(userTimeOnly: true))).first?.contains("user time only") == true)
        #expect(Self.text(.sampler(.signal(.perfEventOpen(errno: 13)))).first?
                .contains("(perf_event_open: Permission denied)") == true)
        #expect(Self.text(.sampler(.unknown(sampler: 9, why: 0))).isEmpty)
        #expect(Self.text(.inProcess(asked: [.waits], inPlace: [])).first?.contains("event-loop wait") == true)
        #expect(Self.text(.inProcess(asked: [.waits], inPlace: [.waits])).isEmpty)
        #expect(Self.text(.inProcess(asked: [.pool], inPlace: [])).isEmpty)
        #expect(Self.text(.unknown(code: 4242, value: 1)).isEmpty)
    }

    @Test func aRepeatedSentenceIsKeptOnce() {
        var run = CapturedRun()
        run.notes = [CaptureNote(tid: 1, kind: .signalReplaced), CaptureNote(tid: 2, kind: .signalReplaced)]
        #expect(ReportBuilder.describe(run: run).count == 1)
    }
}
