import HangWatchAnalysis
import HangWatchCapture
import HangWatchModel
import Testing

/// The report built from samples the collector folded per distinct stack.
@Suite struct FoldedSampleReports {
    /// Folding is invisible in the report: the same ticks, folded or one by
    /// one, give byte-identical JSON.
    @Test func foldedSamplesGiveTheSameReport() throws {
        var unfolded = CapturedRun()
        let shapes: [[UInt64]] = [[0x10, 0x20, 0x30], [0x11, 0x20, 0x30], [0x12, 0x21, 0x30], [0x10, 0x20, 0x30, 0x40]]
        let ids = shapes.map { unfolded.stacks.intern($0) }
        #expect(ids == [0, 1, 2, 3])
        let key = BusyKey(tid: 7, seq: 3, generation: 1)
        unfolded.threads[7] = CapturedThread(tid: 7, name: "main", role: .mainThread)
        unfolded.busyPeriods[key] = BusyPeriod(tid: 7, seq: 3, generation: 1, osTid: 7, startNs: 1_000_000,
                                               endNs: 1_000_000 + 400_000_000, isLaunch: false)
        var folded = unfolded
        var folds = SampleFolds()
        var ticks: [CapturedSample] = []
        for i in 0..<400 {
            let pattern = [0, 0, 1, 0, 2, 3, 0, 1][i % 8]
            let blocked = i % 50 == 49
            ticks.append(CapturedSample(timeNs: UInt64(i), source: blocked ? .blockedWrapper : .signal,
                                        call: blocked ? .interposedPoll : .none, stack: ids[pattern],
                                        weight: 1, truncated: i % 97 == 0))
        }
        unfolded.samples[key] = ticks
        for tick in ticks { folds.add(tick, to: key, in: &folded.samples) }
        #expect((folded.samples[key]?.count ?? 0) < 12)
        #expect(folded.samples[key]?.reduce(0) { $0 + $1.weight } == 400)

        let facts = ProcessFacts(pid: 7, executable: "/bin/demo", arguments: [], exitCode: 0, signal: nil,
                                 startNs: 0, endNs: 2_000_000_000)
        let builder = ReportBuilder(config: CaptureConfig())
        let one = try JSONReport.encode(builder.build(run: unfolded, process: facts))
        let other = try JSONReport.encode(builder.build(run: folded, process: facts))
        #expect(one == other)
        #expect(try JSONReport.decode(one).hangs.first?.sampleCount == 400)
    }
}
