// Signal numbers as a reader knows them.

enum SignalNames {
    /// "SIGKILL" for 9; nil for numbers without a standard Linux name (real-time signals).
    static func name(_ number: Int) -> String? {
        let names = [1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT",
                     7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2",
                     13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM", 16: "SIGSTKFLT", 17: "SIGCHLD",
                     18: "SIGCONT", 19: "SIGSTOP", 20: "SIGTSTP", 21: "SIGTTIN", 22: "SIGTTOU",
                     23: "SIGURG", 24: "SIGXCPU", 25: "SIGXFSZ", 26: "SIGVTALRM", 27: "SIGPROF",
                     28: "SIGWINCH", 29: "SIGIO", 30: "SIGPWR", 31: "SIGSYS"]
        return names[number]
    }

    /// "signal 9 (SIGKILL)", or "signal 40" for a signal without a name.
    static func describe(_ number: Int) -> String {
        name(number).map { "signal \(number) (\($0))" } ?? "signal \(number)"
    }
}
