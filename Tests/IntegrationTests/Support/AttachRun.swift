import Foundation
import HangWatch
import HangWatchModel
import HangWatchTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A program started without hangwatch, and `hangwatch attach` (or `dump`)
/// pointed at it while it runs.
struct AttachedProgram {
    let process: Process
    let scratch: URL
    let stdoutPath: String
    let stderrPath: String

    var pid: Int32 { process.processIdentifier }

    /// Starts `program` with its stdout and stderr in files. With `pidFile`,
    /// waits until the program has written it (it is then past its start-up).
    static func start(_ program: String, _ arguments: [String], scratch: URL, pidFile: String? = nil,
                      prefix: [String] = []) throws -> AttachedProgram {
        let process = Process()
        let out = scratch.appendingPathComponent("program.stdout").path
        let err = scratch.appendingPathComponent("program.stderr").path
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        _ = FileManager.default.createFile(atPath: err, contents: nil)
        if prefix.isEmpty {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: prefix[0])
            process.arguments = Array(prefix.dropFirst()) + [program] + arguments
        }
        process.standardOutput = FileHandle(forWritingAtPath: out)
        process.standardError = FileHandle(forWritingAtPath: err)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        if let pidFile {
            let deadline = Date().addingTimeInterval(20)
            while !FileManager.default.fileExists(atPath: pidFile) {
                guard Date() < deadline, process.isRunning else {
                    throw TestFailure("\(program) wrote no pid file; status \(process.isRunning ? "running" : "\(process.terminationStatus)")")
                }
                usleep(2_000)
            }
        }
        return AttachedProgram(process: process, scratch: scratch, stdoutPath: out, stderrPath: err)
    }

    /// The pid the program wrote (it differs from `pid` when a prefix such as setpriv exec'd it).
    static func pid(inFile path: String) throws -> Int32 {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        guard let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestFailure("no pid in \(path): \(text)")
        }
        return pid
    }

    /// Waits for the program to exit (killing it after `timeout`), and returns its status, stdout and stderr.
    func finish(timeout: TimeInterval = 30) throws -> ProcessResult {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(pid, SIGKILL)
            process.waitUntilExit()
            throw TestFailure("the attached program did not finish within \(timeout) s")
        }
        let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        let out = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        return ProcessResult(status: status, stdout: out, stderr: err)
    }
}

/// One `hangwatch attach` run and its JSON report.
struct AttachReport {
    var result: ProcessResult
    var report: Report
    /// The most CPU time the VM lost on one CPU while attached (`StolenTime`).
    /// attach dates a transition seen across a late poll with the thread's
    /// schedstat, which leaves out stolen time: the length can be off by that.
    var stolenMs: Double = 0

    /// `hangwatch attach PID [args] -o report.json --format json`; ends when the target exits or `--duration` passes.
    static func attach(_ pid: Int32, _ args: [String] = [], scratch: URL, environment: [String: String]? = nil,
                       timeout: TimeInterval = 60) throws -> AttachReport {
        let path = scratch.appendingPathComponent("attach-report.json").path
        let stealBefore = StolenTime.perCPU()
        let result = try ProcessRunner.run(TestPaths.hangwatch, ["attach", String(pid)] + args + ["-o", path, "--format", "json"],
                                           environment: environment, timeout: timeout)
        let stolenMs = StolenTime.maxMs(from: stealBefore, to: StolenTime.perCPU())
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TestFailure("attach wrote no report; status \(result.status), stderr: \(result.stderr)")
        }
        return AttachReport(result: result, report: try JSONReport.decode(data), stolenMs: stolenMs)
    }

    /// The hang whose duration is nearest `work`'s, if within `toleranceMs`
    /// widened by the time the VM stole meanwhile.
    func hang(matching work: MeasuredWork, toleranceMs: Double) -> Hang? {
        report.hangs.min { abs($0.durationMs - work.durationMs) < abs($1.durationMs - work.durationMs) }
            .flatMap { within($0.durationMs, of: work.durationMs, toleranceMs: toleranceMs) ? $0 : nil }
    }

    /// Whether a length attach measured is `expected` within `toleranceMs`
    /// widened by the time the VM stole meanwhile (0 on a machine that lost none).
    func within(_ measured: Double, of expected: Double, toleranceMs: Double) -> Bool {
        abs(measured - expected) <= toleranceMs + stolenMs
    }
}

/// The lines `<call> <ret> <errno> <ms>` that thread_pool --sleeps and RunLoopDemo write.
struct SleepResult {
    var call: String
    var ret: Int
    var err: Int
    var ms: Double

