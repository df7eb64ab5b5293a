// CPU samples without signals: while a session samples a thread, the kernel
// samples it. A perf_event task-clock counter on that one thread overflows
// every sample period of the thread's own CPU time; at each overflow the
// kernel copies the user registers and the top of the user stack into a ring
// buffer that only the watchdog reads. The program receives nothing: no
// signal, so no system call it is making or about to make can end in EINTR.
//
// Why not the signal alone: the watchdog sends SIGPROF only to a thread /proc
// shows running, but between that read and the delivery the thread can
// enter a call that a handler ends early whatever SA_RESTART says
// (sigtimedwait, a socket read with SO_RCVTIMEO, semtimedop...). On a loaded
// 2-core machine the watchdog can be preempted in that window for
// milliseconds. The kernel samples the thread where it is, with no window.
//
// When perf_event_open is refused (perf_event_paranoid, seccomp, no
// PERF_EVENTS), the session falls back to the sampling signal and the report
// says which sampler ran and why.
#include "engine_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

// The registers asked for, in perf's x86 numbering (asm/perf_regs.h), listed
// in the order the kernel writes them (ascending bit), with our slot for each.
enum { PERF_AX = 0, PERF_BX, PERF_CX, PERF_DX, PERF_SI, PERF_DI, PERF_BP, PERF_SP, PERF_IP, PERF_R8 = 16 };
static const struct { uint8_t perf, ours; } perf_regs[] = {
    { PERF_AX, HW_REG_RAX }, { PERF_BX, HW_REG_RBX }, { PERF_CX, HW_REG_RCX }, { PERF_DX, HW_REG_RDX },
    { PERF_SI, HW_REG_RSI }, { PERF_DI, HW_REG_RDI }, { PERF_BP, HW_REG_RBP }, { PERF_SP, HW_REG_RSP },
    { PERF_IP, HW_REG_RIP }, { PERF_R8 + 0, HW_REG_R8 }, { PERF_R8 + 1, HW_REG_R9 }, { PERF_R8 + 2, HW_REG_R10 },
    { PERF_R8 + 3, HW_REG_R11 }, { PERF_R8 + 4, HW_REG_R12 }, { PERF_R8 + 5, HW_REG_R13 },
    { PERF_R8 + 6, HW_REG_R14 }, { PERF_R8 + 7, HW_REG_R15 },
};
#define PERF_REG_COUNT (sizeof perf_regs / sizeof perf_regs[0])

/// Stack bytes the kernel copies per sample, at most. A record's size is a
/// u16, so a sample cannot carry the signal path's HW_MAX_STACK_COPY; 24 KiB
/// holds the stacks of every demo with room to spare, and deeper ones are
/// marked cut.
#define PERF_STACK_BYTES (24u * 1024u)
/// The copy costs the sampled thread time in proportion to its size
/// (BENCHMARKS.md, "fitted stack copy"), and most of 24 KiB lies above the
/// top of the stack of a thread that is not deep. A session starts at
/// PERF_STACK_BYTES and is fitted after its first samples (fit_stack_size):
/// the deepest stack they use plus PERF_STACK_MARGIN.
#define PERF_STACK_MARGIN (4u * 1024u)
/// Samples a session takes at the full size before it is fitted: a busy
/// period that ends sooner (most are short) never pays for a second event.
#define PERF_FIT_AFTER_SAMPLES 32u
#define PERF_MAX_RESIZES 2u
/// Data pages of the ring (a power of two): 256 KiB, 10 samples. The
/// watchdog drains it every tick; a full ring loses samples, counted. The
/// ring is locked memory charged to the user (perf_event_mlock_kb, 516 KiB
/// per CPU unprivileged): half of one CPU's allowance per sampled thread (a
/// refit of the stack size writes into the same ring: no second one).
#define PERF_RING_PAGES 64u

static uint64_t regs_mask(void) {
    uint64_t mask = 0;
    for (size_t i = 0; i < PERF_REG_COUNT; i++) mask |= 1ull << perf_regs[i].perf;
    return mask;
}

