#if canImport(Glibc)
import Glibc
#endif

/// The pid signals are forwarded to. Set once before handlers are installed.
nonisolated(unsafe) private var forwardTarget: pid_t = 0

/// Forwards SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to hangwatch to the
/// program, so hangwatch can stay alive to write the report. A Ctrl-C from
/// the terminal already reaches the program (same process group); the kernel
/// sends that one with SI_KERNEL, and it is not sent a second time.
enum SignalForwarding {
    static let forwarded: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    static func install(forwardingTo pid: pid_t) {
        forwardTarget = pid
        for sig in forwarded {
            var action = sigaction()
            action.__sigaction_handler.sa_sigaction = { sig, info, _ in
                // async-signal-safe: reads a plain global and calls kill(2).
                if let info, info.pointee.si_code == SI_KERNEL { return }
                if forwardTarget > 0 { kill(forwardTarget, sig) }
            }
            action.sa_flags = SA_SIGINFO | SA_RESTART
            sigemptyset(&action.sa_mask)
            sigaction(sig, &action, nil)
        }
    }
}
