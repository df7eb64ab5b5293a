import Foundation
import HangWatchAnalysis
import HangWatchModel
import HangWatchRender
import HangWatchTestSupport
import Testing

// The HTML report as markup: no browser needed (the browser tests are in IntegrationTests).

@Suite struct HTMLReportMarkup {
    @Test func hostileTextNeverBecomesMarkup() throws {
        let report = hostileReport()
        let html = HTMLReport.render(report)
        for tag in ["<img", "<iframe", "<svg", "<b>bold", "<!--"] {
            #expect(occurrences(of: tag, in: html) == 0, "\(tag) reached the page as markup")
        }
        // The page's own two script elements, and no end tag from the data.
        #expect(occurrences(of: "<script", in: html) == 2)
        #expect(occurrences(of: "</script", in: html) == 2)
        #expect(html.contains("<h1>&lt;img src=x onerror=alert(2)&gt;</h1>"))
        #expect(html.contains("&lt;b&gt;bold&lt;/b&gt; &amp; &lt;!-- &lt;script&gt;"))
        // The escaped data is still the same report to a JSON reader.
        let embedded = try #require(HTMLPage.embeddedJSON(html))
        #expect(!embedded.contains("<"))
        #expect(try JSONReport.decode(Data(embedded.utf8)) == report)
    }

    @Test func pageLoadsNothingFromOutside() throws {
        let html = HTMLReport.render(hostileReport())
        #expect(html.contains("content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\""))
        for reference in ["<link", "src=\"", "@import", "@font-face"] {
            #expect(occurrences(of: reference, in: html) == 0, "the page refers to another file with \(reference)")
        }
        // The one address in the page is the SVG namespace, which is a name, not a request.
        let addresses = occurrences(of: "http://", in: html) + occurrences(of: "https://", in: html)
        #expect(addresses == occurrences(of: "'http://www.w3.org/2000/svg'", in: html))
    }

    @Test func headerAndFramesPanelShowTheNumbers() throws {
        var report = hostileReport()
        report.process = ProcessInfoRecord(pid: 7, executable: "/usr/bin/game", arguments: [], exitCode: nil, signal: 9,
                                           wallMs: 2500, cpuUserMs: 812.5, cpuSystemMs: 40, peakRssKb: 20480)
        report.thresholds.frameMs = 16.667
        report.frames = FrameStats(name: "render", deadlineMs: 16.667, frameCount: 120, hitchCount: 3, missedFrames: 5,
                                   hitchMs: 62, hitchRatioMsPerS: 24.8, band: "warning", p50Ms: 5, p95Ms: 14, p99Ms: 31,
                                   maxMs: 40, histogram: [HistogramBucket(upToMs: 16.667, count: 117), HistogramBucket(upToMs: 33.3, count: 2),
                                                          HistogramBucket(upToMs: nil, count: 1)])
        let html = HTMLReport.render(report)
        for text in ["killed by signal 9 (SIGKILL)", "<b>2.50 s</b>", "<b>812.5 ms</b>", "<b>20.0 MiB</b>",
                     "frame deadline</span> <b>16.7 ms</b>", "hitch-ratio band-warning", "24.8 <small>ms/s</small>"] {
            #expect(html.contains(text), "missing: \(text)")
        }
        #expect(occurrences(of: "class=\"bucket\"", in: html) == 1, "one bucket within the deadline")
        #expect(occurrences(of: "class=\"bucket late\"", in: html) == 2, "two buckets of hitches only")
        #expect(html.contains("> 33.3</span>"), "the open-ended bucket is labelled by its lower bound")

        report.frames?.band = "<unknown>"
        #expect(HTMLReport.render(report).contains("hitch-ratio band-unknown"))
    }

    @Test func runWithoutHangsSaysSo() {
        let process = ProcessInfoRecord(pid: 3, executable: "/bin/idle", arguments: [], exitCode: 0, signal: nil, wallMs: 800)
        let report = Report(process: process, thresholds: Thresholds(), summary: Summary(hangs: []), hangs: [])
        let html = HTMLReport.render(report)
        #expect(html.contains("No hang of 100 ms or more was seen."))
        #expect(!html.contains("id=\"call-trees\""))
        #expect(!html.contains("id=\"frames\""))
    }
}
