import Glibc
import HangWatchModel

/// Appends hang events to a JSON-lines file. Each line goes out in one
/// write(2) on an O_APPEND descriptor, so a crash of either process never
/// leaves half a line behind a whole one, and several writers never interleave
/// inside a line.
package final class EventFile {
    private let fd: Int32
    /// Lines that could not be written (disk full, ...), counted for a note.
    package private(set) var failedWrites = 0

    /// Opens (creating, never truncating) `path`; throws the errno text.
    package init(path: String) throws(EventFileError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw EventFileError(path: path, reason: String(cString: strerror(errno))) }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Writes one event as one line.
    package func append(_ event: HangEvent) {
        guard let line = try? HangEventLines.encode(event) else {
            failedWrites += 1
            return
        }
        let written = line.withUnsafeBytes { bytes -> Int in
            var rc: Int
            repeat { rc = write(fd, bytes.baseAddress, bytes.count) } while rc < 0 && errno == EINTR
            return rc
        }
        if written != line.count { failedWrites += 1 }
    }
}

/// Why an event file could not be opened.
package struct EventFileError: Error, CustomStringConvertible {
    package var path: String
    package var reason: String
    package var description: String { "cannot open the event file '\(path)': \(reason)" }
}
