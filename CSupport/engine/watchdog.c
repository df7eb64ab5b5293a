// The watchdog thread: polls the heartbeats of the watched threads. A busy
// period older than arm_ns starts a sampling session at the sample rate; one
// older than the hang threshold is announced in the log while it lasts, so a
// process killed mid-hang still leaves the hang behind.
//
// Per tick it reads what the thread is doing (/proc, proc_probe.c) and picks
// the one way to sample it that the program cannot see:
//  - blocked in an interposed wait (and /proc agrees it is in a syscall
//    right where that wait's registers say): copy its stack from outside,
//    with the registers its wrapper saved;
//  - blocked in any other syscall: copy from the stack pointer /proc gives;
//  - running: the kernel samples it (perf_event, sampler_perf.c); where that
//    is refused, send the sampling signal (unless an exec is under way);
//  - state unreadable, stopped, or gone: no signal, no sample; the report
//    says how many ticks went unsampled. When in doubt, we do not signal.
// A blocked thread is never signalled: poll, nanosleep, epoll_wait, timed
// futex waits (sem_timedwait) and more return EINTR whatever SA_RESTART says.
#include "engine_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/// Sleeps with the raw syscall: the engine never calls the agent's wrappers.
static void sleep_until(uint64_t deadline_ns) {
    struct timespec ts = { (time_t)(deadline_ns / 1000000000ull), (long)(deadline_ns % 1000000000ull) };
    while (syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == -1 && errno == EINTR) {}
}

static void session_start(hw_slot *slot, uint64_t seq, uint32_t life) {
    hw_session *ses = &slot->session;
    memset(ses, 0, sizeof *ses);
    ses->active = true;
    ses->life = life;
    ses->busy_seq = seq;
    // The reader wakes now, not at its next idle timeout: samples follow.
    ses->counted = hw_g.log && hw_owned();
    if (ses->counted) hw_log_sampling_begins(hw_g.log);
    ses->os_tid = __atomic_load_n(&slot->os_tid, __ATOMIC_ACQUIRE);
    hw_proc_session_open(ses, ses->os_tid);
    hw_cpu_session_start(slot); // the first CPU reading of the window the hang's kind is measured over
    hw_cpu_limit_session_start(slot); // the cgroup's throttled time so far
    ses->hits_at_start = hw_signal_hits(slot);
    // The kernel samples it when it can (sampler_perf.c): no signal at all.
    if (hw_perf_open(&ses->perf, ses->os_tid)) return;
    // A thread that blocks SIGPROF would only pile up a pending signal that
    // fires later, somewhere else: say so once and sample it without signals.
    ses->signal_blocked = ses->os_tid > 0 && hw_proc_blocks_sigprof(ses->os_tid);
    if (ses->signal_blocked) hw_write_note(ses->os_tid, HW_NOTE_SIGNAL_BLOCKED, seq);
    // No module map here: dl_iterate_phdr takes the loader lock, which a thread
    // hung inside dlopen or a dl_iterate_phdr callback holds, and the hang would
    // wait for itself before being announced. The reader learns images mapped
    // since the engine started from /proc/PID/maps (ModuleDiscovery.swift).
}

static void session_end(hw_slot *slot) {
    hw_session *ses = &slot->session;
    hw_cpu_session_end(slot);
    if (ses->hang_announced) hw_cpu_limit_write(slot);
    hw_lock_session_end(slot);
    hw_perf_session_close(slot);
    hw_proc_session_close(ses);
    uint32_t answered = hw_signal_hits(slot) - ses->hits_at_start;
    // Some signals always coalesce with a still-pending one when the thread was
    // preempted; a quarter unanswered means it is not getting them (stopped,
    // traced, or masking SIGPROF after the session began).
    if (ses->life == __atomic_load_n(&slot->life, __ATOMIC_ACQUIRE) && ses->requested > 20
        && ses->requested - answered > ses->requested / 4)
        hw_write_note(ses->os_tid, HW_NOTE_SAMPLES_MISSED, ses->requested - answered);
    // Last: the session's records are all written when the reader learns it ended.
    if (ses->counted && hw_g.log) hw_log_sampling_ends(hw_g.log);
    memset(ses, 0, sizeof *ses);
    ses->syscall_fd = ses->stat_fd = ses->perf.fd = ses->perf.old_fd = -1;
}

static void announce_hang(hw_slot *slot, uint64_t seq, uint64_t since) {
    if (!hw_g.log || hw_g.disabled || !hw_owned()) return;
    hw_rec_busy *rec = (hw_rec_busy *)hw_log_reserve(hw_g.log, sizeof *rec);
    if (!rec) return;
    rec->tid = slot->tid;
    rec->flags = slot->launched ? 0 : HW_BUSY_LAUNCH;
    rec->busy_seq = seq;
    rec->start_ns = since;
    rec->end_ns = 0;
    rec->os_tid = slot->os_tid;
    rec->pool_queue = __atomic_load_n(&slot->job_queue, __ATOMIC_RELAXED); // stored before the busy_seq we read
    hw_log_commit(&rec->h, HW_REC_HANG_START);
}

