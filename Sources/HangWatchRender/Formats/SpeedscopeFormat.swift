// speedscope's own file format (https://www.speedscope.app/file-format-schema.json).

import Foundation
import HangWatchModel

/// Renders reported hangs as a speedscope file: one "sampled" profile per hang,
/// frames shared between profiles, weights in milliseconds.
///
/// A report without reported hangs gives a valid file with no profiles.
package enum SpeedscopeFormat {
    package static let schemaURL = "https://www.speedscope.app/file-format-schema.json"

    package static func render(_ report: Report) throws -> Data {
        var frames = Interner<Frame>()
        let msPerSample = report.thresholds.sampleHz > 0 ? 1000 / report.thresholds.sampleHz : 0
        let profiles = report.profiledHangs.map { profiled in
            var stacks = OrderedCounts<[Int]>()
            for stack in profiled.stacks {
                stacks.add(stack.frames.map { frames.index(of: $0) }, stack.weight)
            }
            let hang = profiled.hang
            return SampledProfile(
                name: profileName(hang),
                startValue: TraceEvent.finite(roundedForJSON(hang.startMs)),
                endValue: TraceEvent.finite(roundedForJSON(hang.startMs + max(0, hang.durationMs))),
                samples: stacks.keys,
                weights: stacks.entries.map { TraceEvent.finite(roundedForJSON(Double($0.count) * msPerSample)) })
        }
        let file = SpeedscopeFile(
            schema: schemaURL,
            shared: .init(frames: frames.values.map { SharedFrame(name: $0.symbol, file: $0.image.isEmpty ? nil : $0.image) }),
            profiles: profiles,
            name: "hangwatch: \(programName(report.process))",
            activeProfileIndex: 0,
            exporter: "hangwatch@\(HangWatchVersion.string)")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(file)
    }

    /// `Hang #1: 420.0 ms on main (tid 1234)`: what speedscope lists in its profile picker.
    static func profileName(_ hang: Hang) -> String {
        let thread = hang.thread.name.isEmpty ? "tid \(hang.thread.tid)" : "\(hang.thread.name) (tid \(hang.thread.tid))"
        return "Hang #\(hang.id): \(NumberFormat.ms(hang.durationMs)) on \(thread)"
    }
}

/// `RunLoopDemo (pid 1234)`: the program by its file name.
func programName(_ process: ProcessInfoRecord) -> String {
    let name = process.executable.split(separator: "/").last.map(String.init) ?? process.executable
    return "\(name) (pid \(process.pid))"
}

private struct SpeedscopeFile: Encodable {
    var schema: String
    var shared: Shared
    var profiles: [SampledProfile]
    var name: String
    var activeProfileIndex: Int
    var exporter: String

    struct Shared: Encodable { var frames: [SharedFrame] }

    enum CodingKeys: String, CodingKey {
        case schema = "$schema", shared, profiles, name, activeProfileIndex, exporter
    }
}

private struct SharedFrame: Encodable {
    var name: String
    /// speedscope shows it beside the name; the image is the closest thing to a file we have.
    var file: String?
}

private struct SampledProfile: Encodable {
    let type = "sampled"
    var name: String
    let unit = "milliseconds"
    var startValue: Double
    var endValue: Double
    /// Stacks as indices into `shared.frames`, root first.
    var samples: [[Int]]
    /// One weight per stack, in `unit`.
    var weights: [Double]

    enum CodingKeys: String, CodingKey {
        case type, name, unit, startValue, endValue, samples, weights
    }
}
