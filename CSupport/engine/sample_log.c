// The sample log ring: lock-free reservation for writers (signal handlers
// included), in-order consumption for the single reader. The record protocol,
// and why a record the reader accepts is whole, is in hangwatch_log.h.
#include "agent_hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HW_HEADER_BYTES 4096u
/// An uncommitted record whose writer may still be alive holds the reader up this long.
#define HW_DEFAULT_ABANDON_NS 1000000000ull
/// After this long the reader asks whether the writer of an uncommitted record still exists.
#define HW_LIVENESS_GRACE_NS 20000000ull

// claim(pos) / seal(pos): the low 32 bits of the position xored with one of
// these. Commit turns a claim into a seal by xoring both in, without needing
// to know the position.
#define HW_TAG_CLAIM 0x6c43a9d5u
#define HW_TAG_SEAL 0x93b1e74bu

static inline uint8_t *ring_base(hw_log_header *log) {
    return (uint8_t *)log + log->header_size;
}

static void init_header(hw_log_header *log, uint64_t capacity) {
    memset(log, 0, sizeof *log);
    log->magic = HW_LOG_MAGIC;
    log->version = HW_LOG_VERSION;
    log->header_size = HW_HEADER_BYTES;
    log->capacity = capacity;
}

hw_log_header *hw_log_create(const char *path, uint64_t capacity) {
    capacity &= ~(uint64_t)7;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return NULL;
    size_t total = HW_HEADER_BYTES + capacity;
    if (ftruncate(fd, (off_t)total) != 0) { close(fd); return NULL; }
    void *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return NULL;
    init_header(p, capacity);
    return p;
}

