// Swift Concurrency's observable behaviour, one line per check
// (`<check> key=value ...`, keys ending in "ms" are timings): run plain and
// under `hangwatch run` or with `--library REPORT` (the HangWatch library),
// every value must agree. It exercises what the
// agent's job trampoline touches: task results and their order, actor
// ordering, cancellation, priority escalation, task-local values, delayed
// jobs, a job blocking in a synchronous call, jobs enqueued on a full pool,
// and the exit status.
import HangWatch
#if canImport(Glibc)
import Glibc
#endif

enum Request { @TaskLocal static var id: String = "none" }

actor Ledger {
    var entries: [Int] = []
    func append(_ value: Int) { entries.append(value) }
}

func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

func ms(since start: UInt64) -> String { String(Int((now() - start) / 1_000_000)) }

@inline(never) func work(_ n: Int) -> Int { (0..<(Int(UInt(bitPattern: n) % 97) + 3)).reduce(n) { ($0 &* 31) &+ $1 } }

@main struct ConcurrencyChecks {
    static func main() async {
        // --library REPORT: watched by the HangWatch library, started first thing.
        if let flag = CommandLine.arguments.firstIndex(of: "--library"), flag + 1 < CommandLine.arguments.count {
            var configuration = HangWatcher.Configuration.fromEnvironment()
            configuration.reportPath = CommandLine.arguments[flag + 1]
            do { try HangWatcher.start(configuration) } catch { print("start failed: \(error)") }
        }
        // Results of many jobs, in a task group and with async let.
        let sum = await withTaskGroup(of: Int.self) { group in
            for i in 0..<5000 { group.addTask { work(i) } }
            var total = 0
            for await value in group { total &+= value }
            return total
        }
        async let a = work(11)
        async let b = work(12)
        let pair = await [a, b]
        print("results group=\(sum) asynclet=\(pair[0]),\(pair[1])")

        // An actor serialises one caller's calls in order.
        let ledger = Ledger()
        for i in 0..<200 { await ledger.append(i) }
        let entries = await ledger.entries
        print("actor ordered=\(entries == Array(0..<200)) count=\(entries.count)")

        // Cancellation reaches a sleeping child.
        let sleeper = Task { () -> String in
            do { try await Task.sleep(nanoseconds: 5_000_000_000); return "slept" }
            catch is CancellationError { return "cancelled" }
            catch { return "other" }
        }
        try? await Task.sleep(nanoseconds: 20_000_000)
        sleeper.cancel()
        let outcome = await sleeper.value
        print("cancel outcome=\(outcome) flag=\(sleeper.isCancelled)")

        // Priority: a child keeps what it was given; awaiting it from a higher one escalates it.
        let low = Task(priority: .background) { () -> (UInt8, UInt8) in
            let base = Task.currentPriority.rawValue
            usleep(50_000)
            return (base, Task.currentPriority.rawValue)
        }
        let seen = await Task(priority: .high) { await low.value }.value
        print("priority base=\(seen.0) escalatedAtLeast=\(seen.1 >= seen.0)")

        // Task-local values flow into children, not into detached tasks.
        let locals = await Request.$id.withValue("req-42") { () -> (String, String, String) in
            async let child = Request.id
            let grouped = await withTaskGroup(of: String.self) { g in
                g.addTask { Request.id }
                return await g.next() ?? "?"
            }
            let detached = await Task.detached { Request.id }.value
            return (await child, grouped, detached)
        }
        print("tasklocal child=\(locals.0) group=\(locals.1) detached=\(locals.2)")

        // A delayed job runs after its delay, not sooner.
        let slept = now()
        try? await Task.sleep(nanoseconds: 120_000_000)
        print("sleep tookms=\(ms(since: slept)) early=\(now() - slept < 120_000_000)")

        // A job blocking in a synchronous call: result and errno as plain.
        let blocked = await Task.detached { () -> (Int32, Int32, String) in
            errno = 0
            let start = now()
            let rc = usleep(300_000)
            return (rc, errno, ms(since: start))
        }.value
        print("blocking rc=\(blocked.0) errno=\(blocked.1) tookms=\(blocked.2)")

        // A job computing for a while without suspending.
        let spun = await Task.detached { () -> (Int, String) in
            let start = now()
            var x = 0
            while now() - start < 260_000_000 { x = work(x) }
            return (x == -1 ? 1 : 0, ms(since: start))
        }.value
        print("spin flag=\(spun.0) tookms=\(spun.1)")

        // Jobs enqueued while every pool thread is inside a job (the agent
        // notes the first as waiting): errno kept across the enqueue, their
        // results, and their wait for a thread.
        let width = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        let full = await withTaskGroup(of: String?.self) { group in
            for i in 0..<width {
                group.addTask { () -> String? in
                    // 300 ms: the spell stays clear of the 250 ms report
                    // threshold, so the report shows the waiting job.
                    guard i == 0 else { usleep(300_000); return nil }
                    usleep(150_000)
                    errno = 77
                    let at = now()
                    let tasks = (0..<3).map { k in Task.detached { (work(k), now()) } }
                    let kept = errno
                    usleep(150_000)
                    var results: [String] = []
                    var waited: UInt64 = 0
                    for task in tasks {
                        let (value, started) = await task.value
                        results.append(String(value))
                        waited = max(waited, started - at)
                    }
                    return "errno=\(kept) results=\(results.joined(separator: ",")) waitedms=\(waited / 1_000_000)"
                }
            }
            var line = ""
            for await result in group { if let result { line = result } }
            return line
        }
        print("fullpool \(full)")
        exit(3)
    }
}
