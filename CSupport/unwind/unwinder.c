// libunwind's remote API over a sample record: registers come from the
// record, stack reads from its copied slice, and code/unwind-table reads from
// the ELF images mapped read-only here. Nothing touches the sampled process.
#include "hangwatch_unwind.h"
#include "unwind_internal.h"

#include <elf.h>
#include <stdbool.h>
#include <fcntl.h>
#include <libunwind.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

// Exported by libunwind but not declared in its public headers.
extern int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
                                              unw_proc_info_t *pi, int need_unwind_info, void *arg);

struct hw_unwinder {
    unw_addr_space_t as;
    hw_module *modules; // sorted by start
    size_t count, cap;
    hw_cfi_table rules; // the flat rules, by pc (cfi_rules.c)
    bool verify;        // every flat unwind checked against libunwind's
    hw_unwind_counts counts;
};

typedef struct unwind_ctx {
    hw_unwinder *u;
    const hw_rec_sample *sample;
    bool rbp_given;    // use `rbp` instead of the record's (a frame pointer found by scanning)
    uint64_t rbp;
    uint64_t last_sp;  // out: the stack pointer of the last frame unwind_with reached
    // The innermost frame was at a `ret` and is stepped over by hand: the
    // unwind starts at its caller, at caller_ip (a return address) and caller_sp.
    bool from_caller;
    uint64_t caller_ip, caller_sp;
    // The innermost frame's row follows its epilogue's `pop %rbp` (see
    // hw_cfi_rule.rbp_popped): the word at popped_slot, below the stack
    // pointer and outside the copy, is read as rbp's value now.
    bool rbp_popped;
    uint64_t popped_slot;
} unwind_ctx;

static const hw_module *module_for(const hw_unwinder *u, uint64_t addr) {
    size_t lo = 0, hi = u->count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (u->modules[mid].start <= addr) lo = mid + 1; else hi = mid;
    }
    if (lo == 0) return NULL;
    const hw_module *m = &u->modules[lo - 1];
    return addr < m->end ? m : NULL;
}

/// Reads `len` bytes at runtime address `addr` from the module's file image.
static bool read_module(const hw_module *m, uint64_t addr, void *out, size_t len) {
    size_t avail = 0;
    const uint8_t *p = hw_module_bytes(m, addr, &avail);
    if (!p || avail < len) return false;
    memcpy(out, p, len);
    return true;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg) {
    (void)as;
    if (write) return -UNW_EINVAL;
    const unwind_ctx *ctx = arg;
    const hw_rec_sample *s = ctx->sample;
    // Offsets, never addr + 8: a register near 2^64 would wrap past an end check
    // and send the copy far outside the record (the reader crashed on it).
    uint64_t off = addr - s->stack_addr;
    if (addr >= s->stack_addr && s->stack_len >= sizeof *val && off <= s->stack_len - sizeof *val) {
        memcpy(val, s->stack + off, sizeof *val);
        return 0;
    }
    if (ctx->rbp_popped && addr == ctx->popped_slot) {
        *val = ctx->rbp_given ? ctx->rbp : s->regs[HW_REG_RBP];
        return 0;
    }
    const hw_module *m = module_for(ctx->u, addr);
    if (m && read_module(m, addr, val, sizeof *val)) return 0;
    return -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write, void *arg) {
    (void)as;
    const unwind_ctx *ctx = arg;
    if (reg < 0 || reg >= HW_REG_COUNT) return -UNW_EBADREG;
    if (write) return 0; // only resume would need written registers
    *val = reg == HW_REG_RBP && ctx->rbp_given ? ctx->rbp : ctx->sample->regs[reg];
    // From the caller of a `ret` (see step_over_ret): libunwind looks its
    // first frame up at the pc it is given, so it is given the call's last
    // byte, where a return address is looked up (the pc written is the caller's).
    if (ctx->from_caller && reg == HW_REG_RIP) *val = ctx->caller_ip - 1;
    if (ctx->from_caller && reg == HW_REG_RSP) *val = ctx->caller_sp;
    return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write, void *arg) {
    (void)as; (void)reg; (void)val; (void)write; (void)arg;
    return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg) {
    (void)as; (void)c; (void)arg;
    return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len, unw_word_t *off, void *arg) {
    (void)as; (void)addr; (void)buf; (void)len; (void)off; (void)arg;
    return -UNW_ENOINFO; // symbols are the symbolicator's job
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg) {
    (void)as; (void)addr; (void)arg;
    return -UNW_ENOINFO;
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg) {
    (void)as; (void)arg;
    free(pi->unwind_info);
    pi->unwind_info = NULL;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need_info, void *arg) {
    const unwind_ctx *ctx = arg;
    const hw_module *m = module_for(ctx->u, ip);
    if (!m || !m->has_hdr) return -UNW_ENOINFO;
    // The binary-search table of .eh_frame_hdr, as libunwind's remote table.
    unw_dyn_info_t di = { .format = UNW_INFO_FORMAT_REMOTE_TABLE, .start_ip = m->start, .end_ip = m->end };
    di.u.rti.segbase = m->hdr_addr;
    di.u.rti.table_data = m->table_addr;
    di.u.rti.table_len = m->fde_count * 8 / sizeof(unw_word_t);
    return _Ux86_64_dwarf_search_unwind_table(as, ip, &di, pi, need_info, arg);
}

