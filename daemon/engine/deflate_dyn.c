/* The default PNG deflate (RFC 1950/1951), measured against libdeflate and zlib in
 * contrib/bench/bench-render: a general LZ77 search hashes every byte of a 512x512 picture
 * (1 MiB), mostly empty space, and takes ~3 ms; here the only candidates are the previous
 * pixel and the pixel above, checked eight bytes at a time, so empty and flat areas cost
 * almost nothing, and one dynamic Huffman block fitted to the picture's symbols makes the
 * literals of the drawn parts cheaper than fixed codes would. Two passes: items (a literal's
 * byte, a match's length and distance) and their frequencies, then the codes and the bits,
 * where every item's bits come from one table, with no test of what kind it is. */
#include "deflate_dyn.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "deflate_bits.h"

#define MAX_MATCH 258
/* Repeats shorter than this go out as literals. Deflate allows 3, but a picture's detailed
 * areas hold thousands of short repeats, and each is a token whose kind (literal or repeat,
 * which distance) the CPU cannot predict. From 6 bytes on, a robot frame encodes in 0.84x
 * the time for 4% more bytes; 4, 5, 7 and 8 were slower (bench-render). */
#define MIN_REPEAT 6
#define MAX_DIST 32768
#define LITLEN_SYMS 286
#define DIST_SYMS 30
#define CL_SYMS 19
/* Pass 1 writes items, 16 bits each: a literal is its byte, a match two items, its length
 * (LENGTH + length - 3) and then its distance (DIST_4, DIST_UP or DIST_CELL). Pass 2 is then
 * one loop over items with no test of their kind: each is a table's code and length. NOTHING
 * pads the items to a whole number of puts. */
#define LENGTH 256u
#define DIST_4 512u
#define DIST_UP 513u
#define DIST_CELL 514u
#define NOTHING 515u
#define ITEM_SYMS 516u
/* Items pass 1 may write past those it keeps: a window's literals are copied 32 at a time. */
#define ITEMS_SPARE 64u

static const uint16_t len_base[29] = {3,  4,  5,  6,   7,   8,   9,   10,  11, 13,
                                      15, 17, 19, 23,  27,  31,  35,  43,  51, 59,
                                      67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[30] = {
    1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
    193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                       6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
/* The order code-length code lengths are sent in (RFC 1951 3.2.7). */
static const uint8_t cl_order[CL_SYMS] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                          11, 4,  12, 3, 13, 2, 14, 1, 15};
/* The extra bits after the code-length symbols 16, 17 and 18 (the run's length). */
static const uint8_t cl_extra[3] = {2, 3, 7};

/* Length 3..258 -> its length code index (symbol 257 + index). Built once at load time,
 * read-only afterwards. */
static uint8_t len_code[MAX_MATCH + 1];

__attribute__((constructor)) static void init_len_codes(void)
{
    for (unsigned l = 3, k = 0; l <= MAX_MATCH; l++) {
        while (k < 28 && len_base[k + 1] <= l)
            k++;
        len_code[l] = (uint8_t)k;
    }
}

static unsigned dist_code(size_t d)
{
    unsigned k = 29;
    while (dist_base[k] > d)
        k--;
    return k;
}

/* A literal's code is 15 bits at most, a match's 48 for 3 bytes or more, and blocks of
 * 64 KiB or more have a header of a few hundred bytes: under 2 bytes a byte. The block's
 * Huffman codes are tried when they look smaller than stored blocks, so the bound is that of
 * the worst codes, not of stored blocks. */
size_t deflate_dyn_bound(size_t n)
{
    return 2 * n + 1024;
}

/* The items: at most one a byte (a match's two cover 3 bytes at least), then padding. */
size_t deflate_dyn_scratch_size(size_t n)
{
    return n < SIZE_MAX / 4 ? (n + ITEMS_SPARE) * sizeof(uint16_t) : 0;
}

/* ---- pass 1: items ----------------------------------------------------------------------- */

#ifdef __SSE2__
/* The 16 bytes at p compared with those at q: 0xff where equal. */
static __m128i eq16(const uint8_t *p, const uint8_t *q)
{
    return _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)p),
                          _mm_loadu_si128((const __m128i *)(const void *)q));
}

/* eq16, or with four the 16 bytes at p compared with pat (the four bytes before them four
 * times over: p at a multiple of 4 from the start of a repeat at distance 4). */
static inline __attribute__((always_inline)) __m128i eq16_or(const uint8_t *p, const uint8_t *q,
                                                             __m128i pat, bool four)
{
    return four ? _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)p), pat)
                : eq16(p, q);
}

/* A compare's 16 bytes as 16 bits. */
static uint32_t mask16(__m128i e)
{
    return (uint32_t)_mm_movemask_epi8(e);
}
#endif

/* How far in[i..] repeats in[i - d..], at most max bytes. Most of a picture
 * is long repeats (empty space, flat colour), so the bytes are compared 64 at a time where SSE2
 * is (every x86-64), the four compares ANDed into one mask to test, else 8, and the first
 * difference found from the masks of equal bytes. (32 at a time, two masks tested, tokenize
 * took 1.05x the instructions on the critter frame: callgrind of bench-stages.) */
