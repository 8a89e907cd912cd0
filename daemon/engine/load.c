/* .skf archive -> armature: libzip for the archive, load_json.c for armature.json, libpng's
 * simplified API for the atlases (decoded once to straight RGBA8). */
#define _DEFAULT_SOURCE /* madvise */
#include "load.h"

#include <errno.h>
#include <png.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <unistd.h>
#include <zip.h>

#include "load_json.h"
#include "png_read.h"

void load_limits_default(struct load_limits *lim)
{
    lim->max_uncompressed = 256u << 20;
    /* Real exports hold under 100 KB of JSON; jansson needs tens of bytes a value, so these
     * bound a parse to about 100 MB whatever the file claims. */
    lim->max_json = 16u << 20;
    lim->max_json_values = 1000000;
    lim->max_atlas_pixels = 8192u * 8192u;
    /* 512 MB of RGBA: a PNG of a few hundred KB can say 8192x8192, and atlases[] may name
     * it again and again, so the pixels of all of them are bounded, not each one only */
    lim->max_total_atlas_pixels = 2ull * 8192u * 8192u;
    lim->max_bones = 10000;
    lim->max_keyframes = 2000000;
    lim->max_vertices = 1000000;
    lim->skip_atlas_pixels = false;
}

static void fill_limits(const struct load_limits *in, struct load_limits *out)
{
    load_limits_default(out);
    if (!in)
        return;
    if (in->max_uncompressed)
        out->max_uncompressed = in->max_uncompressed;
    if (in->max_json)
        out->max_json = in->max_json;
    if (in->max_json_values)
        out->max_json_values = in->max_json_values;
    if (in->max_atlas_pixels)
        out->max_atlas_pixels = in->max_atlas_pixels;
    if (in->max_total_atlas_pixels)
        out->max_total_atlas_pixels = in->max_total_atlas_pixels;
    if (in->max_bones)
        out->max_bones = in->max_bones;
    if (in->max_keyframes)
        out->max_keyframes = in->max_keyframes;
    if (in->max_vertices)
        out->max_vertices = in->max_vertices;
    out->skip_atlas_pixels = in->skip_atlas_pixels;
}

/* Reads one archive member whole, counting it against the uncompressed budget. shown is the
 * name as messages print it. */
static int read_member(zip_t *za, const char *name, const char *shown, uint64_t *budget, char **out,
                       size_t *len, struct eng_error *err)
{
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat(za, name, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
        return eng_seterr(err, ENG_EBADFILE, "%s is not in the archive", shown);
    if (st.size > *budget)
        return eng_setlimit(err, ENG_LIMIT_UNCOMPRESSED,
                            "%s: %llu bytes uncompressed exceed the remaining limit of %llu", shown,
                            (unsigned long long)st.size, (unsigned long long)*budget);
    char *buf = malloc(st.size + 1);
    if (!buf)
        return eng_seterr(err, ENG_ENOMEM, "out of memory");
    zip_file_t *zf = zip_fopen(za, name, 0);
    if (!zf) { /* libzip says why: encrypted, a compression method it lacks, ... */
        free(buf);
        return eng_seterr(err, ENG_EBADFILE, "%s: cannot be read from the archive: %s", shown,
                          zip_strerror(za));
    }
    zip_int64_t got = zip_fread(zf, buf, st.size);
    /* libzip checks the member's CRC-32 only when a read reaches its end: without this one
     * more read a damaged member would load as whatever its bytes now say. */
    char past;
    zip_int64_t more = got >= 0 && (zip_uint64_t)got == st.size ? zip_fread(zf, &past, 1) : 0;
    bool crc = zip_error_code_zip(zip_file_get_error(zf)) == ZIP_ER_CRC;
    zip_fclose(zf);
    if (got < 0 || (zip_uint64_t)got != st.size || more != 0) {
        free(buf);
        return eng_seterr(err, ENG_EBADFILE, "%s: %s", shown,
                          crc ? "its CRC-32 does not match: the archive is damaged"
                              : "cannot be read from the archive (corrupt?)");
    }
    buf[st.size] = 0;
    *budget -= st.size;
    *out = buf;
    *len = st.size;
    return 0;
}

/* Pixel memory for an atlas. The renderer reads a minified atlas sparsely, a page or two per
 * texel; on 2 MiB pages (where the kernel offers them) those reads stop missing the TLB,
 * which is most of the cost of drawing otherwise. */
static void *alloc_pixels(size_t bytes)
{
    const size_t huge = 2u << 20;
    if (bytes < huge)
        return malloc(bytes);
    void *p = NULL;
    size_t rounded = (bytes + huge - 1) & ~(huge - 1);
    if (posix_memalign(&p, huge, rounded))
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, rounded, MADV_HUGEPAGE); /* advice only: failure changes nothing */
#endif
    return p;
}

