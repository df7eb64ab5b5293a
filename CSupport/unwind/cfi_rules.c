// The flat rule table: each pc's unwind rule read once from the image's
// .eh_frame (found through .eh_frame_hdr's sorted table) and kept by pc, so
// a repeated frame costs a hash lookup and two stack reads instead of a trip
// through libunwind. Only the shapes compilers emit for ordinary x86-64 code
// are kept (CFA = rsp/rbp + offset, return address and rbp saved at CFA
// offsets); anything else is marked for libunwind, which stays the unwinder
// of record for those frames and the verifier in tests
// (HANGWATCH_UNWIND_VERIFY, UnwindingTests).
//
// The DWARF call-frame instructions interpreted here are those of the DWARF 4
// standard, section 6.4, with the .eh_frame conventions of the x86-64 psABI
// (CIE id 0, augmentation "z…", pointer encodings DW_EH_PE_*).
#include "unwind_internal.h"

#include <stdlib.h>
#include <string.h>

#define DWARF_RBP 6
#define DWARF_RSP 7
#define DWARF_RA 16
#define MAX_REMEMBERED 8

// ---- reading .eh_frame bytes -------------------------------------------------

typedef struct cursor {
    const uint8_t *p, *end;
    uint64_t addr; // runtime address of p
    bool bad;
} cursor;

static bool cursor_at(cursor *c, const hw_module *m, uint64_t addr) {
    size_t avail = 0;
    const uint8_t *p = hw_module_bytes(m, addr, &avail);
    *c = (cursor){ p, p ? p + avail : NULL, addr, p == NULL };
    return p != NULL;
}

static uint64_t fixed(cursor *c, int bytes) {
    if (c->bad || c->end - c->p < bytes) { c->bad = true; return 0; }
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) v |= (uint64_t)c->p[i] << (8 * i);
    c->p += bytes;
    c->addr += (uint64_t)bytes;
    return v;
}

static uint8_t u8(cursor *c) { return (uint8_t)fixed(c, 1); }

static uint64_t uleb(cursor *c) {
    uint64_t v = 0;
    for (int shift = 0; !c->bad; shift += 7) {
        uint8_t b = u8(c);
        if (shift < 64) v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) break;
    }
    return v;
}

static int64_t sleb(cursor *c) {
    uint64_t v = 0;
    int shift = 0;
    uint8_t b = 0;
    do {
        b = u8(c);
        if (shift < 64) v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
    } while ((b & 0x80) && !c->bad);
    if (shift < 64 && (b & 0x40)) v |= ~(uint64_t)0 << shift;
    return (int64_t)v;
}

static void skip(cursor *c, uint64_t bytes) {
    if (c->bad || (uint64_t)(c->end - c->p) < bytes) { c->bad = true; return; }
    c->p += bytes;
    c->addr += bytes;
}

/// A DW_EH_PE-encoded pointer: absolute or pc-relative only (what .eh_frame
/// FDEs use on x86-64); `value_only` drops the application (pc_range).
static uint64_t encoded(cursor *c, uint8_t enc, bool value_only) {
    uint64_t at = c->addr, v;
    switch (enc & 0x0f) {
    case 0x00: case 0x04: case 0x0c: v = fixed(c, 8); break;
    case 0x01: v = uleb(c); break;
    case 0x02: v = fixed(c, 2); break;
    case 0x03: v = fixed(c, 4); break;
    case 0x09: v = (uint64_t)sleb(c); break;
    case 0x0a: v = (uint64_t)(int64_t)(int16_t)fixed(c, 2); break;
    case 0x0b: v = (uint64_t)(int64_t)(int32_t)fixed(c, 4); break;
    default: c->bad = true; return 0;
    }
    if (value_only) return v;
    if (enc & 0x80) { c->bad = true; return 0; } // indirect: a pointer to the value
    switch (enc & 0x70) {
    case 0x00: return v;
    case 0x10: return v + at;
    default: c->bad = true; return 0;
    }
}

/// Steps over an encoded pointer whatever its application (the personality).
static void skip_encoded(cursor *c, uint8_t enc) {
    if ((enc & 0x70) == 0x50) { c->bad = true; return; } // aligned: not worth following
    (void)encoded(c, enc, true);
}

// ---- the row a pc falls in --------------------------------------------------

enum how { UNSET, SAME, AT_OFFSET, UNDEFINED, OTHER };
typedef struct reg_rule { uint8_t how; int64_t off; } reg_rule;
typedef struct row {
    int cfa_reg;  // DWARF register, or -1 (an expression)
    int64_t cfa_off;
    reg_rule rbp, ra;
    bool rsp_ruled; // some rule for rsp itself: not a common shape
} row;