static inline __attribute__((always_inline)) size_t repeat_run_at(const uint8_t *in, size_t i,
                                                                  size_t max, size_t d, bool four)
{
    size_t l = 0;
    if (max >= 8) { /* most repeats in detailed areas are short: one 8-byte look first */
        uint64_t a, b;
        memcpy(&a, in + i, 8);
        memcpy(&b, in + i - d, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (a != b) {
            return (size_t)__builtin_ctzll(a ^ b) >> 3;
        }
        l = 8;
#endif
    }
#ifdef __SSE2__
    const uint8_t *p = in + i, *q = in + i - d;
    uint32_t before = 0;
    if (four)
        memcpy(&before, in + i - 4, 4);
    __m128i pat = _mm_set1_epi32((int)before);
    for (; l + 64 <= max; l += 64) { /* one mask for 64 bytes: the four compares ANDed */
        __m128i e0 = eq16_or(p + l, q + l, pat, four),
                e1 = eq16_or(p + l + 16, q + l + 16, pat, four),
                e2 = eq16_or(p + l + 32, q + l + 32, pat, four),
                e3 = eq16_or(p + l + 48, q + l + 48, pat, four);
        __m128i all = _mm_and_si128(_mm_and_si128(e0, e1), _mm_and_si128(e2, e3));
        if (_mm_movemask_epi8(all) != 0xffff) {
            uint64_t same = (uint64_t)mask16(e0) | (uint64_t)mask16(e1) << 16 |
                            (uint64_t)mask16(e2) << 32 | (uint64_t)mask16(e3) << 48;
            return l + (size_t)__builtin_ctzll(~same);
        }
    }
    if (l + 32 <= max) {
        uint32_t same = mask16(eq16_or(p + l, q + l, pat, four)) |
                        mask16(eq16_or(p + l + 16, q + l + 16, pat, four)) << 16;
        if (same != 0xffffffffu)
            return l + (size_t)__builtin_ctz(~same);
        l += 32;
    }
#endif
    for (; l + 8 <= max; l += 8) {
        uint64_t a, b;
        memcpy(&a, in + i + l, 8);
        memcpy(&b, in + i + l - d, 8);
        if (a != b)
            break;
    }
    while (l < max && in[i + l] == in[i + l - d])
        l++;
    return l;
}

static size_t repeat_run(const uint8_t *in, size_t i, size_t max, size_t d)
{
    return repeat_run_at(in, i, max, d, false);
}

/* repeat_run at distance 4: the bytes from i repeat the four before i over and over, so where
 * the SIMD compares go 16 bytes from i at a multiple of 4, they are compared with those four
 * bytes four times over, one load a compare rather than two. */
static size_t repeat_run_4(const uint8_t *in, size_t i, size_t max)
{
    return repeat_run_at(in, i, max, 4, true);
}

/* repeat_run, or 0 for a repeat too short to be a match (under MIN_REPEAT). */
static size_t repeat_len(const uint8_t *in, size_t i, size_t max, size_t d)
{
    size_t l = repeat_run(in, i, max, d);
    return l >= MIN_REPEAT ? l : 0;
}

/* Where the run of zero bytes that i is in ends, from the live spans (deflate_dyn's): i
 * itself if i is in a row's live bytes. A run right of a row's live bytes goes on through
 * the next row's filter byte and its bytes left of its live ones, and through whole empty
 * rows. */
static size_t zero_run_end(const int32_t *live, size_t stride, size_t n, size_t i)
{
    size_t y = i / stride, o = i - y * stride;
    size_t lo = 1 + 4 * (size_t)live[2 * y], hi = 1 + 4 * (size_t)live[2 * y + 1];
    if (lo < hi && o >= lo && o < hi)
        return i;
    if (lo < hi && o < lo)
        return y * stride + lo;
    size_t end = (y + 1) * stride;
    for (y++; end < n; y++, end += stride) {
        lo = 1 + 4 * (size_t)live[2 * y];
        if (live[2 * y] < live[2 * y + 1])
            return end + lo;
    }
    return n;
}

/* repeat_run at distance 4 (i <= n), passing over known empty space without reading it: where
 * the four bytes before i are zero and i is in a run of zeros, the repeat reaches at least the
 * run's end (the same length a byte-by-byte look finds). */
static size_t repeat4_run(const uint8_t *in, size_t i, size_t n, const int32_t *live, size_t stride)
{
    size_t from = i;
    uint32_t before;
    memcpy(&before, in + i - 4, 4);
    if (live && before == 0 && i < n)
        from = zero_run_end(live, stride, n, i);
    return from - i + repeat_run_4(in, from, n - from);
}

/* repeat4_run, or 0 under MIN_REPEAT. */
static size_t repeat4_len(const uint8_t *in, size_t i, size_t n, const int32_t *live, size_t stride)
{
    size_t l = repeat4_run(in, i, n, live, stride);
    return l >= MIN_REPEAT ? l : 0;
}

/* The symbols' frequencies, which pass 1 leaves to count_items. */
struct freqs {
    uint32_t lit[LITLEN_SYMS];
    uint32_t dist[DIST_SYMS];
};

/* The distances a repeat may have besides 4 (the pixel before): a row up (stride) and, in a
 * sheet, a cell to the left (cell), where the frame before drew the same; 0 for none (cell is
 * then less than stride). With their distance codes. */
struct dists {
    size_t stride, cell;
    unsigned d4, dup, dcell;
};

/* A match's two items. */
static inline size_t put_match(uint16_t *it, size_t t, size_t l, unsigned dist)
{
    it[t] = (uint16_t)(LENGTH + l - 3);
    it[t + 1] = (uint16_t)dist;
    return t + 2;
}

/* A repeat of the previous pixel longer than one match can say (empty space, mostly): as
 * many matches of the longest length as fit, the rest in one or two (never one under 3). */
static size_t long_repeat(uint16_t *it, size_t t, size_t l)
{
    while (l > 0) {
        size_t take = l > MAX_MATCH + 2 ? MAX_MATCH : (l > MAX_MATCH ? l - 3 : l);
        t = put_match(it, t, take, DIST_4);
        l -= take;
    }
    return t;
}

/* The greedy choice at i, once the repeats at distance 4 (l4), one row up (lu) and one cell
 * left (lc) are known (0: under MIN_REPEAT): the longest, in that order of preference on a
 * tie, else a literal. A repeat of the previous pixel longer than one match can say is
 * followed as far as it goes. Returns the new item count; *i moves past what was taken. */
static inline __attribute__((always_inline)) size_t
take(const uint8_t *in, size_t *i, size_t l4, size_t lu, size_t lc, uint16_t *it, size_t t)
{
    if (l4 > MAX_MATCH) {
        *i += l4;
        return long_repeat(it, t, l4);
    }
    if (l4 == 0 && lu == 0 && lc == 0) {
        it[t] = in[*i];
        *i += 1;
        return t + 1;
    }
    bool up = lu > l4;
    size_t l = up ? lu : l4;
    unsigned dist = up ? DIST_UP : DIST_4;
    if (lc > l) {
        l = lc;
        dist = DIST_CELL;
    }
    *i += l;
    return put_match(it, t, l, dist);
}

/* The repeats one row up and one cell left at i (0: under MIN_REPEAT, or none), measured to
 * max bytes at most. */
static void other_repeats(const uint8_t *in, size_t i, size_t max, const struct dists *ds,
                          size_t *lu, size_t *lc)
{
    *lu = *lc = 0;
    if (ds->stride && i >= ds->stride && in[i] == in[i - ds->stride])
        *lu = repeat_len(in, i, max, ds->stride);
    if (ds->cell && i >= ds->cell && in[i] == in[i - ds->cell])
        *lc = repeat_len(in, i, max, ds->cell);
}

#ifdef __SSE2__
#define WINDOW 32u
/* The window's positions where a repeat of MIN_REPEAT bytes could start. */
#define WINDOW_STARTS (WINDOW + 1 - MIN_REPEAT)

/* The bits of m that start MIN_REPEAT (6) set bits in a row, by doubling: runs of 2, of 4,
 * then a run of 4 followed by one of 2. (A start flagged wrongly would cost only speed: the
 * lengths measured after it decide, as check_deflate shows against the byte-by-byte path.) */
_Static_assert(MIN_REPEAT == 6, "repeat_starts finds runs of exactly 6");
static uint32_t repeat_starts(uint32_t m)
{
    uint32_t two = m & m >> 1, four = two & two >> 2;
    return four & two >> 4;
}

/* The window's 32 bytes as literal items at at (which has room for 32, whatever the caller
 * keeps). */
static void copy_window(uint16_t *at, const uint8_t *p)
{
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)p),
            b = _mm_loadu_si128((const __m128i *)(const void *)(p + 16)), z = _mm_setzero_si128();
    _mm_storeu_si128((__m128i *)(void *)at, _mm_unpacklo_epi8(a, z));
    _mm_storeu_si128((__m128i *)(void *)(at + 8), _mm_unpackhi_epi8(a, z));
    _mm_storeu_si128((__m128i *)(void *)(at + 16), _mm_unpacklo_epi8(b, z));
    _mm_storeu_si128((__m128i *)(void *)(at + 24), _mm_unpackhi_epi8(b, z));
}

