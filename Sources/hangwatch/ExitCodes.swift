#if canImport(Glibc)
import Glibc
#endif

/// Exit statuses of hangwatch itself. Otherwise `hangwatch run` exits with the
/// program's status (128+N when the program was killed by signal N).
enum ExitCode {
    static let usage: Int32 = 2          // bad command line
    static let internalError: Int32 = 70 // hangwatch could not do its job (EX_SOFTWARE)
    static let cannotExecute: Int32 = 126 // the program exists but cannot be executed
    static let notFound: Int32 = 127      // the program cannot be found
}

func writeStderr(_ text: String) {
    let line = text.hasSuffix("\n") ? text : text + "\n"
    // write(2) on fd 2: unbuffered, and no shared FILE* to reason about.
    var bytes = Array(line.utf8)[...]
    while !bytes.isEmpty {
        let n = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        if n <= 0 { break }
        bytes = bytes.dropFirst(n)
    }
}

/// One clear line on stderr, exit status 2.
func usageError(_ message: String) -> Int32 {
    writeStderr("hangwatch: \(message)")
    return ExitCode.usage
}
