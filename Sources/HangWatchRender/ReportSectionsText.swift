// The optional launch and frame-deadline sections of the text report.

import HangWatchModel

enum ReportSectionsText {
    static func launch(_ launch: Launch, width: Int) -> [String] {
        let samples = "\(launch.sampleCount) \(launch.sampleCount == 1 ? "sample" : "samples")"
        let header: String
        if launch.parked != nil {
            header = "Launch: \(NumberFormat.ms(launch.durationMs)) from process start until the main thread parked "
                + "outside any loop (\(samples))"
        } else if launch.reachedFirstWait {
            header = "Launch: \(NumberFormat.ms(launch.durationMs)) from process start to the first wait (\(samples))"
        } else {
            header = "Launch: the watched thread never waited; \(NumberFormat.ms(launch.durationMs)) is the whole run (\(samples))"
        }
        var out = TextLayout.wrap(header, width: width)
        if let park = launch.parked { out += TextLayout.wrap("  " + parkLine(park), width: width) }
        if let tree = launch.callTree {
            out += CallTreeText(width: width).lines(for: tree)
        }
        return out
    }

    /// "parked at +0.061 s in futex, called from CloseFuture.wait(deadline:): not a launch, not a hang".
    static func parkLine(_ park: LaunchPark) -> String {
        var line = "parked at +\(NumberFormat.fixed(park.atMs / 1000, 3)) s"
        if let call = park.blockedIn { line += " in \(call)" }
        if let from = park.calledFrom { line += ", called from \(HangStateText.short(from, image: ""))" }
        return line + ": a wait outside any loop, neither launch nor hang"
    }

    /// "Process: CPU 1.18 s (user 1.17 s, system 0.01 s), peak RSS 19.8 MiB"; nil when unknown.
    static func process(_ process: ProcessInfoRecord, width: Int) -> [String]? {
        var parts: [String] = []
        if let user = process.cpuUserMs, let system = process.cpuSystemMs {
            parts.append("CPU \(NumberFormat.fixed((user + system) / 1000, 2)) s (user "
                + "\(NumberFormat.fixed(user / 1000, 2)) s, system \(NumberFormat.fixed(system / 1000, 2)) s)")
        }
        if let kb = process.peakRssKb { parts.append("peak RSS \(NumberFormat.fixed(Double(kb) / 1024, 1)) MiB") }
        return parts.isEmpty ? nil : TextLayout.wrap("Process: " + parts.joined(separator: ", "), width: width)
    }

    /// A small bar chart of frame times, buckets relative to the deadline.
    static func histogram(_ buckets: [HistogramBucket], width: Int) -> [String] {
        let largest = buckets.map(\.count).max() ?? 0
        guard largest > 0 else { return [] }
        let barSpace = max(10, min(40, width - 26))
        var previous = 0.0
        return buckets.map { bucket in
            let label = bucket.upToMs.map { "≤ " + NumberFormat.ms($0) } ?? "> " + NumberFormat.ms(previous)
            if let bound = bucket.upToMs { previous = bound }
            let bar = String(repeating: "█", count: bucket.count == 0 ? 0 : max(1, bucket.count * barSpace / largest))
            let line = "    " + TextLayout.padRight(label, to: 11) + " " + bar + (bucket.count > 0 ? " \(bucket.count)" : "")
            return String(line.reversed().drop { $0 == " " }.reversed())
        }
    }

    static func frames(_ frames: FrameStats, width: Int) -> [String] {
        let loop = frames.name.isEmpty ? "" : " of \(frames.name)"
        let counts = "Frames\(loop) (deadline \(NumberFormat.ms(frames.deadlineMs))): \(frames.frameCount) frames, "
            + "\(frames.hitchCount) \(frames.hitchCount == 1 ? "hitch" : "hitches"), "
            + "\(frames.missedFrames) missed, \(NumberFormat.ms(frames.hitchMs)) hitching"
        let ratio = "hitch ratio \(NumberFormat.fixed(frames.hitchRatioMsPerS, 1)) ms/s (\(frames.band)); "
            + "p50 \(NumberFormat.ms(frames.p50Ms)), p95 \(NumberFormat.ms(frames.p95Ms)), "
            + "p99 \(NumberFormat.ms(frames.p99Ms)), max \(NumberFormat.ms(frames.maxMs))"
        return TextLayout.wrap(counts, width: width) + TextLayout.wrap("  " + ratio, width: width, hangingIndent: 4)
            + histogram(frames.histogram, width: width)
    }
}
