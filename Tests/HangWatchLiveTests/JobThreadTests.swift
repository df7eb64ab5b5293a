import Dispatch
import Foundation
import HangWatchLive
import Synchronization
import Testing

/// The thread behind the library's `onHang` callback and the OTLP exporter:
/// a job that blocks holds back only the jobs after it, at most `capacity`
/// wait, further ones are refused and counted, and draining is bounded.
@Suite struct JobThreadTests {
    @Test func aBlockedJobHoldsBackABoundedBacklogAndDrainingIsBounded() {
        let jobs = JobThread(name: "test-jobs", capacity: 4)
        let started = DispatchSemaphore(value: 0), gate = DispatchSemaphore(value: 0)
        let ran = Atomic<Int>(0)
        #expect(jobs.submit { started.signal(); gate.wait() })
        started.wait() // the blocking job is running: the backlog is empty again
        let accepted = (0..<10).filter { _ in jobs.submit { ran.add(1, ordering: .relaxed) } }.count
        #expect(accepted == 4 && jobs.refused == 6)

        // Draining while the job blocks gives up at its bound, and its own marker is no dropped job.
        let clock = ContinuousClock()
        var drained = true
        let waited = clock.measure { drained = jobs.drain(timeoutNs: 200_000_000) }
        #expect(!drained)
        #expect(waited >= .milliseconds(190) && waited < .milliseconds(600), "\(waited)")
        #expect(jobs.refused == 6)

        gate.signal()
        #expect(jobs.drain(timeoutNs: 2_000_000_000))
        #expect(ran.load(ordering: .relaxed) == 4)
    }
}
