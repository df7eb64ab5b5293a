import Foundation
import HangWatchTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    /// Issue 31, item 1: the program starts with the bytes hangwatch was given.
    /// Its argv is hangwatch's own from PROGRAM on, and its environment is
    /// hangwatch's `environ` entry for entry (bytes that are not UTF-8, entries
    /// without `=`, a name given twice, the order) but for the variables
    /// `run` sets for its agent (docs/DESIGN.md, "The safety contract").
    ///
    /// Each case starts both runs through `Tests/safety/hex_exec.c`, which
    /// can give execve any bytes, and `Tests/safety/argv_environ.c` prints
    /// what the program got, in hex.
    @Suite struct HostSafetyExactBytes {
        /// An argv with bytes that are not UTF-8, words `run` would parse as
        /// its own if it looked past PROGRAM, and an environment with every
        /// shape `environ` can hold, including stale entries of the two
        /// variables hangwatch sets.
        @Test func argumentsAndEnvironmentReachTheProgramByteForByte() throws {
            let program = try SafetyProgram.build("argv_environ")
            let argv = CStrings([
                bytes(program.path), [0xff, 0xfe] + bytes(" bytes"), bytes("caf") + [0xe9], [], bytes("--"),
                bytes("-o"), bytes("two words"), bytes("line\nbreak"), bytes("--help"),
            ])
            let environment = CStrings(Self.passedThrough + [
                bytes("HWP_A=first"),
                bytes("PATH=/usr/bin:/bin"),
                bytes("HWP_BYTES=caf") + [0xe9, 0x20, 0xff, 0xfe],
                bytes("HWP_NO_EQUALS"),
                bytes("LD_PRELOAD="),
                bytes("HANGWATCH_LOG=/nonexistent/stale"),
                bytes("HWP_A=second"),
                bytes("=no name"),
                [],
                bytes("HWP_NEWLINE=one\ntwo"),
                bytes("LD_PRELOAD=libc.so.6"),
                bytes("HWP_Z=last"),
            ])
            let scratch = try TestPaths.scratch()
            let report = scratch.appendingPathComponent("report.txt").path
            let (plain, watched, result) = try bothWays(bytes(program.path), argv, environment, report: report)
            #expect(plain.argv == argv && plain.environment == environment,
                    "the launcher must give the program exactly these bytes")
            #expect(result.status == 0, "\(result.stderr.suffix(600))")
            #expect(watched.argv == plain.argv)
            #expect(watched.environment.withoutHangwatchsVariables == plain.environment.withoutHangwatchsVariables)

            // Each variable hangwatch sets is one entry, in the place of the first of its name.
            let setNames = [bytes("LD_PRELOAD"), bytes("HANGWATCH_LOG")]
            var seen: [[UInt8]] = []
            let expectedNames = CStrings(plain.environment.names.entries.filter { name in
                guard setNames.contains(name) else { return true }
                defer { seen.append(name) }
                return !seen.contains(name)
            })
            #expect(watched.environment.names == expectedNames, "watched: \(watched.environment)")
            // LD_PRELOAD joins the last entry's value (the one ld.so reads) after the agent.
            let preload = watched.environment.entries.filter { CStrings.name($0) == bytes("LD_PRELOAD") }
                .map { String(decoding: $0, as: UTF8.self) }
            #expect(preload.count == 1 && preload[0].contains("libhangwatch-agent.so")
                    && preload[0].hasSuffix(":libc.so.6"), "\(preload)")
            let text = (try? String(contentsOfFile: report, encoding: .utf8)) ?? ""
            #expect(!text.isEmpty && !text.contains("the agent did not start"),
                    "the stale HANGWATCH_LOG must be replaced: \(text.prefix(400))")
        }

        /// PROGRAM named in bytes that are not UTF-8, found through a PATH
        /// whose directory is named so too, and given as that path.
        @Test func aProgramNamedInBytesThatAreNotUTF8IsFound() throws {
            let program = try SafetyProgram.build("argv_environ")
            let scratch = try TestPaths.scratch()
            let directory = bytes(scratch.path) + bytes("/bin-") + [0xfe]
            let link = directory + bytes("/argv_environ-") + [0xff]
            try #require(mkdir(cString(directory), 0o755) == 0, "mkdir: \(String(cString: strerror(errno)))")
            try #require(symlink(program.path, cString(link)) == 0, "symlink: \(String(cString: strerror(errno)))")
            let environment = CStrings(Self.passedThrough + [bytes("PATH=") + directory + bytes(":/usr/bin:/bin")])
            for word in [bytes("argv_environ-") + [0xff], link] {
                let report = scratch.appendingPathComponent("report.txt").path
                let argv = CStrings([word, bytes("x")])
                let (plain, watched, result) = try bothWays(link, argv, environment, report: report)
                #expect(plain.argv == argv, "the launcher must give the program exactly these bytes")
                #expect(result.status == 0, "\(argv): \(result.stderr.suffix(600))")
                #expect(watched.argv == plain.argv)
                #expect(watched.environment.withoutHangwatchsVariables == plain.environment.withoutHangwatchsVariables)
            }
        }

        /// What argv_environ printed.
        private struct Started {
            var argv = CStrings([])
            var environment = CStrings([])

            init(_ stdout: String) {
                for line in stdout.split(separator: "\n") {
                    let words = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
                    let value = words.count == 2 ? fromHex(words[1]) : []
                    if words.first == "argv" { argv.entries.append(value) } else { environment.entries.append(value) }
                }
            }
        }

        /// Runs the program at `path` with exactly `argv` and `environment`, plain and
        /// under `hangwatch run -o REPORT --` (followed by the whole of `argv`).
        private func bothWays(_ path: [UInt8], _ argv: CStrings, _ environment: CStrings,
                              report: String) throws -> (plain: Started, watched: Started, result: ProcessResult) {
            let launcher = try SafetyProgram.build("hex_exec").path
            func launch(_ path: [UInt8], _ argv: [[UInt8]]) throws -> ProcessResult {
                try ProcessRunner.run(launcher, ([path] + argv).map(hex) + ["--"] + environment.entries.map(hex),
                                      timeout: 30)
            }
            let plain = try launch(path, argv.entries)
            #expect(plain.status == 0, "plain: \(plain.status) \(plain.stderr)")
            let hangwatch = bytes(TestPaths.hangwatch)
            let watched = try launch(hangwatch, [hangwatch] + ["run", "-o", report, "--"].map(bytes) + argv.entries)
            return (Started(plain.stdout), Started(watched.stdout), watched)
        }

        /// The test's own settings for every hangwatch it runs (the sanitized phase's
        /// agent, preloads and sampler; the sanitizers' options), given to both runs.
        private static var passedThrough: [[UInt8]] {
            ProcessInfo.processInfo.environment.sorted { $0.key < $1.key }
                .filter { $0.key.hasPrefix("HANGWATCH_") || $0.key == "ASAN_OPTIONS" || $0.key == "UBSAN_OPTIONS" }
                .map { bytes("\($0.key)=\($0.value)") }
        }
    }
}

