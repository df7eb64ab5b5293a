import HangWatchLive

/// The live outputs on a command line (`--events`, `--rotate`, `--keep`,
/// `--otlp-endpoint`), read the same way by `run` and `attach`.
struct LiveOptions {
    private var eventsPath: String?
    private var rotate: String?
    private var keep: Int?
    private var otlpEndpoint: String?

    /// The flags this reads.
    static let flags: Set<String> = ["--events", "--rotate", "--keep", "--otlp-endpoint"]

    /// Takes the `value` of `flag`, one of `flags`.
    mutating func take(_ flag: String, value text: String) throws(UsageError) {
        switch flag {
        case "--events":
            let path = text
            guard !path.isEmpty else { throw UsageError("--events needs a file path") }
            eventsPath = path
        case "--rotate": rotate = text
        case "--keep":
            guard let n = Int(text) else { throw UsageError("invalid value '\(text)' for --keep (expected a whole number)") }
            keep = n
        case "--otlp-endpoint":
            let url = text
            guard HTTPPost.Endpoint(url, defaultPath: "/v1/logs") != nil else {
                throw UsageError("invalid value '\(url)' for --otlp-endpoint (expected http://HOST:PORT[/PATH]; https is not supported)")
            }
            otlpEndpoint = url
        default: break
        }
    }

    /// The settings, once every word is read: a rotation needs the event file, `--keep` a rotation.
    func settings() throws(UsageError) -> LiveOutputSettings {
        var rotation: RotationPolicy?
        if let rotate {
            guard eventsPath != nil else { throw UsageError("--rotate rotates the --events file: give --events FILE.jsonl too") }
            do {
                rotation = try RotationPolicy.parse(rotate, keep: keep ?? RotationPolicy.defaultKeep)
            } catch {
                throw UsageError(error.description)
            }
        } else if keep != nil {
            throw UsageError("--keep needs --rotate")
        }
        return LiveOutputSettings(eventsPath: eventsPath, rotation: rotation, otlpEndpoint: otlpEndpoint)
    }
}
