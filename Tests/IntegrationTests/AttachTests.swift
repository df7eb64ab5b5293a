import Foundation
import HangWatch
import HangWatchAnalysis
import HangWatchModel
import HangWatchRender
import HangWatchTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    /// `hangwatch attach` and `hangwatch dump` on programs started without hangwatch.
    @Suite struct Attach {
        /// Hangs of a RunLoop program, found from outside: durations within
        /// ±5 ms of the program's own measurements, trees naming the work.
        @Test func runLoopDemo() throws {
            let scratch = try TestPaths.scratch()
            let pidFile = scratch.appendingPathComponent("pid").path
            let measure = scratch.appendingPathComponent("measure.txt").path
            let program = try AttachedProgram.start(TestPaths.runLoopDemo, ["--measure", measure, "--pid-file", pidFile],
                                                    scratch: scratch, pidFile: pidFile)
            let attach = try AttachReport.attach(program.pid, ["--duration", "20s"], scratch: scratch)
            let result = try program.finish()
            #expect(attach.result.status == 0, "stderr: \(attach.result.stderr)")
            #expect(result.status == 0)
            #expect(result.stdout.isEmpty)
            let measured = MeasuredWork.parse(file: measure)
            let long = measured.filter { $0.durationMs >= 100 }
            #expect(long.map(\.name) == ["parseLargeDocument", "renderThumbnails", "refreshCache"])
            #expect(attach.report.hangs.count == long.count, "hangs: \(attach.report.hangs.map(\.durationMs))")
            // docs/DESIGN.md's figures (Attach and dump: start ±2 ms after a quiet spell, end ±0.5 ms, durations seen
            // within −2/+1.5 ms) are what the poller's 4 ms and 1 ms polls give when it gets the CPU
            // on time. 5 ms here: without CAP_SYS_NICE its raised priority is not granted, and on a
            // loaded 2-core machine a poll can come one 4 ms period late.
            for work in long {
                let hang = try #require(attach.hang(matching: work, toleranceMs: 5),
                                        "\(work.name) \(work.durationMs) ms; hangs: \(attach.report.hangs.map(\.durationMs))")
                #expect(hang.thread.tid == Int(program.pid))
                if work.durationMs >= 250 {
                    let symbols = try #require(hang.callTree).heaviestPathSymbols
                    #expect(symbols.contains { $0.contains(work.name) }, "\(work.name): \(symbols)")
                    #expect(symbols.contains("main"), "\(symbols)")
                    #expect(!symbols.contains { $0.contains("not fully captured") }, "\(symbols)")
                }
            }
            #expect(attach.report.notes.contains { $0.contains("attached to a running process") })
            // The saved report is an ordinary one: `report` re-renders it.
            let rendered = try ProcessRunner.run(TestPaths.hangwatch,
                                                 ["report", scratch.appendingPathComponent("attach-report.json").path])
            #expect(rendered.status == 0)
            #expect(rendered.stdout.contains("parseLargeDocument"))
        }

        /// dispatchMain(): the main queue's blocks run on libdispatch workers;
        /// attach watches the busy worker.
        @Test func dispatchMainDemo() throws {
            let scratch = try TestPaths.scratch()
            let measure = scratch.appendingPathComponent("measure.txt").path
            let program = try AttachedProgram.start(TestPaths.dispatchMainDemo, ["--measure", measure], scratch: scratch)
            // Its first block runs 200 ms after start; dispatchMain() is reached well before.
            usleep(60_000)
            let attach = try AttachReport.attach(program.pid, ["--duration", "20s"], scratch: scratch)
            let result = try program.finish()
            #expect(attach.result.status == 0, "stderr: \(attach.result.stderr)")
            #expect(result.status == 0)
            let photos = try #require(MeasuredWork.parse(file: measure).first { $0.name == "importPhotos" })
            let badge = try #require(MeasuredWork.parse(file: measure).first { $0.name == "updateBadge" })
            // Whatever was learned, the long block is a hang attach saw.
            #expect(attach.report.hangs.contains { attach.within($0.durationMs, of: photos.durationMs, toleranceMs: 5) && $0.thread.role == "main-queue" },
                    "hangs: \(attach.report.hangs.map(\.durationMs)); \(attach.stolenMs) ms stolen")
            // The worker's idle wait is learned from its timed futex waits (docs/DESIGN.md, attach).
            // When any futex wait was a candidate, one inside a block could be learned
            // instead: the gap between the blocks was not seen and both came out as one
            // hang (CI, 2026-12-01: one 690 ms hang; once in six runs before).
            #expect(attach.report.hangs.count == 2, "hangs: \(attach.report.hangs.map(\.durationMs))")
            // A worker started for the block is busy from its creation, a little
            // before the block itself (see docs/DESIGN.md, attach): +0.0-1.3 ms in five
            // quiet runs; the issue's ±5 ms holds.
            let first = try #require(attach.report.hangs.first)
            #expect(attach.within(first.durationMs, of: photos.durationMs, toleranceMs: 5),
                    "importPhotos \(photos.durationMs) ms, hang \(first.durationMs) ms; \(attach.stolenMs) ms stolen")
            #expect(first.thread.role == "main-queue")
            let symbols = try #require(first.callTree).allSymbols
            #expect(symbols.contains { $0.contains("importPhotos") }, "\(symbols)")
            #expect(!symbols.contains { $0.contains("not fully captured") }, "\(symbols)")
            #expect(attach.hang(matching: badge, toleranceMs: 5) != nil,
                    "updateBadge \(badge.durationMs) ms; hangs: \(attach.report.hangs.map(\.durationMs))")
            #expect(attach.report.notes.contains { $0.contains("dispatchMain") })
        }

        /// Job control while attached: SIGSTOP and SIGCONT in the idle gap
        /// between the two main-queue blocks. The worker's timed futex wait
        /// goes on as restart_syscall, which is still its idle wait (a sample's
        /// stop landing as the worker entered that wait does the same: CI,
        /// 2026-12-01 and 2026-12-02, one 690 ms hang for both blocks). Each
        /// block stays a hang of its own length and the gap is in none.
        @Test func stopAndContinueBetweenBlocksIsNoHang() throws {
            let scratch = try TestPaths.scratch()
            let measure = scratch.appendingPathComponent("measure.txt").path
            let program = try AttachedProgram.start(TestPaths.dispatchMainDemo, ["--measure", measure], scratch: scratch)
            usleep(60_000)
            let pid = program.pid
            // importPhotos ends 550 ms after start, updateBadge starts at 750 ms.
            let (signalled, attach) = try sideBySide({ () -> (stopNs: UInt64, continueNs: UInt64)? in
                let deadline = Date().addingTimeInterval(10)
                while Date() < deadline {
                    if let text = try? String(contentsOfFile: measure, encoding: .utf8), text.contains("importPhotos") {
                        usleep(40_000)
                        let stopNs = Self.monotonicNs()
                        kill(pid, SIGSTOP)
                        usleep(30_000)
                        let continueNs = Self.monotonicNs()
                        return kill(pid, SIGCONT) == 0 ? (stopNs, continueNs) : nil
                    }
                    usleep(1_000)
                }
                return nil
            }, { try AttachReport.attach(pid, ["--duration", "20s"], scratch: scratch) })
            let result = try program.finish()
            #expect(attach.result.status == 0, "stderr: \(attach.result.stderr)")
            #expect(result.status == 0)
            let work = MeasuredWork.parse(file: measure)
            let photos = try #require(work.first { $0.name == "importPhotos" })
            let badge = try #require(work.first { $0.name == "updateBadge" })
            // The stop fell in the gap, or this test tests nothing.
            let stop = try #require(signalled, "the program was not stopped and continued")
            #expect(photos.endNs < stop.stopNs && stop.continueNs < badge.startNs,
                    "importPhotos ended \(photos.endNs), stop \(stop.stopNs)-\(stop.continueNs), updateBadge began \(badge.startNs)")
            #expect(attach.report.hangs.count == 2, "hangs: \(attach.report.hangs.map(\.durationMs))")
            #expect(attach.hang(matching: photos, toleranceMs: 5) != nil,
                    "importPhotos \(photos.durationMs) ms; hangs: \(attach.report.hangs.map(\.durationMs))")
            #expect(attach.hang(matching: badge, toleranceMs: 5) != nil,
                    "updateBadge \(badge.durationMs) ms; hangs: \(attach.report.hangs.map(\.durationMs))")
        }

        static func monotonicNs() -> UInt64 {
            var ts = timespec()
            clock_gettime(CLOCK_MONOTONIC, &ts)
            return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
        }

        /// The same for a poll() loop on the main thread: stopped and
        /// continued in its wait, it is idle all along; no hang.
        @Test func stopAndContinueInAPollLoopIsNoHang() throws {
            let scratch = try TestPaths.scratch()
            let binary = try SafetyProgram.build("stopped_poll").path
            let program = try AttachedProgram.start(binary, [], scratch: scratch)
            let pid = program.pid
            let (continued, attach) = try sideBySide({ () -> Bool in
                usleep(750_000) // in the second wait: attach has seen the loop's wait by then
                kill(pid, SIGSTOP)
                usleep(30_000)
                return kill(pid, SIGCONT) == 0
            }, { try AttachReport.attach(pid, ["--duration", "20s"], scratch: scratch) })
            let result = try program.finish()
            #expect(continued)
            #expect(attach.result.status == 0, "stderr: \(attach.result.stderr)")
            #expect(result.status == 0 && result.stdout == "waits 3\n", "\(result)")
            #expect(attach.report.hangs.isEmpty, "hangs: \(attach.report.hangs.map(\.durationMs))")
        }

        /// Stopped and continued before we attach (Ctrl-Z, then `bg`): the first
        /// wait we see is a restart at a site never seen, which the kernel's
        /// wait channel names as poll's. Idle all along; no hang.
        @Test func attachedWhileAPollLoopGoesOnAfterAStopIsNoHang() throws {
            let scratch = try TestPaths.scratch()
            let binary = try SafetyProgram.build("stopped_poll").path
            // A first wait of 2 s: attach sees the restart however late it starts on a loaded machine.
            let program = try AttachedProgram.start(binary, ["2000"], scratch: scratch)
            let pid = program.pid
            usleep(100_000) // in the first wait
            kill(pid, SIGSTOP)
            usleep(30_000)
            kill(pid, SIGCONT)
            var state = ""
            for _ in 0..<100 where !state.hasPrefix("219 ") { // until the continued thread is back in its wait
                usleep(2_000)
                state = (try? String(contentsOfFile: "/proc/\(pid)/syscall", encoding: .utf8)) ?? ""
            }
            let attach = try AttachReport.attach(pid, ["--duration", "20s"], scratch: scratch)
            let result = try program.finish()
            // 219: restart_syscall, what the case is about (else the test says nothing).
            #expect(state.hasPrefix("219 "), "the program was not in a restarted wait: \(state)")
            #expect(attach.result.status == 0, "stderr: \(attach.result.stderr)")
            #expect(result.status == 0 && result.stdout == "waits 3\n", "\(result)")
            #expect(attach.report.hangs.isEmpty, "hangs: \(attach.report.hangs.map(\.durationMs))")
        }

        /// A plain C epoll loop: hangs and trees, and the loop never sees EINTR.
        /// Issue 30: the lock owner, from outside. The loop thread waits on a
        /// pthread mutex that a thread named "lock-holder" holds for 350 ms
        /// while it computes; attach reads the futex word and the mutex's owner
        /// field with process_vm_readv, names the holder, and samples it like
        /// the hung thread (running: one short ptrace stop a sample). The
        /// program prints the same event line as a plain run.
        @Test func aMutexWaitNamesAndSamplesItsHolder() throws {
            let scratch = try TestPaths.scratch()
            let binary = try ProcessRunner.compileC(TestPaths.demoSource("blocking_calls.c"), into: scratch,
                                                    name: "blocking_calls")
            let plain = try ProcessRunner.run(binary, ["mutex"])
            let pidFile = scratch.appendingPathComponent("pid").path
            let measure = scratch.appendingPathComponent("measure.txt").path
            // The event at 400 ms: attach is watching well before it.
            let program = try AttachedProgram.start(binary, ["mutex", "--event-at", "400", "--pid-file", pidFile,
                                                             "--measure", measure],
                                                    scratch: scratch, pidFile: pidFile)
            let attach = try AttachReport.attach(program.pid, ["--duration", "20s"], scratch: scratch)
            let result = try program.finish()
            #expect(attach.result.status == 0, "stderr: \(attach.result.stderr)")
            #expect(result.status == 0 && plain.status == 0)
            #expect(Integration.HangKinds.eventLine(result.stdout) == Integration.HangKinds.eventLine(plain.stdout),
                    "plain: \(plain.stdout) attached: \(result.stdout)")
            let work = try #require(MeasuredWork.parse(file: measure).first { $0.name == "on_event" })
            let hang = try #require(attach.hang(matching: work, toleranceMs: 5),
                                    "on_event \(work.durationMs) ms; hangs: \(attach.report.hangs.map(\.durationMs))")
            #expect(hang.kind == .blocked)
            #expect(hang.blockedIn == "futex")
            let owner = try #require(hang.lockOwner, "no lock owner: \(hang)")
            #expect(owner.name == "lock-holder")
            #expect(owner.evidence == "mutex")
            let tree = try #require(owner.callTree, "the owner was not sampled")
            let node = try #require(tree.first(containing: "holder_compute"), "owner tree: \(tree.allSymbols)")
            #expect(node.weightMs >= 0.6 * tree.weightMs, "holder_compute \(node.weightMs) of \(tree.weightMs) ms")
            #expect(tree.sampleCount >= 20, "owner sampled \(tree.sampleCount) times in \(hang.durationMs) ms")
            #expect(tree.weightMs <= hang.durationMs + 20, "owner tree \(tree.weightMs) ms in a \(hang.durationMs) ms hang")
        }

        @Test func cEpollLoop() throws {
            let scratch = try TestPaths.scratch()
            let binary = try ProcessRunner.compileC(TestPaths.demoSource("epoll_loop.c"), into: scratch, name: "epoll_loop")
            let pidFile = scratch.appendingPathComponent("pid").path
            let measure = scratch.appendingPathComponent("measure.txt").path
            let program = try AttachedProgram.start(binary, ["--measure", measure, "--pid-file", pidFile, "--verbose"],
                                                    scratch: scratch, pidFile: pidFile)
            let attach = try AttachReport.attach(program.pid, ["--duration", "20s"], scratch: scratch)
            let result = try program.finish()
            #expect(attach.result.status == 0, "stderr: \(attach.result.stderr)")
            #expect(result.status == 0)
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.contains("main loop done") && result.stderr.contains(" 0 EINTR"), "\(result.stderr)")
            let measured = MeasuredWork.parse(file: measure)
            let batch = try #require(measured.first { $0.name == "process_batch" })
            let compress = try #require(measured.first { $0.name == "compress_block" })
            #expect(attach.report.hangs.count == 2, "hangs: \(attach.report.hangs.map(\.durationMs))")
            let hang = try #require(attach.hang(matching: batch, toleranceMs: 5))
            #expect(hang.reported)
            let path = try #require(hang.callTree).heaviestPathSymbols
            #expect(path.contains("process_batch"), "\(path)")
            #expect(path.contains("main"), "\(path)")
            let short = try #require(attach.hang(matching: compress, toleranceMs: 5))
            #expect(!short.reported)
        }

        /// While the poller samples nothing, `hangwatch attach`'s own loop sleeps on
        /// the log (it drained every 10 ms: 100 wake-ups a second); the poller's
        /// polls are its own thread's. The target's exit still ends it at once.
        @Test func theDrainLoopSleepsWhileNothingIsSampled() throws {
            let scratch = try TestPaths.scratch()
            let binary = try ProcessRunner.compileBench("idle_loop", into: scratch)
            let program = try AttachedProgram.start(binary, ["--ms", "2500", "--out", scratch.appendingPathComponent("o").path],
                                                    scratch: scratch)
            let path = scratch.appendingPathComponent("attach-report.json").path
            var wakes: Int?
            let started = Date()
            let result = try ProcessRunner.run(TestPaths.hangwatch, ["attach", String(program.pid), "-o", path, "--format", "json"],
                                               timeout: 60) { attach in
                usleep(600_000)
                guard let first = ReaderWakeups.switches(attach.processIdentifier) else { return }
                usleep(1_000_000)
                wakes = ReaderWakeups.switches(attach.processIdentifier).map { $0 - first }
            }
            let endedAfter = Date().timeIntervalSince(started)
            #expect(try program.finish().status == 0)
            #expect(result.status == 0, "stderr: \(result.stderr)")
            let report = try JSONReport.decode(try #require(FileManager.default.contents(atPath: path)))
            #expect(report.hangs.isEmpty)
            let counted = try #require(wakes)
            // Four idle timeouts a second (250 ms), a few more for a preempted iteration.
            #expect(counted <= 12, "the attach loop woke \(counted) times in 1 s")
            // The program ran 2.5 s from before the attach: the report follows its exit.
            #expect(endedAfter < 4, "attach ended \(endedAfter) s after it started")
        }

        /// The worst case for the target: every sample of a blocked thread is a
        /// ptrace stop. usleep(300 ms) and poll(230 ms) still take their full
        /// time and return 0; the exit status and output are a plain run's.
        @Test func blockedCallsKeepTheirLength() throws {
            let plainScratch = try TestPaths.scratch()
            let plainMeasure = plainScratch.appendingPathComponent("measure.txt").path
            let plain = try ProcessRunner.run(TestPaths.runLoopDemo, ["--scenario", "blocked", "--measure", plainMeasure])

            let scratch = try TestPaths.scratch()
            let pidFile = scratch.appendingPathComponent("pid").path
            let measure = scratch.appendingPathComponent("measure.txt").path
            let program = try AttachedProgram.start(TestPaths.runLoopDemo,
                                                    ["--scenario", "blocked", "--measure", measure, "--pid-file", pidFile],
                                                    scratch: scratch, pidFile: pidFile)
            let attach = try AttachReport.attach(program.pid, ["--duration", "20s"], scratch: scratch,
                                                 environment: ["HANGWATCH_ATTACH_STOP_BLOCKED": "1"])
            let result = try program.finish()
            #expect(attach.result.status == 0, "stderr: \(attach.result.stderr)")
            #expect(result.status == plain.status)
            // The same work in the same order, and the same results of its calls.
            #expect(MeasuredWork.parse(file: measure).map(\.name) == MeasuredWork.parse(file: plainMeasure).map(\.name))
            let plainSleeps = SleepResult.parse(MeasuredWork.parse(file: plainMeasure)).filter { $0.call.hasSuffix("-result") }
            #expect(plainSleeps.count == 2 && plainSleeps.allSatisfy { $0.ret == 0 }, "\(plainSleeps)")
            let sleeps = SleepResult.parse(MeasuredWork.parse(file: measure))
            let usleep = try #require(sleeps.first { $0.call == "usleep-result" })
            let poll = try #require(sleeps.first { $0.call == "poll-result" })
            // Never shorter; the upper bound allows for a loaded 2-core VM's
            // scheduling delay, and still catches a sleep restarted from scratch
            // at every one of the ~300 stops (it would never end).
            #expect(usleep.ret == 0 && usleep.ms >= 300 && usleep.ms < 400, "usleep: \(usleep)")
            #expect(poll.ret == 0 && poll.ms >= 230 && poll.ms < 330, "poll: \(poll)")
            // The stops did happen: hundreds of them, on the sleeping thread.
            let stops = attach.report.notes.first { $0.hasPrefix("samples:") } ?? ""
            let count = Int(stops.dropFirst("samples: ".count).prefix { $0.isNumber }) ?? 0
            #expect(count > 200, "\(stops)")
            #expect(attach.report.hangs.count == 2)
        }

        /// Stops that land in epoll_wait, poll and usleep (dump with every thread
        /// stopped, ten times): the calls keep their results, nothing sees EINTR,
        /// and hangwatch says it restarted the interrupted epoll_wait.
        @Test func stopsNeverLeakEINTR() throws {
            let scratch = try TestPaths.scratch()
            let binary = try ProcessRunner.compileC(TestPaths.demoSource("thread_pool.c"), into: scratch, name: "thread_pool")
            let pidFile = scratch.appendingPathComponent("pid").path
            let sleepsFile = scratch.appendingPathComponent("sleeps.txt").path
            let program = try AttachedProgram.start(binary, ["--threads", "4", "--seconds", "3.2", "--pid-file", pidFile,
                                                             "--sleeps", sleepsFile], scratch: scratch, pidFile: pidFile)
            var restarted = 0
            for _ in 0..<10 {
                let dump = try ProcessRunner.run(TestPaths.hangwatch, ["dump", String(program.pid), "--format", "json"],
                                                 environment: ["HANGWATCH_ATTACH_STOP_BLOCKED": "1"])
                #expect(dump.status == 0, "\(dump.stderr)")
                let decoded = try JSONDecoder().decode(ThreadDump.self, from: Data(dump.stdout.utf8))
                restarted += decoded.restartedSyscalls
                usleep(150_000)
            }
            let result = try program.finish()
            #expect(result.status == 0)
            let sleeps = SleepResult.parse(MeasuredWork.parse(file: sleepsFile))
            #expect(sleeps.count >= 6, "\(sleeps)")
            for s in sleeps {
                switch s.call {
                // Never shorter, never EINTR; the upper bounds allow for a stop
                // (the thread wakes late by the stop's length) on a loaded VM.
                case "usleep": #expect(s.ret == 0 && s.err == 0 && s.ms >= 300 && s.ms < 400, "\(s)")
                case "poll": #expect(s.ret == 0 && s.err == 0 && s.ms >= 230 && s.ms < 330, "\(s)")
                case "epoll": #expect(s.ret == 1 && s.err == 0 && s.ms >= 300 && s.ms < 400, "\(s)")
                default: Issue.record("unexpected line \(s)")
                }
            }
            #expect(restarted > 0, "no dump landed in epoll_wait: the restart path was not exercised")
        }

        /// `dump` of a 50-thread process: 50 stacks, each thread's known function, fast.
        @Test func dumpFiftyThreads() throws {
            let scratch = try TestPaths.scratch()
            let binary = try ProcessRunner.compileC(TestPaths.demoSource("thread_pool.c"), into: scratch, name: "thread_pool")
            let pidFile = scratch.appendingPathComponent("pid").path
            let program = try AttachedProgram.start(binary, ["--threads", "50", "--seconds", "1.5", "--pid-file", pidFile],
                                                    scratch: scratch, pidFile: pidFile)
            usleep(100_000)
            let json = try ProcessRunner.run(TestPaths.hangwatch, ["dump", String(program.pid), "--format", "json"])
            let text = try ProcessRunner.run(TestPaths.hangwatch, ["dump", String(program.pid)])
            let result = try program.finish()
            #expect(result.status == 0)
            #expect(json.status == 0, "\(json.stderr)")
            let dump = try JSONDecoder().decode(ThreadDump.self, from: Data(json.stdout.utf8))
            #expect(dump.threads.count == 50)
            #expect(dump.threads.allSatisfy { !$0.frames.isEmpty })
            #expect(dump.captureMs < 50, "capture took \(dump.captureMs) ms")
            func thread(_ name: String) throws -> DumpedThread { try #require(dump.threads.first { $0.name == name }) }
            let main = try #require(dump.threads.first { $0.tid == program.pid })
            #expect(main.frames.first?.symbol == "spin_in_checksum", "\(main.frames)")
            #expect(main.capture == "stopped")
            let sleeper = try thread("sleeper")
            #expect(sleeper.syscall == "clock_nanosleep" && sleeper.capture == "proc")
            #expect(sleeper.frames.contains { $0.symbol == "nap_in_storage" }, "\(sleeper.frames)")
            let locker = try thread("locker")
            #expect(locker.syscall == "futex")
            #expect(locker.frames.contains { $0.symbol == "wait_for_index_lock" }, "\(locker.frames)")
            #expect(try thread("pool-49").frames.contains { $0.symbol == "idle_worker" })
            #expect(text.status == 0)
            #expect(text.stdout.components(separatedBy: "\nThread ").count - 1 == 50)
            #expect(text.stdout.contains("Thread \(program.pid) \"thread_pool\" running"))
        }

        /// `dump` of a 50-thread Swift program hung in a known function: 50
        /// stacks, demangled Swift names for each thread's own function, and the
        /// hung thread caught running in it.
        @Test func dumpFiftySwiftThreads() throws {
            let scratch = try TestPaths.scratch()
            let pidFile = scratch.appendingPathComponent("pid").path
            let program = try AttachedProgram.start(TestPaths.threadPoolDemo, ["--threads", "50", "--seconds", "1.5", "--pid-file", pidFile],
                                                    scratch: scratch, pidFile: pidFile)
            let json = try ProcessRunner.run(TestPaths.hangwatch, ["dump", String(program.pid), "--format", "json"])
            let result = try program.finish()
            #expect(result.status == 0 && result.stdout.isEmpty, "\(result)")
            #expect(json.status == 0, "\(json.stderr)")
            let dump = try JSONDecoder().decode(ThreadDump.self, from: Data(json.stdout.utf8))
            #expect(dump.threads.count == 50)
            #expect(dump.threads.allSatisfy { !$0.frames.isEmpty })
            #expect(dump.captureMs < 50, "capture took \(dump.captureMs) ms")
            func symbols(_ thread: DumpedThread) -> [String] { thread.frames.map(\.symbol) }
            let main = try #require(dump.threads.first { $0.tid == program.pid })
            #expect(main.capture == "stopped")
            #expect(main.frames.first?.symbol.contains("IndexChecksum.spin(until: Swift.UInt64)") == true, "\(symbols(main))")
            let sleeper = try #require(dump.threads.first { $0.name == "sleeper" })
            #expect(sleeper.syscall == "clock_nanosleep" && sleeper.capture == "proc")
            #expect(symbols(sleeper).contains { $0.contains("PhotoStorage.nap()") }, "\(symbols(sleeper))")
            let locker = try #require(dump.threads.first { $0.name == "locker" })
            #expect(locker.syscall == "futex")
            #expect(symbols(locker).contains { $0.contains("IndexLock.waitForIndex()") }, "\(symbols(locker))")
            let pool = dump.threads.filter { $0.name.hasPrefix("pool-") }
            #expect(pool.count == 47)
            #expect(pool.allSatisfy { symbols($0).contains { $0.contains("WorkerPool.idle()") } })
            // Mangled names never reach the user.
            #expect(!dump.threads.contains { symbols($0).contains { $0.hasPrefix("$s") } })
        }

        /// Ctrl-C ends the attach and writes the report; the target runs on untouched.
        @Test func interruptWritesReport() throws {
            let scratch = try TestPaths.scratch()
            let binary = try ProcessRunner.compileC(TestPaths.demoSource("thread_pool.c"), into: scratch, name: "thread_pool")
            let pidFile = scratch.appendingPathComponent("pid").path
            let program = try AttachedProgram.start(binary, ["--threads", "3", "--seconds", "3", "--pid-file", pidFile],
                                                    scratch: scratch, pidFile: pidFile)
            let path = scratch.appendingPathComponent("attach-report.json").path
            var heldWhileAttached: [String] = []
            let attach = try ProcessRunner.run(TestPaths.hangwatch,
                                               ["attach", String(program.pid), "--duration", "forever", "-o", path, "--format", "json"],
                                               whileRunning: { process in
                                                   // While attached, every 50 ms: no thread of the target is
                                                   // left stopped or traced (one caught inside a sample is
                                                   // watched for 100 ms: held at every read is a leftover).
                                                   for _ in 0..<12 {
                                                       heldWhileAttached += threadsHeld(program.pid)
                                                       usleep(50_000)
                                                   }
                                                   kill(process.processIdentifier, SIGINT)
                                               })
            #expect(attach.status == 0, "\(attach.stderr)")
            #expect(program.process.isRunning, "the target must outlive the attach")
            let report = try JSONReport.decode(try #require(FileManager.default.contents(atPath: path)))
            // The main thread spins from its start: one hang, in progress, counted from the attach.
            let hang = try #require(report.hangs.first)
            #expect(hang.inProgress)
            #expect(hang.durationMs > 400 && hang.durationMs < 3000, "\(hang.durationMs)")
            #expect(report.notes.contains { $0.contains("already busy when hangwatch attached") })
            #expect(heldWhileAttached.isEmpty, "held while attached: \(heldWhileAttached)")
            // After the detach, every thread (not only the main one) is free.
            #expect(threadsHeld(program.pid, settleMs: 0).isEmpty, "still held after the attach ended: \(threadsHeld(program.pid))")
            #expect(try program.finish().status == 0)
        }

        /// A watched thread (not the leader) calls execve while samples stop it,
        /// twenty times: every exec goes through (same output, status 7), no
        /// thread is ever left stopped or traced, and the busy periods that
        /// ended in an exec are not reported as hangs.
        @Test func execWhileSampled() throws {
            let scratch = try TestPaths.scratch()
            let binary = try AttachScenario.compile("exec_chain", into: scratch)
            let plain = try ProcessRunner.run(binary, ["20", scratch.appendingPathComponent("plain.pid").path])
            #expect(plain.status == 7 && plain.stdout.hasSuffix("gen 1\ndone\n"), "\(plain)")
            let pidFile = scratch.appendingPathComponent("pid").path
            let program = try AttachedProgram.start(binary, ["20", pidFile], scratch: scratch, pidFile: pidFile)
            let path = scratch.appendingPathComponent("attach-report.json").path
            var held: [String] = []
            var checks = 0
            // Every sample of the execer is a stop, also while it is inside execve.
            let attach = try ProcessRunner.run(TestPaths.hangwatch,
                                               ["attach", String(program.pid), "--thread", "execer", "--duration", "30s",
                                                "-o", path, "--format", "json"],
                                               environment: ["HANGWATCH_ATTACH_STOP_BLOCKED": "1"], whileRunning: { process in
                                                   while process.isRunning && program.process.isRunning {
                                                       held += threadsHeld(program.pid)
                                                       checks += 1
                                                       usleep(50_000)
                                                   }
                                               })
            let result = try program.finish()
            #expect(attach.status == 0, "\(attach.stderr)")
            #expect(result.status == plain.status)
            #expect(result.stdout == plain.stdout)
            #expect(held.isEmpty, "held while attached: \(held)")
            #expect(checks >= 10, "only \(checks) checks while attached")
            let report = try JSONReport.decode(try #require(FileManager.default.contents(atPath: path)))
            // The exec'd threads' busy periods end at their exec, as at an exit: no hang.
            // The last one may be cut by the process's exit (generation 0 exits at once,
            // and the poller can see the exit before the thread's end): then it is in
            // progress at the exit, about one generation long (~130 ms), never more.
            let ended = report.hangs.filter { !$0.inProgress || $0.durationMs > 200 }
            #expect(ended.isEmpty && report.hangs.count <= 1, "hangs: \(report.hangs.map { ($0.durationMs, $0.inProgress) })")
            #expect(report.notes.contains { $0.contains("the process exited during the attach") }, "\(report.notes)")
            // The path under test was taken: some stops met an execve (7 of 20 on average here).
            let met = report.notes.first { $0.contains("met an execve") } ?? ""
            #expect(Int(met.prefix { $0.isNumber }) ?? 0 >= 1, "\(report.notes)")
        }

        /// While a stop holds a thread, signals the process ignores (SIGWINCH,
        /// SIGURG, SIGCHLD by default, SIGUSR2 by SIG_IGN) are queued instead of
        /// dropped. A single-threaded epoll loop flooded with them, and with
        /// children exiting during each wait, is stopped in epoll_wait by eight
        /// dumps: it sees no EINTR, every wait keeps its length, and hangwatch
        /// restarted the interrupted waits.
        @Test func ignoredSignalsNeverLeakEINTR() throws {
            let scratch = try TestPaths.scratch()
            let binary = try AttachScenario.compile("sigstorm", into: scratch)
            let plain = try ProcessRunner.run(binary, [scratch.appendingPathComponent("plain.pid").path])
            #expect(plain.status == 0 && plain.stdout.hasSuffix("EINTR 0\n"), "\(plain)")
            let pidFile = scratch.appendingPathComponent("pid").path
            let program = try AttachedProgram.start(binary, [pidFile], scratch: scratch, pidFile: pidFile)
            var restarted = 0, stopped = 0, inEpoll = 0
            for _ in 0..<8 {
                let dump = try ProcessRunner.run(TestPaths.hangwatch, ["dump", String(program.pid), "--format", "json"],
                                                 environment: ["HANGWATCH_ATTACH_STOP_BLOCKED": "1"])
                #expect(dump.status == 0, "\(dump.stderr)")
                let decoded = try JSONDecoder().decode(ThreadDump.self, from: Data(dump.stdout.utf8))
                restarted += decoded.restartedSyscalls
                stopped += decoded.stoppedThreads
                if decoded.threads.first?.syscall == "epoll_wait" { inEpoll += 1 }
                #expect(threadsHeld(program.pid).isEmpty)
                usleep(250_000)
            }
            let result = try program.finish()
            #expect(result.status == plain.status)
            #expect(result.stdout == plain.stdout, "\(result.stdout)")
            // Never shorter; the upper bound allows a loaded VM's wake-up delay and
            // catches a timed wait restarted with its whole timeout (600 ms).
            let lengths = result.stderr.split(separator: "\n").compactMap { Double($0) }
            #expect(lengths.count == 10)
            #expect(lengths.allSatisfy { $0 >= 300 && $0 < 380 }, "\(lengths)")
            // Only the untimed waits (-1) are stopped: a timed wait's start is unknown, so it is read from /proc.
            #expect(inEpoll >= 6, "the loop was in epoll_wait at \(inEpoll) of 8 dumps")
            #expect(stopped > 0 && restarted > 0, "stopped \(stopped), restarted \(restarted): the restart path was not exercised")
        }

        /// A thread that never stops (the parent of a vfork, in D state for
        /// 2.5 s): dump gives up on it after a bounded wait instead of waiting
        /// for it, and the program is neither stopped nor traced afterwards.
        @Test func dumpNeverWaitsForAStuckThread() throws {
            let scratch = try TestPaths.scratch()
            let binary = try AttachScenario.compile("vfork_wait", into: scratch)
            let pidFile = scratch.appendingPathComponent("pid").path
            let program = try AttachedProgram.start(binary, [pidFile], scratch: scratch, pidFile: pidFile)
            usleep(100_000) // in vfork by now
            let start = Date()
            let dump = try ProcessRunner.run(TestPaths.hangwatch, ["dump", String(program.pid), "--format", "json"],
                                             environment: ["HANGWATCH_ATTACH_STOP_BLOCKED": "1"])
            let seconds = Date().timeIntervalSince(start)
            let heldAfter = threadsHeld(program.pid)
            let result = try program.finish()
            #expect(dump.status == 0, "\(dump.stderr)")
            // 20 ms + 500 ms of waiting, plus start-up; waiting for the thread would take 2.4 s.
            #expect(seconds < 1.8, "dump took \(seconds) s")
            let decoded = try JSONDecoder().decode(ThreadDump.self, from: Data(dump.stdout.utf8))
            let main = try #require(decoded.threads.first)
            #expect(main.error != nil && main.frames.isEmpty, "\(main)")
            #expect(heldAfter.isEmpty, "\(heldAfter)")
            #expect(result.status == 0 && result.stdout == "vfork done 0\n", "\(result)")
        }

        /// Threads that come and go all day: attach's descriptors and thread
        /// table do not grow with them (each watched, busy thread used to leave
        /// its schedstat descriptor open).
        @Test func threadChurnLeaksNothing() throws {
            let scratch = try TestPaths.scratch()
            let binary = try AttachScenario.compile("churn", into: scratch)
            let pidFile = scratch.appendingPathComponent("pid").path
            let program = try AttachedProgram.start(binary, [pidFile, "3"], scratch: scratch, pidFile: pidFile)
            let path = scratch.appendingPathComponent("attach-report.json").path
            var early = 0, late = 0
            let attach = try ProcessRunner.run(TestPaths.hangwatch,
                                               ["attach", String(program.pid), "--thread", "job", "-o", path, "--format", "json"],
                                               whileRunning: { process in
                                                   let fds = "/proc/\(process.processIdentifier)/fd"
                                                   usleep(500_000)
                                                   early = (try? FileManager.default.contentsOfDirectory(atPath: fds).count) ?? 0
                                                   usleep(2_000_000)
                                                   late = (try? FileManager.default.contentsOfDirectory(atPath: fds).count) ?? 0
                                               })
            let result = try program.finish()
            #expect(attach.status == 0, "\(attach.stderr)")
            #expect(result.status == 0 && result.stdout == "jobs done\n")
            let jobs = Int(result.stderr.prefix { $0.isNumber }) ?? 0
            #expect(jobs > 50, "\(result.stderr)")
            let report = try JSONReport.decode(try #require(FileManager.default.contents(atPath: path)))
            // Some jobs were watched and sampled (each spins 15 ms after being busy 12 ms:
            // ~15 stops each). Only some: a new thread is found when the thread count
            // changes between two reads, and one job replacing another keeps it the same
            // (measured: 37 stops, ~1 job in 40; the old code left ~10 descriptors open here).
            let samples = report.notes.first { $0.hasPrefix("samples:") } ?? ""
            #expect(Int(samples.dropFirst("samples: ".count).prefix { $0.isNumber }) ?? 0 > 10, "\(report.notes)")
            #expect(early > 0 && late <= early + 3, "descriptors: \(early) after 0.5 s, \(late) after 2.5 s (\(jobs) jobs)")
            #expect(report.hangs.isEmpty, "\(report.hangs.map(\.durationMs))")
        }

        /// A worker started for a block that waits on a lock is first seen in
        /// the lock's futex. When any futex wait was a candidate for the
        /// worker's loop wait, that one was learned as its "idle" site: the
        /// ~400 ms lock wait was not reported, and the worker's real idle wait
        /// afterwards was reported as a hang instead (seen: one 301 ms hang,
        /// none of 396 ms). Only a timed futex wait (the worker's park) is a
        /// candidate now; the lock's has no timeout.
        @Test func mainQueueLockWaitIsNotTheLoopWait() throws {
            let scratch = try TestPaths.scratch()
            let binary = try AttachScenario.compileWithDispatch("mainq_lock", into: scratch)
            let pidFile = scratch.appendingPathComponent("pid").path
            let program = try AttachedProgram.start(binary, [pidFile], scratch: scratch, pidFile: pidFile)
            usleep(60_000) // in dispatchMain() by now; the block starts at 200 ms
            let attach = try AttachReport.attach(program.pid, ["--duration", "20s"], scratch: scratch)
            let result = try program.finish()
            #expect(attach.result.status == 0, "\(attach.result.stderr)")
            #expect(result.status == 0)
            let wait = Double(result.stdout.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
            #expect(wait > 350, "\(result.stdout)")
            #expect(attach.report.notes.contains { $0.contains("dispatchMain") })
            #expect(attach.report.hangs.count == 1, "hangs: \(attach.report.hangs.map(\.durationMs)), lock wait \(wait) ms")
            #expect(attach.report.hangs.contains { attach.within($0.durationMs, of: wait, toleranceMs: 10) },
                    "hangs: \(attach.report.hangs.map(\.durationMs)), lock wait \(wait) ms; \(attach.stolenMs) ms stolen")
        }

        /// Another tracer holding the sampled thread for 400 ms makes our seizes
        /// fail with EPERM: that is not a refusal (the old rule gave up sampling
        /// for good at the first one); sampling resumes once it has gone.
        @Test func anotherTracerIsNotARefusal() throws {
            let scratch = try TestPaths.scratch()
            let binary = try ProcessRunner.compileC(TestPaths.demoSource("thread_pool.c"), into: scratch, name: "thread_pool")
            let tracer = try AttachScenario.compile("tracer", into: scratch)
            let pidFile = scratch.appendingPathComponent("pid").path
            let program = try AttachedProgram.start(binary, ["--threads", "3", "--seconds", "3", "--pid-file", pidFile],
                                                    scratch: scratch, pidFile: pidFile)
            let path = scratch.appendingPathComponent("attach-report.json").path
            var traced = ProcessResult(status: -1, stdout: "", stderr: "")
            let attach = try ProcessRunner.run(TestPaths.hangwatch,
                                               ["attach", String(program.pid), "--duration", "2s", "-o", path, "--format", "json"],
                                               whileRunning: { _ in
                                                   usleep(300_000)
                                                   traced = (try? ProcessRunner.run(tracer, [String(program.pid), "400"])) ?? traced
                                               })
            let result = try program.finish()
            #expect(traced.status == 0, "the other tracer could not seize: \(traced.stderr)")
            #expect(attach.status == 0, "\(attach.stderr)")
            #expect(result.status == 0)
            #expect(threadsHeld(program.pid).isEmpty)
            let report = try JSONReport.decode(try #require(FileManager.default.contents(atPath: path)))
            #expect(!report.notes.contains { $0.contains("ptrace was refused") }, "\(report.notes)")
            // The main thread spins throughout: ~1 stop per ms outside the tracer's 400 ms
            // (measured 862 on the loaded VM); giving up at the first EPERM left 103.
            let samples = report.notes.first { $0.hasPrefix("samples:") } ?? ""
            #expect(Int(samples.dropFirst("samples: ".count).prefix { $0.isNumber }) ?? 0 > 450, "\(report.notes)")
            #expect(report.notes.contains { $0.contains("samples were lost") }, "the tracer's EPERMs: \(report.notes)")
        }

        /// Refusals: one line and their own exit status.
        @Test func refusals() throws {
            let bad = try ProcessRunner.run(TestPaths.hangwatch, ["attach", "twelve"])
            #expect(bad.status == 2)
            let gone = try ProcessRunner.run(TestPaths.hangwatch, ["attach", "4194303", "--duration", "1s"])
            #expect(gone.status == 69)
            #expect(gone.stderr == "hangwatch: no process with pid 4194303\n")
            let dumpGone = try ProcessRunner.run(TestPaths.hangwatch, ["dump", "4194303"])
            #expect(dumpGone.status == 69)
            guard getuid() == 0 else { return } // the other-user case needs a second user to be
            let scratch = try TestPaths.scratch()
            let binary = try ProcessRunner.compileC(TestPaths.demoSource("thread_pool.c"), into: scratch, name: "thread_pool")
            let program = try AttachedProgram.start(binary, ["--threads", "3", "--seconds", "2"], scratch: scratch)
            defer { _ = try? program.finish() }
            let asNobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
            let other = try ProcessRunner.run(asNobody[0], Array(asNobody.dropFirst()) + [TestPaths.hangwatch, "attach", String(program.pid)])
            #expect(other.status == 77)
            #expect(other.stderr.contains("belongs to another user") && other.stderr.split(separator: "\n").count == 1,
                    "\(other.stderr)")
            let otherDump = try ProcessRunner.run(asNobody[0], Array(asNobody.dropFirst()) + [TestPaths.hangwatch, "dump", String(program.pid)])
            #expect(otherDump.status == 77)
        }
    }
}
