import HangWatchCapture
import HangWatchModel

/// How much of a hang was spent blocked, and in which call mostly.
package struct BlockedProfile {
    /// The kind the samples alone say (`unknown` without any).
    package let kind: HangKind
    /// The call the blocked samples were in most; nil for `cpu` and `unknown`.
    package let mainCall: String?
    /// Sampling ticks that found the thread blocked, and all ticks sampled.
    package let blockedTicks: Int, ticks: Int

    package init(samples: [CapturedSample]) {
        var blockedWeight = 0, total = 0
        var byCall: [String: Int] = [:]
        for s in samples {
            total += s.weight
            if s.source != .signal {
                blockedWeight += s.weight
                byCall[s.call.name, default: 0] += s.weight
            }
        }
        (blockedTicks, ticks) = (blockedWeight, total)
        let fraction = total == 0 ? 0 : Double(blockedWeight) / Double(total)
        // No sample says nothing: not `cpu` by default.
        kind = total == 0 ? .unknown : fraction >= 0.9 ? .blocked : (fraction <= 0.1 ? .cpu : .mixed)
        mainCall = kind == .cpu || kind == .unknown ? nil : byCall.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key
    }
}
