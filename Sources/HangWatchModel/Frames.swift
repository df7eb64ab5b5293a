// Symbolicated stacks: what the call-tree builder consumes.

/// One resolved stack frame.
public struct Frame: Sendable, Hashable {
    /// The function's name, demangled (Swift, C++), or `image+0xOFFSET` when the image has no name
    /// for it.
    public var symbol: String
    /// The file name of the image the pc was in (`RunLoopDemo`, `libc.so.6`, `[vdso]`); empty when
    /// unknown.
    public var image: String
    /// Where the frame's function is defined, `path:line` from its debug
    /// information (`hangwatch run --source-lines`); nil when not asked for or
    /// unknown. Per function, not per pc: every pc of one function has the
    /// same source, so it never splits a call-tree node.
    public var source: String?
    /// A frame of `symbol` in `image`, with the function's `source` when known.
    public init(symbol: String, image: String, source: String? = nil) {
        self.symbol = symbol
        self.image = image
        self.source = source
    }
}

/// One sampled stack, root (outermost caller) first, leaf last, with its weight in samples.
public struct WeightedStack: Sendable, Equatable {
    /// The frames, outermost caller first, the function the sample was taken in last.
    public var frames: [Frame]
    /// How many samples had exactly this stack.
    public var weight: Int
    /// The thread was blocked (waiting in a syscall), not running, in these samples.
    public var waiting: Bool
    /// A stack of `frames` (root first) seen `weight` times, `waiting` when the thread was blocked in them.
    public init(frames: [Frame], weight: Int, waiting: Bool = false) {
        self.frames = frames
        self.weight = weight
        self.waiting = waiting
    }
}