    static func parse(_ lines: [MeasuredWork]) -> [SleepResult] {
        lines.compactMap { w in
            let f = w.fields
            guard f.count == 4, let ret = Int(f[1]), let err = Int(f[2]), let ms = Double(f[3]) else { return nil }
            return SleepResult(call: f[0], ret: ret, err: err, ms: ms)
        }
    }
}

/// Whether any thread of `pid` is left stopped or traced. A thread seen
/// traced or stopped may be in the middle of one sample (tens of µs, at most
/// the 20 ms stop timeout): it is read again every 0.2 ms for `settleMs`,
/// and only one held at every read is reported.
func threadsHeld(_ pid: Int32, settleMs: UInt32 = 100) -> [String] {
    func held(_ tid: String) -> String? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/status", encoding: .utf8) else { return nil }
        let lines = status.split(separator: "\n")
        let state = lines.first { $0.hasPrefix("State:") }.map { $0.dropFirst(6).trimmingCharacters(in: .whitespaces) } ?? "?"
        let tracer = lines.first { $0.hasPrefix("TracerPid:") }.map { $0.dropFirst(10).trimmingCharacters(in: .whitespaces) } ?? "0"
        if tracer != "0" || state.hasPrefix("t") || state.hasPrefix("T") { return "\(tid): \(state), TracerPid \(tracer)" }
        return nil
    }
    let tids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    var suspects = tids.filter { held($0) != nil }
    // A thread sampled at 1 kHz on a loaded machine can be inside a sample at
    // any one read, even at several reads far apart; one left held is held at
    // every read: read each suspect every 0.2 ms for `settleMs` and keep only
    // those never seen free.
    let deadline = Date().addingTimeInterval(Double(settleMs) / 1000)
    while !suspects.isEmpty && Date() < deadline {
        usleep(200)
        suspects = suspects.filter { held($0) != nil }
    }
    return suspects.compactMap(held)
}

/// Small C programs for the adversarial attach tests, written and compiled into a scratch directory.
enum AttachScenario {
    static func compile(_ name: String, into scratch: URL) throws -> String {
        guard let source = sources[name] else { throw TestFailure("no scenario \(name)") }
        let path = scratch.appendingPathComponent("\(name).c")
        try source.write(to: path, atomically: true, encoding: .utf8)
        return try ProcessRunner.compileC(path.path, into: scratch, name: name)
    }

    /// A C program that uses libdispatch, built with the toolchain's clang
    /// (the dispatch headers need clang), found next to `swift` on PATH.
    static func compileWithDispatch(_ name: String, into scratch: URL) throws -> String {
        guard let source = sources[name] else { throw TestFailure("no scenario \(name)") }
        let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/opt/swift/usr/bin"]
        guard let bin = dirs.first(where: { FileManager.default.isExecutableFile(atPath: "\($0)/swift")
                                        && FileManager.default.isExecutableFile(atPath: "\($0)/clang") }) else {
            throw TestFailure("no toolchain clang next to swift on PATH")
        }
        let lib = URL(fileURLWithPath: bin).deletingLastPathComponent().appendingPathComponent("lib/swift").path
        let path = scratch.appendingPathComponent("\(name).c")
        try source.write(to: path, atomically: true, encoding: .utf8)
        let output = scratch.appendingPathComponent(name).path
        let result = try ProcessRunner.run("\(bin)/clang", ["-O2", "-g", "-I", lib, "-o", output, path.path, "-L", "\(lib)/linux",
                                                            "-ldispatch", "-lpthread", "-Wl,-rpath,\(lib)/linux"])
        guard result.status == 0 else { throw TestFailure("clang failed: \(result.stderr)") }
        return output
    }

