/* In-memory PNG encoding of RGBA8 pictures (libpng). */
#ifndef SKELD_ENGINE_PNG_H
#define SKELD_ENGINE_PNG_H

#include <stddef.h>
#include <stdint.h>

enum png_filter_choice {
    PNG_FILTER_CHOICE_NONE,  /* fastest; fine for mostly-flat thumbnails */
    PNG_FILTER_CHOICE_SUB,   /* the default: cheap and helps flat colour runs */
    PNG_FILTER_CHOICE_UP,
    PNG_FILTER_CHOICE_PAETH,
    PNG_FILTER_CHOICE_ALL, /* libpng picks per row: smallest files, slowest */
};

struct png_opts {
    int level;                     /* zlib level 0..9; default 1 */
    enum png_filter_choice filter; /* default SUB */
};

/* A growable byte buffer; free with free(buf->data). */
struct byte_buf {
    uint8_t *data;
    size_t len, cap;
};

void png_opts_default(struct png_opts *o);

/* Encodes w x h straight-alpha RGBA8 pixels, appending the PNG to out (reusing its memory).
 * Returns 0, ENG_ENOMEM or ENG_EINVAL. Any thread. */
int png_encode(const uint8_t *rgba, uint32_t w, uint32_t h, const struct png_opts *opts,
               struct byte_buf *out);

#endif
