import CHangWatchEngine

/// The reader's handle on a sample log (see `hangwatch_log.h`): a shared file
/// mapping the target writes into, which stays readable after the target dies.
public final class SampleLog {
    let header: UnsafeMutablePointer<hw_log_header>
    public let path: String?

    /// Creates a fresh log file at `path` with a ring of `capacity` bytes.
    public init(creatingAt path: String, capacity: UInt64 = 64 << 20) throws(CaptureError) {
        guard let h = hw_log_create(path, capacity) else {
            throw CaptureError.cannotCreateLog(path, errnoDescription())
        }
        header = h
        self.path = path
    }

    /// An in-memory log for the in-process library (no file).
    public init(anonymousCapacity capacity: UInt64 = 16 << 20) throws(CaptureError) {
        guard let h = hw_log_create_anonymous(capacity) else {
            throw CaptureError.cannotCreateLog("(anonymous)", errnoDescription())
        }
        header = h
        path = nil
    }

    deinit { hw_log_unmap(header) }

    /// Writes the configuration the engine reads when it starts.
    public func configure(_ config: CaptureConfig) {
        header.pointee.hang_ns = UInt64(config.hangMs * 1e6)
        header.pointee.report_ns = UInt64(config.reportMs * 1e6)
        header.pointee.sample_period_ns = UInt64(1e9 / config.sampleHz)
        header.pointee.frame_ns = UInt64((config.frameMs ?? 0) * 1e6)
        let patterns = config.threadPatterns.joined(separator: "\n")
        withUnsafeMutableBytes(of: &header.pointee.thread_patterns) { buffer in
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            for (i, byte) in patterns.utf8.prefix(buffer.count - 1).enumerated() { buffer[i] = byte }
        }
    }

    /// Hands every committed record to `body`, in order, then releases it.
    /// `writerGone`: the target is dead, so uncommitted records will never complete.
    public func drain(writerGone: Bool, _ body: (UnsafePointer<hw_rec_header>) -> Void) {
        while let record = hw_log_peek(header, writerGone) {
            body(record)
            hw_log_consume(header, record)
        }
    }

    /// Records the writer had to drop because the ring was full.
    public var droppedRecords: UInt64 { hw_log_dropped(header) }

    /// The process that claimed the log (0 until the engine starts).
    public var ownerPid: Int32 { header.pointee.owner_pid }
}
