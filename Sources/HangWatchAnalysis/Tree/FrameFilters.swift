// Stack rewrites applied before building a tree.

import HangWatchModel

/// Optional clean-ups of sampled stacks.
package enum FrameFilters {
    /// Collapses direct recursion: consecutive identical frames become one.
    ///
    /// A recursive function otherwise produces a staircase as deep as the
    /// recursion, pushing the interesting callee far off the right edge and
    /// splitting its weight across every depth it was sampled at.
    /// Indirect recursion (a → b → a) is left alone: collapsing it would invent calls.
    package static func collapsingRecursion(_ stacks: [WeightedStack]) -> [WeightedStack] {
        stacks.map { stack in
            var frames: [Frame] = []
            frames.reserveCapacity(stack.frames.count)
            for frame in stack.frames where frames.last != frame {
                frames.append(frame)
            }
            return WeightedStack(frames: frames, weight: stack.weight, waiting: stack.waiting)
        }
    }
}
