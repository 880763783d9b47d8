#ifndef TRUSTBED_CZLIB_SHIM_H
#define TRUSTBED_CZLIB_SHIM_H
#include <zlib.h>
// inflateInit is a macro passing ZLIB_VERSION and sizeof(z_stream), which Swift cannot import.
static inline int trustbed_inflate_init(z_stream *stream) { return inflateInit(stream); }
#endif
