/* The default deflate's two tokenizers agree byte for byte. deflate_dyn.c is built into this
 * test a second time with __SSE2__ undefined, which is the byte-by-byte path a machine
 * without SSE2 takes, and both builds must write the same stream for pictures made to put
 * repeats of every length (below, at and above MIN_REPEAT) at every place in the
 * thirty-two bytes the SIMD path compares at once, with and without live spans, in one block
 * and in several. Each stream must also inflate (zlib) to its input. */
#define _GNU_SOURCE /* memmem */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#undef __SSE2__
#define deflate_dyn_bound deflate_dyn_bound_portable
#define deflate_dyn_scratch_size deflate_dyn_scratch_size_portable
#define deflate_dyn_begin deflate_dyn_begin_portable
#define deflate_dyn_block deflate_dyn_block_portable
#define deflate_dyn_end deflate_dyn_end_portable
#include "engine/deflate_dyn.c"
#undef deflate_dyn_bound
#undef deflate_dyn_scratch_size
#undef deflate_dyn_begin
#undef deflate_dyn_block
#undef deflate_dyn_end

/* The library's build (SSE2 on x86-64), as deflate_dyn.h declares it. */
size_t deflate_dyn_bound(size_t n);
size_t deflate_dyn_scratch_size(size_t n);
void deflate_dyn_begin(struct deflate_dyn_stream *z, uint8_t *out);
void deflate_dyn_block(struct deflate_dyn_stream *z, const uint8_t *in, size_t from, size_t to,
                       size_t stride, size_t cell, const int32_t *live, bool last, void *scratch);
size_t deflate_dyn_end(struct deflate_dyn_stream *z, uint32_t adler);

static uint32_t rng_state;
/* The distance of a sheet's cell to the left that picture() repeats and the streams use (0:
 * none, as for a frame). */
static size_t g_cell;

static uint32_t rng(void)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return rng_state >> 8;
}

/* Scanlines of w pixels, h rows (filter byte 0 first): random bytes from a small alphabet
 * broken by repeats of the byte 4 back or a row back, of lengths 1 to 24, so that repeats
 * start and end everywhere. With spans, pixels outside [lo, hi) of each row are zero. */
static uint8_t *picture(uint32_t w, uint32_t h, unsigned literal_pct, int32_t *live)
{
    size_t stride = (size_t)w * 4 + 1, n = stride * h;
    uint8_t *in = calloc(n, 1);
    ck_assert_ptr_nonnull(in);
    for (uint32_t y = 0; y < h; y++) {
        int32_t lo = 0, hi = (int32_t)w;
        if (live) {
            lo = (int32_t)(rng() % (w / 2 + 1));
            hi = lo + (int32_t)(rng() % (w - (uint32_t)lo + 1));
            if (y % 7 == 3)
                lo = hi = 0; /* an empty row */
            live[2 * y] = lo;
            live[2 * y + 1] = hi;
        }
        uint8_t *line = in + y * stride + 1;
        for (size_t i = (size_t)lo * 4; i < (size_t)hi * 4;) {
            size_t at = (size_t)(line - in) + i;
            if (at < stride || rng() % 100 < literal_pct) {
                line[i++] = (uint8_t)(rng() % 6);
                continue;
            }
            unsigned pick = rng() % (g_cell ? 3 : 2);
            size_t d = pick == 0 ? 4 : pick == 1 ? stride : g_cell, run = 1 + rng() % 24;
            if (at < d)
                d = 4;
            for (; run > 0 && i < (size_t)hi * 4; run--, i++, at++)
                in[at] = in[at - d];
        }
    }
    return in;
}

/* in[0..n) (h scanlines of stride bytes) as blocks of rows_per rows, by one build or the
 * other, into out; returns the stream's length. */
