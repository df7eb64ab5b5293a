// Ends the reader's park when the program exits. While nothing is sampled the
// CLI's reader sleeps on the log's futex (reader_park.c), where a pidfd cannot
// wake it; this thread sleeps in poll() on the pidfd instead, and on the exit
// sets its flag and wakes the reader. The flag is set before the wake, and the
// reader reads it after announcing its park, so an exit is never slept through.
#include "hangwatch_cli_support.h"
#include "hangwatch_engine.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

struct hw_cli_exit_watch {
    pthread_t thread;
    int pidfd;
    hw_log_header *log;
    uint32_t exited;
};

static void *watch_main(void *arg) {
    hw_cli_exit_watch *w = arg;
    struct pollfd exited = { .fd = w->pidfd, .events = POLLIN };
    // Signals are blocked here (they are the main thread's to forward), so
    // only an error ends the wait early: then the flag is set all the same,
    // and the reader goes back to the timed polls it made before parking.
    while (poll(&exited, 1, -1) == 0) {}
    __atomic_store_n(&w->exited, 1, __ATOMIC_SEQ_CST);
    hw_log_reader_wake(w->log);
    return NULL;
}

hw_cli_exit_watch *hw_cli_exit_watch_start(int pidfd, hw_log_header *log) {
    if (pidfd < 0 || !log) return NULL;
    hw_cli_exit_watch *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->pidfd = pidfd;
    w->log = log;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&w->thread, NULL, watch_main, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) { free(w); return NULL; }
    return w;
}

const uint32_t *hw_cli_exit_watch_flag(const hw_cli_exit_watch *w) { return &w->exited; }

void hw_cli_exit_watch_finish(hw_cli_exit_watch *w) {
    if (!w) return;
    pthread_join(w->thread, NULL);
    free(w);
}
