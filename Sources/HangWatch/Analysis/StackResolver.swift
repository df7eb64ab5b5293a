/// Turns an unwound sample into root-first frames for the call tree. The
/// agent's wait wrappers are replaced by the libc call they stand for, so a
/// blocked `usleep` reads as `usleep` under the function that called it.
struct StackResolver {
    let run: CapturedRun
    let symbolicator: Symbolicator
    /// Function sources to attach to frames (`--source-lines`); empty otherwise.
    var sources: [FunctionStart: String] = [:]
    private let agentRanges: [ClosedRange<UInt64>]

    init(run: CapturedRun, symbolicator: Symbolicator) {
        self.run = run
        self.symbolicator = symbolicator
        agentRanges = run.modules.filter { run.agentModuleStarts.contains($0.start) && $0.end > $0.start }
            .map { $0.start...($0.end - 1) }
    }

    private func inAgent(_ pc: UInt64) -> Bool { agentRanges.contains { $0.contains(pc) } }

    /// The program's own pcs of a sample, leaf first, each with whether it is
    /// a return address (all but the exact interrupted pc at index 0). The
    /// agent's frames (wait wrappers, main-queue trampolines) are bookkeeping,
    /// not the program's work: they are left out.
    private func programPCs(_ sample: CapturedSample) -> [(pc: UInt64, isReturnAddress: Bool)] {
        sample.pcs.indices.compactMap { i in
            let pc = sample.pcs[i]
            return inAgent(pc) ? nil : (pc, i != 0)
        }
    }

    /// The functions the frames of `samples` belong to, for looking up all
    /// their sources in one batch before any stack is resolved.
    func functionStarts(in samples: [CapturedSample]) -> Set<FunctionStart> {
        var starts = Set<FunctionStart>()
        for sample in samples {
            for (pc, isReturnAddress) in programPCs(sample) {
                if let start = symbolicator.functionStart(pc: pc, isReturnAddress: isReturnAddress) {
                    starts.insert(start)
                }
            }
        }
        return starts
    }

    func resolve(_ sample: CapturedSample) -> WeightedStack {
        var leaf: Frame?
        if sample.source == .blockedWrapper {
            leaf = Frame(symbol: CallNames.name(of: sample.call), image: CallNames.libcImage)
        }
        var frames: [Frame] = programPCs(sample).reversed().map { pc, isReturnAddress in
            var frame = symbolicator.symbolicate(pc: pc, isReturnAddress: isReturnAddress)
            if !sources.isEmpty, let start = symbolicator.functionStart(pc: pc, isReturnAddress: isReturnAddress) {
                frame.source = sources[start]
            }
            return frame
        }
        if sample.truncated || frames.isEmpty {
            frames.insert(Frame(symbol: "<stack not fully captured>", image: ""), at: 0)
        }
        if let leaf { frames.append(leaf) }
        return WeightedStack(frames: frames, weight: sample.weight)
    }
}