static size_t in_blocks(bool portable, const uint8_t *in, size_t stride, uint32_t h,
                        uint32_t rows_per, const int32_t *live, uint32_t adler, uint8_t *out)
{
    void *scratch = malloc(deflate_dyn_scratch_size_portable(stride * rows_per));
    ck_assert_ptr_nonnull(scratch);
    struct deflate_dyn_stream z;
    (portable ? deflate_dyn_begin_portable : deflate_dyn_begin)(&z, out);
    for (uint32_t y = 0; y < h; y += rows_per) {
        uint32_t end = h - y > rows_per ? y + rows_per : h;
        (portable ? deflate_dyn_block_portable : deflate_dyn_block)(
            &z, in, y * stride, end * stride, stride, g_cell, live, end == h, scratch);
    }
    free(scratch);
    return (portable ? deflate_dyn_end_portable : deflate_dyn_end)(&z, adler);
}

/* Both builds on in[0..n): the same bytes, and they inflate to in. Returns the first block's
 * type (RFC 1951: 0 stored, 2 dynamic Huffman), which only a Huffman block makes depend on
 * the tokens. */
static int both_agree(const uint8_t *in, size_t n, size_t stride, const int32_t *live,
                      const char *what)
{
    size_t bound = deflate_dyn_bound(n) + 8;
    uint8_t *a = malloc(bound), *b = malloc(bound), *back = malloc(n + 1);
    ck_assert(a && b && back);
    uint32_t adler = (uint32_t)adler32(adler32(0, NULL, 0), in, (uInt)n);
    uint32_t h = (uint32_t)(n / stride); /* one block of all the rows */
    size_t la = in_blocks(false, in, stride, h, h, live, adler, a);
    size_t lb = in_blocks(true, in, stride, h, h, live, adler, b);
    ck_assert_msg(la == lb && !memcmp(a, b, la), "%s: SSE2 %zu bytes, byte by byte %zu, differ",
                  what, la, lb);
    uLongf got = (uLongf)n + 1;
    ck_assert_msg(uncompress(back, &got, a, (uLong)la) == Z_OK && got == n && !memcmp(back, in, n),
                  "%s: the stream does not inflate to its input", what);
    int type = a[2] >> 1 & 3; /* after the 2-byte zlib header: BFINAL, then BTYPE */
    free(a);
    free(b);
    free(back);
    return type;
}

START_TEST(sse2_and_byte_by_byte_agree)
{
    static const uint32_t widths[] = {3, 4, 5, 17, 64, 131};
    static const unsigned literal_pcts[] = {2, 20, 60, 95};
    char what[96];
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
        for (size_t pi = 0; pi < sizeof literal_pcts / sizeof literal_pcts[0]; pi++)
            for (int spans = 0; spans < 2; spans++)
                for (uint32_t seed = 1; seed <= 6; seed++) {
                    uint32_t w = widths[wi], h = 40;
                    int32_t live[2 * 40];
                    rng_state = seed * 7919u + (uint32_t)wi;
                    g_cell = seed % 2 ? 4 * (size_t)(w / 2) : 0; /* a sheet of two cells */
                    uint8_t *in = picture(w, h, literal_pcts[pi], spans ? live : NULL);
                    snprintf(what, sizeof what, "w %u, %u%% literals, spans %d, seed %u, cell %zu",
                             w, literal_pcts[pi], spans, seed, g_cell);
                    both_agree(in, ((size_t)w * 4 + 1) * h, (size_t)w * 4 + 1, spans ? live : NULL,
                               what);
                    free(in);
                }
    g_cell = 0;
}
END_TEST

/* Repeats of exactly each length from 1 to 40 at each of the 32 offsets of a window, in a
 * row of otherwise distinct bytes: the greedy choice at the edge of MIN_REPEAT, and repeats
 * that end in the window, at its end and past it. Empty rows below make the picture worth a
 * Huffman block (a stored one would hide any difference in the tokens), which is checked. */