static unw_accessors_t accessors = {
    .find_proc_info = find_proc_info,
    .put_unwind_info = put_unwind_info,
    .get_dyn_info_list_addr = get_dyn_info_list_addr,
    .access_mem = access_mem,
    .access_reg = access_reg,
    .access_fpreg = access_fpreg,
    .resume = resume,
    .get_proc_name = get_proc_name,
};

hw_unwinder *hw_unwinder_create(void) {
    hw_unwinder *u = calloc(1, sizeof *u);
    if (!u) return NULL;
    u->as = unw_create_addr_space(&accessors, 0);
    if (!u->as) { free(u); return NULL; }
    // The images never change under us, so per-ip unwind rules can be cached.
    unw_set_caching_policy(u->as, UNW_CACHE_GLOBAL);
    return u;
}

static void release_image(hw_module *m) {
    if (!m->image) return;
    if (m->mapped) munmap((void *)m->image, m->image_len);
    else free((void *)m->image);
}

void hw_unwinder_destroy(hw_unwinder *u) {
    if (!u) return;
    for (size_t i = 0; i < u->count; i++) release_image(&u->modules[i]);
    free(u->modules);
    hw_cfi_table_free(&u->rules);
    unw_destroy_addr_space(u->as);
    free(u);
}

static bool build_id_matches(const hw_module *m, const uint8_t *want, uint32_t want_len) {
    if (!want || want_len == 0) return true;
    for (int i = 0; i < m->phnum; i++) {
        const Elf64_Phdr *ph = &m->phdrs[i];
        if (ph->p_type != PT_NOTE || ph->p_offset + ph->p_filesz > m->image_len) continue;
        const uint8_t *p = m->image + ph->p_offset, *end = p + ph->p_filesz;
        while (p + sizeof(Elf64_Nhdr) <= end) {
            const Elf64_Nhdr *n = (const Elf64_Nhdr *)p;
            const uint8_t *name = p + sizeof *n;
            const uint8_t *desc = name + ((n->n_namesz + 3) & ~3u);
            if (desc + n->n_descsz > end) break;
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(name, "GNU", 4) == 0)
                return n->n_descsz >= want_len && memcmp(desc, want, want_len) == 0;
            p = desc + ((n->n_descsz + 3) & ~3u);
        }
    }
    return false; // the run had a build-id and this file has none
}

