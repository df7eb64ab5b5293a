// State and functions shared between the engine's own files. Included only
// inside CSupport/engine: the agent sees agent_hooks.h, attach and the CLI
// their own headers. Not part of the public API.
#ifndef HANGWATCH_ENGINE_INTERNAL_H
#define HANGWATCH_ENGINE_INTERNAL_H

#include "hangwatch_engine.h"
#include "hangwatch_os.h"
#include "agent_hooks.h"
#include <pthread.h>
#include <signal.h>

#define HW_MAX_SLOTS 256
#define HW_SAMPLE_COOKIE 0x48574348   /* si_value marking our own SIGPROF */
#define HW_IDENTIFY_COOKIE 0x48574349 /* ours too: "are you running the main queue?" */

enum { HW_STATE_BUSY = 0, HW_STATE_WAITING = 1 };

/// What /proc says a thread is doing right now (proc_probe.c).
typedef enum hw_thread_activity {
    HW_ACTIVITY_UNKNOWN = 0, // nothing readable (privilege drop): never signal, never guess
    HW_ACTIVITY_RUNNING,     // on a CPU or runnable in user space: a signal cannot cut a wait short
    HW_ACTIVITY_BLOCKED,     // inside a syscall; `nr`, `sp`, `pc` known when `exact`
    HW_ACTIVITY_GONE,        // the thread has exited
} hw_thread_activity;

typedef struct hw_thread_probe {
    hw_thread_activity activity;
    bool exact;        // nr/sp/pc come from /proc/.../syscall (else from stat: state only)
    long nr;
    uint64_t sp, pc;
    uint64_t args[6];  // the syscall's arguments when `exact` (futex: its address and op)
} hw_thread_probe;

/// A perf_event sampler on one thread and the ring the kernel writes its samples to (sampler_perf.c).
typedef struct hw_perf_ring {
    int fd;               // the event sampling now
    int old_fd;           // the event the ring was mapped through, after a stack-size switch; else -1
    void *map;            // NULL: not sampling
    size_t len;
    uint32_t lost;        // samples the kernel dropped because the ring was full
    uint32_t stack_bytes; // stack bytes the kernel copies per sample
    bool user_only;       // not allowed to count kernel time (perf_event_paranoid 2)
    uint32_t resizes;     // stack-size switches so far (PERF_MAX_RESIZES: no more)
    uint32_t samples;     // samples drained this session
    uint64_t need;        // the most stack any sample of this session had in use (0: none seen)
} hw_perf_ring;

/// Watchdog-private bookkeeping for one slot's current sampling session.
/// Descriptors live in the watchdog's private descriptor table (see proc_probe.c).
typedef struct hw_session {
    bool active;
    bool hang_announced;
    uint32_t life;             // the slot's life when the session started
    uint64_t busy_seq;
    int syscall_fd;            // /proc/self/task/TID/syscall
    int stat_fd;               // /proc/self/task/TID/stat (readable after a privilege drop)
    uint64_t last_blocked_gen; // dedups samples of one long interposed wait
    uint64_t last_sys_sp, last_sys_pc; // dedups samples of one long other syscall
    long last_sys_nr;
    bool last_was_blocked;
    bool unsampled_noted;      // a note already says some ticks could not be sampled
    uint32_t hits_at_start;
    uint32_t requested;
    uint32_t unsampled;        // ticks with the thread's state unreadable
    uint32_t steady;           // consecutive polls that found the same blocked stack
    uint32_t running;          // consecutive polls that found it running, the kernel sampling it
    uint64_t mark_ns;          // a poll a stride may follow (watchdog.c, edges); 0: none
    uint64_t mark_active_ns;   // the thread's CPU plus run-queue time at that poll
    bool mark_blocked;         // that poll found it blocked and sampled it (else running)
    uint32_t repeat_extra;     // ticks beyond one since the previous tick (set by the watchdog)
    pid_t os_tid;              // thread the session samples
    bool signal_blocked;       // the thread blocks SIGPROF: no signals this session
    bool counted;              // counted in the log's sampling_sessions (the reader stays awake)
    hw_perf_ring perf;         // the kernel's sampler for this session; not mapped: signals
    uint64_t perf_until_ns;    // kernel samples after this are not the session's (0: no limit yet)
    uint64_t spell_since_ns;   // the tick that first found the thread blocked where it is now (0: not blocked)
    bool limit_read;           // the cgroup CPU figures below were read at the session's start
    uint64_t limit_ns, limit_throttled_ns, limit_nr_throttled;
} hw_session;