/// Copies the registers an interposed wait saved, if one is in progress and
/// held still while we copied. Returns its call id (0 when none).
static uint32_t saved_wait(const hw_slot *slot, uint64_t regs[HW_REG_COUNT], uint64_t *gen_out) {
    uint64_t gen = __atomic_load_n(&slot->blocked_gen, __ATOMIC_ACQUIRE);
    if (gen & 1) return 0;
    uint32_t call = __atomic_load_n(&slot->blocked_call, __ATOMIC_ACQUIRE);
    if (!call) return 0;
    for (int i = 0; i < HW_REG_COUNT; i++) regs[i] = __atomic_load_n(&slot->blocked_regs[i], __ATOMIC_RELAXED);
    if (__atomic_load_n(&slot->blocked_gen, __ATOMIC_ACQUIRE) != gen) return 0;
    *gen_out = gen;
    return call;
}

/// The wrapper's saved frame is the live one only when the syscall's stack
/// pointer sits just below it (the libc call the wrapper made). A wait left
/// by siglongjmp leaves stale registers behind: they fail this test.
#define HW_WRAPPER_FRAME_SLACK 8192u
static bool inside_saved_wait(const hw_thread_probe *p, const uint64_t regs[HW_REG_COUNT]) {
    uint64_t sp = regs[HW_REG_RSP];
    return p->exact && p->sp <= sp && sp - p->sp <= HW_WRAPPER_FRAME_SLACK;
}

static void note_unsampled(hw_slot *slot) {
    hw_session *ses = &slot->session;
    ses->unsampled++;
    if (!ses->unsampled_noted) {
        hw_write_note(ses->os_tid, HW_NOTE_STATE_UNREADABLE, ses->busy_seq);
        ses->unsampled_noted = true;
    }
}

/// The thread exited without its exit hook (raw SYS_exit, or the hook could
/// not be armed): close its slot from here.
static void thread_gone(hw_slot *slot) {
    if (slot->tid == HW_MAIN_QUEUE_ID) return; // the queue lives on; only its worker changed
    session_end(slot);
    hw_slot_release(slot, true);
}

// A thread the kernel samples while it runs needs no poll per tick: its
// samples come without the watchdog, which only drains them. Once it has
// been found running HW_RUNNING_TICKS polls in a row, the watchdog polls
// every HW_RUNNING_STRIDE ticks (a 64-page ring holds 10 samples of the
// largest stack copy: a 4-tick stride leaves room for a late poll). Polling
// a running thread every tick was the largest cost of a hang to the program
// after the samples themselves (BENCHMARKS.md, "running hung thread").
#define HW_RUNNING_TICKS 16u
#define HW_RUNNING_STRIDE 4u

// The edges of a stride. A stride's poll stands for the ticks since the
// poll before, but a thread can change between running and blocked inside
// it, and the ticks it was blocked were lost: up to 3 of each 20 ms sleep
// after a steady stride (12-19 ms of 121 ms, Tests/safety/spin_then_block.c).
// A poll a stride may follow marks the thread's CPU plus run-queue time
// (thread_cpu.c; neither grows while it is blocked); the next poll reads it
// again, so it knows how long since the mark the thread was not blocked:
//  - marked blocked, now running (or it ran): it was blocked from the mark
//    until it woke, that long before now; those ticks go to the blocked
//    stack, written before the kernel samples drained here (a repeat stands
//    for the latest sample);
//  - marked running, now blocked: it ran that long after the mark and has
//    been blocked since; the new blocked sample stands for those ticks.
// One change per stride is assumed: a thread that woke and blocked again
// inside one has the blocked ticks of both spells at the earlier stack but
// the tick of this poll. One that woke but has not run yet (its run-queue
// wait is counted only once it runs) reads as still blocked, and the ticks
// after its last blocked poll are lost, as they were before. With no
// reading (the thread gone), no credit.
#define HW_EDGE_NONE UINT32_MAX

/// Ticks, at most `cap`, the thread spent blocked from the mark to `until`:
/// the span less the time it was not blocked since (CPU plus run-queue wait
/// now, against the marked reading). HW_EDGE_NONE when unknown; *ran_since
/// says whether it was not blocked at all.
static uint32_t blocked_ticks_since_mark(hw_slot *slot, uint64_t until, uint64_t cap, bool *ran_since) {
    hw_session *ses = &slot->session;
    uint64_t active, period = hw_g.config.sample_period_ns;
    *ran_since = false;
    if (!ses->mark_ns || !cap || !period || until <= ses->mark_ns || !hw_cpu_active_ns(slot, &active))
        return HW_EDGE_NONE;
    uint64_t ran = active > ses->mark_active_ns ? active - ses->mark_active_ns : 0;
    *ran_since = ran > 0;
    uint64_t span = until - ses->mark_ns, blocked = span > ran ? span - ran : 0;
    uint64_t ticks = (blocked + period / 2) / period;
    return ticks > cap ? (uint32_t)cap : (uint32_t)ticks;
}

