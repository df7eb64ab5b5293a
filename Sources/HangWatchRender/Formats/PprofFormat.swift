// pprof's profile.proto (github.com/google/pprof, proto/profile.proto), gzipped as pprof expects on disk.

import Foundation
import HangWatchGzip
import HangWatchModel

/// Renders reported hangs as a pprof profile.
///
/// - sample types `samples/count` and `wall/nanoseconds` (count × period);
/// - one Sample per distinct stack of each hang, location ids leaf first, with
///   the labels `hang` (its id, numeric) and `thread` (its name or tid);
/// - one Location and one Function per distinct (symbol, image), sharing ids;
///   the report keeps no addresses, so locations carry function names only;
/// - one Mapping per image, the program's own executable first.
package enum PprofFormat {
    /// The gzip-compressed profile, ready for `go tool pprof` or `pprof -http`.
    ///
    /// - Parameter startTime: when the process started, for `time_nanos`; by default the
    ///   report's `process.startTimeUnixNs` (reports from before it was recorded have
    ///   none, and then `time_nanos` is left unset). Pyroscope and Parca need it to
    ///   place the profile in time.
    package static func render(_ report: Report, startTime: Date? = nil) throws -> Data {
        try Gzip.compress(encode(report, startTime: startTime))
    }

    /// The serialized `perftools.profiles.Profile` message, uncompressed.
    package static func encode(_ report: Report, startTime: Date? = nil) -> [UInt8] {
        let hangs = report.profiledHangs.map { (hang: $0.hang, stacks: $0.stacks) }
        var tables = ProfileTables()
        // pprof takes the first mapping for the main binary. Frames name images by
        // file name, the process record by the path it was started with.
        let executable = report.process.executable
        let executableName = executable.split(separator: "/").last.map(String.init) ?? executable
        let images = hangs.lazy.flatMap { $0.stacks.lazy.flatMap { $0.frames.lazy.map(\.image) } }
        if let main = images.first(where: { $0 == executable || $0 == executableName }) {
            _ = tables.mappingId(main)
        }
        let samples = hangs.flatMap { tables.samples(of: $0.hang, stacks: $0.stacks) }
        let periodNs = report.thresholds.sampleHz > 0 ? saturatingInt64(1e9 / report.thresholds.sampleHz) : 0
        let comment = tables.string("hangwatch \(HangWatchVersion.string): \(programName(report.process))")
        let sampleTypes = [(tables.string("samples"), tables.string("count")),
                           (tables.string("wall"), tables.string("nanoseconds"))]
        let hangKey = tables.string("hang"), threadKey = tables.string("thread")

        var out = ProtobufWriter()
        for (type, unit) in sampleTypes {
            out.message(Field.sampleType) { $0.int64(1, type); $0.int64(2, unit) }  // ValueType
        }
        for sample in samples {
            out.message(Field.sample) { s in
                s.packed(1, sample.locationIds)  // location_id
                let values = [sample.count, multiplySaturating(sample.count, periodNs)]
                s.packed(2, values.map { UInt64(bitPattern: $0) })  // value, one per sample type
                s.message(3) { $0.int64(1, hangKey); $0.int64(3, Int64(sample.hangId)) }  // label: key, num
                s.message(3) { $0.int64(1, threadKey); $0.int64(2, sample.thread) }  // label: key, str
            }
        }
        for (index, image) in tables.images.enumerated() {
            out.message(Field.mapping) { m in
                m.uint64(1, UInt64(index + 1))  // id
                m.int64(5, image)  // filename
                m.bool(7, true)  // has_functions: already symbolized, nothing for pprof to look up
            }
        }
        for (index, frame) in tables.frames.values.enumerated() {
            out.message(Field.location) { l in
                l.uint64(1, UInt64(index + 1))  // id
                l.uint64(2, frame.mappingId)  // mapping_id
                l.message(4) { $0.uint64(1, UInt64(index + 1)) }  // Line.function_id
            }
        }
        for (index, frame) in tables.frames.values.enumerated() {
            out.message(Field.function) { f in
                f.uint64(1, UInt64(index + 1))  // id, the same as its location's
                f.int64(2, frame.name)  // name
                f.int64(3, frame.name)  // system_name: the report keeps demangled names only
            }
        }
        for string in tables.strings.values { out.string(Field.stringTable, string) }
        if let startTime {
            out.int64(Field.timeNanos, saturatingInt64(startTime.timeIntervalSince1970 * 1e9))
        } else if let start = report.process.startTimeUnixNs {
            out.int64(Field.timeNanos, start)
        }
        out.int64(Field.durationNanos, saturatingInt64(report.process.wallMs * 1e6))
        out.message(Field.periodType) { $0.int64(1, sampleTypes[1].0); $0.int64(2, sampleTypes[1].1) }
        out.int64(Field.period, periodNs)
        out.packed(Field.comment, [UInt64(bitPattern: comment)])
        out.int64(Field.defaultSampleType, sampleTypes[1].0)
        return out.bytes
    }

    /// Field numbers of `Profile`.
    private enum Field {
        static let sampleType = 1, sample = 2, mapping = 3, location = 4, function = 5, stringTable = 6
        static let timeNanos = 9, durationNanos = 10, periodType = 11, period = 12, comment = 13
        static let defaultSampleType = 14
    }
}

/// The interned tables a profile refers to by index or id.
private struct ProfileTables {
    struct PprofFrame: Hashable {
        var name: Int64
        var mappingId: UInt64
    }

    struct PprofSample {
        var locationIds: [UInt64]
        var count: Int64
        var hangId: Int
        var thread: Int64
    }

    var strings = Interner<String>([""])
    var frames = Interner<PprofFrame>()
    /// String indices of image names; a mapping's id is its position + 1.
    private(set) var images: [Int64] = []
    private var mappingIds: [String: UInt64] = [:]

    mutating func string(_ value: String) -> Int64 { Int64(strings.index(of: value)) }

    /// 0, "no mapping", for frames without an image (`[unknown]`).
    mutating func mappingId(_ image: String) -> UInt64 {
        guard !image.isEmpty else { return 0 }
        if let id = mappingIds[image] { return id }
        images.append(string(image))
        mappingIds[image] = UInt64(images.count)
        return UInt64(images.count)
    }

    mutating func samples(of hang: Hang, stacks: [WeightedStack]) -> [PprofSample] {
        var merged = OrderedCounts<[UInt64]>()
        for stack in stacks {
            let leafFirst = stack.frames.reversed().map { frame in
                UInt64(frames.index(of: PprofFrame(name: string(frame.symbol), mappingId: mappingId(frame.image))) + 1)
            }
            merged.add(leafFirst, stack.weight)
        }
        let thread = string(hang.thread.name.isEmpty ? "tid \(hang.thread.tid)" : hang.thread.name)
        return merged.entries.map {
            PprofSample(locationIds: $0.key, count: Int64($0.count), hangId: hang.id, thread: thread)
        }
    }
}

/// A Double as Int64 without trapping: NaN is 0, out-of-range values clamp.
func saturatingInt64(_ value: Double) -> Int64 {
    guard !value.isNaN else { return 0 }
    if value >= 9.2e18 { return Int64.max }
    if value <= -9.2e18 { return Int64.min }
    return Int64(value.rounded())
}

private func multiplySaturating(_ a: Int64, _ b: Int64) -> Int64 {
    let (product, overflow) = a.multipliedReportingOverflow(by: b)
    return overflow ? ((a < 0) != (b < 0) ? Int64.min : Int64.max) : product
}