/// A main thread found parked outside any loop during its launch (watchdog.c):
/// the busy period it parked in, and where /proc showed it blocked.
typedef struct hw_park {
    uint64_t busy_seq;         // the launch's busy_seq while parked; 0: not parked
    uint64_t check_ns;         // when the watchdog next looks whether it moved
    long nr;
    uint64_t sp, pc;
    uint64_t parked_ns;        // when the watchdog parked it (its samples stopped)
} hw_park;

struct hw_slot {
    // Odd while the slot belongs to a live thread (or the main queue); bumped
    // when a thread claims it and when that thread exits. The watchdog only
    // acts on a slot whose life it read before and after.
    uint32_t life;
    // Written by the watched thread (heartbeat), read by the watchdog.
    uint32_t state;            // HW_STATE_*
    uint64_t busy_seq;         // bumped at every busy-period start
    uint64_t busy_since_ns;
    uint64_t idle_since_ns;    // when the latest busy period ended (its loop wait began)
    bool launched;             // first loop wait seen
    // Interposed blocking call in progress: its registers live here, in the
    // slot, never on the thread's stack (a cancelled or longjmp'd wait would
    // leave a pointer into a dead frame). Seqlock: odd generation while written.
    uint32_t blocked_call;     // HW_CALL_*; 0 when not blocked
    uint64_t blocked_gen;
    uint64_t blocked_regs[HW_REG_COUNT];
    // Written by the signal handler on the watched thread.
    uint32_t signal_hits;
    // Identity. `tid` is the slot id written in records; `os_tid` the thread
    // running its work now (they differ only for the main queue).
    pid_t tid;
    pid_t os_tid;
    uint32_t pending;          // main queue: blocks enqueued and not yet started
    uint32_t role;
    uint32_t job_queue;        // HW_ROLE_JOB: 1 + the pool queue of the job it runs or ran last
    uint64_t stack_lo, stack_hi;
    // Loop-wait call sites learned for fd-set waits (poll/ppoll/select).
    uintptr_t loop_sites[4];
    uint32_t loop_site_count;
    // Frame loops: frames not yet written (owned by the watched thread).
    // `frames_elsewhere`: a FrameMonitor counts this loop's frames, so the
    // engine records none (with a frame deadline they would count twice).
    bool frames_elsewhere;
    // The program marks this loop's waits itself (LoopHeartbeat, FrameMonitor):
    // the library's wrapped waits on its thread are never its heartbeat.
    bool program_marks;
    uint32_t frame_count;
    uint64_t frame_start[HW_FRAME_BATCH];
    uint32_t frame_us[HW_FRAME_BATCH];
    // Watchdog-private: never touched by registration, so a session on a
    // slot that was released and claimed again is still closed properly.
    hw_session session;
    uint64_t announced_seq;
    hw_park park;              // watchdog-private, like the session
};

typedef struct hw_engine {
    hw_log_header *log;
    hw_config config;
    uint32_t generation;
    pid_t pid;
    bool running;
    bool disabled;             // set in a forked child
    bool interposed;           // the preload agent wraps the program's waits (not the library)
    pthread_t watchdog;
    bool watchdog_started;
    uint32_t watchdog_stop;    // atomic: asks the watchdog thread to return
    hw_slot slots[HW_MAX_SLOTS];
    uint32_t slot_count;       // atomic: high-water mark of published slots
    uint32_t registrations;    // atomic: seeds each new thread's busy sequence
    pid_t watchdog_tid;
    uint32_t watchdog_parked;  // futex word: 1 while the watchdog sleeps until a busy period
    uint32_t exec_pending;     // atomic: a thread is about to exec: send no signal
    uint32_t signals_in_flight;// atomic: the watchdog is between its exec check and its send
    sigset_t program_sigmask;  // the starting thread's mask, for threads libdispatch spawns from ours
    bool probe_main_queue;     // library mode: no wrappers, so the main queue is probed
    char patterns[512];
    uint32_t perf_state;       // atomic: hw_perf_state
    uint64_t start_ns;         // hw_now_ns() when the engine started (its session record's)
} hw_engine;