static int open_event(pid_t tid, bool with_kernel, uint32_t stack_bytes, bool disabled) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_TASK_CLOCK; // the thread's own CPU time: no samples while it waits
    attr.sample_period = hw_g.config.sample_period_ns;
    attr.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    attr.sample_regs_user = regs_mask();
    attr.sample_stack_user = stack_bytes;
    attr.use_clockid = 1;
    attr.clockid = CLOCK_MONOTONIC; // hw_now_ns's clock: sample times line up with the heartbeat's
    // Counting kernel time keeps the weight of a thread busy inside system
    // calls (the sample still shows where user code made the call). Without
    // the privilege to count it (perf_event_paranoid 2), user time only.
    attr.exclude_kernel = !with_kernel;
    attr.exclude_hv = 1;
    attr.disabled = disabled;
    int fd = (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) return -errno;
    return fd;
}

/// Whether a seccomp filter is on this thread. A filter may kill the
/// process for perf_event_open (systemd's SystemCallFilter= does by default)
/// rather than fail it: when in doubt, the sampler is not even tried.
static bool under_seccomp_filter(void) {
    unsigned long long mode = 1;
    return !hw_proc_status_field((pid_t)syscall(SYS_gettid), "Seccomp:", 10, &mode) || mode != 0;
}

static bool refused_for_good(int err) {
    // Not a shortage of this moment (EMFILE, ENOMEM, EBUSY): trying again at
    // every hang would cost a failing syscall each time for the same answer.
    return err == EACCES || err == EPERM || err == ENOSYS || err == ENOENT || err == ENODEV
        || err == EOPNOTSUPP || err == EINVAL;
}

static void note_sampler(uint32_t sampler, uint32_t detail) {
    hw_write_note(0, HW_NOTE_SAMPLER, (uint64_t)sampler | ((uint64_t)detail << 32));
}

/// Maps the ring of event `fd` into `r`, after moving the descriptor away
/// from the numbers the program is given (shared table only). Closes `fd`
/// and returns false when the mapping is refused.
static bool map_ring(hw_perf_ring *r, int fd) {
    size_t len = (PERF_RING_PAGES + 1) * (size_t)sysconf(_SC_PAGESIZE);
    fd = hw_proc_keep_away_fd(fd);
    void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) { close(fd); return false; }
    r->fd = fd;
    r->map = map;
    r->len = len;
    return true;
}

/// A session's first event on `tid`, copying PERF_STACK_BYTES a sample; the
/// first outcome in the process decides (and notes) which sampler is used.
bool hw_perf_open(hw_perf_ring *r, pid_t tid) {
    memset(r, 0, sizeof *r);
    r->fd = r->old_fd = -1;
    r->stack_bytes = PERF_STACK_BYTES;
    if (tid <= 0 || (hw_g.config.flags & HW_CONFIG_SIGNAL_SAMPLES)) return false;
    uint32_t state = __atomic_load_n(&hw_g.perf_state, __ATOMIC_ACQUIRE);
    if (state == HW_PERF_REFUSED) return false;
    if (state == HW_PERF_UNTRIED && under_seccomp_filter()) {
        __atomic_store_n(&hw_g.perf_state, HW_PERF_REFUSED, __ATOMIC_RELEASE);
        note_sampler(HW_SAMPLER_SIGNAL, HW_SAMPLER_WHY_SECCOMP);
        return false;
    }
    int fd = open_event(tid, true, r->stack_bytes, false);
    if (fd == -EACCES || fd == -EPERM) { fd = open_event(tid, false, r->stack_bytes, false); r->user_only = fd >= 0; }
    if (fd < 0) {
        int err = -fd;
        if (refused_for_good(err)) __atomic_store_n(&hw_g.perf_state, HW_PERF_REFUSED, __ATOMIC_RELEASE);
        if (state != HW_PERF_WORKS) note_sampler(HW_SAMPLER_SIGNAL, (uint32_t)err);
        return false;
    }
    if (!map_ring(r, fd)) {
        // The locked-memory allowance may be spent (other sessions, the
        // program's own perf rings): signals this time; say so once.
        if (state == HW_PERF_UNTRIED) note_sampler(HW_SAMPLER_SIGNAL, HW_SAMPLER_WHY_RING);
        return false;
    }
    if (__atomic_exchange_n(&hw_g.perf_state, HW_PERF_WORKS, __ATOMIC_ACQ_REL) != HW_PERF_WORKS)
        note_sampler(HW_SAMPLER_PERF, r->user_only ? HW_SAMPLER_WHY_USER_ONLY : 0);
    return true;
}

