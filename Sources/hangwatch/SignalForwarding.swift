#if canImport(Glibc)
import Glibc
#endif

/// The pid signals are forwarded to; 0 until the program is started.
nonisolated(unsafe) private var forwardTarget: pid_t = 0
/// A signal that arrived before the program's pid was known (forwarded as soon as it is).
nonisolated(unsafe) private var pendingSignal: Int32 = 0

/// Forwards SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to hangwatch to the
/// program, so hangwatch can stay alive to write the report. A Ctrl-C from
/// the terminal already reaches the program (same process group); the kernel
/// sends that one with SI_KERNEL, and it is not sent a second time.
///
/// The handlers go in before the program is started, so no window exists in
/// which a SIGTERM kills hangwatch alone and leaves the program unwatched and
/// without a report. The program itself starts with default handlers: exec
/// resets caught signals.
///
/// A signal hangwatch was started with ignored stays ignored, in hangwatch and
/// so in the program: `nohup`, and a non-interactive shell's `&` (SIGINT and
/// SIGQUIT), hand the program an ignored signal that it keeps across exec. A
/// handler here would have reset it to the default and let a hang-up kill a
/// program that survives it when run plain.
enum SignalForwarding {
    static let forwarded: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    /// Whether hangwatch was started with SIGCHLD ignored (`install` sets it).
    /// Then `install` puts hangwatch's own back to the default, or the kernel
    /// would reap the program at its exit and its status would be lost; the
    /// program is started with it ignored all the same (`ProgramLauncher`).
    nonisolated(unsafe) static var startedIgnoringSIGCHLD = false

    /// Installs the handlers (call before starting the program) and unblocks
    /// the forwarded signals in hangwatch: a parent may have left them blocked
    /// (a test runner, a service manager), and a blocked SIGTERM would never be
    /// forwarded. Returns the signal mask hangwatch was started with, which the
    /// program is given unchanged (`ProgramLauncher.spawn(signalMask:)`).
    static func install() -> sigset_t {
        var forwardedSet = sigset_t()
        sigemptyset(&forwardedSet)
        for sig in forwarded { sigaddset(&forwardedSet, sig) }
        for sig in forwarded {
            if startedIgnoring(sig) { continue }
            var action = sigaction()
            action.__sigaction_handler.sa_sigaction = { sig, info, _ in
                // SIGNAL-SAFE: reads and writes plain globals, calls kill(2); errno kept.
                if let info, info.pointee.si_code == SI_KERNEL { return }
                let saved = errno
                if forwardTarget > 0 { kill(forwardTarget, sig) } else { pendingSignal = sig }
                errno = saved
            }
            action.sa_flags = SA_SIGINFO | SA_RESTART
            sigemptyset(&action.sa_mask)
            sigaction(sig, &action, nil)
        }
        if startedIgnoring(SIGCHLD) {
            startedIgnoringSIGCHLD = true
            var standard = sigaction()
            standard.__sigaction_handler.sa_handler = SIG_DFL
            sigaction(SIGCHLD, &standard, nil)
        }
        // Unblocked only now: a signal already pending runs the handler above
        // (and is forwarded once the program starts), not the default action.
        var original = sigset_t()
        pthread_sigmask(SIG_UNBLOCK, &forwardedSet, &original)
        return original
    }

    /// Whether `sig` is ignored now (before any handler of hangwatch's is installed: as it was started).
    static func startedIgnoring(_ sig: Int32) -> Bool {
        var current = sigaction()
        return sigaction(sig, nil, &current) == 0 && isIgnored(current)
    }

    /// Whether a disposition is SIG_IGN. Swift imports SIG_IGN as a function
    /// pointer it will not compare, so the handler's address is compared with 1.
    private static func isIgnored(_ action: sigaction) -> Bool {
        guard let handler = action.__sigaction_handler.sa_handler else { return false }
        return unsafeBitCast(handler, to: Int.self) == 1
    }

    /// From now on signals go to `pid`; one that came while it was starting is sent now.
    static func forward(to pid: pid_t) {
        forwardTarget = pid
        let early = pendingSignal
        if early != 0 {
            pendingSignal = 0
            kill(pid, early)
        }
    }
}
