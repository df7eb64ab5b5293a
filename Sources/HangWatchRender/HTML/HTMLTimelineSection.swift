// The timeline's frame: a heading, the element the page script draws the
// SVG into, and a legend of the colours it uses.

import HangWatchModel

enum HTMLTimelineSection {
    static func render(_ report: Report) -> String {
        let reportMs = NumberFormat.thresholdMs(report.thresholds.reportMs)
        let severeMs = NumberFormat.thresholdMs(HTMLSeverity.severeMs)
        var legend = [
            swatch("sev-severe", "severe ≥ \(severeMs)"),
            swatch("sev-reported", "reported ≥ \(reportMs)"),
            swatch("sev-micro", "micro-hang < \(reportMs)"),
            swatch("in-progress", "still running at exit"),
        ]
        if report.launch != nil { legend.append(swatch("launch", "launch (start to first wait)")) }
        // A hang with a cause is coloured by it instead of by its length.
        for kind in HangCause.Kind.allCases where report.hangs.contains(where: { $0.cause?.kind == kind }) {
            legend.append(swatch("cause-" + kind.rawValue, "cause: " + kind.rawValue))
        }
        return """
        <section id="timeline-section">
        <h2>Timeline <span class="h2-detail">process start to exit · one row per watched thread · \
        click a bar to jump to its call tree</span></h2>
        <div id="timeline" class="timeline"><noscript>The timeline is drawn by the page script.</noscript></div>
        <div class="legend">\(legend.joined())</div>
        </section>
        """
    }

    private static func swatch(_ cssClass: String, _ label: String) -> String {
        "<span class=\"legend-item\"><span class=\"swatch \(cssClass)\"></span>\(HTMLText.escape(label))</span>"
    }
}
