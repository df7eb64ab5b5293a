// Everything the watchdog learns from /proc about the threads it samples.
//
// The descriptors live in the watchdog's own descriptor table: the watchdog
// unshares CLONE_FILES and closes its copy of the program's descriptors first
// (agent mode), so an open() here never takes a number the program would have
// been given, and a program's close_range/closefrom can never hit ours.
// In library mode the watchdog must keep the shared table (it posts probes
// to libdispatch, whose new workers would inherit a private table); there
// descriptors are moved high and exist only while a hang is sampled.
//
// /proc/self/task/TID/syscall tells running from blocked and gives a blocked
// thread's syscall, stack pointer and pc. After a privilege drop (setuid)
// it cannot be opened any more, but a descriptor opened before still reads,
// and /proc/self/task/TID/stat (state letter only) stays readable.
#include "engine_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static bool private_table;

void hw_proc_private_fds(void) {
    if (syscall(SYS_unshare, CLONE_FILES) != 0) return;
    // Our copy of the program's descriptors would keep its pipes and sockets
    // open after the program closes them: drop them all, in our table only.
    if (syscall(SYS_close_range, 0u, ~0u, 0u) != 0) {
        for (int fd = 0; fd < 65536; fd++) close(fd);
    }
    private_table = true;
}

bool hw_proc_fds_private(void) { return private_table; }

int hw_proc_open_task_file(pid_t tid, const char *name) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/%s", (int)tid, name);
    return hw_proc_keep_away_fd(open(path, O_RDONLY | O_CLOEXEC));
}

int hw_proc_keep_away_fd(int fd) {
    if (fd < 0 || private_table) return fd;
    // Shared table: keep away from the low numbers the program hands out.
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 900);
    if (high >= 0) { close(fd); fd = high; }
    return fd;
}

void hw_proc_session_open(hw_session *ses, pid_t tid) {
    ses->syscall_fd = tid > 0 ? hw_proc_open_task_file(tid, "syscall") : -1;
    ses->stat_fd = tid > 0 ? hw_proc_open_task_file(tid, "stat") : -1;
}

void hw_proc_session_close(hw_session *ses) {
    if (ses->syscall_fd >= 0) close(ses->syscall_fd);
    if (ses->stat_fd >= 0) close(ses->stat_fd);
    ses->syscall_fd = ses->stat_fd = -1;
}

static bool gone(int err) { return err == ESRCH || err == ENOENT; }

/// The thread's state letter, from its stat file.
static hw_thread_probe from_stat(int fd) {
    hw_thread_probe p = { .activity = HW_ACTIVITY_UNKNOWN };
    hw_os_stat stat;
    int got = hw_os_read_stat(fd, &stat);
    if (got < 0 && gone(errno)) p.activity = HW_ACTIVITY_GONE;
    if (got <= 0) return p;
    switch (stat.state) {
    case 'R': p.activity = HW_ACTIVITY_RUNNING; break;
    case 'S': case 'D': p.activity = HW_ACTIVITY_BLOCKED; break;
    case 'Z': case 'X': p.activity = HW_ACTIVITY_GONE; break;
    default: break; // stopped or traced: not a state to signal in
    }
    return p;
}

static hw_thread_probe from_syscall(int fd) {
    hw_thread_probe p = { .activity = HW_ACTIVITY_UNKNOWN };
    hw_os_syscall s = hw_os_read_syscall(fd);
    switch (s.activity) {
    case HW_OS_GONE: p.activity = HW_ACTIVITY_GONE; break;
    case HW_OS_RUNNING: p.activity = HW_ACTIVITY_RUNNING; break;
    case HW_OS_IN_SYSCALL:
        p.activity = HW_ACTIVITY_BLOCKED;
        p.exact = true;
        p.nr = s.nr;
        p.sp = s.sp;
        p.pc = s.pc;
        for (int i = 0; i < 6; i++) p.args[i] = s.args[i];
        break;
    // "-1 sp pc": blocked but not in a syscall (a fault, a stop): no syscall to name.
    case HW_OS_OUTSIDE_SYSCALL: case HW_OS_UNKNOWN: break;
    }
    return p;
}

hw_thread_probe hw_proc_probe(hw_session *ses) {
    if (ses->syscall_fd >= 0) {
        hw_thread_probe p = from_syscall(ses->syscall_fd);
        if (p.activity != HW_ACTIVITY_UNKNOWN) return p;
    }
    if (ses->stat_fd >= 0) return from_stat(ses->stat_fd);
    return (hw_thread_probe){ .activity = HW_ACTIVITY_UNKNOWN };
}

hw_thread_probe hw_proc_probe_tid(pid_t tid) {
    hw_session tmp;
    hw_proc_session_open(&tmp, tid);
    hw_thread_probe p = hw_proc_probe(&tmp);
    hw_proc_session_close(&tmp);
    return p;
}

bool hw_proc_status_field(pid_t tid, const char *field, int base, unsigned long long *value) {
    int fd = hw_proc_open_task_file(tid, "status");
    if (fd < 0) return false;
    bool found = hw_proc_status_field_fd(fd, field, base, value);
    close(fd);
    return found;
}

bool hw_proc_status_field_fd(int fd, const char *field, int base, unsigned long long *value) {
    char buf[4096];
    return hw_os_read_status(fd, buf, sizeof buf) > 0 && hw_os_status_field(buf, field, base, value);
}

bool hw_proc_blocks_sigprof(pid_t tid) {
    unsigned long long mask = 0;
    if (!hw_proc_status_field(tid, "SigBlk:", 16, &mask)) return false;
    return (mask >> (SIGPROF - 1)) & 1;
}

typedef struct { uint64_t addr; hw_os_mapping found; bool any; } mapping_search;

static bool holds_addr(const hw_os_mapping *m, void *ctx) {
    mapping_search *search = ctx;
    if (m->start <= search->addr && search->addr < m->end) {
        search->found = *m;
        search->any = true;
        return false;
    }
    return true;
}

bool hw_proc_stack_mapping_of(uint64_t addr, uint64_t *lo, uint64_t *hi) {
    int fd = hw_proc_keep_away_fd(open("/proc/self/maps", O_RDONLY | O_CLOEXEC));
    if (fd < 0) return false;
    mapping_search search = { .addr = addr };
    hw_os_scan_maps(fd, holds_addr, &search);
    close(fd);
    if (!search.any) return false;
    const hw_os_mapping *m = &search.found;
    // A thread's stack: a readable, writable anonymous mapping (pthread's),
    // or the main one's. A stack the program placed in the heap or a file is
    // not bounded by its mapping: no bounds rather than wrong ones. (An
    // anonymous one may still be wider than the stack, merged with a
    // neighbour or a large malloc block: the bounds serve only copies that
    // cannot fault, process_vm_readv.)
    bool stack = m->perms[0] == 'r' && m->perms[1] == 'w'
        && (m->path_len == 0 || (m->path_len == 7 && memcmp(m->path, "[stack]", 7) == 0));
    if (stack) { *lo = m->start; *hi = m->end; }
    return stack;
}
