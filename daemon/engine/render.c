/* CPU renderer (see render.h). Geometry follows the web player: a textured bone without a
 * mesh is a quad of its texture's size centred on the bone, scaled by the bone's scale and
 * rotated by its rotation; a mesh bone draws its constructed triangles. Rasterisation uses
 * fixed-point edge functions with a top-left rule, so triangles sharing an edge cover each
 * sample once, and shades once per pixel at its centre, as multisampled GL does. */
#include "render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "eval.h"
#include "raster.h"

void render_opts_default(struct render_opts *o)
{
    memset(o, 0, sizeof *o);
    o->width = o->height = 512;
    o->scale = (struct vec2){1.0, 1.0};
    o->samples = 4;
}

void image_init(struct image *img)
{
    memset(img, 0, sizeof *img);
}

void image_close(struct image *img)
{
    free(img->rgba_mem);
    free(img->samples);
    free(img->spans);
    free(img->order);
    free(img->keys);
    free(img->skip);
    free(img->rows);
    free(img->shape_at);
    free(img->shapes);
    image_init(img);
}

void image_trim(struct image *img, size_t keep)
{
    if (img->rgba_cap + img->sample_cap + img->span_cap <= keep)
        return;
    free(img->rgba_mem);
    free(img->samples);
    free(img->spans);
    img->rgba_mem = img->rgba = NULL;
    img->samples = NULL;
    img->spans = NULL;
    img->live = NULL;
    img->rgba_cap = img->sample_cap = img->span_cap = 0;
    img->width = img->height = 0;
    img->pitch = 0;
}

/* The style list in effect: the caller's, else "Default" alone, else all (NULL). */
static const int *active_styles(const struct armature *arm, const struct render_opts *opts,
                                uint32_t *count, int *one)
{
    if (opts->style_count) {
        *count = opts->style_count;
        return opts->styles;
    }
    *one = arm->default_style; /* found once at load: this runs per drawn bone */
    if (*one >= 0) {
        *count = 1;
        return one;
    }
    *count = 0;
    return NULL;
}

int render_bone_texture(const struct armature *arm, const struct render_opts *opts, int tex_name)
{
    uint32_t count;
    int one;
    const int *styles = active_styles(arm, opts, &count, &one);
    return armature_resolve_texture(arm, tex_name, styles, count);
}

/* Each bone's answer is kept as it is found (skip: 0 not yet known, 1 hidden, 2 shown), so a
 * walk up the parents stops at the first bone already answered and every bone is walked
 * through once. */
void render_hidden_bones(const struct armature *arm, const struct pose *p, uint8_t *skip,
                         uint32_t *path)
{
    memset(skip, 0, arm->bone_count);
    for (uint32_t b = 0; b < arm->bone_count; b++) {
        uint32_t n = 0;
        int a = (int)b;
        /* n < bone_count: a parent loop (which the loader refuses) ends the walk too */
        while (a >= 0 && !skip[a] && !p->out[a].hidden && n < arm->bone_count) {
            path[n++] = (uint32_t)a;
            a = arm->bones[a].parent;
        }
        uint8_t answer = a < 0 ? 2 : n == arm->bone_count ? 1 : skip[a] ? skip[a] : 1;
        if (a >= 0 && !skip[a])
            skip[a] = answer; /* a is hidden itself */
        while (n)
            skip[path[--n]] = answer;
    }
    for (uint32_t b = 0; b < arm->bone_count; b++)
        skip[b] = skip[b] == 1;
}

/* Sorts n distinct keys ascending: a few dozen, mostly in order already (zindex seldom
 * reorders bones), where an insertion sort beats qsort's calls to a comparator. */
static void sort_keys(uint64_t *keys, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        uint64_t k = keys[i];
        uint32_t j = i;
        for (; j > 0 && keys[j - 1] > k; j--)
            keys[j] = keys[j - 1];
        keys[j] = k;
    }
}

