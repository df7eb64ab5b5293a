// Symbolicated stacks: what the call-tree builder consumes.

/// One resolved stack frame.
public struct Frame: Sendable, Hashable {
    public var symbol: String
    public var image: String
    /// Where the frame's function is defined, `path:line` from its debug
    /// information (`hangwatch run --source-lines`); nil when not asked for or
    /// unknown. Per function, not per pc: every pc of one function has the
    /// same source, so it never splits a call-tree node.
    public var source: String?
    public init(symbol: String, image: String, source: String? = nil) {
        self.symbol = symbol
        self.image = image
        self.source = source
    }
}

/// One sampled stack, root (outermost caller) first, leaf last, with its weight in samples.
public struct WeightedStack: Sendable, Equatable {
    public var frames: [Frame]
    public var weight: Int
    public init(frames: [Frame], weight: Int) {
        self.frames = frames
        self.weight = weight
    }
}