/// Whether perf_event sampling works here (sampler_perf.c).
enum hw_perf_state { HW_PERF_UNTRIED = 0, HW_PERF_WORKS, HW_PERF_REFUSED };

extern hw_engine hw_g;

/// One subsystem's part in the engine's lifecycle (lifecycle.c), defined
/// beside the code it starts; subsystems.c lists them in the order they run.
/// Any hook may be NULL.
typedef struct hw_subsystem {
    const char *name;
    /// Engine start, before the engine runs (no thread is watched yet):
    /// nonzero fails the start.
    int (*open)(void);
    /// Engine start, once it runs: nonzero fails the start and stops it.
    int (*start)(void);
    /// Engine stop, in the process that started it, before the exit record.
    void (*stop)(void);
    /// SIGNAL-SAFE. The child side of fork: drop what the child inherited
    /// and must not use (it may run between fork and exec).
    void (*after_fork)(void);
} hw_subsystem;

/// The subsystems in hook order (subsystems.c).
extern const hw_subsystem *const hw_subsystems[];
extern const size_t hw_subsystem_count;

// owner.c
/// SIGNAL-SAFE. True in the process that started the engine; false in any
/// child made by fork, _Fork or a raw clone (a MADV_WIPEONFORK page), so a
/// child never writes into the parent's log nor acts on its slots.
bool hw_owned(void);
void hw_owner_claim(void);

// slots.c
hw_slot *hw_slot_register(pid_t tid, uint32_t role);
/// The same for a thread that is idle from the start (no launch period):
/// published waiting, so the watchdog never sees it busy.
hw_slot *hw_slot_register_idle(pid_t tid, uint32_t role);
// job_pool.c
/// The calling thread exits: its pool-worker slot (if any) is given back.
void hw_pool_worker_gone(void);
/// Watchdog, each tick: marks the pool queues whose every thread has been in
/// one job for arm_ns or more, so that the first job enqueued on one while it
/// stays so is noted as waiting (HW_NOTE_POOL_JOB_WAITING).
void hw_pool_watch_tick(uint64_t now);
/// Watchdog, at its exit: no queue stays marked full.
void hw_pool_watch_stop(void);
/// The calling thread ends (or a dead thread was found): close its busy
/// period without calling it a hang and free the slot for another thread.
void hw_slot_release(hw_slot *slot, bool by_watchdog);
/// SIGNAL-SAFE. Whether the slot is claimed by a live thread (odd life).
static inline bool hw_slot_alive(uint32_t life) { return (life & 1u) != 0; }
/// Create the thread-exit hook (a pthread key) once, from engine start:
/// `on_exit` runs as a thread bound to a slot exits (thread_exit.c).
int hw_slots_on_thread_exit(void (*on_exit)(void *slot));
/// The calling thread is watched through `slot`: arm its exit hook.
void hw_slot_bind_thread(hw_slot *slot);

// slot_records.c
void hw_log_thread(const hw_slot *slot);
/// The same with the thread's name given (NULL: the calling thread's own).
void hw_log_thread_named(const hw_slot *slot, const char *name);
/// Write the frames a slot has buffered (its own thread, or at exit).
void hw_flush_frames(hw_slot *slot);
void hw_emit_busy(hw_slot *slot, uint32_t type, uint64_t start, uint64_t end, uint32_t flags);

// heartbeat.c
/// This thread is never watched (the watchdog, threads past their exit hook).
void hw_tls_never_watch(void);
typedef struct hw_tls_saved { hw_slot *slot; uint8_t state; } hw_tls_saved;
hw_tls_saved hw_tls_enter(hw_slot *slot);
/// SIGNAL-SAFE. The calling thread's slot if it is watched now, without deciding anything.
hw_slot *hw_tls_slot_fast(void);
void hw_tls_leave(hw_tls_saved saved);
/// SIGNAL-SAFE. Count of our sampling signals handled on this slot's thread.
/// The watchdog compares it over a session to count the requests answered.
uint32_t hw_signal_hits(const hw_slot *slot);