static void premultiply_slow(uint8_t *px, size_t n)
{
    for (size_t i = 0; i < n; i++, px += 4) {
        unsigned a = px[3];
        if (a == 255)
            continue;
        for (int c = 0; c < 3; c++)
            px[c] = (uint8_t)((px[c] * a + 127) / 255);
    }
}

/* Where the two alpha bytes of two RGBA pixels lie in a word loaded from them. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define ALPHA_BYTES 0x000000ff000000ffull
#else
#define ALPHA_BYTES 0xff000000ff000000ull
#endif

/* The alpha bytes of four RGBA pixels (16 bytes), as two words with the colour masked off. */
static void alphas4(const uint8_t *px, uint64_t *lo, uint64_t *hi)
{
    const uint64_t mask = ALPHA_BYTES;
    memcpy(lo, px, 8);
    memcpy(hi, px + 8, 8);
    *lo &= mask;
    *hi &= mask;
}

/* A bilinear footprint whose top-left texel lies in a block reaches one texel into the
 * blocks to its right and below: keep a block's mark only where those (and the one
 * diagonally) are empty too, so that one look at the footprint's first texel answers for all
 * four. Blocks past the atlas's edge count as empty (clamped fetches never reach them). */
static void widen_clear_blocks(struct arm_atlas *at, uint32_t bh)
{
    size_t stride = at->clear_stride;
    for (uint32_t by = 0; by < bh; by++) {
        uint8_t *row = at->clear + (size_t)by * stride;
        const uint8_t *below = by + 1 < bh ? row + stride : NULL;
        /* Ascending: row[i + 1] and the row below are still unwidened when read. */
        for (size_t i = 0; i < stride; i++) {
            uint8_t here = below ? row[i] & below[i] : row[i];
            uint8_t next = i + 1 < stride ? (below ? row[i + 1] & below[i + 1] : row[i + 1]) : 0xff;
            row[i] = here & (uint8_t)(here >> 1 | next << 7);
        }
    }
}

/* Every 4x4 block (and the padding past the last) marked clear, for finish_atlas_row to
 * take the marks off (see struct arm_atlas). */
static int start_clear_blocks(struct arm_atlas *at)
{
    uint32_t bw = (at->width + 3) / 4, bh = (at->height + 3) / 4;
    at->clear_stride = (bw + 7) / 8;
    at->clear = malloc((size_t)at->clear_stride * bh + 1);
    if (!at->clear)
        return ENG_ENOMEM;
    memset(at->clear, 0xff, (size_t)at->clear_stride * bh + 1);
    return 0;
}

#ifdef __SSE2__
/* One register of four pixels (a block's row) for finish_16: transparent ones are zeroed with
 * a mask, translucent ones premultiplied one by one, opaque ones left. Returns whether any has
 * some alpha. */
static bool finish_4(uint8_t *p, __m128i v, __m128i a)
{
    const __m128i alpha = _mm_set1_epi32((int)0xff000000u);
    __m128i clear = _mm_cmpeq_epi32(a, _mm_setzero_si128());
    unsigned none = (unsigned)_mm_movemask_ps(_mm_castsi128_ps(clear));
    unsigned full = (unsigned)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(a, alpha)));
    if (none) /* alpha 0: premultiplied, all of it is 0 */
        _mm_storeu_si128((__m128i *)(void *)p, _mm_andnot_si128(clear, v));
    for (unsigned part = ~(none | full) & 15; part; part &= part - 1)
        premultiply_slow(p + 4 * (unsigned)__builtin_ctz(part), 1);
    return none != 15;
}

