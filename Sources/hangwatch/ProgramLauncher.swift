#if canImport(Glibc)
import Glibc
#endif
import CHangWatchCLISupport

/// Finds and starts the program to watch, with the agent preloaded.
enum ProgramLauncher {
    enum Failure: Error {
        case notFound(String)
        case notExecutable(String, String)
        case spawnFailed(String, String)
    }

    /// Resolves PROGRAM the way a shell would: a name with a slash as a path,
    /// otherwise the first executable match in $PATH.
    static func resolve(_ program: String) throws(Failure) -> String {
        if program.contains("/") {
            guard access(program, F_OK) == 0 else { throw .notFound(program) }
            guard access(program, X_OK) == 0, !isDirectory(program) else {
                throw .notExecutable(program, isDirectory(program) ? "is a directory" : "permission denied")
            }
            return program
        }
        let path = String(cString: getenv("PATH") ?? strdup("/usr/local/bin:/usr/bin:/bin"))
        var nonExecutable: String?
        for dir in path.split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = (dir.isEmpty ? "." : String(dir)) + "/" + program
            guard access(candidate, F_OK) == 0, !isDirectory(candidate) else { continue }
            if access(candidate, X_OK) == 0 { return candidate }
            nonExecutable = nonExecutable ?? candidate
        }
        if let nonExecutable { throw .notExecutable(nonExecutable, "permission denied") }
        throw .notFound(program)
    }

    private static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Starts `path` with `arguments` (argv[0] first) and extra environment.
    /// `signalMask`, when given, is the program's signal mask (the one
    /// hangwatch itself was started with, before it unblocked what it forwards);
    /// `ignoringSIGCHLD`: the program starts with SIGCHLD ignored, as hangwatch
    /// was started (see `SignalForwarding.install`).
    static func spawn(path: String, arguments: [String], environment: [String: String],
                      signalMask: sigset_t? = nil, ignoringSIGCHLD: Bool = false) throws(Failure) -> pid_t {
        var env: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let kv = String(cString: entry)
            if let eq = kv.firstIndex(of: "=") { env[String(kv[..<eq])] = String(kv[kv.index(after: eq)...]) }
            p += 1
        }
        for (k, v) in environment { env[k] = v }
        let envStrings = env.map { "\($0.key)=\($0.value)" }
        var pid: Int32 = 0
        var mask = signalMask ?? sigset_t()
        let hasMask = signalMask != nil
        let rc = withCStrings(arguments) { argv in
            withCStrings(envStrings) { envp in
                withUnsafePointer(to: &mask) { maskPointer in
                    hw_cli_spawn(&pid, path, argv, envp, hasMask ? maskPointer : nil, ignoringSIGCHLD ? 1 : 0)
                }
            }
        }
        guard rc == 0 else {
            let why = String(cString: strerror(rc))
            // The file is there but execve says ENOENT: what is missing is its interpreter
            // (an ELF built for another loader, a #! line naming no program), as bash says
            // "required file not found". It was found and cannot be started: 126.
            if rc == ENOENT && access(path, F_OK) == 0 {
                throw .spawnFailed(path, "its interpreter is missing (the ELF loader it names, or the program on its #! line)")
            }
            if rc == ENOENT { throw .notFound(path) }
            if rc == EACCES || rc == ENOEXEC || rc == EISDIR { throw .notExecutable(path, why) }
            throw .spawnFailed(path, why)
        }
        return pid
    }

    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        pointers.append(nil)
        defer { for p in pointers { free(p) } }
        return body(pointers)
    }
}
