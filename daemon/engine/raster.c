/* Multisampled triangle rasteriser. Vertex positions snap to 1/256 pixel and edge functions
 * are exact 64-bit integers, so two triangles sharing an edge never both cover a sample (top-
 * left rule) and never both miss it: meshes show no seams. Each pixel with a covered sample is
 * shaded once, at its centre, and the colour blends into the covered samples (premultiplied
 * source-over), which is what 4x MSAA in GL does. */
#include "raster.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define RASTER_AVX2 1 /* built with a run-time choice of AVX2 (function target attributes) */
#endif

#define SUB 256 /* sub-pixel steps */

/* Sample offsets inside a pixel, in 1/SUB: the standard 4x pattern, or the centre. */
static const int32_t offsets4[4][2] = {{96, 32}, {224, 96}, {32, 160}, {160, 224}};
static const int32_t offsets1[1][2] = {{128, 128}};

/* The SSE2 paths (every x86-64 has SSE2) compute exactly what the portable ones do, in
 * 16-bit lanes with the same roundings, and the AVX2 one what the SSE2 ones do; tests render
 * each way and compare every byte. Each choice is made once, from SKELD_SIMD and the CPU,
 * unless raster_use_simd or raster_use_avx2 made it first (-1: not yet). Atomic: workers
 * begin pictures concurrently, and the first ones may all make the (same) choice. */
static _Atomic int simd_choice = -1, avx2_choice = -1;

static bool cpu_has_avx2(void)
{
#ifdef RASTER_AVX2
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
#else
    return false;
#endif
}

/* SKELD_SIMD=0 says no SIMD at all, SKELD_SIMD=sse2 no AVX2. */
static bool env_allows(const char *no)
{
    const char *env = getenv("SKELD_SIMD");
    return !(env && !strcmp(env, no));
}

/* The choice, made from the environment if nobody made it yet. */
static bool chosen(_Atomic int *choice, const char *no)
{
    int c = atomic_load_explicit(choice, memory_order_relaxed);
    if (c < 0) {
        c = env_allows(no);
        atomic_store_explicit(choice, c, memory_order_relaxed);
    }
    return c;
}

void raster_use_simd(bool on)
{
    atomic_store_explicit(&simd_choice, on, memory_order_relaxed);
}

void raster_use_avx2(bool on)
{
    atomic_store_explicit(&avx2_choice, on, memory_order_relaxed);
}

static bool simd_enabled(void)
{
#ifdef __SSE2__
    return chosen(&simd_choice, "0");
#else
    return false;
#endif
}

static bool avx2_enabled(void)
{
    return cpu_has_avx2() && chosen(&avx2_choice, "sse2");
}

static uint32_t pack(const uint8_t c[4])
{
    return (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;
}

void raster_begin(struct raster *r, uint32_t *samples, uint32_t band_rows, int32_t *spans,
                  uint32_t w, uint32_t h, uint32_t ns, const uint8_t bg[4], int x0, int y0, int x1,
                  int y1)
{
    uint8_t pm[4];
    for (int i = 0; i < 3; i++)
        pm[i] = (uint8_t)((bg[i] * bg[3] + 127) / 255);
    pm[3] = bg[3];
    *r = (struct raster){.samples = samples,
                         .band_rows = band_rows ? (int)band_rows : 1,
                         .spans = spans,
                         .w = w,
                         .h = h,
                         .ns = ns,
                         .background = pack(pm),
                         .simd = simd_enabled()};
    r->avx2 = r->simd && avx2_enabled();
    r->x0 = x0 < 0 ? 0 : x0;
    r->region_y0 = y0 < 0 ? 0 : y0;
    r->x1 = x1 > (int)w ? (int)w : x1;
    r->region_y1 = y1 > (int)h ? (int)h : y1;
    if (r->x1 <= r->x0 || r->region_y1 <= r->region_y0) { /* empty: nothing to draw */
        r->x1 = r->x0;
        r->region_y1 = r->region_y0;
    }
    r->y0 = r->y1 = r->region_y0; /* no band yet */
}

void raster_band(struct raster *r, int y)
{
    r->y0 = y < r->region_y0 ? r->region_y0 : y > r->region_y1 ? r->region_y1 : y;
    r->y1 = r->region_y1 - r->y0 > r->band_rows ? r->y0 + r->band_rows : r->region_y1;
    /* Nothing is cleared yet: each row's samples are, as triangles reach them. */
    for (int row = r->y0; row < r->y1; row++)
        r->spans[2 * row] = r->spans[2 * row + 1] = 0;
}

void raster_set_texture(struct raster *r, const uint8_t *rgba, uint32_t w, uint32_t h,
                        const uint8_t *clear, uint32_t clear_stride, const float tint[4])
{
    r->clear = clear;
    r->clear_stride = clear_stride;
    r->tex = rgba;
    r->tw = w;
    r->th = h;
    for (int k = 0; k < 4; k++) /* animated tints can leave 0..1; keep the products in range */
        r->tint[k] = tint[k] > 0 ? (tint[k] < 255 ? tint[k] : 255) : 0;
    r->tinted =
        r->tint[0] != 1.0f || r->tint[1] != 1.0f || r->tint[2] != 1.0f || r->tint[3] != 1.0f;
    r->tint_fixed = true;
    for (int k = 0; k < 4; k++) {
        r->tint_fixed &= r->tint[k] <= 1.0f;
        r->tint256[k] = (uint16_t)lroundf(r->tint[k] < 1.0f ? r->tint[k] * 256.0f : 256.0f);
    }
}

/* Bilinear, clamp-to-edge, texel centres at (i + 0.5) / size, with 8-bit weights (as GPU
 * filtering units have). Channels are lerped two at a time in 16-bit lanes. */
static uint32_t lerp_texel(uint32_t a, uint32_t b, uint32_t w)
{
    uint32_t iw = 256 - w;
    uint32_t lo = ((a & 0x00ff00ffu) * iw + (b & 0x00ff00ffu) * w + 0x00800080u) >> 8;
    uint32_t hi = (((a >> 8) & 0x00ff00ffu) * iw + ((b >> 8) & 0x00ff00ffu) * w + 0x00800080u) >> 8;
    return (lo & 0x00ff00ffu) | (hi & 0x00ff00ffu) << 8;
}

/* Whether the 4x4 block of texel (x, y) is marked empty in the map clear of stride bytes a
 * row of blocks (struct arm_atlas). */
static inline bool clear_bit(const uint8_t *clear, size_t stride, size_t x, size_t y)
{
    size_t bx = x >> 2;
    return clear[(y >> 2) * stride + (bx >> 3)] >> (bx & 7) & 1;
}

static bool block_clear(const struct raster *r, long x, long y)
{
    return clear_bit(r->clear, r->clear_stride, (size_t)x, (size_t)y);
}

#ifdef __SSE2__
/* Bilinear mix of texels x0 and x1 of row0 and row1 with weights ax, ay out of 256:
 * lerp_texel's arithmetic, all four channels of both rows at once. */
static inline __m128i texel_pair(const uint32_t *row, long x0, long x1)
{
    if (x1 == x0 + 1) /* inside the atlas: both texels in one load */
        return _mm_loadl_epi64((const __m128i *)(const void *)(row + x0));
    return _mm_unpacklo_epi32(_mm_cvtsi32_si128((int)row[x0]), _mm_cvtsi32_si128((int)row[x1]));
}

/* The weights of one lerp as lanes (256 - w) x 4, w x 4, from one scalar in two unpacks. */
static inline __m128i lerp_weights_sse2(uint32_t w)
{
    __m128i v = _mm_cvtsi32_si128((int)((256 - w) | w << 16));
    v = _mm_unpacklo_epi16(v, v);
    return _mm_unpacklo_epi32(v, v);
}

/* Weighted lanes 0-3 plus lanes 4-7, rounded and scaled back by 256: the lerp itself. */
static inline __m128i lerp_fold_sse2(__m128i v)
{
    v = _mm_add_epi16(_mm_add_epi16(v, _mm_srli_si128(v, 8)), _mm_set1_epi16(128));
    return _mm_srli_epi16(v, 8);
}

static inline uint32_t bilerp_sse2(const uint32_t *row0, const uint32_t *row1, long x0, long x1,
                                   uint32_t ax, uint32_t ay)
{
    const __m128i z = _mm_setzero_si128(), wx = lerp_weights_sse2(ax);
    __m128i top = _mm_unpacklo_epi8(texel_pair(row0, x0, x1), z);
    __m128i bot = _mm_unpacklo_epi8(texel_pair(row1, x0, x1), z);
    top = lerp_fold_sse2(_mm_mullo_epi16(top, wx));
    bot = lerp_fold_sse2(_mm_mullo_epi16(bot, wx));
    __m128i tb = _mm_mullo_epi16(_mm_unpacklo_epi64(top, bot), lerp_weights_sse2(ay));
    return (uint32_t)_mm_cvtsi128_si32(_mm_packus_epi16(lerp_fold_sse2(tb), z));
}

/* c's channels times tint256 / 256, rounded as the portable loop does (no clamp needed: the
 * multipliers are at most 256). */
static inline uint32_t tint_fixed_sse2(uint32_t c, const uint16_t tint256[4])
{
    const __m128i z = _mm_setzero_si128();
    __m128i v = _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)c), z);
    v = _mm_mullo_epi16(v, _mm_loadl_epi64((const __m128i *)(const void *)tint256));
    v = _mm_srli_epi16(_mm_add_epi16(v, _mm_set1_epi16(128)), 8);
    return (uint32_t)_mm_cvtsi128_si32(_mm_packus_epi16(v, z));
}

