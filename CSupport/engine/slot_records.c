// The records a slot writes about itself: its thread (id, role, name), the
// end of a busy period, and a batch of frame times. Written by the heartbeat
// on the watched thread, by the slot table as a thread comes and goes, and by
// the watchdog; they only write into the log and read the slot.
#include "engine_internal.h"

#include <string.h>
#include <sys/prctl.h>

// SIGNAL-SAFE (the main-queue identify path calls it): reserve, prctl, commit.
void hw_log_thread(const hw_slot *slot) { hw_log_thread_named(slot, NULL); }

// SIGNAL-SAFE: reserve, a copy (or prctl), commit.
void hw_log_thread_named(const hw_slot *slot, const char *name) {
    if (!hw_g.log || hw_g.disabled || !hw_owned()) return;
    hw_rec_thread *rec = (hw_rec_thread *)hw_log_reserve(hw_g.log, sizeof *rec);
    if (!rec) return;
    rec->tid = slot->tid;
    rec->role = slot->role;
    rec->os_tid = slot->os_tid;
    if (name) {
        memset(rec->name, 0, sizeof rec->name);
        for (size_t i = 0; i + 1 < sizeof rec->name && name[i]; i++) rec->name[i] = name[i];
    } else {
        prctl(PR_GET_NAME, rec->name, 0, 0, 0);
    }
    hw_log_commit(&rec->h, HW_REC_THREAD);
}

void hw_emit_busy(hw_slot *slot, uint32_t type, uint64_t start, uint64_t end, uint32_t flags) {
    if (!hw_g.log || hw_g.disabled || !hw_owned()) return;
    hw_rec_busy *rec = (hw_rec_busy *)hw_log_reserve(hw_g.log, sizeof *rec);
    if (!rec) return;
    rec->tid = slot->tid;
    rec->flags = flags;
    rec->busy_seq = slot->busy_seq;
    rec->start_ns = start;
    rec->end_ns = end;
    rec->os_tid = slot->os_tid;
    rec->pool_queue = slot->job_queue;
    hw_log_commit(&rec->h, type);
}

void hw_flush_frames(hw_slot *slot) {
    uint32_t n = slot->frame_count;
    if (n > HW_FRAME_BATCH) n = HW_FRAME_BATCH; // the record holds a batch, no more
    if (n == 0 || !hw_g.log || hw_g.disabled || !hw_owned()) return;
    hw_rec_frames *rec = (hw_rec_frames *)hw_log_reserve(hw_g.log, sizeof *rec);
    if (rec) {
        rec->tid = slot->tid;
        rec->count = n;
        memcpy(rec->start_ns, slot->frame_start, n * sizeof rec->start_ns[0]);
        memcpy(rec->duration_us, slot->frame_us, n * sizeof rec->duration_us[0]);
        hw_log_commit(&rec->h, HW_REC_FRAMES);
    }
    slot->frame_count = 0;
}
