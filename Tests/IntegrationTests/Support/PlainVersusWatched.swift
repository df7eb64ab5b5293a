import Foundation
import HangWatchTestSupport

/// What a Tests/wrappers program printed: one line per check,
/// `<check> key=value ...`, and `info <what> <n>` lines about the run itself.
struct Observations {
    /// The checks in the order printed, each with its values by key.
    var checks: [(name: String, values: [String: String])] = []
    var info: [String: Int] = [:]

    init(_ stdout: String) {
        for line in stdout.split(separator: "\n") {
            let words = line.split(separator: " ").map(String.init)
            guard let first = words.first else { continue }
            if first == "info", words.count == 3 {
                info[words[1]] = Int(words[2])
                continue
            }
            var values: [String: String] = [:]
            for word in words.dropFirst() {
                let pair = word.split(separator: "=", maxSplits: 1).map(String.init)
                if pair.count == 2 { values[pair[0]] = pair[1] }
            }
            checks.append((first, values))
        }
    }

    /// Differences from `plain`: values of keys ending in "ms" may differ by
    /// `toleranceMs` (`timing` lists those that do not), every other value
    /// must be equal (`exact`).
    func differences(from plain: Observations, toleranceMs: Double) -> (exact: [String], timing: [String]) {
        guard checks.map(\.name) == plain.checks.map(\.name) else {
            return (["checks differ: plain \(plain.checks.map(\.name)), watched \(checks.map(\.name))"], [])
        }
        var exact: [String] = [], timing: [String] = []
        for (mine, theirs) in zip(checks, plain.checks) {
            for key in Set(mine.values.keys).union(theirs.values.keys).sorted() {
                let a = mine.values[key] ?? "-", b = theirs.values[key] ?? "-"
                let line = "\(mine.name) \(key): plain \(b), watched \(a)"
                if key.hasSuffix("ms"), let x = Double(a), let y = Double(b) {
                    if abs(x - y) > toleranceMs { timing.append(line) }
                } else if a != b {
                    exact.append(line)
                }
            }
        }
        return (exact, timing)
    }
}

/// One C program from Tests/wrappers, run plain and under `hangwatch run`.
struct PlainVersusWatched {
    var plain: Observations
    var watched: Observations
    var watchedResult: ProcessResult

    static func run(_ source: String, _ args: [String] = [], hangwatchArgs: [String] = [],
                    timeout: TimeInterval = 60) throws -> PlainVersusWatched {
        let scratch = try TestPaths.scratch()
        let path = TestPaths.packageRoot.appendingPathComponent("Tests/wrappers/\(source)").path
        let name = (source as NSString).deletingPathExtension
        let program = try ProcessRunner.compileC(path, into: scratch, name: name)
        // Side by side, not one after the other: these programs spend their
        // time in timed waits, so the pair takes the time of one run (about
        // 15 s less per pass of WrapperSafety). The watched one also has the
        // reader beside it; a timing difference is retried (see `compare`).
        let report = scratch.appendingPathComponent("report.txt").path
        let (plain, watched) = try sideBySide({ try ProcessRunner.run(program, args, timeout: timeout) }, {
            try ProcessRunner.run(TestPaths.hangwatch, ["run", "-o", report] + hangwatchArgs + ["--", program] + args,
                                  timeout: timeout)
        })
        guard plain.status == 0 else { throw TestFailure("\(name) failed plain: \(plain.status) \(plain.stderr)") }
        return PlainVersusWatched(plain: Observations(plain.stdout), watched: Observations(watched.stdout),
                                  watchedResult: watched)
    }

    /// Every difference between the two runs (see Observations.differences).
    func differences(toleranceMs: Double) -> (exact: [String], timing: [String]) {
        watched.differences(from: plain, toleranceMs: toleranceMs)
    }

    /// Runs the pair until its timings agree, at most `attempts` times. On a
    /// shared 2-core VM either run can be descheduled for 100 ms and more;
    /// the defects these programs catch are deterministic and show in every
    /// run. A difference in any exact value (results, errno, flags) fails at
    /// once. Returns the last run and its differences.
    static func compare(_ source: String, _ args: [String] = [], hangwatchArgs: [String] = [], toleranceMs: Double,
                        attempts: Int = 3) throws -> (run: PlainVersusWatched, differences: [String]) {
        var last: (run: PlainVersusWatched, differences: [String])?
        for _ in 0..<attempts {
            let run = try PlainVersusWatched.run(source, args, hangwatchArgs: hangwatchArgs)
            let found = run.differences(toleranceMs: toleranceMs)
            last = (run, found.exact + found.timing)
            if run.watchedResult.status != 0 || !found.exact.isEmpty || found.timing.isEmpty { break }
        }
        guard let last else { throw TestFailure("no attempt ran") }
        return last
    }
}

