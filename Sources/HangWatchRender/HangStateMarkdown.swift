// The Markdown findings' sentences about lock waits: which thread to look at.

import HangWatchModel

enum HangStateMarkdown {
    /// " Hang #3 waited for a lock held by thread 1443 (lock-holder), which was
    /// doing `holder_compute`: look at that thread." — one per hang with an owner
    /// (at most three), or the threads that ran when no owner is known.
    static func lockSentences(_ hangs: [Hang]) -> String {
        var text = ""
        for hang in hangs.filter({ $0.lockOwner != nil }).prefix(3) {
            guard let owner = hang.lockOwner else { continue }
            let who = "thread \(owner.tid)" + (owner.name.isEmpty ? "" : " (\(MarkdownSyntax.text(owner.name)))")
            let what = owner.evidence == "join" ? "waited for \(who) to finish" : "waited for a lock held by \(who)"
            text += " Hang #\(hang.id) \(what)"
            if let doing = HangStateText.doing(owner) { text += ", which was doing \(MarkdownSyntax.code(doing))" }
            text += ": look at that thread."
        }
        for hang in hangs.filter({ $0.lockOwner == nil }).prefix(3) {
            guard let sentence = HangStateText.noOwner(hang) else { continue }
            text += " Hang #\(hang.id): " + MarkdownSyntax.text(sentence) + "."
        }
        if let cpu = hangs.compactMap({ hang in hang.cpuMs.map { ($0, hang.durationMs) } }).first, hangs.count == 1 {
            text += " On a CPU \(NumberFormat.ms(cpu.0)) of \(NumberFormat.ms(cpu.1)) (the thread's own CPU clock)."
        }
        return text
    }
}
