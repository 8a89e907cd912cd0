/* Internal to load.c: the atlas PNG reader for the kind SkelForm writes. */
#ifndef SKELD_ENGINE_PNG_READ_H
#define SKELD_ENGINE_PNG_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether png is an 8-bit RGBA, non-interlaced PNG with nothing that would make libpng's
 * simplified reader change its pixels (only IHDR, IDAT, IEND and ancillary chunks that carry
 * no colour information), and its size. Other PNGs go to libpng. */
bool png_read_probe(const uint8_t *png, size_t len, uint32_t *width, uint32_t *height);

/* Decodes a PNG png_read_probe accepted into out, which holds w * h * 4 + h bytes (the
 * scanlines are inflated into it and unfiltered in place): straight RGBA8, the bytes libpng
 * gives. Returns false on anything unexpected (a bad CRC, a short or long stream, an unknown
 * filter), and the caller asks libpng, whose verdict then stands. Pure: any thread. */
bool png_read_rgba8(const uint8_t *png, size_t len, uint32_t w, uint32_t h, uint8_t *out);

/* png_read_rgba8, calling row_done(ctx, row, y) on each row in order once its pixels are
 * final (row y waits for row y + 1, which reads it unfiltered), to work on the pixels while
 * they are in cache. A row handed over may be changed: it is not read again. On false, some
 * rows may have been handed over already. */
bool png_read_rgba8_rows(const uint8_t *png, size_t len, uint32_t w, uint32_t h, uint8_t *out,
                         void (*row_done)(void *ctx, uint8_t *row, uint32_t y), void *ctx);

#endif