/// Decodes the fixed header of .eh_frame_hdr into a libunwind remote table.
static bool load_eh_frame_hdr(hw_module *m) {
    for (int i = 0; i < m->phnum; i++) {
        const Elf64_Phdr *ph = &m->phdrs[i];
        if (ph->p_type != PT_GNU_EH_FRAME) continue;
        uint8_t hdr[12];
        uint64_t hdr_addr = m->bias + ph->p_vaddr;
        if (!read_module(m, hdr_addr, hdr, sizeof hdr)) return false;
        // version 1; eh_frame_ptr: pcrel|sdata4; fde_count: udata4; table: datarel|sdata4.
        if (hdr[0] != 1 || hdr[1] != 0x1b || hdr[2] != 0x03 || hdr[3] != 0x3b) return false;
        memcpy(&m->fde_count, hdr + 8, 4);
        m->hdr_addr = hdr_addr;
        m->table_addr = hdr_addr + 12;
        m->has_hdr = true;
        return true;
    }
    return false;
}

int hw_unwinder_add_module(hw_unwinder *u, const char *path, const uint8_t *image, size_t image_len,
                           uint64_t bias, uint64_t start, uint64_t end,
                           const uint8_t *build_id, uint32_t build_id_len) {
    hw_module m = { .bias = bias, .start = start, .end = end };
    if (image) {
        uint8_t *copy = malloc(image_len);
        if (!copy) return HW_MODULE_UNREADABLE;
        memcpy(copy, image, image_len);
        m.image = copy;
        m.image_len = image_len;
    } else {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0) return HW_MODULE_UNREADABLE;
        if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) { close(fd); return HW_MODULE_UNREADABLE; }
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        close(fd);
        if (p == MAP_FAILED) return HW_MODULE_UNREADABLE;
        m.image = p;
        m.image_len = (size_t)st.st_size;
        m.mapped = true;
    }
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m.image;
    if (m.image_len < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64
        || eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > m.image_len) {
        release_image(&m);
        return HW_MODULE_UNREADABLE;
    }
    m.phdrs = (const Elf64_Phdr *)(m.image + eh->e_phoff);
    m.phnum = eh->e_phnum;
    if (!build_id_matches(&m, build_id, build_id_len)) { release_image(&m); return HW_MODULE_BUILD_ID_MISMATCH; }
    int status = load_eh_frame_hdr(&m) ? HW_MODULE_OK : HW_MODULE_NO_UNWIND_TABLE;

    if (u->count == u->cap) {
        size_t cap = u->cap ? u->cap * 2 : 32;
        hw_module *grown = realloc(u->modules, cap * sizeof *grown);
        if (!grown) { release_image(&m); return HW_MODULE_UNREADABLE; }
        u->modules = grown;
        u->cap = cap;
    }
    // Insert sorted; a new image at the same start replaces the old (address reuse after dlclose).
    size_t at = 0;
    while (at < u->count && u->modules[at].start < start) at++;
    if (at < u->count && u->modules[at].start == start) {
        release_image(&u->modules[at]);
        u->modules[at] = m;
    } else {
        memmove(&u->modules[at + 1], &u->modules[at], (u->count - at) * sizeof *u->modules);
        u->modules[at] = m;
        u->count++;
    }
    unw_flush_cache(u->as, 0, 0);
    hw_cfi_table_clear(&u->rules);
    return status;
}

static bool stack_word(const hw_rec_sample *s, uint64_t addr, uint64_t *out) {
    uint64_t off = addr - s->stack_addr;
    if (addr < s->stack_addr || s->stack_len < 8 || off > s->stack_len - 8) return false;
    memcpy(out, s->stack + off, 8);
    return true;
}

/// The flat table's rule for `key` (an exact pc, or a return address - 1).
static hw_cfi_rule rule_at(hw_unwinder *u, uint64_t key) {
    hw_cfi_rule r;
    if (!hw_cfi_rule_known(&u->rules, key, &r)) r = hw_cfi_rule_learn(&u->rules, module_for(u, key), key);
    return r;
}

