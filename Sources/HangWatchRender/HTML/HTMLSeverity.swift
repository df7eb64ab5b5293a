// How alarming a hang looks on the page. The same three classes colour the
// timeline bars (drawn by the page script) and the chips in the hang table.

import HangWatchModel

enum HTMLSeverity: String {
    /// Long enough that a user surely noticed: the app looked frozen.
    case severe
    /// Reached the report threshold and carries a call tree.
    case reported
    /// Counted as a hang but too short for a call tree.
    case micro

    /// Hangs at least this long are severe whatever the report threshold is.
    static let severeMs: Double = 500

    init(_ hang: Hang) {
        if hang.durationMs >= Self.severeMs {
            self = .severe
        } else {
            self = hang.reported ? .reported : .micro
        }
    }

    var label: String {
        switch self {
        case .severe: return "severe"
        case .reported: return "reported"
        case .micro: return "micro-hang"
        }
    }

    /// The CSS class that carries the colour, for both the chips and the bars.
    var cssClass: String { "sev-\(rawValue)" }
}