// modules.c
void hw_modules_record(hw_log_header *log, uint32_t generation);

// sigprof_disposition.c: the program's SIGPROF disposition beside ours.
typedef void (*hw_sigprof_handler)(int, siginfo_t *, void *);
/// Install `handler` as the SIGPROF handler, keeping the program's
/// disposition as it was (engine start).
int hw_sigprof_install(hw_sigprof_handler handler);
/// SIGNAL-SAFE. Deliver a SIGPROF that is not ours (`siginfo`, `ucontext`)
/// as the kernel would have without us.
void hw_sigprof_chain(int sig, void *siginfo, void *ucontext);
/// SIGNAL-SAFE. A signal the program would never have seen ran a handler here.
static inline void hw_signal_count_unseen(void) {
    __atomic_fetch_add(&hw_tls_signal_counts.n.unseen, 1, __ATOMIC_RELAXED);
}
/// SIGNAL-SAFE. The program ignores SIGPROF and so does the kernel: no signal
/// of ours can sample (a note says so once).
bool hw_signal_ignored(void);

// signal_request.c
/// Ask thread `tid` for a CPU sample. Returns false when the signal could not be sent.
bool hw_signal_request(pid_t tid);
/// Ask thread `tid` whether it is running main-queue work (probe mode).
bool hw_signal_request_identify(pid_t tid);

// sampler_stack.c
/// What a blocked thread's poll wrote: nothing (the log was full), a new
/// sample, or a repeat of the latest one.
enum hw_blocked_write { HW_BLOCKED_NONE, HW_BLOCKED_NEW, HW_BLOCKED_REPEAT };
/// Take a sample of a thread blocked in an interposed wait from the registers
/// its wrapper saved in `regs` (watchdog thread; `gen` is the wait's generation).
enum hw_blocked_write hw_sample_blocked_wrapper(hw_slot *slot, const uint64_t regs[HW_REG_COUNT], uint32_t call,
                                                uint64_t gen);
/// Take a sample of a thread blocked in another syscall (sp/pc only).
enum hw_blocked_write hw_sample_blocked_syscall(hw_slot *slot, long nr, uint64_t sp, uint64_t pc);
/// SIGNAL-SAFE. Write one sample record for `slot` from registers and the
/// calling thread's own stack (the SIGPROF handler samples itself).
void hw_write_sample(hw_slot *slot, uint32_t source, int call, const uint64_t regs[HW_REG_COUNT],
                     uint64_t time_ns);
void hw_write_repeat(hw_slot *slot, uint64_t time_ns, uint32_t extra_ticks);
/// The same for busy period `busy_seq` of the slot's thread, which may have ended.
void hw_write_repeat_of(hw_slot *slot, uint64_t busy_seq, uint64_t time_ns, uint32_t extra_ticks);
/// The bytes of a stack slice at `sp` to keep when `avail` bytes were copied
/// (`avail_at_cap`: the copy stopped at its limit, not at unmapped memory):
/// up to the top of the slot's stack; sets HW_SAMPLE_TRUNCATED when cut short.
uint64_t hw_stack_slice_len(const hw_slot *slot, uint64_t sp, uint64_t avail, bool avail_at_cap, uint32_t *flags);
/// SIGNAL-SAFE. Bytes from `sp` to the top of the slot's stack (0: `sp` is not on it).
uint64_t hw_stack_in_use(const hw_slot *slot, uint64_t sp);
/// SIGNAL-SAFE. Reserve a sample record with room for `stack_len` stack bytes,
/// header and registers filled; the caller copies the stack and commits.
hw_rec_sample *hw_sample_reserve(int32_t tid, uint64_t busy_seq, uint32_t source, int call,
                                 const uint64_t regs[HW_REG_COUNT], uint64_t time_ns, uint64_t stack_len);
void hw_sample_commit(hw_rec_sample *rec, uint32_t flags, uint64_t stack_len);

