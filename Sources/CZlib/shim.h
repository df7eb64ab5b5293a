// zlib for Swift. deflateInit2 is a macro, which Swift cannot call: this
// inline wrapper exposes it with gzip framing (window bits 15, +16 for gzip).
#include <zlib.h>

static inline int hangwatch_deflate_init_gzip(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}
