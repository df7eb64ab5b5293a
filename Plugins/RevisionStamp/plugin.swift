// Stamps the `hangwatch` executable with the git revision it was built from,
// for `hangwatch --version`: before every build, a shell writes
// BuildRevision.swift (rewritten only when the revision changes, so an
// unchanged tree compiles nothing). Outside a git checkout, or without git,
// the revision is "unknown".
import Foundation
import PackagePlugin

@main
struct RevisionStamp: BuildToolPlugin {
    /// One prebuild command: `git rev-parse` in the package's directory, "-dirty" when the tree differs from HEAD.
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "generated")
        let scratch = context.pluginWorkDirectoryURL.appending(path: "BuildRevision.swift.new")
        let script = """
        set -u
        r=$(git -C "$2" rev-parse --short=12 HEAD 2>/dev/null) || r=unknown
        if [ "$r" != unknown ] && ! git -C "$2" diff --quiet HEAD -- 2>/dev/null; then r="$r-dirty"; fi
        mkdir -p "$1"
        printf '%s\\n' '/// The git revision this executable was built from (RevisionStamp plugin).' \
          'enum BuildRevision { static let git = "'"$r"'" }' > "$3"
        cmp -s "$3" "$1/BuildRevision.swift" || mv "$3" "$1/BuildRevision.swift"
        rm -f "$3"
        """
        return [.prebuildCommand(displayName: "Stamping the git revision",
                                 executable: URL(fileURLWithPath: "/bin/sh"),
                                 arguments: ["-c", script, "sh", output.path, context.package.directoryURL.path,
                                             scratch.path],
                                 outputFilesDirectory: output)]
    }
}
