// Writing untrusted text (symbols, thread names, paths) into Markdown safely.

/// Escaping for the few Markdown constructs the reports use.
///
/// Everything shown comes from the watched program or from a report file, so
/// a symbol may hold backticks, pipes or newlines; none of it may break a
/// table row, close a code span early or start a heading.
enum MarkdownSyntax {
    /// Longest symbol shown in prose and tables; longer ones lose their middle
    /// (module and argument labels at the ends are what identify a Swift symbol).
    static let maxInlineLength = 160

    /// `text` as an inline code span, one line, with a fence that cannot close early.
    static func code(_ text: String) -> String {
        let clean = TextLayout.truncatingMiddle(singleLine(text), to: maxInlineLength)
        let fence = String(repeating: "`", count: longestRun(of: "`", in: clean) + 1)
        // A span that starts or ends with a backtick needs a space to keep it apart from the fence.
        let pad = clean.hasPrefix("`") || clean.hasSuffix("`") || clean.isEmpty ? " " : ""
        return fence + pad + clean + pad + fence
    }

    /// Plain text with Markdown punctuation escaped, one line.
    static func text(_ raw: String) -> String {
        var out = ""
        for character in singleLine(raw) {
            if "\\`*_[]<>|#!~".contains(character) { out.append("\\") }
            out.append(character)
        }
        return out
    }

    /// One table row. Cells are already formatted; a `|` inside them (even in a
    /// code span) would start a new cell, so it is escaped as GitHub's tables expect.
    static func row(_ cells: [String]) -> String {
        "| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |"
    }

    /// A header row, its separator, and the rows. `rightAligned` columns hold numbers.
    static func table(header: [String], rightAligned: Set<Int> = [], rows: [[String]]) -> [String] {
        let separator = "|" + header.indices.map { rightAligned.contains($0) ? " ---: " : " --- " }.joined(separator: "|") + "|"
        return [row(header), separator] + rows.map(row)
    }

    /// A fenced code block whose fence is longer than any backtick run inside it.
    static func fenced(_ lines: [String], info: String = "") -> [String] {
        let body = lines.map(singleLine)
        let longest = body.map { longestRun(of: "`", in: $0) }.max() ?? 0
        let fence = String(repeating: "`", count: max(3, longest + 1))
        return [fence + info] + body + [fence]
    }

    /// Control characters (newlines included) become spaces.
    static func singleLine(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map {
            $0.properties.generalCategory == .control ? " " : $0
        }))
    }

    private static func longestRun(of mark: Character, in text: String) -> Int {
        var longest = 0, current = 0
        for character in text {
            current = character == mark ? current + 1 : 0
            longest = max(longest, current)
        }
        return longest
    }
}
