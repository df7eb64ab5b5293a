// hangwatch sample log: the crash-safe record stream between the in-process
// engine (writer, possibly inside a signal handler) and the reader (the
// hangwatch process, or a background thread for the in-process library).
//
// The log lives in a MAP_SHARED file mapping, so every record that was
// committed survives the target being SIGKILLed: the reader still has the
// pages. Records are variable-sized and 8-byte aligned in a ring. Writers
// reserve space with one compare-and-swap on write_pos (lock-free, so it is
// async-signal-safe), fill the body, then publish by storing the record type
// last with release ordering. The reader consumes in order, zeroes what it
// consumed, then advances read_pos; writers never overrun read_pos, they drop
// and count instead.
//
// Fields are plain integers accessed with __atomic builtins where shared, so
// that Swift can import every struct here.
#ifndef HANGWATCH_LOG_H
#define HANGWATCH_LOG_H

#include <stdint.h>
#include <stddef.h>

#define HW_LOG_MAGIC 0x314c5748434e4148ULL /* "HANGWHL1" little-endian */
#define HW_LOG_VERSION 1u

/// Register numbering follows libunwind's x86_64 numbering (UNW_X86_64_*).
enum {
    HW_REG_RAX = 0, HW_REG_RDX, HW_REG_RCX, HW_REG_RBX, HW_REG_RSI, HW_REG_RDI,
    HW_REG_RBP, HW_REG_RSP, HW_REG_R8, HW_REG_R9, HW_REG_R10, HW_REG_R11,
    HW_REG_R12, HW_REG_R13, HW_REG_R14, HW_REG_R15, HW_REG_RIP, HW_REG_COUNT
};

/// Largest slice of a thread's stack copied per sample (bytes above the stack pointer).
#define HW_MAX_STACK_COPY (48u * 1024u)

enum hw_record_type {
    HW_REC_EMPTY = 0,      // reserved, not yet committed
    HW_REC_PAD = 1,        // filler up to the end of the ring
    HW_REC_SESSION = 2,    // an engine started in a process image
    HW_REC_MODULE = 3,     // a loaded ELF image
    HW_REC_THREAD = 4,     // a watched thread
    HW_REC_SAMPLE = 5,     // registers + stack slice of a watched thread
    HW_REC_REPEAT = 6,     // same stack as the thread's previous sample (still blocked)
    HW_REC_HANG_START = 7, // a busy period crossed the hang threshold (written while it lasts)
    HW_REC_BUSY_END = 8,   // a busy period of at least the hang threshold ended
    HW_REC_NOTE = 9,       // a fact about the evidence (blocked signal, dropped samples)
    HW_REC_EXIT = 10,      // the process is exiting normally
    HW_REC_FRAMES = 11,    // busy periods of a frame-deadline loop, in batches
};

/// Shared header at offset 0 of the log file; the ring follows at header_size.
typedef struct hw_log_header {
    uint64_t magic;
    uint32_t version;
    uint32_t header_size;
    uint64_t capacity;        // bytes in the ring (multiple of 8)
    uint64_t write_pos;       // atomic: bytes reserved since creation
    uint64_t read_pos;        // atomic: bytes consumed by the reader
    uint64_t dropped_records; // atomic: records refused because the ring was full
    int32_t owner_pid;        // atomic: the process that owns this log (first to claim it)
    uint32_t generation;      // atomic: bumped at every engine start (exec keeps the pid)
    // Configuration written by the creator of the log, read by the engine.
    uint64_t hang_ns;
    uint64_t report_ns;
    uint64_t sample_period_ns;
    uint64_t frame_ns;        // 0: no frame deadline
    uint32_t flags;
    uint32_t reserved;
    char thread_patterns[512]; // '\n'-separated names or globs; empty: the main thread only
} hw_log_header;

/// Every record starts with this. `type` holds the record kind in its low 8
/// bits and the ring lap (position / capacity + 1, 24 bits) above them, so a
/// header left over from an earlier lap never looks current: the reader needs
/// no zeroing behind itself. A writer first stores {kind EMPTY, lap, size} in
/// one 8-byte store, fills the body, then stores the kind (release) to publish.
typedef struct hw_rec_header {
    uint32_t type;
    uint32_t size; // whole record in bytes, multiple of 8
} hw_rec_header;

/// The record kind (enum hw_record_type) of a header.
static inline uint32_t hw_rec_kind(const hw_rec_header *h) { return h->type & 0xffu; }

typedef struct hw_rec_session {
    hw_rec_header h;
    uint32_t generation;
    int32_t pid;
    uint64_t start_ns; // CLOCK_MONOTONIC when the engine started
} hw_rec_session;

enum { HW_MODULE_MAIN = 1, HW_MODULE_VDSO = 2, HW_MODULE_AGENT = 4 };