uint32_t render_draw_order(const struct armature *arm, const struct pose *p,
                           const struct render_opts *opts, uint32_t *out, uint64_t *keys,
                           uint8_t *skip)
{
    uint32_t count;
    int one;
    const int *styles = active_styles(arm, opts, &count, &one);
    render_hidden_bones(arm, p, skip, out); /* out is free until the order is written */
    /* Sort keys: zindex ascending (biased to unsigned), then bone id: descending for 0.5 (the
     * web player's order), ascending for 0.6/0.7 (the editor's). */
    uint32_t flip = arm->layout == ARM_LAYOUT_ARRAYS ? 0 : UINT32_MAX;
    uint32_t n = 0;
    for (uint32_t b = 0; b < arm->bone_count; b++) {
        if (skip[b] || armature_resolve_texture(arm, p->out[b].tex, styles, count) < 0)
            continue;
        uint64_t z = (uint64_t)((int64_t)p->out[b].zindex + 2147483648LL);
        keys[n++] = z << 32 | (uint64_t)(flip ^ b);
    }
    sort_keys(keys, n);
    for (uint32_t i = 0; i < n; i++)
        out[i] = flip ^ (uint32_t)(keys[i] & UINT32_MAX);
    return n;
}

struct vec2 render_pivot_offset(const struct arm_bone *bone, const struct bone_out *o,
                                const struct arm_texture *t)
{
    if (bone->pivot_pos.x == 0.0 && bone->pivot_pos.y == 0.0)
        return (struct vec2){0.0, 0.0};
    double x = bone->pivot_pos.x * t->size.x, y = bone->pivot_pos.y * t->size.y;
    double c = cos(o->rot), s = sin(o->rot);
    /* The bone's scale applies after the rotation, along the armature's axes. */
    return (struct vec2){(x * c - y * s) * o->scale.x, (x * s + y * c) * o->scale.y};
}

void render_quad_corners(const struct arm_bone *bone, const struct bone_out *o,
                         const struct arm_texture *t, struct vec2 pos[4])
{
    double hw = t->size.x / 2 * o->scale.x * bone->pivot_scale.x;
    double hh = t->size.y / 2 * o->scale.y * bone->pivot_scale.y;
    double a = o->rot + bone->pivot_rot, c = cos(a), s = sin(a);
    struct vec2 at = render_pivot_offset(bone, o, t);
    at.x += o->pos.x;
    at.y += o->pos.y;
    /* y up: the texture's top row is at +hh. */
    static const double sx[4] = {-1, 1, 1, -1}, sy[4] = {1, 1, -1, -1};
    for (int i = 0; i < 4; i++) {
        double x = sx[i] * hw, y = sy[i] * hh;
        pos[i] = (struct vec2){at.x + x * c - y * s, at.y + x * s + y * c};
    }
}

/* fmin and fmax as glibc's give them, bit for bit (a NaN loses; of two equal values, such
 * as 0 and -0, b), inline: GCC calls libm for those, and a mesh's every vertex goes through
 * bounds_add. */
static inline double lesser(double a, double b)
{
    return a < b || b != b ? a : b;
}

static inline double greater(double a, double b)
{
    return a > b || b != b ? a : b;
}

void bounds_add(struct bounds *b, double x, double y)
{
    if (!isfinite(x) || !isfinite(y)) /* an overflowing pose: drawn it shows nothing either */
        return;
    if (b->empty) {
        *b = (struct bounds){x, y, x, y, false};
        return;
    }
    b->min_x = lesser(b->min_x, x);
    b->min_y = lesser(b->min_y, y);
    b->max_x = greater(b->max_x, x);
    b->max_y = greater(b->max_y, y);
}

static bool visible(const struct armature *arm, const struct pose *p, uint32_t b)
{
    int a = (int)b;
    for (uint32_t depth = 0; a >= 0 && depth <= arm->bone_count; depth++) {
        if (p->out[a].hidden)
            return false;
        a = arm->bones[a].parent;
    }
    return true;
}

