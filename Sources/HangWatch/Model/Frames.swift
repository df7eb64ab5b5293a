// Symbolicated stacks: what the call-tree builder consumes.

/// One resolved stack frame.
public struct Frame: Sendable, Hashable {
    public var symbol: String
    public var image: String
    public init(symbol: String, image: String) {
        self.symbol = symbol
        self.image = image
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
