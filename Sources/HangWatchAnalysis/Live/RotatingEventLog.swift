import Foundation
import Glibc
import HangWatchCapture
import HangWatchModel

/// The event stream file, rotated by size or age when a policy is given
/// (`--rotate`). Each closed file ends with an interval summary line (the
/// hangs that ended in it and the frames read meanwhile), then moves to
/// `NAME.1.EXT`, older ones to `NAME.2.EXT` … `NAME.<keep>.EXT`, the oldest
/// beyond that is deleted. At exit the file being written gets its summary
/// too, so every file of a rotating stream ends with one.
///
/// Rotating is also what keeps a long-running reader small: at each rotation
/// the collector forgets the hangs and frames the closed file holds, and the
/// stacks no open hang uses. The report at exit then covers the interval since
/// the last rotation, which its notes say.
///
/// Single-threaded: used on the reader's thread after each drain.
package final class RotatingEventLog {
    package let path: String
    package let rotation: RotationPolicy?
    private var file: EventFile
    private var bytes: Int
    private var openedNs: UInt64
    private var openedUnixNs: Int64
    private var tally = IntervalTally()
    private var earlierFailedWrites = 0
    /// How many times the file was closed and a new one started.
    package private(set) var rotations = 0
    /// Hangs told in files already closed (the report at exit no longer holds them).
    package private(set) var hangsInClosedFiles = 0
    /// When the current file was started, in ns since the Unix epoch.
    package var currentFileStartUnixNs: Int64 { openedUnixNs }

    /// Opens (creating, never truncating) `path`; throws the errno text.
    package init(path: String, rotation: RotationPolicy?, nowNs: UInt64) throws(EventFileError) {
        self.path = path
        self.rotation = rotation
        file = try EventFile(path: path)
        bytes = file.initialSize
        openedNs = nowNs
        openedUnixNs = SystemClock.unixNs(ofMonotonic: nowNs)
    }

    /// What the report at exit should say about the files: with rotations, it
    /// covers only the interval since the last one.
    package var reportNote: String? {
        guard rotations > 0 else { return nil }
        return "the event stream rotated \(rotations) time\(rotations == 1 ? "" : "s"): this report covers the "
            + "\(NumberFormat.fixed(Double(max(0, SystemClock.unixNs() - openedUnixNs)) / 1e9, 1)) s since the last "
            + "rotation; the \(hangsInClosedFiles) hang\(hangsInClosedFiles == 1 ? "" : "s") before it are in "
            + "\(Self.name(path, 1)) and older files, each ending with its interval's summary"
    }

    /// Lines that could not be written, over every file.
    package var failedWrites: Int { earlierFailedWrites + file.failedWrites }

    /// Writes `events` (from `live`, which reads `collector`), rotating first
    /// when a line would not fit, and once more if the interval has passed.
    package func append(_ events: [HangEvent], live: LiveHangs, collector: CaptureCollector, nowNs: UInt64) {
        for event in events {
            guard let line = try? HangEventLines.encode(event) else {
                earlierFailedWrites += 1
                continue
            }
            // Room is kept for the summary line that closes the file, so no file passes the size.
            if let max = rotation?.maxBytes, bytes > 0,
               bytes + line.count + summaryLine(.size, live: live, collector: collector, nowNs: nowNs).count > max {
                rotate(.size, live: live, collector: collector, nowNs: nowNs)
            }
            file.append(line: line)
            bytes += line.count
            if event.phase == .ended { tally.add(event.hang) }
        }
        if let interval = rotation?.intervalNs, nowNs &- openedNs >= interval {
            rotate(.interval, live: live, collector: collector, nowNs: nowNs)
        }
    }

    /// At exit: the file being written gets its summary line (rotating streams only).
    package func close(live: LiveHangs, collector: CaptureCollector, nowNs: UInt64) {
        guard rotation != nil else { return }
        writeSummary(.exit, live: live, collector: collector, nowNs: nowNs)
    }

    /// The line that would close the file now (empty if it cannot be encoded).
    private func summaryLine(_ why: IntervalSummary.ClosedBy, live: LiveHangs, collector: CaptureCollector,
                             nowNs: UInt64) -> Data {
        // A size-closed file's summary counts the hang whose line did not fit
        // as the next file's: the tally is the file's own.
        let summary = IntervalSummary(startUnixNs: openedUnixNs, endUnixNs: SystemClock.unixNs(ofMonotonic: nowNs),
                                      closedBy: why, process: live.process, thresholds: live.thresholds,
                                      summary: tally.summary, frameLoops: live.frameStats(of: collector))
        return (try? HangEventLines.encode(summary)) ?? Data()
    }

    private func writeSummary(_ why: IntervalSummary.ClosedBy, live: LiveHangs, collector: CaptureCollector,
                              nowNs: UInt64) {
        let line = summaryLine(why, live: live, collector: collector, nowNs: nowNs)
        guard !line.isEmpty else {
            earlierFailedWrites += 1
            return
        }
        file.append(line: line)
        bytes += line.count
    }

    private func rotate(_ why: IntervalSummary.ClosedBy, live: LiveHangs, collector: CaptureCollector, nowNs: UInt64) {
        guard let keep = rotation?.keep else { return }
        writeSummary(why, live: live, collector: collector, nowNs: nowNs)
        unlink(Self.name(path, keep))
        for k in stride(from: keep - 1, through: 1, by: -1) { rename(Self.name(path, k), Self.name(path, k + 1)) }
        rename(path, Self.name(path, 1))
        earlierFailedWrites += file.failedWrites
        do {
            file = try EventFile(path: path)
        } catch {
            // The old descriptor (now NAME.1) goes on taking lines rather than losing them.
            earlierFailedWrites += 1
            return
        }
        bytes = file.initialSize
        rotations += 1
        hangsInClosedFiles += tally.summary.hangCount
        // What the closed file holds leaves memory.
        collector.forget(live.takeClosed(endedEvents: tally.summary.hangCount))
        collector.forgetFrames()
        collector.compactStacks()
        tally = IntervalTally()
        openedNs = nowNs
        openedUnixNs = SystemClock.unixNs(ofMonotonic: nowNs)
    }

    /// `hangs.jsonl` → `hangs.3.jsonl`; `hangs` → `hangs.3` (the extension is
    /// kept, so `hangwatch report` and editors still know the file).
    package static func name(_ path: String, _ index: Int) -> String {
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        if let dot = path[slash...].lastIndex(of: "."), dot != slash {
            return "\(path[..<dot]).\(index)\(path[dot...])"
        }
        return "\(path).\(index)"
    }
}

/// The running totals of one interval's ended hangs.
struct IntervalTally {
    private(set) var summary = Summary(hangCount: 0, reportedHangCount: 0, totalHangMs: 0, longestHangMs: 0)

    mutating func add(_ hang: Hang) {
        summary.hangCount += 1
        if hang.reported { summary.reportedHangCount += 1 }
        summary.totalHangMs += hang.durationMs
        summary.longestHangMs = max(summary.longestHangMs, hang.durationMs)
    }
}
