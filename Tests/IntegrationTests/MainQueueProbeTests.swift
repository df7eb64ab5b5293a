import Foundation
import HangWatchModel
import HangWatchTestSupport
import Testing

extension Integration {
    /// The library's main-queue probe after dispatchMain(): it runs only while
    /// dispatch work runs (libdispatch's bracket around each root-queue item
    /// wakes the watchdog), plus one probe every 100 ms for the one kind of
    /// main-queue work outside any bracket.
    @Suite struct MainQueueProbe {
        /// The library's watchdog thread (named "hangwatch") of process `pid`.
        static func watchdogThread(_ pid: Int32) -> String? {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            return tasks.first { tid in
                (try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/comm", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) == "hangwatch"
            }
        }

        /// Voluntary plus involuntary context switches of one thread.
        static func switches(_ pid: Int32, _ tid: String) -> Int? {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/status", encoding: .utf8)
            else { return nil }
            let counts = status.split(separator: "\n").filter { $0.contains("ctxt_switches:") }
                .compactMap { Int($0.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") }
            return counts.count == 2 ? counts.reduce(0, +) : nil
        }

        /// Runs DispatchMainDemo's syncedReport() stall (`arguments` say from
        /// where) and returns its one hang, after the checks every case shares.
        static func syncStall(_ arguments: [String]) throws -> (hang: Hang, work: MeasuredWork, pid: Int) {
            let library = try HangwatchRun.library(TestPaths.dispatchMainDemo, arguments)
            #expect(library.result.status == 0, "\(library.result.stderr)")
            let work = try #require(library.work("syncedReport").first)
            #expect(library.report.hangs.count == 1, "hangs: \(library.report.hangs.map(\.durationMs))")
            let hang = try #require(library.report.hangs.first)
            #expect(hang.thread.role == "main-queue")
            return (hang, work, library.report.process.pid)
        }

        /// An idle queue lets the watchdog park: a probe every 100 ms and the check
        /// after it, about 17 wake-ups a second. Probing every 20 ms made 50.
        @Test func anIdleQueueLetsTheWatchdogPark() throws {
            var wakes: Int?
            let library = try HangwatchRun.library(TestPaths.dispatchMainDemo, ["--idle"]) { process in
                let pid = process.processIdentifier
                usleep(800_000) // dispatchMain() has run and the probe mode is on
                guard let tid = Self.watchdogThread(pid), let first = Self.switches(pid, tid) else { return }
                usleep(1_500_000)
                if let second = Self.switches(pid, tid) { wakes = second - first }
                while process.isRunning { usleep(20_000) }
            }
            #expect(library.result.status == 0, "\(library.result.stderr)")
            #expect(library.report.hangs.isEmpty, "hangs: \(library.report.hangs.map(\.durationMs))")
            let counted = try #require(wakes, "no watchdog thread found")
            #expect(counted <= 45, "the watchdog woke \(counted) times in 1.5 s")
        }

        /// DispatchQueue.main.sync from a global queue's worker runs the block on
        /// that worker, inside its run through the global root queue: counted
        /// dispatch work, so the stall is timed as closely as a main-queue block
        /// (0.2-7 ms off here; 15 allowed, as for those).
        /// (Counting only the main queue's own root queue left it to the 100 ms
        /// probe: off by up to 60 ms, or lost when short.)
        @Test func aSyncFromAWorkerIsTimedLikeAMainQueueBlock() throws {
            let (hang, work, _) = try Self.syncStall(["--sync-from-worker"])
            #expect(abs(hang.durationMs - work.durationMs) <= 15, "\(hang.durationMs) ms for \(work.durationMs) ms of work")
        }

        /// A main-queue block that waits off the CPU (a slow read) answers no
        /// thread's call for who runs the stall, yet its drain began after the
        /// stuck probe went out: it is timed from that drain, as closely as a
        /// block that computes (15 ms allowed, as for those), and sampled as
        /// blocked, under the function that waits.
        @Test func aBlockedMainQueueBlockIsTimedFromItsDrain() throws {
            let library = try HangwatchRun.library(TestPaths.dispatchMainDemo, ["--blocked-block"])
            #expect(library.result.status == 0, "\(library.result.stderr)")
            let work = try #require(library.work("readArchive").first)
            #expect(library.report.hangs.count == 1, "hangs: \(library.report.hangs.map(\.durationMs))")
            let hang = try #require(library.report.hangs.first)
            #expect(hang.thread.role == "main-queue")
            #expect(abs(hang.durationMs - work.durationMs) <= 15, "\(hang.durationMs) ms for \(work.durationMs) ms of work")
            #expect(hang.kind == .blocked)
            let caller = try #require(hang.callTree?.first(containing: "readArchive"))
            #expect(caller.children.contains { $0.symbol.contains("sleep") }, "\(caller.children.map(\.symbol))")
        }

        /// One stall passed from thread to thread: a block waits 300 ms on a
        /// worker while a plain thread's main.sync waits behind it, and the
        /// queue goes from the worker to that thread, which computes 300 ms.
        /// The sampling follows the queue (it stayed on the worker, idle by
        /// then, and called the whole stall blocked): both halves are in the
        /// one hang's tree, the second under the thread that computes.
        @Test func aStallHandedToAnotherThreadIsFollowed() throws {
            let library = try HangwatchRun.library(TestPaths.dispatchMainDemo, ["--handoff"])
            #expect(library.result.status == 0, "\(library.result.stderr)")
            let wait = try #require(library.work("readArchive").first)
            let spin = try #require(library.work("syncedReport").first)
            #expect(library.report.hangs.count == 1, "hangs: \(library.report.hangs.map(\.durationMs))")
            let hang = try #require(library.report.hangs.first)
            let both = wait.durationMs + spin.durationMs
            #expect(abs(hang.durationMs - both) <= 70, "\(hang.durationMs) ms for \(both) ms of work")
            #expect(hang.kind == .mixed, "\(hang.kind)")
            let tree = try #require(hang.callTree)
            let spun = try #require(tree.first(containing: "syncedReport"))
            let waited = try #require(tree.first(containing: "readArchive"))
            // Each half sampled for most of its 300 ms.
            #expect(spun.weightMs >= 150 && waited.weightMs >= 150, "\(spun.weightMs) and \(waited.weightMs) ms")
        }

        /// A main-queue block inside another queue's sync: libdispatch's current
        /// queue on its thread is that other queue, yet it holds the main queue,
        /// and is sampled (it had no sample, and the hang no kind).
        @Test func aStallInsideAnotherQueuesSyncIsSampled() throws {
            let library = try HangwatchRun.library(TestPaths.dispatchMainDemo, ["--nested-sync"])
            #expect(library.result.status == 0, "\(library.result.stderr)")
            let work = try #require(library.work("importPhotos").first)
            let hang = try #require(library.report.hangs.first)
            #expect(abs(hang.durationMs - work.durationMs) <= 15, "\(hang.durationMs) ms for \(work.durationMs) ms of work")
            #expect(hang.kind == .cpu)
            let inner = try #require(hang.callTree?.first(containing: "importPhotos"))
            #expect(inner.weightMs >= 150, "\(inner.weightMs) ms")
        }

        /// The stall's holder, running inside another queue's sync, naps 300 µs
        /// between 0.3 ms chunks of CPU. Plain and watched (three runs), no nap
        /// ends early (EINTR). A signal sent to the holder while /proc said it
        /// ran once cut 1 nap of ~340 in CI (the holder entered its nap before
        /// the signal arrived); it is now claimed from outside, never
        /// signalled (theStallsHolderIsNeverSignalled). With the SIGPROF
        /// fallback sampler the library has no wrappers to resume a wait the
        /// race cut: 39 of 4,203 naps (a known issue there, as in
        /// docs/LIMITS.md).
        @Test func napsOfTheStallsHolderAreNeverCutShort() throws {
            let scratch = try TestPaths.scratch()
            let plainFile = scratch.appendingPathComponent("plain.txt").path
            let plain = try ProcessRunner.run(TestPaths.dispatchMainDemo, ["--nested-naps", "--measure", plainFile])
            #expect(plain.status == 0)
            let plainNaps = try #require(MeasuredWork.parse(file: plainFile).first { $0.name == "naps" }?.fields)
            #expect(plainNaps[2] == "0", "EINTRs plain: \(plainNaps[2])")
            for _ in 0..<3 {
                let library = try HangwatchRun.library(TestPaths.dispatchMainDemo, ["--nested-naps"])
                #expect(library.result.status == 0, "\(library.result.stderr)")
                let watchedNaps = try #require(library.work("naps").first?.fields)
                withKnownIssue("the SIGPROF fallback races into waits the library cannot resume", isIntermittent: true) {
                    #expect(watchedNaps[2] == "0", "EINTRs watched: \(watchedNaps[2])")
                } when: { Safety.signalSampler }
                // The same work either way: about 400 rounds of chunk and nap (the VM's timer slack varies it).
                #expect((Int(watchedNaps[1]) ?? 0) * 2 > (Int(plainNaps[1]) ?? 0), "naps plain \(plainNaps[1]), watched \(watchedNaps[1])")
                let hang = try #require(library.report.hangs.first)
                #expect(hang.callTree?.first(containing: "napBetweenChunks") != nil)
            }
        }

        /// The stall's holder is claimed from outside and sampled by the kernel:
        /// the program receives no SIGPROF at all (strace sees every signal
        /// delivered to any thread), whether the holder naps, computes inside
        /// another queue's sync, or is a plain thread in main.sync. The
        /// identify signal this replaced always went to a holder that
        /// computes, and to one that naps 2 times in 3 under strace (each of
        /// those naps ended in EINTR); under strace the program starts slowly
        /// enough that the stall often began before the first probe had run,
        /// when the holder could not be read and every running thread was
        /// asked. The engine's start now guesses where libdispatch keeps it,
        /// from the main thread's id, which the queue holds until
        /// dispatchMain(): a stall that begins before any probe has run
        /// (--first-block) is claimed from outside too (without the guess,
        /// its holder got the identify signal every run).
        @Test(.enabled(if: !Safety.signalSampler, "the fallback sampler signals by design"),
              arguments: ["--nested-naps", "--nested-sync", "--sync-from-thread", "--first-block"])
        func theStallsHolderIsNeverSignalled(mode: String) throws {
            let scratch = try TestPaths.scratch()
            let trace = scratch.appendingPathComponent("signals.txt").path
            let library = try HangwatchRun.library("/usr/bin/strace",
                                                   ["-f", "-qq", "-e", "trace=none", "-e", "signal=SIGPROF", "-o", trace,
                                                    TestPaths.dispatchMainDemo, mode])
            #expect(library.result.status == 0, "\(library.result.stderr)")
            #expect(Safety.samplerFallback(library.report) == nil, "\(library.report.notes)")
            // The stall was found (strace's slowness may add a short one of its own).
            #expect(library.report.hangs.contains { $0.durationMs >= 250 }, "hangs: \(library.report.hangs.map(\.durationMs))")
            let signals = try String(contentsOfFile: trace, encoding: .utf8)
                .split(separator: "\n").filter { $0.contains("SIGPROF") }
            #expect(signals.isEmpty, "\(signals.count) SIGPROF delivered, first: \(signals.first ?? "")")
            if mode == "--nested-naps" {
                let naps = try #require(library.work("naps").first?.fields)
                #expect(naps[2] == "0", "EINTRs: \(naps[2])")
            }
        }

        /// The holder claimed from outside is sampled whole, under its
        /// function (strace, above, slows the watchdog's every system call,
        /// so this is measured without it). A holder claimed while it ran
        /// gets its stack's bounds from the first stack pointer the watchdog
        /// sees: without them the naps' blocked half had no stack, and the
        /// kernel's copies were called cut. And it is reached through its one
        /// true caller: the blocked samples' frame pointer is found among the
        /// stack's words, and a candidate whose caller's call cannot have made
        /// the frame (a dead frame's) loses to one whose can (a dead frame
        /// put a caller too many above the naps' blocked half, splitting it
        /// in two).
        @Test(arguments: [("--nested-naps", "napBetweenChunks"), ("--nested-sync", "importPhotos"),
                          ("--sync-from-thread", "syncedReport")])
        func theHolderClaimedFromOutsideIsSampledWhole(mode: String, function: String) throws {
            let library = try HangwatchRun.library(TestPaths.dispatchMainDemo, [mode])
            #expect(library.result.status == 0, "\(library.result.stderr)")
            let work = try #require(library.work(function).first)
            let hang = try #require(library.report.hangs.first)
            let tree = try #require(hang.callTree)
            // Sampled from the claim on: at least half of the ~300 ms (a plain
            // thread's main.sync is found by the probe every 100 ms, up to
            // 120 ms late; 169 ms were sampled of it once, 95 % coverage after).
            #expect(tree.weightMs >= work.durationMs * 0.5 - library.stolenMs, "\(tree.weightMs) ms sampled of \(work.durationMs) ms")
            #expect(tree.weightMs(under: function) >= tree.weightMs * 0.9,
                    "\(tree.weightMs(under: function)) ms under \(function) of \(tree.weightMs) ms sampled")
            #expect(tree.first(containing: "not fully captured") == nil)
            // One node (rarely a sample or two of the kernel's stop short of the thread's entry).
            #expect((tree.first(containing: function)?.weightMs ?? 0) >= tree.weightMs(under: function) * 0.95,
                    "\(tree.allSymbols.filter { $0.contains(function) }.count) nodes for \(function)")
        }

        /// DispatchQueue.main.sync from a plain thread runs the block on that
        /// thread, in no libdispatch bracket, so no dispatch work wakes the parked
        /// watchdog. Its probe every 100 ms still finds the stall, with the start
        /// taken halfway between the last answered probe and the stuck one (the
        /// gap is 100-120 ms, so ±60 ms); the end is exact. The second case adds
        /// unrelated dispatch work every 30 ms, which wakes the watchdog and stamps
        /// during the stall; the start still comes from the probes (the stuck
        /// thread, found outside counted work, says so). This case is coverage,
        /// not proof of that rule: taking the stamp gave 244-305 ms here, also
        /// within 70 ms, though it can halve a stall that began before a park.
        @Test(arguments: [[], ["--background-ticks"]])
        func aSyncFromAPlainThreadIsStillFound(extra: [String]) throws {
            let (hang, work, pid) = try Self.syncStall(["--sync-from-thread"] + extra)
            // Half a gap of up to 120 ms either way: 262-266 ms alone here, 319-350 ms with the ticks.
            #expect(abs(hang.durationMs - work.durationMs) <= 70, "\(hang.durationMs) ms for \(work.durationMs) ms of work")
            #expect(hang.thread.tid != pid)
        }
    }
}
