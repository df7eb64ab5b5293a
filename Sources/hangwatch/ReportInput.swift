#if canImport(Glibc)
import Glibc
import HangWatchModel
#endif
import Foundation
import HangWatch

/// Reads a report file given on the command line. Report files are input like
/// any other: a missing one, a directory, a device that never ends or a file
/// that is not a report each end in one line on stderr and a documented status.
enum ReportInput {
    /// Larger than any report hangwatch writes by far; stops `/dev/zero` and runaway files.
    static let maxBytes = 256 * 1024 * 1024

    struct Failure: Error {
        var status: Int32
        var message: String
    }

    /// The report in `path` (`-` for standard input): a JSON report, or a
    /// JSON-lines stream of hang events.
    static func read(_ path: String) throws(Failure) -> Report {
        let data = try bytes(of: path)
        let name = path == "-" ? "standard input" : path
        do {
            // An event stream (`run --events`) reads as the report its hangs add up to.
            if HangEventLines.looksLikeEvents(data) { return Report(events: try HangEventLines.decode(data)) }
            return try JSONReport.decode(data)
        } catch let error as ReportFileError {
            throw Failure(status: ExitCode.dataError, message: "\(name): \(error)")
        } catch {
            throw Failure(status: ExitCode.dataError, message: "\(name): \(error)")
        }
    }

    private static func bytes(of path: String) throws(Failure) -> Data {
        let fd = path == "-" ? dup(0) : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw Failure(status: ExitCode.noInput, message: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR {
            throw Failure(status: ExitCode.noInput, message: "cannot read \(path): it is a directory")
        }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 {
                throw Failure(status: ExitCode.noInput, message: "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { return data }
            guard data.count + n <= maxBytes else {
                throw Failure(status: ExitCode.dataError,
                              message: "\(path): larger than \(maxBytes / 1024 / 1024) MiB; not a report hangwatch writes")
            }
            data.append(contentsOf: buffer[..<n])
        }
    }
}
