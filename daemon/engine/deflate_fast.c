/* A deflate encoder specialised for rendered thumbnails (RFC 1950/1951). Thumbnails are
 * mostly empty space and flat colour, so repeating the previous RGBA pixel (a match at
 * distance 4) captures most of what a general LZ77 search would find, at a fraction of the
 * cost; everything else is a literal. Fixed Huffman codes need no tables in the stream. */
#include "deflate_fast.h"

#include <string.h>

#include "deflate_bits.h"

/* Fixed literal/length code of symbol s, bit-reversed for LSB-first output. */
static void fixed_code(unsigned s, uint32_t *code, unsigned *len)
{
    if (s < 144)
        *code = 0x30 + s, *len = 8;
    else if (s < 256)
        *code = 0x190 + (s - 144), *len = 9;
    else if (s < 280)
        *code = s - 256, *len = 7;
    else
        *code = 0xc0 + (s - 280), *len = 8;
    *code = bits_reverse(*code, *len);
}

struct tables {
    uint32_t lit[256];
    uint8_t lit_len[256];
    uint32_t match[259]; /* length code + extra bits + distance-4 code, for lengths 3..258 */
    uint8_t match_len[259];
    uint32_t end;
    uint8_t end_len;
};

static void build(struct tables *t)
{
    static const uint16_t base[29] = {3,  4,  5,  6,   7,   8,   9,   10,  11, 13,
                                      15, 17, 19, 23,  27,  31,  35,  43,  51, 59,
                                      67, 83, 99, 115, 131, 163, 195, 227, 258};
    static const uint8_t extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
    unsigned len;
    for (unsigned s = 0; s < 256; s++) {
        fixed_code(s, &t->lit[s], &len);
        t->lit_len[s] = (uint8_t)len;
    }
    fixed_code(256, &t->end, &len);
    t->end_len = (uint8_t)len;
    uint32_t dist = bits_reverse(3, 5); /* distance 4 is distance code 3, no extra bits */
    for (unsigned l = 3; l <= 258; l++) {
        unsigned k = 28;
        while (base[k] > l)
            k--;
        uint32_t code;
        fixed_code(257 + k, &code, &len);
        uint32_t bits = code | (uint32_t)(l - base[k]) << len;
        len += extra[k];
        t->match[l] = bits | dist << len;
        t->match_len[l] = (uint8_t)(len + 5);
    }
}

/* Built once at load time (before any thread can use it), read-only afterwards. */
static struct tables fixed;

__attribute__((constructor)) static void init_tables(void)
{
    build(&fixed);
}

size_t deflate_fast_bound(size_t n)
{
    return n + n / 8 + 64;
}

/* Length of the repeat of the previous pixel starting at i (0 if under 3). */
static size_t repeat_len(const uint8_t *in, size_t i, size_t n)
{
    size_t max = n - i < 258 ? n - i : 258, l = 0;
    while (l + 8 <= max) {
        uint64_t a, b;
        memcpy(&a, in + i + l, 8);
        memcpy(&b, in + i + l - 4, 8);
        if (a != b)
            break;
        l += 8;
    }
    while (l < max && in[i + l] == in[i + l - 4])
        l++;
    return l >= 3 ? l : 0;
}

/* Adler-32 (RFC 1950) kept alongside the encoder: a literal adds one byte, and a repeat of
 * the previous pixel is summed in closed form per byte position, so long empty or flat runs
 * cost nothing extra. Sums stay far below 2^63 between reductions. */
#define ADLER_MOD 65521u

struct adler {
    uint64_t a, b;
};

static void adler_byte(struct adler *s, uint8_t x)
{
    s->a += x;
    s->b += s->a;
}

/* L bytes repeating p[0..3] from its start. */
static void adler_repeat(struct adler *s, const uint8_t *p, size_t L)
{
    uint64_t sum = 0, weighted = 0;
    for (size_t j = 0; j < 4 && j < L; j++) {
        uint64_t count = (L - j + 3) / 4; /* positions j, j+4, ... below L */
        sum += p[j] * count;
        /* byte at position k adds (L - k) times to b: sum over k = j + 4m */
        weighted += p[j] * (count * (L - j) - 4 * count * (count - 1) / 2);
    }
    s->b += L * s->a + weighted;
    s->a += sum;
    if (s->b >= (1ull << 50)) {
        s->a %= ADLER_MOD;
        s->b %= ADLER_MOD;
    }
}

size_t deflate_fast(const uint8_t *in, size_t n, uint8_t *out)
{
    struct adler ad = {1, 0};
    const struct tables *t = &fixed;
    uint8_t *start = out;
    *out++ = 0x78; /* deflate, 32K window */
    *out++ = 0x01; /* fastest; header checksum */
    struct bits b = {out, 0, 0};
    bits_put(&b, 1, 1); /* final block */
    bits_put(&b, 1, 2); /* fixed Huffman */
    for (size_t i = 0; i < n;) {
        size_t l = i >= 4 ? repeat_len(in, i, n) : 0;
        if (l) {
            bits_put(&b, t->match[l], t->match_len[l]);
            adler_repeat(&ad, in + i - 4, l);
            i += l;
        } else {
            bits_put(&b, t->lit[in[i]], t->lit_len[in[i]]);
            adler_byte(&ad, in[i]);
            i++;
        }
        if (ad.b >= (1ull << 50)) {
            ad.a %= ADLER_MOD;
            ad.b %= ADLER_MOD;
        }
    }
    bits_put(&b, t->end, t->end_len);
    out = bits_end(&b);
    uint32_t adler = (uint32_t)((ad.b % ADLER_MOD) << 16 | (ad.a % ADLER_MOD));
    for (int k = 3; k >= 0; k--)
        *out++ = (uint8_t)(adler >> (8 * k));
    return (size_t)(out - start);
}
