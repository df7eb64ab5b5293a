// Which frames belong to the system rather than to the program's own code.

import HangWatchModel

/// Classifies a frame's image as a system library.
///
/// Reports name images by file name (`libc.so.6`), sometimes by path. A frame
/// is "system" when its library is the C/C++ runtime, the dynamic loader, the
/// Swift toolchain's runtime libraries (everything that ships in the
/// toolchain's `lib/swift/linux`), the vDSO or hangwatch's own agent: code the
/// user cannot change, so its time is better charged to the user's caller.
package enum SystemImages {
    /// File-name prefixes of system libraries (`libc.so.6`, `libFoundationEssentials.so`, ...).
    static let namePrefixes = [
        "libc.so", "libc-", "libpthread", "ld-linux", "ld64.so", "libstdc++", "libgcc_s", "libm.so", "libm-",
        "libdl.so", "librt.so", "libresolv", "libutil.so",
        "libdispatch.so", "libBlocksRuntime.so",
        "libFoundation", "lib_Foundation", "libswift", "lib_Testing", "libXCTest.so",
        "libhangwatch-agent.so",
    ]
    /// Directories whose libraries are system ones, when the image is a path.
    static let directories = ["/usr/lib/", "/usr/lib64/", "/lib/", "/lib64/", "/usr/libexec/"]
    /// The toolchain's runtime directory, wherever the toolchain is installed.
    static let toolchainRuntimeDirectory = "/lib/swift/linux/"

    /// True when `image` (a file name or a path) is a system library.
    package static func contains(_ image: String) -> Bool {
        if image == "[vdso]" || image == "linux-vdso.so.1" { return true }
        if image.hasPrefix("/") {
            if directories.contains(where: { image.hasPrefix($0) }) { return true }
            if image.contains(toolchainRuntimeDirectory) { return true }
        }
        let name = image.split(separator: "/").last.map(String.init) ?? image
        return namePrefixes.contains { name.hasPrefix($0) }
    }

    /// True when `node` is a frame of the user's own code: neither a system
    /// library nor the synthetic `<all>` root that is not a frame at all.
    package static func isUserCode(_ node: CallTreeNode) -> Bool {
        !CallTreeBuilder.isSyntheticRoot(node) && !contains(node.image)
    }
}
