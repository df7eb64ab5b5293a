// The list of every hang, and the per-hang section with its call tree.

import HangWatchModel

enum HangListText {
    /// One row per hang, in the order the report holds them (start time).
    static func lines(_ report: Report, width: Int) -> [String] {
        var table = TextTable(columns: [
            .init(title: "#", alignRight: true),
            .init(title: "Start", alignRight: true),
            .init(title: "Duration", alignRight: true),
            .init(title: "Thread (tid)", flexible: true, minWidth: 10),
            .init(title: "Kind", flexible: true, minWidth: 10),
            .init(title: "Samples", alignRight: true),
            .init(title: "Coverage", alignRight: true),
            .init(title: "Flags"),
        ])
        table.rows = report.hangs.map { hang in
            var flags: [String] = []
            if hang.inProgress { flags.append("in progress") }
            if hang.reported { flags.append("reported") }
            return ["#\(hang.id)", NumberFormat.offset(fromMs: hang.startMs), NumberFormat.ms(hang.durationMs),
                    PoolText.listLabel(hang.thread),
                    kind(hang), "\(hang.sampleCount)",
                    NumberFormat.percent(hang.sampleCoverage, of: 1, decimals: 0), flags.joined(separator: ", ")]
        }
        let title = "Hangs (≥ \(NumberFormat.thresholdMs(report.thresholds.hangMs)) without returning to the loop):"
        return TextLayout.wrap(title, width: width) + table.lines(width: width, margin: "  ")
    }

    /// The header of a reported hang followed by its call tree.
    static func detail(_ hang: Hang, width: Int) -> [String] {
        var header = "Hang #\(hang.id) — \(NumberFormat.ms(hang.durationMs)) on \(PoolText.threadLabel(hang.thread)), "
            + "\(kind(hang)), started \(NumberFormat.offset(fromMs: hang.startMs)), "
            + "\(hang.sampleCount) \(hang.sampleCount == 1 ? "sample" : "samples") "
            + "(\(NumberFormat.percent(hang.sampleCoverage, of: 1, decimals: 0)) coverage)"
        if hang.inProgress { header += ", still going on when the program ended" }
        var out = TextLayout.wrap(header, width: width) + HangStateText.detailLines(hang, width: width)
        if hang.poolThreads != nil {
            out += PoolText.lines(hang, width: width) // each thread's own tree, not their merge
        } else if let tree = hang.callTree {
            out += CallTreeText(width: width).lines(for: tree)
        } else {
            out.append("  no call tree: no usable samples were captured")
        }
        return out + HangStateText.ownerTreeLines(hang, width: width)
    }

    static func thread(_ thread: ThreadRef) -> String {
        thread.name.isEmpty ? "tid \(thread.tid)" : "\(thread.name) (tid \(thread.tid))"
    }

    /// "cpu", "blocked in usleep", "mixed, in poll".
    static func kind(_ hang: Hang) -> String {
        let cause = hang.cause.map { " · " + $0.kind.rawValue } ?? ""
        guard let call = hang.blockedIn, !call.isEmpty, hang.kind != .cpu else { return hang.kind.rawValue + cause }
        return (hang.kind == .blocked ? "blocked in \(call)" : "mixed, in \(call)") + cause
    }
}
