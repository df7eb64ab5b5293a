import Foundation
import HangWatch
import HangWatchTestSupport
import Testing

extension Integration {
    /// Issue 11: unwinding in the hangwatch process makes no system call per
    /// sample. libunwind takes its cache lock with every signal blocked, two
    /// rt_sigprocmask calls per frame (72 per 35-frame sample); the hangwatch
    /// executable answers those without a system call (CSupport/cli).
    @Suite struct UnwindSyscalls {
        /// perf can count the tracepoint here (root or perf_event_paranoid, tracefs, no seccomp).
        static let perfCounts: Bool = {
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/perf") else { return false }
            let probe = try? ProcessRunner.run("/usr/bin/perf", ["stat", "-e", "syscalls:sys_enter_rt_sigprocmask", "--", "/bin/true"])
            return probe?.status == 0
        }()

        @Test(.enabled(if: perfCounts, "perf cannot count syscalls:sys_enter_rt_sigprocmask here"))
        func samplesAreUnwoundWithoutSignalMaskSyscalls() throws {
            let scratch = try TestPaths.scratch()
            let program = try ProcessRunner.compileBench("cpu_hang", into: scratch)
            let iterations = try ProcessRunner.calibratedIterations(program, ms: 1000)
            let counts = scratch.appendingPathComponent("perf-stat.txt").path
            let report = scratch.appendingPathComponent("report.json").path
            // perf counts the tracepoint for hangwatch and everything it starts (the
            // program and the agent make a handful).
            let result = try ProcessRunner.run("/usr/bin/perf", [
                "stat", "-x,", "-o", counts, "-e", "syscalls:sys_enter_rt_sigprocmask", "--",
                TestPaths.hangwatch, "run", "-o", report, "--format", "json", "--",
                program, "--iters", "\(iterations)", "--depth", "30", "--variants", "--out", "/dev/null",
            ], timeout: 120)
            #expect(result.status == 0, "\(result.stderr)")
            let line = ((try? String(contentsOfFile: counts, encoding: .utf8)) ?? "")
                .split(separator: "\n").first { $0.contains("rt_sigprocmask") } ?? ""
            let calls = Int(line.split(separator: ",").first ?? "") ?? -1
            let hangs = try JSONReport.decode(try #require(FileManager.default.contents(atPath: report))).hangs
            let samples = hangs.reduce(0) { $0 + $1.sampleCount }
            #expect(samples >= 100, "a 1 s hang sampled at 1 kHz: \(samples) samples")
            // Unwound through the 30-deep recursion to the leaf, as libunwind does with its masking.
            let symbols = hangs.first?.callTree?.allSymbols ?? []
            #expect(symbols.contains("leaf_kernel") && symbols.contains("level_a") && symbols.contains("main"), "\(symbols)")
            // Before: 72 per sample (about 72,000 here). Now: start-up and exit, a few dozen.
            #expect(calls >= 0 && calls < max(200, samples / 4), "\(calls) rt_sigprocmask calls for \(samples) samples (\(line))")
        }
    }
}
