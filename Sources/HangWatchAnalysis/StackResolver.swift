import HangWatchCapture
import HangWatchModel
import HangWatchSymbols

/// Turns an unwound sample into root-first frames for the call tree. The
/// agent's wait wrappers are replaced by the libc call they stand for, so a
/// blocked `usleep` reads as `usleep` under the function that called it.
/// Each distinct stack is symbolicated once, however many samples share it.
struct StackResolver {
    let run: CapturedRun
    let symbolicator: Symbolicator
    /// Function sources to attach to frames (`--source-lines`); empty otherwise.
    var sources: [FunctionStart: String] = [:] {
        didSet { resolved.frames = [:] }
    }
    private let agentRanges: [ClosedRange<UInt64>]
    /// The program's frames of each stack already resolved, by stack index.
    private let resolved = ResolvedStacks()

    init(run: CapturedRun, symbolicator: Symbolicator) {
        self.run = run
        self.symbolicator = symbolicator
        agentRanges = run.modules.filter { run.agentModuleStarts.contains($0.start) && $0.end > $0.start }
            .map { $0.start...($0.end - 1) } + run.wrapperCode
    }

    /// The root of a sample whose copied stack ended before the stack did.
    static let notFullyCaptured = "<stack not fully captured>"
    /// The root of a sample whose unwind stopped short of the thread's entry
    /// in a whole copy: its outermost frame is not the thread's root.
    static let notFullyUnwound = "<stack not fully unwound>"

    private func inAgent(_ pc: UInt64) -> Bool { agentRanges.contains { $0.contains(pc) } }

    /// The program's own pcs of a sample, leaf first, each with whether it is
    /// a return address (all but the exact interrupted pc at index 0). The
    /// agent's frames (wait wrappers, main-queue trampolines) are bookkeeping,
    /// not the program's work: they are left out.
    private func programPCs(_ stack: Int32) -> [(pc: UInt64, isReturnAddress: Bool)] {
        let pcs = run.stacks[stack]
        return pcs.indices.compactMap { i in
            let pc = pcs[i]
            return inAgent(pc) ? nil : (pc, i != 0)
        }
    }

    /// Reads, in one pass per module, the symbols of every stack's program pcs
    /// (`Symbolicator.prepare`): the report names them all from there.
    func prepareSymbols() {
        var pcs: [(pc: UInt64, isReturnAddress: Bool)] = []
        for stack in 0..<Int32(clamping: run.stacks.count) { pcs += programPCs(stack) }
        symbolicator.prepare(pcs)
    }

    /// The functions the frames of `samples` belong to, for looking up all
    /// their sources in one batch before any stack is resolved.
    func functionStarts(in samples: [CapturedSample]) -> Set<FunctionStart> {
        var starts = Set<FunctionStart>()
        for stack in Set(samples.map(\.stack)) {
            for (pc, isReturnAddress) in programPCs(stack) {
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
            leaf = Frame(symbol: sample.call.name, image: BlockedCall.libcImage)
        }
        var frames = programFrames(sample.stack)
        if sample.truncated {
            frames.insert(Frame(symbol: Self.notFullyCaptured, image: ""), at: 0)
        } else if sample.unwindStopped {
            frames.insert(Frame(symbol: Self.notFullyUnwound, image: ""), at: 0)
        } else if frames.isEmpty {
            frames.insert(Frame(symbol: Self.notFullyCaptured, image: ""), at: 0)
        }
        if let leaf { frames.append(leaf) }
        return WeightedStack(frames: frames, weight: sample.weight, waiting: sample.source != .signal)
    }

    /// Root-first frames of the program's pcs of `stack`, resolved once.
    private func programFrames(_ stack: Int32) -> [Frame] {
        if let frames = resolved.frames[stack] { return frames }
        let frames: [Frame] = programPCs(stack).reversed().map { pc, isReturnAddress in
            var frame = symbolicator.symbolicate(pc: pc, isReturnAddress: isReturnAddress)
            if !sources.isEmpty, let start = symbolicator.functionStart(pc: pc, isReturnAddress: isReturnAddress) {
                frame.source = sources[start]
            }
            return frame
        }
        resolved.frames[stack] = frames
        return frames
    }
}

/// Memo of resolved stacks; a class so that `resolve` stays a plain function
/// the report builder can map samples through.
private final class ResolvedStacks {
    var frames: [Int32: [Frame]] = [:]
}