/* finish_atlas_row for the 16 pixels at px, x a multiple of 16 (four blocks: a nibble of
 * marks). Sixteen pixels all transparent (empty space) or all opaque go at once. */
static void finish_16(uint8_t *px, uint32_t x, uint8_t *marks)
{
    const __m128i alpha = _mm_set1_epi32((int)0xff000000u), z = _mm_setzero_si128();
    __m128i v[4], a[4];
    for (int k = 0; k < 4; k++) {
        v[k] = _mm_loadu_si128((const __m128i *)(const void *)(px + 16 * k));
        a[k] = _mm_and_si128(v[k], alpha);
    }
    __m128i any = _mm_or_si128(_mm_or_si128(a[0], a[1]), _mm_or_si128(a[2], a[3]));
    if (_mm_movemask_epi8(_mm_cmpeq_epi8(any, z)) == 0xffff) {
        __m128i colour = _mm_or_si128(_mm_or_si128(v[0], v[1]), _mm_or_si128(v[2], v[3]));
        if (_mm_movemask_epi8(_mm_cmpeq_epi8(colour, z)) != 0xffff)
            memset(px, 0, 64); /* alpha 0: premultiplied, all of it is 0 */
        return;
    }
    unsigned shown = 15;
    __m128i all = _mm_and_si128(_mm_and_si128(a[0], a[1]), _mm_and_si128(a[2], a[3]));
    if (_mm_movemask_epi8(_mm_cmpeq_epi32(all, alpha)) != 0xffff) {
        shown = 0;
        for (int k = 0; k < 4; k++)
            shown |= (unsigned)finish_4(px + 16 * k, v[k], a[k]) << k;
    }
    marks[x / 32] &= (uint8_t) ~(shown << ((x / 4) % 8));
}
#endif

/* Row y of the atlas: premultiplied, because the renderer samples premultiplied texels as GL
 * does with premultiplied uploads, and the clear mark taken off every block with a pixel of
 * some alpha in it. Atlases are mostly empty or opaque, so sixteen pixels (SSE2), or four
 * (one block's width), that are all one or the other go at once. */
static void finish_atlas_row(struct arm_atlas *at, uint8_t *px, uint32_t y)
{
    const uint64_t opaque = ALPHA_BYTES;
    uint8_t *marks = at->clear + (size_t)(y / 4) * at->clear_stride;
    uint32_t x = 0;
#ifdef __SSE2__
    for (; x + 16 <= at->width; x += 16, px += 64)
        finish_16(px, x, marks);
#endif
    for (; x + 4 <= at->width; x += 4, px += 16) {
        uint64_t lo, hi;
        alphas4(px, &lo, &hi);
        if (!(lo | hi)) {
            memset(px, 0, 16); /* alpha 0: premultiplied, all of it is 0 */
            continue;
        }
        marks[x / 32] &= (uint8_t) ~(1u << ((x / 4) % 8));
        if (lo != opaque || hi != opaque)
            premultiply_slow(px, 4);
    }
    for (; x < at->width; x++, px += 4) {
        if (px[3])
            marks[x / 32] &= (uint8_t) ~(1u << ((x / 4) % 8));
        premultiply_slow(px, 1);
    }
}

/* png_read_rgba8_rows' callback: each row as it is decoded, while it is in cache. */
static void atlas_row_done(void *ctx, uint8_t *row, uint32_t y)
{
    finish_atlas_row(ctx, row, y);
}

/* An atlas of w x h, judged from its header before any of it is decoded: within the limit
 * of one atlas, and within what is left (*pixels_left) of the limit of all of them. */
