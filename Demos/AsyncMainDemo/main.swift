// async @main demo: after the first suspension, MainActor jobs run on
// libdispatch workers. rebuildSearchIndex() stalls the MainActor ~380 ms.
// Usage: AsyncMainDemo [--measure FILE] [--library REPORT.json]
import DemoSupport
#if canImport(Glibc)
import Glibc
#endif

@MainActor @inline(never) func rebuildSearchIndex(_ options: DemoOptions) -> UInt64 {
    let work = MeasuredWork(name: "rebuildSearchIndex", measure: options.measureFile)
    var digest: UInt64 = 0
    while work.elapsedMs < 380 { digest = mixChunk(digest) }
    work.finish(result: digest)
    return digest
}

@main struct AsyncMainDemo {
    static func main() async {
        let options = DemoOptions(CommandLine.arguments)
        startLibraryModeIfAsked(options)
        try? await Task.sleep(nanoseconds: 200_000_000)
        let digest = rebuildSearchIndex(options)
        try? await Task.sleep(nanoseconds: 200_000_000)
        if digest == 42 { print("unlikely") }
    }
}
