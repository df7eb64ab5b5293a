// Every output format a report can be rendered in, and the one place that picks the renderer.

import Foundation
import HangWatchModel

/// An output format of `hangwatch run --format` and `hangwatch report --format`.
///
/// Adding a format is a case here and one line in `renderer`.
public enum ReportFormat: String, CaseIterable, Sendable {
    case text, json, markdown, folded, speedscope, chrome, pprof, html

    /// The format a report is written in when none is asked for (`--format`,
    /// `HANGWATCH_FORMAT`): the one place that default is written.
    public static let standard: ReportFormat = .text

    /// The renderer of this format.
    private var renderer: @Sendable (Report) throws -> Data {
        switch self {
        case .text: return { Data(TextRenderer.render($0).utf8) }
        case .json: return { try JSONReport.encode($0) }
        case .markdown: return { Data(MarkdownRenderer.render($0).utf8) }
        case .folded: return { Data(FoldedFormat.render($0).utf8) }
        case .speedscope: return { try SpeedscopeFormat.render($0) }
        case .chrome: return { try ChromeTraceFormat.render($0) }
        case .pprof: return { try PprofFormat.render($0) }
        case .html: return { Data(HTMLReport.render($0).utf8) }
        }
    }

    /// The report in this format.
    public func render(_ report: Report) throws(ReportRenderError) -> Data {
        do {
            return try renderer(report)
        } catch {
            throw .failed(self, "\(error)")
        }
    }
}

/// Why a report could not be rendered.
public enum ReportRenderError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The renderer itself failed (for JSON: a value the encoder refuses).
    case failed(ReportFormat, String)

    /// One line for the user that says which format failed and why.
    public var description: String {
        switch self {
        case .failed(let format, let why):
            return "cannot render the report as \(format.rawValue): \(why)"
        }
    }
}
