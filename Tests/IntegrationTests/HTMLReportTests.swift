import Foundation
import HangWatch
import HangWatchAnalysis
import HangWatchRender
import HangWatchSymbols
import HangWatchTestSupport
import Testing

// The HTML report checked as a person would meet it: rendered from a real run,
// opened in headless Chromium, and read back from the screenshot (pixels of the
// bar and frame colours) and from the DOM the page script built
// (Tests/validators/html_screenshot.py reads both). The markup tests need no browser.

/// Headless Chromium (Debian package `chromium`).
enum Chromium {
    static let path: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        let directories = path.split(separator: ":")
        for name in ["chromium", "chromium-browser"] {
            if let found = directories.map({ "\($0)/\(name)" }).first(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
                return found
            }
        }
        return nil
    }()

    static let missing: Comment = "chromium is not installed (apt-get install chromium): the HTML report cannot be opened in a browser"

    /// The page's DOM after its script ran, as Chromium serialises it.
    static func dumpDOM(_ page: URL, fragment: String = "") throws -> String {
        let result = try run(["--dump-dom", page.absoluteString + fragment], scratch: page.deletingLastPathComponent())
        guard result.status == 0, !result.stdout.isEmpty else {
            throw TestFailure("chromium --dump-dom failed (status \(result.status)): \(result.stderr.suffix(2000))")
        }
        return result.stdout
    }

    /// A PNG of the top `height` pixels of the page in a window `width` pixels wide.
    static func screenshot(_ page: URL, width: Int = 1280, height: Int = 2000) throws -> URL {
        let png = page.deletingPathExtension().appendingPathExtension("png")
        let result = try run(["--screenshot=\(png.path)", "--window-size=\(width),\(height)", page.absoluteString],
                             scratch: page.deletingLastPathComponent())
        guard result.status == 0, FileManager.default.fileExists(atPath: png.path) else {
            throw TestFailure("chromium --screenshot failed (status \(result.status)): \(result.stderr.suffix(2000))")
        }
        return png
    }

    private static func run(_ arguments: [String], scratch: URL) throws -> ProcessResult {
        guard let path else { throw TestFailure(missing.rawValue) }
        // A profile of its own per run: two Chromiums sharing one refuse to start.
        let profile = scratch.appendingPathComponent("chromium-profile-\(UUID().uuidString)")
        return try ProcessRunner.run(path, ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                            "--user-data-dir=\(profile.path)"] + arguments, timeout: 120)
    }
}

/// The colours the page gives meaning to, as HTMLStyles defines them.
enum PageColour {
    static let reportedBar = "#ee8a2d"
    static let microBar = "#f1c84b"
    static let programFrame = "#7cc6b6"
}

/// What html_screenshot.py read from a dumped DOM.
struct PageDOM: Decodable {
    struct HangBar: Decodable {
        var hangId: String?
        var classes: [String]
        var href: String?
    }
    struct Frame: Decodable {
        var text: String
        var classes: [String]
        var style: String
    }
    struct Flame: Decodable {
        var frames: [Frame]
        var status: String
        var resetDisabled: Bool?
    }
    struct Tooltip: Decodable {
        var visible: Bool
        var text: String
    }
    var ids: [String]
    var elementCounts: [String: Int]
    var h1: String
    var hangBars: [HangBar]
    var flames: [String: Flame]
    var tooltip: Tooltip

    static func read(_ dom: String, scratch: URL) throws -> PageDOM {
        let file = scratch.appendingPathComponent("dom-\(UUID().uuidString).html")
        try Data(dom.utf8).write(to: file)
        return try PageReader.summary(["dom", file.path], as: PageDOM.self)
    }
}

/// What html_screenshot.py read from a screenshot.
struct Screenshot: Decodable {
    struct Blob: Decodable {
        var x: Int
        var y: Int
        var width: Int
        var height: Int
        var pixels: Int
    }
    struct Colour: Decodable {
        var pixels: Int
        var blobs: [Blob]
    }
    var width: Int
    var height: Int
    var distinctColours: Int
    var inkFraction: Double
    var colours: [String: Colour]

    static func read(_ png: URL, colours: [String: String]) throws -> Screenshot {
        try PageReader.summary(["png", png.path] + colours.map { "\($0.key)=\($0.value)" }, as: Screenshot.self)
    }

    /// Areas of `colour` bigger than a legend swatch (14 × 12 px): bars and frames.
    func shapes(_ colour: String) -> [Blob] { (colours[colour]?.blobs ?? []).filter { $0.pixels >= 300 } }
}