typedef struct hw_rec_module {
    hw_rec_header h;
    uint32_t generation;
    uint32_t flags;
    uint64_t bias;  // dlpi_addr: runtime address minus ELF virtual address
    uint64_t start; // lowest runtime address of its PT_LOAD segments
    uint64_t end;   // one past the highest
    uint32_t build_id_len;
    uint32_t path_len;
    uint8_t build_id[32];
    char path[];    // path_len bytes, NUL-terminated
} hw_rec_module;

enum { HW_ROLE_MAIN_THREAD = 0, HW_ROLE_MAIN_QUEUE = 1, HW_ROLE_LOOP = 2 };

typedef struct hw_rec_thread {
    hw_rec_header h;
    int32_t tid;      // slot id
    uint32_t role;
    char name[16];
    int32_t os_tid;   // the OS thread now running the slot's work
    uint32_t reserved;
} hw_rec_thread;

/// How a sample was taken.
enum hw_sample_source {
    HW_SRC_SIGNAL = 1,          // SIGPROF handler on the running thread: full registers
    HW_SRC_BLOCKED_WRAPPER = 2, // thread blocked in an interposed wait: context saved at entry
    HW_SRC_BLOCKED_SYSCALL = 3, // thread blocked in another syscall: only sp and pc known
};

/// Interposed calls, as recorded in `call` for HW_SRC_BLOCKED_WRAPPER.
/// For HW_SRC_BLOCKED_SYSCALL `call` is HW_CALL_SYSCALL_BASE + the syscall number.
enum hw_call_id {
    HW_CALL_NONE = 0, HW_CALL_NANOSLEEP, HW_CALL_CLOCK_NANOSLEEP, HW_CALL_USLEEP, HW_CALL_SLEEP,
    HW_CALL_POLL, HW_CALL_PPOLL, HW_CALL_SELECT, HW_CALL_PSELECT, HW_CALL_EPOLL_WAIT,
    HW_CALL_EPOLL_PWAIT, HW_CALL_COUNT
};
#define HW_CALL_SYSCALL_BASE 1000

enum { HW_SAMPLE_TRUNCATED = 1 }; // the stack slice did not reach the top of the stack

typedef struct hw_rec_sample {
    hw_rec_header h;
    int32_t tid;
    uint32_t generation;
    uint64_t busy_seq;  // which busy period of this thread
    uint64_t time_ns;
    uint32_t source;
    int32_t call;
    uint32_t flags;
    uint32_t stack_len;
    uint64_t stack_addr; // runtime address of stack[0]
    uint64_t regs[HW_REG_COUNT];
    uint8_t stack[];     // stack_len bytes, then padding to 8
} hw_rec_sample;

typedef struct hw_rec_repeat {
    hw_rec_header h;
    int32_t tid;
    uint32_t reserved;
    uint64_t busy_seq;
    uint64_t time_ns;
} hw_rec_repeat;

enum { HW_BUSY_LAUNCH = 1 }; // the busy period before the thread's first loop wait

typedef struct hw_rec_busy {
    hw_rec_header h;  // HW_REC_HANG_START or HW_REC_BUSY_END
    int32_t tid;      // the watch slot's id (a thread id, or HW_MAIN_QUEUE_ID)
    uint32_t flags;
    uint64_t busy_seq;
    uint64_t start_ns;
    uint64_t end_ns;  // 0 for HW_REC_HANG_START
    int32_t os_tid;   // the thread that ran the work (differs from tid for the main queue)
    uint32_t reserved;
} hw_rec_busy;

/// Slot id of the main dispatch queue, whose work runs on changing worker threads.
#define HW_MAIN_QUEUE_ID (-2)

enum hw_note_code {
    HW_NOTE_SIGNAL_BLOCKED = 1,    // the thread blocks SIGPROF: no CPU samples for it
    HW_NOTE_SIGNAL_REPLACED = 2,   // the program installed its own SIGPROF handler; we chain to it
    HW_NOTE_SAMPLES_MISSED = 3,    // value: requested samples that never arrived in a busy period
};

typedef struct hw_rec_note {
    hw_rec_header h;
    int32_t tid;
    uint32_t code;
    uint64_t value;
} hw_rec_note;

/// Frame loops: every busy period (frame) is kept, not only hangs. They are
/// batched per thread so a 60 Hz loop writes one record every few seconds.
#define HW_FRAME_BATCH 64
typedef struct hw_rec_frames {
    hw_rec_header h;
    int32_t tid;
    uint32_t count;
    uint64_t start_ns[HW_FRAME_BATCH];
    uint32_t duration_us[HW_FRAME_BATCH];
} hw_rec_frames;

typedef struct hw_rec_exit {
    hw_rec_header h;
    uint64_t time_ns;
} hw_rec_exit;

#endif
