// Time Profiler's call-tree views: hide system libraries, focus on a symbol.

import HangWatchModel

extension CallTreeNode {
    /// The tree with system-library frames folded into their callers
    /// (Time Profiler's "Hide System Libraries").
    ///
    /// A system frame's own time becomes its caller's self time, and the user
    /// code it calls back into (a `qsort` comparator) moves up under that
    /// caller. The outermost frame of each stack stays even when it is a system
    /// frame: there is no caller to charge it to. Inclusive weights of the
    /// remaining frames do not change. Nil when the tree holds no usable sample.
    package func hidingSystemFrames() -> CallTreeNode? {
        guard var parts = CallTreeStacks(self) else { return nil }
        parts.stacks = parts.stacks.map { stack in
            var frames: [Frame] = []
            frames.reserveCapacity(stack.frames.count)
            for (depth, frame) in stack.frames.enumerated()
            where depth == 0 || !SystemImages.contains(frame.image) {
                frames.append(frame)
            }
            return WeightedStack(frames: frames, weight: stack.weight, waiting: stack.waiting)
        }
        return parts.tree()
    }

    /// Only the subtrees rooted at frames whose symbol contains `symbol`
    /// (Time Profiler's "Focus on Subtree", applied to every match).
    ///
    /// Each stack is cut above its outermost matching frame and dropped when
    /// no frame matches, so the same function reached from several callers
    /// becomes one tree with their weight merged. Nil when nothing matches.
    package func focused(on symbol: String) -> CallTreeNode? {
        guard !symbol.isEmpty, var parts = CallTreeStacks(self) else { return nil }
        parts.stacks = parts.stacks.compactMap { stack in
            guard let first = stack.frames.firstIndex(where: { $0.symbol.contains(symbol) }) else { return nil }
            return WeightedStack(frames: Array(stack.frames[first...]), weight: stack.weight, waiting: stack.waiting)
        }
        return parts.tree()
    }
}