/* c's channels times the tint, rounded and clamped as the portable loop does. */
static inline uint32_t tint_sse2(uint32_t c, const float tint[4])
{
    const __m128i z = _mm_setzero_si128();
    __m128i v = _mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128((int)c), z), z);
    __m128 f = _mm_add_ps(_mm_mul_ps(_mm_cvtepi32_ps(v), _mm_loadu_ps(tint)), _mm_set1_ps(0.5f));
    __m128i i = _mm_cvttps_epi32(f);
    i = _mm_packs_epi32(i, i);
    return (uint32_t)_mm_cvtsi128_si32(_mm_packus_epi16(i, i));
}
#endif

/* x, y: the position in 1/65536 texel, less half a texel (texel centres on multiples of
 * 65536). inside says the whole bilinear footprint is known to lie in the atlas (see
 * span_inside), so nothing needs clamping; simd and inside are constants at each call. */
static inline __attribute__((always_inline)) uint32_t
sample_texture(const struct raster *r, int64_t x, int64_t y, bool inside, bool simd)
{
    int64_t ix = x >> 8, iy = y >> 8; /* 1/256 texel, floored (arithmetic shifts) */
    long x0 = (long)(ix >> 8), y0 = (long)(iy >> 8), x1 = x0 + 1, y1 = y0 + 1;
    uint32_t ax = (uint32_t)(ix & 255), ay = (uint32_t)(iy & 255);
    if (!inside) {
        long mx = (long)r->tw - 1, my = (long)r->th - 1;
        x0 = x0 < 0 ? 0 : (x0 > mx ? mx : x0);
        x1 = x1 < 0 ? 0 : (x1 > mx ? mx : x1);
        y0 = y0 < 0 ? 0 : (y0 > my ? my : y0);
        y1 = y1 < 0 ? 0 : (y1 > my ? my : y1);
    }
    /* Empty space is most of what misses the cache: a bilinear footprint that is all fully
     * transparent samples as 0 without touching the texels. The marks answer for every
     * footprint starting in a block (struct arm_atlas), so one look is enough. */
    if (r->clear && block_clear(r, x0, y0))
        return 0;
    const uint32_t *row0 = (const uint32_t *)(const void *)r->tex + (size_t)y0 * r->tw;
    const uint32_t *row1 = (const uint32_t *)(const void *)r->tex + (size_t)y1 * r->tw;
#ifdef __SSE2__
    if (simd) {
        uint32_t c = bilerp_sse2(row0, row1, x0, inside ? x0 + 1 : x1, ax, ay);
        if (!r->tinted)
            return c;
        return r->tint_fixed ? tint_fixed_sse2(c, r->tint256) : tint_sse2(c, r->tint);
    }
#else
    (void)simd;
#endif
    uint32_t top = lerp_texel(row0[x0], row0[x1], ax), bot = lerp_texel(row1[x0], row1[x1], ax);
    uint32_t c = lerp_texel(top, bot, ay);
    if (!r->tinted)
        return c;
    uint32_t out = 0;
    if (r->tint_fixed) {
        for (int k = 0; k < 4; k++)
            out |= ((((c >> (8 * k)) & 255) * r->tint256[k] + 128) >> 8) << (8 * k);
        return out;
    }
    for (int k = 0; k < 4; k++) {
        uint32_t v8 = (uint32_t)(((c >> (8 * k)) & 255) * r->tint[k] + 0.5f);
        out |= (v8 > 255 ? 255 : v8) << (8 * k);
    }
    return out;
}

static uint32_t div255(uint32_t x)
{
    return (x + 128 + ((x + 128) >> 8)) >> 8;
}

/* Premultiplied source-over, drawn front to back: the new (farther) colour goes under what
 * is there, dst = dst + src * (1 - dst.a). Compositing is associative, so this equals the
 * back-to-front src + dst * (1 - src.a) of the player up to 8-bit rounding, and pixels that
 * are already opaque need no texture fetch at all. */
static inline uint32_t under(uint32_t dst, uint32_t src)
{
    uint32_t k = 255 - (dst >> 24), out = 0;
    if (dst == 0)
        return src;
    if (k == 0)
        return dst;
    for (int sh = 0; sh < 32; sh += 8) {
        uint32_t v = ((dst >> sh) & 255) + div255(((src >> sh) & 255) * k);
        out |= (v > 255 ? 255 : v) << sh;
    }
    return out;
}

#ifdef __SSE2__
/* under() for the four samples of d at once: two samples per register in 16-bit lanes. */
static inline __m128i under2_sse2(__m128i d16, __m128i s16)
{
    __m128i a = _mm_shufflehi_epi16(_mm_shufflelo_epi16(d16, _MM_SHUFFLE(3, 3, 3, 3)),
                                    _MM_SHUFFLE(3, 3, 3, 3));
    __m128i x = _mm_mullo_epi16(s16, _mm_sub_epi16(_mm_set1_epi16(255), a));
    x = _mm_add_epi16(x, _mm_set1_epi16(128));
    x = _mm_srli_epi16(_mm_add_epi16(x, _mm_srli_epi16(x, 8)), 8); /* div255 */
    return _mm_add_epi16(d16, x);
}

static inline __m128i under4_sse2(__m128i d, uint32_t src)
{
    const __m128i z = _mm_setzero_si128();
    __m128i s16 = _mm_unpacklo_epi8(_mm_set1_epi32((int)src), z);
    return _mm_packus_epi16(under2_sse2(_mm_unpacklo_epi8(d, z), s16),
                            under2_sse2(_mm_unpackhi_epi8(d, z), s16));
}

/* All ones in the 32-bit lanes of the samples set in a 4-bit mask. */
static inline __m128i lanes_of(unsigned mask)
{
    const __m128i bit = _mm_set_epi32(8, 4, 2, 1);
    return _mm_cmpeq_epi32(_mm_and_si128(_mm_set1_epi32((int)mask), bit), bit);
}
#endif

static void make_edge(struct raster_edge *e, int64_t ax, int64_t ay, int64_t bx, int64_t by)
{
    /* E(p) = (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x) */
    int64_t dx = bx - ax, dy = by - ay;
    e->a = -dy;
    e->b = dx;
    e->c = dy * ax - dx * ay;
    bool top_left = dy < 0 || (dy == 0 && dx > 0);
    e->bias = top_left ? 0 : -1;
}

/* Texture coordinates are affine in the pixel centre: u = u0 + du_dx*px + du_dy*py. */
struct uv_plane {
    double u0, du_dx, du_dy, v0, dv_dx, dv_dy;
};

static void setup_uv(const struct raster_edge e3[3], struct uv_plane *uv, const double u[3],
                     const double v[3], double area)
{
    double half = SUB / 2.0;
    *uv = (struct uv_plane){0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 3; i++) {
        /* Edge i is opposite vertex i, so E_i / area is vertex i's barycentric weight. */
        const struct raster_edge *e = &e3[i];
        double at_origin = ((double)e->a * half + (double)e->b * half + (double)e->c) / area;
        double dx = (double)e->a * SUB / area, dy = (double)e->b * SUB / area;
        uv->u0 += u[i] * at_origin;
        uv->du_dx += u[i] * dx;
        uv->du_dy += u[i] * dy;
        uv->v0 += v[i] * at_origin;
        uv->dv_dx += v[i] * dx;
        uv->dv_dy += v[i] * dy;
    }
}

/* llround(v) for |v| < 2^52 (the callers' values are under 2^41), inline: libm's is a call
 * of some 60 instructions, made eight times a triangle. v - trunc(v) is exact, so the
 * half-way test is too. */
static inline int64_t round_away(double v)
{
    int64_t i = (int64_t)v;
    double f = v - (double)i;
    return i + (f >= 0.5) - (f <= -0.5);
}

/* Corners are snapped within 4e6 pixels of the origin, so that edge products stay within 63
 * bits; a triangle with a corner farther out has its edges cut to a box of FAR pixels first
 * (setup_far), far beyond any canvas (RENDER_MAX_SIDE, 16384 pixels a side). */
#define NEAR 4e6
#define FAR 2e6

static bool near_origin(double x, double y)
{
    return fabs(x) < NEAR && fabs(y) < NEAR;
}

/* Snaps (x, y) to 1/SUB pixel; false when it is not near_origin, or NaN. */
static bool snap_xy(double x, double y, int64_t *sx, int64_t *sy)
{
    if (!near_origin(x, y))
        return false;
    *sx = round_away(x * SUB);
    *sy = round_away(y * SUB);
    return true;
}

