// A server shaped like a SwiftNIO one, for watching event loops the program
// does not instrument (`hangwatch run --thread 'NIO-ELT-*'`, or the library
// with HANGWATCH_THREADS='NIO-ELT-*'):
//  - N event-loop threads named as NIO names them (`NIO-ELT-0-#0`, …), each
//    waiting in epoll_wait through a statically linked C shim, as NIO's
//    CNIOLinux does, and sharing one listening socket on 127.0.0.1;
//  - the main thread parks in a condition wait until the server closes, as a
//    NIO server's main does in `closeFuture.wait()`;
//  - a client thread (not a loop) sends one request whose handler computes
//    300 ms, one whose handler sleeps 300 ms in a synchronous API, then
//    fast requests at 100 a second.
// Each handler is timed by its own clock (the measure file).
// Usage: EventLoopServerDemo [--measure FILE] [--library REPORT.json] [--loops N]
//                            [--fast N] [--idle-seconds S [--cpu-file FILE]]
// --idle-seconds S: no client; the loops wait S seconds with nothing to do;
// --cpu-file then gets `steady-cpu-ms=… steady-ms=…`: the process's CPU time
// from 1 s in to the end.
import CEventLoopShim
import DemoSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

struct ServerOptions {
    var demo: DemoOptions
    var loops = 2
    var fastRequests = 100
    var idleSeconds: Double?
    var cpuFile: String?

    init(_ args: [String]) {
        demo = DemoOptions(args)
        func value(_ flag: String) -> String? {
            guard let i = args.firstIndex(of: flag), i + 1 < args.count else { return nil }
            return args[i + 1]
        }
        if let v = value("--loops").flatMap(Int.init), v > 0 { loops = v }
        if let v = value("--fast").flatMap(Int.init), v >= 0 { fastRequests = v }
        idleSeconds = value("--idle-seconds").flatMap(Double.init)
        cpuFile = value("--cpu-file")
    }
}

// ---- handlers --------------------------------------------------------------

/// A handler that computes for `ms` without returning to its loop.
@inline(never) func handleComputeRequest(ms: Double, measure: String?) -> UInt64 {
    let work = MeasuredWork(name: "handleComputeRequest", measure: measure)
    var digest: UInt64 = 0
    while work.elapsedMs < ms { digest = mixChunk(digest) }
    work.finish(result: digest)
    return digest
}

/// A handler that calls a synchronous API that sleeps `ms`.
@inline(never) func handleSleepRequest(ms: Double, measure: String?) -> UInt64 {
    let work = MeasuredWork(name: "handleSleepRequest", measure: measure)
    usleep(UInt32(ms * 1000))
    work.finish(result: 1)
    return 1
}

/// A handler that answers at once (a fraction of a millisecond of work).
@inline(never) func handleFastRequest() -> UInt64 {
    var digest: UInt64 = 0
    for _ in 0..<40 { digest = mixChunk(digest) }
    return digest
}

// ---- the event loops -------------------------------------------------------

/// One event loop: its own epoll set, the shared listener, its connections.
final class EventLoop: @unchecked Sendable {
    let name: String
    let epfd = event_loop_create()
    let stopFd = event_loop_wake_fd()
    let listener: Int32
    let measure: String?
    let stopped = DispatchSemaphore(value: 0)
    private var pending: [Int32: [UInt8]] = [:] // owned by the loop's thread

    init(name: String, listener: Int32, measure: String?) {
        self.name = name
        self.listener = listener
        self.measure = measure
        _ = event_loop_add(epfd, stopFd, EVENT_LOOP_READABLE)
        // Exclusive: one loop wakes per connection, as with NIO's accepting loop.
        _ = event_loop_add(epfd, listener, EVENT_LOOP_READABLE_EXCLUSIVE)
    }

    func start() {
        Thread { [self] in
            event_loop_name_thread(name)
            run()
            stopped.signal()
        }.start()
    }

    func stop() {
        var one: UInt64 = 1
        _ = write(stopFd, &one, 8)
    }

    private func run() {
        var fds = [Int32](repeating: 0, count: 64)
        var events = [UInt32](repeating: 0, count: 64)
        while true {
            let n = event_loop_wait(epfd, &fds, &events, 64, -1)
            if n < 0 { if errno == EINTR { continue }; return }
            for i in 0..<Int(n) {
                let fd = fds[i]
                if fd == stopFd { return }
                if fd == listener { accept() } else { serve(fd) }
            }
        }
    }

    private func accept() {
        while true {
            let fd = event_loop_accept(listener)
            if fd < 0 { return }
            pending[fd] = []
            _ = event_loop_add(epfd, fd, EVENT_LOOP_READABLE)
        }
    }

