/* Internal to the renderer: a multisampled triangle rasteriser over premultiplied RGBA8. */
#ifndef SKELD_ENGINE_RASTER_H
#define SKELD_ENGINE_RASTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A vertex in pixel space (y down) with its atlas coordinates (0..1). */
struct raster_vertex {
    double x, y, u, v;
};

/* One edge of a triangle: E(x, y) = a*x + b*y + c in 1/256 pixel; a sample is inside when
 * E > 0, or E == 0 on a top-left edge (bias 0, else -1: E + bias >= 0 means covered). */
struct raster_edge {
    int64_t a, b, c, bias;
};

/* A shape set up once (raster_setup, raster_setup_quad) and drawn band by band (raster_draw):
 * a triangle, or a convex quad with one texture plane (a sprite), which draws as its two
 * triangles would without paying twice for the rows and the pixels along their diagonal. */
struct raster_shape {
    struct raster_edge e[4];
    int edges; /* 3 or 4 */
    /* The texture position in the atlas's 1/256 texels, less half a texel (texel centres),
     * affine in the pixel centre: fx = fx0 + fx_dx*px + fx_dy*py, fy the same way. */
    double fx0, fx_dx, fx_dy, fy0, fy_dx, fy_dy;
    int64_t dx, dy;     /* fx_dx, fy_dx in 1/65536 texel */
    int x0, x1, y0, y1; /* the pixels it may cover, within the region */
};

struct raster {
    uint32_t *samples; /* the band's rows from y0: premultiplied RGBA8 packed little-endian, ns
                        * per pixel, w pixels a row */
    int band_rows;     /* the rows samples holds */
    uint32_t w, h, ns;
    int x0, x1;               /* the columns that can be drawn (inclusive-exclusive) */
    int region_y0, region_y1; /* the rows that can be drawn */
    int y0, y1;               /* the rows of the band being drawn, within the region */
    int32_t *spans; /* per row of the picture (2*h), [lo, hi): the pixels whose samples are live */
    uint32_t background; /* premultiplied, packed */
    const uint8_t *tex;  /* premultiplied RGBA8 atlas */
    uint32_t tw, th;
    const uint8_t *clear; /* the atlas's empty 4x4 blocks (struct arm_atlas), or NULL */
    uint32_t clear_stride;
    float tint[4];
    uint16_t tint256[4]; /* tint * 256, rounded, when tint_fixed */
    bool tinted;
    bool tint_fixed; /* every tint in [0, 1]: integer multiplies (the usual case) */
    bool simd;       /* SSE2 paths (raster_use_simd), fixed when the picture begins */
    bool avx2;       /* and AVX2 for two pixels at a time where the CPU has it (raster_use_avx2) */
};

/* Chooses SIMD (SSE2 on x86-64, where built) or portable paths for pictures begun afterwards;
 * both make the same bytes. SIMD is used unless SKELD_SIMD=0 is in the environment or this
 * said no. Call before rendering starts on other threads (tests, benchmarks). */
void raster_use_simd(bool on);

/* With SIMD on, whether AVX2 may be used where the CPU has it (default yes, unless
 * SKELD_SIMD=sse2 is in the environment): the same bytes again. For tests and benchmarks. */
void raster_use_avx2(bool on);

/* Starts a picture of w x h pixels, ns samples each, drawn in bands of band_rows rows:
 * samples sized band_rows*w*ns, spans 2*h; only pixels in [x0,x1) x [y0,y1) can be drawn.
 * For each band (raster_band), triangles then come front to back (nearest first), each going
 * under what is there, and raster_resolve writes the band's rows; raster_resolve_outside
 * writes the rows no band covers. A band's samples stay in the CPU's cache while every
 * triangle that reaches it is drawn, and the picture needs one band of them, not all. */
void raster_begin(struct raster *r, uint32_t *samples, uint32_t band_rows, int32_t *spans,
                  uint32_t w, uint32_t h, uint32_t ns, const uint8_t background[4], int x0, int y0,
                  int x1, int y1);

/* Starts the band of rows [y, y + band_rows), within the region (r->region_y0 to
 * r->region_y1): their spans are emptied, and the next triangles draw only these rows. */
void raster_band(struct raster *r, int y);

/* Selects the atlas (with its empty-block bitmap, may be NULL) and the premultiplied tint
 * multiplier for the next triangles. */
void raster_set_texture(struct raster *r, const uint8_t *rgba, uint32_t w, uint32_t h,
                        const uint8_t *clear, uint32_t clear_stride, const float tint[4]);

/* Sets up triangle a b c for the texture selected (raster_set_texture), the one it is to be
 * drawn with: its edges, its texture stepping and the pixels of the region it may cover.
 * False when it covers none (degenerate, off the region, not finite). Setting a triangle up
 * once and drawing it in every band it reaches saves doing that work band by band. */
bool raster_setup(const struct raster *r, struct raster_shape *t, const struct raster_vertex *a,
                  const struct raster_vertex *b, const struct raster_vertex *c);

/* Sets up quad q[0..3] (in order around it) as one shape: it covers exactly the samples its
 * triangles q0 q1 q2 and q0 q2 q3 would, textured by the plane of the first (the caller's
 * promise: the texture is affine over the quad, as a sprite's rectangle is over its
 * parallelogram). False when it is not strictly convex once snapped, or covers none of the
 * region: then the two triangles, set up and drawn as such, do whatever is right. */
bool raster_setup_quad(const struct raster *r, struct raster_shape *t,
                       const struct raster_vertex q[4]);

/* Draws t's rows of the current band, with the texture and tint selected (those it was set up
 * with). */
void raster_draw(struct raster *r, const struct raster_shape *t);

/* Whether t has rows in the current band: inline, so that a bone's triangles that miss it (a
 * mesh's, band after band) cost a compare each rather than a call. */
static inline bool raster_in_band(const struct raster *r, const struct raster_shape *t)
{
    return t->y0 < r->y1 && t->y1 > r->y0;
}

/* raster_setup and raster_draw at once, for a triangle drawn in one band only (a triangle
 * that misses the band's rows is not set up). */
void raster_triangle(struct raster *r, const struct raster_vertex *a, const struct raster_vertex *b,
                     const struct raster_vertex *c);

/* The same for a quad (raster_setup_quad): false, having drawn nothing, when it is not to be
 * drawn as one; then its two triangles are. */
bool raster_quad(struct raster *r, const struct raster_vertex q[4]);

/* Averages each pixel's samples of the band's rows over the background into out (RGBA8, row y
 * at out + y * pitch, pitch >= w * 4; the bytes between rows are left alone), premultiplied
 * or, if straight, unpremultiplied. Leaves each of these rows' span saying which pixels
 * [lo, hi) may differ from the background (lo = hi = 0: none). */
void raster_resolve(const struct raster *r, uint8_t *out, size_t pitch, bool straight);

/* The rows outside the region, as raster_resolve would write them: all background, their
 * spans empty. With the bands, every one of the h rows is then written. */
void raster_resolve_outside(const struct raster *r, uint8_t *out, size_t pitch, bool straight);

/* Premultiplied packed RGBA -> straight (alpha 0 becomes all zero). */
uint32_t raster_unpremultiply(uint32_t px);

#endif
