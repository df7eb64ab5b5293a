import CHangWatchEngine
import CHangWatchUnwind
import Foundation
import HangWatchCapture
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
            // getpid's entry in libc (looked up by name, so never a PLT stub of
            // this binary): its CFI says the return address is at rsp.
            guard let entry = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "getpid") else { exit(11) }
            let ip = UInt64(UInt(bitPattern: entry))
            // The image and its load base, from the maps read to their end with
            // plain read(2)s (Foundation's whole-file read of /proc was flaky in CI).
            let maps = ProcessMaps.parse(String(decoding: ProcessMaps.readText(pid: getpid()) ?? [], as: UTF8.self))
            guard let file = maps.first(where: { $0.start <= ip && ip < $0.end })?.path,
                  let bias = maps.first(where: { $0.path == file && $0.offset == 0 })?.start else { exit(11) }
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
            let n = hw_unwind_sample(unwinder, sample, &pcs, 8, nil)
            exit(n == 1 && pcs[0] == ip ? 0 : 14)
        }
    }
}
