// `--format html`: the report as one self-contained page to open in a browser.

import Foundation
import HangWatchModel

/// Renders a report as a single HTML file that needs no network: inline CSS,
/// inline vanilla JavaScript, and the report itself embedded as JSON (schema
/// v1, as `--format json` writes it) from which the script draws the timeline
/// and the flame graphs. Text from the report is escaped everywhere it goes.
package enum HTMLReport {
    /// The id of the `<script type="application/json">` element holding the report.
    package static let dataElementID = "hangwatch-report-data"

    package static func render(_ report: Report) -> String {
        let program = TextLayout.basename(report.process.executable)
        return """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta http-equiv="Content-Security-Policy" content="\(contentSecurityPolicy)">
        <title>\(HTMLText.escape("hangwatch · \(program)"))</title>
        <style>
        \(HTMLStyles.css)
        </style>
        </head>
        <body>
        <main>
        \(HTMLHeaderSection.render(report))
        \(HTMLTimelineSection.render(report))
        \(HTMLFramesSection.render(report))
        \(HTMLHangTable.render(report))
        \(HTMLFlameSection.render(report))
        <footer>hangwatch \(HTMLText.escape(HangWatchVersion.string)) · report schema v\(report.schemaVersion)</footer>
        </main>
        <div id="tooltip" role="tooltip"></div>
        <script type="application/json" id="\(dataElementID)">\(embeddedData(report))</script>
        <script>
        \(HTMLScript.source)
        </script>
        </body>
        </html>

        """
    }

    /// The page loads nothing: no network, no other file. Inline style and script only.
    static let contentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"

    /// The report as `--format json` writes it, escaped for a script element.
    /// A report JSON cannot encode (a non-finite number built in memory) leaves
    /// `null`, and the page says its drawings are missing.
    private static func embeddedData(_ report: Report) -> String {
        guard let data = try? JSONReport.encode(report) else { return "null" }
        return HTMLText.scriptSafeJSON(String(decoding: data, as: UTF8.self))
    }
}
