/* In-memory PNG encoding of RGBA8 pictures: skeld's own deflate (the default), or libpng with
 * zlib levels. (Included as "png.h" from this directory;
 * libpng's is <png.h>, and this directory must never be on the include path.) */
#ifndef SKELD_ENGINE_PNG_H
#define SKELD_ENGINE_PNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum png_filter_choice {
    PNG_FILTER_CHOICE_NONE, /* fastest; fine for mostly-flat thumbnails */
    PNG_FILTER_CHOICE_SUB,  /* the default: cheap and helps flat colour runs */
    PNG_FILTER_CHOICE_UP,
    PNG_FILTER_CHOICE_PAETH,
    PNG_FILTER_CHOICE_ALL, /* libpng picks per row: smallest files, slowest */
};

#define PNG_LEVEL_DEFAULT (-2) /* skeld's deflate with Huffman codes fitted to the picture */
/* The level clients ask for by "fast": the default encoder. It named a run-length deflate with
 * fixed codes, which the default came to beat on every picture measured (that encoder took
 * 1.6x to 5x the time for 1.3x to 1.7x the bytes, 2026-11-26), so only the value stays, for
 * old clients and scripts. */
#define PNG_LEVEL_FAST (-1)

struct png_opts {
    int level; /* PNG_LEVEL_DEFAULT, PNG_LEVEL_FAST, or a zlib level 0..9 through libpng */
    enum png_filter_choice filter; /* row filter for the zlib levels; default NONE */
    /* Optional (NULL: unknown): per row y, pixels [live[2y], live[2y+1]) outside which every
     * pixel is all zero bytes (transparent), as the renderer knows from what it drew
     * (image.live). The default encoder then passes over that empty space without reading
     * it; the PNG is the same picture either way. */
    const int32_t *live;
    /* The pixels are PNG scanlines already (render_opts.png_rows): row y at rgba + y * (w * 4
     * + 1), each after a zero byte, which the encoder reads as the row's filter type. skeld's
     * encoders then deflate the rows where they are, without copying them: so with live, the
     * bytes outside the spans must really be zero (the renderer's are), since they are
     * neither read nor, as a copy would, zeroed. */
    bool scanlines;
    /* A sheet's cells' width in pixels (image.cell_width), 0 for none: the default encoder
     * then also finds repeats of the pixel one cell to the left, which the frame before drew
     * (a sheet of the critter's Hop is 0.7x the bytes). */
    uint32_t cell_width;
};

/* A growable byte buffer; free with free(buf->data). */
struct byte_buf {
    uint8_t *data;
    size_t len, cap;
};

/* Room for more bytes after len (capacity doubles from 64 KiB): 0 or ENG_ENOMEM. */
int byte_buf_reserve(struct byte_buf *b, size_t more);
/* Appends len bytes: 0 or ENG_ENOMEM. */
int byte_buf_append(struct byte_buf *b, const void *data, size_t len);

void png_opts_default(struct png_opts *o);

/* The options a request's level (PNG_LEVEL_DEFAULT, PNG_LEVEL_FAST, 0..9) means: the zlib
 * levels with the Sub filter, which pays for itself on flat colour. */
void png_opts_for_level(struct png_opts *o, int level);

/* Encodes w x h straight-alpha RGBA8 pixels, appending the PNG to out (reusing its memory).
 * scratch (may be NULL) holds skeld's encoders' scanlines and tokens between calls, so a
 * worker that keeps one allocates nothing per picture. The default encoder works a block of
 * rows (2 MiB of scanlines) at a time and needs about four blocks of it, whatever the
 * picture's size (three for scanlines: opts.scanlines). Returns 0, ENG_ENOMEM or
 * ENG_EINVAL. Any thread. */
int png_encode(const uint8_t *rgba, uint32_t w, uint32_t h, const struct png_opts *opts,
               struct byte_buf *out, struct byte_buf *scratch);

#endif