START_TEST(each_repeat_length_at_each_offset)
{
    uint32_t w = 40, h = 24;
    size_t stride = (size_t)w * 4 + 1, n = stride * h;
    char what[64];
    for (size_t len = 1; len <= 40; len++)
        for (size_t off = 0; off < 32; off++)
            for (int kind = 0; kind < 3; kind++) { /* the pixel before, above, a cell left */
                uint8_t *in = calloc(n, 1);
                ck_assert_ptr_nonnull(in);
                for (size_t i = 1; i < 2 * stride; i++)
                    in[i] = i % stride ? (uint8_t)(i * 37 % 251 + 1) : 0;
                g_cell = kind == 2 ? 4 * (w / 2) : 0;
                size_t d = kind == 1 ? stride : kind == 2 ? g_cell : 4, at = stride + 32 + off;
                for (size_t k = 0; k < len; k++)
                    in[at + k] = in[at + k - d];
                snprintf(what, sizeof what, "length %zu at offset %zu, distance %zu", len, off, d);
                ck_assert_msg(both_agree(in, n, stride, NULL, what) == 2, "%s: not a Huffman block",
                              what);
                free(in);
            }
    g_cell = 0;
}
END_TEST

/* A stream written as several blocks, as png.c writes a large picture: both builds write the
 * same bytes, the stream inflates to its input (zlib checks the Adler-32), and a block of
 * noise in the middle goes out stored: its bytes are in the stream as they are, which a
 * Huffman block would not leave them. */
START_TEST(blocks_agree_and_inflate)
{
    uint32_t w = 64, h = 60;
    size_t stride = (size_t)w * 4 + 1, n = stride * h;
    static const uint32_t rows_per[] = {1, 7, 10, 59, 60};
    char what[96];
    for (int spans = 0; spans < 2; spans++) {
        int32_t live[2 * 60];
        rng_state = 4242u + (uint32_t)spans;
        uint8_t *in = picture(w, h, 20, spans ? live : NULL);
        for (size_t i = 20 * stride; i < 30 * stride; i++) /* rows 20-29: noise */
            in[i] = i % stride ? (uint8_t)(rng() >> 3) : 0;
        if (spans)
            for (int y = 20; y < 30; y++)
                live[2 * y] = 0, live[2 * y + 1] = (int32_t)w;
        uint32_t adler = (uint32_t)adler32(adler32(0, NULL, 0), in, (uInt)n);
        size_t bound = deflate_dyn_bound(n) + 8;
        uint8_t *a = malloc(bound), *b = malloc(bound), *back = malloc(n);
        ck_assert(a && b && back);
        for (size_t k = 0; k < sizeof rows_per / sizeof rows_per[0]; k++) {
            const int32_t *lv = spans ? live : NULL;
            snprintf(what, sizeof what, "blocks of %u rows, spans %d", rows_per[k], spans);
            size_t la = in_blocks(false, in, stride, h, rows_per[k], lv, adler, a);
            size_t lb = in_blocks(true, in, stride, h, rows_per[k], lv, adler, b);
            ck_assert_msg(la == lb && !memcmp(a, b, la), "%s: SSE2 %zu bytes, byte by byte %zu",
                          what, la, lb);
            uLongf got = (uLongf)n;
            ck_assert_msg(uncompress(back, &got, a, (uLong)la) == Z_OK && got == n &&
                              !memcmp(back, in, n),
                          "%s: the stream does not inflate to its input", what);
            if (rows_per[k] == 10) /* rows 20-29 are a block of their own */
                ck_assert_msg(memmem(a, la, in + 20 * stride, 10 * stride),
                              "%s: the block of noise is not stored", what);
        }
        free(a);
        free(b);
        free(back);
        free(in);
    }
}
END_TEST

/* A block of noise with a few repeats, whose Huffman codes from sampled counts come out
 * about as large as stored blocks, sometimes just larger: whichever way the estimate goes, the
 * block is never larger than stored (its header and LEN/NLEN, 5 bytes, plus the zlib header
 * and checksum, 6), and it inflates. */