/* Adds what bone b draws with texture t: its mesh vertices, or its quad's corners. */
static void bone_bounds(const struct armature *arm, const struct pose *p, uint32_t b, int t,
                        struct bounds *bd)
{
    const struct arm_bone *bone = &arm->bones[b];
    if (bone->vert_len) {
        struct vec2 off = render_pivot_offset(bone, &p->out[b], &arm->textures[t]);
        for (uint32_t v = 0; v < bone->vert_len; v++)
            bounds_add(bd, p->verts[bone->vert_off + v].x + off.x,
                       p->verts[bone->vert_off + v].y + off.y);
        return;
    }
    struct vec2 c[4];
    render_quad_corners(bone, &p->out[b], &arm->textures[t], c);
    for (int i = 0; i < 4; i++)
        bounds_add(bd, c[i].x, c[i].y);
}

void render_bounds(const struct armature *arm, const struct pose *p, const struct render_opts *opts,
                   struct bounds *bd)
{
    uint32_t count;
    int one;
    const int *styles = active_styles(arm, opts, &count, &one);
    for (uint32_t b = 0; b < arm->bone_count; b++) {
        int t = armature_resolve_texture(arm, p->out[b].tex, styles, count);
        if (t >= 0 && visible(arm, p, b))
            bone_bounds(arm, p, b, t, bd);
    }
}

void render_anim_bounds(const struct armature *arm, struct pose *p, const struct eval_request *r,
                        const struct render_opts *opts, struct bounds *bd)
{
    pose_reset(p);
    eval_warmup(p, r->warmup, NULL);
    /* The player's protocol: after the warm-up, one step per frame 0..last of the first
     * animation; the others play the same frame numbers round their own loops. */
    double last = r->count ? arm->anims[r->anims[0]].last_frame : 0.0;
    struct anim_play plays[EVAL_MAX_ANIMS];
    for (double f = 0; f <= last; f++) {
        for (unsigned i = 0; i < r->count; i++) {
            double fi = i ? anim_format_frame(arm, r->anims[i], f, false, true) : f;
            plays[i] = (struct anim_play){r->anims[i], fi, r->smooth[i]};
        }
        animate(p, plays, r->count);
        construct(p, NULL);
        render_bounds(arm, p, opts, bd);
    }
}

void render_fit(const struct bounds *b, double fraction, struct render_opts *opts)
{
    double w = b->empty ? 0 : b->max_x - b->min_x, h = b->empty ? 0 : b->max_y - b->min_y;
    double sx = w > 0 ? fraction * opts->width / w : INFINITY;
    double sy = h > 0 ? fraction * opts->height / h : INFINITY;
    double s = fmin(sx, sy);
    s = isfinite(s) ? floor(s * 1000.0) / 1000.0 : 1.0;
    if (s <= 0)
        s = 0.001;
    /* halves first: the sum of two huge bounds would overflow (halving is exact) */
    double cx = b->empty ? 0 : b->min_x / 2 + b->max_x / 2;
    double cy = b->empty ? 0 : b->min_y / 2 + b->max_y / 2;
    opts->scale = (struct vec2){s, s};
    opts->position = (struct vec2){floor(opts->width / 2.0 - cx * s + 0.5),
                                   floor(-(opts->height / 2.0) - cy * s + 0.5)};
}

static int reserve(void **buf, size_t *cap, size_t bytes)
{
    if (*cap >= bytes)
        return 0;
    void *n = realloc(*buf, bytes);
    if (!n)
        return ENG_ENOMEM;
    *buf = n;
    *cap = bytes;
    return 0;
}