/// Marks this poll for the edges of the stride that may follow it.
static void mark_poll(hw_slot *slot, bool blocked) {
    hw_session *ses = &slot->session;
    ses->mark_ns = 0;
    uint64_t active;
    if (!hw_cpu_active_ns(slot, &active)) return;
    ses->mark_ns = hw_now_ns();
    ses->mark_active_ns = active;
    ses->mark_blocked = blocked;
}

/// The busy period ended inside a stride that began with the thread blocked
/// (the end of a hang parked in pthread_join, say): the ticks from that poll
/// until it woke are the blocked stack's, at most the `extra` the stride
/// skipped. It woke at the period's end less the time it then ran; the end is
/// the heartbeat's (`next_since`: the next period's start, when one began; 0:
/// the wait it entered since). Only a thread whose slot and period are the
/// session's (the caller checks life and owner).
static void blocked_until_the_end(hw_slot *slot, uint32_t extra, uint64_t next_since) {
    hw_session *ses = &slot->session;
    if (!ses->mark_ns || !ses->mark_blocked) return;
    uint64_t end = next_since ? next_since : __atomic_load_n(&slot->idle_since_ns, __ATOMIC_ACQUIRE);
    bool ran;
    // At most `extra`: the stride's own poll would have been the next tick.
    uint32_t ticks = blocked_ticks_since_mark(slot, end, extra, &ran);
    if (ticks != HW_EDGE_NONE && ticks) hw_write_repeat(slot, end, ticks - 1);
    ses->mark_ns = 0;
}

static uint32_t steady_stride(uint32_t polls); // a thread parked in one place (below)

/// The poll stride a thread running under the kernel sampler for `polls` polls allows.
static uint32_t running_stride(uint32_t polls) {
    return polls < HW_RUNNING_TICKS ? 1 : HW_RUNNING_STRIDE;
}

// A seccomp filter the program put on every thread binds the watchdog too
// (seccomp_watch.c). Before a call such a filter may kill for (opening /proc
// files, perf_event_open, process_vm_readv) the watchdog looks at its own
// filters, at most once per tick; a new one ends sampling for good, and each
// session under way at its slot's next tick. Reads of descriptors already
// open, the clocks, the kernel sampler's ring and signals to the program's
// own threads (which raise() and abort() need, so a working program's filter
// lets them through) need no look: a tick that only polls a running thread,
// or an idle one, does not pay for it.
static bool looked_this_tick;

static bool risky_calls_allowed(void) {
    if (!looked_this_tick) {
        looked_this_tick = true;
        return hw_seccomp_risky_calls_allowed();
    }
    return !hw_seccomp_stopped();
}

// A main thread parked outside any loop. A server's main thread often
// starts its event loops and then waits, for good, outside any of them (a
// condition wait in SwiftNIO's closeFuture.wait(), a join, a semaphore): it
// never reaches a loop wait, so its launch would last the whole run and be
// sampled all along. A main thread in its launch found blocked in one place
// for the hang threshold is parked instead: its session ends (no samples,
// the watchdog may sleep), a note gives when it blocked there, and every
// HW_PARK_CHECK_NS the watchdog reads /proc once to see whether it moved.
// If it did (a launch that waited on a lock or a future and went on), a note
// says so and the launch is sampled again until its first loop wait, which
// ends it as usual; a launch still parked at the end ends where it parked
// (the reader). Nothing is written to the slot: the thread owns its
// heartbeat, and a parked launch stays busy in it.
#define HW_PARK_CHECK_NS (100 * 1000000ull)

static bool parks_outside_any_loop(const hw_slot *slot, const hw_thread_probe *probe) {
    const hw_session *ses = &slot->session;
    return slot->role == HW_ROLE_MAIN_THREAD && !__atomic_load_n(&slot->launched, __ATOMIC_RELAXED) && probe->exact
        && ses->spell_since_ns && hw_now_ns() - ses->spell_since_ns >= hw_g.config.hang_ns;
}

static void park_main_thread(hw_slot *slot, const hw_thread_probe *probe) {
    hw_session *ses = &slot->session;
    hw_write_note(ses->os_tid, HW_NOTE_MAIN_PARKED, ses->spell_since_ns);
    uint64_t now = hw_now_ns();
    slot->park = (hw_park){ ses->busy_seq, now + HW_PARK_CHECK_NS, probe->nr, probe->sp, probe->pc, now };
    session_end(slot);
}

/// The park is over: the launch went on. The time it was seen parked was
/// launch time spent in that one call, so the park's last sample stands for
/// it, as a blocked stride's repeats do (the launch profile weighs a slow
/// read() or a sleep at its length). Since the last look it may have run:
/// that is not counted.
static void park_over(hw_slot *slot, uint64_t now) {
    hw_park *park = &slot->park;
    uint64_t seen_until = park->check_ns - HW_PARK_CHECK_NS, period = hw_g.config.sample_period_ns;
    uint64_t ticks = period && seen_until > park->parked_ns ? (seen_until - park->parked_ns + period / 2) / period : 0;
    if (ticks) hw_write_repeat_of(slot, park->busy_seq, seen_until, ticks > UINT32_MAX ? UINT32_MAX : (uint32_t)(ticks - 1));
    park->busy_seq = 0;
    hw_write_note(slot->os_tid, HW_NOTE_MAIN_UNPARKED, now);
}

