// The GNU build-id: the identity of one particular link of a binary.
// Comparing it with the build-id seen in the profiled process tells whether
// the file on disk is still the binary that ran.

import CLibElf

extension ElfReader {
    /// The descriptor of the `NT_GNU_BUILD_ID` note, or `[]` if there is none.
    ///
    /// Section headers are tried first; images whose section headers were
    /// stripped (or never loaded, as in a memory copy) still have `PT_NOTE`.
    func buildId() -> [UInt8] {
        var section: OpaquePointer? = nil
        while let current = elf_nextscn(elf, section) {
            section = current
            var header = GElf_Shdr()
            guard gelf_getshdr(current, &header) != nil, header.sh_type == UInt32(SHT_NOTE),
                  let data = elf_getdata(current, nil)
            else { continue }
            if let id = Self.buildId(inNotes: data) { return id }
        }

        var headerCount = 0
        guard elf_getphdrnum(elf, &headerCount) == 0 else { return [] }
        for index in 0..<headerCount {
            var header = GElf_Phdr()
            guard gelf_getphdr(elf, Int32(clamping: index), &header) != nil,
                  header.p_type == UInt32(PT_NOTE),
                  let offset = Int64(exactly: header.p_offset),
                  let size = Int(exactly: header.p_filesz)
            else { continue }
            // 8-byte aligned note segments use the NHDR8 layout (GNU property notes).
            let noteType = header.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR
            guard let data = elf_getdata_rawchunk(elf, offset, size, noteType) else { continue }
            if let id = Self.buildId(inNotes: data) { return id }
        }
        return []
    }

    private static func buildId(inNotes data: UnsafeMutablePointer<Elf_Data>) -> [UInt8]? {
        guard let base = data.pointee.d_buf else { return nil }
        let bytes = UnsafeRawBufferPointer(start: base, count: data.pointee.d_size)
        var offset = 0
        while true {
            var note = GElf_Nhdr()
            var nameOffset = 0
            var descOffset = 0
            let next = gelf_getnote(data, offset, &note, &nameOffset, &descOffset)
            guard next != 0 else { return nil }
            offset = next
            let nameSize = Int(note.n_namesz), descSize = Int(note.n_descsz)
            guard note.n_type == UInt32(NT_GNU_BUILD_ID),
                  nameSize == 4, nameOffset + nameSize <= bytes.count,
                  descOffset + descSize <= bytes.count,
                  Array(bytes[nameOffset..<nameOffset + nameSize]) == Array("GNU\0".utf8)
            else { continue }
            return Array(bytes[descOffset..<descOffset + descSize])
        }
    }
}
