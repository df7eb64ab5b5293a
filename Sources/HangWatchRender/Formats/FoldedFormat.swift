// Folded stacks: the plain-text input of flamegraph.pl, inferno and speedscope.

import HangWatchModel

/// Renders reported hangs as folded stacks, one line per distinct stack:
/// `frame;frame;frame count`, root first, `count` the real number of samples
/// whose stack was exactly that one.
///
/// Lines keep the call trees' order (heaviest first, depth first); identical
/// lines are merged by adding their counts, so every line is unique.
package enum FoldedFormat {
    /// - Parameter labelHangs: starts every stack with a synthetic frame naming its
    ///   hang (`hang#1 (420 ms)`) so the hangs stay apart in a flame graph. Without
    ///   it, equal stacks from different hangs merge into one line.
    package static func render(_ report: Report, labelHangs: Bool = true) -> String {
        var lines = OrderedCounts<String>()
        for profiled in report.profiledHangs {
            let prefix = labelHangs ? [hangFrame(profiled.hang)] : []
            for stack in profiled.stacks {
                let frames = prefix + stack.frames.map { frameName($0.symbol) }
                lines.add(frames.joined(separator: ";"), stack.weight)
            }
        }
        return lines.entries.map { "\($0.key) \($0.count)\n" }.joined()
    }

    /// The synthetic root frame of one hang's stacks: `hang#1 (420 ms)`.
    package static func hangFrame(_ hang: Hang) -> String {
        "hang#\(hang.id) (\(NumberFormat.fixed(hang.durationMs, 0)) ms)"
    }

    /// A symbol made safe for one field of a folded line.
    ///
    /// `;` separates frames and a line break ends the record, so both are replaced;
    /// an empty symbol would make an empty field, which parsers drop.
    package static func frameName(_ symbol: String) -> String {
        var name = ""
        name.reserveCapacity(symbol.utf8.count)
        for scalar in symbol.unicodeScalars {
            switch scalar {
            case ";": name.append(",")
            case "\n", "\r", "\u{0B}", "\u{0C}", "\u{85}", "\u{2028}", "\u{2029}": name.append(" ")
            default: name.unicodeScalars.append(scalar)
            }
        }
        return name.isEmpty ? unknownFrame.symbol : name
    }
}
