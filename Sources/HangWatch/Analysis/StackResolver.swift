/// Turns an unwound sample into root-first frames for the call tree. The
/// agent's wait wrappers are replaced by the libc call they stand for, so a
/// blocked `usleep` reads as `usleep` under the function that called it.
struct StackResolver {
    let run: CapturedRun
    let symbolicator: Symbolicator
    private let agentRanges: [ClosedRange<UInt64>]

    init(run: CapturedRun, symbolicator: Symbolicator) {
        self.run = run
        self.symbolicator = symbolicator
        agentRanges = run.modules.filter { run.agentModuleStarts.contains($0.start) && $0.end > $0.start }
            .map { $0.start...($0.end - 1) }
    }

    private func inAgent(_ pc: UInt64) -> Bool { agentRanges.contains { $0.contains(pc) } }

    func resolve(_ sample: CapturedSample) -> WeightedStack {
        var leaf: Frame?
        if sample.source == .blockedWrapper {
            leaf = Frame(symbol: CallNames.name(of: sample.call), image: CallNames.libcImage)
        }
        // The agent's own frames (wait wrappers, main-queue trampolines) are
        // bookkeeping, not the program's work: leave them out.
        var frames: [Frame] = sample.pcs.indices.reversed().compactMap { i in
            let pc = sample.pcs[i]
            if inAgent(pc) { return nil }
            // Only the exact interrupted pc (index 0) is not a return address.
            return symbolicator.symbolicate(pc: pc, isReturnAddress: i != 0)
        }
        if sample.truncated || frames.isEmpty {
            frames.insert(Frame(symbol: "<stack not fully captured>", image: ""), at: 0)
        }
        if let leaf { frames.append(leaf) }
        return WeightedStack(frames: frames, weight: sample.weight)
    }
}
