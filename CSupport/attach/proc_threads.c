// What attach reads from /proc about another process: each thread's syscall
// (the heartbeat), state and name, the thread list, the memory map (stack
// bounds and code ranges), and whether we may look at all.
//
// /proc/PID/task/TID/syscall needs PTRACE_MODE_ATTACH, the same permission as
// ptrace itself, so its first read is also the access check.
#include "attach_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

uint64_t hwa_now_ns(void) { return hw_os_monotonic_ns(); }

int hwa_open_task_file(pid_t pid, pid_t tid, const char *name) {
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task/%d/%s", (int)pid, (int)tid, name);
    return open(path, O_RDONLY | O_CLOEXEC);
}

static ssize_t read_task_file(pid_t pid, pid_t tid, const char *name, char *buf, size_t len) {
    int fd = hwa_open_task_file(pid, tid, name);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, len - 1);
    int saved = errno;
    close(fd);
    errno = saved;
    if (n >= 0) buf[n] = 0;
    return n;
}

hwa_probe hwa_probe_fd(int fd) {
    hw_os_syscall s = hw_os_read_syscall(fd);
    hwa_probe p = { .activity = HWA_OTHER, .nr = s.nr, .sp = s.sp, .pc = s.pc };
    memcpy(p.args, s.args, sizeof p.args);
    switch (s.activity) {
    case HW_OS_GONE: p.activity = HWA_GONE; break;
    case HW_OS_RUNNING: p.activity = HWA_RUNNING; break;
    case HW_OS_IN_SYSCALL: p.activity = HWA_BLOCKED; break;
    // "-1 sp pc": stopped or faulting, not inside a syscall (sp and pc known).
    case HW_OS_OUTSIDE_SYSCALL: case HW_OS_UNKNOWN: break;
    }
    return p;
}

char hwa_task_state(pid_t pid, pid_t tid) {
    int fd = hwa_open_task_file(pid, tid, "stat");
    if (fd < 0) return 0;
    hw_os_stat stat;
    int got = hw_os_read_stat(fd, &stat);
    close(fd);
    return got > 0 ? stat.state : 0;
}

bool hwa_task_name(pid_t pid, pid_t tid, char name[16]) {
    char buf[64];
    memset(name, 0, 16);
    ssize_t n = read_task_file(pid, tid, "comm", buf, sizeof buf);
    if (n <= 0) return false;
    if (buf[n - 1] == '\n') buf[n - 1] = 0;
    size_t len = strlen(buf);
    memcpy(name, buf, len > 15 ? 15 : len);
    return true;
}

typedef struct { pid_t *out; int count, max; } task_list;

static bool add_task(pid_t tid, void *ctx) {
    task_list *list = ctx;
    if (list->count >= list->max) return false;
    list->out[list->count++] = tid;
    return true;
}

int hwa_list_tasks(pid_t pid, pid_t *out, int max) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    task_list list = { out, 0, max };
    hw_os_scan_tasks(fd, add_task, &list);
    close(fd);
    int count = list.count;
    // Ascending tids: the main thread first, then threads in creation order (mostly).
    for (int i = 1; i < count; i++)
        for (int j = i; j > 0 && out[j - 1] > out[j]; j--) { pid_t t = out[j]; out[j] = out[j - 1]; out[j - 1] = t; }
    return count;
}

int hwa_thread_count(int stat_fd) {
    hw_os_stat stat;
    if (hw_os_read_stat(stat_fd, &stat) <= 0) return -1;
    char state = stat.state;
    int threads = stat.num_threads;
    // A zombie leader with other threads alive is not the process's end: the
    // main thread called pthread_exit, or another thread's execve is ending it (de_thread).
    if ((state == 'Z' || state == 'X') && threads <= 1) return -1;
    return threads;
}

static void push(hwa_range **list, size_t *count, size_t *cap, uint64_t lo, uint64_t hi) {
    if (*count == *cap) {
        size_t grown = *cap ? *cap * 2 : 64;
        hwa_range *r = realloc(*list, grown * sizeof *r);
        if (!r) return;
        *list = r;
        *cap = grown;
    }
    (*list)[(*count)++] = (hwa_range){ lo, hi };
}

typedef struct { hwa_maps *maps; size_t code_cap, all_cap; } maps_growth;

static bool add_mapping(const hw_os_mapping *m, void *ctx) {
    maps_growth *g = ctx;
    push(&g->maps->all, &g->maps->all_count, &g->all_cap, m->start, m->end);
    if (m->perms[2] == 'x') push(&g->maps->code, &g->maps->code_count, &g->code_cap, m->start, m->end);
    return true;
}

bool hwa_read_maps(pid_t pid, hwa_maps *maps) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    hwa_free_maps(maps);
    maps_growth growth = { .maps = maps };
    hw_os_scan_maps(fd, add_mapping, &growth);
    close(fd);
    return true;
}

void hwa_free_maps(hwa_maps *maps) {
    free(maps->code);
    free(maps->all);
    memset(maps, 0, sizeof *maps);
}

static const hwa_range *find(const hwa_range *list, size_t count, uint64_t addr) {
    size_t lo = 0, hi = count; // the kernel lists mappings in address order
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (list[mid].lo <= addr) lo = mid + 1; else hi = mid;
    }
    if (lo == 0) return NULL;
    return addr < list[lo - 1].hi ? &list[lo - 1] : NULL;
}