// sampler_perf.c: running threads sampled by the kernel (watchdog only).
/// Start the kernel's sampler on thread `tid`. False: use signals (the log says why, once).
bool hw_perf_open(hw_perf_ring *r, pid_t tid);
/// The stack bytes of one kernel sample, still in the ring.
typedef struct hw_perf_stack {
    const uint8_t *data;
    uint64_t size, pos;
    uint64_t len;   // bytes the kernel copied from the stack pointer up
    uint64_t asked; // bytes it was asked for: len == asked may mean cut short
} hw_perf_stack;
typedef void (*hw_perf_sample_fn)(void *ctx, uint64_t time_ns, const uint64_t regs[HW_REG_COUNT],
                                  const hw_perf_stack *stack);
/// Hand each sample taken since the last drain to `fn` (NULL: discard them).
/// Returns how many there were.
uint32_t hw_perf_drain(hw_perf_ring *r, hw_perf_sample_fn fn, void *ctx);
/// How many samples a drain would hand over now (nothing is consumed).
uint32_t hw_perf_pending(hw_perf_ring *r);
/// Copy up to `len` bytes of a sample's stack (from its stack pointer up) to `dst`.
void hw_perf_stack_copy(const hw_perf_stack *stack, void *dst, uint64_t len);
void hw_perf_close(hw_perf_ring *r);
/// Move the slot's kernel samples since the last drain into the log; returns how many.
uint32_t hw_perf_session_drain(hw_slot *slot);
/// In a forked child: drop an inherited descriptor (library mode shares the table).
void hw_perf_after_fork(hw_perf_ring *r);
/// Drain, then stop the kernel's sampler of the slot's session (no-op without one).
void hw_perf_session_close(hw_slot *slot);
void hw_write_note(pid_t tid, uint32_t code, uint64_t value);

// watchdog_wake.c
/// A busy period started while the watchdog may be parked: wake it.
void hw_watchdog_wake(void);

// seccomp_watch.c: the watchdog's look at its own seccomp filters.
/// Watchdog thread, at its start: open its status file and learn its filters.
void hw_seccomp_watch_start(void);
/// Watchdog thread, before each batch of calls a filter may kill for (/proc
/// opens, process_vm_readv, perf_event_open): false once a filter the
/// program installed binds the watchdog (noted once), and for good.
bool hw_seccomp_risky_calls_allowed(void);
/// Whether the watchdog has stopped making those calls (a flag, no syscall).
bool hw_seccomp_stopped(void);
/// Watchdog thread, as it exits: close the status file.
void hw_seccomp_watch_stop(void);

// proc_probe.c: the only place that reads /proc, always from the watchdog.
/// Give the calling (watchdog) thread a descriptor table of its own, empty,
/// so its /proc descriptors never take a number the program would get.
void hw_proc_private_fds(void);
/// Whether the watchdog's descriptors live in a table of their own
/// (hw_proc_private_fds succeeded): then no other thread, and no fork
/// child, has them, and their numbers mean the program's descriptors there.
bool hw_proc_fds_private(void);
/// Open the per-session descriptors of `tid` (syscall and stat files).
void hw_proc_session_open(hw_session *ses, pid_t tid);
void hw_proc_session_close(hw_session *ses);
/// What the thread of `ses` is doing now.
hw_thread_probe hw_proc_probe(hw_session *ses);
/// What thread `tid` is doing now, without session descriptors.
hw_thread_probe hw_proc_probe_tid(pid_t tid);
/// Whether thread `tid` blocks SIGPROF.
bool hw_proc_blocks_sigprof(pid_t tid);
/// The number after `field` (say "Seccomp:") in /proc/self/task/TID/status, in `base`.
bool hw_proc_status_field(pid_t tid, const char *field, int base, unsigned long long *value);
/// The same from a status file already open as `fd` (read afresh from its start).
bool hw_proc_status_field_fd(int fd, const char *field, int base, unsigned long long *value);
/// Open /proc/self/task/TID/NAME read-only, never at a number the program would get.
int hw_proc_open_task_file(pid_t tid, const char *name);
/// A descriptor the watchdog just opened, moved away from the numbers the
/// program is given when the table is shared (library mode). Returns the one to use.
int hw_proc_keep_away_fd(int fd);
/// The bounds [*lo, *hi) of the mapping of this process that holds `addr`
/// (/proc/self/maps), given a thread's stack pointer; false when there is
/// none, or it cannot be a stack's (not read-write; a file's, the heap). An
/// anonymous mapping may be wider than the stack: for fault-safe copies only.
bool hw_proc_stack_mapping_of(uint64_t addr, uint64_t *lo, uint64_t *hi);

