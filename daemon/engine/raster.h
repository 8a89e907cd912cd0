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

struct raster {
    uint32_t *samples; /* premultiplied RGBA8 packed little-endian, ns per pixel */
    uint32_t w, h, ns;
    int x0, y0, x1, y1;  /* the region that can be drawn (inclusive-exclusive) */
    int32_t *spans;      /* per row of the region, [lo, hi): the pixels whose samples are live */
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

/* Starts a picture: samples sized w*h*ns, spans 2*h; only pixels in [x0,x1) x [y0,y1) can
 * be drawn. Triangles then come front to back (nearest first): each goes under what is
 * there. */
void raster_begin(struct raster *r, uint32_t *samples, int32_t *spans, uint32_t w, uint32_t h,
                  uint32_t ns, const uint8_t background[4], int x0, int y0, int x1, int y1);

/* Selects the atlas (with its empty-block bitmap, may be NULL) and the premultiplied tint
 * multiplier for the next triangles. */
void raster_set_texture(struct raster *r, const uint8_t *rgba, uint32_t w, uint32_t h,
                        const uint8_t *clear, uint32_t clear_stride, const float tint[4]);

void raster_triangle(struct raster *r, const struct raster_vertex *a, const struct raster_vertex *b,
                     const struct raster_vertex *c);

/* Averages each pixel's samples over the background into out (RGBA8, row y at out + y * pitch,
 * pitch >= w * 4; the bytes between rows are left alone), premultiplied or, if straight,
 * unpremultiplied. Leaves every row's span (all h of them) saying which pixels [lo, hi) may
 * differ from the background (lo = hi = 0: none). */
void raster_resolve(const struct raster *r, uint8_t *out, size_t pitch, bool straight);

/* Premultiplied packed RGBA -> straight (alpha 0 becomes all zero). */
uint32_t raster_unpremultiply(uint32_t px);

#endif