enum PageReader {
    static func summary<Summary: Decodable>(_ arguments: [String], as _: Summary.Type) throws -> Summary {
        guard let python3 = Validators.python3 else { throw TestFailure(Validators.missingPython.rawValue) }
        let result = try ProcessRunner.run(python3, [Validators.script("html_screenshot.py")] + arguments, timeout: 120)
        guard result.status == 0 else {
            throw TestFailure("html_screenshot.py \(arguments.first ?? "") failed (status \(result.status)): \(result.stderr)")
        }
        return try JSONDecoder().decode(Summary.self, from: Data(result.stdout.utf8))
    }
}


private extension CallTreeNode {
    var nodes: [CallTreeNode] { [self] + children.flatMap(\.nodes) }

    /// The chain of nodes from this one down to the first node whose symbol is `symbol`.
    func path(to symbol: String) -> [CallTreeNode]? {
        if self.symbol == symbol { return [self] }
        for child in children {
            if let below = child.path(to: symbol) { return [self] + below }
        }
        return nil
    }
}


/// Synthetic reports in the browser: no demo runs, so these need not be serialized.
@Suite(.enabled(if: Chromium.path != nil, Chromium.missing), .exclusiveMachine)
struct HTMLReportInChromium {
    @Test func hostileTextStaysTextAfterTheScriptRan() throws {
        let scratch = try TestPaths.scratch()
        let dom = try PageDOM.read(try Chromium.dumpDOM(try HTMLPage.write(hostileReport(), in: scratch)), scratch: scratch)
        #expect(dom.elementCounts["img"] == 0)
        #expect(dom.elementCounts["iframe"] == 0)
        #expect(dom.elementCounts["script"] == 2)
        #expect(dom.elementCounts["svg"] == 1, "only the timeline's own SVG")
        #expect(dom.h1 == "<img src=x onerror=alert(2)>")
        let frames = try #require(dom.flames["hang-1"]).frames
        #expect(frames.map(\.text) == ["main", hostile])
        #expect(dom.hangBars.count == 1)
    }

    /// A lock hang with a known owner: the owner's stacks get a flame graph of their own, beside the hang's.
    @Test(.enabled(if: Chromium.path != nil, Chromium.missing))
    func lockOwnerTreeIsDrawnBesideTheHang() throws {
        let scratch = try TestPaths.scratch()
        let owner = CallTreeNode(symbol: "holder_compute", image: "demo", weightMs: 300, selfMs: 300, sampleCount: 300, children: [])
        let hang = Hang(id: 1, thread: ThreadRef(tid: 10, name: "main"), startMs: 100, durationMs: 350, reported: true,
                        inProgress: false, kind: .blocked, blockedIn: "futex", sampleCount: 350, sampleCoverage: 1,
                        callTree: CallTreeNode(symbol: "wait_for_lock", image: "demo", weightMs: 350, selfMs: 350,
                                               sampleCount: 350, children: []),
                        cpuMs: 0.2, runnableMs: 0, blockedSymbol: "wait_for_lock",
                        lockOwner: LockOwner(tid: 11, name: "lock-holder", evidence: "mutex", callTree: owner))
        let process = ProcessInfoRecord(pid: 1, executable: "demo", arguments: [], exitCode: 0, signal: nil, wallMs: 700)
        let report = Report(process: process, thresholds: Thresholds(), summary: Summary(hangs: [hang]), hangs: [hang])
        let page = try HTMLPage.write(report, in: scratch)
        let html = try String(contentsOf: page, encoding: .utf8)
        #expect(html.contains("lock held by lock-holder (tid 11)"))
        let dom = try PageDOM.read(try Chromium.dumpDOM(page), scratch: scratch)
        let flame = try #require(dom.flames["hang-1-owner"], "sections: \(dom.flames.keys.sorted())")
        #expect(flame.frames.count == owner.nodes.count)
        #expect(flame.frames.first?.text == owner.symbol)
        #expect(dom.flames["hang-1"]?.frames.first?.text == "wait_for_lock")
    }

    @Test func runWithoutHangsStillDrawsTheRun() throws {
        let scratch = try TestPaths.scratch()
        let process = ProcessInfoRecord(pid: 3, executable: "/bin/idle", arguments: [], exitCode: 0, signal: nil, wallMs: 800)
        let report = Report(process: process, thresholds: Thresholds(), summary: Summary(hangs: []), hangs: [])
        let dom = try PageDOM.read(try Chromium.dumpDOM(try HTMLPage.write(report, in: scratch)), scratch: scratch)
        #expect(dom.elementCounts["svg"] == 1, "the timeline shows the run even without a hang")
        #expect(dom.hangBars.isEmpty)
        #expect(dom.flames.isEmpty)
    }
}

