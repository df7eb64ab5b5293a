import Foundation
import Glibc
import HangWatchAnalysis
import HangWatchModel

/// Appends hang events to a JSON-lines file. Each line goes out in one
/// write(2) on an O_APPEND descriptor, so a crash of either process never
/// leaves half a line behind a whole one, and several writers never interleave
/// inside a line.
package final class EventFile {
    private let fd: Int32
    /// The file the descriptor was opened on: in the library the descriptor
    /// lives in the program, which may close it and reuse its number.
    private let device: UInt64
    private let inode: UInt64
    /// Lines that could not be written (disk full, a full pipe, ...), counted for a note.
    package private(set) var failedWrites = 0

    /// Opens (creating, never truncating) `path`; throws the errno text.
    /// Non-blocking, so a FIFO nobody reads never stops the reader.
    package init(path: String) throws(EventFileError) {
        self.path = path
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0o644)
        guard fd >= 0 else { throw EventFileError(path: path, reason: String(cString: strerror(errno))) }
        var info = stat()
        fstat(fd, &info)
        self.fd = fd
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        initialSize = Int(info.st_size)
    }

    /// The file's size when it was opened (it is appended to, never truncated).
    package let initialSize: Int
    /// The path it was opened at.
    package let path: String

    deinit { if isSameFile { close(fd) } }

    /// Whether `fd` still names the file it was opened on (in the library the
    /// program may have closed it and reused the number).
    private var isSameFile: Bool {
        var info = stat()
        return fstat(fd, &info) == 0 && UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    /// Whether lines written now would be read: the descriptor is ours and the
    /// file still has a name (lines written to a deleted file are lost unseen).
    private var isOurs: Bool {
        var info = stat()
        return fstat(fd, &info) == 0 && UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
            && info.st_nlink > 0
    }

    /// Whether `path` still names this file: false once someone deleted the
    /// file or moved it away (an outside log rotation), and the path is to be
    /// opened anew.
    package var isAtPath: Bool {
        var info = stat()
        return stat(path, &info) == 0 && UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    /// Writes one encoded line. A short write (disk full) is ended with a
    /// newline, so the torn line stays alone and the next one reads.
    package func append(line: Data) {
        guard isOurs else {
            failedWrites += 1
            return
        }
        let written = line.withUnsafeBytes { bytes -> Int in
            var rc: Int
            repeat { rc = write(fd, bytes.baseAddress, bytes.count) } while rc < 0 && errno == EINTR
            return rc
        }
        guard written != line.count else { return }
        failedWrites += 1
        if written > 0 { _ = write(fd, "\n", 1) }
    }
}

/// Why an event file could not be opened.
package struct EventFileError: Error, CustomStringConvertible {
    package var path: String
    package var reason: String
    package var description: String { "cannot open the event file '\(path)': \(reason)" }
}
