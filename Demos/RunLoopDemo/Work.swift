// The pieces of work. Every function a test or the Quick start names is
// @inline(never), does its own arithmetic (so it has self time in a profile)
// and is CPU-bound until a CLOCK_MONOTONIC deadline, so its duration is
// accurate even on a noisy machine: preemption cannot make it end late by
// more than one short work chunk (a few microseconds).

import Foundation
#if canImport(Glibc)
import Glibc
#endif

let nsPerMs: UInt64 = 1_000_000

/// Target durations in milliseconds (the measure file has the real ones).
enum Target {
    static let parseLargeDocument = 420.0
    static let renderThumbnails = 300.0
    static let refreshCache = 150.0
    static let smallUpdate = 60.0
    static let sortRecords = 350.0
    static let spinForever = 10_000.0
    static let shortStall = 120.0
    static let loadConfiguration = 300.0
    static let handleRequest = 260.0
    static let parentWork = 270.0
}

@inline(__always)
func deadline(afterMs ms: Double, from start: UInt64) -> UInt64 {
    start &+ UInt64(ms * 1_000_000)
}

/// Plain arithmetic (xorshift) in chunks of ~2-4 µs until `deadline`.
/// Always inlined, so the time is self time of the named caller.
@inline(__always)
func spinArithmetic(until deadline: UInt64, seed: UInt64) -> UInt64 {
    var x = seed | 1
    repeat {
        for _ in 0..<2048 {
            x ^= x << 13
            x ^= x >> 7
            x ^= x << 17
        }
    } while monotonicNs() < deadline
    return x
}

// MARK: - standard: parseLargeDocument → tokenize, checksum

/// A generated "document": words, numbers and punctuation, with newlines.
@inline(__always)
func generateDocument(bytes count: Int) -> [UInt8] {
    let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789 ,.:;{}[]\"\n      ".utf8)
    var doc = [UInt8](repeating: 0, count: count)
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    for i in 0..<count {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        doc[i] = alphabet[Int((state >> 33) % UInt64(alphabet.count))]
    }
    return doc
}

/// ~420 ms. Its own loop scans lines and hashes fields (~30% self time), and
/// it calls tokenize (~40%) and checksum (~30%) in rounds of 2 ms.
@inline(never)
func parseLargeDocument() {
    let start = monotonicNs()
    let end = deadline(afterMs: Target.parseLargeDocument, from: start)
    let document = generateDocument(bytes: 64 * 1024)
    var lines: UInt64 = 0
    var fieldHash: UInt64 = 0
    var tokens: UInt64 = 0
    var sum: UInt64 = 0
    var offset = 0
    document.withUnsafeBufferPointer { doc in
        var now = monotonicNs()
        while now < end {
            let roundStart = now
            // Own work: line scanning and field hashing, 30 % of each 2.3 ms round
            // (tokenize 40 %, checksum 30 %). The round is no multiple of the 1 ms
            // sampling period, so samples fall at every phase of it: a 2 ms round
            // phase-locks with 1 kHz sampling and can give a run's samples all to
            // two of the three parts (CI saw checksum with half of them).
            let ownEnd = min(end, roundStart &+ 690_000)
            repeat {
                let chunkEnd = min(offset + 4096, doc.count)
                for i in offset..<chunkEnd {
                    let c = doc[i]
                    if c == 10 { lines &+= 1 }
                    fieldHash = (fieldHash &+ UInt64(c)) &* 0x100_0000_01B3
                }
                offset = chunkEnd == doc.count ? 0 : chunkEnd
            } while monotonicNs() < ownEnd
            tokens &+= tokenize(doc, until: min(end, roundStart &+ 1_610_000))
            sum ^= checksum(doc, until: min(end, roundStart &+ 2_300_000))
            now = monotonicNs()
        }
    }
    consume(lines &+ fieldHash &+ tokens &+ sum)
}

