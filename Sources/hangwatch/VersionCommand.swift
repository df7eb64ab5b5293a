import HangWatch
import HangWatchModel

/// `hangwatch --version`: what was built, from which revision, writing which report schema.
enum VersionCommand {
    /// The lines printed, also read by the tests and the Debian package's version.
    static var text: String {
        """
        hangwatch \(HangWatchVersion.string)
        revision: \(BuildRevision.git)
        report schema: \(JSONReport.schemaVersion)
        """
    }

    /// Prints `text`; extra words are a usage error.
    static func main(_ args: [String]) -> Int32 {
        guard args.isEmpty else { return usageError("--version takes no arguments (got '\(args[0])')") }
        print(text)
        return 0
    }
}