typedef struct cie {
    uint64_t code_align;
    int64_t data_align;
    uint8_t fde_enc;
    bool has_aug_data;
    cursor insns; // initial instructions
} cie;

static bool parse_cie(const hw_module *m, uint64_t addr, cie *out) {
    cursor c;
    if (!cursor_at(&c, m, addr)) return false;
    uint64_t len = fixed(&c, 4);
    if (len == 0xffffffffu || len == 0) return false; // 64-bit DWARF is not used in .eh_frame
    if ((uint64_t)(c.end - c.p) < len) return false;
    c.end = c.p + len;
    if (fixed(&c, 4) != 0) return false; // a CIE's id is 0 in .eh_frame
    uint8_t version = u8(&c);
    if (version != 1 && version != 3) return false;
    const char *aug = (const char *)c.p;
    size_t aug_len = strnlen(aug, (size_t)(c.end - c.p));
    if (aug_len == (size_t)(c.end - c.p)) return false;
    skip(&c, aug_len + 1);
    out->code_align = uleb(&c);
    out->data_align = sleb(&c);
    uint64_t ra = version == 1 ? u8(&c) : uleb(&c);
    if (ra != DWARF_RA) return false;
    out->fde_enc = 0; // absptr
    out->has_aug_data = aug[0] == 'z';
    if (aug_len && !out->has_aug_data) return false; // "eh" and other old forms
    if (out->has_aug_data) {
        uint64_t data_len = uleb(&c);
        cursor data = c;
        for (size_t i = 1; i < aug_len && !data.bad; i++) {
            switch (aug[i]) {
            case 'R': out->fde_enc = u8(&data); break;
            case 'P': skip_encoded(&data, u8(&data)); break;
            case 'L': (void)u8(&data); break;
            default: return false; // 'S' (a signal frame), 'B', unknown: libunwind's
            }
        }
        if (data.bad || (out->fde_enc & 0x70) == 0x50) return false;
        skip(&c, data_len);
    }
    out->insns = c;
    return !c.bad;
}

static reg_rule *rule_of(row *r, uint64_t reg) {
    if (reg == DWARF_RBP) return &r->rbp;
    if (reg == DWARF_RA) return &r->ra;
    return NULL;
}

/// libunwind (x86-64) knows registers 0-16 in these instructions and fails
/// the step on any other: so must we, or we would go on where it stops.
#define DWARF_MAX_REG 16

/// Sets `reg`'s rule; false for a register libunwind would refuse.
static bool set_rule(row *r, uint64_t reg, uint8_t how, int64_t off) {
    if (reg > DWARF_MAX_REG) return false;
    if (reg == DWARF_RSP) { r->rsp_ruled = true; return true; }
    reg_rule *rule = rule_of(r, reg);
    if (rule) *rule = (reg_rule){ how, off };
    return true;
}

/// Puts back `reg`'s rule from the CIE's initial row (DW_CFA_restore).
static bool restore_rule(row *r, const row *initial, uint64_t reg) {
    if (reg > DWARF_MAX_REG) return false;
    if (reg == DWARF_RSP) r->rsp_ruled = initial->rsp_ruled;
    else if (reg == DWARF_RBP) r->rbp = initial->rbp;
    else if (reg == DWARF_RA) r->ra = initial->ra;
    return true;
}

