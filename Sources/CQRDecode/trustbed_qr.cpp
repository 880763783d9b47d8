// zxing-cpp 1.4 returns Result::text() as UTF-8 only with this defined (else as std::wstring).
#define ZX_USE_UTF8 1
#include "trustbed_qr.h"

#include <ZXing/ReadBarcode.h>
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

// Where libpng reads from and where its error lands.
struct PNGSource {
    const uint8_t *data;
    size_t length;
    size_t offset;
    char *message;
    size_t message_capacity;
};

void copy_message(PNGSource *source, const char *text) {
    if (source->message && source->message_capacity > 0) {
        std::snprintf(source->message, source->message_capacity, "%s", text);
    }
}

// libpng's error callback must not return (libpng manual §IV, "Error handling"): record the
// reason and jump back to the setjmp in decode_luminance.
[[noreturn]] void on_error(png_structp png, png_const_charp text) {
    copy_message(static_cast<PNGSource *>(png_get_error_ptr(png)), text ? text : "libpng error");
    png_longjmp(png, 1);
}

// Warnings (a bad CRC in an ancillary chunk, an unknown sRGB profile) are not the caller's concern.
void on_warning(png_structp, png_const_charp) {}

void read_bytes(png_structp png, png_bytep into, png_size_t count) {
    auto *source = static_cast<PNGSource *>(png_get_io_ptr(png));
    if (count > source->length - source->offset) {
        png_error(png, "the PNG stream is truncated");
    }
    std::memcpy(into, source->data + source->offset, count);
    source->offset += count;
}

// Decodes the PNG to 8-bit luminance, `*width × *height` bytes that the caller frees. Only
// plain C values live in this frame: png_longjmp skips destructors, so no C++ object may be
// alive between setjmp and a libpng call. What must be freed after a jump is volatile.
int decode_luminance(PNGSource *source, uint32_t max_side, uint64_t max_pixels,
                     uint8_t **luminance, uint32_t *out_width, uint32_t *out_height) {
    if (source->length < 8 || png_sig_cmp(source->data, 0, 8) != 0) {
        return TRUSTBED_QR_NOT_PNG;
    }
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, source, on_error, on_warning);
    if (!png) return TRUSTBED_QR_INTERNAL;
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_read_struct(&png, nullptr, nullptr);
        return TRUSTBED_QR_INTERNAL;
    }
    uint8_t *volatile rgba = nullptr;
    png_bytep *volatile rows = nullptr;
    uint8_t *volatile lum = nullptr;
    if (setjmp(png_jmpbuf(png))) {
        std::free(rows);
        std::free(rgba);
        std::free(lum);
        png_destroy_read_struct(&png, &info, nullptr);
        return TRUSTBED_QR_INVALID_PNG;
    }
    png_set_read_fn(png, source, read_bytes);
    // Ancillary chunks mean nothing to a QR reader: skip them unread (no iCCP or zTXt is
    // inflated), and cap what any single chunk may allocate. A negative count covers the
    // chunks libpng knows too, all but IHDR, PLTE, tRNS, IDAT and IEND (png.h).
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, nullptr, -1);
    png_set_chunk_malloc_max(png, 1 << 20);
    png_read_info(png, info);

    png_uint_32 width = 0, height = 0;
    int bit_depth = 0, color_type = 0;
    png_get_IHDR(png, info, &width, &height, &bit_depth, &color_type, nullptr, nullptr, nullptr);
    // The bound, before anything proportional to the image is allocated.
    if (width > max_side || height > max_side || uint64_t(width) * uint64_t(height) > max_pixels) {
        char text[64];
        std::snprintf(text, sizeof text, "%u x %u pixels", unsigned(width), unsigned(height));
        copy_message(source, text);
        png_destroy_read_struct(&png, &info, nullptr);
        return TRUSTBED_QR_TOO_LARGE;
    }

    // Every colour type and depth becomes 8-bit RGBA (PNG spec §11.2.2 lists them):
    // palette → RGB, 1/2/4-bit grey → 8-bit, tRNS → alpha, 16 → 8 bits, grey → RGB, and an
    // opaque alpha byte where the image has none.
    bool has_trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
    if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (has_trns) png_set_tRNS_to_alpha(png);
    if (bit_depth == 16) png_set_strip_16(png);
    if (color_type == PNG_COLOR_TYPE_GRAY || color_type == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
    if (!(color_type & PNG_COLOR_MASK_ALPHA) && !has_trns) png_set_filler(png, 0xFF, PNG_FILLER_AFTER);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != size_t(width) * 4) {
        png_error(png, "unexpected row layout after the RGBA transforms");
    }

    size_t pixels = size_t(width) * size_t(height);
    rgba = static_cast<uint8_t *>(std::malloc(pixels * 4));
    rows = static_cast<png_bytep *>(std::malloc(sizeof(png_bytep) * height));
    lum = static_cast<uint8_t *>(std::malloc(pixels));
    if (!rgba || !rows || !lum) png_error(png, "out of memory");
    for (png_uint_32 y = 0; y < height; y++) rows[y] = rgba + size_t(y) * width * 4;
    png_read_image(png, rows);
    png_read_end(png, nullptr);

    // ITU-R BT.601 luma, composited over white so that a transparent background reads as paper.
    for (size_t i = 0; i < pixels; i++) {
        const uint8_t *p = rgba + i * 4;
        unsigned y = (299u * p[0] + 587u * p[1] + 114u * p[2] + 500u) / 1000u;
        unsigned a = p[3];
        lum[i] = uint8_t((y * a + 255u * (255u - a) + 127u) / 255u);
    }
    std::free(rows);
    std::free(rgba);
    png_destroy_read_struct(&png, &info, nullptr);
    *luminance = lum;
    *out_width = width;
    *out_height = height;
    return TRUSTBED_QR_OK;
}

int read_qr(const uint8_t *lum, uint32_t width, uint32_t height, char *out, size_t capacity, size_t *written) {
    try {
        ZXing::ImageView view(lum, int(width), int(height), ZXing::ImageFormat::Lum);
        ZXing::DecodeHints hints;
        hints.setFormats(ZXing::BarcodeFormat::QRCode);
        hints.setTryHarder(true);
        ZXing::Result result = ZXing::ReadBarcode(view, hints);
        if (!result.isValid()) return TRUSTBED_QR_NOT_FOUND;
        std::string text = result.text();
        if (text.size() >= capacity) return TRUSTBED_QR_TEXT_TOO_LONG;
        std::memcpy(out, text.data(), text.size());
        out[text.size()] = '\0';
        *written = text.size();
        return TRUSTBED_QR_OK;
    } catch (...) {
        return TRUSTBED_QR_INTERNAL;
    }
}

} // namespace

extern "C" int trustbed_qr_decode_png(const uint8_t *png, size_t length,
                                      uint32_t max_side, uint64_t max_pixels,
                                      char *out, size_t capacity, size_t *written,
                                      char *message, size_t message_capacity) {
    if (message && message_capacity > 0) message[0] = '\0';
    if (!png || !out || !written || capacity == 0) return TRUSTBED_QR_INTERNAL;
    *written = 0;
    PNGSource source{png, length, 0, message, message_capacity};
    uint8_t *lum = nullptr;
    uint32_t width = 0, height = 0;
    int status = decode_luminance(&source, max_side, max_pixels, &lum, &width, &height);
    if (status != TRUSTBED_QR_OK) return status;
    status = read_qr(lum, width, height, out, capacity, written);
    std::free(lum);
    return status;
}
