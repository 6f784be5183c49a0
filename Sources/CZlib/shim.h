#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H
#include <zlib.h>

// deflateInit2 and inflateInit2 are macros (they pass the library's version and the
// stream's size for a check), which Swift cannot call: these are the same calls as functions.
static inline int czlib_deflate_init_gzip(z_stream *stream, int level) {
    // windowBits 15 + 16: a gzip wrapper (header and CRC-32 trailer), not zlib's own.
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

static inline int czlib_inflate_init_gzip(z_stream *stream) {
    return inflateInit2(stream, 15 + 16);
}
#endif
