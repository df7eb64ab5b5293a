// `hangwatch dump PID`: every thread's stack once, the `py-spy dump` /
// `eu-stack` of a Swift or C process. Capture and unwinding are the capture
// stage's (ThreadSnapshot); names are the report's own (Symbolicator).

import HangWatchCapture
import HangWatchModel
import HangWatchSymbols
#if canImport(Glibc)
import Glibc
#endif

/// One thread of a dump.
package struct DumpedThread: Sendable, Equatable, Codable {
    package var tid: Int32
    package var name: String
    /// The /proc state letter: R running, S sleeping, D uninterruptible, T stopped...
    package var state: String
    /// The syscall it is blocked in (nil when running or not in one).
    package var syscall: String?
    /// How its stack was read: "proc" (blocked: no stop), "stopped" (one ptrace stop), "none".
    package var capture: String
    /// Leaf (innermost) first.
    package var frames: [DumpedFrame]
    /// Why no stack was captured, when none was.
    package var error: String?
}

/// One frame of a dumped stack.
package struct DumpedFrame: Sendable, Equatable, Codable {
    package var symbol: String
    package var image: String
}

/// Every thread of a process, with what it was doing when the dump was taken.
package struct ThreadDump: Sendable, Equatable, Codable {
    package var pid: Int32
    package var executable: String
    /// Time to read every thread's state and stack (ms).
    package var captureMs: Double
    /// Capture plus unwinding and symbolication (ms).
    package var totalMs: Double
    /// Threads that were running and were stopped for one sample.
    package var stoppedThreads: Int
    /// The longest such stop (µs).
    package var longestStopUs: Double
    /// Syscalls a stop interrupted as they began, restarted by hangwatch.
    package var restartedSyscalls: Int
    package var threads: [DumpedThread]

    /// Captures, unwinds and names every thread's stack of `pid`.
    /// `stopBlockedThreads`: stop blocked threads too, instead of reading them from /proc (tests).
    package static func capture(pid: Int32, stopBlockedThreads: Bool = false) throws(AttachRefusal) -> ThreadDump {
        let start = SystemClock.monotonicNs()
        let snapshot = try ThreadSnapshot.capture(pid: pid, stopBlockedThreads: stopBlockedThreads)
        let symbolicator = Symbolicator()
        for module in snapshot.run.modules { symbolicator.addModule(module) }
        let resolver = StackResolver(run: snapshot.run, symbolicator: symbolicator)
        let threads = snapshot.threads.map { t in
            let frames = snapshot.run.samples[t.sampleKey]?.first.map {
                resolver.resolve($0).frames.reversed().map { DumpedFrame(symbol: $0.symbol, image: $0.image) }
            } ?? []
            return DumpedThread(tid: t.tid, name: t.name, state: t.state, syscall: t.syscall?.name,
                                capture: t.capture.rawValue, frames: frames,
                                error: t.errno != 0 ? String(cString: strerror(t.errno)) : nil)
        }
        let end = SystemClock.monotonicNs()
        return ThreadDump(pid: pid, executable: Self.executable(of: pid), captureMs: Double(snapshot.captureNs) / 1e6,
                          totalMs: Double(end - start) / 1e6, stoppedThreads: snapshot.stoppedThreads,
                          longestStopUs: Double(snapshot.longestStopNs) / 1e3,
                          restartedSyscalls: snapshot.restartedSyscalls, threads: threads)
    }

    /// The target's executable path, from /proc/PID/exe.
    package static func executable(of pid: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return "?" }
        return String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The target's arguments (after argv[0]), from /proc/PID/cmdline.
    package static func arguments(of pid: Int32) -> [String] {
        let fd = open("/proc/\(pid)/cmdline", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            bytes += chunk.prefix(n)
        }
        return Array(bytes.split(separator: 0, omittingEmptySubsequences: false).dropFirst().map {
            String(decoding: $0, as: UTF8.self)
        }.dropLast(bytes.last == 0 ? 1 : 0))
    }
}