/* The mask of the window's bytes equal to those d back. */
static uint32_t same_as(const uint8_t *p, size_t d)
{
    __m128i a0 = _mm_loadu_si128((const __m128i *)(const void *)p),
            a1 = _mm_loadu_si128((const __m128i *)(const void *)(p + 16)),
            b0 = _mm_loadu_si128((const __m128i *)(const void *)(p - d)),
            b1 = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 - d));
    return (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a0, b0)) |
           (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a1, b1)) << 16;
}

/* How many of the window's bytes from bit lits on repeat, m being the mask of those equal to
 * the bytes a distance back: at most WINDOW - lits, since ~m's bits past the window's are set. */
static unsigned ones_from(uint32_t m, unsigned lits)
{
    return (unsigned)__builtin_ctzll(~(uint64_t)m >> lits);
}

/* Thirty-two bytes from i compared with those 4 back and a row back at once: the bytes from i
 * on that start no repeat of MIN_REPEAT or more at either distance (at most WINDOW_STARTS)
 * are literals; where a repeat starts, the same masks say how long each one is when it ends
 * within them, so only a longer one is measured on, from the window's end (measured again from
 * its start, the skellington frame took 2.4% longer: bench-deflate.sh). The items are those the
 * byte-by-byte checks would choose. Needs i >= stride >= WINDOW and i + WINDOW <= n. With sheet
 * a constant (always inlined), a frame's windows do none of the cell's work.
 *
 * A repeat starts at i, so one of the lengths is MIN_REPEAT or more and a match is taken;
 * the others need no zeroing under MIN_REPEAT, being shorter than it (take's choice). */
