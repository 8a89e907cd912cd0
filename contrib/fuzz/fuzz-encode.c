/* libFuzzer target: skeld's own PNG encoder (daemon/engine/png.c, deflate_dyn.c), at the
 * default level and at "fast" (the same encoder, asked for by its old name), on pictures made from
 * arbitrary bytes, decoded again by the atlas reader (libdeflate's inflate, which checks the
 * Adler-32) and compared pixel for pixel. The first bytes choose the size (1-64 x 1-64), the
 * encoder, whether pixels come from a 4-colour palette (long matches, both distances) or straight
 * from the input (literals), spans of drawn pixels per row as the renderer reports them
 * (png_opts.live), honest or past the edge, and whether the picture is a sheet of cells
 * (png_opts.cell_width, 2 to 9 pixels, many pixels a copy of the one a cell to the left); with
 * honest spans the default encoder must write the very bytes it writes without them. Each
 * picture is encoded again from its scanlines (png_opts.scanlines, a buffer of exactly their
 * size, so that a read past them is caught), and must give the same bytes. One scratch buffer
 * serves every input, as a worker's does. Any difference aborts. Build and run:
 * contrib/fuzz/run.sh encode */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/png.h"
#include "engine/png_read.h"

enum { FAST = 1, SPANS = 2, BAD_SPAN = 4, PALETTE = 8, CELLS = 16 };

static struct byte_buf scratch; /* kept across inputs: reachable at exit, not a leak */

struct picture {
    uint32_t w, h, cell_w;
    unsigned mode;
    uint8_t *rgba;
    int32_t *live;
};

/* Byte i of the input after the header, 0 past its end. */
static uint8_t at(const uint8_t *data, size_t len, size_t i)
{
    return i < len ? data[i] : 0;
}

static bool make_picture(const uint8_t *data, size_t len, struct picture *p)
{
    if (len < 3)
        return false;
    p->w = 1 + data[0] % 64;
    p->h = 1 + data[1] % 64;
    p->mode = data[2];
    data += 3;
    len -= 3;
    size_t n = (size_t)p->w * p->h;
    p->rgba = malloc(n * 4);
    p->live = malloc(2 * p->h * sizeof *p->live);
    if (!p->rgba || !p->live)
        return false;
    static const uint32_t palette[4] = {0, 0xff2060a0u, 0x80808080u, 0xffffffffu};
    for (size_t i = 0; i < n; i++) {
        if (p->mode & PALETTE) {
            uint32_t c = palette[at(data, len, i / 4) >> (2 * (i % 4)) & 3];
            memcpy(p->rgba + 4 * i, &c, 4);
        } else {
            for (int k = 0; k < 4; k++)
                p->rgba[4 * i + k] = at(data, len, 4 * i + k);
        }
    }
    /* A sheet: cells of 2 to 9 pixels (the mode's top bits), pixels whose first byte is odd
     * copied from a cell to the left, as a frame repeats what the one before drew. */
    p->cell_w = p->mode & CELLS ? 2 + (p->mode >> 5) : 0;
    for (size_t i = 0; p->cell_w && i < n; i++)
        if (i % p->w >= p->cell_w && p->rgba[4 * i] % 2)
            memcpy(p->rgba + 4 * i, p->rgba + 4 * (i - p->cell_w), 4);
    /* Spans from the input's end, and the pixels outside them cleared so they are honest. */
    for (uint32_t y = 0; y < p->h; y++) {
        uint32_t lo = at(data, len, len - 1 - (2 * y) % (len ? len : 1)) % (p->w + 1);
        uint32_t hi = lo + at(data, len, len - 1 - (2 * y + 1) % (len ? len : 1)) % (p->w + 1 - lo);
        p->live[2 * y] = (int32_t)lo;
        p->live[2 * y + 1] = (int32_t)hi;
        for (uint32_t x = 0; x < p->w; x++)
            if ((p->mode & SPANS) && (x < lo || x >= hi))
                memset(p->rgba + 4 * ((size_t)y * p->w + x), 0, 4);
    }
    if (p->mode & BAD_SPAN) /* past the edge: the encoder must not trust any span */
        p->live[2 * (p->h / 2) + 1] = (int32_t)p->w + 1;
    return true;
}

static void encode_or_die(const struct picture *p, const struct png_opts *o, struct byte_buf *out)
{
    out->len = 0;
    if (png_encode(p->rgba, p->w, p->h, o, out, &scratch)) {
        fprintf(stderr, "png_encode failed on %ux%u (mode %#x)\n", p->w, p->h, p->mode);
        abort();
    }
}

/* The same picture from its scanlines (a zero byte before each row), as render_opts.png_rows
 * lays them out: the same PNG. */
static void same_from_scanlines(const struct picture *p, struct png_opts o,
                                const struct byte_buf *want)
{
    size_t row = (size_t)p->w * 4;
    uint8_t *lines = malloc((row + 1) * p->h);
    struct byte_buf png = {0};
    if (!lines)
        return;
    for (uint32_t y = 0; y < p->h; y++) {
        lines[y * (row + 1)] = 0;
        memcpy(lines + y * (row + 1) + 1, p->rgba + y * row, row);
    }
    o.scanlines = true;
    if (png_encode(lines + 1, p->w, p->h, &o, &png, &scratch) || png.len != want->len ||
        memcmp(png.data, want->data, png.len)) {
        fprintf(stderr, "%ux%u (mode %#x): other bytes from scanlines\n", p->w, p->h, p->mode);
        abort();
    }
    free(png.data);
    free(lines);
}

static void decode_and_compare(const struct picture *p, const struct byte_buf *png)
{
    uint32_t w, h;
    uint8_t *back = malloc((size_t)p->w * p->h * 4 + p->h);
    if (!back)
        return;
    if (!png_read_probe(png->data, png->len, &w, &h) || w != p->w || h != p->h ||
        !png_read_rgba8(png->data, png->len, w, h, back)) {
        fprintf(stderr, "the %ux%u PNG (mode %#x) does not decode\n", p->w, p->h, p->mode);
        abort();
    }
    if (memcmp(back, p->rgba, (size_t)w * h * 4)) {
        fprintf(stderr, "the %ux%u PNG (mode %#x) decodes to other pixels\n", w, h, p->mode);
        abort();
    }
    free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    struct picture p = {0};
    struct byte_buf png = {0}, plain = {0};
    if (make_picture(data, len, &p)) {
        struct png_opts o = {.level = p.mode & FAST ? PNG_LEVEL_FAST : PNG_LEVEL_DEFAULT,
                             .cell_width = p.cell_w};
        if (p.mode & SPANS)
            o.live = p.live;
        encode_or_die(&p, &o, &png);
        decode_and_compare(&p, &png);
        same_from_scanlines(&p, o, &png);
        if (o.live) { /* the spans change how it reads, never what it writes */
            o.live = NULL;
            encode_or_die(&p, &o, &plain);
            if (plain.len != png.len || memcmp(plain.data, png.data, png.len)) {
                fprintf(stderr, "%ux%u (mode %#x): other bytes with the spans\n", p.w, p.h, p.mode);
                abort();
            }
        }
    }
    free(png.data);
    free(plain.data);
    free(p.rgba);
    free(p.live);
    return 0;
}
