#if canImport(Glibc)
import Glibc
#endif
import HangWatchCapture
import HangWatchSession

/// Exit statuses of hangwatch itself. Otherwise `hangwatch run` exits with the
/// program's status (128+N when the program was killed by signal N).
///
/// The gate statuses avoid 0-2 (success, "failed", usage) and stay below 64
/// (sysexits), so a CI script can tell a breached gate from a failing program
/// in the common cases; the program's own status is still returned whenever no
/// gate is breached. Report-file statuses follow sysexits.h.
enum ExitCode {
    static let usage: Int32 = 2            // bad command line
    static let hangGate: Int32 = 4         // run --fail-on-hang: a hang reached the limit
    static let hitchGate: Int32 = 5        // run --fail-on-hitch-ratio: the hitch ratio exceeded the limit
    static let gateNotMeasured: Int32 = 6  // run --fail-on-hitch-ratio: no frame was measured, so it cannot pass
    static let dataError: Int32 = 65       // a report file is malformed, truncated or not a report (EX_DATAERR)
    static let noInput: Int32 = 66         // a report file is missing or unreadable (EX_NOINPUT)
    static let noProcess: Int32 = 69       // attach/dump: no such process (EX_UNAVAILABLE)
    static let internalError: Int32 = 70   // hangwatch could not do its job (EX_SOFTWARE)
    static let cannotCreate: Int32 = 73    // the output file cannot be written (EX_CANTCREAT)
    static let permissionDenied: Int32 = 77 // attach/dump: another user's process, or Yama/ptrace_scope refused (EX_NOPERM)
    static let cannotExecute: Int32 = 126  // the program exists but cannot be executed
    static let notFound: Int32 = 127       // the program cannot be found
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

/// One line, and the status that says why a capture session could not start.
func sessionFailed(_ error: CaptureSessionError) -> Int32 {
    switch error {
    case let .refused(refusal): return refused(refusal)
    case .invalid: return usageError(error.description)
    case .cannotOpenEventFile:
        writeStderr("hangwatch: \(error)")
        return ExitCode.cannotCreate
    case .cannotCreateLog, .engine:
        writeStderr("hangwatch: \(error)")
        return ExitCode.internalError
    }
}

/// One line, and the status that says which refusal it was.
func refused(_ refusal: AttachRefusal) -> Int32 {
    writeStderr("hangwatch: \(refusal)")
    switch refusal {
    case .noProcess: return ExitCode.noProcess
    case .otherUser, .ptraceScope, .denied: return ExitCode.permissionDenied
    case .cannotStart: return ExitCode.internalError
    }
}
