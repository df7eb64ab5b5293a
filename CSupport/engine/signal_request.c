// Our own SIGPROFs: sent to one thread with rt_tgsigqueueinfo and a cookie
// in si_value (a sample, an identify question, a lock owner's sample), so
// the handler tells them from any other SIGPROF.
#include "engine_internal.h"

#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

// SIGNAL-SAFE.
bool hw_signal_is_ours(const void *siginfo) {
    const siginfo_t *si = siginfo;
    return si && si->si_code == SI_QUEUE && si->si_pid == hw_g.pid
        && (si->si_value.sival_int == HW_SAMPLE_COOKIE || si->si_value.sival_int == HW_IDENTIFY_COOKIE
            || si->si_value.sival_int == HW_OWNER_COOKIE);
}

static bool send_cookie(pid_t tid, int cookie) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = SIGPROF;
    si.si_code = SI_QUEUE;
    si.si_pid = hw_g.pid;
    si.si_uid = getuid();
    si.si_value.sival_int = cookie;
    return syscall(SYS_rt_tgsigqueueinfo, hw_g.pid, tid, SIGPROF, &si) == 0;
}

bool hw_signal_request(pid_t tid) { return send_cookie(tid, HW_SAMPLE_COOKIE); }
bool hw_signal_request_identify(pid_t tid) { return send_cookie(tid, HW_IDENTIFY_COOKIE); }
