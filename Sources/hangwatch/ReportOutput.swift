#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HangWatch

/// Renders a report in the chosen format to a file or stderr.
enum ReportOutput {
    static func write(_ report: Report, format: RunOptions.Format, to path: String?) -> Bool {
        let data: Data
        switch format {
        case .text:
            data = Data(TextRenderer.render(report).utf8)
        case .json:
            do { data = try JSONReport.encode(report) } catch {
                writeStderr("hangwatch: cannot encode the report: \(error)")
                return false
            }
        }
        guard let path else {
            FileHandle.standardError.write(data)
            return true
        }
        do {
            try data.write(to: URL(fileURLWithPath: path))
            return true
        } catch {
            writeStderr("hangwatch: cannot write report to \(path): \(error.localizedDescription)")
            return false
        }
    }
}
