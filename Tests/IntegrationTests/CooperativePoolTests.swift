import Foundation
import HangWatchModel
import HangWatchRender
import HangWatchTestSupport
import Testing

extension Integration {
    /// Swift Concurrency's cooperative pool under `hangwatch run`, with no code change, and in the library.
    @Suite struct CooperativePool {
        /// The pool's width as the agent counts it (libdispatch's online CPUs).
        static let width = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))

        /// Under `hangwatch run`, and in the library (`HangWatcher.start()` first thing in an async main).
        @Test(arguments: ["run", "library"]) func starvedPoolAndLongJobsAreHangsOnTheProgramsClock(way: String) throws {
            let scratch = try TestPaths.scratch()
            let eventsPath = scratch.appendingPathComponent("events.jsonl").path
            let run = way == "run"
                ? try HangwatchRun.run(TestPaths.asyncPoolDemo, hangwatchArgs: ["--events", eventsPath], scratch: scratch)
                : try HangwatchRun.library(TestPaths.asyncPoolDemo, environment: ["HANGWATCH_EVENTS": eventsPath])
            #expect(run.result.status == 0, "\(run.result.stderr)")
            let hangs = run.report.hangs
            let pool = hangs.filter { $0.thread.role == Hang.cooperativePoolRole }
            let jobs = hangs.filter { $0.thread.role == Hang.jobRole }
            #expect(hangs.count == pool.count + jobs.count, "only pool and job hangs: \(hangs.map(\.thread.role))")
            try #require(pool.count == 2, "pool hangs: \(pool.map(\.durationMs))")

            // Each pool hang on the program's own clock: the latest thread taken to the first freed.
            let tolerance = 5 + run.stolenMs
            let phases = [("pool-blocked", HangKind.blocked, "blockInSynchronousAPI"),
                          ("pool-cpu", HangKind.cpu, "computeWithoutYielding")]
            for (hang, (name, kind, function)) in zip(pool, phases) {
                let work = try #require(run.work(name).first)
                #expect(abs(hang.durationMs - work.durationMs) <= tolerance, "\(name): \(hang.durationMs) vs \(work.durationMs)")
                #expect(hang.kind == kind, "\(name): \(hang.kind)")
                #expect(hang.reported)
                let threads = try #require(hang.poolThreads)
                #expect(threads.count == Self.width, "\(name): \(threads.count) threads")
                #expect(Set(threads.map(\.tid)).count == threads.count)
                for thread in threads {
                    #expect(thread.state == (kind == .cpu ? "running" : "blocked"))
                    #expect(thread.blockedIn == (kind == .cpu ? nil : "usleep"))
                    let tree = try #require(thread.callTree)
                    #expect(tree.heaviestPathSymbols.contains { $0.contains(function) }, "\(name) thread \(thread.tid)")
                    #expect(!tree.allSymbols.contains { $0.hasPrefix("inprocess_") || $0.hasPrefix("run_job") },
                            "\(way): hangwatch's wrappers in \(tree.allSymbols)")
                    // Each thread's job is a job hang of its own, named by id.
                    let job = try #require(hangs.first { $0.id == thread.jobHangId })
                    #expect(job.thread.role == Hang.jobRole && job.thread.tid == thread.tid)
                    #expect(job.startMs <= hang.startMs + 0.001 && job.durationMs >= hang.durationMs - 0.001)
                }
            }

            // A request enqueued 200 ms into the blocked spell waited for a
            // thread: the first one seen enqueued is the one the program timed
            // (the spell's end less its enqueue). In the computing spell no
            // request came: at most the group's own resumption, enqueued by
            // the first child to finish just before its job ended (that
            // child preempted in between can make it a few ms).
            let queued = try #require(run.work("queued-request").first)
            let waited = try #require(pool[0].poolJobWaitMs, "\(way): no waiting job on the blocked pool")
            #expect(abs(waited - queued.durationMs) <= tolerance, "\(way): waited \(waited) vs \(queued.durationMs)")
            #expect((pool[1].poolJobWaitMs ?? 0) <= tolerance, "\(way): \(String(describing: pool[1].poolJobWaitMs))")
            #expect(TextRenderer.render(run.report).contains("a job waited at least"), "\(way): no wait line in the text")

            // One 300 ms request on a free pool: exactly one job hang, no pool hang.
            let response = try #require(run.work("renderLargeResponse").first)
            let long = jobs.filter { abs($0.durationMs - response.durationMs) <= tolerance
                && ($0.callTree?.heaviestPathSymbols.contains { $0.contains("renderLargeResponse") } ?? false) }
            #expect(long.count == 1, "job hangs: \(jobs.map(\.durationMs))")
            #expect(try #require(long.first?.callTree).heaviestPathSymbols.contains { $0.contains("renderLargeResponse") })
            #expect(long.first?.kind == .cpu)

            // Callers piled on an actor: each call a job hang in the actor's method, one at a time.
            let calls = run.work("rebuildSession-0") + run.work("rebuildSession-1") + run.work("rebuildSession-2")
            #expect(calls.count == 3)
            let actorJobs = jobs.filter { job in job.durationMs < 200 }
            #expect(actorJobs.count == 3, "actor jobs: \(actorJobs.map(\.durationMs))")
            for (job, call) in zip(actorJobs, calls) {
                #expect(abs(job.durationMs - call.durationMs) <= tolerance, "\(job.durationMs) vs \(call.durationMs)")
            }
            // A job resumed from a sleep with a tolerance runs from a dispatch timer
            // source, not dispatch_async_f: bracketed too, one job hang.
            let resumed = try #require(run.work("renderAfterTolerantSleep").first)
            let resumedJobs = jobs.filter { abs($0.durationMs - resumed.durationMs) <= tolerance
                && ($0.callTree?.heaviestPathSymbols.contains { $0.contains("renderAfterTolerantSleep") } ?? false) }
            #expect(resumedJobs.count == 1, "\(way): job hangs \(jobs.map(\.durationMs)), resumed work \(resumed.durationMs)")

            // Every job hang is one of the pieces of work: the 20,000 tiny jobs gave none.
            #expect(jobs.count == 2 * Self.width + 1 + 3 + 1, "job hangs: \(jobs.map(\.durationMs))")

            // The live stream tells both kinds, a pool hang after the jobs it names.
            let lines = try String(contentsOfFile: eventsPath, encoding: .utf8).split(separator: "\n")
            let told = try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                .compactMap { $0?["hang"] as? [String: Any] }
            let toldPool = told.filter { ($0["thread"] as? [String: Any])?["role"] as? String == Hang.cooperativePoolRole }
            #expect(toldPool.count == 2, "pool events: \(toldPool.count)")
            for event in toldPool {
                let ids = ((event["poolThreads"] as? [[String: Any]]) ?? []).compactMap { $0["jobHangId"] as? Int }
                #expect(ids.count == Self.width)
                for id in ids {
                    #expect(told.contains { ($0["id"] as? Int) == id
                        && ($0["thread"] as? [String: Any])?["role"] as? String == Hang.jobRole })
                }
            }
        }

        /// `HANGWATCH_POOL=0` leaves the library's pool unwatched: no pool or job hang.
        @Test func theLibrarysPoolWatchCanBeSwitchedOff() throws {
            let run = try HangwatchRun.library(TestPaths.asyncPoolDemo, environment: ["HANGWATCH_POOL": "0"])
            #expect(run.result.status == 0, "\(run.result.stderr)")
            #expect(run.report.hangs.isEmpty, "\(run.report.hangs.map { "\($0.thread.role) \($0.durationMs)" })")
            #expect(run.work("pool-blocked").count == 1, "the demo ran its phases")
        }

        @Test func theHangGateCountsPoolAndJobHangs() throws {
            let scratch = try TestPaths.scratch()
            let report = scratch.appendingPathComponent("report.txt").path
            let breached = try ProcessRunner.run(TestPaths.hangwatch, ["run", "--fail-on-hang=380", "-o", report, "--",
                                                                       TestPaths.asyncPoolDemo], timeout: 60)
            #expect(breached.status == 4, "\(breached.stderr)")
            let passed = try ProcessRunner.run(TestPaths.hangwatch, ["run", "--fail-on-hang=2000", "-o", report, "--",
                                                                     TestPaths.asyncPoolDemo], timeout: 60)
            #expect(passed.status == 0, "\(passed.stderr)")
        }

        /// Under `hangwatch run` (both samplers) and in the library (`--library`).
        @Test func aWatchedRuntimeBehavesAsAPlainOne() throws {
            for (way, environment) in [("run", [:]), ("run", ["HANGWATCH_SAMPLER": "signal"]), ("library", [:])] {
                var attempts = 0
                var differences: [String] = []
                repeat {
                    attempts += 1
                    let plain = try ProcessRunner.run(TestPaths.concurrencyChecks, [], timeout: 60)
                    let report = try TestPaths.scratch().appendingPathComponent("report.txt").path
                    let watched = way == "library"
                        ? try ProcessRunner.run(TestPaths.concurrencyChecks, ["--library", report], timeout: 60)
                        : try ProcessRunner.run(
                            TestPaths.hangwatch, ["run", "-o", report, "--", TestPaths.concurrencyChecks],
                            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }, timeout: 60)
                    #expect(plain.status == 3 && watched.status == 3, "exit: plain \(plain.status), watched \(watched.status)")
                    let found = Observations(watched.stdout).differences(from: Observations(plain.stdout), toleranceMs: 25)
                    #expect(found.exact.isEmpty, "\(way) \(environment): \(found.exact)")
                    #expect(Observations(plain.stdout).checks.count == 9, "\(plain.stdout)")
                    // The full-pool check went through the agent's note of a waiting job.
                    let text = (try? String(contentsOfFile: report, encoding: .utf8)) ?? ""
                    #expect(text.contains("a job waited at least"), "\(way) \(environment): no waiting job noted")
                    differences = found.timing
                } while !differences.isEmpty && attempts < 3
                #expect(differences.isEmpty, "\(way) \(environment): \(differences)")
            }
        }
    }
}
