/* Atlas decoding without libpng's row machinery: every atlas SkelForm writes is 8-bit RGBA,
 * and most of its rows use the Paeth filter, which libpng undoes a byte at a time. Here the
 * zlib stream goes through libdeflate into the output buffer itself, and the rows are
 * unfiltered in place a pixel (Paeth, Sub, Average) or 16 bytes (Up) at a time. Anything
 * unusual is left to libpng (see png_read.h), so its answers, errors included, stand. */
#include "png_read.h"

#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Ancillary chunks that cannot change the pixels the simplified reader gives for RGBA8
 * (gamma, chromaticities, ICC profiles, significant bits and the like send the file to
 * libpng). */
static bool harmless(const uint8_t type[4])
{
    static const char ok[][5] = {"sRGB", "pHYs", "tEXt", "zTXt", "iTXt", "tIME", "bKGD", "eXIf"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (!memcmp(type, ok[i], 4))
            return true;
    return false;
}

/* Walks the chunks after the signature: calls on_idat for each IDAT's data; false if a
 * chunk overruns the file, a CRC is wrong, a chunk is not one we take, or IEND is missing. */
static bool walk(const uint8_t *png, size_t len, void (*on_idat)(void *, const uint8_t *, size_t),
                 void *ctx)
{
    size_t at = 8;
    bool first = true;
    while (len - at >= 12) {
        uint32_t n = get_u32(png + at);
        const uint8_t *type = png + at + 4, *data = png + at + 8;
        if (n > len - at - 12)
            return false;
        if (libdeflate_crc32(0, type, (size_t)n + 4) != get_u32(data + n))
            return false;
        if (first != !memcmp(type, "IHDR", 4))
            return false; /* IHDR first, and once */
        first = false;
        if (!memcmp(type, "IEND", 4))
            return true;
        if (!memcmp(type, "IDAT", 4)) {
            if (on_idat)
                on_idat(ctx, data, n);
        } else if (memcmp(type, "IHDR", 4) && !harmless(type)) {
            return false;
        }
        at += 12 + (size_t)n;
    }
    return false;
}

bool png_read_probe(const uint8_t *png, size_t len, uint32_t *width, uint32_t *height)
{
    if (len < 8 + 25 || memcmp(png, signature, 8) || get_u32(png + 8) != 13 ||
        memcmp(png + 12, "IHDR", 4))
        return false;
    const uint8_t *ih = png + 16;
    uint32_t w = get_u32(ih), h = get_u32(ih + 4);
    /* 8 bits, RGBA (colour type 6), deflate, the one filter method, no interlace */
    if (!w || !h || w > 0x7fffffffu / 4 || h > 0x7fffffffu || ih[8] != 8 || ih[9] != 6 || ih[10] ||
        ih[11] || ih[12])
        return false;
    if (!walk(png, len, NULL, NULL))
        return false;
    *width = w;
    *height = h;
    return true;
}

struct idat {
    uint8_t *buf;
    size_t len;
};

static void gather(void *ctx, const uint8_t *data, size_t n)
{
    struct idat *d = ctx;
    memcpy(d->buf + d->len, data, n);
    d->len += n;
}

/* Four bytes added lane by lane, without carries between them. */
static uint32_t add_bytes(uint32_t x, uint32_t y)
{
    return ((x & 0x7f7f7f7fu) + (y & 0x7f7f7f7fu)) ^ ((x ^ y) & 0x80808080u);
}

/* floor((x + y) / 2) lane by lane. */
static uint32_t average_bytes(uint32_t x, uint32_t y)
{
    return (x & y) + (((x ^ y) & 0xfefefefeu) >> 1);
}

static uint32_t load4(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static void store4(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

#ifndef __SSE2__
/* The predictor (PNG spec 9.4): of left, up and up-left, the one nearest left + up - upleft,
 * ties to left, then up. */
static uint8_t paeth_byte(uint8_t a, uint8_t b, uint8_t c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return pa <= pb && pa <= pc ? a : (pb <= pc ? b : c);
}
#else
/* paeth_byte for four bytes at once, in 16-bit lanes. */
static __m128i paeth_sse2(__m128i a, __m128i b, __m128i c)
{
    const __m128i z = _mm_setzero_si128();
    __m128i pa = _mm_sub_epi16(b, c), pb = _mm_sub_epi16(a, c);
    __m128i pc = _mm_add_epi16(pa, pb);
    pa = _mm_max_epi16(pa, _mm_sub_epi16(z, pa)); /* |p - a| = |b - c| */
    pb = _mm_max_epi16(pb, _mm_sub_epi16(z, pb)); /* |p - b| = |a - c| */
    pc = _mm_max_epi16(pc, _mm_sub_epi16(z, pc)); /* |p - c| = |a + b - 2c| */
    __m128i not_a = _mm_or_si128(_mm_cmpgt_epi16(pa, pb), _mm_cmpgt_epi16(pa, pc));
    __m128i b_or_c = _mm_or_si128(_mm_andnot_si128(_mm_cmpgt_epi16(pb, pc), b),
                                  _mm_and_si128(_mm_cmpgt_epi16(pb, pc), c));
    return _mm_or_si128(_mm_andnot_si128(not_a, a), _mm_and_si128(not_a, b_or_c));
}
#endif

/* One Paeth row of w pixels: out[i] = raw[i] + paeth(left, up, upleft). Where up equals left
 * the predictor is left whatever up-left is (p - left and p - up are both left - upleft, and
 * p - upleft is twice that). Atlases are mostly empty space and flat colour, so four pixels
 * whose raw bytes are zero and whose up pixels all equal left are four more of left, and
 * left and up-left are then that colour. (93% of the Paeth pixels of the skellington's
 * atlas go four at a time this way.) */
static void unpaeth(uint8_t *out, const uint8_t *raw, const uint8_t *up, uint32_t w)
{
#ifdef __SSE2__
    const __m128i z = _mm_setzero_si128();
    __m128i a = z, c = z;
    uint32_t left = 0;
    for (uint32_t x = 0; x < w;) {
        if (x + 4 <= w) {
            __m128i same = _mm_set1_epi32((int)left);
            __m128i r = _mm_loadu_si128((const __m128i *)(const void *)(raw + 4 * x));
            __m128i u = _mm_loadu_si128((const __m128i *)(const void *)(up + 4 * x));
            __m128i flat = _mm_and_si128(_mm_cmpeq_epi8(r, z), _mm_cmpeq_epi8(u, same));
            if (_mm_movemask_epi8(flat) == 0xffff) {
                /* raw's 16 bytes are read before out's, which may overlap them, are written */
                _mm_storeu_si128((__m128i *)(void *)(out + 4 * x), same);
                c = a;
                x += 4;
                continue;
            }
        }
        __m128i b = _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)load4(up + 4 * x)), z);
        __m128i pred = _mm_packus_epi16(paeth_sse2(a, b, c), z);
        left = add_bytes(load4(raw + 4 * x), (uint32_t)_mm_cvtsi128_si32(pred));
        store4(out + 4 * x, left);
        a = _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)left), z);
        c = b;
        x++;
    }
