#ifndef TRUSTBED_QR_H
#define TRUSTBED_QR_H
/*
 * Reads the QR code in a PNG image: libpng decodes the image to 8-bit luminance, zxing-cpp
 * finds and decodes the symbol. A plain C interface so that Swift needs no C++ interop; the
 * implementation (trustbed_qr.cpp) keeps libpng's setjmp/longjmp away from C++ objects and
 * catches every C++ exception at the boundary.
 */
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum trustbed_qr_status {
    TRUSTBED_QR_OK = 0,
    /* The bytes do not start with the PNG signature (PNG spec §5.2). */
    TRUSTBED_QR_NOT_PNG = 1,
    /* libpng refused the stream: truncated, a bad CRC in a critical chunk, invalid IHDR... */
    TRUSTBED_QR_INVALID_PNG = 2,
    /* Wider or taller than max_side, or more than max_pixels pixels (refused before any
     * pixel buffer is allocated: a few bytes of IHDR must not cost gigabytes). */
    TRUSTBED_QR_TOO_LARGE = 3,
    /* The image decodes but holds no readable QR code. */
    TRUSTBED_QR_NOT_FOUND = 4,
    /* The QR code's text does not fit in `capacity` bytes (its terminating NUL included). */
    TRUSTBED_QR_TEXT_TOO_LONG = 5,
    /* Out of memory, or zxing-cpp threw. */
    TRUSTBED_QR_INTERNAL = 6,
};

/*
 * Decodes the PNG `png[0..<length]` and reads one QR code from it. On TRUSTBED_QR_OK, `out`
 * holds the code's text as UTF-8, NUL-terminated, and `*written` its length without the NUL.
 * On TRUSTBED_QR_INVALID_PNG, `message` (when not NULL) holds libpng's reason, NUL-terminated
 * and truncated to `message_capacity`. Transparent pixels are read as if on white paper.
 */
int trustbed_qr_decode_png(const uint8_t *png, size_t length,
                           uint32_t max_side, uint64_t max_pixels,
                           char *out, size_t capacity, size_t *written,
                           char *message, size_t message_capacity);

#ifdef __cplusplus
}
#endif

#endif