// ---- the heartbeat's clock (tsc_clock.c); the watchdog calls these ----------
/// Decide whether the TSC can serve (clocksource, CPU flags, config) and take
/// the first calibration pair.
void hw_tsc_clock_start(void);
/// Refresh the published pair and rate (at most every few ms); `now` is hw_now_ns().
void hw_tsc_clock_tick(uint64_t now);
/// Stop serving TSC stamps (the watchdog is going away, or a fork child).
void hw_tsc_clock_stop(void);
/// What a TSC stamp needs, published by the watchdog (the only writer, which
/// takes no signals) under a sequence count; readers never wait for it.
typedef struct hw_tsc_published {
    uint32_t seq;           // odd while the fields change
    uint64_t base_tsc;
    uint64_t base_ns;
    uint64_t mult;          // ns per tick, 32.32 fixed point; 0: not calibrated
    uint64_t max_age_ticks; // HW_TSC_MAX_AGE_NS in ticks
    uint64_t max_back_ticks; // HW_TSC_MAX_BACK_NS in ticks
} hw_tsc_published;
extern hw_tsc_published hw_tsc_pub __attribute__((visibility("hidden")));

/// SIGNAL-SAFE: loads only. A consistent copy of the published pair (the
/// seqlock's read side: the fields between two equal, even reads of seq);
/// false while the watchdog changes it, or when no rate is published.
static inline bool hw_tsc_snapshot(hw_tsc_published *out) {
    uint32_t seq = __atomic_load_n(&hw_tsc_pub.seq, __ATOMIC_ACQUIRE);
    out->mult = __atomic_load_n(&hw_tsc_pub.mult, __ATOMIC_RELAXED);
    out->base_tsc = __atomic_load_n(&hw_tsc_pub.base_tsc, __ATOMIC_RELAXED);
    out->base_ns = __atomic_load_n(&hw_tsc_pub.base_ns, __ATOMIC_RELAXED);
    out->max_age_ticks = __atomic_load_n(&hw_tsc_pub.max_age_ticks, __ATOMIC_RELAXED);
    out->max_back_ticks = __atomic_load_n(&hw_tsc_pub.max_back_ticks, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return !(seq & 1) && out->mult != 0 && __atomic_load_n(&hw_tsc_pub.seq, __ATOMIC_RELAXED) == seq;
}

/// The time of `tsc`, at or after the pair of `pub`.
static inline uint64_t hw_tsc_ns_after(const hw_tsc_published *pub, uint64_t tsc) {
    return pub->base_ns + (uint64_t)(((unsigned __int128)(tsc - pub->base_tsc) * pub->mult) >> 32);
}

/// SIGNAL-SAFE: loads and rdtsc, else hw_fast_now_ns. hw_fast_now_ns for the
/// pool's job start, inlined: only its common case (a published pair, the
/// TSC at or past it and young enough) is here, with no call and no flag to
/// write; everything else is hw_fast_now_ns's. The TSC is read first, so
/// that its latency overlaps the loads (a pair published meanwhile is newer
/// than the read: the slow path takes it).
static inline uint64_t hw_fast_now_inline(void) {
    uint64_t tsc = __builtin_ia32_rdtsc();
    hw_tsc_published pub;
    bool usable = hw_tsc_snapshot(&pub) && tsc >= pub.base_tsc && tsc - pub.base_tsc <= pub.max_age_ticks;
    if (__builtin_expect(!usable, 0)) return hw_fast_now_ns();
    return hw_tsc_ns_after(&pub, tsc);
}

/// hw_heartbeat_wait_end_at, inlined where it runs for every pool job.
static inline void hw_heartbeat_wait_end_inline(hw_slot *slot, uint64_t now) {
    // Order matters for the watchdog: a new sequence and start time, then BUSY.
    // Release stores order them (plain movs on x86: no fence here). The flag
    // is read with none either: a wake missed in a race with a park is at
    // most HW_PARK_TIMEOUT_NS late (watchdog.c).
    __atomic_store_n(&slot->busy_since_ns, now, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->busy_seq, slot->busy_seq + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&slot->state, HW_STATE_BUSY, __ATOMIC_RELEASE);
    if (__builtin_expect(__atomic_load_n(&hw_g.watchdog_parked, __ATOMIC_RELAXED), 0) && hw_owned()) hw_watchdog_wake();
}

/// How far a heartbeat stamp may be from CLOCK_MONOTONIC, either way: a
/// published TSC pair and rate that predicts the next pair worse than this
/// is withdrawn (tsc_clock.c).
#define HW_STAMP_MAX_ERROR_NS (20 * 1000ull)

// thread_cpu.c: the busy thread's CPU clock while a session samples it (watchdog only).
/// Thread `tid`'s CPU time (user + system) now; false when it is gone.
bool hw_thread_cpu_ns(pid_t tid, uint64_t *cpu_ns);
void hw_cpu_session_start(hw_slot *slot);
void hw_cpu_tick(hw_slot *slot, uint64_t now);
/// The session thread's CPU time plus its run-queue wait so far: all the time
/// it spent not blocked. False when unreadable (the thread is gone).
bool hw_cpu_active_ns(const hw_slot *slot, uint64_t *active_ns);
void hw_cpu_session_end(hw_slot *slot);

// lock_owner.c: who holds the futex a busy thread waits on (watchdog only),
// and the owner's samples (the SIGPROF handler on the owner thread).
#define HW_OWNER_COOKIE 0x4857434f   /* ours too: sample this thread as a lock's owner */
/// Per tick of a session: read the waited-on futex, sample its owner, or
/// measure which threads ran while no owner is known.
void hw_lock_tick(hw_slot *slot, const hw_thread_probe *probe, uint64_t now);
void hw_lock_session_end(hw_slot *slot);
/// Per tick of a session whose thread is not blocked in a futex: a lock
/// owner's kernel samples since the last tick are not a wait's (dropped).
void hw_lock_not_waiting(hw_slot *slot);
/// In a forked child: drop the owners' kernel samplers it inherited.
void hw_lock_after_fork(void);
/// SIGNAL-SAFE. The owner-sampling signal arrived on this thread: write its
/// sample (`regs` from the interrupted context) if the request is still current.
void hw_owner_signal_sample(const void *siginfo, const uint64_t regs[HW_REG_COUNT]);

// got_redirect.c: the in-process library's wrappers put in front of imports.
/// One import to redirect: calls to `name` go to `replacement` (NULL: skipped).
typedef struct hw_got_target { const char *name; void *replacement; } hw_got_target;
/// Rewrites the global offset table slots of every loaded image `wants` (by
/// its path; "" is the executable) that import one of `targets`. Returns how
/// many slots now point to a replacement. Not signal-safe: it takes the
/// loader's lock (dl_iterate_phdr); call it from the thread starting the engine.
uint32_t hw_got_redirect(const hw_got_target *targets, size_t count, bool (*wants)(const char *path));

// inprocess_waits.c, inprocess_pool.c: the library's wrappers (inprocess.c installs them).
/// Images whose imports the library never redirects (libc, the loader, the vDSO, the agent).
bool hw_inprocess_skips_image(const char *path);
/// Redirect the event-loop waits; returns the slots rewritten.
uint32_t hw_inprocess_waits_install(void);
/// Redirect the pool's dispatch calls; returns the slots rewritten.
uint32_t hw_inprocess_pool_install(void);
/// Redirect the exec family (sampling quiesced before the new image, inprocess_exec.c).
uint32_t hw_inprocess_exec_install(void);
// stop_clock.c: time the whole process was stopped or frozen, from the
// watchdog's own late wake-ups (watchdog only).
/// Before a deadline sleep: takes the watchdog's run-queue baseline when it has none.
void hw_stop_before_sleep(void);
/// After a sleep that was due at `deadline_ns`: a wake-up late by more than
/// the run-queue wait explains writes an HW_REC_STOPPED record.
void hw_stop_after_sleep(uint64_t deadline_ns, uint64_t now);
/// After a park (no deadline): the next sleep starts a new baseline.
void hw_stop_forget(void);
void hw_stop_close(void);

// cpu_limit.c: the cgroup's CPU throttling over a busy period (watchdog only).
/// Finds the process's cgroup CPU files; in a private descriptor table they stay open.
void hw_cpu_limit_open(void);
void hw_cpu_limit_close(void);
/// First reading of a sampling session.
void hw_cpu_limit_session_start(hw_slot *slot);
/// A later reading, written as an HW_REC_CPU_LIMIT record with the first (a hang only).
void hw_cpu_limit_write(hw_slot *slot);

// exec_guard.c
/// Send a sampling (or identify) signal unless an exec is under way.
bool hw_signal_send(pid_t tid, bool identify);

// main_queue.c (probe mode: the in-process library under dispatchMain)
/// The watchdog's per-tick duty for the main-queue probe; returns when it is
/// next due (UINT64_MAX: nothing of its own).
uint64_t hw_main_queue_probe_tick(uint64_t now);
/// Probe mode: no dispatch work runs and no probe is out, so the watchdog may
/// park (the next dispatch item wakes it). False when the hooks are not ours.
bool hw_main_queue_idle(void);
// main_queue_owner.c
/// On the worker running a probe (it holds the main queue's drain lock):
/// learn, or check again, where `queue` keeps its holder's thread id.
void hw_main_queue_owner_learn(void *queue);
/// Engine start: where `queue` keeps its holder's thread id, guessed from
/// the one word that holds `main_tid` (the main queue holds the main thread
/// until dispatchMain()); the first probe checks the guess.
void hw_main_queue_owner_guess(void *queue, pid_t main_tid);
/// The thread holding `queue` now (draining it, or in a main.sync from it);
/// 0 when nobody does; -1 when the holder cannot be read (not learnt, or
/// found wrong once).
pid_t hw_main_queue_owner(void *queue);
// dispatch_brackets.c
/// Library mode, engine start: counts the dispatch work in flight through
/// libdispatch's autorelease-pool hooks (once per process, never undone).
void hw_dispatch_brackets_install(void);
/// No counted dispatch work runs, and the hooks are still ours.
bool hw_dispatch_brackets_idle(void);
/// When counted work last began with none in flight (0: never, or not installed).
uint64_t hw_dispatch_brackets_opened_ns(void);
/// SIGNAL-SAFE. The calling thread runs inside counted dispatch work.
bool hw_dispatch_bracket_here(void);
typedef enum { HW_BRACKET_NONE, HW_BRACKET_OPEN, HW_BRACKET_UNKNOWN } hw_bracket_answer;
/// Whether thread `tid` runs inside counted dispatch work, read from outside
/// (unknown: the hooks are not ours, or a thread found no cell to be listed in).
hw_bracket_answer hw_dispatch_bracket_open_on(pid_t tid);

/// Probe mode: a parked watchdog still probes this often (its park's timeout).
#define HW_PROBE_IDLE_NS (100 * 1000000ull)
/// The OS main thread was found parked (sigsuspend/pause): dispatchMain() ran.
void hw_main_thread_parked(hw_slot *slot);
/// SIGNAL-SAFE. The main-queue slot if the calling thread is the worker running it.
hw_slot *hw_main_queue_slot_if_running_here(void);
/// The watchdog saw thread `tid` at stack pointer `sp` (a kernel sample, or
/// /proc while blocked): if it is the main-queue slot's holder, claimed
/// while it ran, its stack's bounds (a few tries per claim).
void hw_main_queue_stack_seen(hw_slot *slot, pid_t tid, uint64_t sp);
/// SIGNAL-SAFE. Answer an identify request: claim the main queue if this thread runs it.
hw_slot *hw_main_queue_identify_here(uint64_t sp);

#endif