static bool snap(const struct raster_vertex *v, int64_t *x, int64_t *y)
{
    return snap_xy(v->x, v->y, x, y);
}

/* Twice the signed area of snapped corners i j k: positive when they turn one way, negative
 * the other, 0 on a line. */
static int64_t turn(const int64_t X[], const int64_t Y[], int i, int j, int k)
{
    return (X[j] - X[i]) * (Y[k] - Y[i]) - (Y[j] - Y[i]) * (X[k] - X[i]);
}

/* The edges and the texture plane of triangle p, its corners snapped to X, Y, of doubled
 * signed area `area` (not 0). */
static void triangle_edges(struct raster_edge e[3], struct uv_plane *uv, const int64_t X[3],
                           const int64_t Y[3], const struct raster_vertex *const p[3], int64_t area)
{
    int o1 = area > 0 ? 1 : 2, o2 = area > 0 ? 2 : 1; /* make the winding positive */
    int idx[3] = {0, o1, o2};
    double u[3], v[3];
    for (int i = 0; i < 3; i++) {
        u[i] = p[idx[i]]->u;
        v[i] = p[idx[i]]->v;
    }
    make_edge(&e[0], X[idx[1]], Y[idx[1]], X[idx[2]], Y[idx[2]]);
    make_edge(&e[1], X[idx[2]], Y[idx[2]], X[idx[0]], Y[idx[0]]);
    make_edge(&e[2], X[idx[0]], Y[idx[0]], X[idx[1]], Y[idx[1]]);
    setup_uv(e, uv, u, v, (double)(area > 0 ? area : -area));
}

/* The box of n snapped corners, in SUB units: lo[0..1] x, y, hi[0..1]. */
static void corner_box(const int64_t X[], const int64_t Y[], int n, int64_t lo[2], int64_t hi[2])
{
    lo[0] = hi[0] = X[0];
    lo[1] = hi[1] = Y[0];
    for (int i = 1; i < n; i++) {
        lo[0] = X[i] < lo[0] ? X[i] : lo[0];
        hi[0] = X[i] > hi[0] ? X[i] : hi[0];
        lo[1] = Y[i] < lo[1] ? Y[i] : lo[1];
        hi[1] = Y[i] > hi[1] ? Y[i] : hi[1];
    }
}

/* The part of segment a -> b within the FAR box, by its parameters on the segment (Liang-
 * Barsky): false if none. */
static bool cut_to_far(double ax, double ay, double bx, double by, double *t0, double *t1)
{
    const double p[4] = {-(bx - ax), bx - ax, -(by - ay), by - ay};
    const double q[4] = {ax + FAR, FAR - ax, ay + FAR, FAR - ay};
    *t0 = 0.0;
    *t1 = 1.0;
    for (int k = 0; k < 4; k++) {
        if (p[k] == 0.0) {
            if (q[k] < 0.0)
                return false;
            continue;
        }
        double at = q[k] / p[k];
        if (p[k] < 0.0)
            *t0 = at > *t0 ? at : *t0;
        else
            *t1 = at < *t1 ? at : *t1;
    }
    return *t0 < *t1;
}

/* Edge a -> b of a triangle with a far corner, as the snapped ends of its part within the
 * FAR box: false if that part is empty or snaps to a point, when the edge bounds nothing in
 * the box. The cut is computed from the ends in one order whichever way the edge runs, so a
 * mesh's two triangles on an edge get the same ends to the bit, and no seam. */
static bool far_edge(struct raster_edge *e, const struct raster_vertex *a,
                     const struct raster_vertex *b)
{
    bool swap = b->x < a->x || (b->x == a->x && b->y < a->y);
    const struct raster_vertex *p = swap ? b : a, *q = swap ? a : b;
    double t0, t1;
    if (!cut_to_far(p->x, p->y, q->x, q->y, &t0, &t1))
        return false;
    double dx = q->x - p->x, dy = q->y - p->y;
    int64_t X[2], Y[2]; /* an end within the box is itself, as the near path snaps it */
    snap_xy(t0 > 0.0 ? p->x + t0 * dx : p->x, t0 > 0.0 ? p->y + t0 * dy : p->y, &X[swap], &Y[swap]);
    snap_xy(t1 < 1.0 ? p->x + t1 * dx : q->x, t1 < 1.0 ? p->y + t1 * dy : q->y, &X[!swap],
            &Y[!swap]);
    if (X[0] == X[1] && Y[0] == Y[1])
        return false;
    make_edge(e, X[0], Y[0], X[1], Y[1]);
    return true;
}

/* The texture plane of triangle p from its corners, in double: for a triangle with a far
 * corner, whose edges no longer meet at its corners. */
static void uv_of_corners(struct uv_plane *uv, const struct raster_vertex *const p[3])
{
    double x1 = p[1]->x - p[0]->x, y1 = p[1]->y - p[0]->y;
    double x2 = p[2]->x - p[0]->x, y2 = p[2]->y - p[0]->y, det = x1 * y2 - x2 * y1;
    double u1 = p[1]->u - p[0]->u, u2 = p[2]->u - p[0]->u;
    double v1 = p[1]->v - p[0]->v, v2 = p[2]->v - p[0]->v;
    uv->du_dx = (u1 * y2 - u2 * y1) / det;
    uv->du_dy = (u2 * x1 - u1 * x2) / det;
    uv->dv_dx = (v1 * y2 - v2 * y1) / det;
    uv->dv_dy = (v2 * x1 - v1 * x2) / det;
    /* at the centre of pixel (0, 0) */
    uv->u0 = p[0]->u + uv->du_dx * (0.5 - p[0]->x) + uv->du_dy * (0.5 - p[0]->y);
    uv->v0 = p[0]->v + uv->dv_dx * (0.5 - p[0]->x) + uv->dv_dy * (0.5 - p[0]->y);
}

/* Whether (x, y) is inside triangle p, wound as area's sign says. */
static bool inside_corners(const struct raster_vertex *const p[3], double area, double x, double y)
{
    for (int i = 0; i < 3; i++) {
        const struct raster_vertex *a = p[i], *b = p[(i + 1) % 3];
        double side = (b->x - a->x) * (y - a->y) - (b->y - a->y) * (x - a->x);
        if (area > 0 ? side < 0 : side > 0)
            return false;
    }
    return true;
}

static double within_far(double v)
{
    return fmin(fmax(v, -FAR), FAR);
}

/* setup for a triangle with a corner beyond NEAR (a sprite seen up close, a bone far out):
 * inside the FAR box, which holds every canvas with room to spare, it is bounded by those of
 * its edges that cross the box, cut to it. An edge that misses the box bounds nothing in it;
 * when all three do, the box is wholly inside the triangle (drawn everywhere) or outside. */
static bool setup_far(struct raster_shape *t, struct uv_plane *uv, int64_t lo[2], int64_t hi[2],
                      const struct raster_vertex *const p[3])
{
    for (int i = 0; i < 3; i++)
        if (!isfinite(p[i]->x) || !isfinite(p[i]->y))
            return false;
    double area =
        (p[1]->x - p[0]->x) * (p[2]->y - p[0]->y) - (p[2]->x - p[0]->x) * (p[1]->y - p[0]->y);
    if (!(area != 0.0))
        return false;
    int n = 0;
    for (int i = 0; i < 3; i++) {
        const struct raster_vertex *a = p[i], *b = p[(i + 1) % 3];
        n += far_edge(&t->e[n], area > 0 ? a : b, area > 0 ? b : a);
    }
    if (n == 0) {
        if (!inside_corners(p, area, 0.0, 0.0))
            return false;
        t->e[n++] = (struct raster_edge){0, 0, 0, 0}; /* E + bias = 0: every sample */
    }
    for (; n < 3; n++)
        t->e[n] = t->e[0]; /* the same bound again changes nothing */
    t->edges = 3;
    uv_of_corners(uv, p);
    double x0 = p[0]->x, x1 = p[0]->x, y0 = p[0]->y, y1 = p[0]->y;
    for (int i = 1; i < 3; i++) {
        x0 = fmin(x0, p[i]->x);
        x1 = fmax(x1, p[i]->x);
        y0 = fmin(y0, p[i]->y);
        y1 = fmax(y1, p[i]->y);
    }
    lo[0] = (int64_t)(within_far(x0) * SUB);
    hi[0] = (int64_t)(within_far(x1) * SUB);
    lo[1] = (int64_t)(within_far(y0) * SUB);
    hi[1] = (int64_t)(within_far(y1) * SUB);
    return lo[0] < hi[0] && lo[1] < hi[1];
}

/* The edges, the texture plane and the box (corner_box) of triangle p; false if it covers
 * nothing (degenerate, off any canvas, NaN). */
