import Dispatch
import Glibc
import HangWatchAnalysis
import HangWatchModel
import HangWatchRender
import Synchronization

/// Sends hang events to an OTLP/HTTP logs endpoint from a thread of its own,
/// so neither the program nor the detector ever waits on the network.
///
/// Each event is one POST to `/v1/logs` (protobuf). A failed POST is
/// retried after 0.25, 0.5, 1 and 2 s; after the last try the hang is dropped
/// and counted. A 4xx other than 408/429 is not retried (the receiver refuses
/// the record itself). At most `maxPending` hangs wait while the endpoint is
/// slow or down; more are dropped and counted.
package final class OTLPExporter: Sendable {
    /// Hangs that may wait to be sent before new ones are dropped.
    package static let maxPending = 256
    /// Waits before each retry, in ms.
    package static let retryDelaysMs = [250, 500, 1000, 2000]

    private let post: HTTPPost
    private let jobs = JobThread(name: "hangwatch-otlp", capacity: maxPending)
    private let counts = Mutex(Counts())

    /// What happened to the events given to `export`.
    package struct Counts: Sendable, Equatable {
        package var sent = 0
        package var retries = 0
        package var dropped = 0
        /// Accepted and not yet sent or dropped (being sent, or waiting).
        package var pending = 0
        /// The last failure, for the note.
        package var lastFailure: String?
    }

    /// nil when `url` is not an `http://` URL (the caller says so).
    package init?(url: String) {
        guard let endpoint = HTTPPost.Endpoint(url, defaultPath: "/v1/logs") else { return nil }
        post = HTTPPost(endpoint: endpoint)
    }

    /// The counts so far (sent, retried, dropped).
    package var snapshot: Counts { counts.withLock { $0 } }

    /// Queues each event for sending: an ended hang, and a hang that reached
    /// the report threshold while still running (so a service stuck for good
    /// is reported too; `hangwatch.hang.in_progress` tells them apart, and
    /// `hangwatch.hang.id` ties the two records of one hang).
    package func export(_ events: [HangEvent]) {
        for event in events {
            counts.withLock { $0.pending += 1 }
            if !jobs.submit({ [self] in send(event) }) {
                counts.withLock {
                    $0.pending -= 1
                    $0.dropped += 1
                }
            }
        }
    }

    /// Waits up to `timeoutNs` for the queued hangs to be sent or dropped
    /// (at exit); true when none is left.
    package func flush(timeoutNs: UInt64) -> Bool { jobs.drain(timeoutNs: timeoutNs) }

    /// A note for the report when any hang was not sent (dropped, or still
    /// being retried when the report is written), else nil.
    package func note(endpoint url: String) -> String? {
        let c = snapshot
        let unsent = c.dropped + c.pending
        guard unsent > 0 else { return nil }
        return "\(unsent) of \(c.sent + unsent) hang records could not be sent to \(url)"
            + (c.lastFailure.map { " (\($0))" } ?? "") + "; they are in this report"
    }

    private func send(_ event: HangEvent) {
        let body = OTLPLogs.request([event])
        var why = ""
        for attempt in 0...Self.retryDelaysMs.count {
            if attempt > 0 {
                counts.withLock { $0.retries += 1 }
                usleep(UInt32(Self.retryDelaysMs[attempt - 1]) * 1000)
            }
            do {
                try post.send(body, contentType: "application/x-protobuf")
                counts.withLock {
                    $0.sent += 1
                    $0.pending -= 1
                }
                return
            } catch {
                var retryable = true
                switch error {
                case let .unreachable(text): why = text
                case let .status(code):
                    why = "HTTP \(code)"
                    retryable = !(400..<500).contains(code) || code == 408 || code == 429
                case .badAnswer: why = "not an HTTP answer"
                }
                if !retryable { break }
            }
        }
        counts.withLock {
            $0.dropped += 1
            $0.pending -= 1
            $0.lastFailure = why
        }
    }
}
