// A server-shaped async program whose work runs on Swift Concurrency's
// cooperative pool, for `hangwatch run` with no code change:
//   1. 20,000 tiny jobs in task groups: the pool is busy, no job is long;
//   2. every pool thread blocks in a synchronous API (usleep) for 400 ms,
//      and a request arriving 200 ms into it waits for a thread;
//   3. every pool thread computes for 350 ms without a suspension point;
//   4. one request computes 300 ms on an otherwise free pool;
//   5. callers pile up on an actor whose method takes 150 ms each;
//   6. a request resumed from a sleep given a tolerance (the runtime then
//      runs it from a dispatch timer source) computes 300 ms.
// Each phase is measured by the program's own clock: for the whole-pool
// phases, from the last thread taken to the first one free again.
// Usage: AsyncPoolDemo [--measure FILE] [--threads N] [--library REPORT.json]
import DemoSupport
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// A handler that calls a synchronous API inside a job.
@inline(never) func blockInSynchronousAPI(ms: UInt32) -> (UInt64, UInt64) {
    let start = monotonicNs()
    usleep(ms * 1000)
    return (start, monotonicNs())
}

/// A handler that computes with no suspension point.
@inline(never) func computeWithoutYielding(ms: Double) -> (UInt64, UInt64, UInt64) {
    let start = monotonicNs()
    var digest: UInt64 = 0
    while Double(monotonicNs() - start) / 1e6 < ms { digest = mixChunk(digest) }
    return (start, monotonicNs(), digest)
}

@inline(never) func renderLargeResponse(_ options: DemoOptions) -> UInt64 {
    let work = MeasuredWork(name: "renderLargeResponse", measure: options.measureFile)
    var digest: UInt64 = 0
    while work.elapsedMs < 300 { digest = mixChunk(digest) }
    work.finish(result: digest)
    return digest
}

/// The work after a sleep with a tolerance: the resumed job runs it.
@inline(never) func renderAfterTolerantSleep(_ options: DemoOptions) -> UInt64 {
    let work = MeasuredWork(name: "renderAfterTolerantSleep", measure: options.measureFile)
    var digest: UInt64 = 0
    while work.elapsedMs < 300 { digest = mixChunk(digest) }
    work.finish(result: digest)
    return digest
}

actor SessionStore {
    var digest: UInt64 = 0
    /// Serialised by the actor: its callers wait in line for it.
    @inline(never) func rebuildSession() -> (UInt64, UInt64) {
        let (start, end, d) = computeWithoutYielding(ms: 150)
        digest &+= d
        return (start, end)
    }
}

/// Runs `count` child tasks of `body` in a task group and collects their results.
func inGroup<T: Sendable>(_ count: Int, _ body: @escaping @Sendable () async -> T) async -> [T] {
    await withTaskGroup(of: T.self) { group in
        for _ in 0..<count { group.addTask(operation: body) }
        var results: [T] = []
        for await result in group { results.append(result) }
        return results
    }
}

/// The spell during which every one of `spans` ran: the latest start to the earliest end.
func spell(_ spans: [(UInt64, UInt64)]) -> (UInt64, UInt64) {
    (spans.map(\.0).max() ?? 0, spans.map(\.1).min() ?? 0)
}

func record(_ name: String, _ span: (UInt64, UInt64), _ options: DemoOptions) {
    let ms = span.1 > span.0 ? Double(span.1 - span.0) / 1e6 : 0
    appendMeasureLine("\(name) \(span.0) \(span.1) \(ms)", to: options.measureFile)
}

@main struct AsyncPoolDemo {
    static func main() async {
        let options = DemoOptions(CommandLine.arguments)
        startLibraryModeIfAsked(options) // --library REPORT.json: the HangWatch library instead of `hangwatch run`
        var width = ProcessInfoLite.activeProcessorCount
        if let i = CommandLine.arguments.firstIndex(of: "--threads"), i + 1 < CommandLine.arguments.count,
           let n = Int(CommandLine.arguments[i + 1]) { width = n }

        // 1. Many tiny jobs: the pool is never free for long, but no job is long.
        var tiny: UInt64 = 0
        for _ in 0..<20 {
            tiny &+= await inGroup(1000) { mixChunk(7) }.reduce(0, &+)
        }
        try? await Task.sleep(nanoseconds: 200_000_000)

        // 2. Every pool thread blocked in a synchronous call; a request that
        // arrives meanwhile (from the main queue) waits for a thread.
        DispatchQueue.main.asyncAfter(deadline: .now() + .milliseconds(200)) {
            let enqueued = monotonicNs()
            Task.detached { record("queued-request", (enqueued, monotonicNs()), options) }
        }
        let blocked = await inGroup(width) { blockInSynchronousAPI(ms: 400) }
        record("pool-blocked", spell(blocked), options)
        try? await Task.sleep(nanoseconds: 200_000_000)

        // 3. Every pool thread computing.
        let busy = await inGroup(width) { () -> (UInt64, UInt64) in
            let (start, end, digest) = computeWithoutYielding(ms: 350)
            if digest == 42 { print("unlikely") }
            return (start, end)
        }
        record("pool-cpu", spell(busy), options)
        try? await Task.sleep(nanoseconds: 200_000_000)

        // 4. One long request on an otherwise free pool.
        let response = await Task.detached { renderLargeResponse(options) }.value
        try? await Task.sleep(nanoseconds: 200_000_000)

        // 5. Callers piling up on an actor.
        let store = SessionStore()
        let calls = await inGroup(3) { await store.rebuildSession() }
        for (i, call) in calls.sorted(by: { $0.0 < $1.0 }).enumerated() { record("rebuildSession-\(i)", call, options) }
        try? await Task.sleep(nanoseconds: 100_000_000)

        // 6. A request resumed by a timer source: a sleep with a tolerance, then 300 ms of work.
        let resumed = await Task.detached { () -> UInt64 in
            try? await Task.sleep(for: .milliseconds(20), tolerance: .milliseconds(5), clock: .continuous)
            return renderAfterTolerantSleep(options)
        }.value
        try? await Task.sleep(nanoseconds: 100_000_000)
        if tiny == 42 || response == 42 || resumed == 42 { print("unlikely") }
    }
}

/// The CPUs this process may run on, as libdispatch sizes its pool.
enum ProcessInfoLite {
    static var activeProcessorCount: Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }
}