int image_reserve_bones(struct image *img, uint32_t bone_count)
{
    size_t n = bone_count ? bone_count : 1;
    if (img->bone_cap >= n)
        return 0;
    uint32_t *order = realloc(img->order, n * sizeof *order);
    if (order)
        img->order = order;
    uint64_t *keys = realloc(img->keys, n * sizeof *keys);
    if (keys)
        img->keys = keys;
    uint8_t *skip = realloc(img->skip, n);
    if (skip)
        img->skip = skip;
    int32_t *rows = realloc(img->rows, 2 * n * sizeof *rows);
    if (rows)
        img->rows = rows;
    uint32_t *shape_at = realloc(img->shape_at, (n + 1) * sizeof *shape_at);
    if (shape_at)
        img->shape_at = shape_at;
    if (!order || !keys || !skip || !rows || !shape_at)
        return ENG_ENOMEM;
    img->bone_cap = n;
    return 0;
}

/* The rows drawn at a time: opts.band_rows, else what makes RENDER_BAND_BYTES of samples
 * for triangles set up once (stored), RENDER_IMMEDIATE_BAND_BYTES for triangles set up as
 * they are drawn (a band passes each of them by at the cost of its vertices, so fewer and
 * larger bands); at least 8 rows (a narrower band would walk most triangles' edges again and
 * again), never more than the picture. */
static uint32_t band_rows(const struct render_opts *o, bool stored)
{
    size_t row = (size_t)o->width * o->samples * 4, rows = o->band_rows;
    size_t bytes = stored ? RENDER_BAND_BYTES : RENDER_IMMEDIATE_BAND_BYTES;
    if (!rows)
        rows = bytes / row > 8 ? bytes / row : 8;
    return rows < o->height ? (uint32_t)rows : o->height;
}

/* After a failed render(), img holds no picture: nothing in it may be read as one. Returns rc. */
static int no_picture(struct image *img, int rc)
{
    img->width = img->height = 0;
    img->pitch = 0;
    img->rgba = NULL;
    img->live = NULL;
    return rc;
}

static int prepare(struct image *img, const struct armature *arm, const struct render_opts *o)
{
    if (!o->width || !o->height || o->width > RENDER_MAX_SIDE || o->height > RENDER_MAX_SIDE ||
        (o->samples != 1 && o->samples != 4))
        return ENG_EINVAL;
    for (uint32_t i = 0; i < o->style_count; i++)
        if (o->styles[i] < 0 || (uint32_t)o->styles[i] >= arm->style_count)
            return ENG_EINVAL;
    size_t pitch = (size_t)o->width * 4 + o->png_rows;
    int rc;
    if ((rc = reserve((void **)&img->rgba_mem, &img->rgba_cap, pitch * o->height)) ||
        (rc = reserve((void **)&img->spans, &img->span_cap,
                      (size_t)o->height * 2 * sizeof(int32_t))) ||
        (rc = image_reserve_bones(img, arm->bone_count)))
        return rc;
    img->width = o->width;
    img->height = o->height;
    img->pitch = pitch;
    img->rgba = img->rgba_mem + o->png_rows;
    for (uint32_t y = 0; o->png_rows && y < o->height; y++)
        img->rgba_mem[y * pitch] = 0; /* the filter byte: None */
    return 0;
}

/* Armature space -> pixel space (y down) with the camera. */
static struct vec2 to_pixel(const struct render_opts *o, struct vec2 v)
{
    return (struct vec2){v.x * o->scale.x + o->position.x, -(v.y * o->scale.y + o->position.y)};
}

static void tint_of(const struct bone_out *o, float tint[4])
{
    float a = (float)(o->tint[3] / 255.0);
    for (int i = 0; i < 3; i++)
        tint[i] = (float)(o->tint[i] / 255.0) * a; /* premultiplied multiplier */
    tint[3] = a;
}

const uint32_t render_quad_indices[6] = {0, 1, 2, 0, 2, 3};

