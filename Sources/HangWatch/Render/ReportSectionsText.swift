// The optional launch and frame-deadline sections of the text report.

enum ReportSectionsText {
    static func launch(_ launch: Launch, width: Int) -> [String] {
        let samples = "\(launch.sampleCount) \(launch.sampleCount == 1 ? "sample" : "samples")"
        let header = launch.reachedFirstWait
            ? "Launch: \(NumberFormat.ms(launch.durationMs)) from process start to the first wait (\(samples))"
            : "Launch: the watched thread never waited; \(NumberFormat.ms(launch.durationMs)) is the whole run (\(samples))"
        var out = TextLayout.wrap(header, width: width)
        if let tree = launch.callTree {
            out += CallTreeText(width: width).lines(for: tree)
        }
        return out
    }

    static func frames(_ frames: FrameStats, width: Int) -> [String] {
        let counts = "Frames (deadline \(NumberFormat.ms(frames.deadlineMs))): \(frames.frameCount) frames, "
            + "\(frames.hitchCount) \(frames.hitchCount == 1 ? "hitch" : "hitches"), "
            + "\(frames.missedFrames) missed, \(NumberFormat.ms(frames.hitchMs)) hitching"
        let ratio = "hitch ratio \(NumberFormat.fixed(frames.hitchRatioMsPerS, 1)) ms/s (\(frames.band)); "
            + "p50 \(NumberFormat.ms(frames.p50Ms)), p95 \(NumberFormat.ms(frames.p95Ms)), "
            + "p99 \(NumberFormat.ms(frames.p99Ms)), max \(NumberFormat.ms(frames.maxMs))"
        return TextLayout.wrap(counts, width: width) + TextLayout.wrap("  " + ratio, width: width, hangingIndent: 4)
    }
}