#else
    for (uint32_t i = 0; i < 4 * w; i++) {
        uint8_t a = i >= 4 ? out[i - 4] : 0, c = i >= 4 ? up[i - 4] : 0;
        out[i] = (uint8_t)(raw[i] + paeth_byte(a, up[i], c));
    }
#endif
}

/* Undoes one row's filter. raw may start after out (in place: reads stay ahead of writes);
 * up is the previous unfiltered row (zeros for the first). */
static bool unfilter(uint8_t *out, const uint8_t *raw, const uint8_t *up, uint32_t w, uint8_t f)
{
    size_t n = (size_t)w * 4, i = 0;
    uint32_t left = 0;
    switch (f) {
    case 0: memmove(out, raw, n); return true;
    case 1:
        for (; i < n; i += 4)
            store4(out + i, left = add_bytes(load4(raw + i), left));
        return true;
    case 2:
#ifdef __SSE2__
        for (; i + 16 <= n; i += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(raw + i));
            __m128i u = _mm_loadu_si128((const __m128i *)(const void *)(up + i));
            _mm_storeu_si128((__m128i *)(void *)(out + i), _mm_add_epi8(v, u));
        }
#endif
        for (; i < n; i += 4)
            store4(out + i, add_bytes(load4(raw + i), load4(up + i)));
        return true;
    case 3:
        for (; i < n; i += 4)
            store4(out + i, left = add_bytes(load4(raw + i), average_bytes(left, load4(up + i))));
        return true;
    case 4: unpaeth(out, raw, up, w); return true;
    default: return false;
    }
}

bool png_read_rgba8(const uint8_t *png, size_t len, uint32_t w, uint32_t h, uint8_t *out)
{
    return png_read_rgba8_rows(png, len, w, h, out, NULL, NULL);
}

bool png_read_rgba8_rows(const uint8_t *png, size_t len, uint32_t w, uint32_t h, uint8_t *out,
                         void (*row_done)(void *ctx, uint8_t *row, uint32_t y), void *ctx)
{
    size_t row = (size_t)w * 4, raw_len = (row + 1) * h, got = 0;
    if (raw_len / (row + 1) != h)
        return false;
    struct idat d = {malloc(len), 0}; /* the IDATs' data, joined, is shorter than the file */
    uint8_t *zero = calloc(row, 1);
    struct libdeflate_decompressor *z = libdeflate_alloc_decompressor();
    bool ok =
        d.buf && zero && z && walk(png, len, gather, &d) &&
        libdeflate_zlib_decompress(z, d.buf, d.len, out, raw_len, &got) == LIBDEFLATE_SUCCESS &&
        got == raw_len;
    /* Row y's scanline starts y + 1 bytes after where its pixels go: unfiltering left to
     * right reads each byte before anything is written over it. */
    for (uint32_t y = 0; ok && y < h; y++) {
        const uint8_t *line = out + (size_t)y * (row + 1);
        ok = unfilter(out + (size_t)y * row, line + 1, y ? out + (size_t)(y - 1) * row : zero, w,
                      line[0]);
        if (ok && y && row_done) /* row y - 1 was row y's "up": it is final only now */
            row_done(ctx, out + (size_t)(y - 1) * row, y - 1);
    }
    if (ok && row_done)
        row_done(ctx, out + (size_t)(h - 1) * row, h - 1);
    libdeflate_free_decompressor(z);
    free(zero);
    free(d.buf);
    return ok;
}
