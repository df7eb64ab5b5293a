// Off-thread unwinding of captured samples: the registers and the stack slice
// a sample record carries are unwound later, in another thread or process,
// with the DWARF call-frame information of the images on disk. This is what
// lets the sampled thread pay only for a memcpy.
#ifndef HANGWATCH_UNWIND_H
#define HANGWATCH_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hangwatch_log.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hw_unwinder hw_unwinder;

enum hw_module_status {
    HW_MODULE_OK = 0,
    HW_MODULE_UNREADABLE = -1,       // no such file, or not an ELF image we can use
    HW_MODULE_BUILD_ID_MISMATCH = -2, // the file on disk is not the image that ran
    HW_MODULE_NO_UNWIND_TABLE = -3,   // readable but without .eh_frame_hdr
};

hw_unwinder *hw_unwinder_create(void);
void hw_unwinder_destroy(hw_unwinder *u);

/// Make an image known: from the file at `path`, or from `image` bytes when
/// the image has no file (the vDSO). The build-id, when given, must match.
int hw_unwinder_add_module(hw_unwinder *u, const char *path, const uint8_t *image, size_t image_len,
                           uint64_t bias, uint64_t start, uint64_t end,
                           const uint8_t *build_id, uint32_t build_id_len);

/// Unwind one sample. Writes up to `max` program counters, innermost first,
/// and returns how many. pcs[0] is the exact interrupted pc; the others are
/// return addresses. *reached_entry (when given) says whether the chain ended
/// at the thread's entry (where the call-frame information ends it, or a zero
/// return address); false when it stopped short (a frame it could not unwind,
/// a stack word outside the copy, `max` frames): the report marks those.
int hw_unwind_sample(hw_unwinder *u, const hw_rec_sample *sample, uint64_t *pcs, int max, bool *reached_entry);

/// How the samples were unwound: every frame from the flat rule table, or
/// by libunwind; and, under verification, how many flat unwinds libunwind
/// disagreed with (its answer is the one kept).
typedef struct hw_unwind_counts {
    uint64_t flat, by_libunwind, mismatches;
} hw_unwind_counts;

/// Checks every flat-rule unwind against libunwind's (tests; costs a libunwind unwind each).
void hw_unwinder_set_verify(hw_unwinder *u, bool verify);
hw_unwind_counts hw_unwinder_counts(const hw_unwinder *u);

/// Address of this process's own vDSO image (the same image every process on this kernel maps).
uint64_t hw_own_vdso_base(void);

#ifdef __cplusplus
}
#endif
#endif