void render_atlas_rect(const struct armature *arm, const struct arm_texture *t,
                       struct atlas_rect *r)
{
    const struct arm_atlas *at = &arm->atlases[t->atlas];
    r->u0 = t->offset.x / at->width;
    r->v0 = t->offset.y / at->height;
    r->u1 = (t->offset.x + t->size.x) / at->width;
    r->v1 = (t->offset.y + t->size.y) / at->height;
    r->du = t->size.x / at->width;
    r->dv = t->size.y / at->height;
}

/* What a bone's triangles are made from, found once per bone. */
struct bone_geom {
    const struct arm_bone *bone;
    struct atlas_rect a;
    struct vec2 off;              /* a mesh's pivot offset */
    struct raster_vertex quad[4]; /* a quad's corners */
    uint32_t count;               /* triangles */
};

static void bone_geom(const struct armature *arm, const struct pose *p,
                      const struct render_opts *opts, uint32_t b, const struct arm_texture *tex,
                      struct bone_geom *g)
{
    g->bone = &arm->bones[b];
    render_atlas_rect(arm, tex, &g->a);
    if (g->bone->vert_len) {
        g->off = render_pivot_offset(g->bone, &p->out[b], tex);
        g->count = g->bone->index_len / 3;
        return;
    }
    struct vec2 c[4];
    render_quad_corners(g->bone, &p->out[b], tex, c);
    const double u[4] = {g->a.u0, g->a.u1, g->a.u1, g->a.u0},
                 w[4] = {g->a.v0, g->a.v0, g->a.v1, g->a.v1};
    for (int i = 0; i < 4; i++) {
        struct vec2 px = to_pixel(opts, c[i]);
        g->quad[i] = (struct raster_vertex){px.x, px.y, u[i], w[i]};
    }
    g->count = 2;
}

/* The vertices of triangle k of the bone. */
static void bone_triangle(const struct armature *arm, const struct pose *p,
                          const struct render_opts *opts, const struct bone_geom *g, uint32_t k,
                          struct raster_vertex v[3])
{
    if (!g->bone->vert_len) {
        const uint32_t *q = render_quad_indices + 3 * k;
        for (int i = 0; i < 3; i++)
            v[i] = g->quad[q[i]];
        return;
    }
    const uint32_t *ix = arm->indices + g->bone->index_off + 3 * (size_t)k;
    for (int i = 0; i < 3; i++) {
        uint32_t vi = g->bone->vert_off + ix[i];
        struct vec2 px =
            to_pixel(opts, (struct vec2){p->verts[vi].x + g->off.x, p->verts[vi].y + g->off.y});
        v[i] = (struct raster_vertex){px.x, px.y, g->a.u0 + g->a.du * arm->vert_uv[vi].x,
                                      g->a.v0 + g->a.dv * arm->vert_uv[vi].y};
    }
}

/* Bone b's texture, or NULL if its atlas has no pixels (loaded without them): then it draws
 * nothing. */
static const struct arm_texture *drawn_texture(const struct armature *arm, const struct pose *p,
                                               const struct render_opts *opts, uint32_t b)
{
    const struct arm_texture *tex = &arm->textures[render_bone_texture(arm, opts, p->out[b].tex)];
    return arm->atlases[tex->atlas].rgba ? tex : NULL;
}

/* Selects bone b's atlas and tint for the triangles that follow: its drawn_texture. */
static const struct arm_texture *select_bone(struct raster *r, const struct armature *arm,
                                             const struct pose *p, const struct render_opts *opts,
                                             uint32_t b)
{
    const struct arm_texture *tex = drawn_texture(arm, p, opts, b);
    if (!tex)
        return NULL;
    const struct arm_atlas *at = &arm->atlases[tex->atlas];
    float tint[4];
    tint_of(&p->out[b], tint);
    raster_set_texture(r, at->rgba, at->width, at->height, at->clear, at->clear_stride, tint);
    return tex;
}

