// The top of the page: what ran, how it ended, the summary numbers, the
// thresholds and the notes. Static markup, so it reads even without script.

import HangWatchModel

enum HTMLHeaderSection {
    static func render(_ report: Report) -> String {
        let process = report.process
        let program = TextLayout.basename(process.executable)
        let command = ([process.executable] + process.arguments).joined(separator: " ")
        return """
        <header>
        <div class="eyebrow">hangwatch report</div>
        <h1>\(HTMLText.escape(program))</h1>
        <div class="command" title="command line">\(HTMLText.escape(command))</div>
        <div class="facts">\(facts(process).map { fact($0.label, $0.value) }.joined())</div>
        <div class="cards">\(cards(report).joined())</div>
        <div class="thresholds">\(thresholds(report.thresholds).map { fact($0.label, $0.value) }.joined())</div>
        \(notes(report.notes))
        </header>
        """
    }

    /// How the program ended, in words.
    static func exitDescription(_ process: ProcessInfoRecord) -> String {
        if let signal = process.signal { return "killed by \(SignalNames.describe(signal))" }
        if let code = process.exitCode { return "exited with status \(code)" }
        return "exit unknown"
    }

    private static func facts(_ process: ProcessInfoRecord) -> [(label: String, value: String)] {
        var facts = [("pid", "\(process.pid)"), ("", exitDescription(process)),
                     ("wall time", NumberFormat.seconds(fromMs: process.wallMs))]
        if let user = process.cpuUserMs { facts.append(("CPU user", NumberFormat.ms(user))) }
        if let system = process.cpuSystemMs { facts.append(("CPU system", NumberFormat.ms(system))) }
        if let rss = process.peakRssKb { facts.append(("peak RSS", NumberFormat.fixed(Double(rss) / 1024, 1) + " MiB")) }
        return facts
    }

    private static func cards(_ report: Report) -> [String] {
        let summary = report.summary
        let share = NumberFormat.percent(summary.totalHangMs, of: report.process.wallMs)
        return [
            card("Hangs", "\(summary.hangCount)", "≥ \(NumberFormat.thresholdMs(report.thresholds.hangMs))"),
            card("Reported", "\(summary.reportedHangCount)", "with a call tree"),
            card("Longest", NumberFormat.ms(summary.longestHangMs), "single hang"),
            card("Total", NumberFormat.ms(summary.totalHangMs), "\(share) of the run"),
        ]
    }

    private static func thresholds(_ thresholds: Thresholds) -> [(label: String, value: String)] {
        var items = [("hang", "≥ " + NumberFormat.thresholdMs(thresholds.hangMs)),
                     ("call tree", "≥ " + NumberFormat.thresholdMs(thresholds.reportMs)),
                     ("sampling", NumberFormat.fixed(thresholds.sampleHz, 0) + " Hz")]
        if let frame = thresholds.frameMs { items.append(("frame deadline", NumberFormat.thresholdMs(frame))) }
        return items
    }

    private static func notes(_ notes: [String]) -> String {
        guard !notes.isEmpty else { return "" }
        let items = notes.map { "<li>\(HTMLText.escape($0))</li>" }.joined()
        return "<div class=\"notes\"><div class=\"notes-title\">Notes</div><ul>\(items)</ul></div>"
    }

    /// A labelled value; an empty label leaves the value to speak for itself ("exited with status 0").
    private static func fact(_ label: String, _ value: String) -> String {
        let labelMarkup = label.isEmpty ? "" : "<span class=\"fact-label\">\(HTMLText.escape(label))</span> "
        return "<span class=\"fact\">\(labelMarkup)<b>\(HTMLText.escape(value))</b></span>"
    }

    private static func card(_ label: String, _ value: String, _ detail: String) -> String {
        "<div class=\"card\"><div class=\"card-label\">\(HTMLText.escape(label))</div>"
            + "<div class=\"card-value\">\(HTMLText.escape(value))</div>"
            + "<div class=\"card-detail\">\(HTMLText.escape(detail))</div></div>"
    }
}
