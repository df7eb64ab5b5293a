// Where the user's own code spent hang time, with system time charged to it.

import HangWatchModel

/// One frame of the user's own code and the hang time charged to it.
package struct Hotspot: Sendable, Equatable {
    package var symbol: String
    package var image: String
    /// Self time after folding system libraries into their callers: the frame's
    /// own work plus the system calls it made (`qsort`, `usleep`, `malloc`, ...).
    package var selfMs: Double
    package var sampleCount: Int
}

package enum UserCodeHotspots {
    /// User-code frames over `trees`, heaviest first (ties by symbol, then image).
    ///
    /// Ranking by self time after hiding system libraries names the function to
    /// change: inclusive time would always name `main`, and raw self time would
    /// name `libc` internals the user cannot touch.
    package static func rank(_ trees: [CallTreeNode]) -> [Hotspot] {
        var byFrame: [Frame: Hotspot] = [:]
        for tree in trees {
            guard let folded = tree.hidingSystemFrames() else { continue }
            let msPerSample = folded.sampleCount > 0 ? folded.weightMs / Double(folded.sampleCount) : 0
            var pending = [folded]
            while let node = pending.popLast() {
                pending.append(contentsOf: node.children)
                guard SystemImages.isUserCode(node), node.selfMs > 0 else { continue }
                let key = Frame(symbol: node.symbol, image: node.image)
                var spot = byFrame[key] ?? Hotspot(symbol: node.symbol, image: node.image, selfMs: 0, sampleCount: 0)
                spot.selfMs += node.selfMs
                let samples = msPerSample > 0 ? (node.selfMs / msPerSample).rounded() : 0
                spot.sampleCount &+= samples.isFinite && samples < 1e15 ? Int(samples) : 0
                byFrame[key] = spot
            }
        }
        return byFrame.values.sorted {
            if $0.selfMs != $1.selfMs { return $0.selfMs > $1.selfMs }
            return ($0.symbol, $0.image) < ($1.symbol, $1.image)
        }
    }

    /// The function a hang "is in": following the heaviest path of the tree with
    /// system libraries hidden, the deepest user-code frame that still carries at
    /// least `share` of the tree's weight. For a timer callback that parses a
    /// document this is the parser, not `main` nor the run loop's dispatch, and
    /// not a helper the parser spends 40% in: that helper is only part of the story.
    /// Nil when the tree has no user-code frame that heavy.
    package static func owner(of tree: CallTreeNode, share: Double = 0.5) -> Frame? {
        guard let folded = tree.hidingSystemFrames(), folded.weightMs > 0 else { return nil }
        let needed = folded.weightMs * share
        var owner: Frame?
        for node in CallTreeBuilder.heaviestPath(of: folded) where node.weightMs >= needed {
            if SystemImages.isUserCode(node) { owner = Frame(symbol: node.symbol, image: node.image) }
        }
        return owner
    }
}
