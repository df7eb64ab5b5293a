/// hangwatch's own argv, byte for byte, as the kernel gave it.
/// `CommandLine.arguments` is a decoded copy (each byte that is not UTF-8
/// becomes U+FFFD): right for reading options, wrong for a program's argv,
/// which must reach execve as it came.
enum RawCommandLine {
    /// argv[0] to argv[argc - 1]: the words of `CommandLine.arguments`, in its order.
    static var arguments: [[UInt8]] {
        let argv = CommandLine.unsafeArgv
        return (0..<Int(CommandLine.argc)).map { argv[$0].map { [UInt8](cString: $0) } ?? [] }
    }
}
