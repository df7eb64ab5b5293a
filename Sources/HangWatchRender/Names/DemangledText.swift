// Bracket-aware scanning of demangled names, shared by the display-name rules.
//
// Demangled Swift and C++ names nest: parameter lists, generic clauses, tuple
// and function types. A separator such as " in " or ", " only counts at the
// outermost level, so every search here tracks the nesting depth.

/// A demangled name as characters, with searches that skip nested brackets.
struct DemangledText {
    let characters: [Character]

    init(_ text: some StringProtocol) { characters = Array(text) }

    var count: Int { characters.count }

    func string(_ range: Range<Int>) -> String {
        let clamped = range.clamped(to: 0..<characters.count)
        return String(characters[clamped])
    }

    func hasPrefix(_ prefix: String, at index: Int = 0) -> Bool {
        var position = index
        for character in prefix {
            guard position < characters.count, characters[position] == character else { return false }
            position += 1
        }
        return true
    }

    /// Whether `characters[index]` opens a nested group. A `<` that follows
    /// `.` or another operator character is part of an operator's name
    /// (`Swift.Comparable.< infix`, `Swift.Int.<<= infix`), not a generic clause.
    private func opens(at index: Int) -> Bool {
        switch characters[index] {
        case "(", "[", "{": return true
        case "<": return index == 0 || !Self.operatorCharacters.contains(characters[index - 1])
        default: return false
        }
    }

    private static let operatorCharacters: Set<Character> = [".", "<", "=", ">", "!", "&", "|", "^", "~",
                                                             "+", "-", "*", "/", "%", "?"]

    /// Whether `characters[index]` closes a group; the `>` of `->` never does.
    private func closes(at index: Int, depth: Int) -> Bool {
        guard depth > 0 else { return false }
        switch characters[index] {
        case ")", "]", "}": return true
        case ">": return index == 0 || characters[index - 1] != "-"
        default: return false
        }
    }

    /// The first index at or after `start` where `needle` occurs outside every bracket.
    func firstTopLevel(_ needle: String, from start: Int = 0) -> Int? {
        var depth = 0
        var index = start
        while index < characters.count {
            if depth == 0, hasPrefix(needle, at: index) { return index }
            if opens(at: index) {
                depth += 1
            } else if closes(at: index, depth: depth) {
                depth -= 1
            }
            index += 1
        }
        return nil
    }

    /// The index just past the bracket group opened at `open`, or nil if it never closes.
    func endOfGroup(openingAt open: Int) -> Int? {
        guard open < characters.count, opens(at: open) else { return nil }
        var depth = 0
        var index = open
        while index < characters.count {
            if index == open || opens(at: index) {
                depth += 1
            } else if closes(at: index, depth: depth) {
                depth -= 1
                if depth == 0 { return index + 1 }
            }
            index += 1
        }
        return nil
    }

    /// Splits `range` at top-level occurrences of `separator`.
    func splitTopLevel(_ range: Range<Int>, separator: String) -> [Range<Int>] {
        var pieces: [Range<Int>] = []
        var pieceStart = range.lowerBound
        var depth = 0
        var index = range.lowerBound
        while index < range.upperBound {
            if depth == 0, hasPrefix(separator, at: index) {
                pieces.append(pieceStart..<index)
                index += separator.count
                pieceStart = index
                continue
            }
            if opens(at: index) {
                depth += 1
            } else if closes(at: index, depth: depth) {
                depth -= 1
            }
            index += 1
        }
        pieces.append(pieceStart..<range.upperBound)
        return pieces
    }

    /// `range` without its bracket groups of kind `open` (generic clauses: `<`).
    func removingGroups(startingWith open: Character, in range: Range<Int>) -> String {
        var result = ""
        var index = range.lowerBound
        while index < range.upperBound {
            if characters[index] == open, opens(at: index), let end = endOfGroup(openingAt: index) {
                index = min(end, range.upperBound)
                continue
            }
            result.append(characters[index])
            index += 1
        }
        return result
    }
}
