import Foundation
import HangWatchModel
import Testing

// Why: a failed `#expect` or `#require` prints every value in its expression, and a
// report's call tree runs to thousands of characters. CI keeps only the first part of
// a failing run's output, so one such dump hid the other failures of the same run.
// These one-line forms say what a reader needs: which hangs, how long, of what kind.

extension HangwatchRun: CustomTestStringConvertible {
    package var testDescription: String {
        "run of \(URL(fileURLWithPath: report.process.executable).lastPathComponent) (status \(result.status)): "
            + report.testDescription + "; measured " + measured.map(\.testDescription).joined(separator: ", ")
            + (stolenMs > 0 ? "; the VM stole \(stolenMs) ms of one CPU meanwhile" : "")
    }
}

extension MeasuredWork: CustomTestStringConvertible {
    package var testDescription: String {
        startNs == 0 ? fields.joined(separator: " ") : "\(name) \(String(format: "%.1f", durationMs)) ms"
    }
}

extension Report: CustomTestStringConvertible {
    public var testDescription: String {
        "hangs [\(hangs.map(\.testDescription).joined(separator: ", "))]"
            + (notes.isEmpty ? "" : " notes \(notes)")
    }
}

extension Hang: CustomTestStringConvertible {
    public var testDescription: String {
        "#\(id) \(thread.name) at \(String(format: "%.1f", startMs)) ms for \(String(format: "%.1f", durationMs)) ms "
            + "\(kind.rawValue)\(blockedIn.map { " in \($0)" } ?? "") \(sampleCount) samples"
            + (inProgress ? " in progress" : "") + (reported ? "" : " unreported")
    }
}

extension CallTreeNode: CustomTestStringConvertible {
    public var testDescription: String {
        "\(symbol) (\(sampleCount) samples, \(children.count) children)"
    }
}