/// Whether the main thread parked in busy period `seq` still sits where it
/// parked; when it has moved, the park is over (a note says when).
static bool still_parked(hw_slot *slot, uint64_t seq, uint64_t now) {
    hw_park *park = &slot->park;
    if (park->busy_seq != seq) return false;
    if (now < park->check_ns) return true;
    // The look opens /proc: under a filter that binds us it stays parked.
    if (!risky_calls_allowed()) return true;
    hw_thread_probe probe = hw_proc_probe_tid(__atomic_load_n(&slot->os_tid, __ATOMIC_ACQUIRE));
    // Unreadable, or gone (its exit hook releases the slot): left as it is.
    bool moved = probe.activity == HW_ACTIVITY_RUNNING
                 || (probe.activity == HW_ACTIVITY_BLOCKED && probe.exact
                     && (probe.nr != park->nr || probe.sp != park->sp || probe.pc != park->pc));
    if (!moved) {
        park->check_ns = now + HW_PARK_CHECK_NS;
        return true;
    }
    park_over(slot, now);
    return false;
}

/// Whether the launch a main thread parked in has ended at a loop wait (the
/// park's /proc look may not have come round since it moved). Only the same
/// live main thread's: a slot another thread claimed since is not its.
static bool parked_launch_ended(const hw_slot *slot, uint32_t life, uint32_t state, uint64_t seq) {
    return slot->park.busy_seq && hw_slot_alive(life) && slot->role == HW_ROLE_MAIN_THREAD
           && (state != HW_STATE_BUSY || seq != slot->park.busy_seq);
}

static void take_sample(hw_slot *slot) {
    hw_session *ses = &slot->session;
    if (ses->os_tid == 0) return; // main queue in probe mode, worker not identified yet
    // The edges of a stride (above), read before anything else.
    bool ran = false;
    uint32_t blocked_ticks = blocked_ticks_since_mark(slot, hw_now_ns(), ses->repeat_extra ? 1u + ses->repeat_extra : 0, &ran);
    bool from_blocked = ses->mark_ns && ses->mark_blocked, from_running = ses->mark_ns && !ses->mark_blocked;
    ses->mark_ns = 0;
    hw_thread_probe probe = hw_proc_probe(ses);
    bool blocked_now = probe.activity == HW_ACTIVITY_BLOCKED;
    // Woke inside the stride: it is not blocked now, or it was not blocked
    // for all of it. A run too short to cost a tick, back in the same wait,
    // is still the same spell (the steady repeat below covers it).
    if (from_blocked && blocked_ticks != HW_EDGE_NONE && ran
        && (!blocked_now || blocked_ticks < 1u + ses->repeat_extra)) {
        // Its blocked ticks go to the blocked stack, before the kernel samples
        // drained below become the latest sample; blocked again, this poll's
        // new sample stands for the last of them.
        uint32_t credit = blocked_now && blocked_ticks ? blocked_ticks - 1 : blocked_ticks;
        if (credit) hw_write_repeat(slot, hw_now_ns(), credit - 1);
        ses->last_was_blocked = false; // it ran: a block now is a new spell
        ses->steady = 0;
    }
    // A thread that ran since the last tick is not parked: its next blocked
    // tick is a new sample, not a repeat of the one before it ran.
    if (hw_perf_session_drain(slot)) { ses->last_was_blocked = false; ses->steady = 0; }
    uint64_t regs[HW_REG_COUNT], gen = 0;
    uint32_t call = saved_wait(slot, regs, &gen);
    switch (probe.activity) {
    case HW_ACTIVITY_GONE:
        thread_gone(slot);
        return;
    case HW_ACTIVITY_UNKNOWN:
        ses->running = 0;
        note_unsampled(slot);
        return;
    case HW_ACTIVITY_BLOCKED: {
        // The busy period may have ended between this tick's look at the slot
        // and the /proc read: a thread seen blocked in its loop's wait stored
        // WAITING before it entered the wait, so this catches it. That wait is
        // not the hang's.
        if (__atomic_load_n(&slot->state, __ATOMIC_ACQUIRE) != HW_STATE_BUSY
            || __atomic_load_n(&slot->busy_seq, __ATOMIC_ACQUIRE) != ses->busy_seq)
            return;
        ses->running = 0;
        // It blocked inside a stride it was running at: the new sample, and
        // the lock owner's (lock_owner.c), stand for the ticks since it blocked.
        uint32_t gap = from_running && blocked_ticks != HW_EDGE_NONE ? blocked_ticks : 0;
        if (from_running && blocked_ticks != HW_EDGE_NONE) ses->repeat_extra = gap > 1 ? gap - 1 : 0;
        if (!risky_calls_allowed()) return; // stack copies and lock reads follow
        enum hw_blocked_write wrote = HW_BLOCKED_NONE;
        if (call && (inside_saved_wait(&probe, regs) || !probe.exact)) {
            wrote = hw_sample_blocked_wrapper(slot, regs, call, gen);
        } else if (!probe.exact) {
            // State only (privilege drop): blocked, but no stack pointer to copy
            // from. The tick still counts as blocked time, without a stack.
            note_unsampled(slot);
            wrote = hw_sample_blocked_syscall(slot, HW_CALL_BLOCKED_UNKNOWN - HW_CALL_SYSCALL_BASE, 0, 0);
        } else if (!hw_g.interposed && (probe.nr == SYS_rt_sigsuspend || probe.nr == SYS_pause)
                   && slot->role == HW_ROLE_MAIN_THREAD) {
            hw_main_thread_parked(slot); // library mode, dispatchMain(): parked for good, not busy
        } else {
            hw_main_queue_stack_seen(slot, ses->os_tid, probe.sp); // a queue holder claimed while it ran
            wrote = hw_sample_blocked_syscall(slot, probe.nr, probe.sp, probe.pc);
        }
        hw_lock_tick(slot, &probe, hw_now_ns()); // blocked in futex: whose lock, and what its owner does
        // A new sample stands for one tick: a repeat for the rest of the gap.
        if (wrote == HW_BLOCKED_NEW && gap > 1) hw_write_repeat(slot, hw_now_ns(), gap - 2);
        if (wrote == HW_BLOCKED_NEW || !ses->spell_since_ns) ses->spell_since_ns = hw_now_ns();
        if (wrote != HW_BLOCKED_NONE && steady_stride(ses->steady) > 1) mark_poll(slot, true);
        if (parks_outside_any_loop(slot, &probe)) park_main_thread(slot, &probe);
        return;
    }
    case HW_ACTIVITY_RUNNING:
        ses->spell_since_ns = 0;
        hw_lock_not_waiting(slot);
        ses->last_was_blocked = false;
        ses->steady = 0;
        if (ses->perf.map && running_stride(++ses->running) > 1) mark_poll(slot, false);
        if (ses->perf.map || ses->signal_blocked) return; // the kernel samples it, or nothing can
        // The slot must still belong to the thread this session samples.
        if (__atomic_load_n(&slot->life, __ATOMIC_ACQUIRE) != ses->life) return;
        if (hw_signal_send(ses->os_tid, false)) ses->requested++; // unsent (exec, SIGPROF ignored): not missed
        return;
    }
}

