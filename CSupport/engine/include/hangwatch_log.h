// hangwatch sample log: the crash-safe record stream between the in-process
// engine (writer, possibly inside a signal handler) and the reader (the
// hangwatch process, or a background thread for the in-process library).
//
// The log lives in a MAP_SHARED file mapping, so every record that was
// committed survives the target being SIGKILLed: the reader still has the
// pages. Records are variable-sized and 8-byte aligned in a ring. Writers
// reserve space with one compare-and-swap on write_pos (lock-free, so it is
// async-signal-safe), fill the body, then commit. The reader consumes in
// order and advances read_pos; writers never overrun read_pos, they drop and
// count instead. Nobody zeroes the ring: every check below is against the
// record's own position, which no earlier lap can have written.
//
// Record protocol (hw_rec_header, 16 bytes):
//   reserve: CAS write_pos; store the tag word {claim(pos), writer tid}; then
//            the head word {kind EMPTY | lap, size} (release).
//   body:    the writer fills its fields.
//   commit:  CAS the head word from exactly {EMPTY | lap, size} to
//            {kind | lap, size} (release), then turn the claim into the seal
//            (release). claim(pos) and seal(pos) are the low 32 bits of the
//            absolute ring position xored with two different constants.
//
// Why the reader never pairs a committed header with stale body bytes:
//   - The reader accepts a record at position P only when its head word has
//     P's lap, a committed kind and a size that fits, AND its tag is seal(P).
//     Bytes left from an earlier lap (a body, a header) were written at
//     P - k * capacity, so they hold neither P's lap nor seal(P) except by a
//     2^-56 coincidence. This is what stops the old failure: a reader that
//     looks at P after a writer's CAS but before its header store used to
//     take stale body bytes that happened to carry the current lap for a
//     record, and then walked the ring out of step.
//   - The seal is stored after the head word's release CAS, and the body
//     before it, so a reader that sees the seal (acquire) sees the whole body.
//   - A writer that the reader gave up on (below) and that wakes up later can
//     no longer publish: its commit checks the tag still names its thread and
//     CASes the exact EMPTY head it read, so it cannot flip a later lap's
//     record. (It may still scribble its body bytes into recycled space: that
//     needs a thread stalled inside one record for longer than the abandon
//     timeout while the whole ring wraps, and is the one residual risk.)
//   All of this is O(1) per record: two extra 8-byte stores and one CAS, no
//   checksum over the (up to 48 KiB) body.
//
// Records a writer never commits (its thread was killed by another thread's
// exec, it left the signal handler by longjmp, the process died) are skipped
// by the reader: at once when the writer process is gone; after 20 ms when the
// image was replaced (the log's generation moved) or the claiming thread no
// longer exists; after `abandon_ns` (default 1 s) otherwise, once later
// records wait behind it. A position that never got a valid header (a writer
// killed between its CAS and its first store) is skipped after the same
// timeout by scanning forward for the next position that holds a claim or a
// seal of its own. Both are counted (abandoned_records while the process
// lives, skipped_bytes).
//
// Samples (SAMPLE, REPEAT) may not fill the last HW_LOG_HEADROOM bytes of the
// ring: a full ring drops samples first, and control records (hang
// boundaries, threads, modules, notes, frames, session, exit) still fit.
// Drops are counted per kind.
//
// Fields are plain integers accessed with __atomic builtins where shared, so
// that Swift can import every struct here.
#ifndef HANGWATCH_LOG_H
#define HANGWATCH_LOG_H

#include <stdint.h>
#include <stddef.h>

