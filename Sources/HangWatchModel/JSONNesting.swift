// A cheap pre-check of JSON nesting depth.

enum JSONNesting {
    /// The deepest `{`/`[` nesting in `data`, ignoring brackets inside strings.
    /// Stops counting once past `limit`: the caller only needs to know it is too deep.
    ///
    /// Foundation's parser rejects deep input with a generic "not valid JSON";
    /// checking first gives the user the real reason, and guarantees the
    /// recursive Decodable of `CallTreeNode` never sees an unbounded depth.
    static func maxDepth(of data: [UInt8], limit: Int) -> Int {
        var depth = 0
        var deepest = 0
        var inString = false
        var escaped = false
        for byte in data {
            if inString {
                if escaped { escaped = false }
                else if byte == UInt8(ascii: "\\") { escaped = true }
                else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                deepest = max(deepest, depth)
                if deepest > limit { return deepest }
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth = max(0, depth - 1)
            default: break
            }
        }
        return deepest
    }
}
