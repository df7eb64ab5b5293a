// How big a call tree is: what the JSON writer checks before it cuts deep trees.

extension CallTreeNode {
    /// Number of nodes in this subtree, itself included. Iterative, so a runaway
    /// recursion captured in the tree cannot exhaust the stack while counting it.
    public var nodeCount: Int {
        var count = 0
        var pending: [CallTreeNode] = [self]
        while let node = pending.popLast() {
            count += 1
            pending.append(contentsOf: node.children)
        }
        return count
    }

    /// Number of levels below and including this node (a leaf has depth 1).
    public var depth: Int {
        var deepest = 0
        var pending: [(node: CallTreeNode, level: Int)] = [(self, 1)]
        while let (node, level) = pending.popLast() {
            deepest = max(deepest, level)
            for child in node.children { pending.append((child, level + 1)) }
        }
        return deepest
    }
}