static bool setup(struct raster_shape *t, struct uv_plane *uv, int64_t lo[2], int64_t hi[2],
                  const struct raster_vertex *const p[3])
{
    int64_t X[3], Y[3];
    for (int i = 0; i < 3; i++)
        if (!snap(p[i], &X[i], &Y[i]))
            return setup_far(t, uv, lo, hi, p);
    int64_t area = turn(X, Y, 0, 1, 2);
    if (area == 0)
        return false;
    triangle_edges(t->e, uv, X, Y, p, area);
    t->edges = 3;
    corner_box(X, Y, 3, lo, hi);
    return true;
}

/* The same for quad q as one shape: false if it is not strictly convex once snapped (every
 * corner turning the same way), or off any canvas. Then its edges bound exactly the union of
 * triangles q0 q1 q2 and q0 q2 q3: their outer edges are its own, wound the same way, and
 * their shared diagonal, which the top-left rule gives each sample on it to exactly one of
 * them, lies inside it. Its plane is the first triangle's, to the bit. */
static bool setup_quad(struct raster_shape *t, struct uv_plane *uv, int64_t lo[2], int64_t hi[2],
                       const struct raster_vertex q[4])
{
    int64_t X[4], Y[4];
    for (int i = 0; i < 4; i++)
        if (!snap(&q[i], &X[i], &Y[i]))
            return false;
    int64_t first = turn(X, Y, 0, 1, 2);
    for (int i = 0; i < 4; i++) {
        int64_t at = turn(X, Y, i, (i + 1) & 3, (i + 2) & 3);
        if (first > 0 ? at <= 0 : first == 0 || at >= 0)
            return false;
    }
    const struct raster_vertex *const p[3] = {&q[0], &q[1], &q[2]};
    triangle_edges(t->e, uv, X, Y, p, first);
    for (int i = 0; i < 4; i++) { /* around the quad, wound as the first triangle was */
        int a = first > 0 ? i : (4 - i) & 3, b = first > 0 ? (i + 1) & 3 : 3 - i;
        make_edge(&t->e[i], X[a], Y[a], X[b], Y[b]);
    }
    t->edges = 4;
    corner_box(X, Y, 4, lo, hi);
    return true;
}

/* floor(n / d) for d > 0, exactly. */
static int64_t floor_div(int64_t n, int64_t d)
{
    int64_t q = n / d;
    return q - (n % d != 0 && n < 0);
}

/* One edge's limit on the pixels of one sample position, walked down the rows. The edge is
 * linear in the pixel index, E = step * px + n, so the covered pixels of a row are px >= -n /
 * step (step > 0) or px <= n / -step (step < 0): one exact floor division, whose quotient and
 * remainder are carried from row to row with additions, as a line is drawn. No per-pixel edge
 * stepping, no division per row, and spans of fully covered pixels are known before any pixel
 * is touched. */
enum bound_kind { BOUND_LO, BOUND_HI, BOUND_ROW };

/* One edge's bounds for every sample position at once: the kind, the divisor and what a row
 * adds depend on the edge alone, only the quotient and remainder on the sample. */
struct edge_walk {
    int64_t q[4], rem[4]; /* floor(n / d) and n - q * d; for BOUND_ROW, rem is n itself */
    int64_t dq, dr;       /* what a row adds, the same way (n grows by b * SUB) */
    int64_t d;            /* |step| */
    enum bound_kind kind;
};

static void edge_walk_init(struct edge_walk *w, const struct raster_edge *e, int py,
                           const int32_t (*off)[2], uint32_t ns)
{
    int64_t step = e->a * SUB, grow = e->b * SUB;
    w->kind = step > 0 ? BOUND_LO : step < 0 ? BOUND_HI : BOUND_ROW;
    w->d = step > 0 ? step : -step;
    w->dq = w->d ? floor_div(grow, w->d) : 0;
    w->dr = w->d ? grow - w->dq * w->d : grow;
    for (uint32_t s = 0; s < ns; s++) {
        int64_t n = e->a * off[s][0] + e->b * ((int64_t)py * SUB + off[s][1]) + e->c + e->bias;
        w->q[s] = w->d ? floor_div(n, w->d) : 0;
        w->rem[s] = w->d ? n - w->q[s] * w->d : n;
    }
}

/* Narrows each sample's [l, h) to what the edge allows on the current row, then steps the
 * edge to the next row. ns is a constant at each call. */
static inline __attribute__((always_inline)) void edge_walk_row(struct edge_walk *w, int64_t *l,
                                                                int64_t *h, uint32_t ns)
{
    switch (w->kind) {
    case BOUND_LO:
        for (uint32_t s = 0; s < ns; s++)
            l[s] = -w->q[s] > l[s] ? -w->q[s] : l[s]; /* -n/step rounded up is -floor(n/step) */
        break;
    case BOUND_HI:
        for (uint32_t s = 0; s < ns; s++)
            h[s] = w->q[s] + 1 < h[s] ? w->q[s] + 1 : h[s];
        break;
    default:
        for (uint32_t s = 0; s < ns; s++) {
            if (w->rem[s] < 0)
                h[s] = l[s];
            w->rem[s] += w->dr;
        }
        return;
    }
    for (uint32_t s = 0; s < ns; s++) {
        w->q[s] += w->dq;
        w->rem[s] += w->dr;
        if (w->rem[s] >= w->d) {
            w->q[s]++;
            w->rem[s] -= w->d;
        }
    }
}

#ifdef RASTER_AVX2
/* edge_walk_row for 4 samples, their bounds l and h and the edge's quotients and remainders
 * each in the four 64-bit lanes of a register: the same integers, compared and stepped at
 * once. */
__attribute__((target("avx2"))) static inline void edge_walk_row_avx2(struct edge_walk *w,
                                                                      __m256i *l, __m256i *h)
{
    __m256i q = _mm256_loadu_si256((const __m256i *)(const void *)w->q),
            rem = _mm256_loadu_si256((const __m256i *)(const void *)w->rem),
            dr = _mm256_set1_epi64x(w->dr);
    switch (w->kind) {
    case BOUND_LO: {
        __m256i neg = _mm256_sub_epi64(_mm256_setzero_si256(), q);
        *l = _mm256_blendv_epi8(*l, neg, _mm256_cmpgt_epi64(neg, *l));
        break;
    }
    case BOUND_HI: {
        __m256i q1 = _mm256_add_epi64(q, _mm256_set1_epi64x(1));
        *h = _mm256_blendv_epi8(*h, q1, _mm256_cmpgt_epi64(*h, q1));
        break;
    }
    default:
        *h = _mm256_blendv_epi8(*h, *l, _mm256_cmpgt_epi64(_mm256_setzero_si256(), rem));
        _mm256_storeu_si256((__m256i *)(void *)w->rem, _mm256_add_epi64(rem, dr));
        return;
    }
    q = _mm256_add_epi64(q, _mm256_set1_epi64x(w->dq));
    rem = _mm256_add_epi64(rem, dr);
    __m256i carry = _mm256_cmpgt_epi64(rem, _mm256_set1_epi64x(w->d - 1)); /* rem >= d */
    _mm256_storeu_si256((__m256i *)(void *)w->q, _mm256_sub_epi64(q, carry));
    _mm256_storeu_si256((__m256i *)(void *)w->rem,
                        _mm256_sub_epi64(rem, _mm256_and_si256(carry, _mm256_set1_epi64x(w->d))));
}

/* The 4 samples' pixels [l, h) on the current row within [x0, x1), from the shape's edges,
 * each stepped to the next row: edge_walk_row's work, edge by edge in the same order. */
__attribute__((target("avx2"))) static inline void
edge_walks_avx2(struct edge_walk *ew, int edges, int x0, int x1, int64_t l[4], int64_t h[4])
{
    __m256i lv = _mm256_set1_epi64x(x0), hv = _mm256_set1_epi64x(x1);
    for (int k = 0; k < edges; k++)
        edge_walk_row_avx2(&ew[k], &lv, &hv);
    _mm256_storeu_si256((__m256i *)(void *)l, lv);
    _mm256_storeu_si256((__m256i *)(void *)h, hv);
}
#endif

/* The samples of pixel x of row py, a row of the band. */
static inline uint32_t *samples_at(const struct raster *r, int py, int x)
{
    return r->samples + ((size_t)(py - r->y0) * r->w + (size_t)x) * r->ns;
}

/* Samples of pixels [a, b) on row py back to transparent. */
static void clear_pixels(struct raster *r, int py, int a, int b)
{
    memset(samples_at(r, py, a), 0, (size_t)(b - a) * r->ns * sizeof *r->samples);
}

/* Makes pixels [a, b) of row py live: the row's live span only grows, and only what it
 * gains is cleared, so empty space costs nothing to clear or to resolve. */
static void open_pixels(struct raster *r, int py, int a, int b)
{
    int32_t *sp = r->spans + 2 * (size_t)py;
    if (sp[0] >= sp[1]) {
        clear_pixels(r, py, a, b);
        sp[0] = a;
        sp[1] = b;
        return;
    }
    if (a < sp[0]) {
        clear_pixels(r, py, a, sp[0]);
        sp[0] = a;
    }
    if (b > sp[1]) {
        clear_pixels(r, py, sp[1], b);
        sp[1] = b;
    }
}