/// Counts tokens (runs of non-separator bytes) over the document until `deadline`.
@inline(never)
func tokenize(_ doc: UnsafeBufferPointer<UInt8>, until deadline: UInt64) -> UInt64 {
    var tokens: UInt64 = 0
    var inToken = false
    var offset = 0
    repeat {
        let chunkEnd = min(offset + 2048, doc.count)
        for i in offset..<chunkEnd {
            let c = doc[i]
            let separator = c == 32 || c == 10 || c == 44 || c == 58 || c == 59
            if separator {
                if inToken { tokens &+= 1 }
                inToken = false
            } else {
                inToken = true
            }
        }
        offset = chunkEnd == doc.count ? 0 : chunkEnd
    } while monotonicNs() < deadline
    return tokens
}

/// FNV-1a over the document until `deadline`.
@inline(never)
func checksum(_ doc: UnsafeBufferPointer<UInt8>, until deadline: UInt64) -> UInt64 {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    var offset = 0
    repeat {
        let chunkEnd = min(offset + 2048, doc.count)
        for i in offset..<chunkEnd {
            hash ^= UInt64(doc[i])
            hash = hash &* 0x100_0000_01B3
        }
        offset = chunkEnd == doc.count ? 0 : chunkEnd
    } while monotonicNs() < deadline
    return hash
}

/// ~300 ms. 2×2 box-filter downsampling of a generated 256×256 image, all self time.
@inline(never)
func renderThumbnails() {
    let start = monotonicNs()
    let end = deadline(afterMs: Target.renderThumbnails, from: start)
    let side = 256
    var image = [UInt32](repeating: 0, count: side * side)
    for i in 0..<image.count { image[i] = UInt32(truncatingIfNeeded: i &* 2_654_435_761) }
    var thumb = [UInt32](repeating: 0, count: (side / 2) * (side / 2))
    var total: UInt64 = 0
    var row = 0
    repeat {
        // Eight output rows per chunk (~2-3 µs).
        for y in row..<(row + 8) {
            for x in 0..<(side / 2) {
                let p = 2 * y * side + 2 * x
                let s = (image[p] & 0xFF) + (image[p + 1] & 0xFF) + (image[p + side] & 0xFF) + (image[p + side + 1] & 0xFF)
                thumb[y * (side / 2) + x] = s >> 2
                total &+= UInt64(s)
            }
        }
        row = (row + 8) % (side / 2)
        if row == 0 { image[Int(total % UInt64(image.count))] &+= 1 }
    } while monotonicNs() < end
    consume(total &+ UInt64(thumb[Int(total % UInt64(thumb.count))]))
}

/// ~150 ms: a hang above the 100 ms hang threshold but below the 250 ms report threshold.
@inline(never)
func refreshCache() {
    let start = monotonicNs()
    consume(spinArithmetic(until: deadline(afterMs: Target.refreshCache, from: start), seed: start))
}

/// ~60 ms: below the 100 ms hang threshold; never a hang.
@inline(never)
func smallUpdate() {
    let start = monotonicNs()
    consume(spinArithmetic(until: deadline(afterMs: Target.smallUpdate, from: start), seed: start))
}

// MARK: - blocked: waiting in the kernel, not on the CPU

/// usleep(300 ms). Writes `usleep-result <ret> <errno> <actualMs>`.
@inline(never)
func waitForDisk() {
    errno = 0
    let t0 = monotonicNs()
    let ret = usleep(300_000)
    let err = errno
    let t1 = monotonicNs()
    measureLine("usleep-result \(ret) \(err) \(msString(t1 &- t0))")
}

/// poll() on the read end of a pipe nobody writes, 230 ms timeout.
/// Writes `poll-result <ret> <errno> <actualMs>`.
@inline(never)
func waitForSocket() {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else {
        measureLine("poll-result -1 \(errno) 0.000")
        return
    }
    var pfd = pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)
    errno = 0
    let t0 = monotonicNs()
    let ret = poll(&pfd, 1, 230)
    let err = errno
    let t1 = monotonicNs()
    close(fds[0])
    close(fds[1])
    measureLine("poll-result \(ret) \(err) \(msString(t1 &- t0))")
}