static inline __attribute__((always_inline)) size_t
tokenize_window(const uint8_t *in, size_t *at, size_t n, size_t stride, size_t cell,
                const int32_t *live, uint16_t *it, size_t t, bool sheet)
{
    size_t i = *at;
    const uint8_t *p = in + i;
    uint32_t m4 = same_as(p, 4), mu = same_as(p, stride), mc = sheet ? same_as(p, cell) : 0;
    uint32_t starts = repeat_starts(m4) | repeat_starts(mu) | (sheet ? repeat_starts(mc) : 0);
    copy_window(it + t, p);
    if (!starts) {
        *at = i + WINDOW_STARTS;
        return t + WINDOW_STARTS;
    }
    unsigned lits = (unsigned)__builtin_ctz(starts), known = WINDOW - lits;
    t += lits;
    i += lits;
    size_t l4 = ones_from(m4, lits);
    if (l4 == known)
        l4 += repeat4_run(in, i + known, n, live, stride);
    if (l4 > MAX_MATCH) {
        *at = i + l4;
        return long_repeat(it, t, l4);
    }
    size_t l = l4, lu = 0, lc = 0;
    unsigned dist = DIST_4;
    if (l4 < MAX_MATCH) {
        size_t max = n - i < MAX_MATCH ? n - i : MAX_MATCH; /* >= known: i + WINDOW <= n */
        lu = ones_from(mu, lits);
        if (lu == known)
            lu += repeat_run(in, i + known, max - known, stride);
        if (sheet) {
            lc = ones_from(mc, lits);
            if (lc == known)
                lc += repeat_run(in, i + known, max - known, cell);
        }
    }
    if (lu > l) {
        l = lu;
        dist = DIST_UP;
    }
    if (sheet && lc > l) {
        l = lc;
        dist = DIST_CELL;
    }
    *at = i + l;
    return put_match(it, t, l, dist);
}

/* The windows from *i on while a whole one fits (i + WINDOW <= n), for a sheet or not. */
static inline __attribute__((always_inline)) size_t
tokenize_windows(const uint8_t *in, size_t *at, size_t n, const struct dists *ds,
                 const int32_t *live, uint16_t *it, size_t t, bool sheet)
{
    size_t i = *at, stride = ds->stride, cell = ds->cell;
    for (size_t last = n - WINDOW; i <= last;)
        t = tokenize_window(in, &i, n, stride, cell, live, it, t, sheet);
    *at = i;
    return t;
}
#endif

/* The symbols' frequencies from the items. Counting is a fifth of the encoding, so with sample
 * half the items are counted, four of each eight at offsets that meet all four bytes of a
 * pixel, and the counts doubled: an estimate (every_symbol_coded makes it safe to build codes
 * from; deflate_dyn_block checks what it wrote). The counts go to four tables, so that an item
 * that recurs (an opaque alpha) does not wait on its own previous count. */
static void count_items(const uint16_t *it, size_t n, struct freqs *f, const struct dists *ds,
                        bool sample)
{
    uint32_t c[4][ITEM_SYMS];
    memset(c, 0, sizeof c);
    size_t i = 0;
    if (sample) {
        for (; i + 8 <= n; i += 8) {
            c[0][it[i]]++;
            c[1][it[i + 3]]++;
            c[2][it[i + 5]]++;
            c[3][it[i + 6]]++;
        }
    } else {
        for (; i + 4 <= n; i += 4) {
            c[0][it[i]]++;
            c[1][it[i + 1]]++;
            c[2][it[i + 2]]++;
            c[3][it[i + 3]]++;
        }
    }
    for (; i < n; i++)
        c[0][it[i]]++;
    for (unsigned x = 0; x < ITEM_SYMS; x++) {
        c[0][x] += c[1][x] + c[2][x] + c[3][x];
        if (sample)
            c[0][x] *= 2;
    }
    memcpy(f->lit, c[0], 256 * sizeof(uint32_t));
    f->lit[256] = 1; /* end of block */
    for (unsigned l = 3; l <= MAX_MATCH; l++)
        f->lit[257 + len_code[l]] += c[0][LENGTH + l - 3];
    f->dist[ds->d4] += c[0][DIST_4];
    f->dist[ds->dup] += c[0][DIST_UP];
    f->dist[ds->dcell] += c[0][DIST_CELL];
}

