// The collector's side of module discovery: the records that tell it about
// generations and hangs, and the unwinding of a sample, which must see every
// image the sample's stack passes through before it runs.

import CHangWatchEngine
import CHangWatchUnwind

extension CaptureCollector {
    /// Keeps the module list current from `/proc/PID/maps` while process
    /// `pid` lives: images it dlopen's after its engine started are added
    /// before the first sample that needs them is unwound. Call
    /// ``stopWatchingModules()`` once the process is gone (its pid may be reused).
    package func watchModules(ofProcess pid: Int32, log: SampleLog) {
        let header = log.header
        // A plain 4-byte load of a field the engine bumps atomically at start;
        // a stale value only delays a read to the next record.
        moduleDiscovery.watch(pid: pid, vdso: VDSOImage.current(), liveGeneration: { header.pointee.generation })
    }

    /// Stops reading the target's maps.
    package func stopWatchingModules() { moduleDiscovery.stop() }

    /// What the maps reads cost and found so far.
    var moduleDiscoveryFigures: ModuleDiscovery.Figures { moduleDiscovery.figures }

    /// Bookkeeping before `consume` handles a record: which generation is the
    /// newest, and a maps read at each hang start (rate-limited), so that a
    /// target killed mid-hang leaves its images known.
    func noteForModules(_ record: UnsafePointer<hw_rec_header>) {
        switch Int(hw_rec_kind(record)) {
        case Int(HW_REC_SESSION.rawValue):
            let session = UnsafeRawPointer(record).assumingMemoryBound(to: hw_rec_session.self).pointee
            moduleDiscovery.noteSession(generation: session.generation)
        case Int(HW_REC_HANG_START.rawValue):
            learnModules(neededSince: nil)
        default:
            break
        }
    }

    /// How far one sample's unwind went.
    struct Unwound {
        /// How many pcs were written.
        var count: Int
        /// The chain ended at the thread's entry (not at a frame it could not
        /// step past, a word outside the copy, or the frame limit).
        var reachedEntry: Bool
    }

    /// Unwinds a sample into `pcs`, first learning from the maps any image
    /// its pc falls in, then again if a return address lands outside every
    /// known image (the unwinder stops or guesses there).
    func unwindLearningModules(_ rec: UnsafePointer<hw_rec_sample>, into pcs: inout [UInt64]) -> Unwound {
        let generation = rec.pointee.generation
        let pc = withUnsafeBytes(of: rec.pointee.regs) { $0.load(fromByteOffset: Int(HW_REG_RIP) * 8, as: UInt64.self) }
        let current = moduleDiscovery.newestGeneration == generation
        if current, !moduleDiscovery.covers(pc, generation: generation) {
            learnModules(neededSince: rec.pointee.time_ns)
        }
        var unwound = unwind(rec, into: &pcs)
        if current,
           !pcs.withUnsafeBufferPointer({
               moduleDiscovery.coversAll(UnsafeBufferPointer(rebasing: $0.prefix(unwound.count)), generation: generation)
           }),
           learnModules(neededSince: rec.pointee.time_ns) > 0 {
            unwound = unwind(rec, into: &pcs)
        }
        return unwound
    }

    private func unwind(_ rec: UnsafePointer<hw_rec_sample>, into pcs: inout [UInt64]) -> Unwound {
        let max = Int32(pcs.count)
        guard let u = unwinder(for: rec.pointee.generation) else { return Unwound(count: 0, reachedEntry: false) }
        var reachedEntry = false
        let count = pcs.withUnsafeMutableBufferPointer { hw_unwind_sample(u, rec, $0.baseAddress, max, &reachedEntry) }
        return Unwound(count: Int(Swift.max(count, 0)), reachedEntry: reachedEntry)
    }

    /// Reads the maps (when `ModuleDiscovery` allows) and registers the new
    /// images for the newest generation. Returns how many were added.
    @discardableResult
    private func learnModules(neededSince: UInt64?) -> Int {
        guard let generation = moduleDiscovery.newestGeneration else { return 0 }
        let found = moduleDiscovery.discover(neededSince: neededSince)
        for mapped in found { register(mapped.image, generation: generation, flags: mapped.flags) }
        return found.count
    }
}
