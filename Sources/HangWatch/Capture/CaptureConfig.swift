/// What the engine is asked to watch and how, shared by `hangwatch run` and the library.
public struct CaptureConfig: Sendable, Equatable {
    public var hangMs: Double = 100
    public var reportMs: Double = 250
    public var sampleHz: Double = 1000
    public var frameMs: Double? = nil
    /// Thread names or globs to watch; `main` is the main role. Empty: main only.
    public var threadPatterns: [String] = []
    /// Give the frames of reported call trees their function's `file:line`
    /// (from DWARF, through llvm-symbolizer). Off by default: it runs a helper.
    public var sourceLines = false
    public init() {}
}

public enum CaptureError: Error, Equatable, CustomStringConvertible {
    case cannotCreateLog(String, String)
    case agentNotFound(String)
    public var description: String {
        switch self {
        case let .cannotCreateLog(path, why): return "cannot create sample log \(path): \(why)"
        case let .agentNotFound(path): return "preload agent not found (looked for \(path)); run `make agent`"
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif

func errnoDescription() -> String { String(cString: strerror(errno)) }