// Parking: an idle program should not pay for a watchdog that wakes 100
// times a second to find nothing. At a tick that finds every watched loop
// waiting, the watchdog sleeps on a futex; the heartbeat wakes it when a
// busy period starts (one flag load per iteration, a syscall only when
// parked). A park saves wake-ups, not the price of one: a futex wake cost
// the watchdog 3.6-5.5 µs in isolation on the VMs we measure, but 15-20 µs, as
// much as a timer's, when a loop's own timer wakes the loop and the loop
// wakes the watchdog. So parking at the first idle tick pays as long as the
// park outlasts the polls it replaces. Two rules keep it so:
//  - after a heartbeat woke it, it parks again no sooner than
//    HW_PARK_MIN_GAP_NS: loops woken by timers at the same time start their
//    busy periods a little apart, and each one would end a park at once;
//  - a park that a heartbeat ended within HW_PARK_WORTH_NS cost more than
//    polling would have, so the watchdog then polls for HW_PARK_HOLD_NS
//    before it parks again: a loop woken every 10 ms, or many loops at
//    unrelated times, keep it polling, and a loop that is almost always busy
//    pays about one futex wake per HW_PARK_HOLD_NS.
// It polls every HW_IDLE_POLLS * arm_ns (20 ms), not every arm_ns: a loop
// woken every 10 ms would otherwise wake it as often. A busy
// period it has seen is still sampled from arm_ns on (the tick is moved to
// then); one that began between two polls is found by the next, at most
// 2 * arm_ns into it. Hang lengths come from the heartbeat either way.
// The heartbeat reads the flag without a fence, so a wakeup can be missed
// when both race: the timeout bounds that to HW_PARK_TIMEOUT_NS late. In the
// library's probe mode the timeout is HW_PROBE_IDLE_NS: the dispatch work
// that wakes it there is fenced, but a LoopHeartbeat's or FrameMonitor's
// wake in that mode may be up to that late.
#define HW_PARK_MIN_GAP_NS (10 * 1000000ull)
#define HW_PARK_WORTH_NS (20 * 1000000ull)
#define HW_PARK_HOLD_NS (100 * 1000000ull)
#define HW_PROBE_TICKS 2
#define HW_IDLE_POLLS 2
#define HW_PARK_TIMEOUT_NS (50 * 1000000ull)