/// Copies `len` bytes at ring offset `pos` (which may wrap) into `dst`.
static void ring_copy(void *dst, const uint8_t *data, uint64_t size, uint64_t pos, uint64_t len) {
    uint64_t at = pos & (size - 1);
    uint64_t first = size - at < len ? size - at : len;
    memcpy(dst, data + at, first);
    if (len > first) memcpy((uint8_t *)dst + first, data, len - first);
}

static uint64_t ring_u64(const uint8_t *data, uint64_t size, uint64_t pos) {
    uint64_t v;
    ring_copy(&v, data, size, pos, sizeof v);
    return v;
}

void hw_perf_stack_copy(const hw_perf_stack *stack, void *dst, uint64_t len) {
    if (len > stack->len) len = stack->len;
    ring_copy(dst, stack->data, stack->size, stack->pos, len);
}

/// One PERF_RECORD_SAMPLE of `record_len` bytes at `pos` (after its header),
/// handed to `fn`. The ring lies in the program's address space: every size
/// read from it is checked against the record before it is used.
static void decode_sample(const uint8_t *data, uint64_t size, uint64_t pos, uint64_t record_len,
                          hw_perf_sample_fn fn, void *ctx) {
    const uint64_t fixed = 8 + 8 + PERF_REG_COUNT * 8 + 8; // time, abi, registers, stack size
    if (record_len < 16) return;
    uint64_t time_ns = ring_u64(data, size, pos);
    uint64_t abi = ring_u64(data, size, pos + 8);
    if (abi == PERF_SAMPLE_REGS_ABI_NONE || record_len < fixed) return; // no user registers to unwind from
    uint64_t values[PERF_REG_COUNT];
    ring_copy(values, data, size, pos + 16, sizeof values);
    uint64_t regs[HW_REG_COUNT] = {0};
    for (size_t i = 0; i < PERF_REG_COUNT; i++) regs[perf_regs[i].ours] = values[i];
    uint64_t stack_size = ring_u64(data, size, pos + fixed - 8);
    if (stack_size > PERF_STACK_BYTES || (stack_size && record_len < fixed + stack_size + 8)) return;
    uint64_t copied = stack_size ? ring_u64(data, size, pos + fixed + stack_size) : 0; // dyn_size
    hw_perf_stack stack = { data, size, pos + fixed, copied < stack_size ? copied : stack_size, stack_size };
    fn(ctx, time_ns, regs, &stack);
}

/// Walks the samples taken since the last drain, handing each to `fn` (NULL:
/// none), and consumes them when `consume`. Returns how many there were.
static uint32_t walk(hw_perf_ring *r, hw_perf_sample_fn fn, void *ctx, bool consume) {
    if (!r->map) return 0;
    struct perf_event_mmap_page *meta = r->map;
    uint64_t offset = meta->data_offset, size = meta->data_size, page = r->len / (PERF_RING_PAGES + 1);
    // What the kernel set up, or the mapping is no longer the kernel's: read nothing.
    if (offset != page || size != PERF_RING_PAGES * page) return 0;
    const uint8_t *data = (const uint8_t *)r->map + offset;
    uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = meta->data_tail;
    uint32_t samples = 0;
    if (head - tail > size) tail = head - size; // never read more than one ring
    while (tail < head) {
        struct perf_event_header h;
        ring_copy(&h, data, size, tail, sizeof h);
        if (h.size < sizeof h || h.size > head - tail) break; // not a whole record: stop rather than spin
        if (h.type == PERF_RECORD_SAMPLE) {
            if (fn) decode_sample(data, size, tail + sizeof h, h.size - sizeof h, fn, ctx);
            samples++;
        } else if (consume && h.type == PERF_RECORD_LOST && h.size >= sizeof h + 16) {
            r->lost += (uint32_t)ring_u64(data, size, tail + sizeof h + 8);
        }
        tail += h.size;
    }
    if (consume) __atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
    return samples;
}