// MARK: - qsort: a slow comparator called from glibc's qsort

nonisolated(unsafe) var compareDryRun = false
nonisolated(unsafe) var compareCount = 0
nonisolated(unsafe) var comparePlanned = 0
nonisolated(unsafe) var compareSpin = 64
nonisolated(unsafe) var compareEndNs: UInt64 = 0
nonisolated(unsafe) var compareWindowStartNs: UInt64 = 0
nonisolated(unsafe) var compareSink: UInt64 = 0

/// The qsort comparator, exported with the C name `compareRecords`. Each call
/// does `compareSpin` rounds of arithmetic; every 256 calls the spin count is
/// re-paced so the whole sort ends at its deadline.
@_cdecl("compareRecords")
@inline(never)
func compareRecords(_ a: UnsafeRawPointer?, _ b: UnsafeRawPointer?) -> Int32 {
    let x = a!.load(as: Double.self)
    let y = b!.load(as: Double.self)
    if !compareDryRun {
        var h = x.bitPattern ^ y.bitPattern
        for _ in 0..<compareSpin {
            h = h &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            h ^= h >> 29
        }
        compareSink &+= h
    }
    compareCount += 1
    if !compareDryRun && compareCount & 255 == 0 { paceComparisons() }
    return x < y ? -1 : (x > y ? 1 : 0)
}

/// Proportional pacing: spread the remaining time over the remaining comparisons.
@inline(never)
func paceComparisons() {
    let now = monotonicNs()
    let window = Double(now &- compareWindowStartNs) / 256.0   // ns per comparison lately
    compareWindowStartNs = now
    let remaining = comparePlanned - compareCount
    guard now < compareEndNs, remaining > 0, window > 0 else {
        compareSpin = 0
        return
    }
    let want = Double(compareEndNs - now) / Double(remaining)        // ns per comparison wanted
    let perSpin = window / Double(max(compareSpin, 1))                // ns per spin round (upper bound)
    compareSpin = Int(min(1_000_000, max(0, want / perSpin)))
}

/// ~350 ms: glibc qsort of 20 000 doubles with the slow comparator.
@inline(never)
func sortRecords() {
    let start = monotonicNs()
    let count = 20_000
    var state: UInt64 = 0x2545_F491_4F6C_DD1D
    var records = [Double](repeating: 0, count: count)
    for i in 0..<count {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        records[i] = Double(state >> 11) / Double(1 << 53) * 1_000_000.0
    }
    // Dry run on a copy to learn how many comparisons this input takes.
    var copy = records
    compareDryRun = true
    compareCount = 0
    copy.withUnsafeMutableBytes { qsort($0.baseAddress!, count, MemoryLayout<Double>.stride, compareRecords) }
    comparePlanned = compareCount
    // The real, paced sort.
    compareDryRun = false
    compareCount = 0
    compareEndNs = deadline(afterMs: Target.sortRecords, from: start)
    compareWindowStartNs = monotonicNs()
    records.withUnsafeMutableBytes { qsort($0.baseAddress!, count, MemoryLayout<Double>.stride, compareRecords) }
    var sorted = true
    for i in 1..<count where records[i - 1] > records[i] { sorted = false }
    if !sorted { writeStderr("RunLoopDemo: qsort result not sorted\n") }
    consume(compareSink &+ UInt64(records[count / 2]) &+ UInt64(comparePlanned))
    log("sortRecords: \(comparePlanned) comparisons, final spin \(compareSpin)")
}

// MARK: - kill

/// ~10 s of CPU (the test SIGKILLs the process long before it ends).
/// Creates `<pid-file>.hang` (containing the start time in CLOCK_MONOTONIC ns)
/// as the hang starts.
@inline(never)
func spinForever(hangFile: String?) {
    let start = monotonicNs()
    if let hangFile { writeFileAtomically(hangFile, "\(start)\n") }
    log("spinning")
    consume(spinArithmetic(until: deadline(afterMs: Target.spinForever, from: start), seed: start))
}

