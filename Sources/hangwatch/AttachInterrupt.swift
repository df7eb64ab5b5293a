// Ctrl-C while attached: stop watching and write the report. The handler
// only stores a flag and wakes the reader; the reader loop does the rest.

#if canImport(Glibc)
import Glibc
#endif
import CHangWatchEngine
import HangWatchCapture

/// Set by SIGINT/SIGTERM while attached: stop watching and write the report.
nonisolated(unsafe) private var attachInterrupted: sig_atomic_t = 0
/// The session's log, for the handler to wake the loop parked on it.
nonisolated(unsafe) private var attachLog: UnsafeMutablePointer<hw_log_header>? = nil

/// The interrupt handlers of `hangwatch attach`.
enum AttachInterrupt {
    /// Whether an interrupt came.
    static func happened() -> Bool { attachInterrupted != 0 }

    /// Makes SIGINT, SIGTERM and SIGHUP end the attach: each sets the flag
    /// `happened` reads and wakes the reader parked on `log`. A signal the
    /// process started out ignoring stays ignored.
    static func install(waking log: UnsafeMutablePointer<hw_log_header>) {
        attachLog = log
        // A mask inherited from the parent (a test runner, a supervisor) must
        // not make Ctrl-C a no-op while attached.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        // One started ignoring a signal (`nohup hangwatch attach PID &`) keeps ignoring it.
        for sig in [SIGINT, SIGTERM, SIGHUP] where !SignalForwarding.startedIgnoring(sig) {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { _ in
                // SIGNAL-SAFE: one store, then an atomic swap and a futex wake; errno kept.
                let saved = errno
                attachInterrupted = 1
                if let log = attachLog { AttachSession.wake(log) }
                errno = saved
            }
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            sigaction(sig, &action, nil)
            sigaddset(&unblock, sig)
        }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
    }
}
