#if canImport(Glibc)
import Glibc
import HangWatchModel
import HangWatchRender
#endif
import Foundation
import HangWatch

/// Where a command's output goes: a file given with -o, else a standard stream.
enum OutputDestination {
    case file(String)
    case standardOutput
    case standardError

    init(path: String?, otherwise stream: OutputDestination) {
        self = path.map(OutputDestination.file) ?? stream
    }
}

enum ReportOutput {
    /// Renders `report` and writes it; returns an exit status (0 on success)
    /// after printing one line for a failure.
    static func write(_ report: Report, format: ReportFormat, to destination: OutputDestination) -> Int32 {
        let data: Data
        do {
            data = try format.render(report)
        } catch {
            writeStderr("hangwatch: \(error)")
            return ExitCode.dataError
        }
        return write(data, to: destination)
    }

    /// Writes rendered output; 0, or `ExitCode.cannotCreate` with one line on stderr.
    static func write(_ data: Data, to destination: OutputDestination) -> Int32 {
        switch destination {
        case .standardOutput:
            return writeAll(data, fd: 1) ? 0 : failed("cannot write to standard output: \(errnoText())")
        case .standardError:
            return writeAll(data, fd: 2) ? 0 : failed("cannot write to standard error: \(errnoText())")
        case .file(let path):
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
            guard fd >= 0 else { return failed("cannot write \(path): \(errnoText())") }
            let written = writeAll(data, fd: fd)
            let why = errnoText()
            // close() reports late write errors on some file systems (NFS, full disks).
            guard close(fd) == 0, written else { return failed("cannot write \(path): \(written ? errnoText() : why)") }
            return 0
        }
    }

    private static func writeAll(_ data: Data, fd: Int32) -> Bool {
        var rest = data[...]
        while !rest.isEmpty {
            let n = rest.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            rest = rest.dropFirst(n)
        }
        return true
    }

    private static func failed(_ message: String) -> Int32 {
        writeStderr("hangwatch: \(message)")
        return ExitCode.cannotCreate
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }
}
