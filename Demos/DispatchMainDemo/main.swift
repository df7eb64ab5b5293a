// dispatchMain() demo: the OS main thread parks for good and main-queue
// blocks run on libdispatch worker threads. Two blocks stall the main queue:
// importPhotos() for ~350 ms and updateBadge() for ~140 ms.
// Usage: DispatchMainDemo [--measure FILE] [--library REPORT.json]
//                         [--idle | --sync-from-thread | --sync-from-worker | --blocked-block | --handoff | --nested-sync
//                          | --first-block]
//                         [--background-ticks]
//   --idle: no work at all, exits after 3 s (what the library costs an idle queue)
//   --sync-from-thread: instead of the two blocks, a plain thread (not one of
//     libdispatch's workers) runs syncedReport() for ~300 ms through
//     DispatchQueue.main.sync while the queue is otherwise idle
//   --sync-from-worker: the same from a global queue's worker
//   --blocked-block: instead of the two blocks, one main-queue block that
//     waits ~300 ms in a blocking call (readArchive(); a slow read's stand-in)
//   --handoff: a plain thread enqueues readArchive() and at once runs
//     syncedReport() through DispatchQueue.main.sync: one stall that passes
//     from a worker to that thread
//   --nested-sync: one main-queue block runs importPhotos() inside another
//     queue's sync
//   --nested-naps: the same with napBetweenChunks(): ~300 ms of 0.3 ms of CPU
//     then usleep(300 µs), in turn; writes `naps <count> <EINTRs>` before
//     its line (a sleep a signal cut short shows there)
//   --first-block: one main-queue block, enqueued before dispatchMain(),
//     runs importPhotos() at once: the queue stalls before any probe of
//     the library can have run on it
//   --background-ticks: also a global-queue timer every 30 ms (dispatch work
//     unrelated to the main queue)
import Dispatch
import DemoSupport
#if canImport(Glibc)
import Glibc
#endif

let options = DemoOptions(CommandLine.arguments)
startLibraryModeIfAsked(options)

@inline(never) func importPhotos() {
    let work = MeasuredWork(name: "importPhotos", measure: options.measureFile)
    var digest: UInt64 = 0
    while work.elapsedMs < 350 { digest = mixChunk(digest) }
    work.finish(result: digest)
}

@inline(never) func updateBadge() {
    let work = MeasuredWork(name: "updateBadge", measure: options.measureFile)
    var digest: UInt64 = 0
    while work.elapsedMs < 140 { digest = mixChunk(digest) }
    work.finish(result: digest)
}

@inline(never) func syncedReport() {
    let work = MeasuredWork(name: "syncedReport", measure: options.measureFile)
    var digest: UInt64 = 0
    while work.elapsedMs < 300 { digest = mixChunk(digest) }
    work.finish(result: digest)
}

@inline(never) func readArchive() {
    let work = MeasuredWork(name: "readArchive", measure: options.measureFile)
    usleep(300_000) // off the CPU the whole time, as on a slow disk or socket
    work.finish(result: 0)
}

@inline(never) func napBetweenChunks() {
    let work = MeasuredWork(name: "napBetweenChunks", measure: options.measureFile)
    var naps = 0, interrupted = 0, digest: UInt64 = 0
    while work.elapsedMs < 300 {
        let until = work.elapsedMs + 0.3
        while work.elapsedMs < until { digest = mixChunk(digest) }
        if usleep(300) != 0 && errno == EINTR { interrupted += 1 }
        naps += 1
    }
    appendMeasureLine("naps \(naps) \(interrupted)", to: options.measureFile)
    work.finish(result: digest)
}

/// The sync waits behind the async block: libdispatch hands the queue from
/// the worker that ran that block straight to this thread.
func handOffFromAPlainThread() {
    var thread = pthread_t()
    let made = pthread_create(&thread, nil, { _ in
        usleep(200_000)
        DispatchQueue.main.async { readArchive() }
        DispatchQueue.main.sync { syncedReport() }
        usleep(200_000)
        exit(0)
    }, nil)
    if made != 0 { exit(2) }
}

/// A plain pthread, so that no libdispatch worker is involved in the sync.
func syncFromAPlainThread() {
    var thread = pthread_t()
    let made = pthread_create(&thread, nil, { _ in
        usleep(400_000)
        DispatchQueue.main.sync { syncedReport() }
        usleep(200_000)
        exit(0)
    }, nil)
    if made != 0 { exit(2) }
}

/// Dispatch work every 30 ms that has nothing to do with the main queue.
func backgroundTick() {
    DispatchQueue.global().asyncAfter(deadline: .now() + 0.03) { backgroundTick() }
}
if CommandLine.arguments.contains("--background-ticks") { backgroundTick() }

if CommandLine.arguments.contains("--idle") {
    DispatchQueue.main.asyncAfter(deadline: .now() + 3) { exit(0) }
} else if CommandLine.arguments.contains("--sync-from-thread") {
    syncFromAPlainThread()
} else if CommandLine.arguments.contains("--sync-from-worker") {
    DispatchQueue.global().asyncAfter(deadline: .now() + 0.4) {
        DispatchQueue.main.sync { syncedReport() }
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { exit(0) }
    }
} else if CommandLine.arguments.contains("--handoff") {
    handOffFromAPlainThread()
} else if CommandLine.arguments.contains("--nested-sync") || CommandLine.arguments.contains("--nested-naps") {
    let inner = DispatchQueue(label: "inner")
    let naps = CommandLine.arguments.contains("--nested-naps")
    DispatchQueue.main.asyncAfter(deadline: .now() + 0.2) { inner.sync { if naps { napBetweenChunks() } else { importPhotos() } } }
    DispatchQueue.main.asyncAfter(deadline: .now() + 0.75) { exit(0) }
} else if CommandLine.arguments.contains("--first-block") {
    DispatchQueue.main.async { importPhotos() }
    DispatchQueue.main.asyncAfter(deadline: .now() + 0.75) { exit(0) }
} else if CommandLine.arguments.contains("--blocked-block") {
    DispatchQueue.main.asyncAfter(deadline: .now() + 0.2) { readArchive() }
    DispatchQueue.main.asyncAfter(deadline: .now() + 0.75) { exit(0) }
} else {
    DispatchQueue.main.asyncAfter(deadline: .now() + 0.2) { importPhotos() }
    DispatchQueue.main.asyncAfter(deadline: .now() + 0.75) { updateBadge() }
    DispatchQueue.main.asyncAfter(deadline: .now() + 1.1) { exit(0) }
}
dispatchMain()
