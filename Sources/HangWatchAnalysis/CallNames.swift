import CHangWatchEngine

/// Human names for the calls a blocked thread can be found in.
enum CallNames {
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

    static func name(of call: Int32) -> String {
        // /proc gave only the thread's state (after a privilege drop).
        if call == Int32(HW_CALL_BLOCKED_UNKNOWN) { return "unknown syscall" }
        if call >= Int32(HW_CALL_SYSCALL_BASE) {
            let nr = call - Int32(HW_CALL_SYSCALL_BASE)
            return syscalls[nr] ?? "syscall \(nr)"
        }
        return interposed[call] ?? "call \(call)"
    }

    /// The image interposed calls really live in, shown instead of the agent's wrapper.
    static let libcImage = "libc.so.6"
}