#define HW_LOG_MAGIC 0x314c5748434e4148ULL /* "HANGWHL1" little-endian */
#define HW_LOG_VERSION 3u

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
    HW_REC_CPU = 12,       // a sampled busy thread's CPU clock (hw_rec_cpu)
    HW_REC_LOCK_OWNER = 13,   // the thread holding the futex a busy thread waits on (hw_rec_lock_owner)
    HW_REC_OWNER_SAMPLE = 14, // a sample of that owner: hw_rec_sample layout, tid = the owner's OS tid
    HW_REC_RAN_DURING = 15,   // threads that used CPU while a busy thread waited with no owner known
    HW_REC_WAIT_LINK = 16,    // a further link of a wait-for chain: hw_rec_lock_owner layout, os_tid = that link's waiter
    HW_REC_STOPPED = 17,      // the whole process was stopped (or frozen) for a while (hw_rec_stopped)
    HW_REC_CPU_LIMIT = 18,    // the cgroup's CPU throttling over a sampled busy period (hw_rec_cpu_limit)
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
    // Ring health (written by writers and the reader, read by the report).
    uint64_t dropped_by_kind[16]; // atomic: refused reservations by kind (0: a reservation without a kind)
    uint64_t abandoned_records;   // reader: records skipped because their writer never committed them
    uint64_t skipped_bytes;       // reader: bytes skipped to get past a position that never got a header
    uint64_t abandon_ns;          // reader: how long an uncommitted record may hold it up (0: 1 s)
    // Reader-private bookkeeping of the record it waits on.
    uint64_t reader_wait_pos;     // position + 1 of the record waited on (0: none)
    uint64_t reader_wait_since_ns;
    uint64_t reader_scan_end;     // write_pos at the last forward scan (scan again only when it moved)
    uint32_t reader_wait_generation;
    uint32_t reader_reserved;
    // Reader parking (reader_park.c): the reader sleeps while no thread is
    // being sampled, and the watchdog wakes it when it starts sampling one.
    uint32_t reader_parked;     // futex word: 1 while the reader sleeps (either side clears it)
    uint32_t sampling_sessions; // atomic: threads the watchdog samples now (the reader stays awake while any)
    uint32_t sampling_epoch;    // atomic: bumped at every session's start and end
    uint32_t parking_reserved;
} hw_log_header;

/// Bytes at the end of free space that samples may not take (control records may).
#define HW_LOG_HEADROOM(capacity) ((capacity) / 16u)

/// Every record starts with this (see the protocol above). `type` holds the
/// record kind in its low 8 bits and the ring lap (position / capacity + 1,
/// 24 bits) above them. `tag` is claim(pos) while the record is being
/// written and seal(pos) once committed; `writer` is the OS thread that
/// reserved it. A PAD record may be only 8 bytes long: only `type` and `size`
/// are written for it.
typedef struct hw_rec_header {
    uint32_t type;
    uint32_t size;   // whole record in bytes, multiple of 8
    uint32_t tag;
    int32_t writer;
} hw_rec_header;

/// The record kind (enum hw_record_type) of a header.
static inline uint32_t hw_rec_kind(const hw_rec_header *h) { return h->type & 0xffu; }

/// True for the kinds a full ring may drop first (they cannot use the headroom).
static inline int hw_kind_is_sample(uint32_t kind) { return kind == HW_REC_SAMPLE || kind == HW_REC_REPEAT; }

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

/// HW_ROLE_JOB: a worker of Swift Concurrency's cooperative pool, busy while it runs a job.
enum { HW_ROLE_MAIN_THREAD = 0, HW_ROLE_MAIN_QUEUE = 1, HW_ROLE_LOOP = 2, HW_ROLE_JOB = 3 };

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
    HW_SRC_SIGNAL = 1,          // the running thread, full registers: its SIGPROF handler, or the kernel (HW_SAMPLE_KERNEL)
    HW_SRC_BLOCKED_WRAPPER = 2, // thread blocked in an interposed wait: context saved at entry
    HW_SRC_BLOCKED_SYSCALL = 3, // thread blocked in another syscall: only sp and pc known
};

