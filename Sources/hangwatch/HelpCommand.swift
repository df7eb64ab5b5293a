/// `hangwatch help [COMMAND]`: the overview, or one command's options (the
/// same text as `hangwatch COMMAND --help`).
enum HelpCommand {
    /// The commands and their help text, in the order the overview lists them.
    static let commands: [(name: String, usage: @Sendable () -> String)] = [
        ("run", { Usage.run }), ("attach", { Usage.attach }), ("dump", { Usage.dump }),
        ("report", { Usage.report }), ("diff", { Usage.diff }), ("help", { Usage.help }),
    ]

    /// The help text of `name`, nil for a word that is no command.
    static func usage(of name: String) -> String? {
        commands.first { $0.name == name }?.usage()
    }

    /// Prints the overview or a command's help; an unknown command or extra words are a usage error.
    static func main(_ args: [String]) -> Int32 {
        guard let name = args.first else {
            print(Usage.top)
            return 0
        }
        if name == "--help" || name == "-h" {
            print(Usage.help)
            return 0
        }
        if name == "--man" {
            print(ManPage.roff, terminator: "")
            return 0
        }
        guard args.count == 1 else { return usageError("help takes one command (got '\(args[1])')") }
        guard let text = usage(of: name) else {
            return usageError("no command '\(name)'; commands: \(commands.map(\.name).joined(separator: ", "))")
        }
        print(text)
        return 0
    }
}
