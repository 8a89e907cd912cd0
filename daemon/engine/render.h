/* CPU renderer: draws a constructed pose the way the official web player does (textured
 * quads and meshes, zindex order, hidden subtrees skipped, bilinear clamp-to-edge sampling of
 * the premultiplied atlas, premultiplied source-over, 4x multisampling), deterministically.
 *
 * render() reads only the armature and the pose; all scratch lives in the caller's struct
 * image, so one image per worker thread makes rendering lock-free and allocation-free after
 * the first call at a given size. */
#ifndef SKELD_ENGINE_RENDER_H
#define SKELD_ENGINE_RENDER_H

#include "pose.h"

struct raster_shape;

#define RENDER_MAX_STYLES 64
#define RENDER_MAX_SIDE 16384

struct render_opts {
    uint32_t width, height;
    uint8_t background[4]; /* straight RGBA */
    /* Camera, the player's convention: armature point (X, Y) lands on pixel
     * (X * scale.x + position.x, -(Y * scale.y + position.y)), origin top-left. */
    struct vec2 scale, position;
    int styles[RENDER_MAX_STYLES]; /* style indices in priority order */
    uint32_t style_count;          /* 0: the style named "Default", else all in file order */
    uint32_t samples;              /* 1 (no antialiasing) or 4 (the player's 4x MSAA) */
    bool straight_alpha; /* output straight alpha (what PNG holds); default: premultiplied */
    /* Lay the picture out as PNG scanlines: each row after a zero byte (the filter type None),
     * image.pitch = width * 4 + 1, so that png_encode (png_opts.scanlines) deflates the rows
     * where they are instead of copying 1 MiB a 512x512 frame first. */
    bool png_rows;
    /* The most drawing the picture may cost, in pixels (0: no limit): each drawn triangle
     * counts the pixels it covers within the picture, one a row it spans, and
     * RENDER_SETUP_FILL; each band a bone reaches, RENDER_BAND_FILL, and RENDER_BAND_PASS_FILL
     * a triangle when they are set up as drawn. render() refuses a picture over it before
     * drawing any of it. */
    uint64_t max_fill;
    /* For tests and benchmarks; the picture is the same whatever they say. The rows drawn at
     * a time (0: as many as make RENDER_BAND_BYTES of samples, or RENDER_IMMEDIATE_BAND_BYTES
     * when triangles are set up as they are drawn, at least 8); and whether triangles are set
     * up as they are drawn, as those of a picture with more than RENDER_STORED_TRIANGLES are,
     * rather than once for every band. */
    uint32_t band_rows;
    bool draw_immediate;
};

/* What setting a triangle up costs, in pixels of fill (render_opts.max_fill): a one-pixel
 * triangle takes about as long as 30 pixels of a large one (contrib/bench/bench-fill). */
#define RENDER_SETUP_FILL 32u
/* What a band's visit to a bone costs, in pixels of fill (about 26 ns: 10,000 bones whose
 * rows span a 4096x4096 picture, in 512 bands, took 134 ms), and its pass over one of the
 * bone's triangles when they are set up as drawn (their vertices and a test of their rows:
 * about 50 ns, from 300,000 one-pixel triangles in 32 bands). */
#define RENDER_BAND_FILL 2u
#define RENDER_BAND_PASS_FILL 3u

/* A band's samples: about L2-sized, so that they stay in cache while its triangles draw. */
#define RENDER_BAND_BYTES (256u << 10)
/* The most triangles a picture keeps set up (176 bytes each); a picture with more sets them up
 * as they are drawn, in bands of RENDER_IMMEDIATE_BAND_BYTES of samples. */
#define RENDER_STORED_TRIANGLES 16384u
#define RENDER_IMMEDIATE_BAND_BYTES (8u << 20)

/* An RGBA8 picture plus the renderer's reusable scratch. Pixels are premultiplied after
 * render() unless opts.straight_alpha; image_unpremultiply() turns them straight. */
struct image {
    uint32_t width, height;
    uint8_t *rgba;
    size_t pitch; /* bytes from a row to the next: width * 4, or width * 4 + 1 with png_rows */
    /* scratch, owned */
    uint8_t *rgba_mem; /* rgba is here, or one byte in with png_rows */
    uint32_t *samples; /* per-sample premultiplied colour of a band of rows (render_opts) */
    int32_t *spans;    /* per row, the pixels drawn so far: 2*height */
    /* After render(): spans if every pixel outside them is transparent black (the
     * background is), else NULL; for png_opts.live. */
    const int32_t *live;
    /* After render(), even one that failed with ENG_ELIMIT: the picture's fill
     * (render_opts.max_fill), or the first count past the limit. */
    uint64_t fill;
    /* A sheet's (sheet_image) cells' width in pixels when it has more than one column, else 0:
     * for png_opts.cell_width. */
    uint32_t cell_width;
    size_t sample_cap, rgba_cap, span_cap;
    uint32_t *order;    /* bone draw order */
    uint64_t *keys;     /* sort keys for it */
    uint8_t *skip;      /* hidden or under a hidden bone */
    int32_t *rows;      /* per drawn bone, the pixel rows [lo, hi) its triangles may cover */
    uint32_t *shape_at; /* per drawn bone, its first shape in shapes; one more at the end */
    struct raster_shape *shapes; /* the drawn bones' triangles and quads, set up once a picture */
    size_t bone_cap, shape_cap;
};

