// Frame-loop statistics: the hitch ratio with its band colour, the counts and
// the frame-time histogram as small bars. The report keeps no per-frame
// data, so hitches appear here as numbers rather than on the timeline.

import HangWatchModel

enum HTMLFramesSection {
    /// Height in pixels of the tallest histogram bar.
    static let histogramHeight = 64.0

    static func render(_ report: Report) -> String {
        let loops = report.frameLoops.isEmpty ? [report.frames].compactMap { $0 } : report.frameLoops
        guard !loops.isEmpty else { return "" }
        return """
        <section id="frames">
        <h2>Frames <span class="h2-detail">hitch ratio: time past the deadline per second of frames</span></h2>
        \(loops.map(panel).joined(separator: "\n"))
        </section>
        """
    }

    /// The band's CSS class; an unknown band from a newer file gets a neutral colour.
    static func bandClass(_ band: String) -> String {
        ["good", "warning", "critical"].contains(band) ? "band-\(band)" : "band-unknown"
    }

    private static func panel(_ stats: FrameStats) -> String {
        let counts: [(String, String)] = [
            ("frames", "\(stats.frameCount)"), ("hitches", "\(stats.hitchCount)"),
            ("missed frames", "\(stats.missedFrames)"), ("hitch time", NumberFormat.ms(stats.hitchMs)),
            ("p50", NumberFormat.ms(stats.p50Ms)), ("p95", NumberFormat.ms(stats.p95Ms)),
            ("p99", NumberFormat.ms(stats.p99Ms)), ("max", NumberFormat.ms(stats.maxMs)),
        ]
        let countItems = counts.map { "<div><dt>\(HTMLText.escape($0.0))</dt><dd>\(HTMLText.escape($0.1))</dd></div>" }
        return """
        <div class="frame-panel">
        <div class="frame-panel-title"><b>\(HTMLText.escape(stats.name))</b> \
        <span class="muted">deadline \(HTMLText.escape(NumberFormat.thresholdMs(stats.deadlineMs)))</span></div>
        <div class="frame-panel-body">
        <div class="hitch-ratio \(bandClass(stats.band))"><div class="hitch-value">\
        \(NumberFormat.fixed(stats.hitchRatioMsPerS, 1)) <small>ms/s</small></div>\
        <div class="hitch-band">\(HTMLText.escape(stats.band))</div></div>
        <dl class="frame-counts">\(countItems.joined())</dl>
        \(histogram(stats))
        </div></div>
        """
    }

    private static func histogram(_ stats: FrameStats) -> String {
        guard !stats.histogram.isEmpty else { return "" }
        let tallest = Double(stats.histogram.map(\.count).max() ?? 0)
        var lowerBound = 0.0
        let bars = stats.histogram.map { bucket -> String in
            let height = tallest > 0 && bucket.count > 0 ? max(4, histogramHeight * Double(bucket.count) / tallest) : 0
            // A bucket whose frames all took longer than the deadline holds only hitches.
            let late = lowerBound >= stats.deadlineMs - 0.001
            let bound = bucket.upToMs.map { "≤ " + NumberFormat.fixed($0, 1) } ?? "> " + NumberFormat.fixed(lowerBound, 1)
            lowerBound = bucket.upToMs ?? lowerBound
            let title = HTMLText.escape("\(bucket.count) frames \(bound) ms")
            return "<div class=\"bucket\(late ? " late" : "")\" title=\"\(title)\">"
                + "<span class=\"bucket-count\">\(bucket.count)</span>"
                + "<span class=\"bucket-bar\" style=\"height:\(NumberFormat.fixed(height, 1))px\"></span>"
                + "<span class=\"bucket-bound\">\(bound)</span></div>"
        }
        return """
        <div class="histogram" aria-label="frame-time histogram in ms">\
        <div class="histogram-title">frame time (ms)</div>\
        <div class="histogram-bars">\(bars.joined())</div></div>
        """
    }
}