    private func serve(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 512)
        let got = read(fd, &buffer, buffer.count)
        if got <= 0 {
            if got < 0 && errno == EAGAIN { return }
            _ = event_loop_remove(epfd, fd)
            close(fd)
            pending[fd] = nil
            return
        }
        var input = (pending[fd] ?? []) + buffer.prefix(got)
        while let newline = input.firstIndex(of: UInt8(ascii: "\n")) {
            let line = String(decoding: input[..<newline], as: UTF8.self)
            input.removeSubrange(...newline)
            let answer = handle(line)
            _ = answer.withCString { write(fd, $0, strlen($0)) }
        }
        pending[fd] = input
    }

    /// One request line: `compute MS`, `sleep MS` or `fast`.
    private func handle(_ line: String) -> String {
        let words = line.split(separator: " ")
        let ms = words.count > 1 ? Double(words[1]) ?? 0 : 0
        switch words.first {
        case "compute": return "done \(handleComputeRequest(ms: ms, measure: measure) & 1)\n"
        case "sleep": return "done \(handleSleepRequest(ms: ms, measure: measure))\n"
        default: return "done \(handleFastRequest() & 1)\n"
        }
    }
}

// ---- the client ------------------------------------------------------------

/// Sends `line` and waits for the answer's line.
func request(_ fd: Int32, _ line: String) -> Bool {
    guard line.withCString({ write(fd, $0, strlen($0)) }) > 0 else { return false }
    var byte: UInt8 = 0
    while read(fd, &byte, 1) == 1 { if byte == UInt8(ascii: "\n") { return true } }
    return false
}

func connectTo(port: UInt16) -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let rc = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    return rc == 0 ? fd : -1
}

/// The client's script: a computing request, a sleeping one, then fast ones at 100 a second.
func runClient(port: UInt16, fastRequests: Int) -> Bool {
    let fd = connectTo(port: port)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    usleep(200_000)
    guard request(fd, "compute 300\n") else { return false }
    usleep(200_000)
    guard request(fd, "sleep 300\n") else { return false }
    usleep(200_000)
    let start = monotonicNs()
    for i in 0..<fastRequests {
        let due = start + UInt64(i) * 10_000_000
        let now = monotonicNs()
        if due > now { usleep(UInt32((due - now) / 1000)) }
        guard request(fd, "fast\n") else { return false }
    }
    usleep(200_000)
    return true
}

// ---- main ------------------------------------------------------------------

/// CPU time of the whole process (every thread, hangwatch's own included), in ms.
func processCpuMs() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let total = usage.ru_utime.tv_sec + usage.ru_stime.tv_sec
    return Double(total) * 1000 + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000
}

/// The listening socket on 127.0.0.1, any free port.
func listen() -> (Int32, UInt16)? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && Glibc.listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    return bound ? (fd, UInt16(bigEndian: address.sin_port)) : nil
}

/// The server is open until `close()`; the main thread waits here, as in a
/// NIO server's `closeFuture.wait()`.
final class CloseFuture: @unchecked Sendable {
    private let condition = NSCondition()
    private var closed = false
    func close() {
        condition.lock()
        closed = true
        condition.signal()
        condition.unlock()
    }
    /// Waits until closed, or until `deadline` when one is given.
    @inline(never) func wait(deadline: Date? = nil) {
        condition.lock()
        while !closed {
            if let deadline { if !condition.wait(until: deadline) { break } } else { condition.wait() }
        }
        condition.unlock()
    }
}

let options = ServerOptions(CommandLine.arguments)
startLibraryModeIfAsked(options.demo)
guard let (listener, port) = listen() else {
    FileHandle.standardError.write("EventLoopServerDemo: cannot listen on 127.0.0.1\n".data(using: .utf8) ?? Data())
    exit(1)
}
let loops = (0..<options.loops).map { EventLoop(name: "NIO-ELT-0-#\($0)", listener: listener, measure: options.demo.measureFile) }
loops.forEach { $0.start() }
let closeFuture = CloseFuture()
/// The client's verdict, written by its thread before it closes the server.
final class ClientResult: @unchecked Sendable { var ok = true }
let clientResult = ClientResult()
if let idle = options.idleSeconds {
    // The steady window, from 1 s in to the end: start-up is not idle cost.
    let end = Date(timeIntervalSinceNow: idle)
    closeFuture.wait(deadline: Date(timeIntervalSinceNow: min(1, idle)))
    let (cpuBefore, wallBefore) = (processCpuMs(), monotonicNs())
    closeFuture.wait(deadline: end)
    if let file = options.cpuFile {
        appendMeasureLine("steady-cpu-ms=\(processCpuMs() - cpuBefore) steady-ms=\(Double(monotonicNs() - wallBefore) / 1e6)",
                          to: file)
    }
} else {
    let fast = options.fastRequests
    let result = clientResult, future = closeFuture
    Thread {
        result.ok = runClient(port: port, fastRequests: fast)
        future.close()
    }.start()
    closeFuture.wait()
}
loops.forEach { $0.stop() }
loops.forEach { $0.stopped.wait() }
if !clientResult.ok {
    FileHandle.standardError.write("EventLoopServerDemo: a request failed\n".data(using: .utf8) ?? Data())
    exit(1)
}
exit(0)