static bool should_stop(void) {
    return !hw_g.running || hw_g.disabled || __atomic_load_n(&hw_g.watchdog_stop, __ATOMIC_ACQUIRE);
}

enum park_result { PARK_REFUSED, PARK_TIMED_OUT, PARK_WOKEN };

/// Sleeps until a heartbeat wakes it or `timeout_ns` passes; refused at
/// once, without sleeping, when a watched loop is busy after all (or, in
/// probe mode, dispatch work began).
static enum park_result park(uint64_t timeout_ns) {
    __atomic_store_n(&hw_g.watchdog_parked, 1, __ATOMIC_SEQ_CST);
    uint32_t count = __atomic_load_n(&hw_g.slot_count, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < count; i++) {
        const hw_slot *slot = &hw_g.slots[i];
        if (hw_slot_alive(__atomic_load_n(&slot->life, __ATOMIC_SEQ_CST))
            && __atomic_load_n(&slot->state, __ATOMIC_SEQ_CST) == HW_STATE_BUSY
            && slot->park.busy_seq != __atomic_load_n(&slot->busy_seq, __ATOMIC_SEQ_CST)) {
            __atomic_store_n(&hw_g.watchdog_parked, 0, __ATOMIC_SEQ_CST);
            return PARK_REFUSED;
        }
    }
    if (should_stop() || (hw_g.probe_main_queue && !hw_main_queue_idle())) {
        __atomic_store_n(&hw_g.watchdog_parked, 0, __ATOMIC_SEQ_CST);
        return PARK_REFUSED;
    }
    struct timespec timeout = { 0, (long)timeout_ns };
    syscall(SYS_futex, &hw_g.watchdog_parked, FUTEX_WAIT_PRIVATE, 1, &timeout, NULL, 0);
    // A heartbeat (or hw_watchdog_wake) that woke us took the flag to 0; a timeout left it at 1.
    return __atomic_exchange_n(&hw_g.watchdog_parked, 0, __ATOMIC_ACQ_REL) ? PARK_TIMED_OUT : PARK_WOKEN;
}

// A thread blocked for long in one place (a main thread parked in
// pthread_join) would cost a /proc read and a wakeup per millisecond for
// nothing new. Once every sampled thread has shown the same blocked stack
// HW_STEADY_TICKS polls in a row, the watchdog polls every 4th tick; each
// further HW_STEADY_TICKS unchanged polls double the stride, up to
// HW_STEADY_MAX_STRIDE. Each repeat record stands for the ticks it skipped, so
// weights stay exact. A thread that moves is seen at most stride - 1 ms late
// (only after 208 ms or more in one place for the longest stride); the
// hang's duration comes from the heartbeat, never from the polls. 16 polls
// per step keep the ramp to the longest stride short, so a thread parked
// for long costs the watchdog few wake-ups (BENCHMARKS.md, "steady ramp").
// A thread that ran meanwhile
// is not steady whatever the stride: the kernel's samples of it reset the
// count (take_sample).
#define HW_STEADY_TICKS 16u
#define HW_STEADY_FIRST_STRIDE 4u
#define HW_STEADY_MAX_STRIDE 16u

/// The poll stride for threads that have all been steady for `polls` polls.
static uint32_t steady_stride(uint32_t polls) {
    if (polls < HW_STEADY_TICKS) return 1;
    uint32_t stride = HW_STEADY_FIRST_STRIDE;
    for (uint32_t past = polls / HW_STEADY_TICKS - 1; past && stride < HW_STEADY_MAX_STRIDE; past--) stride *= 2;
    return stride;
}

