// Cooperative-pool cost for `make bench` (Bench/pool_costs.sh):
//   BenchPoolJobs [--jobs N]     N empty child tasks in task groups of 1,000,
//                                timed in-process: `wall-ms=` and `cpu-ms=` of the run;
//   BenchPoolJobs --yields N     one task yielding N times: N jobs one after another,
//                                on one thread at a time (the steadiest per-job figure);
//   BenchPoolJobs --idle SECONDS a pool woken every 100 ms by Task.sleep, doing
//                                nothing else: the process's `cpu-ms=` over that time.
#if canImport(Glibc)
import Glibc
#endif

func monotonicMs() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) * 1e3 + Double(ts.tv_nsec) / 1e6
}

func processCPUMs() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) * 1e3 + Double(ts.tv_nsec) / 1e6
}

@inline(never) func emptyJob(_ i: Int) -> Int { i }

@main struct BenchPoolJobs {
    static func main() async {
        let args = CommandLine.arguments
        func value(_ flag: String) -> Int? {
            args.firstIndex(of: flag).flatMap { $0 + 1 < args.count ? Int(args[$0 + 1]) : nil }
        }
        if let seconds = value("--idle") {
            let cpu0 = processCPUMs()
            for _ in 0..<(seconds * 10) { await Task.detached { try? await Task.sleep(nanoseconds: 100_000_000) }.value }
            print("idle-s=\(seconds) cpu-ms=\(processCPUMs() - cpu0)")
            return
        }
        if let yields = value("--yields") {
            let wall0 = monotonicMs()
            await Task.detached { for _ in 0..<yields { await Task.yield() } }.value
            print("yields=\(yields) wall-ms=\(monotonicMs() - wall0)")
            return
        }
        let jobs = value("--jobs") ?? 1_000_000
        let groups = max(1, jobs / 1000)
        let wall0 = monotonicMs(), cpu0 = processCPUMs()
        var checksum = 0
        for _ in 0..<groups {
            checksum &+= await withTaskGroup(of: Int.self) { group in
                for i in 0..<1000 { group.addTask { emptyJob(i) } }
                var sum = 0
                for await v in group { sum &+= v }
                return sum
            }
        }
        print("jobs=\(groups * 1000) wall-ms=\(monotonicMs() - wall0) cpu-ms=\(processCPUMs() - cpu0) checksum=\(checksum)")
    }
}
