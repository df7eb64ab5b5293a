// The filters of one `hangwatch report` invocation, applied in a fixed order.

import HangWatchModel

/// A combination of report filters. Unset options filter nothing.
///
/// Order matters and is fixed so the result never depends on the order of the
/// command-line flags: first the hangs are chosen (thread, minimum duration,
/// focus symbol, then the N longest of what is left), then the trees are
/// reshaped (focus re-roots them, system frames are folded, and inversion
/// comes last because it needs the complete, unpruned top-down tree).
package struct ReportFilterSet: Sendable, Equatable, CustomStringConvertible {
    package var minimumMs: Double?
    package var top: Int?
    package var inverted = false
    package var hideSystem = false
    package var focus: String?
    package var thread: String?

    package init(minimumMs: Double? = nil, top: Int? = nil, inverted: Bool = false, hideSystem: Bool = false,
                focus: String? = nil, thread: String? = nil) {
        self.minimumMs = minimumMs
        self.top = top
        self.inverted = inverted
        self.hideSystem = hideSystem
        self.focus = focus
        self.thread = thread
    }

    package var isEmpty: Bool { self == ReportFilterSet() }

    /// The filtered report, with a note saying which filters made it, so a
    /// re-rendered report never passes for the complete one.
    package func apply(to report: Report) -> Report {
        guard !isEmpty else { return report }
        var result = report
        if let thread { result = result.keepingThread(thread) }
        if let minimumMs { result = result.keepingHangs(atLeastMs: minimumMs) }
        if let focus { result = result.focused(on: focus) }
        if let top { result = result.keepingLongestHangs(top) }
        if hideSystem { result = result.hidingSystemFrames() }
        if inverted { result = result.invertingCallTrees() }
        result.notes.append("filtered with \(description); the summary counts only the hangs kept "
                            + "(\(result.hangs.count) of \(report.hangs.count))")
        return result
    }

    /// The filters as command-line flags: `--thread worker --min-ms 300 --top 2`.
    package var description: String {
        var flags: [String] = []
        if let thread { flags.append("--thread \(thread)") }
        if let minimumMs { flags.append("--min-ms \(Self.number(minimumMs))") }
        if let focus { flags.append("--focus \(focus)") }
        if let top { flags.append("--top \(top)") }
        if hideSystem { flags.append("--hide-system") }
        if inverted { flags.append("--inverted") }
        return flags.joined(separator: " ")
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
