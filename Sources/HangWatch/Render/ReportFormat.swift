// Every output format a report can be rendered in, and the one place that picks the renderer.

import Foundation

/// An output format of `hangwatch run --format` and `hangwatch report --format`.
///
/// All formats are listed even before their renderer is built in, so the
/// command line knows every name and can say "not available in this build"
/// instead of "unknown format". Adding a renderer is one line in `renderer`.
public enum ReportFormat: String, CaseIterable, Sendable {
    case text, json, markdown, folded, speedscope, chrome, pprof, html

    /// The renderer of this format, or nil when this build does not have it yet.
    private var renderer: (@Sendable (Report) throws -> Data)? {
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

    /// True when `render` can produce this format in this build.
    public var isAvailable: Bool { renderer != nil }

    /// The formats `render` can produce in this build, in declaration order.
    public static var available: [ReportFormat] { allCases.filter(\.isAvailable) }

    /// The report in this format.
    public func render(_ report: Report) throws(ReportRenderError) -> Data {
        guard let renderer else { throw .formatNotAvailable(self) }
        do {
            return try renderer(report)
        } catch {
            throw .failed(self, "\(error)")
        }
    }
}

/// Why a report could not be rendered.
public enum ReportRenderError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The format is known but its renderer is not part of this build.
    case formatNotAvailable(ReportFormat)
    /// The renderer itself failed (for JSON: a value the encoder refuses).
    case failed(ReportFormat, String)

    public var description: String {
        switch self {
        case .formatNotAvailable(let format):
            let available = ReportFormat.available.map(\.rawValue).joined(separator: ", ")
            return "format \(format.rawValue) is not available in this build (available: \(available))"
        case .failed(let format, let why):
            return "cannot render the report as \(format.rawValue): \(why)"
        }
    }
}