uint32_t hw_perf_drain(hw_perf_ring *r, hw_perf_sample_fn fn, void *ctx) { return walk(r, fn, ctx, true); }

uint32_t hw_perf_pending(hw_perf_ring *r) { return walk(r, NULL, NULL, false); }

void hw_perf_close(hw_perf_ring *r) {
    if (!r->map) return;
    munmap(r->map, r->len);
    close(r->fd);
    if (r->old_fd >= 0) close(r->old_fd);
    r->map = NULL;
    r->fd = r->old_fd = -1;
}

// ---- a watched thread's session ---------------------------------------------

static void write_slot_sample(void *ctx, uint64_t time_ns, const uint64_t regs[HW_REG_COUNT],
                              const hw_perf_stack *stack) {
    hw_slot *slot = ctx;
    // Taken after the busy period ended (drained late, at the session's end):
    // not this hang's. The signal path never had them: its handler checks.
    if (slot->session.perf_until_ns && time_ns > slot->session.perf_until_ns) return;
    uint32_t flags = HW_SAMPLE_KERNEL;
    hw_main_queue_stack_seen(slot, slot->session.os_tid, regs[HW_REG_RSP]); // a queue holder claimed while it ran
    // How much stack this sample had in use, for the next size (an alternate stack: the most).
    uint64_t in_use = hw_stack_in_use(slot, regs[HW_REG_RSP]);
    uint64_t need = in_use ? in_use : PERF_STACK_BYTES;
    if (need > slot->session.perf.need) slot->session.perf.need = need;
    uint64_t len = hw_stack_slice_len(slot, regs[HW_REG_RSP], stack->len, stack->len == stack->asked, &flags);
    hw_rec_sample *rec = hw_sample_reserve(slot->tid, slot->session.busy_seq, HW_SRC_SIGNAL, 0, regs, time_ns, len);
    if (!rec) return;
    hw_perf_stack_copy(stack, rec->stack, len);
    hw_sample_commit(rec, flags, len);
}

/// The stack size the samples seen so far call for: their deepest use plus
/// the margin, in whole KiB, at most PERF_STACK_BYTES.
static uint32_t fitted_stack_bytes(uint64_t need) {
    uint64_t bytes = (need + PERF_STACK_MARGIN + 1023u) & ~(uint64_t)1023u;
    return bytes > PERF_STACK_BYTES ? PERF_STACK_BYTES : (uint32_t)bytes;
}

/// Puts a new event copying `stack_bytes` in place of the ring's running one,
/// writing into the same ring (PERF_EVENT_IOC_SET_OUTPUT): no second mapping,
/// so no more locked memory, and nothing already in the ring is lost. The
/// new event is created disabled and enabled only once the old one is off,
/// so no tick is sampled twice; the old one's unfinished period (under one
/// ms of CPU) goes unsampled. Its descriptor stays open until the ring is
/// unmapped (the mapping was made through it). Returns false, the old event
/// sampling on, when the kernel refuses any step.
static bool switch_event(hw_perf_ring *r, pid_t tid, uint32_t stack_bytes) {
    if (!hw_seccomp_risky_calls_allowed()) return false; // a filter may kill for perf_event_open
    int fd = open_event(tid, !r->user_only, stack_bytes, true);
    if (fd < 0) return false;
    fd = hw_proc_keep_away_fd(fd);
    if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) != 0) { close(fd); return false; }
    ioctl(r->fd, PERF_EVENT_IOC_DISABLE, 0);
    if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) { // keep sampling with the old one
        ioctl(r->fd, PERF_EVENT_IOC_ENABLE, 0);
        close(fd);
        return false;
    }
    if (r->old_fd >= 0) close(r->old_fd); // a ring switches at most twice: keep one old descriptor
    r->old_fd = r->fd;
    r->fd = fd;
    r->stack_bytes = stack_bytes;
    return true;
}

