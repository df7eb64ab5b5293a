/// The version of hangwatch, as `hangwatch --version` prints it.
public enum HangWatchVersion {
    /// The version number, `MAJOR.MINOR.PATCH`.
    public static let string = "0.1.0"
}