/* Sampled counts made safe to build codes from: every literal and length symbol, and each
 * distance the block may use, counted once at least, so each has a code whatever the items not
 * counted held. The codes come out within a few hundredths of a percent of those of exact counts.
 */
static void every_symbol_coded(struct freqs *f, const struct dists *ds)
{
    for (unsigned s = 0; s < LITLEN_SYMS; s++)
        f->lit[s] += !f->lit[s];
    f->dist[ds->d4] += !f->dist[ds->d4];
    f->dist[ds->dup] += !f->dist[ds->dup];
    if (ds->cell)
        f->dist[ds->dcell] += !f->dist[ds->dcell];
}

/* The greedy choice at i byte by byte, where no window fits. */
static size_t tokenize_byte(const uint8_t *in, size_t *i, size_t n, const struct dists *ds,
                            const int32_t *live, uint16_t *it, size_t t)
{
    size_t l4 = *i >= 4 && in[*i] == in[*i - 4] ? repeat4_len(in, *i, n, live, ds->stride) : 0,
           lu = 0, lc = 0;
    size_t max = n - *i < MAX_MATCH ? n - *i : MAX_MATCH;
    if (l4 < MAX_MATCH)
        other_repeats(in, *i, max, ds, &lu, &lc);
    return take(in, i, l4, lu, lc, it, t);
}

/* Greedy: at each byte from from on the longest of the repeats, else a literal (take). No
 * repeat reaches past n, so a block's items end where the block does. Windows apply from a row
 * in (i >= stride) to the last whole window, so the bytes go byte by byte, then in windows (the
 * test of where they apply made once, not at each), then byte by byte again. Returns the item
 * count; two NOTHING items follow them (put_items). */
static size_t tokenize(const uint8_t *in, size_t from, size_t n, const struct dists *ds,
                       const int32_t *live, uint16_t *it)
{
    size_t t = 0, i = from;
#ifdef __SSE2__
    /* Detailed areas are mostly literals and short repeats: thirty-two bytes at a time. */
    if (ds->stride >= WINDOW && n >= WINDOW) {
        while (i < ds->stride && i < n)
            t = tokenize_byte(in, &i, n, ds, live, it, t);
        if (ds->cell)
            t = tokenize_windows(in, &i, n, ds, live, it, t, true);
        else
            t = tokenize_windows(in, &i, n, ds, live, it, t, false);
    }
#endif
    while (i < n)
        t = tokenize_byte(in, &i, n, ds, live, it, t);
    it[t] = it[t + 1] = NOTHING; /* to a whole number of puts: put_items */
    return t;
}

/* ---- Huffman code lengths ---------------------------------------------------------------- */

struct leaf {
    uint32_t freq;
    uint16_t sym;
};

/* Leaves sorted by frequency, keeping their order among equal ones (symbol order, but for
 * leaves_of's padding, which comes last and only where it makes two leaves of depth 1): an LSD
 * radix sort, a byte of the frequency a pass, as many passes as the largest one has bytes
 * (two for a picture). Callgrind: a third of the instructions of the Shell sort it replaced,
 * and the same code lengths, so the same stream. */
static void sort_leaves(struct leaf *lv, unsigned m)
{
    struct leaf other[LITLEN_SYMS];
    uint32_t most = 0;
    for (unsigned i = 0; i < m; i++)
        most |= lv[i].freq;
    for (unsigned shift = 0; shift < 32 && most >> shift; shift += 8) {
        unsigned at[257] = {0};
        for (unsigned i = 0; i < m; i++)
            at[(lv[i].freq >> shift & 255) + 1]++;
        for (unsigned d = 1; d < 257; d++)
            at[d] += at[d - 1];
        for (unsigned i = 0; i < m; i++)
            other[at[lv[i].freq >> shift & 255]++] = lv[i];
        memcpy(lv, other, m * sizeof *lv);
    }
}

/* Depths of a Huffman tree over the m sorted leaves (m >= 2), built with two queues: leaves
 * in order, and internal nodes, which are made in order of weight. Returns the deepest. */
static unsigned tree_depths(const struct leaf *lv, unsigned m, uint8_t *depth_of_leaf)
{
    uint32_t w[2 * LITLEN_SYMS];
    uint16_t parent[2 * LITLEN_SYMS];
    uint8_t depth[2 * LITLEN_SYMS];
    if (m < 2) /* leaves_of gives two at least; this tells the compiler so */
        return 0;
    for (unsigned i = 0; i < m; i++)
        w[i] = lv[i].freq;
    unsigned next_leaf = 0, next_node = m, made = m;
    for (unsigned k = 0; k + 1 < m; k++, made++) {
        unsigned pick[2];
        for (int j = 0; j < 2; j++) {
            bool leaf = next_leaf < m && (next_node == made || w[next_leaf] <= w[next_node]);
            pick[j] = leaf ? next_leaf++ : next_node++;
        }
        w[made] = w[pick[0]] + w[pick[1]];
        parent[pick[0]] = parent[pick[1]] = (uint16_t)made;
    }
    unsigned root = made - 1, deepest = 0;
    depth[root] = 0;
    for (unsigned k = root; k-- > 0;) { /* a parent is always made after its children */
        depth[k] = (uint8_t)(depth[parent[k]] + 1);
        if (k < m && depth[k] > deepest)
            deepest = depth[k];
    }
    for (unsigned i = 0; i < m; i++)
        depth_of_leaf[i] = depth[i];
    return deepest;
}