static int check_atlas_size(const char *name, uint32_t w, uint32_t h, const struct load_limits *lim,
                            uint64_t *pixels_left, struct eng_error *err)
{
    uint64_t px = (uint64_t)w * h;
    if (px > lim->max_atlas_pixels)
        return eng_seterr(err, ENG_ELIMIT, "%s: %ux%u pixels exceed the limit of %llu", name, w, h,
                          (unsigned long long)lim->max_atlas_pixels);
    if (px > *pixels_left)
        return eng_seterr(err, ENG_ELIMIT,
                          "%s: %ux%u pixels more exceed the limit of %llu for all atlases", name, w,
                          h, (unsigned long long)lim->max_total_atlas_pixels);
    *pixels_left -= px;
    return 0;
}

/* libpng's straight pixels in at->rgba, premultiplied, and the empty blocks marked. */
static int finish_atlas(struct arm_atlas *at, struct eng_error *err)
{
    if (start_clear_blocks(at))
        return eng_seterr(err, ENG_ENOMEM, "out of memory");
    for (uint32_t y = 0; y < at->height; y++)
        finish_atlas_row(at, at->rgba + (size_t)y * at->width * 4, y);
    widen_clear_blocks(at, (at->height + 3) / 4);
    return 0;
}

/* An 8-bit RGBA atlas (what SkelForm writes) through png_read.c. 1: not that kind, or
 * something unexpected in it: libpng decides. */
static int decode_rgba8(const char *name, const uint8_t *png, size_t len,
                        const struct load_limits *lim, uint64_t *pixels_left, struct arm_atlas *at,
                        struct eng_error *err)
{
    uint32_t w, h;
    if (!png_read_probe(png, len, &w, &h))
        return 1;
    int rc = check_atlas_size(name, w, h, lim, pixels_left, err);
    if (rc)
        return rc;
    at->width = w;
    at->height = h;
    if (lim->skip_atlas_pixels)
        return 0;
    at->rgba = alloc_pixels((size_t)w * h * 4 + h); /* + h: the scanlines' filter bytes */
    if (!at->rgba)
        return eng_seterr(err, ENG_ENOMEM, "out of memory");
    if (start_clear_blocks(at)) {
        free(at->rgba);
        at->rgba = NULL;
        return eng_seterr(err, ENG_ENOMEM, "out of memory");
    }
    /* Each row is premultiplied and its blocks' marks taken off as soon as it is decoded,
     * while it is in cache, not in a pass over the whole atlas afterwards. */
    if (!png_read_rgba8_rows(png, len, w, h, at->rgba, atlas_row_done, at)) {
        free(at->rgba);
        free(at->clear);
        at->rgba = NULL;
        at->clear = NULL;
        *pixels_left += (uint64_t)w * h; /* libpng decides, and counts them again */
        return 1;
    }
    widen_clear_blocks(at, (h + 3) / 4);
    return 0;
}

static int decode_png(const char *name, const char *bytes, size_t len,
                      const struct load_limits *lim, uint64_t *pixels_left, struct arm_atlas *at,
                      struct eng_error *err)
{
    int rc = decode_rgba8(name, (const uint8_t *)bytes, len, lim, pixels_left, at, err);
    if (rc <= 0)
        return rc;
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&img, bytes, len))
        return eng_seterr(err, ENG_EBADFILE, "%s: undecodable PNG: %s", name, img.message);
    if ((rc = check_atlas_size(name, img.width, img.height, lim, pixels_left, err))) {
        png_image_free(&img);
        return rc;
    }
    img.format = PNG_FORMAT_RGBA;
    /* libpng takes 16-bit samples without gamma information for linear light and brightens
     * them on the way to 8 bits; a browser, like the editor, reads them as sRGB. */
    img.flags |= PNG_IMAGE_FLAG_16BIT_sRGB;
    at->width = img.width;
    at->height = img.height;
    if (lim->skip_atlas_pixels) {
        png_image_free(&img);
        return 0;
    }
    at->rgba = alloc_pixels(PNG_IMAGE_SIZE(img));
    if (!at->rgba) {
        png_image_free(&img);
        return eng_seterr(err, ENG_ENOMEM, "out of memory");
    }
    if (!png_image_finish_read(&img, NULL, at->rgba, 0, NULL)) {
        free(at->rgba);
        at->rgba = NULL;
        return eng_seterr(err, ENG_EBADFILE, "%s: undecodable PNG: %s", name, img.message);
    }
    return finish_atlas(at, err);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Refuses an archive holding a member skeld reads twice. Readers disagree on which copy
 * counts (libzip finds the first, most zip readers keep the last, as a member appended to by
 * a zip tool means), so which picture the editor shows is unclear. names[0..n) is sorted in
 * place and its repeats dropped; one pass over the archive's directory. */
