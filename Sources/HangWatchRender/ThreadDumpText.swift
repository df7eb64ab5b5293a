// Rendering a thread dump: plain text for people, JSON for tools.

import Foundation
import HangWatchAnalysis
import HangWatchCapture

extension ThreadDump {
    /// One block per thread: tid, name, state, the syscall it waits in, then its frames, leaf first.
    package func text() -> String {
        var out = "Process \(pid) (\(executable)): \(threads.count) threads, stacks read in "
            + "\(AttachFigures.fixed(captureMs, 1)) ms"
        if stoppedThreads > 0 {
            out += " (\(stoppedThreads) running \(stoppedThreads == 1 ? "thread was" : "threads were") stopped, "
                + "at most \(AttachFigures.fixed(longestStopUs, 0)) µs)"
        }
        out += "\n"
        for t in threads {
            var line = "\nThread \(t.tid) \"\(t.name)\" \(Self.stateName(t.state))"
            if let call = t.syscall { line += " in \(call)" }
            out += line + "\n"
            if t.frames.isEmpty {
                out += "    (no stack\(t.error.map { ": " + $0 } ?? ""))\n"
            }
            for (i, frame) in t.frames.enumerated() {
                let index = String(i).count < 2 ? " " + String(i) : String(i)
                out += "  #\(index) \(frame.symbol)" + (frame.image.isEmpty ? "" : "  (\(frame.image))") + "\n"
            }
        }
        return out
    }

    /// Pretty-printed JSON with sorted keys (stable for tests and diffs).
    package func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    static func stateName(_ letter: String) -> String {
        switch letter {
        case "R": return "running"
        case "S": return "sleeping"
        case "D": return "in uninterruptible sleep"
        case "T": return "stopped"
        case "t": return "stopped by a tracer"
        case "Z": return "zombie"
        default: return "state \(letter)"
        }
    }
}
