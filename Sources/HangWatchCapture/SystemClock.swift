import Glibc

/// The clocks every stage agrees on: the engine stamps records with
/// CLOCK_MONOTONIC, and events carry wall-clock (CLOCK_REALTIME) times.
package enum SystemClock {
    /// CLOCK_MONOTONIC, in ns: the engine's time base.
    package static func monotonicNs() -> UInt64 { read(CLOCK_MONOTONIC) }

    /// CLOCK_BOOTTIME, in ns: the base of /proc's process start times.
    package static func bootNs() -> UInt64 { read(CLOCK_BOOTTIME) }

    /// CLOCK_REALTIME, in ns since the Unix epoch.
    package static func unixNs() -> Int64 { Int64(bitPattern: read(CLOCK_REALTIME)) }

    /// The wall-clock time of a monotonic instant, from one reading of both
    /// clocks now (a wall clock stepped since then is not followed backwards).
    package static func unixNs(ofMonotonic ns: UInt64) -> Int64 {
        let mono = monotonicNs()
        let unix = unixNs()
        return unix - (Int64(bitPattern: mono) - Int64(bitPattern: ns))
    }

    private static func read(_ id: clockid_t) -> UInt64 {
        var ts = timespec()
        clock_gettime(id, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
