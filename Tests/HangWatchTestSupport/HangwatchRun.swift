import Foundation
import HangWatchModel

/// One `hangwatch run` of a demo, with the JSON report and the program's own
/// measurements of its work.
package struct HangwatchRun {
    package var result: ProcessResult
    package var report: Report
    package var measured: [MeasuredWork]
    package var scratch: URL
    /// The most CPU time the VM lost on one CPU while the program ran (`StolenTime`).
    package var stolenMs: Double = 0

    /// Runs `hangwatch run [hangwatchArgs] -o report.json --format json -- program programArgs --measure FILE`.
    package static func run(_ program: String, _ programArgs: [String] = [], hangwatchArgs: [String] = [],
                    measure: Bool = true, timeout: TimeInterval = 60, scratch given: URL? = nil,
                    whileRunning: ((Process) -> Void)? = nil) throws -> HangwatchRun {
        let scratch = try given ?? TestPaths.scratch()
        let reportPath = scratch.appendingPathComponent("report.json").path
        let measurePath = scratch.appendingPathComponent("measure.txt").path
        var args = ["run"] + hangwatchArgs + ["-o", reportPath, "--format", "json", "--", program] + programArgs
        if measure { args += ["--measure", measurePath] }
        let stealBefore = StolenTime.perCPU()
        let result = try ProcessRunner.run(TestPaths.hangwatch, args, timeout: timeout, whileRunning: whileRunning)
        let stolenMs = StolenTime.maxMs(from: stealBefore, to: StolenTime.perCPU())
        guard let data = FileManager.default.contents(atPath: reportPath) else {
            throw TestFailure("no report written; status \(result.status), stderr: \(result.stderr)")
        }
        let report = try JSONReport.decode(data)
        let measured = measure ? MeasuredWork.parse(file: measurePath) : []
        return HangwatchRun(result: result, report: report, measured: measured, scratch: scratch, stolenMs: stolenMs)
    }

    /// Runs a demo that watches itself with the HangWatch library (`--library REPORT.json`),
    /// with `environment` added to the test's own.
    package static func library(_ program: String, _ programArgs: [String] = [], environment: [String: String]? = nil,
                                timeout: TimeInterval = 60,
                                whileRunning: ((Process) -> Void)? = nil) throws -> HangwatchRun {
        let scratch = try TestPaths.scratch()
        let reportPath = scratch.appendingPathComponent("library-report.json").path
        let measurePath = scratch.appendingPathComponent("measure.txt").path
        let stealBefore = StolenTime.perCPU()
        let result = try ProcessRunner.run(program, programArgs + ["--library", reportPath, "--measure", measurePath],
                                           environment: environment, timeout: timeout, whileRunning: whileRunning)
        let stolenMs = StolenTime.maxMs(from: stealBefore, to: StolenTime.perCPU())
        guard let data = FileManager.default.contents(atPath: reportPath) else {
            throw TestFailure("the library wrote no report; status \(result.status), stderr: \(result.stderr)")
        }
        return HangwatchRun(result: result, report: try JSONReport.decode(data),
                            measured: MeasuredWork.parse(file: measurePath), scratch: scratch, stolenMs: stolenMs)
    }

    /// The tolerance is widened by the time the VM stole during the run (`StolenTime`).
    package func hang(startingNear work: MeasuredWork, toleranceMs: Double = 20) -> Hang? {
        report.hangs.min { abs($0.durationMs - work.durationMs) < abs($1.durationMs - work.durationMs) }
            .flatMap { abs($0.durationMs - work.durationMs) <= toleranceMs + stolenMs ? $0 : nil }
    }

    package func work(_ name: String) -> [MeasuredWork] { measured.filter { $0.name == name } }
}

/// One line `<name> <startNs> <endNs> <durationMs>` the demos write around each piece of work.
package struct MeasuredWork: Equatable {
    package var name: String
    package var startNs: UInt64
    package var endNs: UInt64
    package var durationMs: Double
    /// Extra lines such as `usleep-result <ret> <errno> <actualMs>`, by name.
    package var fields: [String]

    package static func parse(file: String) -> [MeasuredWork] {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let f = line.split(separator: " ").map(String.init)
            guard f.count >= 2 else { return nil }
            if f.count == 4, let s = UInt64(f[1]), let e = UInt64(f[2]), let d = Double(f[3]) {
                return MeasuredWork(name: f[0], startNs: s, endNs: e, durationMs: d, fields: f)
            }
            return MeasuredWork(name: f[0], startNs: 0, endNs: 0, durationMs: 0, fields: f)
        }
    }
}

extension CallTreeNode {
    /// The chain of symbols from the root following the heaviest child.
    package var heaviestPathSymbols: [String] {
        var path = [symbol]
        var node = self
        while let next = node.children.max(by: { $0.weightMs < $1.weightMs }) {
            path.append(next.symbol)
            node = next
        }
        return path
    }

    /// Every symbol in the tree.
    package var allSymbols: [String] { [symbol] + children.flatMap(\.allSymbols) }

    /// The weight of every path through a node whose symbol contains `text`
    /// (the outermost such nodes, summed: a function reached two ways counts once per sample).
    package func weightMs(under text: String) -> Double {
        symbol.contains(text) ? weightMs : children.reduce(0) { $0 + $1.weightMs(under: text) }
    }

    /// First node (depth-first) whose symbol contains `text`.
    package func first(containing text: String) -> CallTreeNode? {
        if symbol.contains(text) { return self }
        for child in children { if let hit = child.first(containing: text) { return hit } }
        return nil
    }
}
