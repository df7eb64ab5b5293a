// dispatchMain() demo: the OS main thread parks for good and main-queue
// blocks run on libdispatch worker threads. Two blocks stall the main queue:
// importPhotos() for ~350 ms and updateBadge() for ~140 ms.
// Usage: DispatchMainDemo [--measure FILE] [--library REPORT.json]
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

DispatchQueue.main.asyncAfter(deadline: .now() + 0.2) { importPhotos() }
DispatchQueue.main.asyncAfter(deadline: .now() + 0.75) { updateBadge() }
DispatchQueue.main.asyncAfter(deadline: .now() + 1.1) { exit(0) }
dispatchMain()
