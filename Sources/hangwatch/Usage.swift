import HangWatch

enum Usage {
    static let top = """
    hangwatch \(HangWatchVersion.string): find and explain hangs of a program's main loop on Linux.

    Usage:
      hangwatch run [options] -- PROGRAM [ARGS...]   run PROGRAM and report its hangs
      hangwatch --help | --version

    Run 'hangwatch run --help' for the options.
    """

    static let run = """
    Usage: hangwatch run [options] -- PROGRAM [ARGS...]

    Runs PROGRAM with the hangwatch agent preloaded (no code change needed) and,
    when it exits, reports every hang of its main loop: time the loop was busy
    instead of waiting for events. Hangs that reach the report threshold come
    with a call tree of what the thread was doing. The report goes to stderr
    unless -o is given; the program's stdout is left untouched.

    Options:
      --hang-ms MS       busy time that counts as a hang (default 100)
      --report-ms MS     hang duration that gets a call tree (default 250, >= --hang-ms)
      --sample-hz HZ     stack samples per second during a hang (default 1000, 1...10000)
      --thread NAME      watch the event loop of threads named NAME (exact, or a glob
                         such as 'NIO-ELT-*'); repeatable; 'main' is the main thread.
                         Default: the main thread only
      --frame-ms MS      the loop is a frame loop with this deadline: count hitches
      -o, --output FILE  write the report to FILE instead of stderr
      --format FORMAT    text (default) or json
      -h, --help         show this help

    Exit status: the program's own (128+N if killed by signal N); 2 for a bad
    command line; 126 when PROGRAM cannot be executed; 127 when it cannot be
    found; 70 when hangwatch itself fails.
    """
}