/// Runs call-frame instructions from `c` until the row holding `target`
/// (UINT64_MAX: all of them, for a CIE's initial instructions), and leaves
/// in *row_start (when given) the address where that row begins. False when
/// an instruction is not understood.
static bool run(cursor *c, row *r, const row *initial, const cie *ci, uint64_t loc, uint64_t target,
                uint64_t *row_start) {
    if (row_start) *row_start = loc;
    row stack[MAX_REMEMBERED];
    int depth = 0;
    while (c->p < c->end && !c->bad) {
        uint8_t op = u8(c);
        uint64_t reg, delta = 0;
        bool advance = false;
        switch (op >> 6) {
        case 1: delta = (op & 0x3f) * ci->code_align; advance = true; break;
        case 2: if (!set_rule(r, op & 0x3f, AT_OFFSET, (int64_t)uleb(c) * ci->data_align)) return false; continue;
        case 3: if (!restore_rule(r, initial, op & 0x3f)) return false; continue;
        }
        if (!advance) {
            bool ok = true;
            switch (op) {
            case 0x00: break; // nop
            case 0x01: { // set_loc
                uint64_t to = encoded(c, ci->fde_enc, false);
                if (to > target) return !c->bad;
                loc = to;
                if (row_start) *row_start = loc;
                break;
            }
            case 0x02: delta = fixed(c, 1) * ci->code_align; advance = true; break;
            case 0x03: delta = fixed(c, 2) * ci->code_align; advance = true; break;
            case 0x04: delta = fixed(c, 4) * ci->code_align; advance = true; break;
            case 0x05: reg = uleb(c); ok = set_rule(r, reg, AT_OFFSET, (int64_t)uleb(c) * ci->data_align); break;
            case 0x06: ok = restore_rule(r, initial, uleb(c)); break;
            case 0x07: ok = set_rule(r, uleb(c), UNDEFINED, 0); break;
            case 0x08: ok = set_rule(r, uleb(c), SAME, 0); break;
            case 0x09: reg = uleb(c); ok = uleb(c) <= DWARF_MAX_REG && set_rule(r, reg, OTHER, 0); break;
            case 0x0a:
                if (depth == MAX_REMEMBERED) return false;
                stack[depth++] = *r;
                break;
            case 0x0b:
                if (depth == 0) return false;
                *r = stack[--depth]; // the CFA rule too, as libunwind restores it
                break;
            case 0x0c:
                reg = uleb(c);
                ok = reg <= DWARF_MAX_REG;
                r->cfa_reg = (int)reg;
                r->cfa_off = (int64_t)uleb(c);
                break;
            case 0x0d: reg = uleb(c); ok = reg <= DWARF_MAX_REG; r->cfa_reg = (int)reg; break;
            case 0x0e: r->cfa_off = (int64_t)uleb(c); break;
            case 0x11: reg = uleb(c); ok = set_rule(r, reg, AT_OFFSET, sleb(c) * ci->data_align); break;
            case 0x12:
                reg = uleb(c);
                ok = reg <= DWARF_MAX_REG;
                r->cfa_reg = (int)reg;
                r->cfa_off = sleb(c) * ci->data_align;
                break;
            case 0x13: r->cfa_off = sleb(c) * ci->data_align; break;
            case 0x2e: (void)uleb(c); break; // GNU_args_size: no effect on the rule
            case 0x2f: reg = uleb(c); ok = set_rule(r, reg, AT_OFFSET, -(int64_t)uleb(c) * ci->data_align); break;
            // Expressions (CFA or any register: libunwind evaluates them at every
            // step and can fail there), val_offset (not in libunwind 1.6's
            // parser), and anything unknown: libunwind's.
            default: return false;
            }
            if (!ok) return false;
        }
        if (advance) {
            if (loc + delta > target) return !c->bad; // `target` is in the current row
            loc += delta;
            if (row_start) *row_start = loc;
        }
    }
    return !c->bad;
}

/// The FDE whose range holds `pc`, through .eh_frame_hdr's sorted table.
static bool find_fde(const hw_module *m, uint64_t pc, uint64_t *fde) {
    if (!m->has_hdr || m->fde_count == 0) return false;
    size_t avail = 0;
    const uint8_t *table = hw_module_bytes(m, m->table_addr, &avail);
    if (!table || avail / 8 < m->fde_count) return false;
    size_t lo = 0, hi = m->fde_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int32_t start;
        memcpy(&start, table + mid * 8, 4);
        if (m->hdr_addr + (uint64_t)(int64_t)start <= pc) lo = mid + 1; else hi = mid;
    }
    if (lo == 0) return false;
    int32_t at;
    memcpy(&at, table + (lo - 1) * 8 + 4, 4);
    *fde = m->hdr_addr + (uint64_t)(int64_t)at;
    return true;
}

/// The FDE that covers `pc`, read up to its instructions: `c` is left at
/// them, with its CIE in `ci` and the range it covers in [*start, *end).
/// False when no FDE covers `pc` (a gap between FDEs included) or it is malformed.
static bool open_fde(const hw_module *m, uint64_t pc, cursor *c, cie *ci, uint64_t *start, uint64_t *end) {
    uint64_t fde_addr;
    if (!m || !find_fde(m, pc, &fde_addr) || !cursor_at(c, m, fde_addr)) return false;
    uint64_t len = fixed(c, 4);
    if (len == 0xffffffffu || len == 0 || (uint64_t)(c->end - c->p) < len) return false;
    c->end = c->p + len;
    uint64_t cie_field = c->addr;
    uint64_t cie_off = fixed(c, 4);
    if (cie_off == 0 || cie_off > cie_field) return false; // 0 would make it a CIE
    if (!parse_cie(m, cie_field - cie_off, ci)) return false;
    *start = encoded(c, ci->fde_enc, false);
    uint64_t range = encoded(c, ci->fde_enc, true);
    *end = *start + range;
    return !c->bad && pc >= *start && pc - *start < range;
}

bool hw_cfi_function_range(const hw_module *m, uint64_t pc, uint64_t *start, uint64_t *end) {
    cursor c;
    cie ci;
    return open_fde(m, pc, &c, &ci, start, end);
}

