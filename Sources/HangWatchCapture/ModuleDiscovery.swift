// Which images the collector knows, per image generation, and when to look
// at /proc/PID/maps for more. The engine logs the images present when it
// starts; everything dlopen'ed later is learned here, by the reader, so the
// target's watchdog never takes the loader lock (a thread hung inside
// dl_iterate_phdr or dlopen holds it).
//
// When to read: a sample whose pc or return addresses fall outside every
// known image, and each HANG_START; at most once per 10 ms, and for a sample
// only when the last read is older than the sample (a read made after the
// sample was taken already saw every image the sample could need).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CHangWatchEngine
import HangWatchSymbols

/// Known images per generation, and the maps reads that find new ones.
package final class ModuleDiscovery {
    /// What a maps read cost and found, for benchmarks and tests.
    struct Figures: Equatable, Sendable {
        /// Maps reads made.
        var reads = 0
        var totalReadNs: UInt64 = 0
        var maxReadNs: UInt64 = 0
        /// Images added from maps.
        var imagesAdded = 0
        /// Reads whose snapshot was refused because it belonged to another image
        /// generation (the target exec'd).
        var refusedSnapshots = 0
    }

    /// At most one maps read per this interval.
    static let minimumIntervalNs: UInt64 = 10_000_000

    private struct Known {
        var start: UInt64
        var end: UInt64
        var bias: UInt64
        var buildId: [UInt8]
        var path: String
    }

    /// Per generation, sorted by start, non-overlapping as the loader maps them.
    /// Set only through `setKnown`, which keeps `spans` in step.
    private var known: [UInt32: [Known]] = [:]
    /// The address range of an image.
    private struct Span {
        var start: UInt64
        var end: UInt64
    }
    /// `known`'s ranges alone, in the same order: what every sample's check
    /// reads. A binary search over `Known` itself copies its strings and
    /// arrays at each probe, which costs more than the search (BENCHMARKS.md).
    private var spans: [UInt32: [Span]] = [:]
    /// The main executable of each generation, as the engine logged it.
    private var mainImage: [UInt32: Known] = [:]
    /// The newest generation a SESSION record announced.
    private(set) var newestGeneration: UInt32?
    private var scanner: MappedModuleScanner?
    /// The generation the log header holds now: bumped by the engine of a new
    /// image (after exec) before that image's SESSION record is read.
    private var liveGeneration: (() -> UInt32)?
    private var lastReadNs: UInt64 = 0
    private(set) var figures = Figures()

    /// Knows no image yet.
    package init() {}

    /// Starts reading the maps of `pid` (which must be alive while `discover` runs).
    func watch(pid: Int32, vdso: VDSOImage?, liveGeneration: @escaping () -> UInt32) {
        scanner = MappedModuleScanner(pid: pid, vdso: vdso)
        self.liveGeneration = liveGeneration
    }

    /// Stops reading maps: the target is gone (its pid may be reused).
    func stop() {
        scanner = nil
        liveGeneration = nil
    }

    /// A SESSION record: an engine started in image `generation`.
    func noteSession(generation: UInt32) {
        if newestGeneration.map({ generation > $0 }) ?? true { newestGeneration = generation }
    }

    /// An image the collector registered for `generation` (from the engine or from maps).
    package func noteKnown(_ image: ModuleImage, generation: UInt32, flags: UInt32) {
        let entry = Known(start: image.start, end: image.end, bias: image.loadBias, buildId: image.buildId,
                          path: image.path)
        var list = known[generation, default: []]
        let at = firstIndex(in: list, startingAtOrAfter: image.start)
        if at < list.count, list[at].start == image.start { list[at] = entry } else { list.insert(entry, at: at) }
        setKnown(list, for: generation)
        if flags & UInt32(HW_MODULE_MAIN) != 0 { mainImage[generation] = entry }
    }

    private func setKnown(_ list: [Known], for generation: UInt32) {
        known[generation] = list
        spans[generation] = list.map { Span(start: $0.start, end: $0.end) }
        if lastSpans?.generation == generation { lastSpans = nil }
    }

    /// The spans `spans(of:)` returned last (every sample asks, nearly always for one generation).
    private var lastSpans: (generation: UInt32, spans: [Span])?

    private func spans(of generation: UInt32) -> [Span]? {
        if let last = lastSpans, last.generation == generation { return last.spans }
        guard let list = spans[generation] else { return nil }
        lastSpans = (generation, list)
        return list
    }

    /// Whether some known image of `generation` covers `pc`.
    package func covers(_ pc: UInt64, generation: UInt32) -> Bool {
        guard let list = spans(of: generation) else { return false }
        return list.withUnsafeBufferPointer { Self.span(covering: pc, in: $0) != nil }
    }

    /// Whether known images of `generation` cover every one of `pcs` (one
    /// table lookup for a whole stack: this runs for every sample). Callers
    /// of one image follow each other, so the image of the previous pc is
    /// tried before a search.
    package func coversAll(_ pcs: UnsafeBufferPointer<UInt64>, generation: UInt32) -> Bool {
        guard let list = spans(of: generation) else { return pcs.isEmpty }
        return list.withUnsafeBufferPointer { list in
            var low: UInt64 = 1, high: UInt64 = 0 // the last span found; none yet
            for pc in pcs {
                if low <= pc && pc < high { continue }
                guard let span = Self.span(covering: pc, in: list) else { return false }
                low = span.start
                high = span.end
            }
            return true
        }
    }

    private static func span(covering pc: UInt64, in list: UnsafeBufferPointer<Span>) -> Span? {
        var low = 0, high = list.count // the first span starting after pc
        while low < high {
            let mid = (low + high) / 2
            if list[mid].start <= pc { low = mid + 1 } else { high = mid }
        }
        return low > 0 && pc < list[low - 1].end ? list[low - 1] : nil
    }

    /// Reads the maps when allowed and returns the images the newest
    /// generation does not know yet. `neededSince`: the time of the sample
    /// that needs an image; no read when the last one is newer than that.
    func discover(neededSince: UInt64?) -> [MappedImage] {
        guard let scanner, let generation = newestGeneration, let liveGeneration else { return [] }
        // An image that exec'd and started its engine: the maps show it, not `generation`.
        guard liveGeneration() == generation else { return [] }
        let now = SystemClock.monotonicNs()
        if let neededSince, lastReadNs >= neededSince { return [] }
        if lastReadNs != 0, now &- lastReadNs < Self.minimumIntervalNs { return [] }
        // Taken before the read: the text shows every image mapped before `now`.
        lastReadNs = now
        guard let text = ProcessMaps.readText(pid: scanner.pid) else { return [] }
        let images = scanner.images(in: ProcessMaps.parse(text))
        let cost = SystemClock.monotonicNs() &- now
        figures.reads += 1
        figures.totalReadNs += cost
        figures.maxReadNs = max(figures.maxReadNs, cost)
        // exec replaced the image but its engine has not started yet: the main
        // executable of this generation is no longer where the engine saw it.
        if let main = mainImage[generation],
           !images.contains(where: { $0.image.start == main.start && $0.image.loadBias == main.bias }) {
            figures.refusedSnapshots += 1
            return []
        }
        // Images unmapped since (dlclose) stop counting as known, so that a
        // library later mapped over their range is looked for, not mistaken.
        if let list = known[generation] {
            setKnown(list.filter { k in images.contains { $0.image.start == k.start && $0.image.loadBias == k.bias } },
                     for: generation)
        }
        let new = images.filter { !isKnown($0.image, generation: generation) }
        figures.imagesAdded += new.count
        return new
    }

    /// Same range and bias as a known image, and the same file: equal
    /// build-ids when both are known, else the same name. The engine names
    /// files as the loader opened them (`/lib/x86_64-linux-gnu/libc.so.6`,
    /// a soname symlink), maps by their real path; a relative name is never
    /// taken as known, as this process's working directory may differ.
    private func isKnown(_ image: ModuleImage, generation: UInt32) -> Bool {
        guard let list = known[generation] else { return false }
        let at = firstIndex(in: list, startingAtOrAfter: image.start)
        guard at < list.count else { return false }
        let k = list[at]
        guard k.start == image.start, k.end == image.end, k.bias == image.loadBias,
              k.path.hasPrefix("/") || k.path == "[vdso]" else { return false }
        if !k.buildId.isEmpty, !image.buildId.isEmpty { return k.buildId == image.buildId }
        if k.path == image.path { return true }
        if Self.lastComponent(k.path) == Self.lastComponent(image.path) { return true }
        guard let real = realpath(k.path, nil) else { return false }
        defer { free(real) }
        return String(cString: real) == image.path
    }

    private func firstIndex(in list: [Known], startingAtOrAfter address: UInt64) -> Int {
        var low = 0, high = list.count
        while low < high {
            let mid = (low + high) / 2
            if list[mid].start < address { low = mid + 1 } else { high = mid }
        }
        return low
    }

    private static func lastComponent(_ path: String) -> Substring {
        path.split(separator: "/").last ?? Substring(path)
    }
}
