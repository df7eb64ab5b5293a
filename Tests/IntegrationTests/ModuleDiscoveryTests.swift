import Foundation
import HangWatch
import HangWatchCapture
import HangWatchTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    /// Images the program maps after start, and hangs while the program holds
    /// the loader lock: the watchdog must never wait for that lock, and the
    /// reader must learn new images from /proc/PID/maps before unwinding.
    @Suite struct ModuleDiscovery {
        private static let sources = TestPaths.packageRoot.appendingPathComponent("Tests/modules")

        private func phdrProgram() throws -> (String, URL) {
            let scratch = try TestPaths.scratch()
            let path = Self.sources.appendingPathComponent("phdr_callback_hang.c").path
            return (try ProcessRunner.compileC(path, into: scratch, name: "phdr_callback_hang"), scratch)
        }

        private func dlopenProgram() throws -> (program: String, library: String, scratch: URL) {
            let scratch = try TestPaths.scratch()
            let library = scratch.appendingPathComponent("libhangwork.so").path
            let cc = try ProcessRunner.run("/usr/bin/cc", ["-O2", "-g", "-fPIC", "-shared", "-o", library,
                                                           Self.sources.appendingPathComponent("hanglib.c").path])
            guard cc.status == 0 else { throw TestFailure("cc -shared failed: \(cc.stderr)") }
            let program = try ProcessRunner.compileC(Self.sources.appendingPathComponent("dlopen_hang.c").path,
                                                     into: scratch, name: "dlopen_hang")
            return (program, library, scratch)
        }

        @Test func hangInsideDlIteratePhdrCallbackIsSampled() throws {
            let (program, scratch) = try phdrProgram()
            let run = try HangwatchRun.run(program, scratch: scratch)
            #expect(run.result.status == 0, "stderr: \(run.result.stderr)")
            let work = try #require(run.work("phdr_callback").first)
            let hang = try #require(run.report.hangs.first, "no hang reported; notes: \(run.report.notes)")
            #expect(run.report.hangs.count == 1)
            #expect(abs(hang.durationMs - work.durationMs) <= 5,
                    "hang \(hang.durationMs) ms, program measured \(work.durationMs) ms")
            #expect(hang.reported)
            // 1 kHz for 400 ms; a watchdog waiting on the loader lock gets 0 or 1.
            // A loaded 2-core VM can still cut coverage to a third, hence 10 %.
            #expect(hang.sampleCount >= 40, "samples: \(hang.sampleCount)")
            let tree = try #require(hang.callTree)
            let path = tree.heaviestPathSymbols
            #expect(path.contains { $0.contains("busy_in_phdr_callback") }, "heaviest path: \(path)")
            #expect(path.contains { $0.contains("hold_loader_lock") }, "heaviest path: \(path)")
            #expect(path.contains { $0.contains("dl_iterate_phdr") }, "heaviest path: \(path)")
        }

        /// SIGKILL 250 ms into the hang: the hang was announced and sampled while
        /// it lasted, so the report still has it, in progress, with its samples.
        @Test func sigkillInsideDlIteratePhdrStillReportsTheHang() throws {
            let (program, scratch) = try phdrProgram()
            let pidFile = scratch.appendingPathComponent("pid").path
            var killedAfterMs = 0.0
            let run = try HangwatchRun.run(program, ["--pid-file", pidFile, "--hang-ms", "5000"],
                                           measure: false, scratch: scratch) { _ in
                let deadline = Date().addingTimeInterval(20)
                while !FileManager.default.fileExists(atPath: pidFile + ".hang") && Date() < deadline { usleep(1000) }
                let seen = Date()
                usleep(250_000)
                if let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
                   let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                    kill(pid, SIGKILL)
                    killedAfterMs = Date().timeIntervalSince(seen) * 1000
                }
            }
            #expect(run.result.status == 137, "stderr: \(run.result.stderr)")
            #expect(run.report.process.signal == 9)
            let hang = try #require(run.report.hangs.first, "no hangs: the watchdog never announced it")
            #expect(hang.inProgress && hang.reported)
            // The busy period began just before the marker file was written.
            #expect(hang.durationMs >= killedAfterMs - 15 && hang.durationMs <= killedAfterMs + 60,
                    "duration \(hang.durationMs) ms, killed \(killedAfterMs) ms after the hang began")
            #expect(hang.sampleCount >= 25, "samples: \(hang.sampleCount)")
            let tree = try #require(hang.callTree)
            #expect(tree.heaviestPathSymbols.contains { $0.contains("busy_in_phdr_callback") },
                    "heaviest path: \(tree.heaviestPathSymbols)")
        }

        @Test func hangInALibraryDlopenedAfterStartNamesItsFunction() throws {
            let (program, library, scratch) = try dlopenProgram()
            let run = try HangwatchRun.run(program, ["--library", library], scratch: scratch)
            #expect(run.result.status == 0, "stderr: \(run.result.stderr)")
            let work = try #require(run.work("library_work").first)
            let hang = try #require(run.report.hangs.first)
            #expect(abs(hang.durationMs - work.durationMs) <= 5,
                    "hang \(hang.durationMs) ms, program measured \(work.durationMs) ms")
            #expect(hang.sampleCount >= 30, "samples: \(hang.sampleCount)")
            let tree = try #require(hang.callTree)
            let node = try #require(tree.first(containing: "hanglib_busy_work"), "symbols: \(tree.allSymbols)")
            #expect(node.image == "libhangwork.so")
            // Nearly every sample is in the library's function (an unknown image
            // gives `0x... [???]` roots instead), and unwinds through it to main.
            #expect(node.weightMs >= tree.weightMs * 0.8, "\(node.weightMs) of \(tree.weightMs) ms")
            #expect(tree.heaviestPathSymbols.contains("main"), "heaviest path: \(tree.heaviestPathSymbols)")
        }

        /// A library whose file is gone once loaded (deleted, or a memfd that never
        /// had a name on disk) is read through /proc/PID/map_files, which takes
        /// CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE: root here, not in every CI.
        @Test(.enabled(if: geteuid() == 0, "/proc/PID/map_files needs privileges"),
              arguments: [("--unlink", "libhangwork.so"), ("--memfd", "memfd:hanglib")])
        func hangInALibraryWithoutAFileNamesItsFunction(mode: String, image: String) throws {
            let (program, library, scratch) = try dlopenProgram()
            let run = try HangwatchRun.run(program, ["--library", library, mode], scratch: scratch)
            #expect(run.result.status == 0, "stderr: \(run.result.stderr)")
            if mode == "--unlink" { #expect(!FileManager.default.fileExists(atPath: library)) }
            let work = try #require(run.work("library_work").first)
            let hang = try #require(run.report.hangs.first)
            #expect(abs(hang.durationMs - work.durationMs) <= 5,
                    "hang \(hang.durationMs) ms, program measured \(work.durationMs) ms")
            let tree = try #require(hang.callTree)
            let node = try #require(tree.first(containing: "hanglib_busy_work"), "symbols: \(tree.allSymbols)")
            #expect(node.image == image)
            #expect(node.weightMs >= tree.weightMs * 0.8, "\(node.weightMs) of \(tree.weightMs) ms")
        }

        /// The work runs in the library's constructor, inside dlopen, with the
        /// loader lock held and the image not yet in the program's hands.
        @Test func hangInsideDlopenNamesTheConstructor() throws {
            let (program, library, scratch) = try dlopenProgram()
            let run = try HangwatchRun.run(program, ["--library", library, "--in-constructor"], scratch: scratch)
            #expect(run.result.status == 0, "stderr: \(run.result.stderr)")
            let work = try #require(run.work("dlopen_work").first)
            let hang = try #require(run.report.hangs.first)
            #expect(abs(hang.durationMs - work.durationMs) <= 5,
                    "hang \(hang.durationMs) ms, program measured \(work.durationMs) ms")
            #expect(hang.sampleCount >= 30, "samples: \(hang.sampleCount)")
            let path = try #require(hang.callTree).heaviestPathSymbols
            #expect(path.contains { $0.contains("hanglib_constructor_work") }, "heaviest path: \(path)")
            #expect(path.contains { $0.contains("dlopen") }, "heaviest path: \(path)")
        }
    }
}
