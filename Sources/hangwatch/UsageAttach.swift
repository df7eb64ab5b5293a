import HangWatch
import HangWatchCapture

extension Usage {
    static var attach: String { """
    Usage: hangwatch attach PID [options]

    Watches the event loop of a process that is already running, then writes
    the same report as 'run' (same formats and gates; 'report' and 'diff'
    read its JSON). Nothing is loaded into the process and no signal is sent
    to it: the heartbeat is read from /proc every millisecond, and during a
    hang a running thread is stopped for about 50 µs per sample with ptrace
    (a blocked one is read without stopping it). The attach ends after
    --duration, on Ctrl-C, or when the process exits; the report is written
    in every case.

    Options:
    \([CaptureOptions.duration, CaptureOptions.thread, CaptureOptions.hangMs, CaptureOptions.reportMs, CaptureOptions.sampleHz,
       CaptureOptions.sourceLines].map(\.helpLines).joined(separator: "\n"))
    \(OutputOptions.outputHelp("the report ", otherwise: "stderr"))
    \(OutputOptions.reportFormatHelp)
      --fail-on-hang[=MS]  exit 4 when a hang lasted MS or more (default: --report-ms)
      -h, --help         show this help

    As hangs happen (as with 'run'):
    \(CaptureOptions.live.map(\.helpLines).joined(separator: "\n"))

    Exit status: 0; 4 when the hang gate failed; 69 when there is no such
    process; 77 when attaching is not allowed (another user's process, or
    Yama's kernel.yama.ptrace_scope); 2 for a bad command line; 73 when the
    report cannot be written; 70 when hangwatch itself fails.
    """ }

    static let dump = """
    Usage: hangwatch dump PID [--format text|json] [-o FILE]

    Prints every thread's stack once: thread id, name, state, the syscall it is
    blocked in, and its frames (innermost first) with demangled Swift names.
    Blocked threads are read from /proc without stopping them; a running
    thread is stopped once, for tens of microseconds.

    JSON: {"pid", "executable", "captureMs", "totalMs", "stoppedThreads",
    "longestStopUs", "threads": [{"tid", "name", "state", "syscall", "capture",
    "frames": [{"symbol", "image"}], "error"}]}.

    Exit status: 0; 69 when there is no such process; 77 when attaching is not
    allowed; 2 for a bad command line; 73 when the output cannot be written.
    """
}
