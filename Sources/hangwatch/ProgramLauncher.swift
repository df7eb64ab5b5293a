#if canImport(Glibc)
import Glibc
#endif
import CHangWatchCLISupport

/// Finds and starts the program to watch, with the agent preloaded.
/// Paths, the argv and the environment are bytes all the way to execve:
/// text (`displayed`) is made from them for messages only.
enum ProgramLauncher {
    enum Failure: Error {
        case notFound(String)
        case notExecutable(String, String)
        case spawnFailed(String, String)
    }

    /// Resolves PROGRAM the way a shell would: a name with a slash as a path,
    /// otherwise the first executable match in $PATH.
    static func resolve(_ program: [UInt8]) throws(Failure) -> [UInt8] {
        let slash = UInt8(ascii: "/")
        if program.contains(slash) {
            guard access(program.nulTerminated, F_OK) == 0 else { throw .notFound(program.displayed) }
            guard access(program.nulTerminated, X_OK) == 0, !isDirectory(program) else {
                throw .notExecutable(program.displayed, isDirectory(program) ? "is a directory" : "permission denied")
            }
            return program
        }
        let path = getenv("PATH").map { [UInt8](cString: $0) } ?? Array("/usr/local/bin:/usr/bin:/bin".utf8)
        var nonExecutable: [UInt8]?
        for dir in path.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false) {
            let candidate = (dir.isEmpty ? [UInt8(ascii: ".")] : Array(dir)) + [slash] + program
            guard access(candidate.nulTerminated, F_OK) == 0, !isDirectory(candidate) else { continue }
            if access(candidate.nulTerminated, X_OK) == 0 { return candidate }
            nonExecutable = nonExecutable ?? candidate
        }
        if let nonExecutable { throw .notExecutable(nonExecutable.displayed, "permission denied") }
        throw .notFound(program.displayed)
    }

    private static func isDirectory(_ path: [UInt8]) -> Bool {
        var st = stat()
        return stat(path.nulTerminated, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Starts `path` with `arguments` (argv[0] first) and `environment`
    /// (the whole of it), each handed to execve as the bytes given.
    /// `signalMask`, when given, is the program's signal mask (the one
    /// hangwatch itself was started with, before it unblocked what it forwards);
    /// `ignoringSIGCHLD`: the program starts with SIGCHLD ignored, as hangwatch
    /// was started (see `SignalForwarding.install`).
    static func spawn(path: [UInt8], arguments: [[UInt8]], environment: ProgramEnvironment,
                      signalMask: sigset_t? = nil, ignoringSIGCHLD: Bool = false) throws(Failure) -> pid_t {
        var pid: Int32 = 0
        var mask = signalMask ?? sigset_t()
        let hasMask = signalMask != nil
        let rc = withCStrings(arguments) { argv in
            withCStrings(environment.entries) { envp in
                withUnsafePointer(to: &mask) { maskPointer in
                    hw_cli_spawn(&pid, path.nulTerminated, argv, envp, hasMask ? maskPointer : nil, ignoringSIGCHLD ? 1 : 0)
                }
            }
        }
        guard rc == 0 else {
            let why = String(cString: strerror(rc))
            // The file is there but execve says ENOENT: what is missing is its interpreter
            // (an ELF built for another loader, a #! line naming no program), as bash says
            // "required file not found". It was found and cannot be started: 126.
            if rc == ENOENT && access(path.nulTerminated, F_OK) == 0 {
                throw .spawnFailed(path.displayed,
                                   "its interpreter is missing (the ELF loader it names, or the program on its #! line)")
            }
            if rc == ENOENT { throw .notFound(path.displayed) }
            if rc == EACCES || rc == ENOEXEC || rc == EISDIR { throw .notExecutable(path.displayed, why) }
            throw .spawnFailed(path.displayed, why)
        }
        return pid
    }

    /// NUL-terminated copies of `strings`, then a NULL: an argv or envp for execve.
    private static func withCStrings<R>(_ strings: [[UInt8]], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
        let copies = strings.map { bytes in
            let copy = UnsafeMutableBufferPointer<CChar>.allocate(capacity: bytes.count + 1)
            _ = copy.initialize(from: bytes.nulTerminated)
            return copy
        }
        defer { for copy in copies { copy.deallocate() } }
        return body(copies.map(\.baseAddress) + [nil])
    }
}

extension ProgramLauncher.Failure {
    /// Says why the program could not be started, and returns the status that tells which failure it was.
    func reported() -> Int32 {
        switch self {
        case let .notFound(p):
            writeStderr("hangwatch: cannot find program '\(p)'")
            return ExitCode.notFound
        case let .notExecutable(p, why):
            writeStderr("hangwatch: cannot execute '\(p)': \(why)")
            return ExitCode.cannotExecute
        case let .spawnFailed(p, why):
            writeStderr("hangwatch: cannot start '\(p)': \(why)")
            return ExitCode.cannotExecute
        }
    }
}
