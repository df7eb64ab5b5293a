import CHangWatchUnwind

/// The kernel's vDSO as mapped in this process. Every process on one kernel
/// maps the same image, so the reader can unwind and name frames a target
/// took inside it (clock_gettime in a busy loop) from its own copy; the
/// build-id check refuses it if it ever differs.
struct VDSOImage {
    let bytes: [UInt8]

    static func current() -> VDSOImage? {
        let base = hw_own_vdso_base()
        guard base != 0, let header = UnsafeRawPointer(bitPattern: UInt(base)) else { return nil }
        // The image ends with its section headers; e_shoff + e_shnum * e_shentsize covers it.
        let shoff = header.loadUnaligned(fromByteOffset: 0x28, as: UInt64.self)
        let shentsize = header.loadUnaligned(fromByteOffset: 0x3A, as: UInt16.self)
        let shnum = header.loadUnaligned(fromByteOffset: 0x3C, as: UInt16.self)
        let size = Int(shoff) + Int(shentsize) * Int(shnum)
        guard size > 64, size < 1 << 20 else { return nil }
        return VDSOImage(bytes: Array(UnsafeRawBufferPointer(start: header, count: size)))
    }
}
