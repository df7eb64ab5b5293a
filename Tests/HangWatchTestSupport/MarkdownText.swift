import Foundation

/// Reading a markdown report back: shared by the markdown unit and integration tests.
package enum MarkdownText {
    /// Every line, empty ones included.
    package static func lines(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// The body of the `## title` section, up to the next `## ` heading; empty when absent.
    package static func section(_ text: String, _ title: String) -> String {
        guard let start = text.range(of: "## \(title)\n") else { return "" }
        let rest = text[start.upperBound...]
        let end = rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex
        return String(rest[..<end])
    }
}