/// Whether the call-frame information ends the chain at the outermost of
/// `n` pcs (the thread's entry: _start, clone3), as the flat rules end it.
static bool ends_at_entry(const unwind_ctx *ctx, const uint64_t *pcs, int n) {
    bool exact = n == 1; // only pcs[0] is an interrupted pc; the others are return addresses
    return rule_at(ctx->u, exact ? pcs[0] : pcs[n - 1] - 1).kind == HW_CFI_END;
}

/// Unwinds with libunwind; *by_cfi says the chain ended where the call-frame
/// information ends it (the thread's entry: _start, clone3). *complete also
/// takes libunwind's own ends without it (a zero frame pointer, a zero return
/// address: musl's thread entries have no call-frame information), except
/// where the frame pointer it saw was the placeholder 0 of a thread blocked in
/// a system call (only /proc's sp and pc are known): that end is no end.
static int unwind_libunwind(unwind_ctx *ctx, uint64_t *pcs, int max, bool *complete, bool *by_cfi) {
    unw_cursor_t cursor;
    int n = 0;
    *complete = *by_cfi = false;
    pcs[n++] = ctx->sample->regs[HW_REG_RIP];
    uint64_t last_sp = ctx->sample->regs[HW_REG_RSP];
    if (ctx->from_caller && n < max) {
        pcs[n++] = ctx->caller_ip;
        last_sp = ctx->caller_sp;
    }
    ctx->last_sp = last_sp;
    if (unw_init_remote(&cursor, ctx->u->as, ctx) < 0) return n;
    const hw_rec_sample *s = ctx->sample;
    bool placeholder_bp = s->source == HW_SRC_BLOCKED_SYSCALL && !ctx->rbp_given && s->regs[HW_REG_RBP] == 0;
    while (n < max) {
        int step = unw_step(&cursor);
        if (step == 0) {
            *by_cfi = ends_at_entry(ctx, pcs, n);
            *complete = *by_cfi || !placeholder_bp;
            break;
        }
        if (step < 0) break;
        unw_word_t ip = 0, sp = 0;
        unw_get_reg(&cursor, UNW_REG_IP, &ip);
        unw_get_reg(&cursor, UNW_REG_SP, &sp);
        if (ip == 0) { *complete = !placeholder_bp; break; } // a zero return address: end of stack
        if (sp < last_sp) break;                  // a corrupt frame going backwards
        last_sp = sp;
        pcs[n++] = ip;
    }
    ctx->last_sp = last_sp;
    return n;
}

/// The same unwind from the flat rules alone, or -1 where they do not
/// decide it alone: a frame of another shape, a stack word outside the copy,
/// a zero return address, or a frame that does not move up the stack. Those
/// cases are libunwind's (its fallbacks and checks apply there), so the two
/// never disagree on what either gives (checked under HANGWATCH_UNWIND_VERIFY).
/// One known exception, libunwind's: its global rule cache is keyed by the
/// address alone, so an address seen first as an interrupted pc (row at pc)
/// and later as a return address (row at pc - 1) gets the first row again;
/// the two rows differ only where a row boundary falls exactly on a return
/// address (after a call that never returns), and the flat table keeps both.
static int unwind_flat(unwind_ctx *ctx, uint64_t *pcs, int max, bool *complete, bool *by_cfi) {
    const hw_rec_sample *s = ctx->sample;
    uint64_t ip = s->regs[HW_REG_RIP], sp = s->regs[HW_REG_RSP];
    uint64_t bp = ctx->rbp_given ? ctx->rbp : s->regs[HW_REG_RBP];
    uint64_t last_cfa = sp;
    int n = 0;
    *complete = *by_cfi = false;
    pcs[n++] = ip;
    bool exact = true;
    if (ctx->from_caller && n < max) {
        ip = ctx->caller_ip;
        sp = last_cfa = ctx->caller_sp;
        pcs[n++] = ip;
        exact = false;
    }
    // The innermost frame is looked up at its pc, the others just before
    // their return address (the call itself), as libunwind does.
    for (uint64_t key = exact ? ip : ip - 1; n < max; key = ip - 1) {
        hw_cfi_rule r = rule_at(ctx->u, key);
        if (r.kind == HW_CFI_END) { *complete = *by_cfi = true; break; }
        if (r.kind != HW_CFI_RSP && r.kind != HW_CFI_RBP) return -1;
        uint64_t cfa = (r.kind == HW_CFI_RSP ? sp : bp) + (uint64_t)(int64_t)r.cfa_off, ra, caller_bp = bp;
        if (!stack_word(s, cfa + (uint64_t)(int64_t)r.ra_off, &ra)) return -1;
        bool popped = exact && r.rbp_popped; // rbp is already the caller's
        if (r.rbp_off && !popped && !stack_word(s, cfa + (uint64_t)(int64_t)r.rbp_off, &caller_bp)) return -1;
        if (ra == 0 || cfa < sp || (ra == ip && cfa == last_cfa)) return -1;
        ip = ra;
        sp = last_cfa = cfa;
        bp = caller_bp;
        pcs[n++] = ip;
        exact = false;
    }
    ctx->last_sp = sp;
    return n;
}

