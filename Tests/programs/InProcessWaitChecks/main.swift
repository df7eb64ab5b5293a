// What a program sees of the waits the HangWatch library redirects in
// process (epoll_wait, epoll_pwait, poll, ppoll, usleep, nanosleep,
// clock_nanosleep), one line per check (`<check> key=value ...`, keys ending
// in "ms" are timings). Run plain and with `--library REPORT.json`, every value must
// agree. The checks run on a loop thread the watcher's thread list names
// (`checks-loop`, so its waits are heartbeats and blocked calls) and again on
// the main thread; between them the loop thread is busy long enough to be
// sampled, so waits are also entered straight out of a sampled hang.
// Exit status 3.
import CEventLoopShim
import HangWatch
#if canImport(Glibc)
import Glibc
#endif

func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

func ms(since start: UInt64) -> Int { Int((now() - start) / 1_000_000) }

/// One page the kernel refuses to read or write: pointers into it give EFAULT.
nonisolated(unsafe) let unreadable = mmap(nil, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)!

/// A program handler for SIGUSR1 that only counts.
nonisolated(unsafe) var handled: Int32 = 0

@inline(never) func spin(ms: Int) -> UInt64 {
    let start = now()
    var x: UInt64 = 1
    while now() - start < UInt64(ms) * 1_000_000 { x = x &* 6364136223846793005 &+ 1 }
    return x
}

/// Sends SIGUSR1 to `thread` after `ms`, from a thread of its own.
func interrupt(_ thread: pthread_t, afterMs ms: UInt32) {
    let box = Unmanaged.passRetained(Box(thread: thread, ms: ms))
    var helper = pthread_t()
    pthread_create(&helper, nil, { raw in
        let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
        usleep(box.ms * 1000)
        pthread_kill(box.thread, SIGUSR1)
        return nil
    }, box.toOpaque())
    pthread_detach(helper)
}

final class Box { let thread: pthread_t; let ms: UInt32; init(thread: pthread_t, ms: UInt32) { self.thread = thread; self.ms = ms } }

func checks(_ place: String) {
    let epfd = event_loop_create()
    let efd = event_loop_wake_fd()
    _ = event_loop_add(epfd, efd, EVENT_LOOP_READABLE)
    var readyFds = [Int32](repeating: 0, count: 4), readyEvents = [UInt32](repeating: 0, count: 4)
    func epollWait(_ fd: Int32, _ timeout: Int32) -> Int32 { event_loop_wait(fd, &readyFds, &readyEvents, 4, timeout) }
    func epollPwait(_ fd: Int32, _ timeout: Int32) -> Int32 { event_loop_pwait(fd, &readyFds, &readyEvents, 4, timeout) }

    var start = now()
    errno = 77
    var rc = epollWait(epfd, 50)
    print("\(place)-epoll-timeout rc=\(rc) errno=\(errno) elapsedms=\(ms(since: start))")

    var one: UInt64 = 1
    _ = write(efd, &one, 8)
    errno = 77
    rc = epollWait(epfd, 1000)
    print("\(place)-epoll-ready rc=\(rc) errno=\(errno) fd=\(readyFds[0] == efd)")
    _ = read(efd, &one, 8)

    rc = epollPwait(-1, 10)
    print("\(place)-epoll-badfd rc=\(rc) errno=\(errno)")

    start = now()
    interrupt(pthread_self(), afterMs: 40)
    rc = epollWait(epfd, 500)
    print("\(place)-epoll-signal rc=\(rc) errno=\(errno) elapsedms=\(ms(since: start))")

    var fds = [pollfd(fd: efd, events: Int16(POLLIN), revents: 0)]
    start = now()
    errno = 77
    rc = poll(&fds, 1, 30)
    print("\(place)-poll-timeout rc=\(rc) errno=\(errno) elapsedms=\(ms(since: start))")
    rc = poll(unreadable.assumingMemoryBound(to: pollfd.self), 1, 30)
    print("\(place)-poll-efault rc=\(rc) errno=\(errno)")

    var zero = timespec(tv_sec: 0, tv_nsec: 0)
    errno = 77
    rc = event_loop_ppoll(&fds, 1, &zero)
    print("\(place)-ppoll-zero rc=\(rc) errno=\(errno)")
    var short = timespec(tv_sec: 0, tv_nsec: 20_000_000)
    start = now()
    rc = event_loop_ppoll(&fds, 1, &short)
    print("\(place)-ppoll-timeout rc=\(rc) errno=\(errno) elapsedms=\(ms(since: start))")

    start = now()
    errno = 77
    rc = usleep(20_000)
    print("\(place)-usleep rc=\(rc) errno=\(errno) elapsedms=\(ms(since: start))")
    rc = nanosleep(unreadable.assumingMemoryBound(to: timespec.self), nil)
    print("\(place)-nanosleep-efault rc=\(rc) errno=\(errno)")
    rc = clock_nanosleep(CLOCK_MONOTONIC, 0, unreadable.assumingMemoryBound(to: timespec.self), nil)
    print("\(place)-clock-nanosleep-efault rc=\(rc)")
    var long = timespec(tv_sec: 0, tv_nsec: 400_000_000), left = timespec()
    start = now()
    interrupt(pthread_self(), afterMs: 40)
    rc = nanosleep(&long, &left)
    let leftMs = (Int(left.tv_nsec) / 1_000_000 + 5) / 10 * 10
    print("\(place)-nanosleep-signal rc=\(rc) errno=\(errno) elapsedms=\(ms(since: start)) leftms=\(leftMs)")

    // Straight out of a sampled hang.
    _ = spin(ms: 150)
    start = now()
    rc = epollWait(epfd, 30)
    print("\(place)-epoll-after-hang rc=\(rc) errno=\(errno) elapsedms=\(ms(since: start))")
    close(efd)
    close(epfd)
}

/// Global functions, not closures of the top-level code: those would be the main actor's.
func countSignal(_: Int32) { handled += 1 }
func loopThread(_: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    event_loop_name_thread("checks-loop")
    checks("loop")
    return nil
}

var action = sigaction()
action.__sigaction_handler.sa_handler = countSignal
sigemptyset(&action.sa_mask)
action.sa_flags = 0
sigaction(SIGUSR1, &action, nil)
// A program started from a thread that blocks SIGUSR1 (a test runner's
// dispatch worker) inherits the mask: unblocked, or no check is interrupted.
var usr1 = sigset_t()
sigemptyset(&usr1)
sigaddset(&usr1, SIGUSR1)
pthread_sigmask(SIG_UNBLOCK, &usr1, nil)

if let flag = CommandLine.arguments.firstIndex(of: "--library"), flag + 1 < CommandLine.arguments.count {
    var configuration = HangWatcher.Configuration()
    configuration.capture.threadPatterns = ["main", "checks-loop"]
    configuration.reportPath = CommandLine.arguments[flag + 1]
    configuration.reportFormat = .json
    do { try HangWatcher.start(configuration) } catch { print("start failed: \(error)"); exit(1) }
}

var loop = pthread_t()
pthread_create(&loop, nil, loopThread, nil)
pthread_join(loop, nil)
checks("main")
print("handlers count=\(handled)")
exit(3)