/* The triangles the n drawn bones have. */
static size_t triangle_count(const struct armature *arm, const struct image *img, uint32_t n)
{
    size_t count = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct arm_bone *bone = &arm->bones[img->order[i]];
        count += bone->vert_len ? bone->index_len / 3 : 2;
    }
    return count;
}

/* Sets up bone geometry g's shapes at shapes: a sprite's quad as one where it can be
 * (raster_setup_quad), else its triangles. Returns how many cover some of the region. */
static uint32_t setup_bone(struct raster *r, const struct armature *arm, const struct pose *p,
                           const struct render_opts *opts, const struct bone_geom *g,
                           struct raster_shape *shapes)
{
    if (!g->bone->vert_len && raster_setup_quad(r, shapes, g->quad))
        return 1;
    uint32_t k = 0;
    for (uint32_t t = 0; t < g->count; t++) {
        struct raster_vertex v[3];
        bone_triangle(arm, p, opts, g, t, v);
        k += raster_setup(r, &shapes[k], &v[0], &v[1], &v[2]);
    }
    return k;
}

/* Sets up the n drawn bones' shapes once for the whole picture: bone i's are
 * img->shapes[shape_at[i] .. shape_at[i + 1]). */
static void setup_shapes(struct raster *r, const struct armature *arm, const struct pose *p,
                         const struct render_opts *opts, struct image *img, uint32_t n)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t b = img->order[i];
        const struct arm_texture *tex = select_bone(r, arm, p, opts, b);
        img->shape_at[i] = k;
        if (!tex)
            continue;
        struct bone_geom g;
        bone_geom(arm, p, opts, b, tex, &g);
        k += setup_bone(r, arm, p, opts, &g, &img->shapes[k]);
    }
    img->shape_at[n] = k;
}

/* Draws the rows of the current band: bone by bone, front to back (see raster.h), those of
 * their shapes that reach it, set up already (stored) or now. */
static void draw_band(struct raster *r, const struct armature *arm, const struct pose *p,
                      const struct render_opts *opts, const struct image *img, uint32_t n,
                      bool stored)
{
    for (uint32_t i = n; i-- > 0;) {
        uint32_t b = img->order[i];
        const struct arm_texture *tex;
        if (img->rows[2 * i] >= r->y1 || img->rows[2 * i + 1] <= r->y0 ||
            !(tex = select_bone(r, arm, p, opts, b)))
            continue;
        if (stored) {
            for (uint32_t t = img->shape_at[i]; t < img->shape_at[i + 1]; t++)
                if (raster_in_band(r, &img->shapes[t]))
                    raster_draw(r, &img->shapes[t]);
            continue;
        }
        struct bone_geom g;
        bone_geom(arm, p, opts, b, tex, &g);
        if (!g.bone->vert_len && raster_quad(r, g.quad))
            continue;
        for (uint32_t t = 0; t < g.count; t++) {
            struct raster_vertex v[3];
            bone_triangle(arm, p, opts, &g, t, v);
            raster_triangle(r, &v[0], &v[1], &v[2]);
        }
    }
}

/* The pixel span [*a, *b) within [0, limit) that covers a and b (either order) with a 2-pixel
 * margin; empty (*a == *b) when it lies off the canvas or is not finite. The clamping happens
 * in double, so no coordinate is ever cast to int out of range. */
static void clip_span(double a, double b, uint32_t limit, int *lo, int *hi)
{
    double l = floor(fmin(a, b)) - 2, h = ceil(fmax(a, b)) + 2;
    *lo = *hi = 0;
    if (!(l < (double)limit) || !(h > 0)) /* also false for NaN */
        return;
    *lo = (int)fmax(l, 0);
    *hi = (int)fmin(h, (double)limit);
}

/* What drawing triangle v costs, in pixels (render_opts.max_fill): the pixels it covers
 * within the picture (its area, or its box cut to the picture where that is smaller, as for a
 * triangle mostly off it), a pixel for each row of the picture it spans (the walk of its
 * edges), and RENDER_SETUP_FILL. */
