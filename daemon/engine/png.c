/* PNG encoding with libpng's full API, so the zlib level and the row filter are ours to
 * choose: thumbnails favour speed over size. libpng reports errors by longjmp; that stays
 * inside png_encode. */
#include "png.h"

#include <png.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"

void png_opts_default(struct png_opts *o)
{
    o->level = 1;
    o->filter = PNG_FILTER_CHOICE_SUB;
}

struct sink {
    struct byte_buf *buf;
    bool failed;
};

static void write_bytes(png_structp png, png_bytep data, size_t len)
{
    struct sink *s = png_get_io_ptr(png);
    struct byte_buf *b = s->buf;
    if (s->failed)
        return;
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->len + len)
            cap *= 2;
        uint8_t *n = realloc(b->data, cap);
        if (!n) {
            s->failed = true;
            return;
        }
        b->data = n;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
}

static void flush_bytes(png_structp png)
{
    (void)png;
}

static int filter_flags(enum png_filter_choice f)
{
    switch (f) {
    case PNG_FILTER_CHOICE_NONE: return PNG_FILTER_NONE;
    case PNG_FILTER_CHOICE_UP: return PNG_FILTER_UP;
    case PNG_FILTER_CHOICE_PAETH: return PNG_FILTER_PAETH;
    case PNG_FILTER_CHOICE_ALL: return PNG_ALL_FILTERS;
    default: return PNG_FILTER_SUB;
    }
}

/* Everything that may longjmp, kept apart from locals that must survive it. */
static bool write_png(png_structp png, png_infop info, const uint8_t *rgba, uint32_t w,
                      uint32_t h, const struct png_opts *o)
{
    if (setjmp(png_jmpbuf(png)))
        return false;
    png_set_compression_level(png, o->level);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, filter_flags(o->filter));
    png_set_IHDR(png, info, w, h, 8, PNG_COLOR_TYPE_RGB_ALPHA, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (uint32_t y = 0; y < h; y++)
        png_write_row(png, (png_const_bytep)(rgba + (size_t)y * w * 4));
    png_write_end(png, NULL);
    return true;
}

int png_encode(const uint8_t *rgba, uint32_t w, uint32_t h, const struct png_opts *opts,
               struct byte_buf *out)
{
    struct png_opts o;
    if (opts)
        o = *opts;
    else
        png_opts_default(&o);
    if (!w || !h || o.level < 0 || o.level > 9)
        return ENG_EINVAL;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        return ENG_ENOMEM;
    }
    struct sink sink = {out, false};
    png_set_write_fn(png, &sink, write_bytes, flush_bytes);
    bool ok = write_png(png, info, rgba, w, h, &o);
    png_destroy_write_struct(&png, &info);
    return ok && !sink.failed ? 0 : ENG_ENOMEM;
}
