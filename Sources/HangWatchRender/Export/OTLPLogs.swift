import HangWatchAnalysis
import HangWatchModel

/// Hang events as an OTLP `ExportLogsServiceRequest` (opentelemetry-proto,
/// `collector/logs/v1`), the body of a POST to `/v1/logs`.
///
/// One log record per hang: `time_unix_nano` is when the hang started,
/// `observed_time_unix_nano` when hangwatch told it, severity WARN, the event
/// name `hangwatch.hang`, a one-line body, and attributes named after the
/// OpenTelemetry semantic conventions where one exists (`thread.id`,
/// `thread.name`, `process.pid`, `process.executable.name`,
/// `process.executable.path`, `code.function.name`: the program's function with
/// the most self time); hangwatch's own are under
/// `hangwatch.hang.*`. The call tree is not sent: OTLP profiles are still a
/// development signal, and the heaviest frames travel as an attribute.
package enum OTLPLogs {
    /// The protobuf bytes of one export request holding `events`.
    package static func request(_ events: [HangEvent]) -> [UInt8] {
        var w = ProtobufWriter()
        // ExportLogsServiceRequest.resource_logs = 1; one ResourceLogs per process.
        var byProcess: [(ProcessInfoRecord, [HangEvent])] = []
        for event in events {
            if let i = byProcess.firstIndex(where: { $0.0.pid == event.process.pid }) {
                byProcess[i].1.append(event)
            } else {
                byProcess.append((event.process, [event]))
            }
        }
        for (process, events) in byProcess {
            w.message(1) { resourceLogs in
                resourceLogs.message(1) { resource in // Resource
                    let name = executableName(process.executable)
                    attribute(&resource, 1, "service.name", .string(name))
                    attribute(&resource, 1, "process.pid", .int(Int64(process.pid)))
                    attribute(&resource, 1, "process.executable.name", .string(name))
                    attribute(&resource, 1, "process.executable.path", .string(process.executable))
                }
                resourceLogs.message(2) { scopeLogs in // ScopeLogs
                    scopeLogs.message(1) { scope in // InstrumentationScope
                        scope.string(1, "hangwatch")
                        scope.string(2, HangWatchVersion.string)
                    }
                    for event in events { scopeLogs.message(2) { record(&$0, event) } }
                }
            }
        }
        return w.bytes
    }

    /// The text of a hang's log record body.
    package static func body(_ hang: Hang) -> String {
        let state = hang.inProgress ? "still running after" : "of"
        var text = "hang \(state) \(NumberFormat.ms(hang.durationMs)) on \(hang.thread.name.isEmpty ? "thread" : hang.thread.name) "
            + "(tid \(hang.thread.tid)), \(hang.kind.rawValue)"
        if let hot = hottestFunction(hang) { text += ", mostly in \(hot)" }
        return text
    }

    private static func record(_ w: inout ProtobufWriter, _ event: HangEvent) {
        let hang = event.hang
        w.fixed64(1, UInt64(clamping: event.hangStartUnixNs ?? event.timeUnixNs)) // time_unix_nano
        w.fixed64(11, UInt64(clamping: event.timeUnixNs))                          // observed_time_unix_nano
        w.uint64(2, 13)                                                              // severity_number: WARN
        w.string(3, "WARN")                                                          // severity_text
        w.message(5) { anyValue(&$0, .string(body(hang))) }                          // body
        attribute(&w, 6, "thread.id", .int(Int64(hang.thread.tid)))
        if !hang.thread.name.isEmpty { attribute(&w, 6, "thread.name", .string(hang.thread.name)) }
        attribute(&w, 6, "process.pid", .int(Int64(event.process.pid)))
        attribute(&w, 6, "process.executable.name", .string(executableName(event.process.executable)))
        let frames = heaviestFrames(hang)
        if let hot = hottestFunction(hang) { attribute(&w, 6, "code.function.name", .string(hot)) }
        attribute(&w, 6, "hangwatch.hang.id", .int(Int64(hang.id)))
        attribute(&w, 6, "hangwatch.hang.duration_ms", .double(hang.durationMs))
        attribute(&w, 6, "hangwatch.hang.kind", .string(hang.kind.rawValue))
        attribute(&w, 6, "hangwatch.hang.in_progress", .bool(hang.inProgress))
        attribute(&w, 6, "hangwatch.hang.thread_role", .string(hang.thread.role))
        attribute(&w, 6, "hangwatch.hang.sample_count", .int(Int64(hang.sampleCount)))
        if let call = hang.blockedIn { attribute(&w, 6, "hangwatch.hang.blocked_in", .string(call)) }
        if let cause = hang.cause {
            attribute(&w, 6, "hangwatch.hang.cause", .string(cause.kind.rawValue))
            if let line = HangCauseText.line(hang) { attribute(&w, 6, "hangwatch.hang.cause_detail", .string(line)) }
        }
        if let stopped = hang.stoppedMs { attribute(&w, 6, "hangwatch.hang.stopped_ms", .double(stopped)) }
        if let throttle = hang.throttle { attribute(&w, 6, "hangwatch.hang.throttled_ms", .double(throttle.throttledMs)) }
        if let pool = hang.poolThreads {
            attribute(&w, 6, "hangwatch.hang.pool_threads", .int(Int64(pool.count)))
            attribute(&w, 6, "hangwatch.hang.pool_job_hang_ids", .strings(pool.map { String($0.jobHangId) }))
        }
        if let wait = hang.poolJobWaitMs { attribute(&w, 6, "hangwatch.hang.pool_job_wait_ms", .double(wait)) }
        if !frames.isEmpty { attribute(&w, 6, "hangwatch.hang.heaviest_frames", .strings(frames)) }
        w.string(12, "hangwatch.hang")                                               // event_name
    }

    /// The heaviest path's frames (as the text report expands it), cut to the
    /// last 8: the work itself, not the run loop around it.
    private static func heaviestFrames(_ hang: Hang) -> [String] {
        guard let tree = hang.callTree else { return [] }
        return CallTreeBuilder.heaviestPath(of: tree).suffix(8).map(\.symbol)
    }

    /// The program's own function with the most self time, system libraries
    /// charged to their callers (the report's hotspot ranking): a blocked
    /// `usleep` names the function that called it, not libc.
    private static func hottestFunction(_ hang: Hang) -> String? {
        hang.callTree.flatMap { UserCodeHotspots.rank([$0]).first?.symbol }
    }

    private static func executableName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    private enum Value {
        case string(String), int(Int64), double(Double), bool(Bool), strings([String])
    }

    /// A KeyValue in repeated field `field` of the message being written.
    private static func attribute(_ w: inout ProtobufWriter, _ field: Int, _ key: String, _ value: Value) {
        w.message(field) { kv in
            kv.string(1, key)
            kv.message(2) { anyValue(&$0, value) }
        }
    }

    /// AnyValue: its oneof member is written even when zero.
    private static func anyValue(_ w: inout ProtobufWriter, _ value: Value) {
        switch value {
        case let .string(s): w.string(1, s)
        case let .bool(b): w.presentVarint(2, b ? 1 : 0)
        case let .int(i): w.presentVarint(3, UInt64(bitPattern: i))
        case let .double(d): w.presentDouble(4, d)
        case let .strings(list):
            w.message(5) { array in // ArrayValue.values = 1
                for s in list { array.message(1) { $0.string(1, s) } }
            }
        }
    }
}
