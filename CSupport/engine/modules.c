// The module map: every loaded ELF image with its load bias, address range
// and GNU build-id, logged so the reader can unwind and symbolicate after the
// process is gone, and can refuse a file that was rebuilt since.
// Runs on ordinary threads only (dl_iterate_phdr takes the loader lock).
#include "engine_internal.h"

#include <elf.h>
#include <limits.h>
#include <stdio.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#define HW_MAX_KNOWN_MODULES 1024

static struct { uint64_t bias, start; } known[HW_MAX_KNOWN_MODULES];
static uint32_t known_count;
static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;

static bool already_logged(uint64_t bias, uint64_t start) {
    for (uint32_t i = 0; i < known_count; i++)
        if (known[i].bias == bias && known[i].start == start) return true;
    if (known_count < HW_MAX_KNOWN_MODULES) {
        known[known_count].bias = bias;
        known[known_count].start = start;
        known_count++;
    }
    return false;
}

static uint32_t find_build_id(const struct dl_phdr_info *info, uint8_t out[32]) {
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE) continue;
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        const uint8_t *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *note = (const ElfW(Nhdr) *)p;
            const uint8_t *name = p + sizeof *note;
            const uint8_t *desc = name + ((note->n_namesz + 3) & ~3u);
            if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
                uint32_t len = note->n_descsz > 32 ? 32 : note->n_descsz;
                memcpy(out, desc, len);
                return len;
            }
            p = desc + ((note->n_descsz + 3) & ~3u);
        }
    }
    return 0;
}

static int log_one(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    hw_log_header *log = ((void **)data)[0];
    uint32_t generation = *(uint32_t *)((void **)data)[1];
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uint64_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo) lo = a;
        if (a + ph->p_memsz > hi) hi = a + ph->p_memsz;
    }
    if (lo >= hi || already_logged(info->dlpi_addr, lo)) return 0;

    char path[PATH_MAX];
    uint32_t flags = 0;
    const char *name = info->dlpi_name;
    if (!name || !*name) {
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        path[n > 0 ? n : 0] = 0;
        flags |= HW_MODULE_MAIN;
    } else {
        snprintf(path, sizeof path, "%s", name);
        if (strstr(name, "linux-vdso") || strstr(name, "linux-gate")) flags |= HW_MODULE_VDSO;
        if (strstr(name, "libhangwatch-agent")) flags |= HW_MODULE_AGENT;
    }
    uint32_t path_len = (uint32_t)strlen(path) + 1;
    hw_rec_module *rec = (hw_rec_module *)hw_log_reserve(log, (uint32_t)(sizeof *rec + path_len));
    if (!rec) return 0;
    rec->generation = generation;
    rec->flags = flags;
    rec->bias = info->dlpi_addr;
    rec->start = lo;
    rec->end = hi;
    rec->build_id_len = find_build_id(info, rec->build_id);
    rec->path_len = path_len;
    memcpy(rec->path, path, path_len);
    hw_log_commit(&rec->h, HW_REC_MODULE);
    return 0;
}

void hw_modules_record(hw_log_header *log, uint32_t generation) {
    if (!log) return;
    pthread_mutex_lock(&modules_lock);
    void *data[2] = { log, &generation };
    dl_iterate_phdr(log_one, data);
    pthread_mutex_unlock(&modules_lock);
}

static int modules_open(void) {
    hw_modules_record(hw_g.log, hw_g.generation);
    return 0;
}

const hw_subsystem hw_modules_subsystem = { .name = "modules", .open = modules_open };