static int check_unique(zip_t *za, const char **names, uint32_t n, struct eng_error *err)
{
    qsort(names, n, sizeof *names, cmp_names);
    uint32_t u = 0;
    for (uint32_t k = 0; k < n; k++)
        if (u == 0 || strcmp(names[u - 1], names[k]))
            names[u++] = names[k];
    uint8_t *met = calloc(u ? u : 1, 1);
    if (!met)
        return eng_seterr(err, ENG_ENOMEM, "out of memory");
    zip_int64_t entries = zip_get_num_entries(za, 0);
    int rc = 0;
    for (zip_int64_t i = 0; i < entries && rc == 0; i++) {
        const char *name = zip_get_name(za, (zip_uint64_t)i, 0);
        const char **at = name ? bsearch(&name, names, u, sizeof *names, cmp_names) : NULL;
        if (at && met[at - names]++) {
            char q[ENG_QUOTE_MAX];
            rc = eng_seterr(err, ENG_EBADFILE,
                            "%s is in the archive more than once: which copy is meant is "
                            "unclear (rewrite the archive with one)",
                            eng_quote(name, q));
        }
    }
    free(met);
    return rc;
}

static int load_atlases(zip_t *za, struct armature *arm, const struct load_limits *lim,
                        uint64_t *budget, struct eng_error *err)
{
    const char **names = malloc((arm->atlas_count ? arm->atlas_count : 1) * sizeof *names);
    if (!names)
        return eng_seterr(err, ENG_ENOMEM, "out of memory");
    for (uint32_t a = 0; a < arm->atlas_count; a++)
        names[a] = arm->atlases[a].filename;
    int unique = check_unique(za, names, arm->atlas_count, err);
    free(names);
    if (unique)
        return unique;
    uint64_t pixels_left = lim->max_total_atlas_pixels;
    for (uint32_t a = 0; a < arm->atlas_count; a++) {
        struct arm_atlas *at = &arm->atlases[a];
        char q[ENG_QUOTE_MAX];
        if (zip_name_locate(za, at->filename, 0) < 0)
            return eng_seterr(err, ENG_EBADFILE,
                              "armature.json: atlases[%u].filename: %s is not in the archive", a,
                              eng_quote(at->filename, q));
        char *bytes;
        size_t len;
        int rc =
            read_member(za, at->filename, eng_quote(at->filename, q), budget, &bytes, &len, err);
        if (rc)
            return rc;
        rc = decode_png(eng_quote(at->filename, q), bytes, len, lim, &pixels_left, at, err);
        free(bytes);
        if (rc)
            return rc;
        arm->mem_bytes += (size_t)at->width * at->height * 4;
    }
    return load_check_textures(arm, err);
}

static int open_zip(const void *bytes, size_t len, zip_t **out, struct eng_error *err)
{
    if (!len) /* libzip reads no bytes as an empty archive */
        return eng_seterr(err, ENG_EBADFILE, "the file is empty: not a .skf");
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *src = zip_source_buffer_create(bytes, len, 0, &ze);
    if (!src) {
        zip_error_fini(&ze);
        return eng_seterr(err, ENG_ENOMEM, "out of memory");
    }
    *out = zip_open_from_source(src, ZIP_RDONLY, &ze);
    if (!*out) {
        zip_source_free(src);
        /* It starts as a zip does but has no whole directory at its end: a partial copy. */
        bool cut = len >= 4 && !memcmp(bytes, "PK\3\4", 4);
        int rc = eng_seterr(err, ENG_EBADFILE, "%s: %s",
                            cut ? "a .skf (zip archive) cut short or damaged"
                                : "not a .skf file (zip archive)",
                            zip_error_strerror(&ze));
        zip_error_fini(&ze);
        return rc;
    }
    zip_error_fini(&ze);
    return 0;
}

