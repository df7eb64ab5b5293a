// CPU throttling by the cgroup's bandwidth controller (a container's CPU
// limit, systemd's CPUQuota=): once the group has spent its quota for the
// period, none of its threads runs until the next period. The kernel counts
// it per group in cpu.stat: on cgroup v2 `nr_throttled` and `throttled_usec`,
// on v1 the cpu controller's `nr_throttled` and `throttled_time` (ns); the
// limit is cpu.max (v2) or cpu.cfs_quota_us and cpu.cfs_period_us (v1).
// throttled time sums over the group's per-CPU run queues, so a group with
// threads runnable on two CPUs can count up to twice the wall time.
//
// The watchdog reads cpu.stat when a sampling session starts, when its hang
// is announced and when it ends, and writes each later reading with the
// first (HW_REC_CPU_LIMIT), with /proc/loadavg's load at that moment. The
// files are found once, at the watchdog's start, from /proc/self/cgroup (the
// group the process is in then) under /sys/fs/cgroup. In a private
// descriptor table (hangwatch run) they stay open; in the program's own table
// (the library) each reading opens and closes them, so no descriptor of ours
// sits where the program's close_range could take it or a number it was
// given could be ours. A refused open (a seccomp filter, a sandbox without
// /sys) leaves the figure out, and the record says why.
#include "engine_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { LIMIT_STAT, LIMIT_QUOTA, LIMIT_PERIOD, LIMIT_LOADAVG, LIMIT_FILES };

static struct {
    uint32_t version;            // HW_CGROUP_*
    uint32_t err;                // why no cgroup file could be read
    char path[LIMIT_FILES][256]; // empty: not used (LIMIT_PERIOD on v2)
    int fd[LIMIT_FILES];
    uint32_t cpus;
} limit = { .fd = { -1, -1, -1, -1 } };

/// The group path of the controller line in /proc/self/cgroup: v1 `N:cpu,cpuacct:/path`
/// (a list holding `cpu`), v2 `0::/path`. A v1 cpu controller wins over v2 (hybrid hosts).
static uint32_t find_group(char *out, size_t size) {
    int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return HW_CGROUP_NONE;
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return HW_CGROUP_NONE;
    buf[n] = 0;
    uint32_t found = HW_CGROUP_NONE;
    for (char *line = buf, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        *c2 = 0;
        const char *controllers = c1 + 1, *path = c2 + 1;
        if (*controllers == 0 && found == HW_CGROUP_NONE) {
            snprintf(out, size, "%s", path);
            found = HW_CGROUP_V2;
            continue;
        }
        for (const char *c = controllers; c && *c;) {
            const char *comma = strchr(c, ',');
            size_t len = comma ? (size_t)(comma - c) : strlen(c);
            if (len == 3 && strncmp(c, "cpu", 3) == 0) {
                snprintf(out, size, "%s", path);
                return HW_CGROUP_V1;
            }
            c = comma ? comma + 1 : NULL;
        }
    }
    return found;
}

static int open_file(int which) {
    if (limit.fd[which] >= 0) return limit.fd[which];
    if (!limit.path[which][0]) return -1;
    int fd = hw_proc_keep_away_fd(open(limit.path[which], O_RDONLY | O_CLOEXEC));
    if (fd >= 0 && hw_proc_fds_private()) limit.fd[which] = fd;
    if (fd < 0 && which == LIMIT_STAT) limit.err = (uint32_t)errno;
    return fd;
}

static ssize_t read_file(int which, char *buf, size_t size) {
    int fd = open_file(which);
    if (fd < 0) return -1;
    ssize_t n = pread(fd, buf, size - 1, 0);
    if (n < 0 && which == LIMIT_STAT) limit.err = (uint32_t)errno;
    if (fd != limit.fd[which]) close(fd);
    if (n >= 0) buf[n] = 0;
    return n;
}

void hw_cpu_limit_open(void) {
    char group[200];
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    limit.cpus = cpus > 0 ? (uint32_t)cpus : 0;
    snprintf(limit.path[LIMIT_LOADAVG], sizeof limit.path[0], "/proc/loadavg");
    limit.version = find_group(group, sizeof group);
    if (strcmp(group, "/") == 0) group[0] = 0;
    const char *v1 = "/sys/fs/cgroup/cpu";
    if (limit.version == HW_CGROUP_V1 && access(v1, F_OK) != 0) v1 = "/sys/fs/cgroup/cpu,cpuacct";
    switch (limit.version) {
    case HW_CGROUP_V1:
        snprintf(limit.path[LIMIT_STAT], sizeof limit.path[0], "%s%s/cpu.stat", v1, group);
        snprintf(limit.path[LIMIT_QUOTA], sizeof limit.path[0], "%s%s/cpu.cfs_quota_us", v1, group);
        snprintf(limit.path[LIMIT_PERIOD], sizeof limit.path[0], "%s%s/cpu.cfs_period_us", v1, group);
        break;
    case HW_CGROUP_V2:
        snprintf(limit.path[LIMIT_STAT], sizeof limit.path[0], "/sys/fs/cgroup%s/cpu.stat", group);
        snprintf(limit.path[LIMIT_QUOTA], sizeof limit.path[0], "/sys/fs/cgroup%s/cpu.max", group);
        break;
    default:
        limit.err = ENOENT;
        return;
    }
    for (int i = 0; i < LIMIT_FILES; i++) open_file(i); // kept when the table is private
}

