import Foundation
import HangWatch

/// hangwatch.1, written from the same text as `--help` (`hangwatch help --man`,
/// which `make install` and `make deb` install), so the two cannot drift apart.
enum ManPage {
    /// The manual page in roff: NAME, SYNOPSIS, DESCRIPTION, then one section per command
    /// holding its `--help` text as it is printed.
    static var roff: String {
        var lines = [
            ".TH HANGWATCH 1 \"\" \"hangwatch \(HangWatchVersion.string)\" \"User Commands\"",
            ".SH NAME",
            "hangwatch \\- find and explain hangs of a program's main loop on Linux",
            ".SH SYNOPSIS",
            ".nf",
        ]
        lines += HelpCommand.commands.map { ".B hangwatch \($0.name)" }
        lines += [".B hangwatch \\-\\-version", ".fi", ".SH DESCRIPTION", ".nf"]
        lines += escaped(Usage.top)
        lines.append(".fi")
        for command in HelpCommand.commands {
            lines += [".SH \(command.name.uppercased())", ".nf"]
            lines += escaped(command.usage())
            lines.append(".fi")
        }
        lines += [".SH ENVIRONMENT", ".TP", ".B HANGWATCH_AGENT",
                  "the preload agent to use instead of the one installed with hangwatch",
                  ".SH SEE ALSO", "The README and docs/ of the hangwatch source tree."]
        return lines.joined(separator: "\n") + "\n"
    }

    /// `text`'s lines for a no-fill block: backslashes doubled, hyphens of options kept
    /// as hyphens, and a line that would start with a control character guarded.
    static func escaped(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            let body = line.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
            return body.first == "." || body.first == "'" ? "\\&" + body : body
        }
    }
}
