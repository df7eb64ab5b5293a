// The session record that opens each engine start in the log: a new
// generation, and the sampling sessions an image that exec replaced left
// counted set back to none (its threads are gone).
#include "engine_internal.h"

static int session_open(void) {
    hw_log_header *log = hw_g.log;
    hw_g.generation = __atomic_add_fetch(&log->generation, 1, __ATOMIC_ACQ_REL);
    if (hw_owned()) hw_log_sampling_reset(log);
    hw_g.start_ns = hw_now_ns();
    hw_rec_session *rec = (hw_rec_session *)hw_log_reserve(log, sizeof *rec);
    if (!rec) return 0;
    rec->generation = hw_g.generation;
    rec->pid = hw_g.pid;
    rec->start_ns = hw_g.start_ns;
    hw_log_commit(&rec->h, HW_REC_SESSION);
    return 0;
}

const hw_subsystem hw_session_record_subsystem = { .name = "session record", .open = session_open };
