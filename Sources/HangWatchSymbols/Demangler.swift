// Turns linker names into the names people wrote.
//
// Both demanglers already live in this process: the Swift runtime exports
// swift_demangle, and libstdc++ (linked by the package) exports
// __cxa_demangle. Using them keeps output identical to what swift-demangle
// and c++filt print.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// char *swift_demangle(const char *name, size_t length, char *outputBuffer,
//                      size_t *outputBufferSize, uint32_t flags);
// With a NULL buffer the result is malloc'd and owned by the caller.
@_silgen_name("swift_demangle")
private func runtimeSwiftDemangle(
    _ mangledName: UnsafePointer<CChar>,
    _ mangledNameLength: Int,
    _ outputBuffer: UnsafeMutablePointer<CChar>?,
    _ outputBufferSize: UnsafeMutablePointer<Int>?,
    _ flags: UInt32
) -> UnsafeMutablePointer<CChar>?

// char *__cxa_demangle(const char *mangled, char *buffer, size_t *length, int *status);
// With a NULL buffer the result is malloc'd and owned by the caller.
@_silgen_name("__cxa_demangle")
private func runtimeCxxDemangle(
    _ mangledName: UnsafePointer<CChar>,
    _ outputBuffer: UnsafeMutablePointer<CChar>?,
    _ length: UnsafeMutablePointer<Int>?,
    _ status: UnsafeMutablePointer<Int32>?
) -> UnsafeMutablePointer<CChar>?

/// Demangles Swift and C++ symbol names, remembering every answer.
///
/// A profile repeats the same few hundred functions across thousands of
/// samples, so the cache makes demangling effectively free after the first
/// sight of each name. Names that are neither Swift nor C++ (C functions,
/// already-readable names) and names the runtime rejects come back unchanged.
package struct Demangler {
    private var cache: [String: String] = [:]

    package init() {}

    /// The readable form of `name`, computed once per distinct name.
    package mutating func demangle(_ name: String) -> String {
        if let known = cache[name] { return known }
        let readable = Self.demangleUncached(name)
        cache[name] = readable
        return readable
    }

    /// The readable form of `name`, without caching; safe to call from any thread.
    package static func demangleUncached(_ name: String) -> String {
        if isSwiftMangled(name) {
            return name.withCString { mangled in
                let length = strlen(mangled)
                guard let result = runtimeSwiftDemangle(mangled, length, nil, nil, 0) else { return name }
                defer { free(result) }
                return String(cString: result)
            }
        }
        if name.hasPrefix("_Z") {
            return name.withCString { mangled in
                var status: Int32 = 0
                guard let result = runtimeCxxDemangle(mangled, nil, nil, &status) else { return name }
                defer { free(result) }
                return status == 0 ? String(cString: result) : name
            }
        }
        return name
    }

    /// Prefixes of Swift manglings: current (`$s`), Swift 4.x (`$S`, `_T0`),
    /// embedded Swift (`$e`), each optionally with the Darwin-style leading underscore.
    private static func isSwiftMangled(_ name: String) -> Bool {
        name.hasPrefix("$s") || name.hasPrefix("_$s")
            || name.hasPrefix("$S") || name.hasPrefix("_$S")
            || name.hasPrefix("$e") || name.hasPrefix("_$e")
            || name.hasPrefix("_T0")
    }
}
