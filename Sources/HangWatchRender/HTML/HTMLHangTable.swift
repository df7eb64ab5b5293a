// Every hang in one table, with links to the call trees of reported ones.

import HangWatchModel

enum HTMLHangTable {
    static func render(_ report: Report) -> String {
        guard !report.hangs.isEmpty else {
            return """
            <section id="hangs"><h2>Hangs</h2>
            <p class="empty">No hang of \(HTMLText.escape(NumberFormat.thresholdMs(report.thresholds.hangMs))) \
            or more was seen.</p></section>
            """
        }
        let rows = report.hangs.map(row).joined(separator: "\n")
        return """
        <section id="hangs"><h2>Hangs</h2>
        <table class="hang-table">
        <thead><tr><th>#</th><th>thread</th><th class="num">start</th><th class="num">duration</th>\
        <th>severity</th><th>kind</th><th class="num">samples</th><th>call tree</th></tr></thead>
        <tbody>
        \(rows)
        </tbody></table></section>
        """
    }

    /// The id the timeline links to for a hang without a call tree.
    static func rowID(_ hang: Hang) -> String { "hang-row-\(hang.id)" }

    private static func row(_ hang: Hang) -> String {
        let severity = HTMLSeverity(hang)
        var status = "<span class=\"chip \(severity.cssClass)\">\(severity.label)</span>"
        if hang.inProgress { status += " <span class=\"chip in-progress-chip\">in progress</span>" }
        var kind = hang.kind.rawValue
        if let call = hang.blockedIn { kind += " · in " + call }
        if let owner = hang.lockOwner { kind += " · held by " + (owner.name.isEmpty ? "tid \(owner.tid)" : owner.name) }
        let coverage = NumberFormat.percent(hang.sampleCoverage, of: 1, decimals: 0)
        let samples = hang.sampleCount > 0 ? "\(hang.sampleCount) (\(coverage))" : "—"
        let tree = HTMLFlameSection.hasFlameGraph(hang)
            ? "<a href=\"#\(HTMLFlameSection.sectionID(hang))\">flame graph ↓</a>" : "<span class=\"muted\">—</span>"
        let thread = "\(hang.thread.name) (\(hang.thread.tid))"
        return "<tr id=\"\(rowID(hang))\"><td>\(hang.id)</td><td>\(HTMLText.escape(thread))</td>"
            + "<td class=\"num\">\(NumberFormat.offset(fromMs: hang.startMs))</td>"
            + "<td class=\"num\"><b>\(NumberFormat.ms(hang.durationMs))</b></td>"
            + "<td>\(status)</td><td>\(HTMLText.escape(kind))</td>"
            + "<td class=\"num\">\(samples)</td><td>\(tree)</td></tr>"
    }
}
