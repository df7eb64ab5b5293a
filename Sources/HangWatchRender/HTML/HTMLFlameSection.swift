// One section per call tree: a heading that says which hang it is, the
// search and zoom controls, and the element the page script draws the
// flame graph into (`data-tree` names the tree in the embedded data). A hang
// that waited on a lock with a known owner gets a second graph beside it: the
// owner's stacks during the wait, as "held by thread T, which was doing …".

import HangWatchModel

enum HTMLFlameSection {
    static func render(_ report: Report) -> String {
        var sections = report.hangs.filter(hasFlameGraph).flatMap { [hangSection($0)] + [ownerSection($0)].compactMap { $0 } }
        if let launch = report.launch, launch.callTree != nil { sections.append(launchSection(launch)) }
        guard !sections.isEmpty else { return "" }
        return """
        <section id="call-trees">
        <h2>Call trees <span class="h2-detail">root at the top, callees below · width is time · \
        heaviest callee first · hover for details, click to zoom</span></h2>
        \(sections.joined(separator: "\n"))
        </section>
        """
    }

    static func hasFlameGraph(_ hang: Hang) -> Bool { hang.reported && hang.callTree != nil }

    static func sectionID(_ hang: Hang) -> String { "hang-\(hang.id)" }

    private static func hangSection(_ hang: Hang) -> String {
        let severity = HTMLSeverity(hang)
        var facts = ["at \(NumberFormat.offset(fromMs: hang.startMs))",
                     "\(hang.thread.name) (tid \(hang.thread.tid))",
                     hang.kind.rawValue + (hang.blockedIn.map { ", waiting in \($0)" } ?? ""),
                     "\(hang.sampleCount) samples covering \(NumberFormat.percent(hang.sampleCoverage, of: 1, decimals: 0))"]
        if hang.inProgress { facts.append("still running at exit") }
        facts += [HangCauseText.line(hang), HangStateText.cpu(hang), HangStateText.blocked(hang), HangStateText.owner(hang),
                  HangStateText.noOwner(hang), HangCauseText.measures(hang)].compactMap { $0 }
        let title = "Hang #\(hang.id) · \(NumberFormat.ms(hang.durationMs))"
        let chip = "<span class=\"chip \(severity.cssClass)\">\(severity.label)</span>"
        return section(id: sectionID(hang), tree: "hang:\(hang.id)", title: title, chip: chip, facts: facts)
    }

    static func ownerSectionID(_ hang: Hang) -> String { "hang-\(hang.id)-owner" }

    private static func ownerSection(_ hang: Hang) -> String? {
        guard let owner = hang.lockOwner, let tree = owner.callTree else { return nil }
        let who = owner.name.isEmpty ? "tid \(owner.tid)" : "\(owner.name) (tid \(owner.tid))"
        let facts = ["the thread holding the lock hang #\(hang.id) waited for (\(owner.evidence))",
                     "\(tree.sampleCount) \(tree.sampleCount == 1 ? "sample" : "samples") during the wait"]
        return section(id: ownerSectionID(hang), tree: "owner:\(hang.id)",
                       title: "Hang #\(hang.id) · lock held by \(who)",
                       chip: "<span class=\"chip launch-chip\">lock owner</span>", facts: facts)
    }

    private static func launchSection(_ launch: Launch) -> String {
        let span = launch.parked.map(ReportSectionsText.parkLine)
            ?? (launch.reachedFirstWait ? "process start to the loop's first wait" : "the loop never waited: the whole run")
        let facts = [span, "\(launch.sampleCount) samples"]
        return section(id: "launch", tree: "launch", title: "Launch · \(NumberFormat.ms(launch.durationMs))",
                       chip: "<span class=\"chip launch-chip\">launch</span>", facts: facts)
    }

    private static func section(id: String, tree: String, title: String, chip: String, facts: [String]) -> String {
        """
        <section class="flame-section" id="\(id)">
        <h3>\(HTMLText.escape(title)) \(chip)</h3>
        <div class="flame-facts">\(HTMLText.escape(facts.joined(separator: " · ")))</div>
        <div class="flame-toolbar">\
        <input type="search" class="flame-search" placeholder="Search symbols" aria-label="Search symbols in this call tree">\
        <button type="button" class="flame-reset" disabled>Reset zoom</button>\
        <span class="flame-status" aria-live="polite"></span></div>
        <div class="flame" data-tree="\(HTMLText.escape(tree))"></div>
        <div class="flame-legend"></div>
        </section>
        """
    }
}
