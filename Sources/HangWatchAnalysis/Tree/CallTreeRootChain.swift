// The frames every sample passes through on its way to the interesting part.
//
// A hang on a run loop always starts _start → __libc_start_main → main →
// RunLoop.run → CFRunLoopRunSpecific → … → the timer's closure: a dozen
// levels at 100% that say nothing about this hang and push the function that
// did the work far to the right. The text view folds them into one line.

import HangWatchModel

/// A call tree split into its uninteresting root chain and the rest.
package struct RootChainSplit: Sendable, Equatable {
    /// The folded frames, outermost first: each carried the whole weight, had
    /// no self time and called only the next one. Empty when nothing was folded.
    package var folded: [Frame]
    /// The first frame shown as a row: the last frame of the chain, so the
    /// reader still sees who calls the hot function, or the whole tree.
    package var visibleRoot: CallTreeNode
}

extension CallTreeNode {
    /// Splits off the chain of nodes from the root that have all of the
    /// root's weight, exactly one child and no self time, keeping the last
    /// of them visible. Folding fewer than `minimumFolded` frames is not
    /// worth a summary line, so then nothing is folded.
    package func splittingRootChain(minimumFolded: Int = 2) -> RootChainSplit {
        var chain: [CallTreeNode] = []
        var current = self
        while current.children.count == 1, current.selfMs == 0, current.sampleCount == sampleCount,
              current.weightMs == weightMs, let only = current.children.first {
            chain.append(current)
            current = only
        }
        // `chain` holds every single-child node; the last of them stays visible.
        guard let last = chain.popLast(), chain.count >= max(1, minimumFolded) else {
            return RootChainSplit(folded: [], visibleRoot: self)
        }
        return RootChainSplit(folded: chain.map { Frame(symbol: $0.symbol, image: $0.image) }, visibleRoot: last)
    }
}
