import CHangWatchEngine
import HangWatchCapture
import Testing

/// Capture decodes the engine's codes into Swift values, so that no later
/// stage reads a C constant: these keep the decoding in step with the C
/// header (a code added there and not here reads as `.unknown`, and fails).
@Suite struct DecodedRecordTests {
    /// Writes one note record for thread 7 and returns what the reader made of it.
    static func decoded(code: UInt32, value: UInt64) throws -> [CaptureNote] {
        let log = try SampleLog(anonymousCapacity: 1 << 20)
        try SampleLogReaderTests.announce(log, tid: 7)
        try SampleLogReaderTests.write(log, hw_rec_note.self, kind: HW_REC_NOTE.rawValue) {
            $0.tid = 7
            $0.code = code
            $0.value = value
        }
        let collector = CaptureCollector()
        collector.drain(log, writerGone: false)
        collector.finish()
        return collector.run.notes
    }

    @Test func everyNoteCodeDecodesWithItsFigures() throws {
        let high: (UInt32) -> UInt64 = { UInt64($0) << 32 }
        let cases: [(UInt32, UInt64, CaptureNote.Kind)] = [
            (HW_NOTE_SIGNAL_BLOCKED.rawValue, 0, .signalBlocked),
            (HW_NOTE_SIGNAL_REPLACED.rawValue, 0, .signalReplaced),
            (HW_NOTE_SAMPLES_MISSED.rawValue, 12, .samplesMissed(count: 12)),
            (HW_NOTE_STATE_UNREADABLE.rawValue, 0, .stateUnreadable),
            (HW_NOTE_SAMPLER.rawValue, UInt64(HW_SAMPLER_PERF.rawValue), .sampler(.kernel(userTimeOnly: false))),
            (HW_NOTE_SAMPLER.rawValue, high(UInt32(HW_SAMPLER_WHY_USER_ONLY)) | UInt64(HW_SAMPLER_PERF.rawValue),
             .sampler(.kernel(userTimeOnly: true))),
            (HW_NOTE_SAMPLER.rawValue, high(UInt32(HW_SAMPLER_WHY_SECCOMP)) | UInt64(HW_SAMPLER_SIGNAL.rawValue),
             .sampler(.signal(.seccomp))),
            (HW_NOTE_SAMPLER.rawValue, high(UInt32(HW_SAMPLER_WHY_RING)) | UInt64(HW_SAMPLER_SIGNAL.rawValue),
             .sampler(.signal(.ringUnmapped))),
            (HW_NOTE_SAMPLER.rawValue, high(13) | UInt64(HW_SAMPLER_SIGNAL.rawValue),
             .sampler(.signal(.perfEventOpen(errno: 13)))),
            (HW_NOTE_KERNEL_SAMPLES_LOST.rawValue, 5, .kernelSamplesLost(count: 5)),
            (HW_NOTE_SIGPROF_IGNORED.rawValue, 0, .sigprofIgnored),
            (HW_NOTE_POOL_UNWATCHED.rawValue, UInt64(HW_POOL_WHY_SWIFT_JOB_API), .poolUnwatched(.swiftJobAPI)),
            (HW_NOTE_POOL_UNWATCHED.rawValue, UInt64(HW_POOL_WHY_QUEUES), .poolUnwatched(.tooManyQueues)),
            (HW_NOTE_POOL_UNWATCHED.rawValue, UInt64(HW_POOL_WHY_SLOTS), .poolUnwatched(.slotsFull)),
            (HW_NOTE_POOL_UNWATCHED.rawValue, UInt64(HW_POOL_WHY_NOT_REDIRECTED), .poolUnwatched(.notRedirected)),
            (HW_NOTE_SECCOMP_STOPPED.rawValue, 2_500_000_000, .seccompStopped(afterNs: 2_500_000_000)),
            (HW_NOTE_INPROCESS.rawValue, high(HW_INPROCESS_WAITS | HW_INPROCESS_POOL) | UInt64(HW_INPROCESS_POOL),
             .inProcess(asked: [.waits, .pool], inPlace: [.pool])),
            (4242, 9, .unknown(code: 4242, value: 9)),
        ]
        for (code, value, kind) in cases {
            #expect(try Self.decoded(code: code, value: value) == [CaptureNote(tid: 7, kind: kind)], "code \(code)")
        }
    }

    @Test func notesThatAreRunFactsBecomeNoNote() throws {
        #expect(try Self.decoded(code: HW_NOTE_POOL_QUEUE.rawValue, value: 4).isEmpty)
        #expect(try Self.decoded(code: HW_NOTE_MAIN_PARKED.rawValue, value: 1).isEmpty)
        #expect(try Self.decoded(code: HW_NOTE_MAIN_UNPARKED.rawValue, value: 2).isEmpty)
    }

    @Test func rolesDecodeFromTheEngineCodes() {
        #expect(ThreadRole(engineRole: UInt32(HW_ROLE_MAIN_THREAD)) == .mainThread)
        #expect(ThreadRole(engineRole: UInt32(HW_ROLE_MAIN_QUEUE)) == .mainQueue)
        #expect(ThreadRole(engineRole: UInt32(HW_ROLE_LOOP)) == .loop)
        #expect(ThreadRole(engineRole: UInt32(HW_ROLE_JOB)) == .job)
        #expect([ThreadRole.mainThread, .mainQueue, .loop, .job].map(\.reportName)
                == ["main-thread", "main-queue", "loop", "job"])
        let queue = BusyPeriod(tid: HW_MAIN_QUEUE_ID, seq: 1, osTid: 9, startNs: 0, endNs: nil, isLaunch: false)
        #expect(queue.isMainQueue)
    }

    @Test func everyInterposedCallHasItsLibcName() {
        let names = (1..<Int32(HW_CALL_COUNT.rawValue)).map { BlockedCall(code: $0).name }
        #expect(names == ["nanosleep", "clock_nanosleep", "usleep", "sleep", "poll", "ppoll", "select", "pselect",
                          "epoll_wait", "epoll_pwait", "sigtimedwait", "sigwaitinfo", "sigsuspend", "pause", "sigwait"])
        #expect(BlockedCall.syscall(202).name == "futex")
        #expect(BlockedCall.syscall(9999).name == "syscall 9999")
        #expect(BlockedCall(code: Int32(HW_CALL_BLOCKED_UNKNOWN)).name == "unknown syscall")
        #expect(BlockedCall.interposedPoll.name == "poll")
    }
}