/* armature.json's size against its own limit, before a byte of it is inflated. */
static int check_json_size(zip_t *za, const struct load_limits *lim, struct eng_error *err)
{
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat(za, "armature.json", 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
        return eng_seterr(err, ENG_EBADFILE, "armature.json is not in the archive");
    if (st.size > lim->max_json)
        return eng_setlimit(err, ENG_LIMIT_JSON,
                            "armature.json: %llu bytes uncompressed exceed the limit of %llu",
                            (unsigned long long)st.size, (unsigned long long)lim->max_json);
    return 0;
}

int armature_json_size(const void *bytes, size_t len, uint64_t *size, struct eng_error *err)
{
    zip_t *za;
    *size = 0;
    int rc = open_zip(bytes, len, &za, err);
    if (rc)
        return rc;
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat(za, "armature.json", 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
        rc = eng_seterr(err, ENG_EBADFILE, "armature.json is not in the archive");
    else
        *size = st.size;
    zip_discard(za);
    return rc;
}

int armature_load(const void *bytes, size_t len, const struct load_limits *in_lim,
                  struct armature **out, struct eng_error *err)
{
    struct load_limits lim;
    fill_limits(in_lim, &lim);
    *out = NULL;
    zip_t *za;
    int rc = open_zip(bytes, len, &za, err);
    if (rc)
        return rc;
    uint64_t budget = lim.max_uncompressed;
    char *json;
    size_t json_len;
    struct armature *arm = NULL;
    const char *json_name[1] = {"armature.json"};
    rc = check_json_size(za, &lim, err);
    if (rc == 0)
        rc = check_unique(za, json_name, 1, err);
    if (rc == 0)
        rc = read_member(za, "armature.json", "armature.json", &budget, &json, &json_len, err);
    if (rc == 0) {
        rc = load_json(json, json_len, &lim, &arm, err);
        free(json);
    }
    if (rc == 0)
        rc = load_atlases(za, arm, &lim, &budget, err);
    zip_discard(za);
    if (rc) {
        armature_free(arm);
        return rc;
    }
    *out = arm;
    return 0;
}

int eng_read_fd(int fd, uint64_t max, void **out, size_t *out_len, struct eng_error *err)
{
    *out = NULL;
    *out_len = 0;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 1u << 20;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                return eng_seterr(err, ENG_ENOMEM, "out of memory");
            }
            buf = nb;
        }
        ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            free(buf);
            return eng_seterr(err, ENG_EIO, "read error: %s", strerror(errno));
        }
        if (got == 0)
            break;
        len += (size_t)got;
        if (len > max) {
            free(buf);
            return eng_seterr(err, ENG_ELIMIT, "file larger than %llu bytes",
                              (unsigned long long)max);
        }
    }
    *out = buf;
    *out_len = len;
    return 0;
}

int eng_read_file(const char *path, uint64_t max, void **out, size_t *out_len,
                  struct eng_error *err)
{
    *out = NULL;
    *out_len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return eng_seterr(err, ENG_EIO, "%s: %s", path, strerror(errno));
    struct stat st;
    int rc = fstat(fd, &st) != 0    ? eng_seterr(err, ENG_EIO, "%s: %s", path, strerror(errno))
             : !S_ISREG(st.st_mode) ? eng_seterr(err, ENG_EIO, "%s: not a regular file", path)
                                    : eng_read_fd(fd, max, out, out_len, err);
    close(fd);
    if (rc && err && strncmp(err->msg, path, strlen(path)) != 0) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        eng_seterr(err, rc, "%s: %s", path, why);
    }
    return rc;
}

int armature_load_file(const char *path, const struct load_limits *in_lim, struct armature **out,
                       struct eng_error *err)
{
    struct load_limits lim;
    fill_limits(in_lim, &lim);
    *out = NULL;
    void *buf;
    size_t len;
    int rc = eng_read_file(path, lim.max_uncompressed, &buf, &len, err);
    if (rc == 0)
        rc = armature_load(buf, len, in_lim, out, err);
    free(buf);
    return rc;
}
