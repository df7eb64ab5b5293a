import Foundation
import HangWatch
import HangWatchModel
import HangWatchRender

/// CI gates of `hangwatch run`: limits that turn a finished run into a failure.
struct RunGates {
    enum HangLimit: Equatable {
        /// `--fail-on-hang`: any hang that reached the report threshold (`--report-ms`).
        case reportThreshold
        /// `--fail-on-hang=MS`.
        case ms(Double)
    }

    var hang: HangLimit?
    /// `--count-stopped`: hangs whose cause is `stopped` (the process was
    /// stopped for most of them) count for the hang gate too; by default they do not.
    var countStopped = false
    /// `--fail-on-hitch-ratio=X`: the main frame loop's hitch ratio must not exceed X ms/s.
    var hitchRatioMsPerS: Double?

    /// A breached (or unmeasurable) gate: its status and the line that explains it.
    struct Breach {
        var status: Int32
        var message: String
    }

    /// Writes `report` as `format` to `output` (stderr when nil), then
    /// applies the gates: a breached gate's status replaces `status` (the
    /// program's own, for `run`). Shared by `run` and `attach`.
    func conclude(_ report: Report, format: ReportFormat, output: String?, status: Int32) -> Int32 {
        let written = ReportOutput.write(report, format: format,
                                         to: OutputDestination(path: output, otherwise: .standardError))
        if written != 0 { return written }
        let found = breaches(of: report)
        for breach in found { writeStderr("hangwatch: \(breach.message)") }
        return found.first?.status ?? status
    }

    /// Every gate that failed, in the order of their statuses; the first one's status is the exit status.
    func breaches(of report: Report) -> [Breach] {
        var found: [Breach] = []
        if let hang {
            let limit: Double
            switch hang {
            case .reportThreshold: limit = report.thresholds.reportMs
            case .ms(let ms): limit = ms
            }
            let over = report.hangs.filter { $0.durationMs >= limit && (countStopped || $0.cause?.kind != .stopped) }
            if let longest = over.max(by: { $0.durationMs < $1.durationMs }) {
                found.append(Breach(status: ExitCode.hangGate, message:
                    "hang gate failed: \(over.count) \(over.count == 1 ? "hang" : "hangs") of \(limit.clean) ms or more "
                    + "(longest \(String(format: "%.1f", longest.durationMs)) ms, hang #\(longest.id))"))
            }
        }
        if let maximum = hitchRatioMsPerS {
            if let frames = report.frames {
                if frames.hitchRatioMsPerS > maximum {
                    found.append(Breach(status: ExitCode.hitchGate, message:
                        "hitch-ratio gate failed: \(String(format: "%.2f", frames.hitchRatioMsPerS)) ms/s is above \(maximum.clean) ms/s "
                        + "(\(frames.hitchCount) \(frames.hitchCount == 1 ? "hitch" : "hitches") in \(frames.frameCount) frames)"))
                }
            } else {
                found.append(Breach(status: ExitCode.gateNotMeasured, message:
                    "hitch-ratio gate cannot pass: no frame was measured (the watched loop never ran a frame)"))
            }
        }
        return found
    }
}
