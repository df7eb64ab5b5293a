import Foundation
import HangWatch
import HangWatchTestSupport
import Testing

/// Hang kinds from the thread's own CPU clock, the call it blocked in, and
/// the owner of the lock it waited for (issue 9). Each demo runs plain and
/// under `hangwatch run`, with the same output.
extension Integration {
    @Suite struct HangKinds {
        /// One demo event, run plain and watched.
        struct Event {
            var plain: ProcessResult
            var watched: HangwatchRun
            var hang: Hang
            /// The main thread's own CPU time during the event (CLOCK_THREAD_CPUTIME_ID), watched run.
            var ownCPUMs: Double
            var share: Double { (hang.cpuMs ?? .nan) / hang.durationMs }
        }

        static func event(_ program: String, _ mode: String) throws -> Event {
            let plain = try ProcessRunner.run(program, [mode])
            let watched = try HangwatchRun.run(program, [mode])
            let work = try #require(watched.work("onEvent").first ?? watched.work("on_event").first,
                                    "no measured event; stderr: \(watched.result.stderr)")
            let hang = try #require(watched.hang(startingNear: work, toleranceMs: 30),
                                    "no hang near \(work.durationMs) ms: \(watched.report.hangs.map(\.durationMs))")
            let cpuLine = try #require(watched.measured.first { $0.name == "cpu" })
            let own = try #require(Double(cpuLine.fields.last ?? ""))
            // Same observable behaviour: status and the event line (the C demo adds the wait it saw).
            #expect(plain.status == 0 && watched.result.status == 0, "status plain \(plain.status), watched \(watched.result.status)")
            #expect(Self.eventLine(plain.stdout) == Self.eventLine(watched.result.stdout),
                    "plain: \(plain.stdout) watched: \(watched.result.stdout)")
            // Each node says how much of its time was waiting (blocked samples), as "all thread states" does.
            let tree = try #require(hang.callTree)
            let waiting = try #require(tree.waitingMs, "no waitingMs on the hang's tree")
            if hang.kind == .blocked { #expect(waiting >= 0.8 * tree.weightMs, "waiting \(waiting) of \(tree.weightMs)") }
            if hang.kind == .cpu { #expect(waiting <= 0.1 * tree.weightMs, "waiting \(waiting) of \(tree.weightMs)") }
            return Event(plain: plain, watched: watched, hang: hang, ownCPUMs: own)
        }

        /// `event mode=M result=R` without the measured wait.
        static func eventLine(_ stdout: String) -> String {
            stdout.split(separator: " ").filter { !$0.hasPrefix("waited_ms=") }.joined(separator: " ")
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// hangwatch's on-CPU figure agrees with the program's own clock. The
        /// measured window starts when sampling does, 10 ms into the hang, and
        /// the share is extrapolated over those 10 ms: allow them, a tick, and 10 %.
        static func expectCPUAgrees(_ e: Event) {
            guard let cpu = e.hang.cpuMs else {
                Issue.record("no cpuMs for hang \(e.hang.id)")
                return
            }
            #expect(abs(cpu - e.ownCPUMs) <= 12 + 0.1 * e.ownCPUMs, "hangwatch \(cpu) ms, program \(e.ownCPUMs) ms")
        }

        static func expectOwner(_ e: Event, name: String, evidence: String, doing function: String) throws {
            let owner = try #require(e.hang.lockOwner, "no lock owner: \(e.hang)")
            #expect(owner.name == name)
            #expect(owner.evidence == evidence)
            let tree = try #require(owner.callTree, "the owner was not sampled")
            let node = try #require(tree.first(containing: function), "owner tree: \(tree.allSymbols)")
            // The owner's time was in that function (or the one frame it calls).
            #expect(node.weightMs >= 0.6 * tree.weightMs, "\(function) \(node.weightMs) of \(tree.weightMs) ms")
            // A runnable owner on a busy 2-core machine answers fewer signals: some samples, not all.
            #expect(tree.sampleCount >= 20, "owner sampled \(tree.sampleCount) times in \(e.hang.durationMs) ms")
            // Samples taken at the watchdog's steady stride stand for the ticks they skipped, never more:
            // the owner's tree cannot outweigh the wait (a tick of slack at each end).
            #expect(tree.weightMs <= e.hang.durationMs + 20, "owner tree \(tree.weightMs) ms in a \(e.hang.durationMs) ms hang")
        }

        static func cDemo() throws -> String {
            try ProcessRunner.compileC(TestPaths.demoSource("blocking_calls.c"), into: TestPaths.scratch(), name: "blocking_calls")
        }

        @Test func pthreadJoinIsBlockedOnTheJoinedThread() throws {
            let e = try Self.event(Self.cDemo(), "join")
            #expect(e.hang.kind == .blocked)
            #expect(e.hang.blockedIn == "futex")
            #expect(e.hang.blockedSymbol == "join_worker")
            #expect(e.share <= 0.2)
            Self.expectCPUAgrees(e)
            try Self.expectOwner(e, name: "joined-worker", evidence: "join", doing: "joined_worker_compute")
        }

        @Test func pthreadMutexNamesItsHolder() throws {
            let e = try Self.event(Self.cDemo(), "mutex")
            #expect(e.hang.kind == .blocked)
            #expect(e.hang.blockedIn == "futex")
            #expect(e.hang.blockedSymbol == "wait_for_lock")
            #expect(e.share <= 0.2)
            Self.expectCPUAgrees(e)
            try Self.expectOwner(e, name: "lock-holder", evidence: "mutex", doing: "holder_compute")
        }

        @Test func pipeReadIsBlockedInRead() throws {
            let e = try Self.event(Self.cDemo(), "pipe")
            #expect(e.hang.kind == .blocked)
            #expect(e.hang.blockedIn == "read")
            #expect(e.share <= 0.2)
            #expect(e.hang.lockOwner == nil)
            Self.expectCPUAgrees(e)
        }

        @Test func cpuHangStaysCPU() throws {
            let e = try Self.event(Self.cDemo(), "cpu")
            #expect(e.hang.kind == .cpu)
            // On a loaded machine the thread may wait for a CPU: that is still wanting to run.
            let active = ((e.hang.cpuMs ?? 0) + (e.hang.runnableMs ?? 0)) / e.hang.durationMs
            #expect(active >= 0.8, "on CPU \(e.hang.cpuMs ?? -1), runnable \(e.hang.runnableMs ?? -1) of \(e.hang.durationMs) ms")
            #expect(e.hang.blockedIn == nil)
            Self.expectCPUAgrees(e)
        }

        @Test func workThenWaitIsMixed() throws {
            let e = try Self.event(Self.cDemo(), "mixed")
            #expect(e.hang.kind == .mixed, "cpu \(e.hang.cpuMs ?? -1) runnable \(e.hang.runnableMs ?? -1) of \(e.hang.durationMs)")
            #expect(e.hang.blockedIn == "read")
            Self.expectCPUAgrees(e)
        }

        /// The owner sampler stays invisible: with the SIGPROF fallback, a holder that blocks
        /// SIGPROF is never sent one (none left pending); the kernel's sampler samples it
        /// anyway. A program's own
        /// SIGPROF handler receives none, and a holder that execs while it is
        /// sampled takes no sampling signal into the new image.
        @Test(arguments: ["mutex-sigblock", "mutex-handler", "mutex-exec"])
        func ownerSamplingIsInvisible(mode: String) throws {
            let program = try Self.cDemo()
            let plain = try ProcessRunner.run(program, [mode])
            let watched = try HangwatchRun.run(program, [mode], measure: false)
            #expect(plain.status == 0 && watched.result.status == plain.status,
                    "status plain \(plain.status), watched \(watched.result.status); \(watched.result.stderr)")
            let lines = { (out: String) in out.split(separator: "\n").map { Self.eventLine(String($0)) } }
            #expect(lines(plain.stdout) == lines(watched.result.stdout), "plain: \(plain.stdout) watched: \(watched.result.stdout)")
            #expect(!watched.result.stdout.contains("sigprof_pending=1") && !watched.result.stdout.contains("sigprofs=") ||
                    watched.result.stdout.contains("sigprofs=0"))
            let hang = try #require(watched.report.hangs.first { $0.durationMs >= 300 }, "\(watched.report.hangs)")
            #expect(hang.kind == .blocked)
            #expect(hang.lockOwner?.name == "lock-holder")
            if mode == "mutex-sigblock" {
                if Safety.signalSampler {
                    #expect(hang.lockOwner?.callTree == nil, "a SIGPROF-blocking owner is never signalled")
                } else {
                    // The kernel samples the owner without a signal: its mask does not matter.
                    let tree = try #require(hang.lockOwner?.callTree, "the kernel's sampler needs no signal")
                    #expect(tree.heaviestPathSymbols.contains("holder_compute"), "\(tree.heaviestPathSymbols)")
                }
            }
        }

        @Test func semaphoreHasNoOwnerButNamesWhatRan() throws {
            let e = try Self.event(TestPaths.waitDemo, "semaphore")
            #expect(e.hang.kind == .blocked)
            #expect(e.hang.blockedIn == "futex")
            #expect(e.hang.blockedSymbol?.contains("waitOnSemaphore") == true, "\(e.hang.blockedSymbol ?? "nil")")
            #expect(e.share <= 0.2)
            #expect(e.hang.lockOwner == nil)
            // The background task computed ~300 ms (less on a busy machine): it must be listed.
            let busiest = try #require(e.hang.runningThreads.first, "no running threads listed")
            #expect(busiest.cpuMs >= 50, "\(e.hang.runningThreads)")
            Self.expectCPUAgrees(e)
        }

        @Test func nsLockNamesItsHolder() throws {
            let e = try Self.event(TestPaths.waitDemo, "nslock")
            #expect(e.hang.kind == .blocked)
            #expect(e.hang.blockedIn == "futex")
            #expect(e.share <= 0.2)
            Self.expectCPUAgrees(e)
            try Self.expectOwner(e, name: "lock-holder", evidence: "mutex", doing: "holdNSLockComputing")
        }

        @Test func swiftMutexNamesItsHolder() throws {
            let e = try Self.event(TestPaths.waitDemo, "mutex")
            #expect(e.hang.kind == .blocked)
            #expect(e.hang.blockedIn == "futex")
            #expect(e.share <= 0.2)
            Self.expectCPUAgrees(e)
            try Self.expectOwner(e, name: "lock-holder", evidence: "pi-futex", doing: "holdMutexComputing")
            // The waiter is blocked in libc's syscall() stub under Mutex._lockSlow, known by /proc's sp and pc
            // only; its frame pointer is found among the stack words, so the tree reaches the program's caller.
            let tree = try #require(e.hang.callTree)
            let path = try #require(tree.first(containing: "waitForMutex"), "waiter tree: \(tree.allSymbols)")
            #expect(path.weightMs >= 0.9 * tree.weightMs, "waitForMutex \(path.weightMs) of \(tree.weightMs) ms")
            #expect(e.hang.blockedSymbol?.contains("waitForMutex") == true, "called from \(e.hang.blockedSymbol ?? "nil")")
        }

        @Test func swiftCPUHangStaysCPU() throws {
            let e = try Self.event(TestPaths.waitDemo, "cpu")
            #expect(e.hang.kind == .cpu)
            #expect(e.hang.lockOwner == nil)
            Self.expectCPUAgrees(e)
        }
    }
}