/* The leaves of the symbols used, in symbol order, and at least two: unused symbols pad them
 * (frequency 1), so that the code is complete even when one or none is used. */
static unsigned leaves_of(const uint32_t *freq, unsigned n, struct leaf *lv)
{
    unsigned m = 0;
    for (unsigned s = 0; s < n; s++)
        if (freq[s])
            lv[m++] = (struct leaf){freq[s], (uint16_t)s};
    for (unsigned s = 0; m < 2; s++)
        if (!freq[s])
            lv[m++] = (struct leaf){1, (uint16_t)s};
    sort_leaves(lv, m);
    return m;
}

/* Code lengths (at most limit bits) for the n symbols' frequencies. Too deep a tree is built
 * again from flattened frequencies: rare, and it costs a few bits at most. */
static void huff_lengths(const uint32_t *freq, unsigned n, unsigned limit, uint8_t *len)
{
    struct leaf lv[LITLEN_SYMS];
    uint8_t depth[LITLEN_SYMS];
    uint32_t flat[LITLEN_SYMS];
    unsigned m = leaves_of(freq, n, lv);
    memset(len, 0, n);
    for (const uint32_t *f = freq; tree_depths(lv, m, depth) > limit; f = flat) {
        for (unsigned s = 0; s < n; s++)
            flat[s] = f[s] ? (f[s] >> 1) | 1 : 0;
        m = leaves_of(flat, n, lv);
    }
    for (unsigned i = 0; i < m; i++)
        len[lv[i].sym] = depth[i];
}

/* Canonical codes from lengths (RFC 1951 3.2.2), reversed for the LSB-first writer. */
static void huff_codes(const uint8_t *len, unsigned n, uint32_t *code)
{
    uint32_t count[16] = {0}, next[16];
    for (unsigned s = 0; s < n; s++)
        count[len[s]]++;
    count[0] = 0;
    uint32_t c = 0;
    for (unsigned b = 1; b < 16; b++) {
        c = (c + count[b - 1]) << 1;
        next[b] = c;
    }
    for (unsigned s = 0; s < n; s++)
        code[s] = len[s] ? bits_reverse(next[len[s]]++, len[s]) : 0;
}

/* ---- pass 2: the block ------------------------------------------------------------------- */

struct block {
    uint8_t lit_len[LITLEN_SYMS], dist_len[DIST_SYMS];
    uint32_t lit_code[LITLEN_SYMS], dist_code[DIST_SYMS];
    unsigned hlit, hdist;
    /* the code lengths, run-length coded: symbol | extra << 8 */
    uint16_t cl[LITLEN_SYMS + DIST_SYMS];
    unsigned cl_count, hclen;
    uint8_t cl_len[CL_SYMS];
    uint32_t cl_code[CL_SYMS];
};

/* Runs of equal lengths as 16 (repeat the last, 3-6), 17 (zeros, 3-10), 18 (zeros, 11-138). */
static void rle_lengths(struct block *bk, const uint8_t *all, unsigned n, uint32_t *freq)
{
    bk->cl_count = 0;
    for (unsigned i = 0; i < n;) {
        unsigned run = 1;
        while (i + run < n && all[i + run] == all[i])
            run++;
        unsigned v = all[i], take;
        if (v == 0 && run >= 3) {
            take = run > 138 ? 138 : run;
            unsigned sym = take >= 11 ? 18 : 17;
            bk->cl[bk->cl_count++] = (uint16_t)(sym | (take - (sym == 18 ? 11 : 3)) << 8);
            freq[sym]++;
        } else if (v != 0 && run >= 4) { /* the length once, then 3 to 6 repeats of it */
            unsigned rep = run - 1 > 6 ? 6 : run - 1;
            bk->cl[bk->cl_count++] = (uint16_t)v;
            freq[v]++;
            bk->cl[bk->cl_count++] = (uint16_t)(16 | (rep - 3) << 8);
            freq[16]++;
            take = 1 + rep;
        } else {
            take = 1;
            bk->cl[bk->cl_count++] = (uint16_t)v;
            freq[v]++;
        }
        i += take;
    }
}

static void plan_block(struct block *bk, const struct freqs *f)
{
    huff_lengths(f->lit, LITLEN_SYMS, 15, bk->lit_len);
    huff_lengths(f->dist, DIST_SYMS, 15, bk->dist_len);
    huff_codes(bk->lit_len, LITLEN_SYMS, bk->lit_code);
    huff_codes(bk->dist_len, DIST_SYMS, bk->dist_code);
    for (bk->hlit = LITLEN_SYMS; bk->hlit > 257 && !bk->lit_len[bk->hlit - 1];)
        bk->hlit--;
    for (bk->hdist = DIST_SYMS; bk->hdist > 1 && !bk->dist_len[bk->hdist - 1];)
        bk->hdist--;
    uint8_t all[LITLEN_SYMS + DIST_SYMS];
    memcpy(all, bk->lit_len, bk->hlit);
    memcpy(all + bk->hlit, bk->dist_len, bk->hdist);
    uint32_t cl_freq[CL_SYMS] = {0};
    rle_lengths(bk, all, bk->hlit + bk->hdist, cl_freq);
    huff_lengths(cl_freq, CL_SYMS, 7, bk->cl_len);
    huff_codes(bk->cl_len, CL_SYMS, bk->cl_code);
    for (bk->hclen = CL_SYMS; bk->hclen > 4 && !bk->cl_len[cl_order[bk->hclen - 1]];)
        bk->hclen--;
}