/// Whether row `r`, beginning at `row_start`, follows a `pop %rbp` that
/// read rbp's save slot: the instruction just before the row is that pop
/// (0x5d), and the slot is the word it read, just below the stack pointer
/// (CFA = rsp + k, slot at CFA - k - 8: the row keeps rsp where the pop left
/// it). Epilogues keep the slot's rule after the pop (GCC and LLVM alike), so
/// a sample there finds it outside every stack copy; rbp already holds the
/// caller's value. A save made with a `mov` into the red zone (the slot below
/// the stack pointer, rbp free to change) is told apart by that pop.
static bool just_popped_rbp(const hw_module *m, const row *r, uint64_t row_start) {
    if (r->cfa_reg != DWARF_RSP || r->cfa_off + r->rbp.off != -8 || row_start == 0) return false;
    size_t avail = 0;
    const uint8_t *op = hw_module_bytes(m, row_start - 1, &avail);
    return op && avail >= 1 && *op == 0x5d;
}

static hw_cfi_rule derive(const hw_module *m, uint64_t pc) {
    hw_cfi_rule out = { .pc = pc, .kind = HW_CFI_LIBUNWIND };
    cursor c;
    cie ci;
    uint64_t start, end;
    if (!open_fde(m, pc, &c, &ci, &start, &end)) return out;
    if (ci.has_aug_data) skip(&c, uleb(&c));
    row initial = { .cfa_reg = -1, .rbp = { SAME, 0 }, .ra = { UNSET, 0 } };
    cursor ins = ci.insns;
    if (!run(&ins, &initial, &initial, &ci, 0, UINT64_MAX, NULL)) return out;
    row r = initial;
    uint64_t row_start;
    if (!run(&c, &r, &initial, &ci, start, pc, &row_start)) return out;
    if (r.rsp_ruled || (r.cfa_reg != DWARF_RSP && r.cfa_reg != DWARF_RBP)) return out;
    if (r.cfa_off < INT32_MIN || r.cfa_off > INT32_MAX) return out;
    if (r.ra.how == UNDEFINED) { out.kind = HW_CFI_END; return out; }
    if (r.ra.how != AT_OFFSET || r.ra.off < INT16_MIN || r.ra.off > INT16_MAX) return out;
    if (r.rbp.how == AT_OFFSET) {
        if (r.rbp.off == 0 || r.rbp.off < INT16_MIN || r.rbp.off > INT16_MAX) return out;
        out.rbp_off = (int16_t)r.rbp.off;
        out.rbp_popped = just_popped_rbp(m, &r, row_start);
    } else if (r.rbp.how != SAME) {
        return out;
    }
    out.cfa_off = (int32_t)r.cfa_off;
    out.ra_off = (int16_t)r.ra.off;
    out.kind = r.cfa_reg == DWARF_RSP ? HW_CFI_RSP : HW_CFI_RBP;
    return out;
}

// ---- the table ---------------------------------------------------------------

static size_t slot_of(uint64_t pc, size_t cap) {
    return (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static bool grow(hw_cfi_table *t) {
    size_t cap = t->cap ? t->cap * 2 : 1024;
    hw_cfi_rule *slots = calloc(cap, sizeof *slots);
    if (!slots) return false;
    for (size_t i = 0; i < t->cap; i++) {
        if (t->slots[i].kind == HW_CFI_EMPTY) continue;
        size_t at = slot_of(t->slots[i].pc, cap);
        while (slots[at].kind != HW_CFI_EMPTY) at = (at + 1) & (cap - 1);
        slots[at] = t->slots[i];
    }
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return true;
}

bool hw_cfi_rule_known(const hw_cfi_table *t, uint64_t pc, hw_cfi_rule *out) {
    if (!t->cap) return false;
    for (size_t at = slot_of(pc, t->cap);; at = (at + 1) & (t->cap - 1)) {
        if (t->slots[at].kind == HW_CFI_EMPTY) return false;
        if (t->slots[at].pc == pc) { *out = t->slots[at]; return true; }
    }
}

hw_cfi_rule hw_cfi_rule_learn(hw_cfi_table *t, const hw_module *m, uint64_t pc) {
    hw_cfi_rule rule = derive(m, pc);
    if ((t->used + 1) * 4 > t->cap * 3 && !grow(t)) return rule; // kept at most 3/4 full
    size_t at = slot_of(pc, t->cap);
    while (t->slots[at].kind != HW_CFI_EMPTY) at = (at + 1) & (t->cap - 1);
    t->slots[at] = rule;
    t->used++;
    return rule;
}

void hw_cfi_table_clear(hw_cfi_table *t) {
    if (t->slots) memset(t->slots, 0, t->cap * sizeof *t->slots);
    t->used = 0;
}

void hw_cfi_table_free(hw_cfi_table *t) {
    free(t->slots);
    *t = (hw_cfi_table){ 0 };
}
