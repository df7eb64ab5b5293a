import Foundation
import HangWatchModel
import HangWatchRender

// Pages and reports shared by the HTML markup tests and the browser tests.

package enum HTMLPage {
    /// Renders `report` into `directory`/report.html; `driver` is a script appended to the body.
    package static func write(_ report: Report, in directory: URL, driver: String? = nil) throws -> URL {
        var html = HTMLReport.render(report)
        if let driver, let end = html.range(of: "</body>", options: .backwards) {
            html.replaceSubrange(end, with: "<script>\n\(driver)\n</script>\n</body>")
        }
        let page = directory.appendingPathComponent(driver == nil ? "report.html" : "report-driven-\(UUID().uuidString).html")
        try Data(html.utf8).write(to: page)
        return page
    }

    /// The text of the embedded `<script type="application/json">` element.
    package static func embeddedJSON(_ html: String) -> String? {
        guard let open = html.range(of: "id=\"\(HTMLReport.dataElementID)\">"),
              let close = html.range(of: "</script>", range: open.upperBound..<html.endIndex) else { return nil }
        return String(html[open.upperBound..<close.lowerBound])
    }

    /// A JavaScript string literal for `text` that cannot end the driver's script element.
    package static func jsString(_ text: String) throws -> String {
        let encoded = String(decoding: try JSONEncoder().encode(text), as: UTF8.self)
        return encoded.replacingOccurrences(of: "<", with: "\\u003c")
    }
}

package let hostile = "</script><img src=x onerror=alert(1)>"

/// A small report whose every text field tries to break out of the page.
package func hostileReport() -> Report {
    let leaf = CallTreeNode(symbol: hostile, image: "<iframe src=x>", weightMs: 200, selfMs: 200, sampleCount: 200, children: [])
    let root = CallTreeNode(symbol: "main", image: "app<b>", weightMs: 300, selfMs: 100, sampleCount: 300, children: [leaf])
    let thread = ThreadRef(tid: 41, name: "<svg onload=alert(3)>", role: "main-thread")
    let hang = Hang(id: 1, thread: thread, startMs: 100, durationMs: 300, reported: true, inProgress: false, kind: .blocked,
                    blockedIn: "<script>alert(4)</script>", sampleCount: 300, sampleCoverage: 1, callTree: root)
    let process = ProcessInfoRecord(pid: 41, executable: "/tmp/<img src=x onerror=alert(2)>", arguments: ["<!--", "&amp;"],
                                    exitCode: 0, signal: nil, wallMs: 1000)
    return Report(process: process, thresholds: Thresholds(), summary: Summary(hangs: [hang]), hangs: [hang],
                  notes: ["<b>bold</b> & <!-- <script>"])
}

package func occurrences(of needle: String, in text: String) -> Int {
    text.lowercased().components(separatedBy: needle.lowercased()).count - 1
}
