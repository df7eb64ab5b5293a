// The Trace Event Format (JSON object form), read by Perfetto, chrome://tracing
// and speedscope: hangs as slices on their thread's timeline.

import Foundation
import HangWatchAnalysis
import HangWatchModel

/// Renders the report as a trace: one complete (`"ph":"X"`) event per hang,
/// positioned at its real start and duration (µs since process start), with the
/// heaviest call path of each reported hang nested beneath it, plus process and
/// thread name metadata (`"ph":"M"`).
///
/// Nested slices are left-aligned in their parent and as wide as their share of
/// the parent's samples: sampling records how much time a call took, not when
/// within the hang it ran, so only the widths carry information.
package enum ChromeTraceFormat {
    /// Heaviest paths are cut after this many levels; a runaway recursion would
    /// otherwise add thousands of slices that all look the same.
    package static let maxPathDepth = 200

    package static func render(_ report: Report) throws -> Data {
        let pid = report.process.pid
        var events: [TraceEvent] = [.metadata("process_name", pid: pid, tid: pid, name: programName(report.process))]
        var namedThreads = Set<Int>()
        for hang in report.hangs where namedThreads.insert(hang.thread.tid).inserted {
            let name = hang.thread.name.isEmpty ? "thread \(hang.thread.tid)" : hang.thread.name
            events.append(.metadata("thread_name", pid: pid, tid: hang.thread.tid, name: name))
        }
        for hang in report.hangs {
            let slice = TraceEvent.slice(name: "Hang \(NumberFormat.fixed(hang.durationMs, 0)) ms", category: "hang",
                                         pid: pid, tid: hang.thread.tid,
                                         startUs: hang.startMs * 1000, durationUs: max(0, hang.durationMs) * 1000,
                                         args: hangArgs(hang))
            events.append(slice)
            if hang.reported, let tree = hang.callTree {
                events += heaviestPath(tree, in: slice)
            }
        }
        // Hitches would go here, but the report keeps frame statistics only, no per-frame times.
        let trace = TraceFile(traceEvents: events, displayTimeUnit: "ms",
                              otherData: ["producer": "hangwatch \(HangWatchVersion.string)",
                                          "executable": report.process.executable])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(trace)
    }

    /// One slice per level of the heaviest path, each inside the one above it.
    ///
    /// Widths are computed from the parent's width times a fraction ≤ 1 and start at
    /// the parent's start, so rounding can never push a child past its parent's end.
    static func heaviestPath(_ tree: CallTreeNode, in hangSlice: TraceEvent) -> [TraceEvent] {
        var events: [TraceEvent] = []
        var parent = hangSlice
        var parentSamples = max(tree.sampleCount, 0)
        var next: CallTreeNode? = CallTreeBuilder.isSyntheticRoot(tree) ? tree.heaviestChild : tree
        while let node = next, events.count < maxPathDepth, node.sampleCount > 0, parentSamples > 0 {
            let fraction = min(1, Double(node.sampleCount) / Double(parentSamples))
            let slice = TraceEvent.slice(name: node.symbol, category: "stack", pid: parent.pid, tid: parent.tid,
                                         startUs: parent.ts ?? 0, durationUs: (parent.dur ?? 0) * fraction,
                                         args: ["image": .string(node.image), "samples": .int(node.sampleCount),
                                                "selfSamples": .int(node.selfSampleCount)])
            events.append(slice)
            parent = slice
            parentSamples = node.sampleCount
            next = node.heaviestChild
        }
        return events
    }

    static func hangArgs(_ hang: Hang) -> [String: TraceValue] {
        var args: [String: TraceValue] = [
            "id": .int(hang.id), "kind": .string(hang.kind.rawValue), "reported": .bool(hang.reported),
            "inProgress": .bool(hang.inProgress), "sampleCount": .int(hang.sampleCount),
            "sampleCoverage": .double(roundedForJSON(hang.sampleCoverage)),
        ]
        if let blockedIn = hang.blockedIn { args["blockedIn"] = .string(blockedIn) }
        return args
    }
}

extension CallTreeNode {
    /// The child with the most samples; the first of equals, as the tree lists them.
    var heaviestChild: CallTreeNode? {
        var best: CallTreeNode?
        for child in children where child.sampleCount > (best?.sampleCount ?? Int.min) { best = child }
        return best
    }
}

/// One event of the trace. Only the fields its phase uses are written.
struct TraceEvent: Encodable {
    var name: String
    var cat: String?
    var ph: String
    var pid: Int
    var tid: Int
    /// Microseconds since process start.
    var ts: Double?
    var dur: Double?
    var args: [String: TraceValue]

    static func metadata(_ kind: String, pid: Int, tid: Int, name: String) -> TraceEvent {
        TraceEvent(name: kind, cat: nil, ph: "M", pid: pid, tid: tid, ts: nil, dur: nil, args: ["name": .string(name)])
    }

    /// Rounded to nanoseconds (3 decimals of µs); rounding is monotonic, so nesting survives it.
    static func slice(name: String, category: String, pid: Int, tid: Int, startUs: Double, durationUs: Double,
                      args: [String: TraceValue]) -> TraceEvent {
        TraceEvent(name: name, cat: category, ph: "X", pid: pid, tid: tid,
                   ts: finite(roundedForJSON(startUs)), dur: finite(roundedForJSON(durationUs)), args: args)
    }

    /// JSON has no infinity: a time that overflowed (a hostile report's 1e308 ms
    /// times 1000) is written as the largest finite value instead of failing the render.
    static func finite(_ value: Double) -> Double {
        value.isFinite ? value : (value.isNaN ? 0 : (value > 0 ? .greatestFiniteMagnitude : -.greatestFiniteMagnitude))
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: JSONKey.self)
        try c.encode(name, forKey: "name")
        try c.encodeIfPresent(cat, forKey: "cat")
        try c.encode(ph, forKey: "ph")
        try c.encode(pid, forKey: "pid")
        try c.encode(tid, forKey: "tid")
        try c.encodeIfPresent(ts, forKey: "ts")
        try c.encodeIfPresent(dur, forKey: "dur")
        try c.encode(args, forKey: "args")
    }
}

enum TraceValue: Encodable {
    case string(String), int(Int), double(Double), bool(Bool)

    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .string(let v): try c.encode(v)
        case .int(let v): try c.encode(v)
        case .double(let v): try c.encode(v)
        case .bool(let v): try c.encode(v)
        }
    }
}

private struct TraceFile: Encodable {
    var traceEvents: [TraceEvent]
    var displayTimeUnit: String
    var otherData: [String: String]
}