/// An argv or an environment: C strings compared byte for byte, shown with
/// every byte outside printable ASCII (and the backslash) as \xNN.
private struct CStrings: Equatable, CustomStringConvertible {
    var entries: [[UInt8]]
    init(_ entries: [[UInt8]]) { self.entries = entries }

    var description: String {
        let words = entries.map { entry in
            entry.map { (0x20..<0x7f).contains($0) && $0 != UInt8(ascii: "\\")
                ? String(UnicodeScalar($0)) : String(format: "\\x%02x", $0) }.joined()
        }
        return "[" + words.map { "\"\($0)\"" }.joined(separator: ", ") + "]"
    }

    /// An entry's name: its bytes up to the first `=`, or the whole entry without one.
    static func name(_ entry: [UInt8]) -> [UInt8] { Array(entry.prefix { $0 != UInt8(ascii: "=") }) }

    var names: CStrings { CStrings(entries.map(Self.name)) }

    /// Without the variables hangwatch says it sets: LD_PRELOAD and HANGWATCH_*.
    var withoutHangwatchsVariables: CStrings {
        CStrings(entries.filter { entry in
            guard entry.contains(UInt8(ascii: "=")) else { return true }
            let name = Self.name(entry)
            return name != bytes("LD_PRELOAD") && !name.starts(with: bytes("HANGWATCH_"))
        })
    }
}

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

private func cString(_ bytes: [UInt8]) -> [CChar] { bytes.map { CChar(bitPattern: $0) } + [0] }

private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

private func fromHex(_ text: Substring) -> [UInt8] {
    let digits = Array(text.utf8)
    return stride(from: 0, to: digits.count - 1, by: 2).compactMap {
        UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)
    }
}