/// Interposed calls, as recorded in `call` for HW_SRC_BLOCKED_WRAPPER.
/// For HW_SRC_BLOCKED_SYSCALL `call` is HW_CALL_SYSCALL_BASE + the syscall number.
enum hw_call_id {
    HW_CALL_NONE = 0, HW_CALL_NANOSLEEP, HW_CALL_CLOCK_NANOSLEEP, HW_CALL_USLEEP, HW_CALL_SLEEP,
    HW_CALL_POLL, HW_CALL_PPOLL, HW_CALL_SELECT, HW_CALL_PSELECT, HW_CALL_EPOLL_WAIT,
    HW_CALL_EPOLL_PWAIT, HW_CALL_SIGTIMEDWAIT, HW_CALL_SIGWAITINFO, HW_CALL_SIGSUSPEND, HW_CALL_PAUSE,
    HW_CALL_SIGWAIT, HW_CALL_COUNT
};
#define HW_CALL_SYSCALL_BASE 1000
/// Blocked in a syscall /proc would not name (only the thread's state was readable).
#define HW_CALL_BLOCKED_UNKNOWN 999

enum {
    HW_SAMPLE_TRUNCATED = 1, // the stack slice did not reach the top of the stack
    HW_SAMPLE_KERNEL = 4,    // a running sample the kernel took (perf_event), not our signal (2: below)
};

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
    uint32_t extra_ticks; // ticks beyond one it stands for: a long, unchanged wait is polled less often
    uint64_t busy_seq;
    uint64_t time_ns;
} hw_rec_repeat;

enum {
    HW_BUSY_LAUNCH = 1,      // the busy period before the thread's first loop wait
    HW_BUSY_THREAD_EXIT = 2, // ended because its thread exited: the loop was gone, not hung
};

typedef struct hw_rec_busy {
    hw_rec_header h;  // HW_REC_HANG_START or HW_REC_BUSY_END
    int32_t tid;      // the watch slot's id (a thread id, or HW_MAIN_QUEUE_ID)
    uint32_t flags;
    uint64_t busy_seq;
    uint64_t start_ns;
    uint64_t end_ns;  // 0 for HW_REC_HANG_START
    int32_t os_tid;   // the thread that ran the work (differs from tid for the main queue)
    uint32_t pool_queue; // a job's: 1 + the index of its pool queue (HW_NOTE_POOL_QUEUE); else 0
} hw_rec_busy;

/// Slot id of the main dispatch queue, whose work runs on changing worker threads.
#define HW_MAIN_QUEUE_ID (-2)

enum hw_note_code {
    HW_NOTE_SIGNAL_BLOCKED = 1,    // the thread blocks SIGPROF: no CPU samples for it
    HW_NOTE_SIGNAL_REPLACED = 2,   // the program installed its own SIGPROF handler; we chain to it
    HW_NOTE_SAMPLES_MISSED = 3,    // value: requested samples that never arrived in a busy period
    HW_NOTE_STATE_UNREADABLE = 4,  // /proc could not say what the thread was doing: ticks left unsampled, no signal sent
    HW_NOTE_SAMPLER = 5,           // value: the running-thread sampler (low 32 bits, hw_sampler) and, for signals, the errno that refused perf_event_open (high 32)
    HW_NOTE_KERNEL_SAMPLES_LOST = 6, // value: kernel samples lost because the watchdog drained its ring too late
    HW_NOTE_POOL_QUEUE = 7,        // value: a cooperative-pool queue's index (high 32 bits) and how many of its jobs can run at once (low 32)
    HW_NOTE_SIGPROF_IGNORED = 8,   // the program ignores SIGPROF, so the kernel does: no signal samples meanwhile
    HW_NOTE_POOL_UNWATCHED = 9,    // value: why some cooperative-pool jobs are not watched (HW_POOL_WHY_*)
    HW_NOTE_SECCOMP_STOPPED = 10,  // value: ns since the engine started; a seccomp filter of the program binds the watchdog: sampling stopped
    HW_NOTE_POOL_JOB_WAITING = 11, // a job was enqueued on a pool queue the watchdog saw full: its index (bits 61-63), a stamp just after the enqueue in 10 µs, rounded up (bits 16-60), and the span back to a stamp just before it in 10 µs, rounded down (bits 0-15)
    HW_NOTE_INPROCESS = 20,        // the library's wrappers: HW_INPROCESS_* asked (high 32 bits) and in place (low 32)
    HW_NOTE_MAIN_PARKED = 21,      // the main thread parked outside any loop in its launch; value: when it blocked there (ns)
    HW_NOTE_MAIN_UNPARKED = 22,    // it moved on from that park (value: when the watchdog saw it, ns): the launch goes on
};

