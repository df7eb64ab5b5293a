import Foundation
import HangWatchTestSupport
import Testing

extension Integration {
    /// The library's main-queue probe after dispatchMain(): it runs only while
    /// dispatch work runs (libdispatch's bracket around each root-queue item
    /// wakes the watchdog), plus one probe every 100 ms for the one kind of
    /// main-queue work outside any bracket.
    @Suite struct MainQueueProbe {
        /// The library's watchdog thread (named "hangwatch") of process `pid`.
        static func watchdogThread(_ pid: Int32) -> String? {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            return tasks.first { tid in
                (try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/comm", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) == "hangwatch"
            }
        }

        /// Voluntary plus involuntary context switches of one thread.
        static func switches(_ pid: Int32, _ tid: String) -> Int? {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/status", encoding: .utf8)
            else { return nil }
            let counts = status.split(separator: "\n").filter { $0.contains("ctxt_switches:") }
                .compactMap { Int($0.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") }
            return counts.count == 2 ? counts.reduce(0, +) : nil
        }

        /// An idle queue lets the watchdog park: a probe every 100 ms and the check
        /// after it, about 17 wake-ups a second. Probing every 20 ms made 50.
        @Test func anIdleQueueLetsTheWatchdogPark() throws {
            var wakes: Int?
            let library = try HangwatchRun.library(TestPaths.dispatchMainDemo, ["--idle"]) { process in
                let pid = process.processIdentifier
                usleep(800_000) // dispatchMain() has run and the probe mode is on
                guard let tid = Self.watchdogThread(pid), let first = Self.switches(pid, tid) else { return }
                usleep(1_500_000)
                if let second = Self.switches(pid, tid) { wakes = second - first }
                while process.isRunning { usleep(20_000) }
            }
            #expect(library.result.status == 0, "\(library.result.stderr)")
            #expect(library.report.hangs.isEmpty, "hangs: \(library.report.hangs.map(\.durationMs))")
            let counted = try #require(wakes, "no watchdog thread found")
            #expect(counted <= 45, "the watchdog woke \(counted) times in 1.5 s")
        }

        /// DispatchQueue.main.sync from a plain thread runs the block on that
        /// thread, in no libdispatch bracket, so no dispatch work wakes the parked
        /// watchdog. Its probe every 100 ms still finds the stall, with the start
        /// taken halfway between the last answered probe and the stuck one (the
        /// gap is 100-120 ms); the end is exact.
        @Test func aSyncFromAPlainThreadIsStillFound() throws {
            let library = try HangwatchRun.library(TestPaths.dispatchMainDemo, ["--sync-from-thread"])
            #expect(library.result.status == 0, "\(library.result.stderr)")
            let work = try #require(library.work("syncedReport").first)
            #expect(library.report.hangs.count == 1, "hangs: \(library.report.hangs.map(\.durationMs))")
            let hang = try #require(library.report.hangs.first)
            #expect(hang.durationMs >= work.durationMs - 70 && hang.durationMs <= work.durationMs + 25,
                    "\(hang.durationMs) ms for \(work.durationMs) ms of work")
            #expect(hang.thread.role == "main-queue")
            #expect(hang.thread.tid != library.report.process.pid)
        }
    }
}
