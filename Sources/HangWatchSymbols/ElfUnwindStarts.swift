// Finding `.eh_frame_hdr` in an open ELF image (parsing is in EhFrameHeader).

import CLibElf

extension ElfReader {
    /// Function starts listed by the image's `.eh_frame_hdr`, sorted; `[]` when
    /// it has none or its contents are not in this file.
    ///
    /// The section header is preferred because it tells whether the bytes are
    /// really here: a separate debug file keeps the section header and the
    /// program headers but not the contents (`SHT_NOBITS`), and reading its
    /// `PT_GNU_EH_FRAME` would parse unrelated bytes. Images without section
    /// headers (the vDSO copied from memory) are found through the segment.
    func unwindFunctionStarts() -> [UInt64] {
        let pointerSize = gelf_getclass(elf) == ELFCLASS64 ? 8 : 4
        switch ehFrameHeaderSection() {
        case .absent:
            break
        case .withoutContents:
            return []
        case let .present(data, address):
            guard let base = data.pointee.d_buf else { return [] }
            return EhFrameHeader.functionStarts(in: UnsafeRawBufferPointer(start: base, count: data.pointee.d_size),
                                                address: address, pointerSize: pointerSize)
        }

        var headerCount = 0
        guard elf_getphdrnum(elf, &headerCount) == 0 else { return [] }
        for index in 0..<headerCount {
            var header = GElf_Phdr()
            guard gelf_getphdr(elf, Int32(clamping: index), &header) != nil,
                  header.p_type == UInt32(PT_GNU_EH_FRAME),
                  let offset = Int64(exactly: header.p_offset),
                  let size = Int(exactly: header.p_filesz), size > 0,
                  let data = elf_getdata_rawchunk(elf, offset, size, ELF_T_BYTE),
                  let base = data.pointee.d_buf
            else { continue }
            return EhFrameHeader.functionStarts(in: UnsafeRawBufferPointer(start: base, count: data.pointee.d_size),
                                                address: header.p_vaddr, pointerSize: pointerSize)
        }
        return []
    }

    private enum HeaderSection {
        case absent
        case withoutContents
        case present(UnsafeMutablePointer<Elf_Data>, address: UInt64)
    }

    private func ehFrameHeaderSection() -> HeaderSection {
        var namesIndex = 0
        guard elf_getshdrstrndx(elf, &namesIndex) == 0 else { return .absent }
        var section: OpaquePointer? = nil
        while let current = elf_nextscn(elf, section) {
            section = current
            var header = GElf_Shdr()
            guard gelf_getshdr(current, &header) != nil,
                  let name = elf_strptr(elf, namesIndex, Int(header.sh_name)),
                  String(cString: name) == ".eh_frame_hdr"
            else { continue }
            guard header.sh_type != UInt32(SHT_NOBITS), let data = elf_rawdata(current, nil) else {
                return .withoutContents
            }
            return .present(data, address: header.sh_addr)
        }
        return .absent
    }
}
