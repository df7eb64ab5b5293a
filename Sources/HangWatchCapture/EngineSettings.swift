// The one translation of a CaptureConfig into what the C side reads: the
// in-process engine's `hw_config`, the sample log header the preload agent
// reads at start, and the attach poller's `hwa_config`. Every conversion to
// nanoseconds and flags is made here and nowhere else.

import CHangWatchAttach
import CHangWatchEngine

extension CaptureConfig {
    /// The hang threshold in nanoseconds.
    package var hangNs: UInt64 { UInt64(hangMs * 1e6) }
    /// The report threshold in nanoseconds.
    package var reportNs: UInt64 { UInt64(reportMs * 1e6) }
    /// The time between two samples of a thread, in nanoseconds.
    package var samplePeriodNs: UInt64 { UInt64(1e9 / sampleHz) }
    /// The frame deadline in nanoseconds; 0: none.
    package var frameNs: UInt64 { UInt64((frameMs ?? 0) * 1e6) }
    /// The thread selection as the engine reads it: one pattern a line.
    package var threadPatternLines: String { threadPatterns.joined(separator: "\n") }

    /// The in-process engine's configuration. `patterns` must point at
    /// `threadPatternLines` and outlive the call it is passed to.
    package func engineConfig(patterns: UnsafePointer<CChar>?) -> hw_config {
        hw_config(hang_ns: hangNs, sample_period_ns: samplePeriodNs, arm_ns: 0, frame_ns: frameNs,
                  thread_patterns: threadPatterns.isEmpty ? nil : patterns,
                  flags: (sampler == .signal ? HW_CONFIG_SIGNAL_SAMPLES : 0)
                      | (heartbeatClock == .vdso ? HW_CONFIG_VDSO_CLOCK : 0))
    }

    /// How often the attach poller reads the watched threads' state.
    package static let attachPollPeriodNs: UInt64 = 1_000_000
    /// The most samples a second attach can take: one per poll.
    package static var attachMaxSampleHz: Double { 1e9 / Double(attachPollPeriodNs) }

    /// The attach poller's configuration for `pid`: polled every
    /// `attachPollPeriodNs`, armed 10 ms after a wait begins. `patterns` as for `engineConfig`.
    package func attachConfig(pid: Int32, stopBlockedThreads: Bool, patterns: UnsafePointer<CChar>?) -> hwa_config {
        var c = hwa_config()
        c.pid = pid
        c.poll_period_ns = Self.attachPollPeriodNs
        c.sample_period_ns = samplePeriodNs
        c.arm_ns = 10_000_000
        c.hang_ns = hangNs
        c.flags = stopBlockedThreads ? UInt32(HWA_FLAG_STOP_BLOCKED) : 0
        c.thread_patterns = patterns
        return c
    }
}

extension SampleLog {
    /// Writes the configuration the preload agent's engine reads when it starts.
    package func configure(_ config: CaptureConfig) {
        header.pointee.hang_ns = config.hangNs
        header.pointee.report_ns = config.reportNs
        header.pointee.sample_period_ns = config.samplePeriodNs
        header.pointee.frame_ns = config.frameNs
        header.pointee.flags = (config.sampler == .signal ? UInt32(HW_LOG_SIGNAL_SAMPLES) : 0)
            | (config.heartbeatClock == .vdso ? UInt32(HW_LOG_VDSO_CLOCK) : 0)
        let patterns = config.threadPatternLines
        withUnsafeMutableBytes(of: &header.pointee.thread_patterns) { buffer in
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            for (i, byte) in patterns.utf8.prefix(buffer.count - 1).enumerated() { buffer[i] = byte }
        }
    }
}