bool hwa_in_code(const hwa_maps *maps, uint64_t addr) { return find(maps->code, maps->code_count, addr) != NULL; }

bool hwa_mapping_of(const hwa_maps *maps, uint64_t addr, hwa_range *out) {
    const hwa_range *r = find(maps->all, maps->all_count, addr);
    if (!r) return false;
    *out = *r;
    return true;
}

static bool read_status(pid_t pid, pid_t tid, char *buf, size_t len) {
    int fd = hwa_open_task_file(pid, tid, "status");
    if (fd < 0) return false;
    ssize_t n = hw_os_read_status(fd, buf, len);
    close(fd);
    return n > 0;
}

static unsigned long long status_mask(const char *buf, const char *key) {
    unsigned long long mask = 0;
    return hw_os_status_field(buf, key, 16, &mask) ? mask : 0;
}

/// Signals whose default action is to ignore them (the kernel's sig_kernel_ignore).
#define HWA_DEFAULT_IGNORED ((1ull << (SIGCHLD - 1)) | (1ull << (SIGWINCH - 1)) | (1ull << (SIGURG - 1)) \
                             | (1ull << (SIGCONT - 1)))

/// The signals the process drops on arrival: SIG_IGN ones, and default-ignored
/// ones without a handler. The kernel drops them at send time only for an
/// untraced thread; for one we hold they are queued, so they must not count
/// as the program's own.
static unsigned long long ignored_mask(const char *status) {
    unsigned long long caught = status_mask(status, "SigCgt:");
    return status_mask(status, "SigIgn:") | (HWA_DEFAULT_IGNORED & ~caught);
}

bool hwa_signal_pending(pid_t pid, pid_t tid) {
    char buf[4096];
    if (!read_status(pid, tid, buf, sizeof buf)) return true; // unsure: assume yes
    unsigned long long pending = status_mask(buf, "SigPnd:") | status_mask(buf, "ShdPnd:");
    return (pending & ~status_mask(buf, "SigBlk:") & ~ignored_mask(buf)) != 0;
}

bool hwa_signal_ignored(pid_t pid, pid_t tid, int sig) {
    char buf[4096];
    if (sig <= 0 || sig > 64 || !read_status(pid, tid, buf, sizeof buf)) return false; // unsure: deliver
    return (ignored_mask(buf) >> (sig - 1)) & 1;
}

pid_t hwa_tracer_of(pid_t pid, pid_t tid) {
    char buf[4096];
    unsigned long long tracer;
    if (!read_status(pid, tid, buf, sizeof buf)) return -1;
    return hw_os_status_field(buf, "TracerPid:", 10, &tracer) ? (pid_t)tracer : -1;
}

static uid_t process_uid(pid_t pid) {
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%d", (int)pid);
    return stat(path, &st) == 0 ? st.st_uid : (uid_t)-1;
}

static int yama_scope(void) {
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
    if (!f) return -1;
    int scope = -1;
    if (fscanf(f, "%d", &scope) != 1) scope = -1;
    fclose(f);
    return scope;
}

int hwa_check_access(int32_t pid, char *why, size_t why_len) {
    if (pid <= 0 || (kill(pid, 0) != 0 && errno == ESRCH)) {
        snprintf(why, why_len, "no process with pid %d", (int)pid);
        return HWA_ACCESS_NO_PROCESS;
    }
    char state = hwa_task_state(pid, pid);
    if (state == 'Z' || state == 'X') {
        snprintf(why, why_len, "process %d has exited (zombie)", (int)pid);
        return HWA_ACCESS_NO_PROCESS;
    }
    if (pid == getpid()) {
        snprintf(why, why_len, "process %d is hangwatch itself", (int)pid);
        return HWA_ACCESS_DENIED;
    }
    int fd = hwa_open_task_file(pid, pid, "syscall");
    if (fd >= 0) {
        char buf[8];
        ssize_t n = pread(fd, buf, sizeof buf, 0);
        int err = errno;
        close(fd);
        if (n > 0) return HWA_ACCESS_OK;
        errno = err;
    }
    if (errno == ESRCH || errno == ENOENT) {
        snprintf(why, why_len, "no process with pid %d", (int)pid);
        return HWA_ACCESS_NO_PROCESS;
    }
    uid_t owner = process_uid(pid);
    if (owner != (uid_t)-1 && owner != geteuid() && geteuid() != 0) {
        snprintf(why, why_len, "process %d belongs to another user (uid %u): attaching needs that user or CAP_SYS_PTRACE",
                 (int)pid, (unsigned)owner);
        return HWA_ACCESS_OTHER_USER;
    }
    int scope = yama_scope();
    if (scope >= 1) {
        snprintf(why, why_len, "attaching to process %d was refused by Yama (kernel.yama.ptrace_scope = %d); "
                 "run as root, grant CAP_SYS_PTRACE, or set ptrace_scope to 0", (int)pid, scope);
        return HWA_ACCESS_PTRACE_SCOPE;
    }
    snprintf(why, why_len, "attaching to process %d was refused (%s): it may be non-dumpable or protected by a security module",
             (int)pid, strerror(errno));
    return HWA_ACCESS_DENIED;
}

void hwa_block_sigchld(void) {
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    pthread_sigmask(SIG_BLOCK, &chld, NULL);
}
