#if canImport(Glibc)
import Glibc
#endif

/// A C string's bytes without its NUL: an argument, a path or an environment
/// entry kept as the system gave it, so that it can be handed back unchanged.
extension [UInt8] {
    /// The bytes of the NUL-terminated string at `pointer`, without the NUL.
    init(cString pointer: UnsafePointer<CChar>) {
        self.init(UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)))
    }

    /// The bytes as text, for options, messages and the report only: each
    /// byte that is not UTF-8 becomes U+FFFD, so the text cannot give the
    /// bytes back.
    var displayed: String { String(decoding: self, as: UTF8.self) }

    /// The bytes and a NUL, for a system call that takes a C string.
    var nulTerminated: [CChar] { map { CChar(bitPattern: $0) } + [0] }
}