/// Unwinds with `ctx`: from the flat rules when they decide every frame,
/// else with libunwind. Under verification both run and libunwind's answer
/// is kept; a difference is counted (and the first few told on stderr).
static int unwind_with(unwind_ctx *ctx, uint64_t *pcs, int max, bool *complete, bool *by_cfi) {
    hw_unwinder *u = ctx->u;
    int n = unwind_flat(ctx, pcs, max, complete, by_cfi);
    if (n < 0) {
        u->counts.by_libunwind++;
        return unwind_libunwind(ctx, pcs, max, complete, by_cfi);
    }
    u->counts.flat++;
    if (!u->verify) return n;
    uint64_t flat_sp = ctx->last_sp, check_room[256];
    uint64_t *check = max <= 256 ? check_room : malloc((size_t)max * sizeof *check);
    if (!check) return n;
    bool c2, b2;
    int m = unwind_libunwind(ctx, check, max, &c2, &b2);
    bool same = m == n && c2 == *complete && b2 == *by_cfi && ctx->last_sp == flat_sp
                && memcmp(check, pcs, (size_t)m * sizeof *pcs) == 0;
    if (!same) {
        if (u->counts.mismatches++ < 5) {
            int at = 0;
            while (at < n && at < m && pcs[at] == check[at]) at++;
            fprintf(stderr, "hangwatch: unwind check: flat rules gave %d frames (end %d/%d), libunwind %d (end %d/%d); "
                            "first difference at frame %d: %#llx against %#llx\n",
                    n, *complete, *by_cfi, m, c2, b2, at, at < n ? (unsigned long long)pcs[at] : 0ull,
                    at < m ? (unsigned long long)check[at] : 0ull);
        }
        memcpy(pcs, check, (size_t)m * sizeof *pcs);
        *complete = c2;
        *by_cfi = b2;
        n = m;
    }
    if (check != check_room) free(check);
    return n;
}

/// Whether the code just before `ra` in its image is a call instruction, as
/// before every real return address: `call rel32` (E8, 5 bytes), or
/// `call r/m64` (FF /2) of 2, 3, 4, 6 or 7 bytes (register, [reg+disp8],
/// SIB forms, [rip+disp32], [reg+disp32]); a REX prefix before it is covered.
static bool after_call(const hw_module *m, uint64_t ra) {
    uint8_t code[7];
    if (ra < 7 || !read_module(m, ra - 7, code, sizeof code)) return false;
    if (code[2] == 0xe8) return true;
    static const int lengths[] = { 2, 3, 4, 6, 7 };
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        int at = 7 - lengths[i];
        if (code[at] == 0xff && (code[at + 1] & 0x38) == 0x10) return true;
    }
    return false;
}