static void put_header(struct bits *b, const struct block *bk, bool last)
{
    bits_put(b, last, 1); /* the final block? */
    bits_put(b, 2, 2);    /* dynamic Huffman */
    bits_put(b, bk->hlit - 257, 5);
    bits_put(b, bk->hdist - 1, 5);
    bits_put(b, bk->hclen - 4, 4);
    for (unsigned i = 0; i < bk->hclen; i++)
        bits_put(b, bk->cl_len[cl_order[i]], 3);
    for (unsigned i = 0; i < bk->cl_count; i++) {
        unsigned sym = bk->cl[i] & 0xff, extra = bk->cl[i] >> 8;
        bits_put(b, bk->cl_code[sym], bk->cl_len[sym]);
        if (sym >= 16)
            bits_put(b, extra, cl_extra[sym - 16]);
    }
}

/* A distance's code and extra bits, for the distances a match can have. */
struct dist_bits {
    uint32_t bits;
    unsigned len;
};

static struct dist_bits dist_bits_of(const struct block *bk, size_t d)
{
    unsigned k = dist_code(d);
    struct dist_bits db = {bk->dist_code[k], bk->dist_len[k]};
    db.bits |= (uint32_t)(d - dist_base[k]) << db.len;
    db.len += dist_extra[k];
    return db;
}

/* Every item's bits whole: a literal's code, a length's code and extra bits, a distance's
 * code and extra bits. */
struct item_codes {
    uint32_t code[ITEM_SYMS];
    uint8_t len[ITEM_SYMS];
};

/* The items' codes; returns the most bits three items in a row can take. */
static unsigned item_codes_of(struct item_codes *ic, const struct block *bk, const struct dists *ds)
{
    unsigned lit_most = 0, len_most = 0;
    for (unsigned s = 0; s < 256; s++) {
        ic->code[s] = bk->lit_code[s];
        ic->len[s] = bk->lit_len[s];
        lit_most = ic->len[s] > lit_most ? ic->len[s] : lit_most;
    }
    for (unsigned l = 3; l <= MAX_MATCH; l++) {
        unsigned k = len_code[l], sym = 257 + k;
        ic->code[LENGTH + l - 3] = bk->lit_code[sym] | (uint32_t)(l - len_base[k])
                                                           << bk->lit_len[sym];
        ic->len[LENGTH + l - 3] = (uint8_t)(bk->lit_len[sym] + len_extra[k]);
        len_most = ic->len[LENGTH + l - 3] > len_most ? ic->len[LENGTH + l - 3] : len_most;
    }
    struct dist_bits d4 = dist_bits_of(bk, 4), dup = ds->stride ? dist_bits_of(bk, ds->stride) : d4,
                     dcell = ds->cell ? dist_bits_of(bk, ds->cell) : d4;
    ic->code[DIST_4] = d4.bits;
    ic->len[DIST_4] = (uint8_t)d4.len;
    ic->code[DIST_UP] = dup.bits;
    ic->len[DIST_UP] = (uint8_t)dup.len;
    ic->code[DIST_CELL] = dcell.bits;
    ic->len[DIST_CELL] = (uint8_t)dcell.len;
    ic->code[NOTHING] = 0;
    ic->len[NOTHING] = 0;
    unsigned dist_most = d4.len > dup.len ? d4.len : dup.len;
    dist_most = dcell.len > dist_most ? dcell.len : dist_most;
    /* A distance follows each length, so three items hold one distance at most. */
    unsigned one = lit_most > len_most ? lit_most : len_most;
    return 2 * one + (dist_most > one ? dist_most : one);
}

/* The items, per (3 or 2) to a put, with no test of their kind in between. items[count] and
 * items[count + 1] are NOTHING. */
static void put_items_per(struct bits *out, const struct item_codes *ic, const uint16_t *it,
                          size_t count, unsigned per)
{
    /* A local writer: through out, each store of output bytes might change the writer's own
     * fields, and the compiler would load them again after it. */
    struct bits w = *out;
    size_t t = 0;
    if (per == 3) {
        for (; t < count; t += 3) {
            unsigned l0 = ic->len[it[t]], l1 = l0 + ic->len[it[t + 1]];
            bits_put(&w,
                     ic->code[it[t]] | (uint64_t)ic->code[it[t + 1]] << l0 |
                         (uint64_t)ic->code[it[t + 2]] << l1,
                     l1 + ic->len[it[t + 2]]);
        }
    } else {
        for (; t < count; t += 2) {
            unsigned l0 = ic->len[it[t]];
            bits_put(&w, ic->code[it[t]] | (uint64_t)ic->code[it[t + 1]] << l0,
                     l0 + ic->len[it[t + 1]]);
        }
    }
    *out = w;
}

