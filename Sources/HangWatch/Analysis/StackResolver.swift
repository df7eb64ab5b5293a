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
        var pcs = sample.pcs[...]
        var leaf: Frame?
        if sample.source == .blockedWrapper {
            while let first = pcs.first, inAgent(first) { pcs = pcs.dropFirst() }
            leaf = Frame(symbol: CallNames.name(of: sample.call), image: CallNames.libcImage)
        }
        let firstIndex = pcs.startIndex
        var frames: [Frame] = pcs.indices.reversed().map { i in
            // Only an exact interrupted pc is not a return address.
            symbolicator.symbolicate(pc: pcs[i], isReturnAddress: !(i == firstIndex && leaf == nil && i == 0))
        }
        if sample.truncated || frames.isEmpty {
            frames.insert(Frame(symbol: "<stack not fully captured>", image: ""), at: 0)
        }
        if let leaf { frames.append(leaf) }
        return WeightedStack(frames: frames, weight: sample.weight)
    }
}