extension Integration {
    /// The standard demo (hangs of about 420, 300 and 150 ms) as an HTML page in Chromium.
    @Suite(.enabled(if: Chromium.path != nil, Chromium.missing))
    struct HTMLReportInBrowser {
        @Test func realRunDrawsTimelineAndFlameGraphs() throws {
            // HangwatchRun reads the report file back with JSONReport.decode.
            let report = try DemoReports.standard.get().report
            let scratch = try TestPaths.scratch()
            #expect(report.hangs.map(\.reported) == [true, true, false], "hangs: \(report.hangs.map(\.durationMs))")
            let page = try HTMLPage.write(report, in: scratch)
            let dom = try PageDOM.read(try Chromium.dumpDOM(page), scratch: scratch)

            #expect(dom.hangBars.count == 3)
            for hang in report.hangs {
                let bar = try #require(dom.hangBars.first { $0.hangId == "\(hang.id)" })
                let severity = hang.durationMs >= 500 ? "sev-severe" : hang.reported ? "sev-reported" : "sev-micro"
                #expect(bar.classes.contains(severity), "hang \(hang.id): \(bar.classes)")
                let target = String(try #require(bar.href).dropFirst())
                #expect(dom.ids.contains(target), "hang \(hang.id) links to \(target), which is not on the page")
                #expect(target == (hang.reported ? "hang-\(hang.id)" : "hang-row-\(hang.id)"))
            }
            for hang in report.hangs where hang.reported {
                let tree = try #require(hang.callTree)
                // Frames under 0.05% of the graph are not drawn; in the demo every node is bigger.
                #expect(tree.nodes.allSatisfy { $0.weightMs >= 0.0005 * tree.weightMs })
                let flame = try #require(dom.flames["hang-\(hang.id)"])
                #expect(flame.frames.count == tree.nodes.count)
                #expect(flame.frames.first?.text == tree.symbol)
                #expect(flame.frames.first?.style.contains("width: 100%") == true)
                #expect(flame.resetDisabled == true)
                checkLayout(of: flame, against: tree)
            }

            let png = try Chromium.screenshot(page)
            // Saved with the test results by `swift test --attachments-path DIR`, to look at.
            Attachment.record(try Data(contentsOf: png), named: "html-report-standard-demo.png")
            let screenshot = try Screenshot.read(png, colours: [
                "reported": PageColour.reportedBar, "micro": PageColour.microBar, "program": PageColour.programFrame])
            #expect(screenshot.width == 1280)
            #expect(screenshot.inkFraction > 0.05, "the page looks blank")
            #expect(screenshot.distinctColours > 50)
            let reportedBars = screenshot.shapes("reported"), microBars = screenshot.shapes("micro")
            #expect(reportedBars.count == 2, "\(reportedBars)")
            #expect(microBars.count == 1, "\(microBars)")
            // Bars sit on one row, as long and as far apart as the hangs, on one time scale.
            let bars = (reportedBars + microBars).sorted { $0.x < $1.x }
            let hangs = report.hangs.sorted { $0.startMs < $1.startMs }
            if bars.count == hangs.count, let first = bars.first, let last = bars.last,
               let firstHang = hangs.first, let lastHang = hangs.last {
                // The scale from the first and last starts: over that baseline a pixel of rounding hardly matters.
                let pixelsPerMs = Double(last.x - first.x) / (lastHang.startMs - firstHang.startMs)
                for (bar, hang) in zip(bars, hangs) {
                    #expect(bar.y == first.y)
                    #expect(abs(Double(bar.width) - hang.durationMs * pixelsPerMs) <= 3, "hang \(hang.id): \(bar.width) px")
                    #expect(abs(Double(bar.x - first.x) - (hang.startMs - firstHang.startMs) * pixelsPerMs) <= 3,
                            "hang \(hang.id) starts at \(bar.x) px")
                }
            }
            // The flame graphs: the program's own frames, the root ones spanning the graph.
            let programFrames = try #require(screenshot.colours["program"])
            #expect(programFrames.pixels > 20_000)
            #expect(programFrames.blobs.contains { $0.width > 1000 }, "no full-width program frame (_start, main)")
        }

