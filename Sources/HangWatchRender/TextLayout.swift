// Fitting text into a fixed number of terminal columns.

/// Column-fitting helpers. A column is one `Character`: the report's own
/// punctuation (…, ≥, —) is single-width, and symbol names are ASCII in practice.
enum TextLayout {
    static let ellipsis: Character = "…"

    /// Cuts the end off and marks the cut: "RunLoopDemo.wor…".
    static func truncatingEnd(_ text: String, to width: Int) -> String {
        guard text.count > width else { return text }
        guard width > 0 else { return "" }
        return String(text.prefix(width - 1)) + String(ellipsis)
    }

    /// Cuts the middle out: "RunLoopDemo.Wor…(items:)". Swift symbols carry the
    /// module and type at the front and the argument labels at the end, and both
    /// matter more than the generic noise in between.
    static func truncatingMiddle(_ text: String, to width: Int) -> String {
        guard text.count > width else { return text }
        guard width > 1 else { return width == 1 ? String(ellipsis) : "" }
        let kept = width - 1
        let head = (kept + 1) / 2
        return String(text.prefix(head)) + String(ellipsis) + String(text.suffix(kept - head))
    }

    static func padLeft(_ text: String, to width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }

    static func padRight(_ text: String, to width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    /// Word-wraps prose to `width`, indenting continuation lines by `hangingIndent`.
    /// A single word longer than a line is cut with an ellipsis rather than overflow.
    static func wrap(_ text: String, width: Int, hangingIndent: Int = 2) -> [String] {
        let indent = String(repeating: " ", count: max(0, min(hangingIndent, width / 2)))
        // The first line keeps its own leading spaces (a margin the caller put there).
        let leading = String(text.prefix(while: { $0 == " " }))
        var lines: [String] = []
        var line = ""
        for word in words(text) {
            let prefix = lines.isEmpty ? leading : indent
            if line.isEmpty {
                line = prefix + word
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(truncatingEnd(line, to: width))
                line = indent + word
            }
        }
        if !line.isEmpty || lines.isEmpty { lines.append(truncatingEnd(line, to: width)) }
        return lines
    }

    /// Splits on spaces but keeps a unit with its number ("412.3 ms", "+1.234 s"):
    /// a value cut from its unit at a line end reads as a different value.
    private static func words(_ text: String) -> [String] {
        let units: Set<Substring> = ["ms", "s", "ms/s"]
        var words: [String] = []
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            let bare = word.prefix(while: { $0.isLetter || $0 == "/" })
            if bare.count == word.prefix(while: { !",;:)".contains($0) }).count, units.contains(bare), let last = words.last {
                words[words.count - 1] = last + " " + word
            } else {
                words.append(String(word))
            }
        }
        return words
    }

    /// The last path component, which is what a reader recognises ("libswiftCore.so").
    static func basename(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        let name = path[path.index(after: slash)...]
        return name.isEmpty ? path : String(name)
    }
}
