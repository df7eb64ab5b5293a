extension HangWatcher {
    /// Why `start(_:)` did not start the watcher.
    public enum StartError: Error, Equatable, CustomStringConvertible {
        case alreadyStarted, notOnMainThread, engine(String)
        /// One line for the user that says why.
        public var description: String {
            switch self {
            case .alreadyStarted: return "hangwatch is already running in this process"
            case .notOnMainThread: return "HangWatcher.start() must be called on the main thread"
            case let .engine(why): return "hangwatch engine did not start: \(why)"
            }
        }
    }
}
