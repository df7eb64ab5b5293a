import CHangWatchEngine

/// Decides which records are the target's. Only threads that a THREAD record
/// announced in the current engine generation (process image) are watched
/// threads, so a record written by anything else (a child process that
/// shares the log mapping, a thread of an image that exec replaced) can never
/// become a hang or a sample of one.
///
/// Records are read in ring order, and an image's SESSION record comes before
/// everything that image writes (exec had ended every thread of the previous
/// image before the new one started its engine), so the latest SESSION names
/// the generation of every record after it.
struct RecordAttribution {
    /// The generation records are attributed to (nil until a SESSION is read).
    private(set) var generation: UInt32?
    /// Announced slot ids (a thread id, or HW_MAIN_QUEUE_ID) of this generation.
    private var slots: Set<Int32> = []
    /// The OS threads those slots ran on (notes name threads by OS id).
    private var osThreads: Set<Int32> = []

    /// Whether `record` may be used. SESSION and THREAD records also update
    /// the generation and the watched threads.
    mutating func admits(_ record: UnsafePointer<hw_rec_header>) -> Bool {
        let raw = UnsafeRawPointer(record)
        switch Int(hw_rec_kind(record)) {
        case Int(HW_REC_SESSION.rawValue):
            let session = raw.assumingMemoryBound(to: hw_rec_session.self).pointee
            if session.generation != generation {
                generation = session.generation
                slots = []
                osThreads = []
            }
            return true
        case Int(HW_REC_THREAD.rawValue):
            let thread = raw.assumingMemoryBound(to: hw_rec_thread.self).pointee
            slots.insert(thread.tid)
            osThreads.insert(thread.os_tid != 0 ? thread.os_tid : thread.tid)
            return true
        case Int(HW_REC_SAMPLE.rawValue):
            let sample = raw.assumingMemoryBound(to: hw_rec_sample.self).pointee
            return sample.generation == generation && slots.contains(sample.tid)
        case Int(HW_REC_REPEAT.rawValue):
            return slots.contains(raw.assumingMemoryBound(to: hw_rec_repeat.self).pointee.tid)
        case Int(HW_REC_HANG_START.rawValue), Int(HW_REC_BUSY_END.rawValue):
            return slots.contains(raw.assumingMemoryBound(to: hw_rec_busy.self).pointee.tid)
        case Int(HW_REC_NOTE.rawValue):
            let tid = raw.assumingMemoryBound(to: hw_rec_note.self).pointee.tid
            return tid == 0 || osThreads.contains(tid) || slots.contains(tid) // 0: about the process
        case Int(HW_REC_FRAMES.rawValue):
            return slots.contains(raw.assumingMemoryBound(to: hw_rec_frames.self).pointee.tid)
        default:
            return true // MODULE (kept per generation), EXIT, and kinds this reader does not use
        }
    }
}
