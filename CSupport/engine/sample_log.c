// The sample log ring: lock-free reservation for writers (signal handlers
// included), in-order consumption for the single reader. See hangwatch_log.h.
#include "hangwatch_engine.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HW_HEADER_BYTES 4096u

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

// The 8-byte header read and written as one word (may_alias: it is also
// accessed through its two fields).
typedef uint64_t __attribute__((may_alias)) header_word;
typedef union { hw_rec_header fields; uint64_t word; } header_value;

// SIGNAL-SAFE: one 8-byte atomic store (lock-free on x86_64).
static inline void store_header(hw_rec_header *rec, uint32_t type, uint32_t size) {
    header_value v = { .fields = { type, size } };
    __atomic_store_n((header_word *)(void *)rec, v.word, __ATOMIC_RELEASE);
}

static inline hw_rec_header load_header(const hw_rec_header *rec) {
    header_value v = { .word = __atomic_load_n((const header_word *)(const void *)rec, __ATOMIC_ACQUIRE) };
    return v.fields;
}

// SIGNAL-SAFE: a CAS loop on write_pos; no locks, no allocation.
hw_rec_header *hw_log_reserve(hw_log_header *log, uint32_t size) {
    size = (size + 7u) & ~7u;
    uint64_t cap = log->capacity;
    if (size < sizeof(hw_rec_header) || size > cap / 4) return NULL;
    uint64_t pos = __atomic_load_n(&log->write_pos, __ATOMIC_RELAXED);
    for (;;) {
        uint64_t off = pos % cap;
        uint64_t pad = (off + size > cap) ? cap - off : 0;
        uint64_t need = pad + size;
        uint64_t read = __atomic_load_n(&log->read_pos, __ATOMIC_ACQUIRE);
        if (pos + need - read > cap) {
            __atomic_fetch_add(&log->dropped_records, 1, __ATOMIC_RELAXED);
            return NULL;
        }
        if (__atomic_compare_exchange_n(&log->write_pos, &pos, pos + need, true,
                                        __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
            uint8_t *base = ring_base(log);
            if (pad) {
                store_header((hw_rec_header *)(base + off), (lap_at(log, pos) << 8) | HW_REC_PAD, (uint32_t)pad);
                pos += pad;
                off = 0;
            }
            hw_rec_header *rec = (hw_rec_header *)(base + off);
            // Size and lap go in at once, so a reader can step over a record
            // whose writer died before committing it.
            store_header(rec, lap_at(log, pos) << 8 | HW_REC_EMPTY, size);
            return rec;
        }
    }
}

// SIGNAL-SAFE.
void hw_log_commit(hw_rec_header *rec, uint32_t type) {
    uint32_t lap_bits = __atomic_load_n(&rec->type, __ATOMIC_RELAXED) & ~0xffu;
    __atomic_store_n(&rec->type, lap_bits | (type & 0xffu), __ATOMIC_RELEASE);
}

const hw_rec_header *hw_log_peek(hw_log_header *log, bool writer_gone) {
    uint64_t cap = log->capacity;
    for (;;) {
        uint64_t pos = __atomic_load_n(&log->read_pos, __ATOMIC_RELAXED);
        uint64_t end = __atomic_load_n(&log->write_pos, __ATOMIC_ACQUIRE);
        if (pos >= end) return NULL;
        hw_rec_header *rec = (hw_rec_header *)(ring_base(log) + pos % cap);
        hw_rec_header head = load_header(rec);
        // Reserved but its header not stored yet (or a dead writer never did): wait.
        if ((head.type >> 8) != lap_at(log, pos)) return NULL;
        if (head.size < sizeof head || head.size > cap - pos % cap) return NULL; // corrupt: stop
        uint32_t kind = head.type & 0xffu;
        if (kind == HW_REC_EMPTY) {
            // Reserved but not committed. Only a dead writer leaves it so forever.
            if (!writer_gone) return NULL;
            hw_log_consume(log, rec);
            continue;
        }
        if (kind == HW_REC_PAD) { hw_log_consume(log, rec); continue; }
        return rec;
    }
}

void hw_log_consume(hw_log_header *log, const hw_rec_header *rec) {
    // No zeroing: a header from this lap can never be mistaken for the next lap's.
    __atomic_fetch_add(&log->read_pos, rec->size, __ATOMIC_RELEASE);
}

uint64_t hw_log_dropped(const hw_log_header *log) {
    return __atomic_load_n(&log->dropped_records, __ATOMIC_RELAXED);
}
