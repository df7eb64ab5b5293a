public enum HangWatchVersion {
    public static let string = "0.1.0"
}