/// Fits the session's stack copy to its samples once PERF_FIT_AFTER_SAMPLES
/// have shown how much stack they use, and goes back to the full
/// PERF_STACK_BYTES, for good, as soon as a sample needed more than the
/// fitted size (that sample is cut short, and marked so). A refused switch
/// is not retried: the session keeps the size it has (deeper samples stay
/// marked cut), and the next session starts at the full size again.
static void fit_stack_size(hw_slot *slot, uint32_t drained) {
    hw_perf_ring *ring = &slot->session.perf;
    ring->samples += drained;
    if (!ring->map || !ring->need || ring->resizes >= PERF_MAX_RESIZES) return;
    uint32_t want;
    if (ring->resizes == 0) {
        if (ring->samples < PERF_FIT_AFTER_SAMPLES) return;
        want = fitted_stack_bytes(ring->need);
        if (want + PERF_STACK_MARGIN > ring->stack_bytes) { ring->resizes = PERF_MAX_RESIZES; return; } // not worth it
    } else if (ring->need > ring->stack_bytes) {
        want = PERF_STACK_BYTES;
    } else {
        return;
    }
    if (!switch_event(ring, slot->session.os_tid, want)) { ring->resizes = PERF_MAX_RESIZES; return; }
    ring->resizes = want == PERF_STACK_BYTES ? PERF_MAX_RESIZES : ring->resizes + 1;
}

uint32_t hw_perf_session_drain(hw_slot *slot) {
    uint32_t samples = hw_perf_drain(&slot->session.perf, write_slot_sample, slot);
    if (samples) fit_stack_size(slot, samples);
    return samples;
}

void hw_perf_session_close(hw_slot *slot) {
    hw_session *ses = &slot->session;
    if (!ses->perf.map) return;
    // When the busy period is over, the samples it may own end where it ended.
    // The heartbeat's stamp may be up to HW_STAMP_MAX_ERROR_NS ahead of the
    // kernel's sample clock (a TSC stamp): the cut is made that much earlier,
    // so a sample taken as the thread entered its loop's wait is never the hang's.
    uint64_t seq = __atomic_load_n(&slot->busy_seq, __ATOMIC_ACQUIRE), until = 0;
    if (seq != ses->busy_seq) until = __atomic_load_n(&slot->busy_since_ns, __ATOMIC_ACQUIRE);
    else if (__atomic_load_n(&slot->state, __ATOMIC_ACQUIRE) != HW_STATE_BUSY)
        until = __atomic_load_n(&slot->idle_since_ns, __ATOMIC_ACQUIRE);
    if (until) ses->perf_until_ns = until > HW_STAMP_MAX_ERROR_NS ? until - HW_STAMP_MAX_ERROR_NS : 1;
    hw_perf_drain(&ses->perf, write_slot_sample, slot); // the last ones: no refit
    if (ses->perf.lost) hw_write_note(ses->os_tid, HW_NOTE_KERNEL_SAMPLES_LOST, ses->perf.lost);
    hw_perf_close(&ses->perf);
}

void hw_perf_after_fork(hw_perf_ring *r) {
    // The mapping is not copied into the child (the kernel marks it so); the
    // descriptor is, in library mode: close it, or the event lives on. Under
    // the agent it lives in the watchdog's private table, which the child
    // never had: the same numbers in the child's table are the program's own.
    if (r->map && !hw_proc_fds_private()) {
        close(r->fd);
        if (r->old_fd >= 0) close(r->old_fd);
    }
    r->map = NULL;
    r->fd = r->old_fd = -1;
}

// SIGNAL-SAFE: close and stores. The sessions' samplers of every slot.
static void perf_after_fork(void) {
    for (uint32_t i = 0; i < HW_MAX_SLOTS; i++) hw_perf_after_fork(&hw_g.slots[i].session.perf);
}

const hw_subsystem hw_perf_subsystem = { .name = "kernel sampler", .after_fork = perf_after_fork };