hw_log_header *hw_log_open(const char *path) {
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return NULL;
    hw_log_header head;
    if (pread(fd, &head, sizeof head, 0) != (ssize_t)sizeof head || head.magic != HW_LOG_MAGIC
        || head.version != HW_LOG_VERSION || head.header_size != HW_HEADER_BYTES) {
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    void *p = mmap(NULL, head.header_size + head.capacity, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd); // the mapping keeps the file; the program never sees an extra descriptor
    return p == MAP_FAILED ? NULL : p;
}

hw_log_header *hw_log_create_anonymous(uint64_t capacity) {
    capacity &= ~(uint64_t)7;
    void *p = mmap(NULL, HW_HEADER_BYTES + capacity, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    init_header(p, capacity);
    return p;
}

void hw_log_unmap(hw_log_header *log) {
    if (log) munmap(log, log->header_size + log->capacity);
}

/// The lap number stored in headers written at absolute position `pos`.
static inline uint32_t lap_at(const hw_log_header *log, uint64_t pos) {
    return (uint32_t)((pos / log->capacity + 1) & 0xffffffu);
}

static inline uint32_t claim_at(uint64_t pos) { return (uint32_t)pos ^ HW_TAG_CLAIM; }
static inline uint32_t seal_at(uint64_t pos) { return (uint32_t)pos ^ HW_TAG_SEAL; }

// The header's two 8-byte words, each read and written at once (may_alias:
// they are also accessed through the struct's fields).
typedef uint64_t __attribute__((may_alias)) header_word;
typedef union { struct { uint32_t type, size; } f; uint64_t word; } head_word;
typedef union { struct { uint32_t tag; int32_t writer; } f; uint64_t word; } tag_word;

static inline header_word *head_of(const hw_rec_header *rec) { return (header_word *)(uintptr_t)rec; }
static inline header_word *tag_of(const hw_rec_header *rec) { return (header_word *)(uintptr_t)rec + 1; }

static inline uint64_t pack_head(uint32_t type, uint32_t size) {
    head_word v = { .f = { type, size } };
    return v.word;
}

static inline uint64_t pack_tag(uint32_t tag, int32_t writer) {
    tag_word v = { .f = { tag, writer } };
    return v.word;
}

// The writer's OS thread id, cached per thread. A fork child inherits the
// cache, but it never writes (the engine's owner token is wiped in it).
static __thread int32_t tls_tid __attribute__((tls_model("initial-exec")));

// SIGNAL-SAFE: a TLS load, and one gettid the first time on a thread.
static inline int32_t writer_tid(void) {
    int32_t tid = tls_tid;
    if (__builtin_expect(tid == 0, 0)) {
        tid = (int32_t)syscall(SYS_gettid);
        tls_tid = tid;
    }
    return tid;
}

// SIGNAL-SAFE.
static void count_drop(hw_log_header *log, uint32_t kind) {
    __atomic_fetch_add(&log->dropped_records, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&log->dropped_by_kind[kind < 16 ? kind : 0], 1, __ATOMIC_RELAXED);
}

// SIGNAL-SAFE: a CAS loop on write_pos; no locks, no allocation.
hw_rec_header *hw_log_reserve_kind(hw_log_header *log, uint32_t size, uint32_t kind) {
    uint64_t cap = log->capacity;
    if (size < sizeof(hw_rec_header) || size > cap / 4) { count_drop(log, kind); return NULL; }
    size = (size + 7u) & ~7u;
    // Samples leave the headroom free, so hang boundaries still fit in a ring they filled.
    uint64_t limit = hw_kind_is_sample(kind) ? cap - HW_LOG_HEADROOM(cap) : cap;
    uint64_t pos = __atomic_load_n(&log->write_pos, __ATOMIC_RELAXED);
    for (;;) {
        uint64_t off = pos % cap;
        uint64_t pad = (off + size > cap) ? cap - off : 0;
        uint64_t need = pad + size;
        uint64_t read = __atomic_load_n(&log->read_pos, __ATOMIC_ACQUIRE);
        if (pos + need - read > limit) {
            count_drop(log, kind);
            return NULL;
        }
        if (__atomic_compare_exchange_n(&log->write_pos, &pos, pos + need, true,
                                        __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
            uint8_t *base = ring_base(log);
            if (pad) {
                // A PAD may be 8 bytes: its head word alone marks it (size == the rest of the ring).
                __atomic_store_n(head_of((hw_rec_header *)(base + off)),
                                 pack_head(lap_at(log, pos) << 8 | HW_REC_PAD, (uint32_t)pad), __ATOMIC_RELEASE);
                pos += pad;
                off = 0;
            }
            hw_rec_header *rec = (hw_rec_header *)(base + off);
            // Tag first, head last: a reader that sees this lap's head sees the claim,
            // and with it the size it may step over if this writer never commits.
            __atomic_store_n(tag_of(rec), pack_tag(claim_at(pos), writer_tid()), __ATOMIC_RELAXED);
            __atomic_store_n(head_of(rec), pack_head(lap_at(log, pos) << 8 | HW_REC_EMPTY, size), __ATOMIC_RELEASE);
            return rec;
        }
    }
}

// SIGNAL-SAFE.
hw_rec_header *hw_log_reserve(hw_log_header *log, uint32_t size) {
    return hw_log_reserve_kind(log, size, HW_REC_EMPTY);
}

// SIGNAL-SAFE: two loads, one CAS, one store.
void hw_log_commit(hw_rec_header *rec, uint32_t type) {
    // Head before tag: if the record was recycled after we read our own head,
    // the CAS below fails; if before, the tag names another thread.
    head_word head = { .word = __atomic_load_n(head_of(rec), __ATOMIC_ACQUIRE) };
    tag_word tag = { .word = __atomic_load_n(tag_of(rec), __ATOMIC_ACQUIRE) };
    if ((head.f.type & 0xffu) != HW_REC_EMPTY || tag.f.writer != writer_tid()) return;
    uint64_t expected = head.word;
    uint64_t done = pack_head((head.f.type & ~0xffu) | (type & 0xffu), head.f.size);
    if (!__atomic_compare_exchange_n(head_of(rec), &expected, done, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        return; // the reader gave up on us and the space was claimed again: publish nothing
    __atomic_store_n(tag_of(rec), pack_tag(tag.f.tag ^ HW_TAG_CLAIM ^ HW_TAG_SEAL, tag.f.writer), __ATOMIC_RELEASE);
}

// ---- reader ------------------------------------------------------------------

/// What the reader found at a position.
typedef enum { AT_NOTHING, AT_PAD, AT_CLAIMED, AT_COMMITTED } found_kind;

typedef struct {
    found_kind kind;
    uint32_t size;
    int32_t writer;
} found;

/// Reads the record at absolute position `pos` and says what it is, using
/// only checks against `pos` itself (no earlier lap can pass them).
static found look_at(hw_log_header *log, uint64_t pos) {
    uint64_t cap = log->capacity, off = pos % cap;
    const hw_rec_header *rec = (const hw_rec_header *)(ring_base(log) + off);
    head_word head = { .word = __atomic_load_n(head_of(rec), __ATOMIC_ACQUIRE) };
    found none = { AT_NOTHING, 0, 0 };
    if ((head.f.type >> 8) != lap_at(log, pos)) return none;
    uint32_t kind = head.f.type & 0xffu, size = head.f.size;
    if (kind == HW_REC_PAD) return size == cap - off ? (found){ AT_PAD, size, 0 } : none;
    if (size < sizeof(hw_rec_header) || size % 8 != 0 || size > cap - off) return none;
    tag_word tag = { .word = __atomic_load_n(tag_of(rec), __ATOMIC_ACQUIRE) };
    if (kind == HW_REC_EMPTY)
        return tag.f.tag == claim_at(pos) ? (found){ AT_CLAIMED, size, tag.f.writer } : none;
    // Committed but not sealed yet: the writer is between its last two stores.
    return tag.f.tag == seal_at(pos) ? (found){ AT_COMMITTED, size, tag.f.writer } : none;
}

static void advance(hw_log_header *log, uint64_t to) {
    __atomic_store_n(&log->read_pos, to, __ATOMIC_RELEASE);
}

/// How long the reader has waited at `pos` (starting the clock if it just got there).
static uint64_t waited_at(hw_log_header *log, uint64_t pos, uint64_t now_ns) {
    if (log->reader_wait_pos != pos + 1) {
        log->reader_wait_pos = pos + 1;
        log->reader_wait_since_ns = now_ns;
        log->reader_wait_generation = __atomic_load_n(&log->generation, __ATOMIC_ACQUIRE);
        log->reader_scan_end = 0;
    }
    return now_ns - log->reader_wait_since_ns;
}

static uint64_t abandon_after(const hw_log_header *log) {
    return log->abandon_ns ? log->abandon_ns : HW_DEFAULT_ABANDON_NS;
}

/// The engine image that was running when the wait began has been replaced
/// (exec): every thread that could have been writing then is dead.
static bool image_replaced(hw_log_header *log) {
    return __atomic_load_n(&log->generation, __ATOMIC_ACQUIRE) != log->reader_wait_generation;
}

/// False only when the kernel says thread `tid` of the log's owner is gone.
static bool thread_exists(hw_log_header *log, int32_t tid) {
    if (tid <= 0) return true;
    int32_t pid = __atomic_load_n(&log->owner_pid, __ATOMIC_ACQUIRE);
    if (pid <= 0) pid = (int32_t)getpid(); // the in-process library: we are the owner
    int saved = errno;
    bool gone = syscall(SYS_tgkill, pid, tid, 0) != 0 && errno == ESRCH;
    errno = saved;
    return !gone;
}

/// Whether to step over a record its writer claimed but has not committed.
static bool give_up_on_claim(hw_log_header *log, uint64_t pos, found f, uint64_t end,
                             bool writer_gone, uint64_t now_ns) {
    if (writer_gone) return true;
    uint64_t waited = waited_at(log, pos, now_ns);
    if (end <= pos + f.size) return false; // nothing waits behind it
    if (waited < HW_LIVENESS_GRACE_NS) return false;
    if (image_replaced(log) || !thread_exists(log, f.writer)) return true;
    return waited >= abandon_after(log);
}

/// The first position after `pos` and before `end` that holds a record of its
/// own (claimed, committed or padding), or 0.
static uint64_t next_record_after(hw_log_header *log, uint64_t pos, uint64_t end) {
    for (uint64_t at = pos + 8; at + 8 <= end; at += 8)
        if (look_at(log, at).kind != AT_NOTHING) return at;
    return 0;
}

const hw_rec_header *hw_log_peek_at(hw_log_header *log, bool writer_gone, uint64_t now_ns) {
    uint64_t cap = log->capacity;
    for (;;) {
        uint64_t pos = __atomic_load_n(&log->read_pos, __ATOMIC_RELAXED);
        uint64_t end = __atomic_load_n(&log->write_pos, __ATOMIC_ACQUIRE);
        if (pos >= end) return NULL;
        found f = look_at(log, pos);
        switch (f.kind) {
        case AT_COMMITTED:
            return (const hw_rec_header *)(ring_base(log) + pos % cap);
        case AT_PAD:
            advance(log, pos + f.size);
            continue;
        case AT_CLAIMED:
            if (!give_up_on_claim(log, pos, f, end, writer_gone, now_ns)) return NULL;
            // Counted only while the process lives: its death explains the rest.
            if (!writer_gone) __atomic_fetch_add(&log->abandoned_records, 1, __ATOMIC_RELAXED);
            advance(log, pos + f.size);
            continue;
        case AT_NOTHING:
            break;
        }
        // No header here yet: a writer between its CAS and its first store
        // (wait), or one that died right there (then nothing will ever come).
        uint64_t waited = waited_at(log, pos, now_ns);
        if (!writer_gone && !image_replaced(log) && waited < abandon_after(log)) return NULL;
        if (log->reader_scan_end == end && !writer_gone) return NULL; // scanned this much already
        log->reader_scan_end = end;
        uint64_t next = next_record_after(log, pos, end);
        if (!next) {
            if (!writer_gone) return NULL;
            next = end;
        }
        __atomic_fetch_add(&log->skipped_bytes, next - pos, __ATOMIC_RELAXED);
        if (!writer_gone) __atomic_fetch_add(&log->abandoned_records, 1, __ATOMIC_RELAXED);
        advance(log, next);
    }
}

const hw_rec_header *hw_log_peek(hw_log_header *log, bool writer_gone) {
    return hw_log_peek_at(log, writer_gone, hw_now_ns());
}

void hw_log_consume(hw_log_header *log, const hw_rec_header *rec) {
    // No zeroing: nothing this lap wrote can pass the next lap's checks.
    __atomic_fetch_add(&log->read_pos, rec->size, __ATOMIC_RELEASE);
}

uint64_t hw_log_dropped(const hw_log_header *log) {
    return __atomic_load_n(&log->dropped_records, __ATOMIC_RELAXED);
}

uint64_t hw_log_dropped_kind(const hw_log_header *log, uint32_t kind) {
    return kind < 16 ? __atomic_load_n(&log->dropped_by_kind[kind], __ATOMIC_RELAXED) : 0;
}

/// How far behind the read position pages are released. A read fault maps
/// the neighbouring cached pages of the same 2 MiB page-table block too
/// ("fault-around"), so pages released closer than that would come back.
#define HW_RELEASE_LAG (2ull << 20)

void hw_log_release_consumed(hw_log_header *log, uint64_t *released) {
    // Whole pages between what was released before and what the reader
    // consumed since, minus the lag; the ring may wrap in between.
    uint64_t page = 4096, cap = log->capacity;
    if (cap % page) return; // page offsets in the ring would not be page-aligned
    uint64_t consumed = __atomic_load_n(&log->read_pos, __ATOMIC_ACQUIRE);
    if (consumed < HW_RELEASE_LAG) return;
    uint64_t read = consumed - HW_RELEASE_LAG;
    uint64_t from = *released;
    if (read - from >= cap) from = read - cap; // more than a lap: release all of it once
    uint64_t lo = (from + page - 1) / page * page, hi = read / page * page;
    if (hi < lo + (1u << 20)) return; // a megabyte at a time: each call flushes TLB entries
    uint8_t *base = ring_base(log);
    for (uint64_t at = lo; at < hi;) {
        uint64_t off = at % cap;
        uint64_t len = hi - at < cap - off ? hi - at : cap - off;
        uint64_t start = off / page * page; // cap is a multiple of the page size for file logs
        (void)madvise(base + start, len, MADV_DONTNEED);
        at += len;
    }
    *released = hi;
}