/// One slot's duty this tick. Returns whether it is busy, and sets *sampled;
/// lowers *stride to the poll stride this slot's thread allows (parked in one
/// place, or running under the kernel sampler), and *due to the time a busy
/// period not sampled yet reaches arm_ns, or a sampled one the hang threshold.
static bool tick_slot(hw_slot *slot, uint64_t now, uint32_t extra, bool *sampled, uint32_t *stride, uint64_t *due) {
    hw_session *ses = &slot->session;
    uint32_t life = __atomic_load_n(&slot->life, __ATOMIC_ACQUIRE);
    uint32_t state = __atomic_load_n(&slot->state, __ATOMIC_ACQUIRE);
    uint64_t seq = __atomic_load_n(&slot->busy_seq, __ATOMIC_ACQUIRE);
    uint64_t since = __atomic_load_n(&slot->busy_since_ns, __ATOMIC_RELAXED);
    bool moved = ses->active && ses->os_tid != __atomic_load_n(&slot->os_tid, __ATOMIC_ACQUIRE);
    if (ses->active && (ses->life != life || state != HW_STATE_BUSY || ses->busy_seq != seq || moved)) {
        if (ses->life == life && !moved) blocked_until_the_end(slot, extra, ses->busy_seq != seq ? since : 0);
        session_end(slot);
    }
    if (!ses->active && parked_launch_ended(slot, life, state, seq)) park_over(slot, now);
    if (!hw_slot_alive(life) || state != HW_STATE_BUSY || now < since) return false;
    if (!ses->active && slot->park.busy_seq && still_parked(slot, seq, now)) return false;
    uint64_t busy = now - since;
    // A session opens /proc files and maybe a kernel sampler: look first.
    if (hw_seccomp_stopped() || (!ses->active && busy >= hw_g.config.arm_ns && !risky_calls_allowed())) {
        // A filter of the program binds us (seccomp_watch.c): the hang is
        // timed and announced from the heartbeat alone, never sampled. A
        // session ends with close and munmap, calls no filter can refuse a
        // working program.
        if (ses->active) session_end(slot);
        if (slot->announced_seq == seq) return true;
        if (busy >= hw_g.config.hang_ns) {
            announce_hang(slot, seq, since);
            __atomic_store_n(&slot->announced_seq, seq, __ATOMIC_RELEASE);
        } else if (since + hw_g.config.hang_ns < *due) {
            *due = since + hw_g.config.hang_ns;
        }
        return true;
    }
    bool announced = ses->active ? ses->hang_announced : slot->announced_seq == seq;
    bool started = !ses->active && busy >= hw_g.config.arm_ns;
    if (started) session_start(slot, seq, life);
    if (!ses->active) {
        if (since + hw_g.config.arm_ns < *due) *due = since + hw_g.config.arm_ns;
        return true;
    }
    ses->hang_announced = announced;
    // Announce first: nothing below may delay the record a killed process leaves.
    if (!ses->hang_announced && busy >= hw_g.config.hang_ns) {
        announce_hang(slot, seq, since);
        ses->hang_announced = true;
        __atomic_store_n(&slot->announced_seq, seq, __ATOMIC_RELEASE);
        hw_cpu_limit_write(slot); // so far: a process killed mid-hang still leaves it
    }
    ses->repeat_extra = started ? 0 : extra; // a session's first poll stands for its own tick
    take_sample(slot);
    if (ses->active) hw_cpu_tick(slot, now);
    uint32_t allowed = !ses->active ? 1u : ses->running ? running_stride(ses->running) : steady_stride(ses->steady);
    if (allowed < *stride) *stride = allowed;
    // Announced at its tick, not a stride later: a process killed just past
    // the threshold still leaves the hang.
    if (ses->active && !ses->hang_announced && since + hw_g.config.hang_ns < *due) *due = since + hw_g.config.hang_ns;
    *sampled = true;
    return true;
}

/// Ends every sampling session under way.
static void end_all_sessions(void) {
    uint32_t count = __atomic_load_n(&hw_g.slot_count, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < count; i++)
        if (hw_g.slots[i].session.active) session_end(&hw_g.slots[i]);
}

/// The watchdog thread's id, kept after it exits (hw_watchdog_stop waits for it to be gone).
static pid_t last_watchdog_tid;