/// HW_NOTE_POOL_UNWATCHED values.
enum {
    HW_POOL_WHY_SWIFT_JOB_API = 1, // libdispatch has dispatch_async_swift_job: jobs bypass the wrappers
    HW_POOL_WHY_QUEUES = 2,        // more pool queues (priorities) than the agent tells apart
    HW_POOL_WHY_SLOTS = 3,         // the slot table is full: a pool worker's jobs are not watched
    HW_POOL_WHY_NOT_REDIRECTED = 4, // in-process: no image imports the dispatch calls (a runtime linked in statically)
};

/// How running threads are sampled (HW_NOTE_SAMPLER, low 32 bits of the value).
enum hw_sampler {
    HW_SAMPLER_PERF = 1,   // the kernel samples the thread (perf_event task clock): no signal reaches the program
    HW_SAMPLER_SIGNAL = 2, // SIGPROF to a thread /proc shows running
};
/// HW_NOTE_SAMPLER, high 32 bits: why. For HW_SAMPLER_SIGNAL an errno from
/// perf_event_open, or one of these; for HW_SAMPLER_PERF 0, or USER_ONLY.
enum {
    HW_SAMPLER_WHY_SECCOMP = 100000,  // a seccomp filter is on: perf_event_open not tried (a filter may kill for it)
    HW_SAMPLER_WHY_RING = 100001,     // the sampler's ring could not be mapped (locked-memory allowance spent)
    HW_SAMPLER_WHY_USER_ONLY = 100002 // perf_event_paranoid allows user time only: time inside syscalls is not sampled
};

