import Foundation
import HangWatchModel
import Testing

/// Files from before the process metrics, frame loops and histograms existed still read.
@Suite struct ReportFileCompatibilityTests {
    static func report() -> Report {
        let frames = FrameStats(name: "main", deadlineMs: 16.667, frameCount: 120, hitchCount: 3, missedFrames: 4,
                                hitchMs: 60, hitchRatioMsPerS: 25, band: "critical", p50Ms: 4, p95Ms: 22, p99Ms: 40,
                                maxMs: 130, histogram: [HistogramBucket(upToMs: 16, count: 117), HistogramBucket(upToMs: nil, count: 3)])
        return Report(process: ProcessInfoRecord(pid: 7, executable: "/opt/App", arguments: [], exitCode: 0, signal: nil,
                                                 wallMs: 2000, cpuUserMs: 1500.25, cpuSystemMs: 20.5, peakRssKb: 30_000),
                      thresholds: Thresholds(frameMs: 16.667), summary: Summary(hangs: []), hangs: [],
                      frames: frames, frameLoops: [frames], notes: ["n"])
    }

    @Test func newFieldsAreWrittenAndReadBack() throws {
        let data = try JSONReport.encode(Self.report())
        let text = String(decoding: data, as: UTF8.self)
        for field in ["\"cpuUserMs\" : 1500.25", "\"cpuSystemMs\" : 20.5", "\"peakRssKb\" : 30000", "\"frameLoops\" : [",
                      "\"name\" : \"main\"", "\"histogram\" : [", "\"upToMs\" : null"] {
            #expect(text.contains(field), "\(field)")
        }
        #expect(try JSONReport.decode(data) == Self.report())

        var unknown = Self.report()
        unknown.process.cpuUserMs = nil
        unknown.process.cpuSystemMs = nil
        unknown.process.peakRssKb = nil
        let nulls = String(decoding: try JSONReport.encode(unknown), as: UTF8.self)
        for field in ["cpuUserMs", "cpuSystemMs", "peakRssKb", "startTimeUnixNs"] {
            #expect(nulls.contains("\"\(field)\" : null"), "\(field) is an explicit null")
        }
    }

    @Test func olderFilesWithoutTheNewFieldsStillRead() throws {
        let object = try #require(JSONSerialization.jsonObject(with: JSONReport.encode(Self.report())) as? [String: Any])
        var old = object
        old["frameLoops"] = nil
        old["notes"] = nil
        var process = try #require(object["process"] as? [String: Any])
        for key in ["cpuUserMs", "cpuSystemMs", "peakRssKb", "startTimeUnixNs"] { process[key] = nil }
        old["process"] = process
        var frames = try #require(object["frames"] as? [String: Any])
        frames["name"] = nil
        frames["histogram"] = nil
        old["frames"] = frames
        let decoded = try JSONReport.decode(JSONSerialization.data(withJSONObject: old))
        #expect(decoded.frameLoops.isEmpty)
        #expect(decoded.notes.isEmpty)
        #expect(decoded.process.cpuUserMs == nil && decoded.process.peakRssKb == nil && decoded.process.startTimeUnixNs == nil)
        #expect(decoded.frames?.name == "")
        #expect(decoded.frames?.histogram.isEmpty == true)
        #expect(decoded.frames?.hitchRatioMsPerS == 25)
        // Required fields stay required, with their schema path.
        frames["hitchRatioMsPerS"] = nil
        old["frames"] = frames
        #expect(throws: ReportFileError.missingField(path: "frames.hitchRatioMsPerS")) {
            try JSONReport.decode(JSONSerialization.data(withJSONObject: old))
        }
    }
}
