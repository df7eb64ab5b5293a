import Foundation
import HangWatch
import HangWatchTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    /// Issue 8, "It disturbs the host": syscall results, signals, descriptors,
    /// threads and CPU the program sees must be those of a plain run.
    @Suite struct HostSafetyDisturb {
        /// Runs `name args` both ways; the plain run must print `expected`
        /// (so a broken program cannot pass), the watched one the same.
        /// `sideBySide`: both runs at once, for programs whose time goes to
        /// timed waits (their own checks judge every wait's length).
        @discardableResult
        private func same(_ name: String, _ args: [String], expected: [String]? = nil, hangwatchArgs: [String] = [],
                          sideBySide together: Bool = false,
                          sourceLocation: SourceLocation = #_sourceLocation) throws -> (PlainRun, HangwatchRun) {
            let program = try SafetyProgram.build(name)
            let (plain, run) = together
                ? try sideBySide({ try program.plain(args) }, { try program.watched(args, hangwatchArgs: hangwatchArgs) })
                : (try program.plain(args), try program.watched(args, hangwatchArgs: hangwatchArgs))
            if let expected {
                #expect(plain.result.status == 0 && plain.result.lines == expected,
                        "the program misbehaves without hangwatch: \(plain.result)", sourceLocation: sourceLocation)
            }
            let difference = Safety.difference(plain: plain.result, watched: run.result)
            #expect(difference == nil, "\(difference ?? "")", sourceLocation: sourceLocation)
            return (plain, run)
        }

        // Item 4. Samples at 10 kHz multiply the chances that one lands at a sleep's entry.
        @Test func clockNanosleepWithoutRemainder() throws {
            try same("sleep_results", ["clock-nanosleep"], expected: [
                "clock_nanosleep 300 ms rem=NULL: returned 0, time ok",
                "clock_nanosleep 50 us rounds: 0 returned other than 0",
            ], hangwatchArgs: ["--sample-hz", "10000"], sideBySide: true)
        }

        // Item 5.
        @Test func sleepOneSecondInsideAHang() throws {
            try same("sleep_results", ["sleep"], expected: ["sleep(1): returned 0, time ok"])
        }

        /// Item 5: glibc's rounding of the time left is the program's to see.
        @Test func sleepCutByTheProgramsOwnAlarm() throws {
            try same("sleep_results", ["sleep-alarm"],
                     expected: ["sleep(2) cut by SIGALRM at 600 ms: returned 1, alarms 1, time ok"], sideBySide: true)
        }

        // Item 6.
        @Test func hugeTimeoutsCutByTheProgramsAlarm() throws {
            try same("sleep_results", ["huge"], expected: [
                "nanosleep LONG_MAX s: rc -1 EINTR, time ok, time left huge",
                "nanosleep INT64_MAX/2 s: rc -1 EINTR, time ok, time left huge",
                "ppoll LONG_MAX s: rc -1 EINTR, time ok",
                "ppoll INT64_MAX/2 s: rc -1 EINTR, time ok",
                "pselect LONG_MAX s: rc -1 EINTR, time ok",
                "pselect INT64_MAX/2 s: rc -1 EINTR, time ok",
                "ppoll LONG_MAX s with an unblocking mask: rc -1 EINTR, time ok",
                "pselect LONG_MAX s with an unblocking mask: rc -1 EINTR, time ok",
                "huge-timeout rounds cut by the program's alarm: nanosleep 0, ppoll 0, pselect 0 returned other than -1/EINTR",
            ], hangwatchArgs: ["--sample-hz", "10000"], sideBySide: true)
        }

        // Item 7.
        @Test func quitSignalPendingWhenPpollUnblocksIt() throws {
            try same("quit_signal", ["pending"], expected: [
                "ppoll with the quit signal pending: rc -1 errno EINTR, quits 1, waited ok, returned ok after the hang began",
            ])
        }

        // Item 8. CI caught the read below ending in EINTR once (2026-12-01): a
        // sampling signal sent while the thread ran landed just after it entered
        // the read. The kernel samples running threads now; the SIGPROF fallback
        // keeps that race (HANGWATCH_SAMPLER=signal, the sanitized phase).
        @Test(.enabled(if: getuid() == 0, "dropping privileges needs root"))
        func sigtimedwaitAfterSetuid() throws {
            try withKnownIssue("the SIGPROF fallback can race into the read", isIntermittent: true) {
                try same("privdrop", [], expected: [
                    "uid 65534, own /proc syscall file unreadable",
                    "sigtimedwait 300 ms: rc -1 EAGAIN, time ok",
                    "read with SO_RCVTIMEO 300 ms: rc -1 EAGAIN, time ok",
                ])
            } when: { Safety.signalSampler }
        }

        // The race behind that failure, made likely: thousands of sampling ticks
        // fall right at the entry of a call that any signal handler ends early.
        // Measured with --sampler signal: 2 of 200 socket reads ended in EINTR
        // (twice in two runs); with the kernel's sampler, none.
        @Test func callsEnteredStraightOutOfBusyWorkAreNeverCut() throws {
            try withKnownIssue("the SIGPROF fallback races into such calls", isIntermittent: true) {
                let (_, run) = try same("racing_waits", ["600"], expected: [
                    "read with SO_RCVTIMEO 2 ms after busy work: 300 rounds, 0 not EAGAIN",
                    "sigtimedwait 2 ms after busy work: 300 rounds, 0 not EAGAIN",
                ])
                #expect(Safety.samplerFallback(run.report) == nil, "the kernel's sampler was refused here")
                // The hangs were real and sampled while running, or the test proves nothing.
                let running = run.report.hangs.map { $0.cpuMs ?? 0 }.reduce(0, +)
                #expect(run.report.hangs.count >= 10 && running > 500, "\(run.report.hangs.count) hangs, \(running) ms on a CPU")
            } when: { Safety.signalSampler }
        }

        /// Under a seccomp filter (Docker's default profile refuses perf_event_open; systemd's
        /// SystemCallFilter= kills for it) the kernel's sampler is not even tried: running
        /// threads are sampled with SIGPROF, and the report says so and why.
        @Test func refusedPerfEventFallsBackToSignalsAndSaysSo() throws {
            let launcher = try SafetyProgram.build("no_perf")
            let target = try SafetyProgram.build("long_hang")
            let run = try HangwatchRun.run(launcher.path, [target.path, "0.6"], hangwatchArgs: ["--sampler", "kernel"],
                                           measure: false)
            #expect(run.result.status == 0, "\(run.result)")
            let note = Safety.samplerFallback(run.report)
            #expect(note?.contains("a seccomp filter is on") == true, "notes: \(run.report.notes)")
            // 600 ms of CPU work: the fallback's signals sample it (a blocked sample never
            // shows the work's functions).
            let hang = try #require(run.report.hangs.first { $0.durationMs >= 500 }, "\(run.report.hangs)")
            let work = ["parse_step", "layout_step", "render_step"].compactMap { hang.callTree?.first(containing: $0)?.weightMs }
            #expect(work.reduce(0, +) >= 300, "the signals sampled the work: \(work) ms of \(hang.sampleCount) samples")
        }

        // Item 9.
        @Test func programsOwnSigprofActionIsHonoured() throws {
            try same("own_sigprof", [], expected: [
                "sigaction reads back: flags restart=0 onstack=0 siginfo=0, sa_mask has SIGUSR2=1",
                "blocking read with the profiler ticking: rc -1 EINTR, ended by the first ticks",
                "handler: ran yes, SIGUSR2 blocked in all of them, on the alternate stack in none",
            ])
        }

        // Item 10: descriptor numbers the program gets, and its descriptors stay its own.
        @Test func descriptorNumbersUnderLowLimit() throws {
            let (plain, _) = try same("fd_limits", ["numbers"])
            #expect(plain.result.status == 0 && plain.result.lines.count == 5, "plain: \(plain.result)")
            #expect(!plain.result.stdout.contains("EBADF"), "plain: \(plain.result)")
        }

        /// Item 10: a program that uses every descriptor its limit allows (hangwatch may hold none).
        @Test func everyDescriptorUnderLowLimit() throws {
            let (plain, _) = try same("fd_limits", ["fill"])
            #expect(plain.result.status == 0 && plain.result.stdout.contains("then EMFILE"), "plain: \(plain.result)")
        }

        // Item 11.
        @Test func unshareUserNamespaceFirstThing() throws {
            let program = try SafetyProgram.build("unshare_early")
            let plain = try program.plain([])
            #expect(plain.result.status == 0 && plain.result.lines.count == 2, "plain: \(plain.result)")
            let run = try program.watched([])
            #expect(run.result.status == plain.result.status)
            // The call the issue is about: it must succeed (or fail) as it does plain.
            #expect(run.result.lines.last == plain.result.lines.last, "plain: \(plain.result.lines), watched: \(run.result.lines)")
            // The issue's suggested mechanism: no thread of hangwatch's before the program's first loop
            // wait. Not done: the watchdog starts in the constructor so launch and batch programs keep their
            // profiles; instead unshare/setns stop and join it for the call (docs/DESIGN.md, "The safety contract").
            // A program that counts its threads at start still sees one more: recorded as a known issue.
            withKnownIssue("the watchdog exists from the constructor on (docs/LIMITS.md)") {
                #expect(run.result.lines.first == plain.result.lines.first, "plain: \(plain.result.lines), watched: \(run.result.lines)")
            }
            let (lost, phantoms) = Safety.match(run.work("sandboxed_work"), in: run.report.hangs, toleranceMs: 5 + run.stolenMs)
            #expect(lost.isEmpty && phantoms.isEmpty, "\(Safety.describe(run.report))")
        }

        /// Item 11 again and again: 25 nested unshare(CLONE_NEWUSER) calls, each
        /// stopping and restarting the watchdog, give what they give plain.
        /// A join returns before the kernel has unlinked the exiting thread,
        /// and in that window the call fails with EINVAL: 20 of 400 calls
        /// made right after a join did in a standalone program here, none once
        /// /proc no longer listed the thread; CI's sanitized run once got it
        /// for the single call above. So the watchdog is waited for until
        /// /proc no longer lists it. This test is coverage of the stop and
        /// restart, not proof of that wait: without it, 3 runs here still
        /// passed (the agent's own code after the join gives the kernel time).
        /// (The thread count at start differs, the known issue above.)
        @Test func unshareAgainAndAgain() throws {
            let program = try SafetyProgram.build("unshare_early")
            let plain = try program.plain(["--nested", "25"])
            #expect(plain.result.lines.last == "nested unshares: 25 of 25, first error 0", "plain: \(plain.result.lines)")
            let run = try program.watched(["--nested", "25"])
            #expect(run.result.status == plain.result.status)
            #expect(run.result.lines.dropFirst() == plain.result.lines.dropFirst(),
                    "plain: \(plain.result.lines), watched: \(run.result.lines)")
        }

        /// A fork made while the kernel samples the forking thread: the child has every
        /// descriptor the parent had. The agent's atfork handler closed the numbers of the
        /// watchdog's perf descriptors in the child, where they are the program's own (the
        /// watchdog's live in a table of their own): 2 were missing, found 2026-12-04.
        @Test func forkWhileSampledKeepsTheChildsDescriptors() throws {
            let (_, run) = try same("fork_in_hang", [], expected: [
                "parent read 44 bytes: 'child: 0 of the parent's descriptors missing'",
                "child exit 0",
            ])
            let hang = try #require(run.report.hangs.first, "\(Safety.describe(run.report))")
            #expect(hang.sampleCount >= 100, "the fork must come while the thread is sampled: \(Safety.describe(run.report))")
        }

        /// A handler read with the raw rt_sigaction (the agent's trampoline, under hangwatch)
        /// and handed back through sigaction means the program's handler: the trampoline
        /// once stored itself as the program's and jumped to itself for ever (found 2026-12-04).
        @Test func aRawReadHandlerHandedBackStillRunsTheProgramsHandler() throws {
            try same("raw_handler_readback", [], expected: ["handler ran 1 time(s) for one raise"])
        }

        /// Issue 31: a raw read written back with the raw rt_sigaction, after another handler was
        /// installed through libc, runs the handler it read (it ran the latest one).
        @Test func aRawReadHandlerWrittenBackRawRunsTheHandlerItRead() throws {
            try same("raw_handler_readback", ["raw-write-back"], expected: [
                "after a raw write-back: the first handler ran 1 time(s), the later one 0",
                "sigaction reads back the first handler: yes",
            ])
        }

        /// Issue 31: a seccomp filter put on every thread (TSYNC) binds the watchdog too, and
        /// one that kills for /proc opens, process_vm_readv and perf_event_open killed the
        /// program at the watchdog's next such call (SIGSYS). The watchdog sees the new filter
        /// on itself, stops making those calls and says so; the hangs are still timed.
        /// `hang-first`: a sampled hang before the filter; `mid-hang`: another thread installs
        /// it while the watchdog samples a hang, which is then sampled up to then at most.
        @Test(arguments: [[], ["hang-first"], ["mid-hang"]])
        func aTsyncSeccompFilterNeverKillsTheProgram(args: [String]) throws {
            let (_, run) = try same("seccomp_tsync", args, expected: [
                "TSYNC filter: rc 0 0, seccomp mode 2",
                "hung twice under the filter",
            ])
            #expect(run.report.notes.contains { $0.contains("seccomp filter the program installed on every thread") },
                    "\(run.report.notes)")
            for name in ["cpu_under_filter", "sleep_under_filter"] {
                let work = try #require(run.work(name).first)
                let hang = run.report.hangs.first { abs($0.durationMs - work.durationMs) <= 5 + run.stolenMs }
                #expect(hang != nil, "\(name) \(work.durationMs) ms: \(Safety.describe(run.report))")
                if name == "sleep_under_filter" || args != ["mid-hang"] {
                    #expect(hang?.sampleCount == 0, "\(name) \(work.durationMs) ms: \(Safety.describe(run.report))")
                }
            }
            if args == ["hang-first"] {
                let work = try #require(run.work("before_filter").first)
                let hang = try #require(run.report.hangs.first { abs($0.durationMs - work.durationMs) <= 5 + run.stolenMs },
                                        "\(Safety.describe(run.report))")
                #expect(hang.kind == .cpu && hang.sampleCount > 100, "\(Safety.describe(run.report))")
            }
        }

        /// Issue 31: a pointer the kernel refuses gives EFAULT, never a fault in a wrapper
        /// (nanosleep and clock_nanosleep read the request themselves, and died of SIGSEGV).
        @Test func waitsGivenUnmappedPointersFailWithEFAULT() throws {
            try same("bad_pointers", [], expected: [
                "nanosleep(unmapped req): rc -1 EFAULT",
                "nanosleep(unmapped req, rem): rc -1 EFAULT",
                "clock_nanosleep(relative, unmapped req): returned EFAULT",
                "clock_nanosleep(absolute, unmapped req): returned EFAULT",
                "nanosleep(300 ms, unmapped rem) cut by SIGALRM: rc -1 EFAULT",
                "clock_nanosleep(300 ms, unmapped rem) cut by SIGALRM: returned EFAULT",
                "nanosleep(20 ms, unmapped rem): rc 0 0",
                "alarms 2",
                "sigtimedwait(unmapped timeout): rc -1 EFAULT",
                "sigtimedwait(unmapped set): rc -1 EFAULT",
                "sigtimedwait(SIGUSR1 pending, unmapped siginfo): rc -1 EFAULT",
                "SIGUSR1 still pending: no",
                "sigwaitinfo(SIGUSR1 pending, unmapped siginfo): rc -1 EFAULT",
                "ppoll(unmapped fds): rc -1 EFAULT",
                "poll(unmapped fds): rc -1 EFAULT",
                "select(unmapped fd set): rc -1 EFAULT",
                "epoll_wait(ready, unmapped events): rc -1 EFAULT",
                "epoll_pwait(ready, unmapped events): rc -1 EFAULT",
            ])
        }

        /// Issue 31: an ignored SIGPROF stays ignored in the kernel. A SIGPROF sent to a raw
        /// nanosleep cut it short with EINTR, and /proc/self/status showed SIGPROF caught.
        @Test func ignoredSigprofIsIgnoredByTheKernel() throws {
            let (_, run) = try same("ignored_sigprof", ["sleep"], expected: [
                "after signal(SIGPROF, SIG_IGN): SIGPROF ignored yes, caught no",
                "raw nanosleep 300 ms with SIGPROF sent to it: rc 0 0, time ok",
                "after the sleep: SIGPROF ignored yes, caught no",
            ], sideBySide: true)
            // The SIGPROF sampler cannot sample meanwhile, and the report says so.
            #expect(run.report.notes.contains { $0.contains("ignores SIGPROF") } == Safety.signalSampler,
                    "\(run.report.notes)")
        }

        /// Issue 31: the sampler's fallback, told to sample, writes the note instead of signals.
        @Test func ignoredSigprofWithTheSignalSamplerIsNoted() throws {
            let (_, run) = try same("ignored_sigprof", ["sleep"], hangwatchArgs: ["--sampler", "signal"])
            #expect(run.report.notes.contains { $0.contains("ignores SIGPROF") }, "\(run.report.notes)")
            #expect(!run.report.notes.contains { $0.contains("went unanswered") }, "\(run.report.notes)")
        }

        /// Issue 31: a program that ignores SIGPROF and execs: the new image starts with it
        /// ignored (SigIgn 0x4000000), as plain; it started with the default action.
        @Test func ignoredSigprofSurvivesExec() throws {
            try same("ignored_sigprof", ["exec"], expected: [
                "the new image at start: SIGPROF ignored yes, caught no",
            ])
        }

        // Item 12: the extra CPU of watching a thread parked in pthread_join.
        @Test func mainThreadParkedInJoinCostsLittle() throws {
            let (_, run) = try same("idle_join", [], expected: [
                "CPU outside the worker: small (under 2 % of a core)",
            ])
            let cost = run.work("idle_cost").first?.fields ?? []
            #expect((Double(cost.dropFirst(3).first ?? "") ?? 100) < 2, "extra CPU ms, wall ms, %: \(cost.dropFirst())")
        }

        // Extra: a storm of the program's own queued signals.
        @Test func signalStormFromAnotherProcess() throws {
            try same("extras", ["storm"], expected: [
                "storm: received 5000 of 5000 queued signals; read EINTR 0; nanosleep short 0; child 0",
            ])
        }

        // Extra: a program that closes every descriptor mid-hang.
        @Test func programClosesEveryDescriptor() throws {
            let (plain, _) = try same("extras", ["closeall"])
            #expect(plain.result.status == 0 && Array(plain.result.lines.prefix(3)) == [
                "close_range(3, ~0): 0",
                "in the same hang: sigtimedwait 100 ms: rc -1 EAGAIN, time ok",
                "in the next hang: sigtimedwait 100 ms: rc -1 EAGAIN, time ok",
            ], "plain: \(plain.result)")
        }

        // Extra: a program that sets its mask to full, waits for any signal, then empties it.
        @Test func programResetsItsSignalMask() throws {
            try same("extras", ["masks"], expected: [
                "sigtimedwait on every signal with all blocked: rc -1 EAGAIN, time ok",
            ])
        }
    }
}