    static let sources: [String: String] = [
        // exec_chain GEN PIDFILE: a thread named "execer" spins 110 ms, then
        // calls execve (a non-leader: its tid becomes the pid) to run the
        // next generation; generation 0 prints "done" and exits 7.
        "exec_chain": #"""
        #define _GNU_SOURCE
        #include <pthread.h>
        #include <stdint.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <sys/prctl.h>
        #include <time.h>
        #include <unistd.h>
        static char **args;
        static int gen;
        static uint64_t now_ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000ull + t.tv_nsec; }
        static void *sleeper(void *a) { (void)a; for (;;) { struct timespec ts = {0, 5000000}; nanosleep(&ts, NULL); } return NULL; }
        __attribute__((noinline)) void spin_then_exec(void) {
            volatile uint64_t h = 0;
            uint64_t end = now_ns() + 110000000ull;
            while (now_ns() < end) h++;
            char next[16];
            snprintf(next, sizeof next, "%d", gen - 1);
            char *argv[] = { args[0], next, args[2], NULL };
            execv("/proc/self/exe", argv);
            _exit(99);
        }
        static void *execer(void *a) {
            (void)a;
            prctl(PR_SET_NAME, "execer");
            struct timespec ts = {0, 20000000}; // named before it gets busy: attach picks it up by name
            nanosleep(&ts, NULL);
            spin_then_exec();
            return NULL;
        }
        int main(int argc, char **argv) {
            if (argc < 3) return 2;
            args = argv;
            gen = atoi(argv[1]);
            char line[32];
            int n = snprintf(line, sizeof line, gen ? "gen %d\n" : "done\n", gen);
            (void)!write(1, line, n);
            if (gen == 0) return 7;
            FILE *f = fopen(argv[2], "w");
            if (f) { fprintf(f, "%d\n", (int)getpid()); fclose(f); }
            pthread_t a, b;
            // Forty threads for execve to end (de_thread): it stays inside
            // execve longer, so more samples meet it.
            for (int i = 0; i < 40; i++) pthread_create(&a, NULL, sleeper, NULL);
            pthread_create(&b, NULL, execer, NULL);
            pthread_join(b, NULL);
            return 1;
        }
        """#,
        // sigstorm PIDFILE: one thread in epoll_wait (a 300 ms timerfd with
        // timeout -1, then a 300 ms timeout), ten times, while a helper
        // process floods it with signals it ignores (SIGWINCH, SIGURG, SIGCHLD
        // by default, SIGUSR2 by SIG_IGN) and short-lived children exit during
        // each wait. stdout: each wait's result; stderr: its length in ms.
        "sigstorm": #"""
        #define _GNU_SOURCE
        #include <errno.h>
        #include <signal.h>
        #include <stdint.h>
        #include <stdio.h>
        #include <sys/epoll.h>
        #include <sys/timerfd.h>
        #include <sys/wait.h>
        #include <time.h>
        #include <unistd.h>
        static uint64_t now_ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000ull + t.tv_nsec; }
        int main(int argc, char **argv) {
            if (argc < 2) return 2;
            signal(SIGUSR2, SIG_IGN);
            pid_t parent = getpid();
            pid_t helper = fork();
            if (helper == 0) {
                for (;;) {
                    if (getppid() != parent) _exit(0);
                    kill(parent, SIGWINCH); kill(parent, SIGURG); kill(parent, SIGUSR2); kill(parent, SIGCHLD);
                    struct timespec ts = {0, 100000};
                    nanosleep(&ts, NULL);
                }
            }
            FILE *f = fopen(argv[1], "w");
            if (f) { fprintf(f, "%d\n", (int)getpid()); fclose(f); }
            int ep = epoll_create1(EPOLL_CLOEXEC);
            int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
            struct epoll_event ev = {.events = EPOLLIN, .data.fd = tfd};
            epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
            int eintr = 0;
            for (int i = 0; i < 10; i++) {
                pid_t kids[3];
                for (int k = 0; k < 3; k++) {
                    kids[k] = fork();
                    if (kids[k] == 0) { struct timespec ts = {0, 50000000L * (2 * k + 1)}; nanosleep(&ts, NULL); _exit(0); }
                }
                int timeout = -1;
                uint64_t s = now_ns(); // before arming the timer: the wait is never under 300 ms
                if (i % 2 == 0) {
                    struct itimerspec its = {{0, 0}, {0, 300000000L}};
                    timerfd_settime(tfd, 0, &its, NULL);
                } else {
                    timeout = 300;
                }
                int r = epoll_wait(ep, &ev, 1, timeout);
                int err = r < 0 ? errno : 0;
                if (err == EINTR) eintr++;
                printf("%s %d %d\n", timeout < 0 ? "timer" : "timeout", r, err);
                fprintf(stderr, "%.3f\n", (now_ns() - s) / 1e6);
                uint64_t x;
                (void)!read(tfd, &x, sizeof x);
                for (int k = 0; k < 3; k++) waitpid(kids[k], NULL, 0);
            }
            kill(helper, SIGKILL);
            waitpid(helper, NULL, 0);
            printf("EINTR %d\n", eintr);
            return 0;
        }
        """#,
        // vfork_wait PIDFILE: the main thread waits 2.5 s in vfork (state D:
        // no ptrace stop can land until the child exits).
        "vfork_wait": #"""
        #define _GNU_SOURCE
        #include <stdio.h>
        #include <sys/syscall.h>
        #include <sys/wait.h>
        #include <time.h>
        #include <unistd.h>
        int main(int argc, char **argv) {
            if (argc < 2) return 2;
            FILE *f = fopen(argv[1], "w");
            if (f) { fprintf(f, "%d\n", (int)getpid()); fclose(f); }
            pid_t c = vfork();
            if (c == 0) {
                struct timespec ts = {2, 500000000L};
                syscall(SYS_nanosleep, &ts, NULL);
                _exit(0);
            }
            int status = -1;
            waitpid(c, &status, 0);
            printf("vfork done %d\n", status);
            return 0;
        }
        """#,
        // mainq_lock PIDFILE: dispatchMain(); at 200 ms a main-queue block
        // waits ~400 ms for a mutex another thread holds until 600 ms
        // (stdout: "lock-wait <ms>"), then the program exits 300 ms later.
        "mainq_lock": #"""
        #define _GNU_SOURCE
        #include <dispatch/dispatch.h>
        #include <pthread.h>
        #include <stdint.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <time.h>
        #include <unistd.h>
        static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
        static uint64_t now_ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000ull + t.tv_nsec; }
        static void *holder(void *a) {
            (void)a;
            struct timespec ts = {0, 600000000L};
            nanosleep(&ts, NULL);
            pthread_mutex_unlock(&lock);
            return NULL;
        }
        static void finish(void *c) { (void)c; exit(0); }
        __attribute__((noinline)) void wait_for_cache_lock(void *c) {
            (void)c;
            uint64_t s = now_ns();
            pthread_mutex_lock(&lock);
            pthread_mutex_unlock(&lock);
            printf("lock-wait %.1f\n", (now_ns() - s) / 1e6);
            fflush(stdout);
            dispatch_after_f(dispatch_time(DISPATCH_TIME_NOW, 300000000LL), dispatch_get_main_queue(), NULL, finish);
        }
        int main(int argc, char **argv) {
            if (argc < 2) return 2;
            pthread_mutex_lock(&lock); // released by holder at 600 ms
            pthread_t h;
            pthread_create(&h, NULL, holder, NULL);
            FILE *f = fopen(argv[1], "w");
            if (f) { fprintf(f, "%d\n", (int)getpid()); fclose(f); }
            dispatch_after_f(dispatch_time(DISPATCH_TIME_NOW, 200000000LL), dispatch_get_main_queue(), NULL, wait_for_cache_lock);
            dispatch_main();
        }
        """#,
        // tracer TID MS: another tracer (a debugger, strace) holding one
        // thread: seizes it (no stop) for MS ms, then exits, which detaches it.
        "tracer": #"""
        #define _GNU_SOURCE
        #include <stdio.h>
        #include <stdlib.h>
        #include <sys/ptrace.h>
        #include <unistd.h>
        int main(int argc, char **argv) {
            if (argc < 3) return 2;
            // hangwatch may hold the thread for a sample right now: try again.
            int tries = 0;
            while (ptrace(PTRACE_SEIZE, atoi(argv[1]), 0, 0) != 0)
                if (++tries == 200) { perror("seize"); return 1; } else usleep(1000);
            usleep(atoi(argv[2]) * 1000);
            return 0;
        }
        """#,
        // churn PIDFILE SECONDS: threads named "job", one after another, each
        // busy 27 ms (12 asleep, 15 spinning) then gone.
        "churn": #"""
        #define _GNU_SOURCE
        #include <pthread.h>
        #include <stdint.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <sys/prctl.h>
        #include <time.h>
        #include <unistd.h>
        static uint64_t now_ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000ull + t.tv_nsec; }
        static void *job(void *a) {
            (void)a;
            prctl(PR_SET_NAME, "job");
            struct timespec ts = {0, 12000000}; // named before the next scan: attach watches it
            nanosleep(&ts, NULL);
            volatile uint64_t h = 0;
            uint64_t end = now_ns() + 15000000ull;
            while (now_ns() < end) h++;
            return NULL;
        }
        int main(int argc, char **argv) {
            if (argc < 3) return 2;
            FILE *f = fopen(argv[1], "w");
            if (f) { fprintf(f, "%d\n", (int)getpid()); fclose(f); }
            uint64_t end = now_ns() + (uint64_t)(atof(argv[2]) * 1e9);
            int jobs = 0;
            while (now_ns() < end) {
                pthread_t t;
                pthread_create(&t, NULL, job, NULL);
                pthread_join(t, NULL);
                jobs++;
            }
            printf("jobs done\n");
            fprintf(stderr, "%d jobs\n", jobs);
            return 0;
        }
        """#,
    ]
}