START_TEST(never_larger_than_stored)
{
    enum { N = 6000 };
    uint8_t in[N], back[N];
    uint8_t *out = malloc(deflate_dyn_bound(N) + 8);
    void *scratch = malloc(deflate_dyn_scratch_size(N));
    ck_assert(out && scratch);
    int stored = 0, huffman = 0;
    for (uint32_t seed = 1; seed <= 300; seed++) {
        rng_state = seed;
        for (size_t i = 0; i < N; i++) /* noise, a skewed alphabet, runs of 6 now and then */
            in[i] = i >= 6 && rng() % 40 == 0 ? in[i - 4] : (uint8_t)(rng() % (200 + seed % 57));
        uint32_t adler = (uint32_t)adler32(adler32(0, NULL, 0), in, N);
        struct deflate_dyn_stream z; /* one block, no rows (stride 0) */
        deflate_dyn_begin(&z, out);
        deflate_dyn_block(&z, in, 0, N, 0, 0, NULL, true, scratch);
        size_t len = deflate_dyn_end(&z, adler);
        ck_assert_msg(len <= N + 5 + 6, "seed %u: %zu bytes for %d", seed, len, N);
        uLongf got = N;
        ck_assert_msg(uncompress(back, &got, out, (uLong)len) == Z_OK && got == N &&
                          !memcmp(back, in, N),
                      "seed %u: the stream does not inflate to its input", seed);
        (out[2] >> 1 & 3) == 0 ? stored++ : huffman++;
    }
    ck_assert_msg(stored && huffman, "%d stored, %d Huffman: the seeds should make both", stored,
                  huffman);
    free(out);
    free(scratch);
}
END_TEST

/* The bits one Huffman block of in[0..n) takes as written, against block_bits, which (from
 * sampled counts, an estimate) says whether Huffman codes are worth trying: for exact counts
 * they must be equal, header (code-length runs with
 * their extra bits) and body. Pictures of two to all 256 byte values, so that the code lengths
 * hold long runs of zeros (symbol 18, 7 extra bits), short ones (17) and repeats (16). */
START_TEST(block_bits_is_exact)
{
    uint32_t w = 48, h = 40;
    size_t stride = (size_t)w * 4 + 1, n = stride * h;
    static const unsigned alphabet[] = {2, 6, 40, 256};
    for (size_t k = 0; k < 4 * sizeof alphabet / sizeof alphabet[0]; k++) {
        int32_t live[2 * 40];
        rng_state = 777u + (uint32_t)k;
        bool spans = k % 2;
        g_cell = k % 4 == 3 ? 4 * (size_t)(w / 2) : 0; /* a sheet of two cells */
        uint8_t *in = picture(w, h, k % 4 < 2 ? 30 : 90, spans ? live : NULL);
        for (size_t i = 0; i < n; i++) /* the alphabet's values, repeats kept */
            in[i] = (uint8_t)(in[i] * 43u % alphabet[k / 4]);
        for (uint32_t y = 0; y < h; y++)
            in[y * stride] = 0;
        uint16_t *items = malloc(deflate_dyn_scratch_size_portable(n));
        uint8_t *out = malloc(deflate_dyn_bound(n) + 8);
        ck_assert(items && out);
        struct freqs f;
        memset(&f, 0, sizeof f);
        struct dists ds = dists_of(stride, g_cell);
        size_t count = tokenize(in, 0, n, &ds, spans ? live : NULL, items);
        count_items(items, count, &f, &ds, false); /* exact counts */
        struct block bk;
        plan_block(&bk, &f);
        struct bits b = {out, 0, 0};
        put_header(&b, &bk, true);
        put_items(&b, &bk, items, count, &ds);
        uint64_t written = (uint64_t)(b.out - out) * 8 + b.n;
        ck_assert_msg(written == block_bits(&bk, &f),
                      "alphabet %u, spans %d: %llu bits written, block_bits says %llu",
                      alphabet[k / 4], spans, (unsigned long long)written,
                      (unsigned long long)block_bits(&bk, &f));
        free(items);
        free(out);
        free(in);
    }
    g_cell = 0;
}
END_TEST