/* A span's texture positions in 1/65536 texel, texel centres on multiples of 65536: at
 * pixel first, and what each pixel to the right adds. Stepping integers along the span is
 * cheaper than a multiply-add, a clamp and a floor of doubles per pixel, and exact to 1/65536
 * texel per pixel stepped. */
struct span_uv {
    int64_t x, y, dx, dy;
};

/* A position in 1/256 texel as 1/65536 texel, clamped to 2^36 texels either way (off every
 * atlas anyway) so that a span's positions stay far inside int64; NaN, from absurd texture
 * coordinates, clamps too. */
static int64_t fixed_pos(double v)
{
    v *= 256.0;
    v = v > -0x1p52 ? (v < 0x1p52 ? v : 0x1p52) : -0x1p52;
    return (int64_t)floor(v);
}

/* The same for a step per pixel, clamped to 2^24 texels: a span of even 2^20 pixels then
 * moves at most 2^60 from a position under 2^52. */
static int64_t fixed_step(double v)
{
    v *= 256.0;
    v = v > -0x1p40 ? (v < 0x1p40 ? v : 0x1p40) : -0x1p40;
    return round_away(v);
}

/* uv, n pixels further along the span. */
static struct span_uv span_at(struct span_uv uv, int n)
{
    uv.x += uv.dx * n;
    uv.y += uv.dy * n;
    return uv;
}

/* Whether every pixel of a span of n pixels has its whole bilinear footprint inside the
 * atlas. Positions are affine along the span, so the two ends bound them. */
static bool span_inside(const struct raster *r, const struct span_uv *uv, int n)
{
    int64_t xe = uv->x + uv->dx * (n - 1), ye = uv->y + uv->dy * (n - 1);
    int64_t mx = ((int64_t)r->tw - 1) << 16, my = ((int64_t)r->th - 1) << 16;
    return uv->x >= 0 && xe >= 0 && uv->x < mx && xe < mx && uv->y >= 0 && ye >= 0 && uv->y < my &&
           ye < my;
}

/* Narrows [*a, *b), pixels of a span counted from its first, to those whose position v + i *
 * step (one coordinate, 1/65536 texel) keeps their footprint inside the atlas in that
 * dimension: 0 <= v + i * step < limit. Positions are affine, so these are an interval. */
static void keep_inside(int64_t v, int64_t step, int64_t limit, int *a, int *b)
{
    if (step < 0) { /* the same condition, mirrored: 0 <= (limit - 1 - v) + i * -step < limit */
        v = limit - 1 - v;
        step = -step;
    }
    int64_t lo = 0, hi = v >= 0 && v < limit ? INT64_MAX : 0; /* i in [lo, hi) */
    if (step) {
        lo = v >= 0 ? 0 : -floor_div(v, step); /* ceil(-v / step) */
        hi = floor_div(limit - 1 - v, step) + 1;
    }
    if (lo > *a)
        *a = lo < *b ? (int)lo : *b;
    if (hi < *b)
        *b = hi > *a ? (int)hi : *a;
}

/* Shades one pixel whose covered samples are mask: skips samples already opaque (drawn
 * nearer), fetches the texture once, and blends it under each open sample. The sample count
 * is a constant at every call (see shade_run), so the loops unroll. */
static inline __attribute__((always_inline)) void shade_pixel(struct raster *r, int64_t x,
                                                              int64_t y, uint32_t *s, unsigned mask,
                                                              uint32_t ns, bool inside, bool simd)
{
#ifdef __SSE2__
    if (simd && ns == 4) {
        __m128i d = _mm_loadu_si128((const __m128i *)(const void *)s);
        __m128i opaque = _mm_cmpeq_epi32(_mm_srli_epi32(d, 24), _mm_set1_epi32(255));
        unsigned open = mask & ~(unsigned)_mm_movemask_ps(_mm_castsi128_ps(opaque));
        if (!open)
            return;
        uint32_t src = sample_texture(r, x, y, inside, true);
        if (src == 0)
            return;
        /* Samples still clear (the common first layer) simply take the colour. */
        __m128i blended = _mm_movemask_epi8(_mm_cmpeq_epi32(d, _mm_setzero_si128())) == 0xffff
                              ? _mm_set1_epi32((int)src)
                              : under4_sse2(d, src);
        if (open != 15) {
            __m128i sel = lanes_of(open);
            blended = _mm_or_si128(_mm_and_si128(sel, blended), _mm_andnot_si128(sel, d));
        }
        _mm_storeu_si128((__m128i *)(void *)s, blended);
        return;
    }
#endif
    unsigned open = 0;
    for (uint32_t i = 0; i < ns; i++)
        if ((mask & (1u << i)) && (s[i] >> 24) != 255)
            open |= 1u << i;
    if (!open)
        return; /* hidden behind opaque colour drawn earlier (nearer) */
    uint32_t src = sample_texture(r, x, y, inside, false);
    if (src == 0)
        return;
    for (uint32_t i = 0; i < ns; i++)
        if (open & (1u << i))
            s[i] = under(s[i], src);
}

#ifdef RASTER_AVX2
/* lerp_weights_sse2's, in x (*wx) and in y (*wy), for two pixels, one in each half: from
 * their positions [x, y] (1/65536 texel, not negative) in each half's two quadwords. */
__attribute__((target("avx2"))) static inline void lerp_weights_avx2(__m256i pos, __m256i *wx,
                                                                     __m256i *wy)
{
    __m256i w = _mm256_and_si256(_mm256_srli_epi64(pos, 8), _mm256_set1_epi64x(255));
    w = _mm256_shuffle_epi32(w, _MM_SHUFFLE(3, 1, 2, 0)); /* [ax, ay] in each half's low half */
    w = _mm256_or_si256(_mm256_sub_epi32(_mm256_set1_epi32(256), w), _mm256_slli_epi32(w, 16));
    w = _mm256_unpacklo_epi16(w, w); /* 256 - ax twice, ax twice, then the same for ay */
    *wx = _mm256_unpacklo_epi32(w, w);
    *wy = _mm256_unpackhi_epi32(w, w);
}

/* lerp_fold_sse2 in each half. */
__attribute__((target("avx2"))) static inline __m256i lerp_fold_avx2(__m256i v)
{
    v = _mm256_add_epi16(_mm256_add_epi16(v, _mm256_srli_si256(v, 8)), _mm256_set1_epi16(128));
    return _mm256_srli_epi16(v, 8);
}

/* shade_pixel for the n pixels of a span from pixel px, inside the atlas (4 samples each, from
 * s; texture positions x, y stepped by dx, dy; sample k covered on pixels [lo[k], hi[k])), two
 * pixels at a time in the two halves of AVX2 registers: each half does exactly what
 * bilerp_sse2, tint_fixed_sse2 and under4_sse2 do for one pixel, and only its covered samples
 * take the result, so the bytes are the same. Where shade_pixel skips work (opaque samples, an
 * empty footprint, a zero colour) the blend leaves the samples as they are anyway; a pair
 * whose covered samples are all opaque or whose footprints are both empty is skipped, and an
 * empty footprint's texels (all zero) are not fetched: fetching empty space costs more than
 * the look at the empty-block map. Returns the pixels done (an even count); untinted or
 * integer tints only. */
