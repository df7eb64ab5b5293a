/// How big a sample log's ring is: one policy for every way in.
///
/// A capture's ring must hold what the watched threads write between two
/// drains with room to spare: at 1 kHz a sample with its stack copy is a few
/// KiB, and a reader drains every 10-200 ms, so a few MiB are in flight at
/// most. The rest is headroom for a reader held up (a slow symbol read, a
/// loaded machine); a full ring drops samples first and the report counts them.
package enum SampleLogSize {
    /// Where the ring lives decides what its size costs.
    package enum Use {
        /// Read by hangwatch from another process (`run`'s file log, `attach`'s
        /// poller): the memory is hangwatch's, and a file log's consumed pages
        /// are released as they are read.
        case outOfProcess
        /// The program's own memory (the library): its pages stay resident once
        /// written, and its reader drains in the same process every 50 ms or sooner.
        case inProcess
        /// `dump`: one stack per thread, taken once.
        case snapshot
    }

    /// The ring's size in bytes for `use`.
    package static func bytes(for use: Use) -> UInt64 {
        switch use {
        case .outOfProcess: return 64 << 20
        case .inProcess: return 32 << 20
        case .snapshot: return 8 << 20
        }
    }
}