/// hw_log_header.flags, set by the log's creator.
enum {
    HW_LOG_SIGNAL_SAMPLES = 1, // sample running threads with SIGPROF even where perf_event works
    HW_LOG_VDSO_CLOCK = 2,     // stamp loop waits with clock_gettime even where the TSC serves
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

// ---- thread states: CPU time and lock owners (thread_cpu.c, lock_owner.c) ----

/// A busy thread's CPU clock, read by the watchdog when a sampling session
/// starts, every HW_CPU_PERIOD_NS while it lasts and when it ends. The reader
/// takes the first and last reading of each (busy period, OS thread): the
/// share of wall time the thread spent on a CPU is what tells a blocked hang
/// from a CPU hang.
typedef struct hw_rec_cpu {
    hw_rec_header h;
    int32_t tid;       // slot id
    int32_t os_tid;    // the thread whose clock this is
    uint64_t busy_seq;
    uint64_t time_ns;  // CLOCK_MONOTONIC of the reading
    uint64_t cpu_ns;   // its CPU clock (CPUCLOCK_SCHED: user + system)
    uint64_t runq_ns;  // time spent runnable but waiting for a CPU (schedstat); UINT64_MAX: unknown
} hw_rec_cpu;

/// How a lock's owner was read from the futex a thread waits on.
enum hw_owner_how {
    HW_OWNER_NONE = 0,     // no owner knowable (condition variable, semaphore, group...)
    HW_OWNER_PI = 1,       // PI futex (FUTEX_LOCK_PI: Swift's Mutex, PI mutexes): the word is the owner's tid
    HW_OWNER_MUTEX = 2,    // glibc pthread_mutex_t (NSLock, pthread_mutex_lock): __data.__owner at +8
    HW_OWNER_WORD_TID = 3, // the word is a live thread's tid (pthread_join waits on the joined thread's tid)
};

/// The watchdog found a busy thread blocked in futex and read its word:
/// written when the waited-on address or its owner changes.
typedef struct hw_rec_lock_owner {
    hw_rec_header h;
    int32_t tid;        // slot id of the waiting thread
    int32_t os_tid;     // the waiting thread
    uint64_t busy_seq;
    uint64_t time_ns;
    uint64_t futex_addr;
    uint32_t futex_op;
    uint32_t how;       // enum hw_owner_how
    int32_t owner_tid;  // 0 when HW_OWNER_NONE
    uint32_t word;      // the futex word as read
    char owner_name[16];
} hw_rec_lock_owner;

/// HW_REC_OWNER_SAMPLE flag: the owner's stack had not moved since its previous sample.
enum { HW_SAMPLE_SAME_AS_PREVIOUS = 2 };
/// HW_REC_OWNER_SAMPLE flags bits 8-15: ticks beyond one the sample stands
/// for (the watchdog polls a long, unchanged wait less often; see watchdog.c).
enum { HW_SAMPLE_EXTRA_SHIFT = 8, HW_SAMPLE_EXTRA_MAX = 255 };

/// Threads that used CPU while a busy thread waited in futex with no owner
/// known, as CPU time since the wait was first seen (the most first).
#define HW_RAN_MAX 16
typedef struct hw_ran_thread {
    int32_t tid;
    uint32_t reserved;
    uint64_t cpu_ns;
    char name[16];
} hw_ran_thread;

typedef struct hw_rec_ran_during {
    hw_rec_header h;
    int32_t tid;        // slot id of the waiting thread
    uint32_t count;
    uint64_t busy_seq;
    uint64_t since_ns;  // when the baseline was taken
    uint64_t time_ns;
    hw_ran_thread threads[HW_RAN_MAX];
} hw_rec_ran_during;

// ---- causes outside the thread's own code (stop_clock.c, cpu_limit.c) --------

/// The watchdog woke `to_ns - from_ns` late and was neither running nor
/// runnable for `stopped_ns` of that: every thread of the process was stopped
/// (SIGSTOP, Ctrl-Z, a tracer's group stop) or frozen (the cgroup freezer).
typedef struct hw_rec_stopped {
    hw_rec_header h;
    uint32_t reserved;
    uint32_t reserved2;
    uint64_t from_ns;     // the tick it should have woken at
    uint64_t to_ns;       // when it woke
    uint64_t stopped_ns;  // at most to_ns - from_ns
} hw_rec_stopped;

/// cgroup versions a CPU limit was read from (hw_rec_cpu_limit.version).
enum { HW_CGROUP_NONE = 0, HW_CGROUP_V1 = 1, HW_CGROUP_V2 = 2 };
/// hw_rec_cpu_limit.quota_us when the group has no quota.
#define HW_CPU_QUOTA_NONE UINT64_MAX

/// The process's cgroup CPU accounting over one sampled busy period, read by
/// the watchdog when the session started and again when the hang was
/// announced and when it ended (the reader keeps the latest), with the
/// machine's load at that last reading.
typedef struct hw_rec_cpu_limit {
    hw_rec_header h;
    int32_t tid;             // slot id
    uint32_t version;        // HW_CGROUP_*; NONE: cpu.stat could not be read (`err`)
    uint64_t busy_seq;
    uint64_t first_ns, last_ns;          // when the two readings were taken
    uint64_t first_throttled_ns, last_throttled_ns; // throttled_time (v1, ns) or throttled_usec * 1000 (v2)
    uint64_t first_nr_throttled, last_nr_throttled;
    uint64_t quota_us, period_us;        // cfs_quota_us / cpu.max; HW_CPU_QUOTA_NONE: no limit
    uint32_t err;            // errno of the failed open or read when version is NONE
    uint32_t load_centi;     // /proc/loadavg's 1-minute figure x 100 (UINT32_MAX: unread)
    uint32_t runnable;       // /proc/loadavg's running tasks at the last reading (UINT32_MAX: unread)
    uint32_t cpus;           // online CPUs (sysconf), 0 unknown
} hw_rec_cpu_limit;

#endif