__attribute__((target("avx2"))) static int
shade_span_avx2(const struct raster *r, int64_t x, int64_t y, int64_t dx, int64_t dy, uint32_t *s,
                int px, int n, const int lo[4], const int hi[4])
{
    /* In locals, as stores to the samples might (for all the compiler knows) change *r. */
    const uint32_t *tex = (const uint32_t *)(const void *)r->tex;
    const size_t tw = r->tw, clear_stride = r->clear_stride;
    const uint8_t *clear = r->clear;
    const bool tinted = r->tinted;
    const __m256i z = _mm256_setzero_si256(), half = _mm256_set1_epi16(128),
                  c255 = _mm256_set1_epi16(255), a255 = _mm256_set1_epi32(255);
    uint64_t t64 = 0;
    memcpy(&t64, r->tint256, sizeof t64);
    const __m256i tint = _mm256_set1_epi64x((long long)t64);
    const __m256i step = _mm256_set_epi64x(2 * dy, 2 * dx, 2 * dy, 2 * dx);
    __m256i pos = _mm256_set_epi64x(y + dy, x + dx, y, x);
    /* Each sample lane's pixel, and the pixels it covers. */
    const __m256i lov = _mm256_setr_epi32(lo[0], lo[1], lo[2], lo[3], lo[0], lo[1], lo[2], lo[3]),
                  hiv = _mm256_setr_epi32(hi[0], hi[1], hi[2], hi[3], hi[0], hi[1], hi[2], hi[3]),
                  two = _mm256_set1_epi32(2);
    __m256i lane_px = _mm256_setr_epi32(px, px, px, px, px + 1, px + 1, px + 1, px + 1);
    int i = 0;
    for (; i + 2 <= n; i += 2, s += 8, x += 2 * dx, y += 2 * dy) {
        __m256i at = pos, at_px = lane_px;
        pos = _mm256_add_epi64(pos, step);
        lane_px = _mm256_add_epi32(lane_px, two);
        __m256i cov =
            _mm256_andnot_si256(_mm256_cmpgt_epi32(lov, at_px), _mm256_cmpgt_epi32(hiv, at_px));
        __m256i d = _mm256_loadu_si256((const __m256i *)(const void *)s);
        if (_mm256_testc_si256(_mm256_cmpeq_epi32(_mm256_srli_epi32(d, 24), a255), cov))
            continue; /* nothing shows through: every covered sample is opaque */
        __m128i row0[2], row1[2];
        int empty = 0;
        for (int k = 0; k < 2; k++) {
            size_t x0 = (size_t)((x + k * dx) >> 16), y0 = (size_t)((y + k * dy) >> 16);
            if (clear && clear_bit(clear, clear_stride, x0, y0)) {
                row0[k] = row1[k] = _mm_setzero_si128();
                empty++;
                continue;
            }
            const uint32_t *t = tex + y0 * tw + x0;
            row0[k] = _mm_loadl_epi64((const __m128i *)(const void *)t);
            row1[k] = _mm_loadl_epi64((const __m128i *)(const void *)(t + tw));
        }
        if (empty == 2)
            continue; /* both colours are 0: the samples stay */
        __m256i top = _mm256_unpacklo_epi8(_mm256_set_m128i(row0[1], row0[0]), z);
        __m256i bot = _mm256_unpacklo_epi8(_mm256_set_m128i(row1[1], row1[0]), z);
        __m256i wx, wy;
        lerp_weights_avx2(at, &wx, &wy);
        top = lerp_fold_avx2(_mm256_mullo_epi16(top, wx));
        bot = lerp_fold_avx2(_mm256_mullo_epi16(bot, wx));
        __m256i tb = _mm256_mullo_epi16(_mm256_unpacklo_epi64(top, bot), wy);
        /* each half: its pixel's colour in dword 0 */
        __m256i c = _mm256_packus_epi16(lerp_fold_avx2(tb), z);
        if (tinted) {
            __m256i v = _mm256_mullo_epi16(_mm256_unpacklo_epi8(c, z), tint);
            c = _mm256_packus_epi16(_mm256_srli_epi16(_mm256_add_epi16(v, half), 8), z);
        }
        __m256i out = _mm256_shuffle_epi32(c, 0); /* all clear (the common first layer) */
        if (!_mm256_testz_si256(d, d)) {
            __m256i s16 = _mm256_unpacklo_epi8(out, z), blended[2];
            for (int h = 0; h < 2; h++) { /* under2_sse2 on each half of the samples */
                __m256i d16 = h ? _mm256_unpackhi_epi8(d, z) : _mm256_unpacklo_epi8(d, z);
                __m256i a = _mm256_shufflehi_epi16(
                    _mm256_shufflelo_epi16(d16, _MM_SHUFFLE(3, 3, 3, 3)), _MM_SHUFFLE(3, 3, 3, 3));
                __m256i v =
                    _mm256_add_epi16(_mm256_mullo_epi16(s16, _mm256_sub_epi16(c255, a)), half);
                v = _mm256_srli_epi16(_mm256_add_epi16(v, _mm256_srli_epi16(v, 8)), 8);
                blended[h] = _mm256_add_epi16(d16, v);
            }
            out = _mm256_packus_epi16(blended[0], blended[1]);
        }
        _mm256_storeu_si256((__m256i *)(void *)s, _mm256_blendv_epi8(d, out, cov));
    }
    return i;
}
#endif

/* Pixels [a, b) whose samples are covered only in part: each one's mask from the samples'
 * spans [lo, hi). uv is at pixel a. */
static inline __attribute__((always_inline)) void
shade_partial(struct raster *r, struct span_uv uv, uint32_t *row, int a, int b, const int *lo,
              const int *hi, uint32_t ns, bool inside, bool simd)
{
    for (int px = a; px < b; px++, uv.x += uv.dx, uv.y += uv.dy) {
        unsigned mask = 0;
        for (uint32_t s = 0; s < ns; s++)
            mask |= (unsigned)(px >= lo[s] && px < hi[s]) << s;
        if (mask)
            shade_pixel(r, uv.x, uv.y, row + (size_t)px * ns, mask, ns, inside, simd);
    }
}

/* The code paths of the row loop, each compiled on its own (see raster_draw). */
enum raster_level { LEVEL_PORTABLE, LEVEL_SSE2, LEVEL_AVX2 };

/* Pixels [a, b), texture positions from uv (at a), sample k covering [lo[k], hi[k]): those
 * every sample covers run without a coverage test, the others are masked sample by sample.
 * With AVX2, inside the atlas, the kernel takes them all, each pair's coverage from lo and
 * hi. */
static inline __attribute__((always_inline)) void
shade_run(struct raster *r, struct span_uv uv, int py, int a, int b, const int *lo, const int *hi,
          uint32_t ns, bool inside, enum raster_level level)
{
    bool simd = level != LEVEL_PORTABLE;
    uint32_t *row = samples_at(r, py, 0);
#ifdef RASTER_AVX2
    if (level == LEVEL_AVX2 && inside && ns == 4 && (!r->tinted || r->tint_fixed)) {
        int done =
            shade_span_avx2(r, uv.x, uv.y, uv.dx, uv.dy, row + (size_t)a * ns, a, b - a, lo, hi);
        shade_partial(r, span_at(uv, done), row, a + done, b, lo, hi, ns, inside, simd);
        return;
    }
#endif
    int f0 = a, f1 = b; /* the pixels every sample covers, within [a, b) */
    for (uint32_t s = 0; s < ns; s++) {
        f0 = lo[s] > f0 ? lo[s] : f0;
        f1 = hi[s] < f1 ? hi[s] : f1;
    }
    f0 = f0 > b ? b : f0;
    f1 = f1 < f0 ? f0 : f1;
    shade_partial(r, uv, row, a, f0, lo, hi, ns, inside, simd);
    uv = span_at(uv, f0 - a);
    for (int px = f0; px < f1; px++, uv.x += uv.dx, uv.y += uv.dy)
        shade_pixel(r, uv.x, uv.y, row + (size_t)px * ns, (1u << ns) - 1, ns, inside, simd);
    shade_partial(r, uv, row, f1, b, lo, hi, ns, inside, simd);
}

/* Row py within [x0, x1): each sample's covered span from the shape's bounds, then the run.
 * ns, level and edges are constants at the calls that matter. */
static inline __attribute__((always_inline)) void
raster_row_n(struct raster *r, const struct raster_shape *t, struct edge_walk *ew, int edges,
             int py, int x0, int x1, uint32_t ns, enum raster_level level)
{
    int lo[4], hi[4], first = x1, last = x0;
    int64_t l[4], h[4];
#ifdef RASTER_AVX2
    if (level == LEVEL_AVX2 && ns == 4)
        edge_walks_avx2(ew, edges, x0, x1, l, h);
    else
#endif
    {
        for (uint32_t s = 0; s < ns; s++)
            l[s] = x0, h[s] = x1;
        for (int k = 0; k < edges; k++)
            edge_walk_row(&ew[k], l, h, ns);
    }
    for (uint32_t s = 0; s < ns; s++) {
        if (l[s] >= h[s])
            l[s] = h[s] = x0; /* empty */
        lo[s] = (int)l[s];
        hi[s] = (int)h[s];
        if (l[s] < h[s]) {
            first = lo[s] < first ? lo[s] : first;
            last = hi[s] > last ? hi[s] : last;
        }
    }
    if (first >= last)
        return;
    open_pixels(r, py, first, last);
    struct span_uv uv = {fixed_pos(t->fx0 + t->fx_dy * py + t->fx_dx * first),
                         fixed_pos(t->fy0 + t->fy_dy * py + t->fy_dx * first), t->dx, t->dy};
    if (span_inside(r, &uv, last - first)) {
        shade_run(r, uv, py, first, last, lo, hi, ns, true, level);
        return;
    }
    /* A sprite at the atlas's edge reaches past it by up to half a texel: only its pixels
     * there need clamping, and the rest run as fast as any. */
    int a = 0, b = last - first;
    keep_inside(uv.x, uv.dx, ((int64_t)r->tw - 1) << 16, &a, &b);
    keep_inside(uv.y, uv.dy, ((int64_t)r->th - 1) << 16, &a, &b);
    if (a >= b) /* none inside */
        a = b = last - first;
    a += first;
    b += first;
    shade_run(r, uv, py, first, a, lo, hi, ns, false, level);
    if (a < b)
        shade_run(r, span_at(uv, a - first), py, a, b, lo, hi, ns, true, level);
    if (b < last)
        shade_run(r, span_at(uv, b - first), py, b, last, lo, hi, ns, false, level);
}