/// Every one of `pcs` (return addresses) lies in a loaded image, right after a call.
static bool all_return_addresses(const hw_unwinder *u, const uint64_t *pcs, int count) {
    for (int i = 0; i < count; i++) {
        const hw_module *m = module_for(u, pcs[i]);
        if (!m || !after_call(m, pcs[i])) return false;
    }
    return true;
}

/// The call before return address `ra` cannot have made a frame at
/// `callee`: it is a `call rel32` whose target is the start of a function
/// (an FDE begins there) that does not hold `callee`. A call to a PLT stub,
/// or to a thunk that jumps on (a tail call), can look the same; indirect
/// calls are never judged.
static bool cannot_have_called(const hw_unwinder *u, uint64_t ra, uint64_t callee) {
    const hw_module *m = module_for(u, ra);
    uint8_t call[5];
    if (!m || ra < 5 || !read_module(m, ra - 5, call, sizeof call) || call[0] != 0xe8) return false;
    int32_t rel;
    memcpy(&rel, call + 1, sizeof rel);
    uint64_t target = ra + (uint64_t)(int64_t)rel, start, end;
    if (!hw_cfi_function_range(module_for(u, target), target, &start, &end) || start != target) return false;
    return callee < start || callee >= end;
}

/// A stack address that looks like a saved frame pointer: 16-byte aligned
/// (rbp after `push rbp; mov rbp, rsp` at a call boundary) with a return
/// address above it. The word at it (the caller's frame pointer) is not
/// judged: a caller without frame pointers (libc) leaves any value there.
static bool looks_like_frame(const unwind_ctx *ctx, uint64_t a) {
    uint64_t ra;
    if ((a & 15) || !stack_word(ctx->sample, a + 8, &ra)) return false;
    return all_return_addresses(ctx->u, &ra, 1);
}

/// A sample taken at a function's `ret` has every callee-saved register
/// back at its caller's value (the ABI's rule for a return) and the return
/// address at the stack pointer. Its call-frame row can still name a save
/// slot of rbp just below the stack pointer, where the epilogue popped it
/// from: that word is outside every stack copy (it starts at the stack
/// pointer), and both unwinders stopped there, showing the function and its
/// caller as a stack of their own. The frame is stepped over by hand instead,
/// when the word is a return address (right after a call): `push; ret` is a
/// jump (retpolines, swapcontext), whose target is no caller. The caller's
/// stack pointer is the one at its call (8 above), whatever `ret imm16`
/// pops: its call-frame row describes that one.
static void step_over_ret(unwind_ctx *ctx) {
    const hw_rec_sample *s = ctx->sample;
    uint64_t ip = s->regs[HW_REG_RIP], sp = s->regs[HW_REG_RSP], ra;
    const hw_module *m = module_for(ctx->u, ip);
    uint8_t op, next = 0;
    if (!m || !read_module(m, ip, &op, 1)) return;
    bool prefixed = (op == 0xf3 || op == 0xf2) && read_module(m, ip + 1, &next, 1); // rep ret, bnd ret
    bool ret = op == 0xc3 || op == 0xc2 || (prefixed && (next == 0xc3 || next == 0xc2));
    if (!ret || !stack_word(s, sp, &ra) || ra == 0) return;
    const hw_module *caller = module_for(ctx->u, ra);
    if (!caller || !after_call(caller, ra)) return;
    ctx->from_caller = true;
    ctx->caller_ip = ra;
    ctx->caller_sp = sp + 8;
}

/// A sample between an epilogue's `pop %rbp` and its `ret` or tail-call
/// `jmp` (a `pause`, a `vzeroupper`, the jump itself): rbp's slot in the
/// row is the word just popped, below the stack pointer. Both unwinders
/// take rbp's value for it (see hw_cfi_rule.rbp_popped).
static void note_popped_rbp(unwind_ctx *ctx) {
    if (ctx->from_caller) return; // stepped over by hand already
    uint64_t ip = ctx->sample->regs[HW_REG_RIP];
    if (!rule_at(ctx->u, ip).rbp_popped) return;
    ctx->rbp_popped = true;
    ctx->popped_slot = ctx->sample->regs[HW_REG_RSP] - 8;
}

