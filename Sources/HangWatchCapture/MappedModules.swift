// From /proc/PID/maps lines to ModuleImage values, as the engine's
// HW_REC_MODULE records give them: path, load bias, PT_LOAD range, build-id.
// Each file's ELF headers are read once (cached by device, inode and path),
// so a re-read of an unchanged process costs the maps text and its parse.

import CHangWatchEngine
import HangWatchSymbols
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An image found in the target's maps.
struct MappedImage: Equatable {
    var image: ModuleImage
    /// HW_MODULE_* flags, as the engine would have set them.
    var flags: UInt32
}

/// Turns the executable mappings of one process into images. Not thread-safe:
/// one collector owns it.
final class MappedModuleScanner {
    /// The process whose maps are scanned (its `/proc/PID/map_files` serves deleted files).
    let pid: Int32
    /// Deleted and memfd files are copied into memory to be unwound and
    /// symbolicated; larger ones are left out rather than held in memory.
    static let maxCopiedFileBytes = 64 << 20

    private struct FileKey: Hashable {
        var major: UInt32, minor: UInt32, inode: UInt64, path: String
    }
    private struct FileFacts {
        var layout: ElfLoadLayout
        /// The file's bytes, when it has no usable path (deleted, memfd, replaced).
        var bytes: [UInt8]?
    }
    /// nil: looked at, not a usable ELF image (a JIT's code file, a data file mapped executable).
    private var files: [FileKey: FileFacts?] = [:]
    private let vdso: VDSOImage?
    private let vdsoLayout: ElfLoadLayout?
    private let pageSize: UInt64

    init(pid: Int32, vdso: VDSOImage?) {
        self.pid = pid
        self.vdso = vdso
        vdsoLayout = vdso.flatMap { ElfLoadLayout.read(image: $0.bytes) }
        pageSize = UInt64(max(sysconf(Int32(_SC_PAGESIZE)), 4096))
    }

    /// Files whose ELF headers were read so far (each is read once).
    var filesExamined: Int { files.count }

    /// The images of every executable file mapping and of the vDSO, one per
    /// load bias. Anonymous executable memory (JIT code) and pseudo-mappings
    /// other than `[vdso]` are skipped: they have no file to unwind with.
    func images(in mappings: [ProcessMapping]) -> [MappedImage] {
        var result: [MappedImage] = []
        var seen: Set<UInt64> = [] // load biases found so far (a file mapped twice has two)
        for mapping in mappings where mapping.executable {
            if mapping.path == "[vdso]" {
                if let found = vdsoImage(at: mapping), seen.insert(found.image.loadBias).inserted { result.append(found) }
                continue
            }
            guard mapping.isFileBacked, let path = mapping.path, let facts = facts(for: mapping, path: path),
                  let bias = facts.layout.bias(ofMappingAt: mapping.start, offset: mapping.offset,
                                               executable: true, pageSize: pageSize),
                  seen.insert(bias).inserted
            else { continue }
            let image = ModuleImage(path: mapping.displayPath ?? path, loadBias: bias,
                                    start: bias &+ facts.layout.lowVaddr, end: bias &+ facts.layout.highVaddr,
                                    buildId: facts.layout.buildId, inlineImage: facts.bytes)
            let flags: UInt32 = path.contains("libhangwatch-agent") ? UInt32(HW_MODULE_AGENT) : 0
            result.append(MappedImage(image: image, flags: flags))
        }
        return result
    }

    private func vdsoImage(at mapping: ProcessMapping) -> MappedImage? {
        guard let vdso, let layout = vdsoLayout,
              let bias = layout.bias(ofMappingAt: mapping.start, offset: 0, executable: true, pageSize: pageSize)
        else { return nil }
        let image = ModuleImage(path: "[vdso]", loadBias: bias, start: bias &+ layout.lowVaddr,
                                end: bias &+ layout.highVaddr, buildId: layout.buildId, inlineImage: vdso.bytes)
        return MappedImage(image: image, flags: UInt32(HW_MODULE_VDSO))
    }

    private func facts(for mapping: ProcessMapping, path: String) -> FileFacts? {
        let key = FileKey(major: mapping.deviceMajor, minor: mapping.deviceMinor, inode: mapping.inode, path: path)
        if let known = files[key] { return known }
        let found = readFacts(mapping, path: path)
        files[key] = .some(found)
        return found
    }

    /// The file at `path` when it is still the file that is mapped (same
    /// device and inode); otherwise (deleted, memfd, replaced by a rebuild)
    /// the mapped file itself through /proc/PID/map_files, copied into memory.
    /// A replaced file is never read by its path: its build-id would vouch
    /// for the wrong binary.
    private func readFacts(_ mapping: ProcessMapping, path: String) -> FileFacts? {
        if !mapping.deleted {
            let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            if fd >= 0 {
                defer { close(fd) }
                if isMapped(fd: fd, mapping) {
                    return ElfLoadLayout.read(fd: fd).map { FileFacts(layout: $0, bytes: nil) }
                }
            }
        }
        let mapped = "/proc/\(pid)/map_files/\(String(mapping.start, radix: 16))-\(String(mapping.end, radix: 16))"
        let fd = open(mapped, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil } // needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE
        defer { close(fd) }
        guard let bytes = Self.readAll(fd: fd, limit: Self.maxCopiedFileBytes),
              let layout = ElfLoadLayout.read(image: bytes) else { return nil }
        return FileFacts(layout: layout, bytes: bytes)
    }

    private func isMapped(fd: Int32, _ mapping: ProcessMapping) -> Bool {
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return false }
        return UInt64(info.st_ino) == mapping.inode
            && Self.major(UInt64(info.st_dev)) == mapping.deviceMajor
            && Self.minor(UInt64(info.st_dev)) == mapping.deviceMinor
    }

    // glibc's gnu_dev_major/gnu_dev_minor encoding (the macros do not import).
    private static func major(_ dev: UInt64) -> UInt32 {
        UInt32(truncatingIfNeeded: ((dev >> 8) & 0xfff) | ((dev >> 32) & ~UInt64(0xfff)))
    }
    private static func minor(_ dev: UInt64) -> UInt32 {
        UInt32(truncatingIfNeeded: (dev & 0xff) | ((dev >> 12) & ~UInt64(0xff)))
    }

    private static func readAll(fd: Int32, limit: Int) -> [UInt8]? {
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size > 0, Int(info.st_size) <= limit else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return pread(fd, base + done, raw.count - done, off_t(done))
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            done += n
        }
        return bytes
    }
}