/* Rows [y0, y1) of the shape, pixels [x0, x1). */
static inline __attribute__((always_inline)) void
raster_rows(struct raster *r, const struct raster_shape *t, int edges, int x0, int x1, int y0,
            int y1, uint32_t ns, const int32_t (*off)[2], enum raster_level level)
{
    struct edge_walk ew[4];
    for (int k = 0; k < edges; k++)
        edge_walk_init(&ew[k], &t->e[k], y0, off, ns);
    for (int py = y0; py < y1; py++)
        raster_row_n(r, t, ew, edges, py, x0, x1, ns, level);
}

/* What raster_setup and raster_setup_quad share once the shape's edges, texture plane and
 * box (SUB units) are known: the plane in the atlas's texels, and the pixels of the region it
 * may cover (false: none). */
static bool place(const struct raster *r, struct raster_shape *t, const struct uv_plane *uv,
                  const int64_t lo[2], const int64_t hi[2])
{
    t->fx_dx = uv->du_dx * r->tw * 256.0;
    t->fx_dy = uv->du_dy * r->tw * 256.0;
    t->fx0 = uv->u0 * r->tw * 256.0 - 128.0;
    t->fy_dx = uv->dv_dx * r->th * 256.0;
    t->fy_dy = uv->dv_dy * r->th * 256.0;
    t->fy0 = uv->v0 * r->th * 256.0 - 128.0;
    t->dx = fixed_step(t->fx_dx);
    t->dy = fixed_step(t->fy_dx);
    int x0 = (int)(lo[0] / SUB) - 1, x1 = (int)(hi[0] / SUB) + 2;
    int y0 = (int)(lo[1] / SUB) - 1, y1 = (int)(hi[1] / SUB) + 2;
    t->x0 = x0 < r->x0 ? r->x0 : x0;
    t->x1 = x1 > r->x1 ? r->x1 : x1;
    t->y0 = y0 < r->region_y0 ? r->region_y0 : y0;
    t->y1 = y1 > r->region_y1 ? r->region_y1 : y1;
    return t->x0 < t->x1 && t->y0 < t->y1;
}

bool raster_setup(const struct raster *r, struct raster_shape *t, const struct raster_vertex *a,
                  const struct raster_vertex *b, const struct raster_vertex *c)
{
    const struct raster_vertex *const p[3] = {a, b, c};
    struct uv_plane uv;
    int64_t lo[2], hi[2];
    return setup(t, &uv, lo, hi, p) && place(r, t, &uv, lo, hi);
}

bool raster_setup_quad(const struct raster *r, struct raster_shape *t,
                       const struct raster_vertex q[4])
{
    struct uv_plane uv;
    int64_t lo[2], hi[2];
    return setup_quad(t, &uv, lo, hi, q) && place(r, t, &uv, lo, hi);
}

#ifdef RASTER_AVX2
/* The row loop of 4 samples with AVX2, compiled for it whole: shade_span_avx2 inlines into
 * it, and the rest takes AVX2's encodings (no FMA: the doubles round as elsewhere). */
__attribute__((target("avx2"), flatten)) static void
draw_rows_avx2(struct raster *r, const struct raster_shape *t, int y0, int y1)
{
    if (t->edges == 4)
        raster_rows(r, t, 4, t->x0, t->x1, y0, y1, 4, offsets4, LEVEL_AVX2);
    else
        raster_rows(r, t, 3, t->x0, t->x1, y0, y1, 4, offsets4, LEVEL_AVX2);
}
#endif

void raster_draw(struct raster *r, const struct raster_shape *shape)
{
    int y0 = shape->y0 > r->y0 ? shape->y0 : r->y0, y1 = shape->y1 < r->y1 ? shape->y1 : r->y1;
    if (y0 >= y1)
        return; /* not in this band */
    /* A local copy: through shape, every store of samples or spans might change it, and the
     * compiler would load its fields again after each. */
    const struct raster_shape copy = *shape, *t = &copy;
    int x0 = t->x0, x1 = t->x1;
#ifdef RASTER_AVX2
    if (r->ns == 4 && r->avx2) {
        draw_rows_avx2(r, t, y0, y1);
        return;
    }
#endif
    if (r->ns == 4 && r->simd && t->edges == 4) /* the usual cases get constant edge counts */
        raster_rows(r, t, 4, x0, x1, y0, y1, 4, offsets4, LEVEL_SSE2);
    else if (r->ns == 4 && r->simd)
        raster_rows(r, t, 3, x0, x1, y0, y1, 4, offsets4, LEVEL_SSE2);
    else if (r->ns == 4)
        raster_rows(r, t, t->edges, x0, x1, y0, y1, 4, offsets4, LEVEL_PORTABLE);
    else
        raster_rows(r, t, t->edges, x0, x1, y0, y1, 1, offsets1,
                    r->simd ? LEVEL_SSE2 : LEVEL_PORTABLE);
}

/* Whether a shape whose corners' rows lie within [ylo, yhi] may cover a sample of the band's
 * rows. The samples of row y lie strictly between y and y + 1 (at least 1/8 in), and snapping
 * moves a corner by at most 1/512: a shape wholly above y0 or below y1 covers none of them.
 * False for a NaN either way, which setup would refuse anyway. */
static bool may_reach_band(const struct raster *r, double ylo, double yhi)
{
    return yhi >= r->y0 && ylo <= r->y1;
}

void raster_triangle(struct raster *r, const struct raster_vertex *a, const struct raster_vertex *b,
                     const struct raster_vertex *c)
{
    /* A triangle that misses the band's rows costs no setup. */
    double ylo = a->y < b->y ? a->y : b->y, yhi = a->y > b->y ? a->y : b->y;
    ylo = c->y < ylo ? c->y : ylo;
    yhi = c->y > yhi ? c->y : yhi;
    struct raster_shape t;
    if (may_reach_band(r, ylo, yhi) && raster_setup(r, &t, a, b, c))
        raster_draw(r, &t);
}

bool raster_quad(struct raster *r, const struct raster_vertex q[4])
{
    double ylo = q[0].y, yhi = q[0].y;
    for (int i = 1; i < 4; i++) {
        ylo = q[i].y < ylo ? q[i].y : ylo;
        yhi = q[i].y > yhi ? q[i].y : yhi;
    }
    if (!may_reach_band(r, ylo, yhi))
        return true; /* nor would its triangles */
    struct raster_shape t;
    if (!raster_setup_quad(r, &t, q))
        return false;
    raster_draw(r, &t);
    return true;
}

static void store(uint8_t *o, uint32_t px)
{
    const uint8_t b[4] = {(uint8_t)px, (uint8_t)(px >> 8), (uint8_t)(px >> 16),
                          (uint8_t)(px >> 24)};
    memcpy(o, b, 4);
}

static void fill(uint8_t *o, size_t count, uint32_t px)
{
    if (px == 0) { /* a transparent background, the usual one: one call a fill, not a dozen */
        memset(o, 0, count * 4);
        return;
    }
    if (count == 0)
        return;
    store(o, px);
    /* Doubling copies: a handful of memcpy calls per row. */
    for (size_t done = 1; done < count;) {
        size_t n = done < count - done ? done : count - done;
        memcpy(o + done * 4, o, n * 4);
        done += n;
    }
}

/* Exact division by alpha without a divide: floor(n / a) = (n * ceil(2^32 / a)) >> 32 for
 * every n < 2^16 and a < 2^8 (the rounding-up error is below a, so the product's excess stays
 * under n * a / 2^32 < 1/a and never carries into the quotient). */
#define RECIP(a) (((1ull << 32) + (a)-1) / (a))
#define RECIP4(a) RECIP(a), RECIP((a) + 1), RECIP((a) + 2), RECIP((a) + 3)
#define RECIP16(a) RECIP4(a), RECIP4((a) + 4), RECIP4((a) + 8), RECIP4((a) + 12)
#define RECIP64(a) RECIP16(a), RECIP16((a) + 16), RECIP16((a) + 32), RECIP16((a) + 48)
static const uint64_t recip_alpha[256] = {
    0,           RECIP(1),    RECIP(2),    RECIP(3),    RECIP4(4),    RECIP4(8),   RECIP4(12),
    RECIP16(16), RECIP16(32), RECIP16(48), RECIP64(64), RECIP64(128), RECIP64(192)};

uint32_t raster_unpremultiply(uint32_t px)
{
    uint32_t a = px >> 24;
    if (a == 255)
        return px;
    if (a == 0)
        return 0;
    uint32_t out = a << 24;
    for (int sh = 0; sh < 24; sh += 8) {
        uint64_t n = ((px >> sh) & 255) * 255u + a / 2; /* < 2^16 */
        uint32_t v = (uint32_t)((n * recip_alpha[a]) >> 32);
        out |= (v > 255 ? 255 : v) << sh;
    }
    return out;
}

