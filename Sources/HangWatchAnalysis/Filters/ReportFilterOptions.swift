// The options of `hangwatch report` that narrow a report down, defined once:
// the parser, `--help` and the man page read them from here.

import HangWatchCapture

/// Every filter `ReportFilterSet` holds, as an option: flag, limits and help.
package enum ReportFilterOptions {
    package static let minMs = OptionSpec(
        flag: "--min-ms", valueName: "MS", environment: nil, value: .number(0...3_600_000, defaultValue: nil),
        help: "keep only hangs that lasted MS or more")
    package static let top = OptionSpec(
        flag: "--top", valueName: "N", environment: nil, value: .integer(1...1_000_000, defaultValue: nil),
        help: "keep only the N longest hangs")
    package static let thread = OptionSpec(
        flag: "--thread", valueName: "T", environment: nil, value: .text,
        help: "keep only hangs of thread T: a tid, or a name (exact or glob)")
    package static let focus = OptionSpec(
        flag: "--focus", valueName: "SYMBOL", environment: nil, value: .text,
        help: """
        keep only the call subtrees rooted at frames whose symbol
        contains SYMBOL, and only the hangs that have one
        """)
    package static let hideSystem = OptionSpec(
        flag: "--hide-system", valueName: nil, environment: nil, value: .presence,
        help: """
        fold system-library frames (libc, the Swift runtime,
        Foundation, the loader, ...) into their callers
        """)
    package static let inverted = OptionSpec(
        flag: "--inverted", valueName: nil, environment: nil, value: .presence,
        help: "show call trees bottom-up: where the time ends, then callers")

    /// In the help's order.
    package static let all = [minMs, top, thread, focus, hideSystem, inverted]
}
