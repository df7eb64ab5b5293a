// The text of the last system error, for messages of the stages that make system calls.

#if canImport(Glibc)
import Glibc
#endif

/// `strerror(errno)` as a Swift string (symbols and capture both report failed calls with it).
package func errnoDescription() -> String { String(cString: strerror(errno)) }
