// Function starts from `.eh_frame_hdr`, for code that has no symbol.
//
// Stripped system libraries keep only exported names, so their static
// functions (glibc's msort_with_tmp, __libc_start_call_main) have no symbol.
// They still have unwind info: every function the unwinder can step through
// has an FDE, and `.eh_frame_hdr` lists each FDE's initial location in a
// sorted table (LSB Core, "Exception Frame Header"). The greatest initial
// location at or below a pc is the start of the function holding it, so all
// pcs of one unnamed function can share one name.

/// Parses the binary-search table of an `.eh_frame_hdr` section.
package enum EhFrameHeader {
    /// DW_EH_PE_omit: the field is absent.
    private static let omit: UInt8 = 0xff

    /// Sorted, distinct function start addresses (ELF virtual addresses) listed
    /// by the header's search table; `[]` when the header is malformed, uses
    /// an encoding this reader does not handle, or has no table.
    ///
    /// - Parameters:
    ///   - bytes: the section contents.
    ///   - address: the section's virtual address (`sh_addr` / `p_vaddr`), the
    ///     base of pc-relative and data-relative values.
    ///   - pointerSize: 8 for ELFCLASS64, 4 for ELFCLASS32 (the size of `absptr`).
    package static func functionStarts(in bytes: UnsafeRawBufferPointer, address: UInt64,
                                      pointerSize: Int = 8) -> [UInt64] {
        // version, eh_frame_ptr_enc, fde_count_enc, table_enc
        guard bytes.count >= 4, bytes[0] == 1 else { return [] }
        let framePointerEncoding = bytes[1], countEncoding = bytes[2], tableEncoding = bytes[3]
        guard countEncoding != omit, tableEncoding != omit else { return [] }
        var reader = EncodedReader(bytes: bytes, base: address, pointerSize: pointerSize, offset: 4)
        guard (framePointerEncoding == omit || reader.read(framePointerEncoding) != nil),
              let declaredCount = reader.read(countEncoding),
              let entrySize = reader.fixedSize(of: tableEncoding)
        else { return [] }
        // A corrupt count must not make us read past the section.
        let available = (bytes.count - reader.offset) / (2 * entrySize)
        let count = Int(clamping: min(declaredCount, UInt64(available)))
        var starts: [UInt64] = []
        starts.reserveCapacity(count)
        for _ in 0..<count {
            guard let start = reader.read(tableEncoding), reader.read(tableEncoding) != nil else { return [] }
            starts.append(start)
        }
        // The spec requires sorted entries; sorting anyway costs little and
        // keeps a lookup correct on a sloppy producer.
        starts.sort()
        var distinct: [UInt64] = []
        distinct.reserveCapacity(starts.count)
        for start in starts where distinct.last != start { distinct.append(start) }
        return distinct
    }
}

/// Reads DWARF exception-handling pointer encodings (DW_EH_PE_*) in sequence.
private struct EncodedReader {
    let bytes: UnsafeRawBufferPointer
    /// Virtual address of `bytes[0]`.
    let base: UInt64
    let pointerSize: Int
    var offset: Int

    /// Size of a value in `encoding` when it is fixed (not LEB128); nil otherwise.
    func fixedSize(of encoding: UInt8) -> Int? {
        switch encoding & 0x0f {
        case 0x00: return pointerSize           // absptr
        case 0x02, 0x0a: return 2               // udata2, sdata2
        case 0x03, 0x0b: return 4               // udata4, sdata4
        case 0x04, 0x0c: return 8               // udata8, sdata8
        default: return nil
        }
    }

    /// The next value, with its application (absolute, pc-relative or
    /// data-relative) applied; nil past the end or for unsupported encodings.
    mutating func read(_ encoding: UInt8) -> UInt64? {
        let fieldAddress = base &+ UInt64(offset)
        let raw: UInt64
        switch encoding & 0x0f {
        case 0x01: guard let value = leb128(signed: false) else { return nil }; raw = value
        case 0x09: guard let value = leb128(signed: true) else { return nil }; raw = value
        default:
            guard let size = fixedSize(of: encoding), let value = fixed(size: size,
                                                                       signed: encoding & 0x08 != 0)
            else { return nil }
            raw = value
        }
        switch encoding & 0x70 {
        case 0x00: return raw                     // absolute
        case 0x10: return fieldAddress &+ raw     // pcrel: relative to the field itself
        case 0x30: return base &+ raw             // datarel: relative to the header's start
        default: return nil                       // textrel, funcrel, aligned: not used in headers
        }
    }

    private mutating func fixed(size: Int, signed: Bool) -> UInt64? {
        guard offset >= 0, size <= bytes.count - offset else { return nil }
        // Little-endian loads (x86_64 and aarch64 Linux), one per value: libc's
        // table is thousands of entries, and a byte loop costs many times more.
        var value: UInt64
        switch size {
        case 2: value = UInt64(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
        case 4: value = UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        case 8: value = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        default:
            value = 0
            for index in 0..<size { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        }
        offset += size
        if signed, size < 8, value & (1 << (8 * UInt64(size) - 1)) != 0 {
            value |= ~UInt64(0) << (8 * UInt64(size))  // sign-extend
        }
        return value
    }

    /// A LEB128 number; `signed` sign-extends from the last byte's bit 6.
    private mutating func leb128(signed: Bool) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count {
            let byte = bytes[offset]
            offset += 1
            if shift < 64 { value |= UInt64(byte & 0x7f) << shift }
            shift += 7
            if byte & 0x80 == 0 {
                if signed, shift < 64, byte & 0x40 != 0 { value |= ~UInt64(0) << shift }
                return value
            }
        }
        return nil
    }
}
