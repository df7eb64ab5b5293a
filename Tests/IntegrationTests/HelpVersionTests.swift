import Foundation
import HangWatch
import HangWatchTestSupport
import Testing

extension Integration {
    /// Issue 32: `--version`, `help COMMAND`, the man page and the shell completions,
    /// all read from the one help text of each command.
    @Suite struct HelpAndVersion {
        static let commands = ["run", "attach", "dump", "report", "diff", "help"]

        private func hangwatch(_ args: [String]) throws -> ProcessResult {
            try ProcessRunner.run(TestPaths.hangwatch, args, timeout: 30)
        }

        /// The options a help text defines: the first words of its indented option lines,
        /// and the bracketed ones of its Usage line.
        private func options(in help: String) -> Set<String> {
            var found = Set<String>()
            for line in help.split(separator: "\n") {
                let words = line.split(separator: " ")
                if line.hasPrefix("Usage:") {
                    for word in words where word.hasPrefix("[-") {
                        found.insert(String(word.dropFirst().prefix { $0.isLetter || $0 == "-" }))
                    }
                } else if line.hasPrefix("  "), let first = words.first, first.hasPrefix("-") {
                    found.insert(String(first.prefix { $0.isLetter || $0 == "-" }))
                    if first.hasSuffix(","), let second = words.dropFirst().first {
                        found.insert(String(second.prefix { $0.isLetter || $0 == "-" }))
                    }
                }
            }
            return found
        }

