import HangWatch
import HangWatchAnalysis
import HangWatchCapture
import HangWatchModel
import HangWatchRender

enum Usage {
    /// "text, json, markdown, ..." for every format.
    static var reportFormats: String { ReportFormat.allCases.map(\.rawValue).joined(separator: ", ") }

    static let top = """
    hangwatch \(HangWatchVersion.string): find and explain hangs of a program's main loop on Linux.

    Usage:
      hangwatch run [options] -- PROGRAM [ARGS...]   run PROGRAM and report its hangs
      hangwatch attach PID [options]                 watch a running process, report its hangs
      hangwatch dump PID [--format text|json]        print every thread's stack once
      hangwatch report FILE.json [options]           re-render a saved JSON report, filtered
      hangwatch diff BEFORE.json AFTER.json          compare two saved JSON reports
      hangwatch help [COMMAND]                       this overview, or a command's options
      hangwatch --version                            version, git revision, report schema

    Run 'hangwatch help COMMAND' or 'hangwatch COMMAND --help' for the options
    of a command; 'man hangwatch' for all of them.
    """

    static let help = """
    Usage: hangwatch help [COMMAND | --man]

    Prints the overview of the commands, or the options of COMMAND (run,
    attach, dump, report, diff, help): the same text as 'hangwatch COMMAND --help'.
    With --man, prints the manual page hangwatch.1 (roff), made of these texts.

    Exit status: 0; 2 for an unknown command.
    """

    static var run: String { """
    Usage: hangwatch run [options] -- PROGRAM [ARGS...]

    Runs PROGRAM with the hangwatch agent preloaded (no code change needed) and,
    when it exits, reports every hang of its main loop: time the loop was busy
    instead of waiting for events. Hangs that reach the report threshold come
    with a call tree of what the thread was doing. The report goes to stderr
    unless -o is given; the program's stdout is left untouched.

    Options:
    \(CaptureOptions.capture.map(\.helpLines).joined(separator: "\n"))
    \(OutputOptions.outputHelp("the report ", otherwise: "stderr"))
    \(OutputOptions.reportFormatHelp); save json to
                         re-render or compare it later with 'report' and 'diff'
      -h, --help         show this help

    As hangs happen (for services that run for weeks):
    \(CaptureOptions.live.map(\.helpLines).joined(separator: "\n"))

    CI gates (checked after the report is written):
      --fail-on-hang[=MS]         fail when a hang lasted MS or more (default: the
                                  --report-ms threshold); write the limit with '=';
                                  a hang spent mostly stopped (cause 'stopped':
                                  SIGSTOP, Ctrl-Z, a debugger) does not count
      --count-stopped             count such hangs for --fail-on-hang too
      --fail-on-hitch-ratio=X     fail when the frame loop hitched more than X ms per
                                  second; needs --frame-ms

    Exit status: the program's own (128+N if killed by signal N), unless a gate
    failed: then 4 for a hang gate, 5 for a hitch-ratio gate, 6 when no frame was
    measured for the hitch-ratio gate (the first in this order wins; each failed
    gate prints one line on stderr). 2 for a bad command line; 126 when PROGRAM
    cannot be executed; 127 when it cannot be found; 73 when the report or the
    --events file cannot be written; 70 when hangwatch itself fails.
    """ }

    static var report: String { """
    Usage: hangwatch report FILE.json|FILE.jsonl [options]

    Reads a report saved with 'hangwatch run --format json', or a stream of hangs
    written with 'run --events' ('-' reads standard input), and renders it again,
    in another format or narrowed down. The output goes to stdout unless -o is
    given.

    Options:
    \(OutputOptions.reportFormatHelp)
    \(OutputOptions.outputHelp("", otherwise: "stdout"))
    \(ReportFilterOptions.all.map(\.helpLines).joined(separator: "\n"))
      -h, --help         show this help

    Hangs are chosen first (--thread, --min-ms, --focus, then --top), then the
    trees are reshaped (--focus, --hide-system, then --inverted). The summary
    counts only the hangs kept, and a note lists the filters.

    Exit status: 0; 2 for a bad command line; 65 when FILE is not a readable
    report (malformed, truncated, another schema version); 66 when FILE is
    missing or unreadable; 73 when the output cannot be written.
    """ }

    static let diff = """
    Usage: hangwatch diff BEFORE.json AFTER.json [options]

    Compares two reports saved with 'hangwatch run --format json', typically
    before and after a fix: hang count, reported hangs, longest hang, total hang
    time, hang rate (seconds per hour in hangs of 250 ms or more), hitch ratio,
    CPU time and peak RSS, with absolute and percent change; then the 10 symbols
    whose hang time changed most. A symbol's hang time is its inclusive time in
    the call trees of reported hangs, counted once per stack (recursion is not
    counted twice); self time is shown beside it. Frames of one call chain with
    exactly the same change (main, the run loop, a library on the way to a
    callback) share one row, under the deepest frame of the program's own code.

    Options:
      --format FORMAT    \(OutputOptions.diffFormatNames(markingDefault: true))
    \(OutputOptions.outputHelp("", otherwise: "stdout"))
      -h, --help         show this help

    JSON output (diffVersion 1): {"diffVersion", "before", "after", "metrics":
    {KEY: {"unit", "before", "after", "change", "changePercent"}}, "symbols":
    [{"symbol", "image", "beforeMs", "afterMs", "changeMs", "beforeSelfMs",
    "afterSelfMs", "selfChangeMs", "sameChange": [SYMBOL...]}]}. KEY is hangCount, reportedHangCount,
    longestHangMs, totalHangMs, hangRateSPerHour, hitchRatioMsPerS, cpuMs or
    peakRssKb; a value a report lacks is null.

    Exit status: 0; 2 for a bad command line; 65 when a file is not a readable
    report; 66 when a file is missing or unreadable; 73 when the output cannot
    be written.
    """
}