static uint64_t triangle_fill(const struct raster_vertex v[3], const struct render_opts *o)
{
    for (int i = 0; i < 3; i++)
        if (!isfinite(v[i].x) || !isfinite(v[i].y)) /* raster_setup draws none of it */
            return RENDER_SETUP_FILL;
    double w = o->width, h = o->height;
    double x0 = lesser(lesser(v[0].x, v[1].x), v[2].x),
           x1 = greater(greater(v[0].x, v[1].x), v[2].x);
    double y0 = lesser(lesser(v[0].y, v[1].y), v[2].y),
           y1 = greater(greater(v[0].y, v[1].y), v[2].y);
    double bw = greater(lesser(x1, w) - greater(x0, 0), 0),
           bh = greater(lesser(y1, h) - greater(y0, 0), 0);
    double area =
        fabs((v[1].x - v[0].x) * (v[2].y - v[0].y) - (v[2].x - v[0].x) * (v[1].y - v[0].y)) / 2;
    return RENDER_SETUP_FILL + (uint64_t)lesser(area, bw * bh) + (uint64_t)ceil(bh);
}

/* The bands of rows rows that [lo, hi) reaches. */
static uint64_t bands_reached(int lo, int hi, uint32_t rows)
{
    return lo < hi ? (uint64_t)((uint32_t)(hi - 1) / rows - (uint32_t)lo / rows + 1) : 0;
}

/* The fill of the n drawn bones' triangles (render_opts.max_fill), found from the same
 * vertices that are drawn, plus what the bands cost: each band a bone's rows reach visits it
 * (RENDER_BAND_FILL), and, when triangles are set up as they are drawn (not stored), passes
 * each of its triangles by (RENDER_BAND_PASS_FILL). It stops counting once past limit (0:
 * none). A bone whose rows miss the picture costs only its triangles' setup. */
static uint64_t picture_fill(const struct armature *arm, const struct pose *p,
                             const struct render_opts *opts, const struct image *img, uint32_t n,
                             uint32_t rows, bool stored, uint64_t limit)
{
    uint64_t fill = 0;
    for (uint32_t i = 0; i < n && (!limit || fill <= limit); i++) {
        uint32_t b = img->order[i];
        const struct arm_texture *tex = drawn_texture(arm, p, opts, b);
        if (!tex)
            continue;
        struct bone_geom g;
        bone_geom(arm, p, opts, b, tex, &g);
        uint64_t bands = bands_reached(img->rows[2 * i], img->rows[2 * i + 1], rows);
        fill +=
            bands * (RENDER_BAND_FILL + (stored ? 0 : RENDER_BAND_PASS_FILL * (uint64_t)g.count));
        if (!bands) {
            fill += (uint64_t)g.count * RENDER_SETUP_FILL;
            continue;
        }
        for (uint32_t t = 0; t < g.count; t++) {
            struct raster_vertex v[3];
            bone_triangle(arm, p, opts, &g, t, v);
            fill += triangle_fill(v, opts);
        }
    }
    return fill;
}

/* The drawn bones' bounds (armature space) into bd, and each one's pixel rows [lo, hi) into
 * img->rows (from the same points its triangles use, widened by clip_span's margin), so that
 * a band visits only the bones that reach it. */
static void drawn_bounds(const struct armature *arm, const struct pose *p,
                         const struct render_opts *opts, struct image *img, uint32_t n,
                         struct bounds *bd)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t b = img->order[i];
        struct bounds own = {0, 0, 0, 0, true};
        bone_bounds(arm, p, b, render_bone_texture(arm, opts, p->out[b].tex), &own);
        int rows[2] = {0, 0};
        if (!own.empty) {
            bounds_add(bd, own.min_x, own.min_y);
            bounds_add(bd, own.max_x, own.max_y);
            struct vec2 lo = to_pixel(opts, (struct vec2){own.min_x, own.max_y});
            struct vec2 hi = to_pixel(opts, (struct vec2){own.max_x, own.min_y});
            clip_span(lo.y, hi.y, opts->height, &rows[0], &rows[1]);
        }
        img->rows[2 * i] = rows[0];
        img->rows[2 * i + 1] = rows[1];
    }
}