#define HW_FP_SCAN_BYTES 4096u  // how far above the stack pointer a frame pointer is looked for
#define HW_FP_SCAN_TRIES 16     // candidates unwound at most

int hw_unwind_sample(hw_unwinder *u, const hw_rec_sample *sample, uint64_t *pcs, int max, bool *reached_entry) {
    bool ignored;
    if (!reached_entry) reached_entry = &ignored;
    *reached_entry = false;
    if (max <= 0) return 0;
    unwind_ctx ctx = { .u = u, .sample = sample };
    step_over_ret(&ctx);
    note_popped_rbp(&ctx);
    bool complete, by_cfi;
    int n = unwind_with(&ctx, pcs, max, &complete, &by_cfi);
    // A stack of exactly `max` frames stops before its last rule is read.
    *reached_entry = complete || (n == max && ends_at_entry(&ctx, pcs, n));
    // A thread blocked in a syscall we did not wrap is known by /proc's stack
    // and instruction pointers only. A frame whose call-frame information
    // needs the frame pointer (Swift's, and any code built with frame
    // pointers, above a libc stub such as syscall() that never saves it)
    // stops the unwind there. Look for the frame pointer among the stack
    // words, and keep a candidate only when it unwinds to the thread's entry
    // through the frames already found: a wrong guess fails that check.
    if (complete || sample->source != HW_SRC_BLOCKED_SYSCALL || sample->regs[HW_REG_RBP] != 0 || n >= max) return n;
    uint64_t scratch[256];
    int room = max < 256 ? max : 256;
    // The frame pointer sought is the last frame's, so it lies above that
    // frame's stack pointer; below it are the frames of calls it already
    // made, whose saved words would chain back into itself.
    uint64_t sp = ctx.last_sp;
    int tries = 0, best = n, best_impossible = INT_MAX;
    for (uint64_t a = (sp + 15) & ~(uint64_t)15; a - sp < HW_FP_SCAN_BYTES && tries < HW_FP_SCAN_TRIES; a += 16) {
        if (!looks_like_frame(&ctx, a)) continue;
        tries++;
        unwind_ctx guess = ctx;
        guess.rbp_given = true;
        guess.rbp = a;
        bool done, entry;
        int m = unwind_with(&guess, scratch, room, &done, &entry);
        // A dead frame left below the live one (a callee that returned), or a
        // frame further up, can chain through stale words: a guess must
        // reach the thread's entry as the call-frame information marks it,
        // through return addresses that each follow a call instruction. Of
        // those, one whose caller of the last known frame can have made that
        // call wins over one whose cannot (a dead frame's words chain to the
        // entry just as well, with a caller too many), then the longest: a
        // frame further up skips callers. Only that first call is judged:
        // the guess decides it, and the calls above it a thunk's tail call
        // can make look wrong in any chain.
        if (!entry || m <= n || memcmp(scratch, pcs, (size_t)n * sizeof *pcs) != 0) continue;
        if (!all_return_addresses(u, scratch + n, m - n)) continue;
        int impossible = cannot_have_called(u, scratch[n], n == 1 ? scratch[0] : scratch[n - 1] - 1);
        if (impossible > best_impossible || (impossible == best_impossible && m <= best)) continue;
        memcpy(pcs, scratch, (size_t)m * sizeof *pcs);
        best = m;
        best_impossible = impossible;
        *reached_entry = true; // only a guess that reached the entry is kept
    }
    return best;
}

void hw_unwinder_set_verify(hw_unwinder *u, bool verify) { u->verify = verify; }

hw_unwind_counts hw_unwinder_counts(const hw_unwinder *u) { return u->counts; }

uint64_t hw_own_vdso_base(void) { return getauxval(AT_SYSINFO_EHDR); }
