// The call a sample found its thread blocked in, decoded from the engine's
// HW_CALL_* codes so that no stage after capture reads the C enum.

import CHangWatchEngine

/// The call a blocked sample was taken in: one of the waits the agent
/// interposes, a raw system call read from /proc, or none (a running sample).
public struct BlockedCall: Hashable, Sendable {
    /// The engine's code: HW_CALL_* for interposed waits, HW_CALL_SYSCALL_BASE
    /// plus the number for system calls, HW_CALL_BLOCKED_UNKNOWN when /proc gave
    /// only the thread's state. Kept whole so that folding and hashing see
    /// exactly what the engine wrote.
    public let code: Int32

    /// The call with the engine's code `code`.
    public init(code: Int32) { self.code = code }

    /// No call: the sample caught its thread running.
    public static let none = BlockedCall(code: Int32(HW_CALL_NONE.rawValue))

    /// The x86_64 system call numbered `number`.
    public static func syscall(_ number: Int32) -> BlockedCall {
        BlockedCall(code: Int32(HW_CALL_SYSCALL_BASE) + number)
    }

    /// The name a report shows for it: the libc function for an interposed
    /// wait, the system call's name (or "syscall N"), "unknown syscall" when
    /// /proc gave only the thread's state, "call N" for a code this reader
    /// does not know.
    public var name: String {
        // /proc gave only the thread's state (after a privilege drop).
        if code == Int32(HW_CALL_BLOCKED_UNKNOWN) { return "unknown syscall" }
        if code >= Int32(HW_CALL_SYSCALL_BASE) {
            let nr = code - Int32(HW_CALL_SYSCALL_BASE)
            return Self.syscalls[nr] ?? "syscall \(nr)"
        }
        return Self.interposed[code] ?? "call \(code)"
    }

    /// The image interposed calls really live in, shown instead of the agent's wrapper.
    public static let libcImage = "libc.so.6"

    private static let interposed: [Int32: String] = [
        Int32(HW_CALL_NANOSLEEP.rawValue): "nanosleep",
        Int32(HW_CALL_CLOCK_NANOSLEEP.rawValue): "clock_nanosleep",
        Int32(HW_CALL_USLEEP.rawValue): "usleep",
        Int32(HW_CALL_SLEEP.rawValue): "sleep",
        Int32(HW_CALL_POLL.rawValue): "poll",
        Int32(HW_CALL_PPOLL.rawValue): "ppoll",
        Int32(HW_CALL_SELECT.rawValue): "select",
        Int32(HW_CALL_PSELECT.rawValue): "pselect",
        Int32(HW_CALL_EPOLL_WAIT.rawValue): "epoll_wait",
        Int32(HW_CALL_EPOLL_PWAIT.rawValue): "epoll_pwait",
        Int32(HW_CALL_SIGTIMEDWAIT.rawValue): "sigtimedwait",
        Int32(HW_CALL_SIGWAITINFO.rawValue): "sigwaitinfo",
        Int32(HW_CALL_SIGSUSPEND.rawValue): "sigsuspend",
        Int32(HW_CALL_PAUSE.rawValue): "pause",
        Int32(HW_CALL_SIGWAIT.rawValue): "sigwait",
    ]

    /// x86_64 syscall numbers a blocked thread is commonly found in.
    private static let syscalls: [Int32: String] = [
        0: "read", 1: "write", 7: "poll", 17: "pread64", 18: "pwrite64", 19: "readv", 20: "writev",
        23: "select", 34: "pause", 35: "nanosleep", 42: "connect", 43: "accept", 44: "sendto",
        45: "recvfrom", 46: "sendmsg", 47: "recvmsg", 61: "wait4", 72: "fcntl", 73: "flock",
        74: "fsync", 75: "fdatasync", 202: "futex", 219: "restart_syscall", 230: "clock_nanosleep", 232: "epoll_wait",
        247: "waitid", 257: "openat", 270: "pselect6", 271: "ppoll", 281: "epoll_pwait",
        288: "accept4", 128: "rt_sigtimedwait", 130: "rt_sigsuspend", 56: "clone", 58: "vfork",
        59: "execve", 435: "clone3", 441: "epoll_pwait2",
    ]
}

extension BlockedCall {
    /// The interposed poll(2) wrapper's code, for tests that build samples by hand.
    package static let interposedPoll = BlockedCall(code: Int32(HW_CALL_POLL.rawValue))
}
