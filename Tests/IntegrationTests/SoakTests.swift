import Foundation
import HangWatchTestSupport
import Testing

extension Integration {
    /// The 40-second version of `Scripts/soak.sh` (issue 8; 60 s until 2026-12-04, cut
    /// to keep CI under 15 minutes: the 10-minute run is in BENCHMARKS.md): a program churning
    /// threads, fork/exec, dlopen/dlclose, malloc and signals, with real hangs
    /// in its main loop, sampled at 1 kHz.
    @Suite struct Soak {
        @Test func fortySecondSoak() throws {
            let script = TestPaths.packageRoot.appendingPathComponent("Scripts/soak.sh").path
            let result = try ProcessRunner.run("/bin/sh", [script, "40"], environment: ["HANGWATCH": TestPaths.hangwatch],
                                               timeout: 240)
            let lines = result.stdout.split(separator: "\n").map(String.init)
            func figure(_ label: String) -> Int? {
                lines.first { $0.hasPrefix(label + ": ") }
                    .flatMap { Int($0.dropFirst(label.count + 2).split(separator: " ").first ?? "") }
            }
            let summary = result.stdout + result.stderr.suffix(400)
            #expect(figure("host crashes") == 0, "\(summary)")
            #expect(figure("unexpected EINTR") == 0, "\(summary)")
            #expect(figure("phantom hangs") == 0, "\(summary)")
            #expect(figure("lost hangs") == 0, "\(summary)")
            #expect(result.status == 0, "\(summary)")
        }
    }
}
