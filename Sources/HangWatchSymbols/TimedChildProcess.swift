// Running a helper program (llvm-symbolizer) from inside hangwatch without
// letting it hang or kill hangwatch.
//
// The input is handed over as an unlinked temporary file rather than a pipe:
// writing into a pipe whose reader died raises SIGPIPE, which would end
// hangwatch before it wrote its report, and feeding a pipe while reading the
// output would need a second thread or a write/read dance. Only the output is
// a pipe, read with poll() against a deadline; past it the child is killed.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One run of a helper program: its whole standard input given up front, its
/// standard output collected, its standard error discarded, and a time limit.
struct TimedChildProcess {
    var executable: String
    var arguments: [String]
    /// Variables removed from the helper's environment (the rest is inherited).
    var removedEnvironment: Set<String> = []
    var timeoutSeconds: Double

    enum Outcome: Equatable {
        /// The program ran to its end: its exit status (128+N when killed by signal N) and output.
        case finished(status: Int32, output: [UInt8])
        /// The time limit passed first; the program was killed. `output` is what it wrote until then.
        case timedOut(output: [UInt8])
        /// It could not be started at all.
        case cannotStart(String)
    }

    func run(input: [UInt8]) -> Outcome {
        let inputFd: Int32
        switch Self.unlinkedFile(holding: input) {
        case let .success(fd): inputFd = fd
        case let .failure(problem): return .cannotStart(problem.message)
        }
        defer { close(inputFd) }

        var pipeFds: [Int32] = [-1, -1]
        guard pipe(&pipeFds) == 0 else { return .cannotStart("pipe: " + errnoDescription()) }
        let (readEnd, writeEnd) = (pipeFds[0], pipeFds[1])
        // Neither end may leak into the child beyond its own stdout.
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        defer { close(readEnd) }

        let spawned = spawn(stdin: inputFd, stdout: writeEnd)
        close(writeEnd)  // the child holds its own copy; EOF comes when it exits
        let pid: pid_t
        switch spawned {
        case let .success(p): pid = p
        case let .failure(problem): return .cannotStart(problem.message)
        }

        let deadline = Self.nowSeconds() + max(0, timeoutSeconds)
        var output: [UInt8] = []
        guard Self.readToEnd(readEnd, into: &output, deadline: deadline) else {
            Self.stop(pid)
            return .timedOut(output: output)
        }
        guard let status = Self.waitForExit(pid, deadline: deadline) else {
            Self.stop(pid)
            return .timedOut(output: output)
        }
        return .finished(status: status, output: output)
    }

    private struct Problem: Error { var message: String }

    /// A temporary file with `bytes` in it, already unlinked (nothing to clean
    /// up, whatever happens later), positioned at its start.
    private static func unlinkedFile(holding bytes: [UInt8]) -> Result<Int32, Problem> {
        let directory = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((directory + "/hangwatch-symbolizer-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.map { mkstemp($0) } ?? -1
        }
        guard fd >= 0 else { return .failure(Problem(message: "cannot create a temporary file in \(directory): \(errnoDescription())")) }
        template.withUnsafeBufferPointer { buffer in
            if let path = buffer.baseAddress { _ = unlink(path) }
        }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let why = errnoDescription()
                close(fd)
                return .failure(Problem(message: "cannot write a temporary file: \(why)"))
            }
            written += n
        }
        guard lseek(fd, 0, SEEK_SET) == 0 else {
            let why = errnoDescription()
            close(fd)
            return .failure(Problem(message: "cannot rewind a temporary file: \(why)"))
        }
        return .success(fd)
    }

    private func spawn(stdin: Int32, stdout: Int32) -> Result<pid_t, Problem> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)

        var environment: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            let pair = String(cString: pointer)
            let name = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? pair
            if !removedEnvironment.contains(name) { environment.append(pair) }
            entry += 1
        }
        var pid: pid_t = 0
        let rc = Self.withCStrings([executable] + arguments) { argv in
            Self.withCStrings(environment) { envp in posix_spawn(&pid, executable, &actions, nil, argv, envp) }
        }
        guard rc == 0 else { return .failure(Problem(message: "cannot run \(executable): \(String(cString: strerror(rc)))")) }
        return .success(pid)
    }

    /// Reads until end of file; false when the deadline passed first.
    private static func readToEnd(_ fd: Int32, into output: inout [UInt8], deadline: Double) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let remainingMs = (deadline - nowSeconds()) * 1000
            guard remainingMs > 0 else { return false }
            var request = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&request, 1, Int32(min(remainingMs.rounded(.up), 60_000)))
            if ready < 0 {
                if errno == EINTR { continue }
                return true  // cannot wait on it any more: take what came
            }
            if ready == 0 { continue }  // the loop re-checks the deadline
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return true
            }
            if n == 0 { return true }
            output.append(contentsOf: buffer[0..<n])
        }
    }

    /// The exit status (128+N for signal N), or nil when the deadline passed first.
    private static func waitForExit(_ pid: pid_t, deadline: Double) -> Int32? {
        var status: Int32 = 0
        while true {
            let rc = waitpid(pid, &status, WNOHANG)
            if rc == pid { break }
            if rc < 0 {
                if errno == EINTR { continue }
                // Reaped elsewhere (ECHILD): the status is lost, but it did end
                // and its output is complete; -1 says "unknown".
                return -1
            }
            guard nowSeconds() < deadline else { return nil }
            usleep(2_000)
        }
        // WIFEXITED / WTERMSIG spelled out: Swift does not import the macros.
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Kills and reaps a child that ran out of time.
    private static func stop(_ pid: pid_t) {
        _ = kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    private static func nowSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        pointers.append(nil)
        defer { for pointer in pointers { free(pointer) } }
        return body(pointers)
    }
}