/* The block's items and its end: three to a put where three fit in one (at most 56 bits: the
 * distance codes are of one or two bits, since a block uses three distances at most), else two
 * (a length with its extra bits is 20 bits at most, a distance 28). */
static void put_items(struct bits *b, const struct block *bk, const uint16_t *it, size_t count,
                      const struct dists *ds)
{
    struct item_codes ic;
    unsigned per = item_codes_of(&ic, bk, ds) <= 56 ? 3 : 2;
    put_items_per(b, &ic, it, count, per);
    bits_put(b, bk->lit_code[256], bk->lit_len[256]);
}

/* What the block takes, in bits, exactly as put_header and put_items write it: to fall back
 * to stored blocks when it would not pay. */
static uint64_t block_bits(const struct block *bk, const struct freqs *f)
{
    uint64_t bits = 3 + 14 + 3 * bk->hclen;
    for (unsigned i = 0; i < bk->cl_count; i++) {
        unsigned sym = bk->cl[i] & 0xff;
        bits += bk->cl_len[sym] + (sym >= 16 ? cl_extra[sym - 16] : 0);
    }
    for (unsigned s = 0; s < LITLEN_SYMS; s++)
        bits += (uint64_t)f->lit[s] * (bk->lit_len[s] + (s >= 257 ? len_extra[s - 257] : 0));
    for (unsigned s = 0; s < DIST_SYMS; s++)
        bits += (uint64_t)f->dist[s] * (bk->dist_len[s] + dist_extra[s]);
    return bits;
}

/* Incompressible input (noise): stored blocks of up to 65535 bytes, each from a byte
 * boundary (its 3 header bits padded). */
static void put_stored(struct bits *b, const uint8_t *in, size_t n, bool last)
{
    size_t i = 0;
    do {
        size_t len = n - i > 65535 ? 65535 : n - i;
        bits_put(b, last && i + len == n, 3); /* BFINAL, BTYPE 00 */
        uint8_t *out = bits_end(b);
        const uint8_t h[4] = {(uint8_t)len, (uint8_t)(len >> 8), (uint8_t)~len,
                              (uint8_t)(~len >> 8)};
        memcpy(out, h, 4);
        memcpy(out + 4, in + i, len);
        b->out = out + 4 + len;
        i += len;
    } while (i < n);
}

void deflate_dyn_begin(struct deflate_dyn_stream *z, uint8_t *out)
{
    out[0] = 0x78; /* deflate, 32K window */
    out[1] = 0x01; /* the fastest kind; header checksum */
    z->start = out;
    z->bits = (struct bits){out + 2, 0, 0};
}

/* The distances of a block: cell only below stride, and neither past the window. */
static struct dists dists_of(size_t stride, size_t cell)
{
    struct dists ds = {stride, cell, dist_code(4), 0, 0};
    if (stride > MAX_DIST || !stride)
        ds.stride = 0;
    if (!ds.stride || cell >= ds.stride || cell <= 4)
        ds.cell = 0;
    ds.dup = ds.stride ? dist_code(ds.stride) : 0;
    ds.dcell = ds.cell ? dist_code(ds.cell) : 0;
    return ds;
}

void deflate_dyn_block(struct deflate_dyn_stream *z, const uint8_t *in, size_t from, size_t to,
                       size_t stride, size_t cell, const int32_t *live, bool last, void *scratch)
{
    struct dists ds = dists_of(stride, cell);
    if (!ds.stride)
        live = NULL;
    size_t n = to - from;
    uint16_t *items = scratch;
    struct freqs f;
    memset(&f, 0, sizeof f);
    size_t count = tokenize(in, from, to, &ds, live, items);
    count_items(items, count, &f, &ds, true);
    struct freqs coded = f;
    every_symbol_coded(&coded, &ds);
    struct block bk;
    plan_block(&bk, &coded);
    /* A local writer: through z, every store of output bytes might change the writer's own
     * fields, and the compiler would load them again after each (6% more instructions). */
    struct bits b = z->bits, start = b;
    uint64_t stored = 8 * ((uint64_t)n + 5 * (n / 65535 + 1));
    bool huffman = block_bits(&bk, &f) <= stored; /* an estimate: the counts were sampled */
    if (huffman) {
        put_header(&b, &bk, last);
        put_items(&b, &bk, items, count, &ds);
        huffman = (uint64_t)(b.out - start.out) * 8 + b.n - start.n <= stored;
    }
    if (!huffman) { /* or larger than stored blocks after all: written again, stored */
        b = start;
        put_stored(&b, in + from, n, last);
    }
    z->bits = b;
}

size_t deflate_dyn_end(struct deflate_dyn_stream *z, uint32_t adler)
{
    uint8_t *out = bits_end(&z->bits);
    for (int k = 3; k >= 0; k--)
        *out++ = (uint8_t)(adler >> (8 * k));
    return (size_t)(out - z->start);
}