        @Test func searchZoomAndHoverWorkInTheBrowser() throws {
            let run = try DemoReports.standard.get()
            let scratch = try TestPaths.scratch()
            let tree = try #require(run.report.hangs.first?.callTree)
            let page = try HTMLPage.write(run.report, in: scratch)

            // report.html#search=TEXT opens with TEXT in every search box.
            let searched = try PageDOM.read(try Chromium.dumpDOM(page, fragment: "#search=tokenize"), scratch: scratch)
            let flame = try #require(searched.flames["hang-1"])
            let tokenize = tree.nodes.filter { $0.symbol.lowercased().contains("tokenize") }
            #expect(tokenize.count == 1, "symbols: \(tree.nodes.map(\.symbol))")
            #expect(flame.frames.filter { $0.classes.contains("match") }.map(\.text) == tokenize.map(\.symbol))
            #expect(flame.frames.filter { $0.classes.contains("dim") }.count == flame.frames.count - tokenize.count)
            let shown = try #require(percentage(in: flame.status), "status: \(flame.status)")
            let expected = tokenize.reduce(0) { $0 + $1.weightMs } / tree.weightMs * 100
            #expect(abs(shown - expected) <= 0.051, "status: \(flame.status), expected \(expected)%")

            // Click parseLargeDocument to zoom into it, then hover over its heaviest callee
            // (tokenize or checksum, whichever the sampler caught more of).
            let parse = try #require(tree.first(containing: "parseLargeDocument"))
            let path = try #require(tree.path(to: parse.symbol))
            let zoomed = try #require(path.last)
            let hovered = try #require(zoomed.children.max { $0.weightMs < $1.weightMs })
            let driver = """
                const frames = () => [...document.querySelectorAll('#hang-1 .frame')];
                frames().find(frame => frame.textContent === \(try HTMLPage.jsString(zoomed.symbol))).click();
                const hovered = frames().find(frame => frame.textContent === \(try HTMLPage.jsString(hovered.symbol)));
                const box = hovered.getBoundingClientRect();
                hovered.dispatchEvent(new MouseEvent('mousemove', { bubbles: true, clientX: box.left + 5, clientY: box.top + 5 }));
                """
            let driven = try HTMLPage.write(run.report, in: scratch, driver: driver)
            let dom = try PageDOM.read(try Chromium.dumpDOM(driven), scratch: scratch)
            let zoomedFlame = try #require(dom.flames["hang-1"])
            #expect(zoomedFlame.resetDisabled == false)
            #expect(zoomedFlame.status.hasPrefix("zoomed into"), "status: \(zoomedFlame.status)")
            // The callers stay above as full-width bars; the zoomed subtree fills the width below them.
            #expect(zoomedFlame.frames.count == path.count - 1 + zoomed.nodes.count)
            let zoomedFrame = try #require(zoomedFlame.frames.first { $0.text == zoomed.symbol })
            #expect(zoomedFrame.style.contains("width: 100%"))
            #expect(zoomedFlame.frames.filter { $0.classes.contains("ancestor") }.count == path.count - 1)
            #expect(dom.tooltip.visible)
            #expect(dom.tooltip.text.contains(hovered.symbol))
            #expect(dom.tooltip.text.contains("samples: \(hovered.sampleCount)"))
            #expect(dom.tooltip.text.contains("self: "))
        }

        /// Widths in proportion to weight, callees heaviest first: checked on the frames whose symbol
        /// occurs once in the tree, so each frame maps to exactly one node.
        private func checkLayout(of flame: PageDOM.Flame, against tree: CallTreeNode) {
            let symbolCounts = Dictionary(tree.nodes.map { ($0.symbol, 1) }, uniquingKeysWith: +)
            let frames = Dictionary(flame.frames.map { ($0.text, $0) }, uniquingKeysWith: { first, _ in first })
            func share(_ node: CallTreeNode, _ property: String) -> Double? {
                guard symbolCounts[node.symbol] == 1, let style = frames[node.symbol]?.style else { return nil }
                return percentage(in: style, after: property + ": ")
            }
            for node in tree.nodes {
                if let width = share(node, "width") {
                    #expect(abs(width - node.weightMs / tree.weightMs * 100) < 0.01, "\(node.symbol): width \(width)%")
                }
                let lefts = node.children.compactMap { child in share(child, "left").map { (child.weightMs, $0) } }
                for (one, next) in zip(lefts, lefts.dropFirst()) where one.0 != next.0 {
                    #expect((one.0 > next.0) == (one.1 < next.1), "callees of \(node.symbol) are not heaviest first")
                }
            }
        }

        private func percentage(in text: String, after label: String) -> Double? {
            guard let start = text.range(of: label) else { return nil }
            return percentage(in: String(text[start.upperBound...]))
        }

        private func percentage(in text: String) -> Double? {
            guard let percent = text.firstIndex(of: "%") else { return nil }
            let digits = text[..<percent].reversed().prefix { $0.isNumber || $0 == "." }
            return Double(String(digits.reversed()))
        }
    }
}