/* The next len bits of an LSB-first stream at in, from bit *at on. */
static uint32_t read_bits(const uint8_t *in, size_t *at, unsigned len)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < len; i++, (*at)++)
        v |= (uint32_t)(in[*at / 8] >> (*at % 8) & 1u) << i;
    return v;
}

/* Items of every kind (literals, lengths, both distances) go out as their codes in order,
 * three to a put or two: random items with codes as long as each kind's can be, where three
 * to a put is used (a length 20 bits, a distance of one bit and its 13 extra) and where it is
 * not (a distance of 28), read back code by code. */
START_TEST(items_go_out_in_order)
{
    enum { ITEMS = 3000 };
    uint16_t it[ITEMS + 2];
    uint8_t *out = calloc(ITEMS * 4 + 16, 1);
    ck_assert_ptr_nonnull(out);
    rng_state = 99u;
    size_t count = 0;
    while (count < ITEMS - 1) { /* a length is always followed by its distance */
        if (rng() % 3) {
            it[count++] = (uint16_t)(rng() % 256);
        } else {
            it[count++] = (uint16_t)(LENGTH + rng() % 256);
            it[count++] = (uint16_t)(rng() % 2 ? DIST_4 : DIST_UP);
        }
    }
    it[count] = it[count + 1] = NOTHING;
    for (unsigned per = 2; per <= 3; per++) {
        struct item_codes ic;
        for (unsigned x = 0; x < ITEM_SYMS; x++) {
            unsigned most = x < LENGTH ? 15 : x < DIST_4 ? 20 : per == 3 ? 14 : 28;
            ic.len[x] = (uint8_t)(x == NOTHING ? 0 : x % 4 == 0 ? most : 1 + rng() % most);
            ic.code[x] = (uint32_t)(rng() & ((1ull << ic.len[x]) - 1));
        }
        memset(out, 0, ITEMS * 4 + 16);
        struct bits b = {out, 0, 0};
        put_items_per(&b, &ic, it, count, per);
        bits_end(&b);
        size_t at = 0;
        for (size_t i = 0; i < count; i++) {
            uint32_t got = read_bits(out, &at, ic.len[it[i]]);
            ck_assert_msg(got == ic.code[it[i]], "%u to a put: item %zu (%u) reads %x, not %x", per,
                          i, (unsigned)it[i], got, (unsigned)ic.code[it[i]]);
        }
        ck_assert_msg(b.out == out + (at + 7) / 8, "%u to a put: %zu bytes written for %zu bits",
                      per, (size_t)(b.out - out), at);
    }
    free(out);
}
END_TEST

/* bits_reverse against a bit at a time, for every code of 1 to 16 bits. */
START_TEST(bits_reverse_reverses)
{
    for (unsigned len = 1; len <= 16; len++)
        for (uint32_t code = 0; code < 1u << len; code++) {
            uint32_t want = 0;
            for (unsigned i = 0; i < len; i++)
                want |= (code >> i & 1u) << (len - 1 - i);
            ck_assert_msg(bits_reverse(code, len) == want, "%u bits, %#x: %#x, not %#x", len, code,
                          bits_reverse(code, len), want);
        }
}
END_TEST

static Suite *deflate_suite(void)
{
    Suite *s = suite_create("deflate");
    TCase *tc = tcase_create("tokenizers");
    tcase_add_test(tc, sse2_and_byte_by_byte_agree);
    tcase_add_test(tc, each_repeat_length_at_each_offset);
    tcase_add_test(tc, blocks_agree_and_inflate);
    tcase_add_test(tc, block_bits_is_exact);
    tcase_add_test(tc, never_larger_than_stored);
    tcase_add_test(tc, bits_reverse_reverses);
    tcase_add_test(tc, items_go_out_in_order);
    tcase_set_timeout(tc, 300);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(deflate_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
