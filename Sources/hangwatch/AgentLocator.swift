#if canImport(Glibc)
import Glibc
#endif

/// Where the preload agent lives: $HANGWATCH_AGENT, else the first of
/// `candidates` that can be read: next to this executable (`make` puts both in
/// .build/<config>/), ../lib/hangwatch/ (`make install`, the Debian package),
/// or the `hangwatch` target's resource directory next to the executable,
/// where `swift build` alone puts the agent (the AgentBuilder plugin).
enum AgentLocator {
    static let fileName = "libhangwatch-agent.so"
    /// SwiftPM's resource directory of the `hangwatch` target (package_target.resources).
    static let resourceDirectory = "hangwatch_hangwatch.resources"

    static var executableDirectory: String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, Int(PATH_MAX))
        guard n > 0 else { return "." }
        let path = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
    }

    /// The places looked at without $HANGWATCH_AGENT, in order.
    static var candidates: [String] {
        let dir = executableDirectory
        return [dir + "/" + fileName, dir + "/../lib/hangwatch/" + fileName,
                dir + "/" + resourceDirectory + "/" + fileName]
    }

    /// What was looked for, for the "not found" line: $HANGWATCH_AGENT when set, else every candidate.
    static var lookedFor: String {
        if let env = getenv("HANGWATCH_AGENT"), env.pointee != 0 { return String(cString: env) }
        return candidates.joined(separator: ", ")
    }

    /// The agent's path; when there is none, says so on stderr (one line) and gives nil.
    static func findOrSay() -> String? {
        if let path = find() { return path }
        writeStderr("hangwatch: preload agent not found (looked for \(lookedFor)); "
                    + "rebuild with `swift build` or `make agent`, or set HANGWATCH_AGENT")
        return nil
    }

    static func find() -> String? {
        if let env = getenv("HANGWATCH_AGENT"), env.pointee != 0 {
            let path = String(cString: env)
            return access(path, R_OK) == 0 ? path : nil
        }
        return candidates.first { access($0, R_OK) == 0 }
    }

    /// The program's LD_PRELOAD: $HANGWATCH_PRELOAD_BEFORE (colon-separated
    /// paths), then the agent, then the LD_PRELOAD hangwatch was given, as
    /// bytes (empty parts left out). Of a variable given more than once, the
    /// last entry counts, as it does for the dynamic loader.
    /// The paths before the agent are for a runtime that must be loaded
    /// first, such as the AddressSanitizer runtime a sanitized agent needs
    /// (`make test-sanitized`); they reach the program only, never hangwatch.
    static func programPreload(agent: String, environment: ProgramEnvironment) -> [UInt8] {
        let parts = [environment.lastValue(of: "HANGWATCH_PRELOAD_BEFORE"), Array(agent.utf8),
                     environment.lastValue(of: "LD_PRELOAD")]
        return Array(parts.compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: [UInt8(ascii: ":")]))
    }
}

enum LogFiles {
    /// A fresh path for a sample log: in /dev/shm when it exists (memory, no
    /// disk writes), else $TMPDIR or /tmp.
    static func temporaryPath() -> String {
        let dir: String
        if access("/dev/shm", W_OK) == 0 { dir = "/dev/shm" }
        else if let t = getenv("TMPDIR") { dir = String(cString: t) }
        else { dir = "/tmp" }
        var template = Array("\(dir)/hangwatch-\(getpid())-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        if fd >= 0 { close(fd) }
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