        @Test func versionNamesTheRevisionAndTheSchema() throws {
            let r = try hangwatch(["--version"])
            #expect(r.status == 0)
            let lines = r.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 3, "\(r.stdout)")
            #expect(lines.first == "hangwatch \(HangWatchVersion.string)")
            let revision = lines.dropFirst().first ?? ""
            #expect(revision == "revision: unknown"
                    || revision.wholeMatch(of: /revision: [0-9a-f]{12}(-dirty)?/) != nil, "\(revision)")
            #expect(lines.last == "report schema: \(JSONReport.schemaVersion)")
            let extra = try hangwatch(["--version", "extra"])
            #expect(extra.status == 2 && extra.stderr.split(separator: "\n").count == 1, "\(extra.stderr)")
        }

        @Test func helpCommandIsTheCommandsOwnHelp() throws {
            for command in Self.commands {
                let help = try hangwatch(["help", command])
                #expect(help.status == 0, "\(command)")
                #expect(help.stdout.hasPrefix("Usage: hangwatch \(command)"), "\(command): \(help.stdout.prefix(80))")
                let own = try hangwatch([command, "--help"])
                #expect(own.status == 0 && own.stdout == help.stdout, "\(command) --help differs from help \(command)")
            }
            let top = try hangwatch(["help"])
            let overview = try hangwatch(["--help"])
            #expect(top.status == 0 && top.stdout == overview.stdout)
            for bad in [["help", "nope"], ["help", "run", "diff"]] {
                let r = try hangwatch(bad)
                #expect(r.status == 2, "\(bad)")
                #expect(r.stderr.split(separator: "\n").count == 1 && r.stdout.isEmpty, "\(bad): \(r.stderr)")
            }
        }

        /// hangwatch.1 holds every command's help, each option in it, and renders without a warning.
        @Test func manPageHoldsEveryCommandsOptions() throws {
            let man = try hangwatch(["help", "--man"])
            #expect(man.status == 0)
            #expect(man.stdout.hasPrefix(".TH HANGWATCH 1"))
            for command in Self.commands {
                #expect(man.stdout.contains("\n.SH \(command.uppercased())\n"), "no section for \(command)")
                let help = try hangwatch(["help", command]).stdout
                let wanted = options(in: help)
                #expect(command == "help" || !wanted.isEmpty, "\(command): no options read")
                for option in wanted {
                    #expect(man.stdout.contains(option.replacingOccurrences(of: "-", with: "\\-")),
                            "man page lacks \(command) \(option)")
                }
            }
            let groff = "/usr/bin/groff"
            guard FileManager.default.isExecutableFile(atPath: groff) else { return }
            let page = try TestPaths.scratch().appendingPathComponent("hangwatch.1")
            try man.stdout.write(to: page, atomically: true, encoding: .utf8)
            let rendered = try ProcessRunner.run(groff, ["-man", "-Tutf8", "-ww", "-z", page.path])
            #expect(rendered.status == 0 && rendered.stderr.isEmpty, "groff: \(rendered.stderr)")
        }

        /// The bash completion offers each command's options as its help lists them.
        @Test func bashCompletionOffersEveryOption() throws {
            let script = TestPaths.packageRoot.appendingPathComponent("completions/hangwatch.bash").path
            for command in Self.commands where command != "help" {
                let wanted = options(in: try hangwatch(["help", command]).stdout)
                let r = try ProcessRunner.run("/bin/bash", ["-c", """
                    source "$1"; COMP_WORDS=("$2" "$3" "-"); COMP_CWORD=2; _hangwatch; printf '%s\\n' "${COMPREPLY[@]}"
                    """, "bash", script, TestPaths.hangwatch, command])
                #expect(r.status == 0, "\(r.stderr)")
                let offered = Set(r.stdout.split(separator: "\n").map(String.init))
                #expect(offered == wanted, "\(command): offered \(offered.sorted()), help lists \(wanted.sorted())")
            }
            let formats = try ProcessRunner.run("/bin/bash", ["-c", """
                source "$1"; COMP_WORDS=("$2" run --format ""); COMP_CWORD=3; _hangwatch; echo "${COMPREPLY[*]}"
                """, "bash", script, TestPaths.hangwatch])
            #expect(formats.stdout.contains("json") && formats.stdout.contains("pprof"), "\(formats.stdout)")
        }

        /// The zsh completion offers the same options, with zsh's completion builtins stubbed
        /// to print what they are given (no terminal needed).
        @Test func zshCompletionOffersEveryOption() throws {
            let zsh = "/usr/bin/zsh"
            try #require(FileManager.default.isExecutableFile(atPath: zsh), "zsh is missing: make testdeps installs it")
            let script = TestPaths.packageRoot.appendingPathComponent("completions/_hangwatch").path
            let stubs = """
                compadd() { [[ $1 == -- ]] && shift; print -l -- "$@"; }
                _describe() { local -a c; c=(${(P)${@[-1]}}); print -l -- ${c%%:*}; }
                _files() { print FILES; }; _pids() { print PIDS; }; _command_names() { print COMMANDS; }
                source "$1" >/dev/null 2>&1
                shift; words=("$@"); CURRENT=${#words}; PREFIX=${words[-1]}; _hangwatch
                """
            for command in Self.commands where command != "help" {
                let wanted = options(in: try hangwatch(["help", command]).stdout)
                let r = try ProcessRunner.run(zsh, ["-f", "-c", stubs, "zsh", script, TestPaths.hangwatch, command, "-"])
                #expect(r.status == 0, "\(r.stderr)")
                let offered = Set(r.stdout.split(separator: "\n").map(String.init))
                #expect(offered == wanted, "\(command): offered \(offered.sorted()), help lists \(wanted.sorted())")
            }
            let first = try ProcessRunner.run(zsh, ["-f", "-c", stubs, "zsh", script, TestPaths.hangwatch, "r"])
            #expect(Set(first.stdout.split(separator: "\n").map(String.init))
                        .isSuperset(of: ["run", "attach", "dump", "report", "diff", "help", "--version"]), "\(first.stdout)")
            let program = try ProcessRunner.run(zsh, ["-f", "-c", stubs, "zsh", script, TestPaths.hangwatch, "run", "--", ""])
            #expect(program.stdout == "COMMANDS\n", "\(program.stdout)")
        }
    }
}
