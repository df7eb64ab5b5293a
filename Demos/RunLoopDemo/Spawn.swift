// fork scenario: posix_spawn a child and reap it from cheap run-loop timers.

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Spawns `argv` with posix_spawn (inheriting the environment), writes
/// `spawn-result <ret> <childPid>`, then polls waitpid(WNOHANG) every 20 ms on
/// the run loop; when the child is reaped, writes
/// `child-exit <childPid> <exitCode> <lifetimeMs>` and calls `then`.
func spawnChild(_ argv: [String], then: @escaping @Sendable () -> Void) {
    var pid: pid_t = 0
    var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) }
    cArgs.append(nil)
    var cEnv: [UnsafeMutablePointer<CChar>?] = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") }
    cEnv.append(nil)
    let t0 = monotonicNs()
    let ret = posix_spawn(&pid, argv[0], nil, nil, cArgs, cEnv)
    for p in cArgs { free(p) }
    for p in cEnv { free(p) }
    measureLine("spawn-result \(ret) \(ret == 0 ? pid : -1)")
    log("spawned \(argv) pid \(pid) ret \(ret)")
    guard ret == 0 else {
        then()
        return
    }
    let child = pid
    @Sendable func reap() {
        var status: Int32 = 0
        let r = waitpid(child, &status, WNOHANG)
        if r == 0 || (r < 0 && errno == EINTR) {
            after(20) { reap() }
            return
        }
        let lifetimeNs = monotonicNs() &- t0
        // WIFEXITED / WEXITSTATUS are macros; decode by hand.
        let code: Int32 = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : -(status & 0x7F)
        measureLine("child-exit \(child) \(r < 0 ? -1 : code) \(msString(lifetimeNs))")
        log("child \(child) exited \(code) after \(msString(lifetimeNs)) ms")
        then()
    }
    after(20) { reap() }
}
