import CHangWatchEngine
import CHangWatchUnwind
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The reader unwinds whatever registers a sample carries: a stack pointer
/// near 2^64 (found by the sanitized soak: hangwatch itself died in
/// access_mem) must end the walk, never read outside the copied stack.
@Suite struct UnwinderBounds {
    @Test func stackPointerNearTheTopOfTheAddressSpaceIsNotRead() async {
        // In a child process: the bug was a wild read, a crash of the reader.
        await #expect(processExitsWith: .success) {
            guard let unwinder = hw_unwinder_create() else { exit(10) }
            defer { hw_unwinder_destroy(unwinder) }
            // getpid's entry in libc: its CFI says the return address is at rsp.
            let entry: @convention(c) () -> pid_t = getpid
            let ip = UInt64(UInt(bitPattern: unsafeBitCast(entry, to: UnsafeRawPointer.self)))
            guard let (file, bias) = UnwinderBounds.image(containing: ip) else { exit(11) }
            guard hw_unwinder_add_module(unwinder, file, nil, 0, bias, bias, bias + 0x400_0000, nil, 0)
                == Int32(HW_MODULE_OK.rawValue) else { exit(12) }

            // A sample whose 64-byte stack slice is placed so that the return
            // address slot, rsp = 2^64 - 8, would map (with wrapping arithmetic)
            // onto an inaccessible page.
            let stackLen = 64
            let record = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<hw_rec_sample>.size + stackLen,
                                                          alignment: 16)
            record.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<hw_rec_sample>.size + stackLen)
            let sample = record.assumingMemoryBound(to: hw_rec_sample.self)
            // The stack bytes follow the fixed part (a flexible array after 8-byte fields).
            let stackBytes = UInt64(UInt(bitPattern: record + MemoryLayout<hw_rec_sample>.size))
            guard let guardPage = mmap(nil, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
                  guardPage != MAP_FAILED else { exit(13) }
            let rsp = UInt64.max - 7
            sample.pointee.stack_len = UInt32(stackLen)
            sample.pointee.stack_addr = rsp &- (UInt64(UInt(bitPattern: guardPage)) &- stackBytes)
            withUnsafeMutableBytes(of: &sample.pointee.regs) { regs in
                let r = regs.bindMemory(to: UInt64.self)
                r[HW_REG_RIP] = ip
                r[HW_REG_RSP] = rsp
            }
            var pcs = [UInt64](repeating: 0, count: 8)
            let n = hw_unwind_sample(unwinder, sample, &pcs, 8)
            exit(n == 1 && pcs[0] == ip ? 0 : 14)
        }
    }

    /// The file mapped at `address` and its load bias (the start of its
    /// offset-0 mapping: libc's first PT_LOAD has vaddr 0), from /proc/self/maps.
    static func image(containing address: UInt64) -> (String, UInt64)? {
        guard let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8) else { return nil }
        let rows = maps.split(separator: "\n").compactMap { line -> (UInt64, UInt64, UInt64, String)? in
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            let range = f.first?.split(separator: "-") ?? []
            guard f.count >= 6, range.count == 2, let lo = UInt64(range[0], radix: 16),
                  let hi = UInt64(range[1], radix: 16), let offset = UInt64(f[2], radix: 16) else { return nil }
            return (lo, hi, offset, String(f[5]))
        }
        guard let path = rows.first(where: { $0.0 <= address && address < $0.1 })?.3,
              let base = rows.first(where: { $0.3 == path && $0.2 == 0 })?.0 else { return nil }
        return (path, base)
    }
}