// MARK: - exit, launch, fork

@inline(never)
func shortStall() {
    let start = monotonicNs()
    consume(spinArithmetic(until: deadline(afterMs: Target.shortStall, from: start), seed: start))
}

@inline(never)
func loadConfiguration() {
    let start = monotonicNs()
    consume(spinArithmetic(until: deadline(afterMs: Target.loadConfiguration, from: start), seed: start))
}

@inline(never)
func handleRequest() {
    let start = monotonicNs()
    consume(spinArithmetic(until: deadline(afterMs: Target.handleRequest, from: start), seed: start))
}

@inline(never)
func parentWork() {
    let start = monotonicNs()
    consume(spinArithmetic(until: deadline(afterMs: Target.parentWork, from: start), seed: start))
}

// MARK: - service

/// Request `n` of the service scenario, then the next one a second after this
/// one started, until `endNs`.
func serveEverySecond(until endNs: UInt64, request n: Int) {
    let start = monotonicNs()
    guard start < endNs else {
        after(exitDelayMs) { finish() }
        return
    }
    switch variedStacks ? 4 : n % 4 {
    case 4: runMeasured(Step("walkRoutes") { walkRoutes(seed: UInt64(n)) })
    case 0: runMeasured(Step("resizeImages") { resizeImages() })
    case 1: runMeasured(Step("buildIndex") { buildIndex() })
    case 2: runMeasured(Step("readSlowBackend") { readSlowBackend() })
    default: runMeasured(Step("compressLogs") { compressLogs() })
    }
    let spentMs = ms(monotonicNs() &- start)
    after(max(50, 1000 - spentMs)) { serveEverySecond(until: endNs, request: n + 1) }
}

@inline(never)
func resizeImages() {
    let start = monotonicNs()
    consume(spinArithmetic(until: deadline(afterMs: 300, from: start), seed: start))
}

@inline(never)
func buildIndex() {
    let start = monotonicNs()
    consume(spinArithmetic(until: deadline(afterMs: 160, from: start), seed: start))
}

@inline(never)
func readSlowBackend() {
    usleep(270_000)
}

@inline(never)
func compressLogs() {
    let start = monotonicNs()
    consume(spinArithmetic(until: deadline(afterMs: 420, from: start), seed: start))
}

/// --varied (service): every request walks a different random path through
/// four routing functions eight calls deep, about a millisecond per path, so
/// nearly every sample has a stack never seen before (what a reader that keeps
/// every stack would pile up).
nonisolated(unsafe) var variedStacks = false

@inline(never)
func walkRoutes(seed: UInt64) {
    let start = monotonicNs()
    let end = deadline(afterMs: 300, from: start)
    var rng = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    while monotonicNs() < end {
        rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17
        consume(route(depth: 8, path: rng))
    }
}

@inline(never) func route(depth: Int, path: UInt64) -> UInt64 {
    guard depth > 0 else {
        let start = monotonicNs()
        return spinArithmetic(until: deadline(afterMs: 1, from: start), seed: path)
    }
    switch path & 3 {
    case 0: return routeA(depth: depth - 1, path: path >> 2) &+ 1
    case 1: return routeB(depth: depth - 1, path: path >> 2) &+ 2
    case 2: return routeC(depth: depth - 1, path: path >> 2) &+ 3
    default: return routeD(depth: depth - 1, path: path >> 2) &+ 4
    }
}

@inline(never) func routeA(depth: Int, path: UInt64) -> UInt64 { route(depth: depth, path: path) &* 3 }
@inline(never) func routeB(depth: Int, path: UInt64) -> UInt64 { route(depth: depth, path: path) &* 5 }
@inline(never) func routeC(depth: Int, path: UInt64) -> UInt64 { route(depth: depth, path: path) &* 7 }
@inline(never) func routeD(depth: Int, path: UInt64) -> UInt64 { route(depth: depth, path: path) &* 11 }
