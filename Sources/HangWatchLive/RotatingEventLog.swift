import Foundation
import Glibc
import HangWatchAnalysis
import HangWatchCapture
import HangWatchModel

/// The event stream file, rotated by size or age when a policy is given
/// (`--rotate`). Each closed file ends with an interval summary line (the
/// hangs that ended in it and the frames read meanwhile), then moves to
/// `NAME.1.EXT`, older ones to `NAME.2.EXT` … `NAME.<keep>.EXT`, the oldest
/// beyond that is deleted. At exit the file being written gets its summary
/// too, so every file of a rotating stream ends with one. A file left by an
/// earlier run is moved into the chain at start, untouched, so no file mixes
/// two runs under one summary.
///
/// Rotating is also what keeps a long-running reader small: at each rotation
/// the collector forgets the hangs and frames the closed file holds, and the
/// stacks no open hang uses. The report at exit then covers the interval since
/// the last rotation, which its notes say.
///
/// A rotation that fails (a directory that cannot be written, no descriptor
/// left) loses nothing: the lines go on to the file already open, the failed
/// attempt starts a new interval all the same (so it is not retried at every
/// line), and the report says so.
///
/// Single-threaded: used on the reader's thread after each drain.
package final class RotatingEventLog {
    package let path: String
    package let rotation: RotationPolicy?
    private var file: EventFile
    /// Bytes written in the current interval (the file's size, unless a rotation failed).
    private var bytes: Int
    private var openedNs: UInt64
    private var openedUnixNs: Int64
    private var tally = IntervalTally()
    /// Failed writes of files no longer written to, and lines that could not be encoded.
    private var earlierFailedWrites = 0
    /// How many intervals were closed with a summary (rotations, and attempts that failed).
    package private(set) var intervalsClosed = 0
    /// How many times the file was moved into the chain and a new one started.
    package private(set) var rotations = 0
    /// Rotations that could not rename or reopen, and the first reason.
    package private(set) var failedRotations = 0
    private var firstRotationFailure: String?
    /// Hangs told in intervals already closed (the report at exit no longer holds them).
    package private(set) var hangsInClosedIntervals = 0
    /// Times the file was found deleted or moved away by someone else, and opened anew at the path.
    package private(set) var reopenedAfterRemoval = 0
    /// Room kept for the closing summary in this interval (see `append`).
    private var summaryRoom: Int?

    /// Opens (creating, never truncating) `path`; throws the errno text.
    /// With a policy, a non-empty file already at `path` is moved to
    /// `NAME.1.EXT` first.
    package init(path: String, rotation: RotationPolicy?, nowNs: UInt64) throws(EventFileError) {
        self.path = path
        self.rotation = rotation
        if let keep = rotation?.keep {
            var info = stat()
            if stat(path, &info) == 0, info.st_size > 0, (info.st_mode & S_IFMT) == S_IFREG,
               let failure = Self.shift(path, keep: keep) {
                // Appended to, then: the earlier run's lines stay before this run's.
                failedRotations += 1
                firstRotationFailure = "moving the earlier run's file: \(failure)"
            }
        }
        file = try EventFile(path: path)
        bytes = file.initialSize
        openedNs = nowNs
        openedUnixNs = SystemClock.unixNs(ofMonotonic: nowNs)
    }

    /// What the report at exit should say about the files: with rotations, it
    /// covers only the interval since the last one.
    package var reportNote: String? {
        var notes: [String] = []
        if intervalsClosed > 0 {
            let kept = rotation.map { min(rotations, $0.keep) } ?? 0
            notes.append("the event stream closed \(intervalsClosed) interval\(intervalsClosed == 1 ? "" : "s") "
                + "(\(rotations) rotated into \(Self.name(path, 1)) and older, \(kept) kept): this report covers "
                + "the \(NumberFormat.fixed(Double(max(0, SystemClock.unixNs() - openedUnixNs)) / 1e9, 1)) s since "
                + "the last; the \(hangsInClosedIntervals) hang\(hangsInClosedIntervals == 1 ? "" : "s") that ended "
                + "before it are in the stream, each interval ending with its summary")
        }
        if failedRotations > 0 {
            notes.append("\(failedRotations) rotation\(failedRotations == 1 ? "" : "s") of \(path) failed "
                + "(\(firstRotationFailure ?? "unknown")): the lines went on to the file already open")
        }
        if reopenedAfterRemoval > 0 {
            notes.append("\(path) was deleted or moved away \(reopenedAfterRemoval) time\(reopenedAfterRemoval == 1 ? "" : "s") "
                + "while hangwatch wrote to it, and opened anew there")
        }
        return notes.isEmpty ? nil : notes.joined(separator: "; ")
    }

    /// Lines that could not be written, over every file.
    package var failedWrites: Int { earlierFailedWrites + file.failedWrites }

    /// Writes `events` (from `live`, which reads `collector`), rotating first
    /// when a line would not fit, and once more if the interval has passed
    /// (not with `final`: at exit the file is closed by `close`, not rotated).
    package func append(_ events: [HangEvent], live: LiveHangs, collector: CaptureCollector, nowNs: UInt64,
                        final: Bool = false) {
        // A file someone deleted or moved away (an outside log rotation) takes
        // no more lines: the path is opened anew, and the chain is left alone.
        if !events.isEmpty, !file.isAtPath { reopenAfterRemoval() }
        for event in events {
            // Counted whatever happens to the line, so the tally and the keys
            // the collector forgets at the next rotation stay in step.
            defer { if event.phase == .ended { tally.add(event.hang) } }
            guard let line = try? HangEventLines.encode(event) else {
                earlierFailedWrites += 1
                continue
            }
            if let max = rotation?.maxBytes, bytes > 0 {
                // Room kept for the summary that closes the file: its size when
                // first needed in the interval, plus slack for the digits the
                // tally and frame counts gain and a loop or two more. Made once
                // per interval: it reads every frame of the interval.
                let room = summaryRoom ?? (summaryLine(.size, live: live, collector: collector,
                                                       endUnixNs: SystemClock.unixNs(ofMonotonic: nowNs)).count + 512)
                summaryRoom = room
                if bytes + line.count + room > max { rotate(.size, live: live, collector: collector, nowNs: nowNs) }
            }
            file.append(line: line)
            bytes += line.count
        }
        if !final, let interval = rotation?.intervalNs, nowNs &- openedNs >= interval {
            rotate(.interval, live: live, collector: collector, nowNs: nowNs)
        }
    }

    /// At exit: the file being written gets its summary line (rotating streams only).
    package func close(live: LiveHangs, collector: CaptureCollector, nowNs: UInt64) {
        guard rotation != nil else { return }
        writeSummary(.exit, live: live, collector: collector, endUnixNs: SystemClock.unixNs(ofMonotonic: nowNs))
    }

    /// The line that would close the file now, at `endUnixNs` (empty if it cannot be encoded).
    private func summaryLine(_ why: IntervalSummary.ClosedBy, live: LiveHangs, collector: CaptureCollector,
                             endUnixNs: Int64) -> Data {
        let summary = IntervalSummary(startUnixNs: openedUnixNs, endUnixNs: max(endUnixNs, openedUnixNs),
                                      closedBy: why, process: live.process, thresholds: live.thresholds,
                                      summary: tally.summary, frameLoops: live.frameStats(of: collector))
        return (try? HangEventLines.encode(summary)) ?? Data()
    }

    private func writeSummary(_ why: IntervalSummary.ClosedBy, live: LiveHangs, collector: CaptureCollector,
                              endUnixNs: Int64) {
        let line = summaryLine(why, live: live, collector: collector, endUnixNs: endUnixNs)
        guard !line.isEmpty else {
            earlierFailedWrites += 1
            return
        }
        file.append(line: line)
        bytes += line.count
    }

    private func rotate(_ why: IntervalSummary.ClosedBy, live: LiveHangs, collector: CaptureCollector, nowNs: UInt64) {
        guard let keep = rotation?.keep else { return }
        // One reading ends this interval and starts the next: no gap, no overlap.
        let boundary = max(SystemClock.unixNs(ofMonotonic: nowNs), openedUnixNs)
        writeSummary(why, live: live, collector: collector, endUnixNs: boundary)
        if !file.isAtPath {
            // Deleted or moved away by someone else: nothing of ours to move into the chain.
            reopenAfterRemoval()
        } else if let failure = Self.shift(path, keep: keep) {
            noteFailure(failure)
        } else {
            do {
                let next = try EventFile(path: path)
                earlierFailedWrites += file.failedWrites
                file = next
                rotations += 1
            } catch {
                // The open descriptor (now NAME.1) goes on taking lines rather than losing them.
                noteFailure(error.reason)
            }
        }
        // The interval ends whether or not the files moved: its summary is
        // written, and a failure is retried only at the next boundary.
        intervalsClosed += 1
        hangsInClosedIntervals += tally.summary.hangCount
        summaryRoom = nil
        // What the closed interval holds leaves memory.
        collector.forget(live.takeClosed(endedEvents: tally.summary.hangCount))
        collector.forgetFrames()
        collector.compactStacks()
        tally = IntervalTally()
        bytes = 0
        openedNs = nowNs
        openedUnixNs = boundary
    }

    /// Opens `path` anew after the file was deleted or moved away under us.
    private func reopenAfterRemoval() {
        guard let next = try? EventFile(path: path) else { return }
        earlierFailedWrites += file.failedWrites
        file = next
        bytes = next.initialSize
        reopenedAfterRemoval += 1
    }

    private func noteFailure(_ reason: String) {
        failedRotations += 1
        if firstRotationFailure == nil { firstRotationFailure = reason }
    }

    /// Moves `path` to `NAME.1.EXT` and each older file up by one, deleting
    /// the one beyond `keep`. Returns why it failed, or nil. A missing older
    /// file is no failure (the chain is still short).
    private static func shift(_ path: String, keep: Int) -> String? {
        if unlink(name(path, keep)) != 0 && errno != ENOENT { return "unlink: \(String(cString: strerror(errno)))" }
        for k in stride(from: keep - 1, through: 1, by: -1) where rename(name(path, k), name(path, k + 1)) != 0 {
            if errno != ENOENT { return "rename: \(String(cString: strerror(errno)))" }
        }
        if rename(path, name(path, 1)) != 0 { return "rename: \(String(cString: strerror(errno)))" }
        return nil
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
