// Following the weight down a call tree: the first thing a reader of a hang wants.

import HangWatchModel

extension CallTreeBuilder {
    /// The root, then at each level the heaviest child, down to a leaf.
    ///
    /// This is the path Time Profiler expands by default; for a hang it usually
    /// ends in the function that was actually burning the time (or waiting).
    /// Ties go to the same child the renderer lists first, so the two agree.
    package static func heaviestPath(of root: CallTreeNode) -> [CallTreeNode] {
        var path = [root]
        var current = root
        while let next = current.children.min(by: heavierFirst) {
            path.append(next)
            current = next
        }
        return path
    }
}