static void *watchdog_main(void *arg) {
    (void)arg;
    hw_tls_never_watch();
    prctl(PR_SET_NAME, "hangwatch", 0, 0, 0);
    __atomic_store_n(&hw_g.watchdog_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
    __atomic_store_n(&last_watchdog_tid, hw_g.watchdog_tid, __ATOMIC_RELEASE);
    // Library mode posts probes to libdispatch from here, and a worker it
    // spawns would inherit a private descriptor table: keep the shared one there.
    // A watchdog restarted under the program's filter opens nothing (seccomp_watch.c).
    if (hw_g.interposed && !hw_seccomp_stopped()) hw_proc_private_fds();
    hw_seccomp_watch_start();
    if (!hw_seccomp_stopped()) hw_cpu_limit_open();
    hw_tsc_clock_start();
    const uint64_t period = hw_g.config.sample_period_ns;
    const uint64_t idle_poll = hw_g.config.arm_ns;
    uint64_t next = hw_now_ns(), last_woken = next, hold_until = 0;
    uint32_t stride = 1;
    while (!should_stop()) {
        uint64_t now = hw_now_ns();
        bool sampling = false, any_busy = false;
        uint32_t allowed = UINT32_MAX;
        uint64_t due = UINT64_MAX;
        hw_tsc_clock_tick(now);
        looked_this_tick = false;
        if (hw_g.probe_main_queue && risky_calls_allowed()) due = hw_main_queue_probe_tick(now);
        uint32_t count = __atomic_load_n(&hw_g.slot_count, __ATOMIC_ACQUIRE);
        for (uint32_t i = 0; i < count; i++)
            any_busy |= tick_slot(&hw_g.slots[i], now, stride - 1, &sampling, &allowed, &due);
        hw_pool_watch_tick(now);
        stride = sampling ? allowed : 1;
        // In probe mode it parks while no dispatch work runs: a probe is then
        // due only every HW_PROBE_IDLE_NS (main_queue.c), the park's timeout.
        // There the wake came from dispatch work whose probe has answered and
        // whose brackets have closed by the time it may park, and one more
        // poll would find the same: no minimum gap (a timer every 100 ms cost
        // the watchdog 3.5 wake-ups per firing with it).
        if (!sampling && !any_busy && (!hw_g.probe_main_queue || hw_main_queue_idle()) && now >= hold_until
            && (hw_g.probe_main_queue || now - last_woken >= HW_PARK_MIN_GAP_NS)) {
            enum park_result parked = park(hw_g.probe_main_queue ? HW_PROBE_IDLE_NS : HW_PARK_TIMEOUT_NS);
            if (parked != PARK_REFUSED) {
                hw_stop_forget(); // a park has no deadline to be late for
                next = hw_now_ns();
                if (parked == PARK_WOKEN) {
                    if (next - now < HW_PARK_WORTH_NS) hold_until = next + HW_PARK_HOLD_NS;
                    last_woken = next;
                }
                continue;
            }
        }
        // Sample on a fixed grid while a session runs; otherwise poll slowly.
        // In probe mode one wake per probe interval both checks the last probe
        // and posts the next (HW_PROBE_TICKS idle polls); the probe's own due
        // time (a quick follow-up, or a stuck check) can come sooner.
        next += sampling ? period * stride : (hw_g.probe_main_queue ? HW_PROBE_TICKS * idle_poll : HW_IDLE_POLLS * idle_poll);
        if (!sampling && due < next) next = due; // a busy period seen: sampled from arm_ns on, not later
        if (sampling && due < next) {
            // A stride that would pass a due time (an unannounced hang's
            // threshold; in probe mode, a probe's) is cut to the tick of the
            // sampling grid at or just after it.
            uint64_t grid = next - period * stride;
            uint32_t upto = due > grid ? (uint32_t)((due - grid + period - 1) / period) : 1;
            if (upto < stride) { stride = upto; next = grid + period * stride; }
        }
        now = hw_now_ns();
        // Late (preempted, or a slow tick): the next tick is a whole period
        // away. Each blocked sample stands for one period; catching up sooner
        // counted blocked time twice (a 245 ms hang of 2 ms work / 2-6 ms
        // waits got 255-274 samples; now 214-235 with the first 10 ms unsampled).
        if (next < now) next = now + (sampling ? period : 0);
        hw_stop_before_sleep();
        sleep_until(next);
        hw_stop_after_sleep(next, hw_now_ns()); // late beyond its run-queue wait: the process was stopped
    }
    hw_tsc_clock_stop(); // nobody refreshes the TSC's scale any more
    hw_pool_watch_stop(); // nor sees a full pool queue free again
    // Sessions end with the thread: their descriptors are in its table.
    end_all_sessions();
    hw_seccomp_watch_stop();
    hw_stop_close();
    hw_cpu_limit_close();
    __atomic_store_n(&hw_g.watchdog_tid, 0, __ATOMIC_RELEASE);
    return NULL;
}

int hw_watchdog_start(void) {
    if (hw_g.watchdog_started) return 0;
    __atomic_store_n(&hw_g.watchdog_stop, 0, __ATOMIC_RELEASE);
    // The watchdog must never take a signal meant for the program (SIGINT,
    // SIGCHLD, alarm...): it blocks them all, and the new thread inherits that.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    hw_g.program_sigmask = old;
    int rc = pthread_create(&hw_g.watchdog, NULL, watchdog_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    hw_g.watchdog_started = rc == 0;
    return rc == 0 ? 0 : -1;
}

/// Waits until the kernel has taken thread `tid` out of the process, at most
/// HW_GONE_WAIT_NS. A join returns when the exiting thread clears its tid,
/// which the kernel does before it unlinks the thread from the process: in
/// that window unshare(CLONE_NEWUSER) can still fail with EINVAL; once /proc
/// no longer lists the thread (it is unlinked) it does not. Raw syscalls, no
/// descriptor.
#define HW_GONE_WAIT_NS (100 * 1000000ull)
static void wait_until_gone(pid_t tid) {
    if (tid <= 0) return;
    char path[40];
    snprintf(path, sizeof path, "/proc/self/task/%d", (int)tid);
    uint64_t until = hw_now_ns() + HW_GONE_WAIT_NS;
    while (syscall(SYS_faccessat, AT_FDCWD, path, F_OK) == 0 && hw_now_ns() < until) {
        struct timespec ts = { 0, 20000 };
        syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, NULL);
    }
}

void hw_watchdog_stop(void) {
    if (!hw_g.watchdog_started) return;
    __atomic_store_n(&hw_g.watchdog_stop, 1, __ATOMIC_SEQ_CST);
    hw_watchdog_wake();
    // Joined, not detached, and then waited for until the process really has
    // one thread fewer (a call that needs a single thread follows).
    pthread_join(hw_g.watchdog, NULL);
    wait_until_gone(__atomic_load_n(&last_watchdog_tid, __ATOMIC_ACQUIRE));
    hw_g.watchdog_started = false;
}

const hw_subsystem hw_watchdog_subsystem = { .name = "watchdog", .start = hw_watchdog_start };