/* Whether img's rows are PNG scanlines (render_opts.png_rows): png_opts.scanlines for it. */
static inline bool image_png_rows(const struct image *img)
{
    return img->pitch == (size_t)img->width * 4 + 1;
}

/* Defaults: 512x512, transparent, scale 1, position 0, default styles, 4 samples. */
void render_opts_default(struct render_opts *o);

void image_init(struct image *img);
void image_close(struct image *img);

/* Frees img's pixel buffers if together they take more than keep bytes (the picture is then
 * gone; the next render() allocates again), so that one large picture does not pin its
 * memory for as long as img lives. The per-bone scratch stays. */
void image_trim(struct image *img, size_t keep);

/* Renders p into img (resized as needed; the only allocations happen here when img is too
 * small). Returns 0, ENG_EINVAL (bad size or options), ENG_ELIMIT (img->fill is over
 * opts->max_fill) or ENG_ENOMEM; after an error img holds no picture (width and height 0).
 * Any thread. */
int render(const struct armature *arm, const struct pose *p, const struct render_opts *opts,
           struct image *img);

/* Premultiplied -> straight alpha in place (a = 0 pixels become 0,0,0,0). */
void image_unpremultiply(struct image *img);

/* Sizes img's per-bone scratch (order, keys, skip, rows, shape_at) for render_draw_order: 0 or
 * ENG_ENOMEM. */
int image_reserve_bones(struct image *img, uint32_t bone_count);

/* The draw order render() uses: visible textured bones, zindex ascending; within a zindex the
 * higher bone id first in 0.5 files, the lower first in 0.6/0.7 files. out, keys and skip
 * hold arm->bone_count entries each (keys and skip are scratch). Returns the number of bones
 * written to out. */
uint32_t render_draw_order(const struct armature *arm, const struct pose *p,
                           const struct render_opts *opts, uint32_t *out, uint64_t *keys,
                           uint8_t *skip);

/* Corners of a textured bone's quad in armature space: top-left, top-right, bottom-right,
 * bottom-left of the texture (atlas u,v from offset to offset + size in that order). The quad
 * is centred on the bone plus its pivot offset, turned by rot + pivot_rot and scaled by
 * scale * pivot_scale (SPEC.md section 4's Draw; the 0.5 rule for identity pivots). */
void render_quad_corners(const struct arm_bone *bone, const struct bone_out *o,
                         const struct arm_texture *t, struct vec2 pos[4]);

/* Where pivot_pos puts bone's drawing relative to the bone, in armature space:
 * (R(rot)(pivot_pos * size)) * scale. A mesh is drawn from its vertices moved by it. */
struct vec2 render_pivot_offset(const struct arm_bone *bone, const struct bone_out *o,
                                const struct arm_texture *t);

/* Where a texture lies in its atlas, in u, v from 0 to 1: the corners (u0, v0) and (u1, v1),
 * and the size (du, dv) that scales a mesh vertex's texture-relative uv. */
struct atlas_rect {
    double u0, v0, u1, v1, du, dv;
};
void render_atlas_rect(const struct armature *arm, const struct arm_texture *t,
                       struct atlas_rect *r);

/* A textured bone without a mesh is drawn as two triangles over render_quad_corners(). */
extern const uint32_t render_quad_indices[6];

/* skip[b] = 1 for every bone b that is hidden or under a hidden bone (by bone id, not draw
 * position), else 0. path is scratch with room for bone_count ids. */
void render_hidden_bones(const struct armature *arm, const struct pose *p, uint8_t *skip,
                         uint32_t *path);

/* Resolves a bone's texture through opts' styles: index into arm->textures or -1. */
int render_bone_texture(const struct armature *arm, const struct render_opts *opts, int tex_name);

/* Axis-aligned bounds, in armature space (y up), of everything render() would draw for p. */
struct bounds {
    double min_x, min_y, max_x, max_y;
    bool empty;
};
void render_bounds(const struct armature *arm, const struct pose *p, const struct render_opts *opts,
                   struct bounds *b);
void bounds_add(struct bounds *b, double x, double y);

/* Bounds of everything drawn while playing r's first animation through all its frames after
 * r's warm-up (the other animations keep pace), as the player's reference renders were
 * framed. Uses p as scratch (it is reset first). */
struct eval_request;
void render_anim_bounds(const struct armature *arm, struct pose *p, const struct eval_request *r,
                        const struct render_opts *opts, struct bounds *b);

/* Camera that fits bounds b (armature space) into fraction of the canvas, centred, the way
 * the player's reference renders were framed: scale rounded down to 3 decimals, position to
 * whole pixels. Sets opts->scale and opts->position. */
void render_fit(const struct bounds *b, double fraction, struct render_opts *opts);

#endif
