/* PNG encoding with libpng's full API, so the zlib level and the row filter are ours to
 * choose: thumbnails favour speed over size. libpng reports errors by longjmp; that stays
 * inside png_encode. */
#include "png.h"

#include <png.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>

#include "deflate_dyn.h"
#include "errors.h"

void png_opts_default(struct png_opts *o)
{
    o->level = PNG_LEVEL_DEFAULT;
    o->filter = PNG_FILTER_CHOICE_NONE;
    o->live = NULL;
    o->scanlines = false;
    o->cell_width = 0;
}

void png_opts_for_level(struct png_opts *o, int level)
{
    png_opts_default(o);
    o->level = level;
    if (level >= 0)
        o->filter = PNG_FILTER_CHOICE_SUB;
}

struct sink {
    struct byte_buf *buf;
    bool failed;
};

static void write_bytes(png_structp png, png_bytep data, size_t len)
{
    struct sink *s = png_get_io_ptr(png);
    if (!s->failed && byte_buf_append(s->buf, data, len))
        s->failed = true;
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
static bool write_png(png_structp png, png_infop info, const uint8_t *rgba, uint32_t w, uint32_t h,
                      const struct png_opts *o)
{
    if (setjmp(png_jmpbuf(png)))
        return false;
    png_set_compression_level(png, o->level);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, filter_flags(o->filter));
    png_set_IHDR(png, info, w, h, 8, PNG_COLOR_TYPE_RGB_ALPHA, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    size_t pitch = (size_t)w * 4 + o->scanlines;
    for (uint32_t y = 0; y < h; y++)
        png_write_row(png, (png_const_bytep)(rgba + (size_t)y * pitch));
    png_write_end(png, NULL);
    return true;
}

int byte_buf_reserve(struct byte_buf *b, size_t more)
{
    if (b->len + more <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 65536;
    while (cap < b->len + more)
        cap *= 2;
    uint8_t *n = realloc(b->data, cap);
    if (!n)
        return ENG_ENOMEM;
    b->data = n;
    b->cap = cap;
    return 0;
}

int byte_buf_append(struct byte_buf *b, const void *data, size_t len)
{
    if (byte_buf_reserve(b, len))
        return ENG_ENOMEM;
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    return 0;
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int k = 0; k < 4; k++)
        p[k] = (uint8_t)(v >> (24 - 8 * k));
}

/* Appends a chunk whose data (len bytes) the caller wrote at data_at already. */
static void close_chunk(struct byte_buf *b, size_t start, const char type[4], size_t len)
{
    uint8_t *c = b->data + start;
    put_u32(c, (uint32_t)len);
    memcpy(c + 4, type, 4);
    uint32_t crc = libdeflate_crc32(0, c + 4, len + 4); /* vectorised, as for Adler-32 */
    put_u32(c + 8 + len, crc);
    b->len = start + 12 + len;
}

/* The Adler-32 after len more zero bytes: the sum a stays, b grows by a for each. */
static uint32_t adler_zeros(uint32_t adler, size_t len)
{
    uint64_t a = adler & 0xffff, b = adler >> 16;
    return (uint32_t)((b + (uint64_t)(len % 65521) * a) % 65521) << 16 | (uint32_t)a;
}

/* The Adler-32 of the scanlines so far, with the zero bytes at their end not yet summed:
 * a run of them (the right of one row, empty rows, the left of the next) costs one
 * adler_zeros, whose divisions are the dearest part of an empty row. */
struct line_sum {
    uint32_t adler;
    size_t zeros;
};

/* The bytes [lo, hi) of row y that live says may be other than zero. */
static void live_bytes(const int32_t *live, uint32_t y, size_t row, size_t *lo, size_t *hi)
{
    *lo = (size_t)live[2 * y] * 4;
    *hi = (size_t)live[2 * y + 1] * 4;
    if (*lo >= *hi)
        *lo = *hi = row;
}

/* Scanline y (its filter byte, 0, then the row) summed into sum: with live spans, the empty
 * parts are counted without being read. */
static void sum_scanline(const uint8_t *line, size_t row, const int32_t *live, uint32_t y,
                         struct line_sum *sum)
{
    if (!live) { /* then no row has zeros pending: live is the same for every row */
        sum->adler = libdeflate_adler32(sum->adler, line, row + 1);
        return;
    }
    size_t lo, hi;
    live_bytes(live, y, row, &lo, &hi);
    sum->zeros += 1 + lo;
    if (hi > lo) {
        sum->adler = adler_zeros(sum->adler, sum->zeros);
        sum->adler = libdeflate_adler32(sum->adler, line + 1 + lo, hi - lo);
        sum->zeros = 0;
    }
    sum->zeros += row - hi;
}

/* Scanline y into line (filter byte, then the row), summed into sum unless that is NULL:
 * with live spans, the empty parts are zeroed rather than copied. */
static void put_scanline(uint8_t *line, const uint8_t *px, size_t row, const int32_t *live,
                         uint32_t y, struct line_sum *sum)
{
    line[0] = 0; /* filter: none */
    size_t lo = 0, hi = row;
    if (live)
        live_bytes(live, y, row, &lo, &hi);
    memset(line + 1, 0, lo);
    memcpy(line + 1 + lo, px + lo, hi - lo);
    memset(line + 1 + hi, 0, row - hi);
    if (sum)
        sum_scanline(line, row, live, y, sum);
}

/* The default encoder's blocks: at most this many bytes of scanlines each (a row at least),
 * so that its scratch is that of one block, whatever the picture's size. A 512x512 frame
 * (1 MiB) is one block; a 4096x4096 sheet takes 8 MiB of scratch rather than 256. */
#define DYN_BLOCK_BYTES ((size_t)2 << 20)

/* Rows to a block: as even a cut as whole rows allow. */
static uint32_t block_rows(size_t line, uint32_t h)
{
    size_t most = DYN_BLOCK_BYTES / line ? DYN_BLOCK_BYTES / line : 1;
    size_t blocks = (h + most - 1) / most;
    return (uint32_t)((h + blocks - 1) / blocks);
}

static size_t aligned16(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

/* The scratch deflate_rows needs: a block's scanlines with the row before them when they
 * must be copied, then the block's tokens. 0 if that overflows. */
static size_t dyn_scratch_size(size_t line, uint32_t h, bool in_place)
{
    uint32_t rows = block_rows(line, h);
    size_t tokens = deflate_dyn_scratch_size(rows * line);
    size_t lines = in_place ? 0 : aligned16((rows + 1) * line);
    return tokens && lines <= SIZE_MAX - tokens ? lines + tokens : 0;
}

/* skeld's default stream, a block of rows at a time: each block's scanlines are summed into
 * the Adler-32 (vectorised by libdeflate: zlib's took 60% of the encoding time) and, unless
 * they are scanlines already (in_place), copied to scratch with the row before them, then
 * deflated while still in cache. */
static size_t deflate_rows(const uint8_t *rgba, uint32_t w, uint32_t h, bool in_place,
                           const int32_t *live, size_t cell, uint8_t *scratch, uint8_t *z)
{
    size_t row = (size_t)w * 4, line = row + 1;
    uint32_t rows = block_rows(line, h);
    uint8_t *tokens = scratch + (in_place ? 0 : aligned16((rows + 1) * line));
    struct line_sum sum = {1, 0};
    struct deflate_dyn_stream d;
    deflate_dyn_begin(&d, z);
    for (uint32_t y0 = 0, y1; y0 < h; y0 = y1) {
        y1 = h - y0 > rows ? y0 + rows : h;
        uint32_t before = y0 ? 1 : 0;
        const uint8_t *in = rgba - 1; /* in place: the filter byte of row 0 */
        const int32_t *in_live = live;
        size_t from = y0 * line;
        if (!in_place) {
            in = scratch;
            in_live = live ? live + 2 * (y0 - before) : NULL;
            from = before * line;
            if (before)
                put_scanline(scratch, rgba + (y0 - 1) * row, row, live, y0 - 1, NULL);
        }
        for (uint32_t y = y0; y < y1; y++) {
            size_t at = from + (y - y0) * line;
            if (in_place)
                sum_scanline(in + at, row, live, y, &sum);
            else
                put_scanline(scratch + at, rgba + y * row, row, live, y, &sum);
        }
        deflate_dyn_block(&d, in, from, from + (size_t)(y1 - y0) * line, line, cell, in_live,
                          y1 == h, tokens);
    }
    return deflate_dyn_end(&d, adler_zeros(sum.adler, sum.zeros));
}

/* skeld's own encoder: unfiltered scanlines (the matches at distance 4 and one row up do what
 * the Sub and Up filters would) through deflate_dyn. */
static int encode_own(const uint8_t *rgba, uint32_t w, uint32_t h, bool in_place,
                      const int32_t *live, uint32_t cell_width, struct byte_buf *out,
                      struct byte_buf *scratch)
{
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    size_t row = (size_t)w * 4, raw = (row + 1) * h;
    for (uint32_t y = 0; live && y < h; y++) /* spans that do not fit: read everything */
        if (live[2 * y] < 0 || live[2 * y] > live[2 * y + 1] || live[2 * y + 1] > (int64_t)w)
            live = NULL;
    size_t need = dyn_scratch_size(row + 1, h, in_place), bound = deflate_dyn_bound(raw);
    scratch->len = 0;
    if (raw / (row + 1) != h || !need || byte_buf_reserve(scratch, need) ||
        byte_buf_reserve(out, 8 + 25 + 12 + bound + 12))
        return ENG_ENOMEM;
    memcpy(out->data + out->len, sig, 8);
    size_t at = out->len + 8;
    uint8_t *ihdr = out->data + at + 8;
    put_u32(ihdr, w);
    put_u32(ihdr + 4, h);
    memcpy(ihdr + 8, "\x08\x06\x00\x00\x00", 5); /* 8-bit RGBA, no interlace */
    close_chunk(out, at, "IHDR", 13);
    at = out->len;
    uint8_t *z = out->data + at + 8;
    /* in bytes; deflate_dyn_block judges whether it is a distance it can use */
    size_t zlen =
        deflate_rows(rgba, w, h, in_place, live, (size_t)cell_width * 4, scratch->data, z);
    close_chunk(out, at, "IDAT", zlen);
    close_chunk(out, out->len, "IEND", 0);
    return 0;
}

int png_encode(const uint8_t *rgba, uint32_t w, uint32_t h, const struct png_opts *opts,
               struct byte_buf *out, struct byte_buf *scratch)
{
    struct png_opts o;
    if (opts)
        o = *opts;
    else
        png_opts_default(&o);
    if (!w || !h || w > 0x7fffffffu / 4 || o.level < PNG_LEVEL_DEFAULT || o.level > 9)
        return ENG_EINVAL;
    if (o.level < 0) {
        struct byte_buf own = {0};
        int rc = encode_own(rgba, w, h, o.scanlines, o.live, o.cell_width, out,
                            scratch ? scratch : &own);
        free(own.data);
        return rc;
    }
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