void hw_cpu_limit_close(void) {
    for (int i = 0; i < LIMIT_FILES; i++) {
        if (limit.fd[i] >= 0) close(limit.fd[i]);
        limit.fd[i] = -1;
    }
}

static bool field(const char *text, const char *name, uint64_t *value) {
    size_t len = strlen(name);
    for (const char *at = text; (at = strstr(at, name)); at += len) {
        if ((at == text || at[-1] == '\n') && at[len] == ' ') {
            *value = strtoull(at + len + 1, NULL, 10);
            return true;
        }
    }
    return false;
}

/// Throttled time (ns) and count from cpu.stat; false when unreadable.
static bool read_stat(uint64_t *throttled_ns, uint64_t *nr) {
    char buf[1024];
    if (limit.version == HW_CGROUP_NONE || read_file(LIMIT_STAT, buf, sizeof buf) <= 0) return false;
    uint64_t t;
    if (!field(buf, "nr_throttled", nr)) return false;
    if (limit.version == HW_CGROUP_V1 && field(buf, "throttled_time", &t)) { *throttled_ns = t; return true; }
    if (limit.version == HW_CGROUP_V2 && field(buf, "throttled_usec", &t)) { *throttled_ns = t * 1000; return true; }
    return false;
}

static void read_quota(uint64_t *quota_us, uint64_t *period_us) {
    char buf[64];
    *quota_us = HW_CPU_QUOTA_NONE;
    *period_us = 0;
    if (read_file(LIMIT_QUOTA, buf, sizeof buf) <= 0) return;
    if (limit.version == HW_CGROUP_V2) { // "max 100000" or "20000 100000"
        char *end;
        unsigned long long q = strtoull(buf, &end, 10);
        if (end != buf) *quota_us = q;
        const char *space = strchr(buf, ' ');
        if (space) *period_us = strtoull(space + 1, NULL, 10);
        return;
    }
    long long q = strtoll(buf, NULL, 10); // -1: no quota
    if (q > 0) *quota_us = (uint64_t)q;
    char pbuf[64];
    if (read_file(LIMIT_PERIOD, pbuf, sizeof pbuf) > 0) *period_us = strtoull(pbuf, NULL, 10);
}

/// "0.52 0.41 0.30 3/250 1234": parsed by hand, since sscanf's %f follows the
/// program's LC_NUMERIC (a decimal comma would refuse the figure).
static void read_load(uint32_t *centi, uint32_t *runnable) {
    char buf[128];
    *centi = *runnable = UINT32_MAX;
    if (read_file(LIMIT_LOADAVG, buf, sizeof buf) <= 0) return;
    char *end;
    unsigned long whole = strtoul(buf, &end, 10);
    if (end == buf || *end != '.') return;
    unsigned long hundredths = strtoul(end + 1, &end, 10);
    *centi = (uint32_t)(whole * 100 + hundredths);
    const char *fourth = buf;
    for (int spaces = 0; spaces < 3 && fourth; spaces++) {
        fourth = strchr(fourth, ' ');
        if (fourth) fourth++;
    }
    if (fourth) *runnable = (uint32_t)strtoul(fourth, NULL, 10);
}

void hw_cpu_limit_session_start(hw_slot *slot) {
    hw_session *ses = &slot->session;
    ses->limit_ns = hw_now_ns();
    ses->limit_read = read_stat(&ses->limit_throttled_ns, &ses->limit_nr_throttled);
}

void hw_cpu_limit_write(hw_slot *slot) {
    hw_session *ses = &slot->session;
    uint64_t now = hw_now_ns(), throttled = 0, nr = 0;
    bool read = ses->limit_read && read_stat(&throttled, &nr);
    if (!hw_g.log || hw_g.disabled || !hw_owned()) return;
    hw_rec_cpu_limit *rec = (hw_rec_cpu_limit *)hw_log_reserve(hw_g.log, sizeof *rec);
    if (!rec) return;
    rec->tid = slot->tid;
    rec->version = read ? limit.version : HW_CGROUP_NONE;
    rec->busy_seq = ses->busy_seq;
    rec->first_ns = ses->limit_ns;
    rec->last_ns = now;
    rec->first_throttled_ns = ses->limit_throttled_ns;
    rec->last_throttled_ns = throttled;
    rec->first_nr_throttled = ses->limit_nr_throttled;
    rec->last_nr_throttled = nr;
    if (read) read_quota(&rec->quota_us, &rec->period_us);
    else { rec->quota_us = HW_CPU_QUOTA_NONE; rec->period_us = 0; }
    rec->err = read ? 0 : (limit.err ? limit.err : ENOENT);
    read_load(&rec->load_centi, &rec->runnable);
    rec->cpus = limit.cpus;
    hw_log_commit(&rec->h, HW_REC_CPU_LIMIT);
}
