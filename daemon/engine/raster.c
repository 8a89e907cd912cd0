/* Multisampled triangle rasteriser. Vertex positions snap to 1/256 pixel and edge functions
 * are exact 64-bit integers, so two triangles sharing an edge never both cover a sample (top-
 * left rule) and never both miss it: meshes show no seams. Each pixel with a covered sample is
 * shaded once, at its centre, and the colour blends into the covered samples (premultiplied
 * source-over), which is what 4x MSAA in GL does. */
#include "raster.h"

#include <math.h>
#include <string.h>

#define SUB 256 /* sub-pixel steps */

/* Sample offsets inside a pixel, in 1/SUB: the standard 4x pattern, or the centre. */
static const int32_t offsets4[4][2] = {{96, 32}, {224, 96}, {32, 160}, {160, 224}};
static const int32_t offsets1[1][2] = {{128, 128}};

static uint32_t pack(const uint8_t c[4])
{
    return (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;
}

void raster_begin(struct raster *r, uint32_t *samples, uint32_t w, uint32_t h, uint32_t ns,
                  const uint8_t bg[4], int x0, int y0, int x1, int y1)
{
    uint8_t pm[4];
    for (int i = 0; i < 3; i++)
        pm[i] = (uint8_t)((bg[i] * bg[3] + 127) / 255);
    pm[3] = bg[3];
    *r = (struct raster){.samples = samples, .w = w, .h = h, .ns = ns, .background = pack(pm)};
    r->x0 = x0 < 0 ? 0 : x0;
    r->y0 = y0 < 0 ? 0 : y0;
    r->x1 = x1 > (int)w ? (int)w : x1;
    r->y1 = y1 > (int)h ? (int)h : y1;
    if (r->x1 < r->x0) /* an empty region: nothing cleared, nothing drawn */
        r->x1 = r->x0;
    if (r->y1 < r->y0)
        r->y1 = r->y0;
    /* Drawing goes front to back, so the background goes under everything at the end. */
    for (int y = r->y0; y < r->y1; y++)
        memset(samples + ((size_t)y * w + (size_t)r->x0) * ns, 0,
               (size_t)(r->x1 - r->x0) * ns * sizeof *samples);
}

void raster_set_texture(struct raster *r, const uint8_t *rgba, uint32_t w, uint32_t h,
                        const uint8_t *clear, uint32_t clear_stride, const float tint[4])
{
    r->clear = clear;
    r->clear_stride = clear_stride;
    r->tex = rgba;
    r->tw = w;
    r->th = h;
    memcpy(r->tint, tint, sizeof r->tint);
    r->tinted = tint[0] != 1.0f || tint[1] != 1.0f || tint[2] != 1.0f || tint[3] != 1.0f;
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

/* floor() as an integer without a libm call (fx is clamped to a sane range). */
static long floor_long(double fx)
{
    long i = (long)fx;
    return i - (fx < (double)i);
}

static bool block_clear(const struct raster *r, long x, long y)
{
    size_t bx = (size_t)x >> 2;
    return r->clear[((size_t)y >> 2) * r->clear_stride + (bx >> 3)] >> (bx & 7) & 1;
}

static uint32_t sample_texture(const struct raster *r, double u, double v)
{
    double fx = u * r->tw * 256.0 - 128.0, fy = v * r->th * 256.0 - 128.0;
    fx = fx < -65536.0 ? -65536.0 : (fx > 1e9 ? 1e9 : fx);
    fy = fy < -65536.0 ? -65536.0 : (fy > 1e9 ? 1e9 : fy);
    long ix = floor_long(fx), iy = floor_long(fy);
    long x0 = ix >> 8, y0 = iy >> 8, x1 = x0 + 1, y1 = y0 + 1;
    uint32_t ax = (uint32_t)(ix & 255), ay = (uint32_t)(iy & 255);
    long mx = (long)r->tw - 1, my = (long)r->th - 1;
    x0 = x0 < 0 ? 0 : (x0 > mx ? mx : x0);
    x1 = x1 < 0 ? 0 : (x1 > mx ? mx : x1);
    y0 = y0 < 0 ? 0 : (y0 > my ? my : y0);
    y1 = y1 < 0 ? 0 : (y1 > my ? my : y1);
    /* Empty space is most of what misses the cache: a bilinear footprint whose blocks are all
     * fully transparent samples as 0 without touching the texels. */
    if (r->clear && block_clear(r, x0, y0) && block_clear(r, x1, y0) && block_clear(r, x0, y1) &&
        block_clear(r, x1, y1))
        return 0;
    const uint32_t *row0 = (const uint32_t *)(const void *)r->tex + (size_t)y0 * r->tw;
    const uint32_t *row1 = (const uint32_t *)(const void *)r->tex + (size_t)y1 * r->tw;
    uint32_t top = lerp_texel(row0[x0], row0[x1], ax), bot = lerp_texel(row1[x0], row1[x1], ax);
    uint32_t c = lerp_texel(top, bot, ay);
    if (!r->tinted)
        return c;
    uint32_t out = 0;
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
    if (k == 255)
        return src;
    if (k == 0)
        return dst;
    for (int sh = 0; sh < 32; sh += 8) {
        uint32_t v = ((dst >> sh) & 255) + div255(((src >> sh) & 255) * k);
        out |= (v > 255 ? 255 : v) << sh;
    }
    return out;
}

struct edge {
    int64_t a, b,
        c;        /* E(x, y) = a*x + b*y + c, in SUB units; inside when > 0 (or 0 and top-left) */
    int64_t bias; /* 0 for a top-left edge, -1 otherwise: E + bias >= 0 means covered */
};

static void make_edge(struct edge *e, int64_t ax, int64_t ay, int64_t bx, int64_t by)
{
    /* E(p) = (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x) */
    int64_t dx = bx - ax, dy = by - ay;
    e->a = -dy;
    e->b = dx;
    e->c = dy * ax - dx * ay;
    bool top_left = dy < 0 || (dy == 0 && dx > 0);
    e->bias = top_left ? 0 : -1;
}

struct tri {
    struct edge e[3];
    int64_t min_x, max_x, min_y, max_y; /* SUB units */
    /* Texture coordinates are affine in the pixel centre: u = u0 + du_dx*px + du_dy*py. */
    double u0, du_dx, du_dy, v0, dv_dx, dv_dy;
};

static void setup_uv(struct tri *t, const double u[3], const double v[3], double area)
{
    double half = SUB / 2.0;
    t->u0 = t->du_dx = t->du_dy = t->v0 = t->dv_dx = t->dv_dy = 0;
    for (int i = 0; i < 3; i++) {
        /* Edge i is opposite vertex i, so E_i / area is vertex i's barycentric weight. */
        const struct edge *e = &t->e[i];
        double at_origin = ((double)e->a * half + (double)e->b * half + (double)e->c) / area;
        double dx = (double)e->a * SUB / area, dy = (double)e->b * SUB / area;
        t->u0 += u[i] * at_origin;
        t->du_dx += u[i] * dx;
        t->du_dy += u[i] * dy;
        t->v0 += v[i] * at_origin;
        t->dv_dx += v[i] * dx;
        t->dv_dy += v[i] * dy;
    }
}

static bool setup(struct tri *t, const struct raster_vertex *p[3])
{
    int64_t X[3], Y[3];
    for (int i = 0; i < 3; i++) {
        if (!(fabs(p[i]->x) < 1e7 && fabs(p[i]->y) < 1e7))
            return false; /* off any canvas, or not a number */
        X[i] = (int64_t)llround(p[i]->x * SUB);
        Y[i] = (int64_t)llround(p[i]->y * SUB);
    }
    int64_t area = (X[1] - X[0]) * (Y[2] - Y[0]) - (Y[1] - Y[0]) * (X[2] - X[0]);
    if (area == 0)
        return false;
    int o1 = area > 0 ? 1 : 2, o2 = area > 0 ? 2 : 1; /* make the winding positive */
    int idx[3] = {0, o1, o2};
    double u[3], v[3];
    for (int i = 0; i < 3; i++) {
        u[i] = p[idx[i]]->u;
        v[i] = p[idx[i]]->v;
    }
    make_edge(&t->e[0], X[idx[1]], Y[idx[1]], X[idx[2]], Y[idx[2]]);
    make_edge(&t->e[1], X[idx[2]], Y[idx[2]], X[idx[0]], Y[idx[0]]);
    make_edge(&t->e[2], X[idx[0]], Y[idx[0]], X[idx[1]], Y[idx[1]]);
    setup_uv(t, u, v, (double)(area > 0 ? area : -area));
    t->min_x = t->max_x = X[0];
    t->min_y = t->max_y = Y[0];
    for (int i = 1; i < 3; i++) {
        t->min_x = X[i] < t->min_x ? X[i] : t->min_x;
        t->max_x = X[i] > t->max_x ? X[i] : t->max_x;
        t->min_y = Y[i] < t->min_y ? Y[i] : t->min_y;
        t->max_y = Y[i] > t->max_y ? Y[i] : t->max_y;
    }
    return true;
}

/* Pixels of row py that can hold a covered sample: each edge bounds x on one side. */
static bool row_span(const struct tri *t, int py, int *x0, int *x1)
{
    double lo = (double)*x0 * SUB, hi = (double)*x1 * SUB;
    double y0 = (double)py * SUB, y1 = y0 + SUB;
    for (int k = 0; k < 3; k++) {
        const struct edge *e = &t->e[k];
        double by = fmax((double)e->b * y0, (double)e->b * y1);
        double rest = (double)e->c + (double)e->bias + by;
        if (e->a == 0) {
            if (rest < 0)
                return false;
            continue;
        }
        double x = -rest / (double)e->a;
        if (e->a > 0)
            lo = fmax(lo, x);
        else
            hi = fmin(hi, x);
    }
    if (lo > hi)
        return false;
    int a = (int)floor(lo / SUB) - 1, b = (int)ceil(hi / SUB) + 1;
    *x0 = a > *x0 ? a : *x0;
    *x1 = b < *x1 ? b : *x1;
    return *x0 < *x1;
}

/* Both take the sample count as a constant (see raster_row), so the per-sample loops unroll. */
static inline __attribute__((always_inline)) void
shade_pixel(struct raster *r, const struct tri *t, int px, int py, unsigned mask, uint32_t ns)
{
    uint32_t *s = r->samples + ((size_t)py * r->w + (size_t)px) * ns;
    unsigned open = 0;
    for (uint32_t i = 0; i < ns; i++)
        if ((mask & (1u << i)) && (s[i] >> 24) != 255)
            open |= 1u << i;
    if (!open)
        return; /* hidden behind opaque colour drawn earlier (nearer) */
    double u = t->u0 + t->du_dx * px + t->du_dy * py;
    double v = t->v0 + t->dv_dx * px + t->dv_dy * py;
    uint32_t src = sample_texture(r, u, v);
    if (src == 0)
        return;
    for (uint32_t i = 0; i < ns; i++)
        if (open & (1u << i))
            s[i] = under(s[i], src);
}

static inline __attribute__((always_inline)) void row_samples(struct raster *r, const struct tri *t,
                                                              int py, int x0, int x1, uint32_t ns,
                                                              const int32_t (*off)[2])
{
    int64_t e[4][3];
    for (uint32_t s = 0; s < ns; s++) {
        int64_t sx = (int64_t)x0 * SUB + off[s][0], sy = (int64_t)py * SUB + off[s][1];
        for (int k = 0; k < 3; k++)
            e[s][k] = t->e[k].a * sx + t->e[k].b * sy + t->e[k].c + t->e[k].bias;
    }
    const int64_t step0 = t->e[0].a * SUB, step1 = t->e[1].a * SUB, step2 = t->e[2].a * SUB;
    for (int px = x0; px < x1; px++) {
        unsigned mask = 0;
        for (uint32_t s = 0; s < ns; s++) {
            if ((e[s][0] | e[s][1] | e[s][2]) >= 0)
                mask |= 1u << s;
            e[s][0] += step0;
            e[s][1] += step1;
            e[s][2] += step2;
        }
        if (mask)
            shade_pixel(r, t, px, py, mask, ns);
    }
}

static void raster_row(struct raster *r, const struct tri *t, int py, int x0, int x1)
{
    if (r->ns == 4)
        row_samples(r, t, py, x0, x1, 4, offsets4);
    else
        row_samples(r, t, py, x0, x1, 1, offsets1);
}

void raster_triangle(struct raster *r, const struct raster_vertex *a, const struct raster_vertex *b,
                     const struct raster_vertex *c)
{
    const struct raster_vertex *p[3] = {a, b, c};
    struct tri t;
    if (!setup(&t, p))
        return;
    int bx0 = (int)(t.min_x / SUB) - 1, bx1 = (int)(t.max_x / SUB) + 2;
    int y0 = (int)(t.min_y / SUB) - 1, y1 = (int)(t.max_y / SUB) + 2;
    bx0 = bx0 < r->x0 ? r->x0 : bx0;
    bx1 = bx1 > r->x1 ? r->x1 : bx1;
    y0 = y0 < r->y0 ? r->y0 : y0;
    y1 = y1 > r->y1 ? r->y1 : y1;
    for (int py = y0; py < y1; py++) {
        int x0 = bx0, x1 = bx1;
        if (row_span(&t, py, &x0, &x1))
            raster_row(r, &t, py, x0, x1);
    }
}

static void store(uint8_t *o, uint32_t px)
{
    const uint8_t b[4] = {(uint8_t)px, (uint8_t)(px >> 8), (uint8_t)(px >> 16),
                          (uint8_t)(px >> 24)};
    memcpy(o, b, 4);
}

static void fill(uint8_t *o, size_t count, uint32_t px)
{
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

uint32_t raster_unpremultiply(uint32_t px)
{
    uint32_t a = px >> 24;
    if (a == 255)
        return px;
    if (a == 0)
        return 0;
    uint32_t out = a << 24;
    for (int sh = 0; sh < 24; sh += 8) {
        uint32_t v = (((px >> sh) & 255) * 255u + a / 2) / a;
        out |= (v > 255 ? 255 : v) << sh;
    }
    return out;
}

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

void raster_resolve(const struct raster *r, uint8_t *out, bool straight)
{
    uint32_t bg = straight ? raster_unpremultiply(r->background) : r->background;
    for (uint32_t y = 0; y < r->h; y++) {
        uint8_t *row = out + (size_t)y * r->w * 4;
        if ((int)y < r->y0 || (int)y >= r->y1 || r->x0 >= r->x1) {
            fill(row, r->w, bg);
            continue;
        }
        fill(row, (size_t)r->x0, bg);
        fill(row + (size_t)r->x1 * 4, r->w - (size_t)r->x1, bg);
        const uint32_t *s = r->samples + ((size_t)y * r->w + (size_t)r->x0) * r->ns;
        for (int x = r->x0; x < r->x1; x++, s += r->ns) {
            uint32_t px = average(s, r->ns);
            if (r->background && (px >> 24) != 255)
                px = under(px, r->background);
            store(row + (size_t)x * 4,
                  straight && (px >> 24) != 255 ? raster_unpremultiply(px) : px);
        }
    }
}