int render(const struct armature *arm, const struct pose *p, const struct render_opts *opts,
           struct image *img)
{
    int rc = prepare(img, arm, opts);
    if (rc)
        return no_picture(img, rc); /* rgba_mem may have moved */
    uint32_t n = render_draw_order(arm, p, opts, img->order, img->keys, img->skip);
    /* Only the region the drawn bones touch is cleared and resolved sample by sample. */
    struct bounds bd = {0, 0, 0, 0, true};
    drawn_bounds(arm, p, opts, img, n, &bd);
    /* Triangles are set up once and kept for every band, up to RENDER_STORED_TRIANGLES: a
     * file of huge meshes has its triangles set up as they are drawn, in larger bands, so that
     * it cannot make a worker hold more than a few MiB of them, nor of samples. */
    size_t count = triangle_count(arm, img, n);
    bool stored = !opts->draw_immediate && count <= RENDER_STORED_TRIANGLES;
    uint32_t rows = band_rows(opts, stored);
    /* What drawing will cost is known before any of it is done: a file whose triangles would
     * keep a worker busy for seconds is refused here, not drawn. */
    img->fill = picture_fill(arm, p, opts, img, n, rows, stored, opts->max_fill);
    if (opts->max_fill && img->fill > opts->max_fill)
        return no_picture(img, ENG_ELIMIT);
    if ((rc = reserve((void **)&img->samples, &img->sample_cap,
                      (size_t)opts->width * rows * opts->samples * 4)) ||
        (stored && (rc = reserve((void **)&img->shapes, &img->shape_cap,
                                 (count ? count : 1) * sizeof *img->shapes))))
        return no_picture(img, rc);
    struct vec2 lo = to_pixel(opts, (struct vec2){bd.min_x, bd.max_y});
    struct vec2 hi = to_pixel(opts, (struct vec2){bd.max_x, bd.min_y});
    int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    if (!bd.empty) {
        clip_span(lo.x, hi.x, opts->width, &x0, &x1);
        clip_span(lo.y, hi.y, opts->height, &y0, &y1);
    }
    struct raster r;
    raster_begin(&r, img->samples, rows, img->spans, opts->width, opts->height, opts->samples,
                 opts->background, x0, y0, x1, y1);
    if (stored)
        setup_shapes(&r, arm, p, opts, img, n);
    for (int y = r.region_y0; y < r.region_y1; y += (int)rows) {
        raster_band(&r, y);
        draw_band(&r, arm, p, opts, img, n, stored);
        raster_resolve(&r, img->rgba, img->pitch, opts->straight_alpha);
    }
    raster_resolve_outside(&r, img->rgba, img->pitch, opts->straight_alpha);
    /* Resolving set every row's span, and outside them is the background: all zero bytes
     * when it is transparent, premultiplied or not. */
    img->live = r.background == 0 ? img->spans : NULL;
    return 0;
}

void image_unpremultiply(struct image *img)
{
    for (uint32_t y = 0; y < img->height; y++) {
        uint8_t *px = img->rgba + y * img->pitch;
        for (uint32_t x = 0; x < img->width; x++, px += 4) {
            if (px[3] == 255)
                continue;
            uint32_t v = (uint32_t)px[0] | (uint32_t)px[1] << 8 | (uint32_t)px[2] << 16 |
                         (uint32_t)px[3] << 24;
            v = raster_unpremultiply(v);
            for (int c = 0; c < 4; c++)
                px[c] = (uint8_t)(v >> (8 * c));
        }
    }
}
