// Redirecting a loaded image's imports: the in-process library's way to put
// its wrappers in front of the calls a program makes, without LD_PRELOAD.
//
// Every call an image makes to a function of another image goes through a
// slot of its global offset table (a JUMP_SLOT relocation for PLT calls, a
// GLOB_DAT one for -fno-plt calls and address loads). Rewriting that slot
// sends the image's later calls to the wrapper; the wrapper calls the
// function the dynamic loader itself would bind (dlsym(RTLD_DEFAULT), found
// before any slot is touched), never the slot's old value, which may still
// be the lazy-binding stub and would write the slot back when called.
//
// Invariants:
//  - only slots of relocations against an undefined symbol of the image are
//    written (its own definitions stay its own), and only with one 8-byte
//    aligned store, so a thread calling through the slot meanwhile sees the
//    old target or the new one, never a torn pointer;
//  - a slot inside the image's read-only-after-relocation range (the part of
//    PT_GNU_RELRO the loader protected: from its first page to the page its
//    end falls in, not that last partial page) is made writable for the one
//    store and read-only again; any other slot is writable already;
//  - images loaded later are not rewritten (the caller may walk again).
#include "engine_internal.h"

#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct got_walk {
    const hw_got_target *targets;
    size_t count;
    bool (*wants)(const char *path);
    uint32_t rewritten;
} got_walk;

/// A dynamic-section address: the loader rebases most of them in place, the
/// vDSO's and a few others keep the file's value.
static uintptr_t dyn_address(ElfW(Addr) value, ElfW(Addr) base) {
    return value < base ? (uintptr_t)(value + base) : (uintptr_t)value;
}

static void write_slot(void **slot, void *target, uintptr_t relro_lo, uintptr_t relro_hi) {
    if (__atomic_load_n(slot, __ATOMIC_RELAXED) == target) return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t at = (uintptr_t)slot & ~(page - 1);
    bool protected_page = (uintptr_t)slot >= relro_lo && (uintptr_t)slot < relro_hi;
    if (protected_page && mprotect((void *)at, page, PROT_READ | PROT_WRITE) != 0) return;
    __atomic_store_n(slot, target, __ATOMIC_RELEASE);
    if (protected_page) mprotect((void *)at, page, PROT_READ);
}

typedef struct image_tables {
    const ElfW(Sym) *symtab;
    const char *strtab;
    size_t strsz;
    uintptr_t relro_lo, relro_hi; // the range the loader made read-only
} image_tables;

static void rewrite_relocations(got_walk *w, const image_tables *t, ElfW(Addr) base, const ElfW(Rela) *rel,
                                size_t bytes) {
    for (size_t i = 0; rel && i < bytes / sizeof *rel; i++) {
        uint32_t type = (uint32_t)ELF64_R_TYPE(rel[i].r_info);
        if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
        const ElfW(Sym) *sym = &t->symtab[ELF64_R_SYM(rel[i].r_info)];
        if (sym->st_shndx != SHN_UNDEF || sym->st_name >= t->strsz) continue;
        const char *name = t->strtab + sym->st_name;
        for (size_t k = 0; k < w->count; k++) {
            if (!w->targets[k].replacement || strcmp(name, w->targets[k].name) != 0) continue;
            write_slot((void **)(uintptr_t)(base + rel[i].r_offset), w->targets[k].replacement, t->relro_lo,
                       t->relro_hi);
            w->rewritten++;
        }
    }
}

static int visit_image(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    got_walk *w = data;
    if (!w->wants(info->dlpi_name ? info->dlpi_name : "")) return 0;
    ElfW(Addr) base = info->dlpi_addr;
    const ElfW(Dyn) *dyn = NULL;
    image_tables t = { 0 };
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn) *)(uintptr_t)(base + ph->p_vaddr);
        if (ph->p_type == PT_GNU_RELRO) {
            t.relro_lo = (uintptr_t)(base + ph->p_vaddr) & ~(page - 1);
            t.relro_hi = (uintptr_t)(base + ph->p_vaddr + ph->p_memsz) & ~(page - 1);
        }
    }
    if (!dyn) return 0;
    const ElfW(Rela) *plt = NULL, *rela = NULL;
    size_t plt_bytes = 0, rela_bytes = 0;
    bool plt_is_rela = true;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: t.symtab = (const ElfW(Sym) *)dyn_address(d->d_un.d_ptr, base); break;
        case DT_STRTAB: t.strtab = (const char *)dyn_address(d->d_un.d_ptr, base); break;
        case DT_STRSZ: t.strsz = d->d_un.d_val; break;
        case DT_JMPREL: plt = (const ElfW(Rela) *)dyn_address(d->d_un.d_ptr, base); break;
        case DT_PLTRELSZ: plt_bytes = d->d_un.d_val; break;
        case DT_PLTREL: plt_is_rela = d->d_un.d_val == DT_RELA; break;
        case DT_RELA: rela = (const ElfW(Rela) *)dyn_address(d->d_un.d_ptr, base); break;
        case DT_RELASZ: rela_bytes = d->d_un.d_val; break;
        default: break;
        }
    }
    if (!t.symtab || !t.strtab || !plt_is_rela) return 0;
    rewrite_relocations(w, &t, base, plt, plt_bytes);
    rewrite_relocations(w, &t, base, rela, rela_bytes);
    return 0;
}

uint32_t hw_got_redirect(const hw_got_target *targets, size_t count, bool (*wants)(const char *path)) {
    got_walk w = { targets, count, wants, 0 };
    dl_iterate_phdr(visit_image, &w);
    return w.rewritten;
}
