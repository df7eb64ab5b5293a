// Shared between the unwinder (unwinder.c) and its flat rule table
// (cfi_rules.c). Not part of the public header: Swift never sees it.
#ifndef HANGWATCH_UNWIND_INTERNAL_H
#define HANGWATCH_UNWIND_INTERNAL_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// One ELF image as the unwinder knows it: its bytes and where it ran.
typedef struct hw_module {
    uint64_t bias, start, end;
    const uint8_t *image; // whole ELF file contents
    size_t image_len;
    bool mapped;          // munmap on destroy (else owned copy: free)
    const Elf64_Phdr *phdrs;
    int phnum;
    bool has_hdr;         // .eh_frame_hdr found: the fields below are set
    uint64_t hdr_addr;    // runtime address of .eh_frame_hdr (its table's base)
    uint64_t table_addr;  // runtime address of its sorted (start, FDE) table
    uint32_t fde_count;
} hw_module;

/// The bytes of the image at runtime address `addr`, and through *avail how
/// many follow it in the same loaded segment; NULL when not in the file.
/// Inline: the unwinder reads through it for every frame, and both the
/// unwinder and the rule table use it, so neither owns it.
static inline const uint8_t *hw_module_bytes(const hw_module *m, uint64_t addr, size_t *avail) {
    if (addr < m->bias) return NULL;
    uint64_t vaddr = addr - m->bias;
    for (int i = 0; i < m->phnum; i++) {
        const Elf64_Phdr *ph = &m->phdrs[i];
        // Differences, not sums: an address near 2^64 would wrap past an end check.
        if (ph->p_type != PT_LOAD || vaddr < ph->p_vaddr || vaddr - ph->p_vaddr >= ph->p_filesz) continue;
        uint64_t off = ph->p_offset + (vaddr - ph->p_vaddr);
        if (off < ph->p_offset || off >= m->image_len) return NULL;
        uint64_t in_segment = ph->p_filesz - (vaddr - ph->p_vaddr), in_file = m->image_len - off;
        *avail = (size_t)(in_segment < in_file ? in_segment : in_file);
        return m->image + off;
    }
    return NULL;
}

// ---- the flat rule table (cfi_rules.c) --------------------------------------

/// How one frame is unwound, as a row of its call-frame information says,
/// when that row is one of the common shapes: CFA = rsp or rbp + offset, the
/// return address saved at CFA + ra_off, rbp unchanged or saved at CFA +
/// rbp_off. Anything else (expressions, other base registers, signal frames,
/// no FDE) is left to libunwind.
enum hw_cfi_kind {
    HW_CFI_EMPTY = 0,  // table slot unused
    HW_CFI_RSP,        // CFA = rsp + cfa_off
    HW_CFI_RBP,        // CFA = rbp + cfa_off
    HW_CFI_END,        // the return address is undefined: the thread's first frame
    HW_CFI_LIBUNWIND,  // not a common shape: libunwind decides
};

typedef struct hw_cfi_rule {
    uint64_t pc;       // the address looked up (the key)
    int32_t cfa_off;
    int16_t ra_off;
    int16_t rbp_off;   // 0: rbp keeps its value
    uint8_t kind;      // hw_cfi_kind
    // Right after the epilogue's `pop %rbp`: rbp holds its caller's value and
    // the slot at rbp_off is the word popped, below the stack pointer. Only
    // the interrupted pc's frame can be there (cfi_rules.c, just_popped_rbp).
    bool rbp_popped;
} hw_cfi_rule;

/// Rules by pc, open addressing; looked up once per pc, then from here.
typedef struct hw_cfi_table {
    hw_cfi_rule *slots;
    size_t cap, used;  // cap: a power of two, or 0
} hw_cfi_table;

/// The rule kept for `pc`, if any: a hash lookup.
bool hw_cfi_rule_known(const hw_cfi_table *t, uint64_t pc, hw_cfi_rule *out);
/// Reads `pc`'s rule from `m`'s .eh_frame and keeps it (NULL `m`: no image,
/// so libunwind's). Call after hw_cfi_rule_known found none.
hw_cfi_rule hw_cfi_rule_learn(hw_cfi_table *t, const hw_module *m, uint64_t pc);
/// The range [*start, *end) of the function whose FDE covers `pc` in `m`.
bool hw_cfi_function_range(const hw_module *m, uint64_t pc, uint64_t *start, uint64_t *end);
/// Forgets every rule (an image was added or replaced).
void hw_cfi_table_clear(hw_cfi_table *t);
void hw_cfi_table_free(hw_cfi_table *t);

#endif