#ifdef __SSE2__
/* Four pixels' averages (average() of each pixel's four samples) packed in one register. */
static inline __m128i average4x4_sse2(const uint32_t *s)
{
    const __m128i z = _mm_setzero_si128(), two = _mm_set1_epi16(2);
    __m128i sum[4];
    for (int i = 0; i < 4; i++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + 4 * i));
        sum[i] = _mm_add_epi16(_mm_unpacklo_epi8(v, z), _mm_unpackhi_epi8(v, z));
    }
    /* Lanes 0-3 of each pair's low half plus its high half: one pixel's totals. */
    __m128i p01 =
        _mm_add_epi16(_mm_unpacklo_epi64(sum[0], sum[1]), _mm_unpackhi_epi64(sum[0], sum[1]));
    __m128i p23 =
        _mm_add_epi16(_mm_unpacklo_epi64(sum[2], sum[3]), _mm_unpackhi_epi64(sum[2], sum[3]));
    p01 = _mm_srli_epi16(_mm_add_epi16(p01, two), 2);
    p23 = _mm_srli_epi16(_mm_add_epi16(p23, two), 2);
    return _mm_packus_epi16(p01, p23);
}
#endif

static uint32_t average(const uint32_t *s, uint32_t ns)
{
    bool same = true;
    for (uint32_t i = 1; i < ns; i++)
        same &= s[i] == s[0];
    if (same)
        return s[0];
    uint32_t px = 0;
    for (int sh = 0; sh < 32; sh += 8) {
        uint32_t sum = 0;
        for (uint32_t i = 0; i < ns; i++)
            sum += (s[i] >> sh) & 255;
        px |= ((sum + ns / 2) / ns) << sh;
    }
    return px;
}

/* One resolved pixel: over the background, and unpremultiplied if straight. */
static inline uint32_t finish(uint32_t px, uint32_t bg_under, bool straight)
{
    if ((px >> 24) == 255)
        return px;
    if (bg_under)
        px = under(px, bg_under);
    return straight ? raster_unpremultiply(px) : px;
}

#ifdef RASTER_AVX2
/* The averages of eight pixels' four samples each (from s), as average4x4_sse2 makes them,
 * in pixel order. */
__attribute__((target("avx2"))) static inline __m256i average8x4_avx2(const uint32_t *s)
{
    const __m256i z = _mm256_setzero_si256(), two = _mm256_set1_epi16(2);
    __m256i sum[4];
    for (int i = 0; i < 4; i++) { /* two pixels a register: each lane's halves sum to one */
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(s + 8 * i));
        sum[i] = _mm256_add_epi16(_mm256_unpacklo_epi8(v, z), _mm256_unpackhi_epi8(v, z));
    }
    __m256i p02 = _mm256_add_epi16(_mm256_unpacklo_epi64(sum[0], sum[1]),
                                   _mm256_unpackhi_epi64(sum[0], sum[1]));
    __m256i p46 = _mm256_add_epi16(_mm256_unpacklo_epi64(sum[2], sum[3]),
                                   _mm256_unpackhi_epi64(sum[2], sum[3]));
    p02 = _mm256_srli_epi16(_mm256_add_epi16(p02, two), 2);
    p46 = _mm256_srli_epi16(_mm256_add_epi16(p46, two), 2);
    /* pixels 0 2 4 6 in the low lane, 1 3 5 7 in the high one */
    __m256i px = _mm256_packus_epi16(p02, p46);
    return _mm256_permutevar8x32_epi32(px, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* raster_unpremultiply of eight pixels at once: each channel's floor((c * 255 + a / 2) / a)
 * in single precision is exact, as the quotient is under 2^16, where half an ulp is at most
 * 2^-9, and one that is not whole lies at least 1/a >= 1/255 below the next whole number, so
 * rounding never reaches it; alpha 255 gives the channels back, and alpha 0 all zero.
 * check_render compares every value. */
__attribute__((target("avx2"))) static inline __m256i unpremultiply8_avx2(__m256i px)
{
    const __m256i byte = _mm256_set1_epi32(255);
    __m256i a = _mm256_srli_epi32(px, 24);
    __m256 af = _mm256_cvtepi32_ps(a), half = _mm256_cvtepi32_ps(_mm256_srli_epi32(a, 1));
    __m256i out = _mm256_slli_epi32(a, 24);
    for (int sh = 0; sh < 24; sh += 8) {
        __m256 c = _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(px, sh), byte));
        __m256 q = _mm256_div_ps(_mm256_add_ps(_mm256_mul_ps(c, _mm256_set1_ps(255.0f)), half), af);
        __m256i v = _mm256_min_epi32(_mm256_cvttps_epi32(q), byte);
        out = _mm256_or_si256(out, _mm256_slli_epi32(v, sh));
    }
    return _mm256_andnot_si256(_mm256_cmpeq_epi32(a, _mm256_setzero_si256()), out);
}

/* resolve_span's pixels from x on, eight at a time, with 4 samples each (from s); returns
 * where it stopped. Eight opaque pixels (the bulk of a picture's inside) need nothing more;
 * the others are unpremultiplied here too if straight and nothing is under them. */
__attribute__((target("avx2"))) static int resolve_avx2(const uint32_t *s, uint8_t *row, int x,
                                                        int hi, uint32_t bg_under, bool straight)
{
    const __m256i alpha = _mm256_set1_epi32((int)0xff000000u);
    for (; x + 8 <= hi; x += 8, s += 32) {
        __m256i px = average8x4_avx2(s);
        if (!_mm256_testc_si256(px, alpha)) { /* not all opaque */
            if (bg_under) {
                uint32_t v[8];
                _mm256_storeu_si256((__m256i *)(void *)v, px);
                for (int i = 0; i < 8; i++)
                    v[i] = finish(v[i], bg_under, straight);
                px = _mm256_loadu_si256((const __m256i *)(const void *)v);
            } else if (straight) {
                px = unpremultiply8_avx2(px);
            }
        }
        _mm256_storeu_si256((__m256i *)(void *)(row + (size_t)x * 4), px);
    }
    return x;
}
#endif

/* Pixels [lo, hi) of row y: the samples' averages, finished. */
static void resolve_span(const struct raster *r, uint8_t *row, uint32_t y, int lo, int hi,
                         bool straight)
{
    const uint32_t *s = samples_at(r, (int)y, lo);
    int x = lo;
#ifdef RASTER_AVX2
    if (r->avx2 && r->ns == 4) {
        x = resolve_avx2(s, row, x, hi, r->background, straight);
        s += (size_t)(x - lo) * 4;
    }
#endif
#ifdef __SSE2__
    if (r->simd && r->ns == 4) {
        const __m128i alpha = _mm_set1_epi32((int)0xff000000u);
        for (; x + 4 <= hi; x += 4, s += 16) {
            __m128i px = average4x4_sse2(s);
            /* Four opaque pixels (the bulk of a picture's inside) need nothing more. */
            if (_mm_movemask_epi8(_mm_cmpeq_epi32(_mm_and_si128(px, alpha), alpha)) != 0xffff) {
                uint32_t v[4];
                _mm_storeu_si128((__m128i *)(void *)v, px);
                for (int i = 0; i < 4; i++)
                    v[i] = finish(v[i], r->background, straight);
                px = _mm_loadu_si128((const __m128i *)(const void *)v);
            }
            _mm_storeu_si128((__m128i *)(void *)(row + (size_t)x * 4), px);
        }
    }
#endif
    for (; x < hi; x++, s += r->ns)
        store(row + (size_t)x * 4, finish(average(s, r->ns), r->background, straight));
}

/* The background as resolved pixels hold it. */
static uint32_t resolved_background(const struct raster *r, bool straight)
{
    return straight ? raster_unpremultiply(r->background) : r->background;
}

void raster_resolve(const struct raster *r, uint8_t *out, size_t pitch, bool straight)
{
    uint32_t bg = resolved_background(r, straight);
    for (int y = r->y0; y < r->y1; y++) {
        uint8_t *row = out + (size_t)y * pitch;
        int32_t *span = r->spans + 2 * (size_t)y;
        int lo = span[0], hi = span[1];
        if (lo >= hi)
            lo = hi = span[0] = span[1] = 0;
        fill(row, (size_t)lo, bg);
        fill(row + (size_t)hi * 4, r->w - (size_t)hi, bg);
        resolve_span(r, row, (uint32_t)y, lo, hi, straight);
    }
}

/* Rows [from, to) all background, their spans empty. */
static void fill_rows(const struct raster *r, uint8_t *out, size_t pitch, uint32_t bg,
                      uint32_t from, uint32_t to)
{
    for (uint32_t y = from; y < to; y++) {
        fill(out + (size_t)y * pitch, r->w, bg);
        r->spans[2 * (size_t)y] = r->spans[2 * (size_t)y + 1] = 0;
    }
}

void raster_resolve_outside(const struct raster *r, uint8_t *out, size_t pitch, bool straight)
{
    uint32_t bg = resolved_background(r, straight);
    fill_rows(r, out, pitch, bg, 0, (uint32_t)r->region_y0);
    fill_rows(r, out, pitch, bg, (uint32_t)r->region_y1, r->h);
}
