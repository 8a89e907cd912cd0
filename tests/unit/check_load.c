/* The .skf loader: a valid armature loads with the format's defaults, resolved indices, decoded
 * atlases and per-track keyframes; every malformed, hostile or unsupported file is refused with
 * the right code and a message naming the place; nothing leaks on any path (run the program under
 * valgrind with CK_FORK=no); and a few hundred mutated files never crash the loader.
 *
 * JSON in this file is written with single quotes and turned into real JSON by dq(), which
 * does not apply to the expected messages. */
#include <check.h>
#include <sys/stat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libdeflate.h>
#include <zip.h>

#include "engine/load.h"
#include "engine/request.h"
#include "engine/png_read.h"
#include "testhelp.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* ---- helpers ------------------------------------------------------------------------------ */

/* A copy of s with every ' turned into " (caller frees). */
static char *dq(const char *s)
{
    char *d = strdup(s);
    ck_assert_ptr_nonnull(d);
    return th_dequote(d);
}

/* The colour of the 64x64 PNG th_skf puts in every atlas (opaque: premultiplying keeps it). */
static const uint8_t th_fill[4] = {200, 100, 50, 255};

/* Loads bytes with limits; sets *arm NULL-checked against the result code. */
static int load_bytes(const void *buf, size_t len, const struct load_limits *lim,
                      struct armature **arm, struct eng_error *err)
{
    int dummy;
    *arm = (struct armature *)(void *)&dummy; /* must be reset by the loader */
    memset(err, 0, sizeof *err);
    int rc = armature_load(buf, len, lim, arm, err);
    if (rc == 0)
        ck_assert_ptr_nonnull(*arm);
    else
        ck_assert_msg(*arm == NULL, "failed load (%d) left *out set", rc);
    return rc;
}

/* th_skf(dq(json), atlases) loaded with lim. */
static int load_q(const char *json, int atlases, const struct load_limits *lim,
                  struct armature **arm, struct eng_error *err)
{
    char *j = dq(json);
    void *buf;
    size_t len;
    ck_assert_int_eq(th_skf(j, atlases, &buf, &len), 0);
    free(j);
    int rc = load_bytes(buf, len, lim, arm, err);
    free(buf);
    return rc;
}

/* Loads dq(json) and fails the test with the loader's message unless it loads. */
static struct armature *must_load(const char *json, int atlases)
{
    struct armature *arm;
    struct eng_error err;
    int rc = load_q(json, atlases, NULL, &arm, &err);
    ck_assert_msg(rc == 0, "load failed (%d): %s", rc, err.msg);
    return arm;
}

enum match { EXACT, PREFIX, CONTAINS };

static void check_msg(const struct eng_error *err, int rc, int code, const char *want,
                      enum match how)
{
    ck_assert_msg(rc == code, "expected code %d (%s), got %d: %s", code, eng_strerror(code), rc,
                  err->msg);
    ck_assert_int_eq(err->code, code);
    const char *w = want;
    bool ok = how == EXACT    ? strcmp(err->msg, w) == 0
              : how == PREFIX ? strncmp(err->msg, w, strlen(w)) == 0
                              : strstr(err->msg, w) != NULL;
    ck_assert_msg(ok, "message\n  got:  %s\n  want: %s%s", err->msg,
                  how == EXACT    ? ""
                  : how == PREFIX ? "... "
                                  : "(contains) ",
                  w);
}

/* Loads dq(json) with atlases and lim and checks the error. */
static void expect_err(const char *json, int atlases, const struct load_limits *lim, int code,
                       const char *want, enum match how)
{
    struct armature *arm;
    struct eng_error err;
    int rc = load_q(json, atlases, lim, &arm, &err);
    if (rc == 0)
        armature_free(arm);
    check_msg(&err, rc, code, want, how);
}

/* A .skf with armature.json = dq(json) and the given extra member. */
static void zip_with(const char *json, const char *name, const void *data, size_t dlen, void **out,
                     size_t *len)
{
    char *j = dq(json);
    const char *names[2] = {"armature.json", name};
    const void *datas[2] = {j, data};
    size_t lens[2] = {strlen(j), dlen};
    ck_assert_int_eq(th_zip(names, datas, lens, name ? 2 : 1, out, len), 0);
    free(j);
}

/* Deterministic pseudo-random numbers (LCG), independent of libc. */
static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* ---- a valid armature --------------------------------------------------------------------- */

static const char *const VALID =
    "{'version':'0.5.0','ik_root_ids':[],'img_format':'PNG','baked_ik':false,"
    "'atlases':[{'filename':'atlas0.png','size':{'x':64,'y':64}}],"
    "'bones':["
    " {'id':0,'name':'root','tex':'body'},"
    " {'id':1,'name':'arm','parent_id':0,'pos':{'x':3,'y':4},'rot':0.5,'scale':{'x':2,'y':3},"
    "  'zindex':2,'hidden':true,'tint':{'r':10,'g':20,'b':30,'a':40},'init_rot':0.25,"
    "  'tex':'hand'},"
    " {'id':2,'name':'plain','parent_id':1}"
    "],"
    "'animations':["
    " {'id':0,'name':'idle','fps':30,'keyframes':["
    "  {'frame':0,'bone_id':1,'element':'Rotation','value':0},"
    "  {'frame':0,'bone_id':0,'element':'PositionX','value':1},"
    "  {'frame':10,'bone_id':1,'element':'Rotation','value':1},"
    "  {'frame':20,'bone_id':0,'element':'PositionX','value':2},"
    "  {'frame':20,'bone_id':1,'element':'Rotation','value':2}]},"
    " {'id':1,'name':'walk','keyframes':[]}"
    "],"
    "'styles':["
    " {'id':0,'name':'default','textures':["
    "  {'name':'body','offset':{'x':0,'y':0},'size':{'x':32,'y':32},'atlas_idx':0},"
    "  {'name':'hand','offset':{'x':32,'y':0},'size':{'x':16,'y':16},'atlas_idx':0}]},"
    " {'id':1,'name':'alt','textures':["
    "  {'name':'hand','offset':{'x':32,'y':32},'size':{'x':32,'y':32},'atlas_idx':0}]},"
    " {'id':2,'name':'0','textures':[]}"
    "]}";

static void assert_fields_eq(const struct bone_fields *a, const struct bone_fields *b)
{
    ck_assert(a->pos.x == b->pos.x && a->pos.y == b->pos.y);
    ck_assert(a->scale.x == b->scale.x && a->scale.y == b->scale.y);
    ck_assert(a->rot == b->rot);
    for (int i = 0; i < 4; i++)
        ck_assert(a->tint[i] == b->tint[i]);
    ck_assert_int_eq(a->zindex, b->zindex);
    ck_assert_int_eq(a->tex, b->tex);
    ck_assert_int_eq(a->hidden, b->hidden);
    ck_assert_int_eq(a->ik_mode, b->ik_mode);
    ck_assert_int_eq(a->ik_constraint, b->ik_constraint);
}

/* The bytes of a valid .skf (VALID with one atlas), to damage. */
static void valid_skf(void **buf, size_t *len)
{
    char *j = dq(VALID);
    ck_assert_int_eq(th_skf(j, 1, buf, len), 0);
    free(j);
}

START_TEST(valid_counts)
{
    struct armature *arm = must_load(VALID, 1);
    ck_assert_str_eq(arm->version, "0.5.0");
    ck_assert(!arm->baked_ik);
    ck_assert_uint_eq(arm->bone_count, 3);
    ck_assert_uint_eq(arm->anim_count, 2);
    ck_assert_uint_eq(arm->style_count, 3);
    ck_assert_uint_eq(arm->atlas_count, 1);
    ck_assert_uint_eq(arm->texture_count, 3);
    ck_assert_uint_eq(arm->keyframe_count, 5);
    ck_assert_uint_eq(arm->track_count, 2);
    ck_assert_uint_eq(arm->ik_root_count, 0);
    ck_assert_uint_eq(arm->vert_count, 0);
    ck_assert_uint_eq(arm->index_count, 0);
    ck_assert_uint_eq(arm->bind_count, 0);
    ck_assert_uint_eq(arm->tex_name_count, 2); /* body, hand */
    ck_assert_int_eq(armature_find_bone(arm, "root"), 0);
    ck_assert_int_eq(armature_find_bone(arm, "arm"), 1);
    ck_assert_int_eq(armature_find_bone(arm, "plain"), 2);
    ck_assert_int_eq(armature_find_bone(arm, "nope"), -1);
    ck_assert_uint_gt(arm->mem_bytes, 64 * 64 * 4);
    armature_free(arm);
}
END_TEST

START_TEST(empty_object_loads)
{
    struct armature *arm = must_load("{}", 0);
    ck_assert_str_eq(arm->version, "");
    ck_assert_uint_eq(arm->bone_count, 0);
    ck_assert_uint_eq(arm->anim_count, 0);
    ck_assert_uint_eq(arm->style_count, 0);
    ck_assert_uint_eq(arm->atlas_count, 0);
    ck_assert_uint_eq(arm->keyframe_count, 0);
    armature_free(arm);
    /* explicit nulls take the defaults as well */
    arm = must_load("{'version':null,'bones':null,'animations':null,'styles':null,"
                    "'atlases':null,'ik_root_ids':null,'img_format':null}",
                    0);
    armature_free(arm);
}
END_TEST

START_TEST(bone_defaults)
{
    struct armature *arm = must_load(VALID, 1);
    const struct arm_bone *b = &arm->bones[0];
    ck_assert_str_eq(b->name, "root");
    ck_assert_int_eq(b->parent, -1);
    ck_assert(b->start.pos.x == 0 && b->start.pos.y == 0);
    ck_assert(b->start.scale.x == 1 && b->start.scale.y == 1);
    ck_assert(b->start.rot == 0);
    for (int i = 0; i < 4; i++)
        ck_assert(b->start.tint[i] == 255.0);
    ck_assert_int_eq(b->start.zindex, 0);
    ck_assert(!b->start.hidden);
    ck_assert_int_eq(b->start.ik_mode, IK_FABRIK);
    ck_assert_int_eq(b->start.ik_constraint, IKC_NONE);
    ck_assert_str_eq(armature_tex_name(arm, b->start.tex), "body");
    assert_fields_eq(&b->init, &b->start); /* init_* default to the field's value */
    ck_assert_int_eq(b->ik_target, -1);
    ck_assert_uint_eq(b->ik_len, 0);
    ck_assert_uint_eq(b->vert_len, 0);
    ck_assert_uint_eq(b->index_len, 0);
    ck_assert_uint_eq(b->bind_len, 0);
    ck_assert(!b->has_phys);
    ck_assert(b->phys.pos_damping == 0 && b->phys.sway == 0 && b->phys.global_rot == 0);

    const struct arm_bone *c = &arm->bones[2];
    ck_assert_str_eq(c->name, "plain");
    ck_assert_int_eq(c->parent, 1);
    ck_assert_int_eq(c->start.tex, -1);
    ck_assert_str_eq(armature_tex_name(arm, c->start.tex), "");
    assert_fields_eq(&c->init, &c->start);
    armature_free(arm);
}
END_TEST

START_TEST(bone_values_and_init_defaults)
{
    struct armature *arm = must_load(VALID, 1);
    const struct arm_bone *b = &arm->bones[1];
    ck_assert_str_eq(b->name, "arm");
    ck_assert_int_eq(b->parent, 0);
    ck_assert(b->start.pos.x == 3 && b->start.pos.y == 4);
    ck_assert(b->start.scale.x == 2 && b->start.scale.y == 3);
    ck_assert(b->start.rot == 0.5);
    ck_assert(b->start.tint[0] == 10 && b->start.tint[1] == 20 && b->start.tint[2] == 30 &&
              b->start.tint[3] == 40);
    ck_assert_int_eq(b->start.zindex, 2);
    ck_assert(b->start.hidden);
    ck_assert_str_eq(armature_tex_name(arm, b->start.tex), "hand");
    /* init_rot given; every other init_ field takes the field's value */
    ck_assert(b->init.rot == 0.25);
    struct bone_fields f = b->init;
    f.rot = b->start.rot;
    assert_fields_eq(&f, &b->start);
    armature_free(arm);
}
END_TEST

START_TEST(explicit_init_fields_and_physics)
{
    struct armature *arm =
        must_load("{'bones':[{'id':0,'pos':{'x':1,'y':2},'tex':'a','ik_mode':'Arc',"
                  "'ik_constraint':'Clockwise',"
                  "'init_pos':{'x':5},'init_scale':{'y':7},'init_tint':{'g':9},'init_zindex':-3,"
                  "'init_hidden':true,'init_tex':'b','init_ik_mode':'FABRIK',"
                  "'init_ik_constraint':'CounterClockwise','phys_pos_damping':4,'phys_sway':0.5,"
                  "'phys_global_pos':{'x':1,'y':1}}]}",
                  0);
    const struct arm_bone *b = &arm->bones[0];
    ck_assert(b->start.pos.x == 1 && b->start.pos.y == 2);
    /* a partial init vec2 takes the missing coordinate from the field */
    ck_assert(b->init.pos.x == 5 && b->init.pos.y == 2);
    ck_assert(b->init.scale.x == 1 && b->init.scale.y == 7);
    ck_assert(b->init.tint[0] == 255 && b->init.tint[1] == 9 && b->init.tint[3] == 255);
    ck_assert_int_eq(b->start.zindex, 0);
    ck_assert_int_eq(b->init.zindex, -3);
    ck_assert(!b->start.hidden && b->init.hidden);
    ck_assert_str_eq(armature_tex_name(arm, b->start.tex), "a");
    ck_assert_str_eq(armature_tex_name(arm, b->init.tex), "b");
    ck_assert_int_eq(b->start.ik_mode, IK_ARC);
    ck_assert_int_eq(b->init.ik_mode, IK_FABRIK);
    ck_assert_int_eq(b->start.ik_constraint, IKC_CLOCKWISE);
    ck_assert_int_eq(b->init.ik_constraint, IKC_COUNTER_CLOCKWISE);
    ck_assert(b->has_phys);
    ck_assert(arm->any_phys);
    ck_assert(b->phys.pos_damping == 4 && b->phys.sway == 0.5);
    ck_assert(b->phys.global_pos.x == 1 && b->phys.global_scale.x == 0);
    armature_free(arm);
}
END_TEST

/* ---- atlases ------------------------------------------------------------------------------- */

START_TEST(atlas_decoded_rgba)
{
    struct armature *arm = must_load(VALID, 1);
    const struct arm_atlas *at = &arm->atlases[0];
    ck_assert_str_eq(at->filename, "atlas0.png");
    ck_assert_uint_eq(at->width, 64);
    ck_assert_uint_eq(at->height, 64);
    ck_assert_ptr_nonnull(at->rgba);
    for (size_t i = 0; i < 64 * 64; i++)
        ck_assert_msg(!memcmp(at->rgba + i * 4, th_fill, 4), "pixel %zu is %u,%u,%u,%u", i,
                      at->rgba[i * 4], at->rgba[i * 4 + 1], at->rgba[i * 4 + 2],
                      at->rgba[i * 4 + 3]);
    armature_free(arm);
}
END_TEST

START_TEST(atlas_other_size_premultiplied)
{
    /* 24x10, translucent: the atlas is kept premultiplied, c' = (c * a + 127) / 255 */
    static const uint8_t px[4] = {10, 200, 30, 40};
    static const uint8_t pm[4] = {2, 31, 5, 40};
    void *png, *skf;
    size_t plen, slen;
    ck_assert_int_eq(th_png(24, 10, px, &png, &plen), 0);
    zip_with("{'atlases':[{'filename':'skin.png'}],'styles':[{'textures':[{'name':'t',"
             "'offset':{'x':4,'y':2},'size':{'x':20,'y':8}}]}]}",
             "skin.png", png, plen, &skf, &slen);
    struct armature *arm;
    struct eng_error err;
    int rc = load_bytes(skf, slen, NULL, &arm, &err);
    ck_assert_msg(rc == 0, "%s", err.msg);
    const struct arm_atlas *at = &arm->atlases[0];
    ck_assert_str_eq(at->filename, "skin.png");
    ck_assert_uint_eq(at->width, 24);
    ck_assert_uint_eq(at->height, 10);
    for (size_t i = 0; i < 24 * 10; i++)
        ck_assert_msg(!memcmp(at->rgba + i * 4, pm, 4), "pixel %zu is %u,%u,%u,%u", i,
                      at->rgba[i * 4], at->rgba[i * 4 + 1], at->rgba[i * 4 + 2],
                      at->rgba[i * 4 + 3]);
    /* the texture defaults: atlas 0, name interned */
    ck_assert_int_eq(arm->textures[0].atlas, 0);
    ck_assert_str_eq(arm->textures[0].name, "t");
    ck_assert_str_eq(armature_tex_name(arm, arm->textures[0].name_idx), "t");
    ck_assert_int_eq(arm->styles[0].id, 0);
    ck_assert_str_eq(arm->styles[0].name, "");
    armature_free(arm);
    free(png);
    free(skf);
}
END_TEST

static void chunk(uint8_t *png, size_t *at, const char *type, const uint8_t *data, size_t n);

/* The PNG again with a private ancillary chunk after IHDR: libpng skips it and skeld's own
 * reader declines it, so libpng decodes the atlas. */
static void *with_private_chunk(const void *png, size_t len, size_t *out_len)
{
    static const uint8_t note[3] = {1, 2, 3};
    uint8_t *out = malloc(len + 12 + sizeof note);
    ck_assert_ptr_nonnull(out);
    size_t at = 8 + 25; /* the signature and IHDR */
    memcpy(out, png, at);
    chunk(out, &at, "skLd", note, sizeof note);
    memcpy(out + at, (const uint8_t *)png + 8 + 25, len - 8 - 25);
    *out_len = at + len - 8 - 25;
    return out;
}

/* The loaded atlas at holds px (w x h, straight) premultiplied as c' = (c * a + 127) / 255,
 * and a 4x4 block is marked clear exactly when it and its right, lower and lower-right
 * neighbours (those in the atlas: 8x8 texels at most) are all transparent. Returns how many
 * blocks are marked. */
static unsigned assert_premultiplied_and_marked(const uint8_t *px, uint32_t w, uint32_t h,
                                                const struct arm_atlas *at, int by_libpng)
{
    for (size_t i = 0; i < (size_t)w * h; i++) {
        unsigned a = px[i * 4 + 3];
        for (int c = 0; c < 4; c++) {
            unsigned want = c == 3 ? a : (px[i * 4 + c] * a + 127) / 255;
            ck_assert_msg(at->rgba[i * 4 + c] == want,
                          "libpng %d: pixel %zu channel %d: %u, want %u", by_libpng, i, c,
                          at->rgba[i * 4 + c], want);
        }
    }
    unsigned clear_blocks = 0;
    for (uint32_t by = 0; by < (h + 3) / 4; by++)
        for (uint32_t bx = 0; bx < (w + 3) / 4; bx++) {
            bool empty = true;
            for (uint32_t y = by * 4; y < by * 4 + 8 && y < h; y++)
                for (uint32_t x = bx * 4; x < bx * 4 + 8 && x < w; x++)
                    empty &= px[((size_t)y * w + x) * 4 + 3] == 0;
            bool marked = at->clear[by * at->clear_stride + bx / 8] >> (bx % 8) & 1;
            ck_assert_msg(marked == empty, "libpng %d: block %u,%u marked %d, empty %d", by_libpng,
                          bx, by, marked, empty);
            clear_blocks += empty;
        }
    return clear_blocks;
}

/* px (w x h) as an atlas loaded by skeld's reader (each row as it is decoded) and by libpng
 * (the whole picture, then each row), checked by assert_premultiplied_and_marked both times:
 * how many blocks are marked clear. */
static unsigned load_and_check_atlas(const uint8_t *px, uint32_t w, uint32_t h)
{
    void *png, *skf;
    size_t plen, slen;
    uint32_t pw, ph;
    unsigned clear[2];
    ck_assert_int_eq(th_png_rgba(w, h, px, &png, &plen), 0);
    ck_assert(png_read_probe(png, plen, &pw, &ph));
    char json[256];
    snprintf(json, sizeof json,
             "{'atlases':[{'filename':'a.png'}],'styles':[{'textures':[{'name':'t',"
             "'offset':{'x':0,'y':0},'size':{'x':%u,'y':%u}}]}]}",
             w, h);
    for (int by_libpng = 0; by_libpng < 2; by_libpng++) {
        if (by_libpng) {
            void *other = with_private_chunk(png, plen, &plen);
            free(png);
            png = other;
            ck_assert(!png_read_probe(png, plen, &pw, &ph));
        }
        zip_with(json, "a.png", png, plen, &skf, &slen);
        struct armature *arm;
        struct eng_error err;
        int rc = load_bytes(skf, slen, NULL, &arm, &err);
        ck_assert_msg(rc == 0, "%s", err.msg);
        clear[by_libpng] = assert_premultiplied_and_marked(px, w, h, &arm->atlases[0], by_libpng);
        armature_free(arm);
        free(skf);
    }
    free(png);
    ck_assert_uint_eq(clear[0], clear[1]);
    return clear[0];
}

/* A pixel of some colour (from v) with the given alpha. */
static void put_pixel(uint8_t *p, unsigned v, uint8_t alpha)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(255 - v);
    p[2] = (uint8_t)(v * 7);
    p[3] = alpha;
}

/* An atlas of every kind of pixel (transparent, opaque, translucent) in runs that straddle
 * the loader's groups of four, on a width that is no multiple of 4 (load_and_check_atlas). */
START_TEST(atlas_premultiply_and_clear_blocks)
{
    enum { W = 27, H = 13 };
    uint8_t *px = malloc(W * H * 4);
    ck_assert_ptr_nonnull(px);
    for (uint32_t y = 0; y < H; y++)
        for (uint32_t x = 0; x < W; x++) {
            unsigned kind = (x / 3 + y / 5) % 4, v = (x * 37 + y * 91) & 255;
            put_pixel(px + ((size_t)y * W + x) * 4, v,
                      kind == 0   ? 0
                      : kind == 1 ? 255
                                  : (uint8_t)(1 + v % 254));
        }
    for (uint32_t y = 4; y < 12; y++) /* two whole block rows empty but for one pixel */
        for (uint32_t x = 0; x < W; x++)
            px[((size_t)y * W + x) * 4 + 3] = x == 21 && y == 6 ? 9 : 0;
    /* The upper empty row of blocks but the two that reach the pixel at x = 21 (the last
     * block, at the atlas's right edge, among them), and the last block above it, whose
     * pixels are a kind-0 column; the lower empty row reaches row 12. */
    ck_assert_uint_eq(load_and_check_atlas(px, W, H), 6);
    free(px);
}
END_TEST

/* Runs of 16 pixels, the loader's widest group, each all transparent (with colour), all
 * opaque, all translucent or mixed through a whole row of blocks, then a tail of 5
 * (load_and_check_atlas). */
START_TEST(atlas_premultiply_sixteen_at_once)
{
    enum { W = 16 * 4 + 5, H = 10 };
    uint8_t *px = malloc(W * H * 4);
    ck_assert_ptr_nonnull(px);
    for (uint32_t y = 0; y < H; y++)
        for (uint32_t x = 0; x < W; x++) {
            unsigned kind = (x / 16 + y / 4) % 4, v = (x * 53 + y * 29) & 255;
            put_pixel(px + ((size_t)y * W + x) * 4, v,
                      kind == 0   ? 0
                      : kind == 1 ? 255
                      : kind == 2 ? (uint8_t)(1 + v % 254)
                                  : (uint8_t)(x % 3 == 0   ? 0
                                              : x % 3 == 1 ? 255
                                                           : 128));
        }
    for (uint32_t x = 0; x < W; x++) /* rows 8 and 9 empty: their blocks may be marked */
        px[((size_t)8 * W + x) * 4 + 3] = px[((size_t)9 * W + x) * 4 + 3] = 0;
    ck_assert_uint_gt(load_and_check_atlas(px, W, H), 0);
    free(px);
}
END_TEST

/* ---- the atlas reader (png_read.c) ------------------------------------------------------ */

static void put_be32(uint8_t *p, uint32_t v)
{
    for (int k = 0; k < 4; k++)
        p[k] = (uint8_t)(v >> (24 - 8 * k));
}

/* Appends a chunk (length, type, data, CRC) at *at. */
static void chunk(uint8_t *png, size_t *at, const char *type, const uint8_t *data, size_t n)
{
    put_be32(png + *at, (uint32_t)n);
    memcpy(png + *at + 4, type, 4);
    if (n)
        memcpy(png + *at + 8, data, n);
    put_be32(png + *at + 8 + n, (uint32_t)libdeflate_crc32(0, png + *at + 4, n + 4));
    *at += 12 + n;
}

/* The spec's predictor, written out here apart from the reader's. */
static int paeth_ref(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return pa <= pb && pa <= pc ? a : (pb <= pc ? b : c);
}

/* An 8-bit RGBA PNG of px: row y filtered with filter[y % 5] (a value over 4 is written as
 * is, an invalid filter), the stream in IDAT chunks of split bytes, extra (a chunk type)
 * inserted after IHDR when not NULL. Returns the length; *out is malloc'd. */
static size_t make_png(const uint8_t *px, uint32_t w, uint32_t h, const uint8_t filter[5],
                       size_t split, const char *extra, uint8_t **out)
{
    size_t row = (size_t)w * 4, raw_len = (row + 1) * h;
    uint8_t *raw = malloc(raw_len);
    ck_assert_ptr_nonnull(raw);
    for (uint32_t y = 0; y < h; y++) {
        uint8_t f = filter[y % 5], *d = raw + y * (row + 1);
        const uint8_t *cur = px + y * row, *up = y ? cur - row : NULL;
        d[0] = f;
        for (size_t i = 0; i < row; i++) {
            int a = i >= 4 ? cur[i - 4] : 0, b = up ? up[i] : 0, c = up && i >= 4 ? up[i - 4] : 0;
            int pred = f == 1   ? a
                       : f == 2 ? b
                       : f == 3 ? (a + b) / 2
                       : f == 4 ? paeth_ref(a, b, c)
                                : 0;
            d[1 + i] = (uint8_t)(cur[i] - pred);
        }
    }
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(6);
    size_t cap = libdeflate_zlib_compress_bound(c, raw_len);
    uint8_t *z = malloc(cap), *png = malloc(cap + 4096 + cap / (split ? split : 1) * 12);
    ck_assert(c && z && png);
    size_t zlen = libdeflate_zlib_compress(c, raw, raw_len, z, cap), at = 8;
    ck_assert_uint_gt(zlen, 0);
    memcpy(png, "\x89PNG\r\n\x1a\n", 8);
    uint8_t ihdr[13];
    put_be32(ihdr, w);
    put_be32(ihdr + 4, h);
    memcpy(ihdr + 8, "\x08\x06\x00\x00\x00", 5);
    chunk(png, &at, "IHDR", ihdr, 13);
    if (extra) {
        static const uint8_t gama[4] = {0, 0, 0xb1, 0x8f};
        chunk(png, &at, extra, gama, 4);
    }
    for (size_t off = 0; off < zlen; off += split)
        chunk(png, &at, "IDAT", z + off, zlen - off < split ? zlen - off : split);
    chunk(png, &at, "IEND", NULL, 0);
    libdeflate_free_compressor(c);
    free(z);
    free(raw);
    *out = png;
    return at;
}

/* A 16-bit RGBA PNG, no colour chunks, every pixel c (8-bit values, each stored as v * 257:
 * the same colour at 16 bits). Returns the length; *out is malloc'd. */
static size_t make_png16(const uint8_t c[4], uint32_t w, uint32_t h, uint8_t **out)
{
    size_t row = (size_t)w * 8, raw_len = (row + 1) * h;
    uint8_t *raw = calloc(1, raw_len);
    ck_assert_ptr_nonnull(raw);
    for (uint32_t y = 0; y < h; y++)
        for (size_t i = 0; i < row; i++) /* filter 0; big-endian samples, both bytes v */
            raw[y * (row + 1) + 1 + i] = c[i / 2 % 4];
    struct libdeflate_compressor *z = libdeflate_alloc_compressor(6);
    size_t cap = libdeflate_zlib_compress_bound(z, raw_len), at = 8;
    uint8_t *zs = malloc(cap), *png = malloc(cap + 64);
    ck_assert(z && zs && png);
    size_t zlen = libdeflate_zlib_compress(z, raw, raw_len, zs, cap);
    memcpy(png, "\x89PNG\r\n\x1a\n", 8);
    uint8_t ihdr[13];
    put_be32(ihdr, w);
    put_be32(ihdr + 4, h);
    memcpy(ihdr + 8, "\x10\x06\x00\x00\x00", 5);
    chunk(png, &at, "IHDR", ihdr, 13);
    chunk(png, &at, "IDAT", zs, zlen);
    chunk(png, &at, "IEND", NULL, 0);
    libdeflate_free_compressor(z);
    free(zs);
    free(raw);
    *out = png;
    return at;
}

/* A 16-bit atlas is read as sRGB, as a browser and the editor read it: the colour of the same
 * atlas at 8 bits, not libpng's linear-light reading, which brightened (60,39,100) to
 * (132,109,167). */
START_TEST(atlas_16bit_is_srgb)
{
    static const uint8_t c[4] = {60, 39, 100, 255};
    uint8_t *png;
    size_t len = make_png16(c, 3, 2, &png);
    void *skf;
    size_t slen;
    zip_with("{'atlases':[{'filename':'a.png'}]}", "a.png", png, len, &skf, &slen);
    struct armature *arm;
    struct eng_error err;
    int rc = load_bytes(skf, slen, NULL, &arm, &err);
    ck_assert_msg(rc == 0, "%s", err.msg);
    const struct arm_atlas *at = &arm->atlases[0];
    ck_assert_uint_eq(at->width, 3);
    for (size_t i = 0; i < 3 * 2; i++)
        ck_assert_msg(!memcmp(at->rgba + i * 4, c, 4), "pixel %zu is %u,%u,%u,%u", i,
                      at->rgba[i * 4], at->rgba[i * 4 + 1], at->rgba[i * 4 + 2],
                      at->rgba[i * 4 + 3]);
    armature_free(arm);
    free(png);
    free(skf);
}
END_TEST

/* Pixels with runs, edges and noise, so that every predictor wins somewhere. */
static uint8_t *test_pixels(uint32_t w, uint32_t h)
{
    uint8_t *px = malloc((size_t)w * h * 4);
    ck_assert_ptr_nonnull(px);
    uint32_t s = 2463534242u;
    for (size_t i = 0; i < (size_t)w * h * 4; i++) {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        px[i] = (s & 3) ? (uint8_t)(i / 4 % w * 7 + i / 4 / w * 3 + i % 4 * 40) : (uint8_t)(s >> 8);
    }
    return px;
}

/* Pixels like an atlas's: mostly empty or flat colour (blocks of 9x4 of one colour each),
 * with a few rectangles of test_pixels and single pixels, some with colour but zero alpha, at
 * every offset from a 4-pixel group's start, so that the readers' runs of empty space and
 * flat colour start and stop everywhere; every fourth row repeats the one above. */
static uint8_t *sparse_pixels(uint32_t w, uint32_t h)
{
    uint8_t *px = test_pixels(w, h);
    uint32_t s = 88172645u;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            bool in_rect = (x / 5 + y / 3) % 4 == 1 && (x + y) % 11 < 6, lone = s % 37 == 0;
            bool in_flat = (x / 9 + y / 4) % 3 == 2; /* flat colour, one per block of 9x4 */
            uint8_t *p = px + ((size_t)y * w + x) * 4;
            if (in_flat && !in_rect && !lone) {
                uint32_t c = (x / 9 * 2654435761u) ^ (y / 4 * 40503u);
                memcpy(p, &c, 4);
            } else if (!in_rect && !lone) {
                memset(p, 0, 4);
            } else if (lone && s % 3 == 0)
                p[3] = 0; /* colour with no alpha: decoded as it is, as libpng does */
        }
    for (uint32_t y = 3; y < h; y += 4) /* rows as the one above: Paeth's zeros over colour */
        memcpy(px + (size_t)y * w * 4, px + (size_t)(y - 1) * w * 4, (size_t)w * 4);
    return px;
}

/* Both readers give the pixels back; the fast one without libpng. */
static void assert_reads_back(const uint8_t *png, size_t len, const uint8_t *px, uint32_t w,
                              uint32_t h, const char *what)
{
    uint32_t pw, ph;
    ck_assert_msg(png_read_probe(png, len, &pw, &ph), "%s: not taken", what);
    ck_assert_uint_eq(pw, w);
    ck_assert_uint_eq(ph, h);
    uint8_t *fast = malloc((size_t)w * h * 4 + h), *lib;
    ck_assert_ptr_nonnull(fast);
    ck_assert_msg(png_read_rgba8(png, len, w, h, fast), "%s: not decoded", what);
    ck_assert_int_eq(th_png_decode(png, len, &pw, &ph, &lib), 0);
    for (size_t i = 0; i < (size_t)w * h * 4; i++) {
        ck_assert_msg(fast[i] == px[i], "%s: byte %zu is %u, want %u", what, i, fast[i], px[i]);
        ck_assert_msg(lib[i] == px[i], "%s: libpng byte %zu is %u, want %u", what, i, lib[i],
                      px[i]);
    }
    free(fast);
    free(lib);
}

START_TEST(atlas_reader_matches_libpng)
{
    static const uint32_t sizes[][2] = {{1, 1},   {1, 7},   {3, 5},   {17, 9},
                                        {64, 33}, {257, 4}, {130, 41}};
    static const uint8_t orders[][5] = {
        {0, 1, 2, 3, 4}, {4, 4, 4, 4, 4}, {3, 1, 4, 2, 0}, {2, 2, 2, 2, 2}, {1, 3, 1, 3, 1}};
    for (size_t k = 0; k < 2 * sizeof sizes / sizeof sizes[0]; k++) {
        bool sparse = k % 2;
        uint32_t w = sizes[k / 2][0], h = sizes[k / 2][1];
        uint8_t *px = sparse ? sparse_pixels(w, h) : test_pixels(w, h);
        for (size_t f = 0; f < sizeof orders / sizeof orders[0]; f++) {
            char what[64];
            snprintf(what, sizeof what, "%ux%u%s, filters %zu", w, h, sparse ? " sparse" : "", f);
            uint8_t *png;
            size_t len = make_png(px, w, h, orders[f], f == 2 ? 7 : 1 << 20, NULL, &png);
            assert_reads_back(png, len, px, w, h, what);
            free(png);
        }
        free(px);
    }
}
END_TEST

/* What the fast reader does not take goes to libpng, and what is broken fails there. */
START_TEST(atlas_reader_declines)
{
    static const uint8_t all[5] = {0, 1, 2, 3, 4}, bad[5] = {0, 1, 5, 3, 4};
    uint32_t w = 9, h = 6, pw, ph;
    uint8_t *px = test_pixels(w, h), *png, *out = malloc(w * h * 4 + h);
    ck_assert_ptr_nonnull(out);
    size_t len = make_png(px, w, h, all, 1 << 20, "gAMA", &png);
    ck_assert_msg(!png_read_probe(png, len, &pw, &ph), "a gAMA chunk is libpng's to apply");
    free(png);
    len = make_png(px, w, h, all, 16, NULL, &png);
    ck_assert(png_read_probe(png, len, &pw, &ph));
    ck_assert(!png_read_probe(png, len - 20, &pw, &ph)); /* cut short: no IEND */
    png[40] ^= 1; /* inside the first IDAT: its CRC no longer matches */
    ck_assert(!png_read_probe(png, len, &pw, &ph));
    png[40] ^= 1;
    png[25] = 16; /* IHDR: 16 bits per channel (and its CRC wrong) */
    ck_assert(!png_read_probe(png, len, &pw, &ph));
    free(png);
    len = make_png(px, w, h, bad, 1 << 20, NULL, &png);
    ck_assert(png_read_probe(png, len, &pw, &ph));   /* the chunks are fine... */
    ck_assert(!png_read_rgba8(png, len, w, h, out)); /* ...a row's filter is not */
    void *skf;
    size_t slen;
    zip_with("{'atlases':[{'filename':'a.png'}],'styles':[{'textures':[{'name':'t',"
             "'offset':{'x':0,'y':0},'size':{'x':9,'y':6}}]}]}",
             "a.png", png, len, &skf, &slen);
    struct armature *arm;
    struct eng_error err;
    ck_assert_int_eq(load_bytes(skf, slen, NULL, &arm, &err), ENG_EBADFILE);
    ck_assert_msg(strstr(err.msg, "a.png") != NULL, "%s", err.msg);
    free(skf);
    free(png);
    free(out);
    free(px);
}
END_TEST

/* The project's own sample atlases and the third-party ones under ../shared (when there):
 * the fast reader gives libpng's bytes. */
static int atlases_of(const char *path)
{
    zip_t *za = zip_open(path, ZIP_RDONLY, NULL);
    if (!za)
        return 0;
    int n = 0;
    for (zip_int64_t i = 0; i < zip_get_num_entries(za, 0); i++) {
        const char *name = zip_get_name(za, (zip_uint64_t)i, 0);
        zip_stat_t st;
        if (!name || strncmp(name, "atlas", 5) || zip_stat_index(za, (zip_uint64_t)i, 0, &st))
            continue;
        uint8_t *png = malloc(st.size), *lib, *fast;
        zip_file_t *f = zip_fopen_index(za, (zip_uint64_t)i, 0);
        ck_assert(png && f && zip_fread(f, png, st.size) == (zip_int64_t)st.size);
        zip_fclose(f);
        uint32_t w, h, lw, lh;
        if (png_read_probe(png, st.size, &w, &h)) {
            ck_assert_ptr_nonnull(fast = malloc((size_t)w * h * 4 + h));
            ck_assert_msg(png_read_rgba8(png, st.size, w, h, fast), "%s %s", path, name);
            ck_assert_int_eq(th_png_decode(png, st.size, &lw, &lh, &lib), 0);
            ck_assert_msg(!memcmp(fast, lib, (size_t)w * h * 4), "%s %s: differs from libpng", path,
                          name);
            free(lib);
            free(fast);
            n++;
        }
        free(png);
    }
    zip_close(za);
    return n;
}

START_TEST(atlas_reader_on_real_atlases)
{
    const char *samples = th_samples_dir(), *shared = th_shared_dir();
    char path[2048];
    int n = 0;
    static const char *const own[] = {"robot.skf", "critter.skf"};
    ck_assert_msg(samples != NULL, "SKELD_SAMPLES is not a directory (build the samples)");
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", samples, own[i]);
        n += atlases_of(path);
    }
    ck_assert_int_ge(n, 4);
    if (!shared)
        return;
    snprintf(path, sizeof path, "%s/conformance/skellington.skf", shared);
    ck_assert_int_eq(atlases_of(path), 1);
}
END_TEST

START_TEST(atlas_skip_pixels)
{
    struct load_limits lim;
    memset(&lim, 0, sizeof lim);
    lim.skip_atlas_pixels = true;
    struct armature *arm;
    struct eng_error err;
    int rc = load_q(VALID, 1, &lim, &arm, &err);
    ck_assert_msg(rc == 0, "%s", err.msg);
    ck_assert_uint_eq(arm->atlases[0].width, 64);
    ck_assert_uint_eq(arm->atlases[0].height, 64);
    ck_assert_ptr_null(arm->atlases[0].rgba);
    armature_free(arm);
}
END_TEST

START_TEST(load_file_roundtrip)
{
    void *buf;
    size_t len;
    valid_skf(&buf, &len);
    char path[] = "/tmp/check_load_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
    close(fd);
    free(buf);

    struct armature *arm = NULL;
    struct eng_error err = {0};
    int rc = armature_load_file(path, NULL, &arm, &err);
    ck_assert_msg(rc == 0, "%s", err.msg);
    ck_assert_uint_eq(arm->bone_count, 3);
    armature_free(arm);

    /* the file itself counts against max_uncompressed */
    struct load_limits lim;
    memset(&lim, 0, sizeof lim);
    lim.max_uncompressed = 100;
    arm = (struct armature *)(void *)&rc;
    rc = armature_load_file(path, &lim, &arm, &err);
    ck_assert_ptr_null(arm);
    char want[256];
    snprintf(want, sizeof want, "%s: file larger than 100 bytes", path);
    check_msg(&err, rc, ENG_ELIMIT, want, EXACT);
    unlink(path);
}
END_TEST

/* ---- lookups ------------------------------------------------------------------------------- */

START_TEST(texture_resolution_by_style_priority)
{
    struct armature *arm = must_load(VALID, 1);
    int hand = arm->bones[1].start.tex, body = arm->bones[0].start.tex;
    ck_assert_int_ge(hand, 0);
    ck_assert_int_ge(body, 0);
    ck_assert_int_ne(hand, body);

    /* NULL = all styles in file order: style 0 has both */
    int t = armature_resolve_texture(arm, hand, NULL, 0);
    ck_assert_int_eq(t, 1);
    ck_assert_str_eq(arm->textures[t].name, "hand");
    ck_assert(arm->textures[t].offset.x == 32 && arm->textures[t].offset.y == 0);
    ck_assert(arm->textures[t].size.x == 16 && arm->textures[t].size.y == 16);
    ck_assert_int_eq(armature_resolve_texture(arm, body, NULL, 0), 0);

    /* "alt" first: its hand wins; body falls through to "default" */
    const int alt_first[2] = {1, 0};
    t = armature_resolve_texture(arm, hand, alt_first, 2);
    ck_assert_int_eq(t, 2);
    ck_assert(arm->textures[t].offset.x == 32 && arm->textures[t].offset.y == 32);
    ck_assert_int_eq(armature_resolve_texture(arm, body, alt_first, 2), 0);

    /* styles that lack the texture */
    const int only_alt[1] = {1}, only_empty[1] = {2};
    ck_assert_int_eq(armature_resolve_texture(arm, body, only_alt, 1), -1);
    ck_assert_int_eq(armature_resolve_texture(arm, hand, only_empty, 1), -1);
    ck_assert_int_eq(armature_resolve_texture(arm, hand, alt_first, 0), -1);
    /* no texture name */
    ck_assert_int_eq(armature_resolve_texture(arm, -1, NULL, 0), -1);
    ck_assert_int_eq(armature_resolve_texture(arm, arm->bones[2].start.tex, NULL, 0), -1);

    /* the style table itself */
    ck_assert_uint_eq(arm->styles[0].tex_off, 0);
    ck_assert_uint_eq(arm->styles[0].tex_len, 2);
    ck_assert_uint_eq(arm->styles[1].tex_off, 2);
    ck_assert_uint_eq(arm->styles[1].tex_len, 1);
    ck_assert_uint_eq(arm->styles[2].tex_len, 0);
    ck_assert_int_eq(arm->styles[1].id, 1);
    armature_free(arm);
}
END_TEST

START_TEST(texture_first_of_duplicate_names_wins)
{
    struct armature *arm = must_load(
        "{'atlases':[{'filename':'atlas0.png'}],'bones':[{'tex':'x'}],'styles':[{'textures':["
        "{'name':'y','size':{'x':1,'y':1}},{'name':'x','offset':{'x':1},'size':{'x':1,'y':1}},"
        "{'name':'x','offset':{'x':2},'size':{'x':1,'y':1}}]}]}",
        1);
    int t = armature_resolve_texture(arm, arm->bones[0].start.tex, NULL, 0);
    ck_assert_int_eq(t, 1);
    ck_assert(arm->textures[t].offset.x == 1);
    armature_free(arm);
}
END_TEST

START_TEST(many_texture_names)
{
    /* enough distinct names to grow the intern table several times */
    enum { N = 300 };
    size_t cap = 200 + N * 96;
    char *json = malloc(cap), *p = json;
    ck_assert_ptr_nonnull(json);
    p += sprintf(p, "{'atlases':[{'filename':'atlas0.png'}],'bones':[");
    for (int i = 0; i < N; i++)
        p += sprintf(p, "%s{'id':%d,'tex':'tex%d'}", i ? "," : "", i, N - 1 - i);
    p += sprintf(p, "],'styles':[{'textures':[");
    for (int i = 0; i < N; i++)
        p += sprintf(p, "%s{'name':'tex%d','offset':{'x':%d},'size':{'x':1,'y':1}}", i ? "," : "",
                     i, i % 64);
    p += sprintf(p, "]}]}");
    ck_assert_uint_lt((size_t)(p - json), cap);
    struct armature *arm = must_load(json, 1);
    free(json);
    ck_assert_uint_eq(arm->tex_name_count, N);
    for (int i = 0; i < N; i++) {
        int t = armature_resolve_texture(arm, arm->bones[i].start.tex, NULL, 0);
        ck_assert_int_eq(t, N - 1 - i);
        ck_assert_str_eq(arm->textures[t].name, armature_tex_name(arm, arm->bones[i].start.tex));
    }
    armature_free(arm);
}
END_TEST

START_TEST(find_anim_and_style)
{
    struct armature *arm = must_load(VALID, 1);
    ck_assert_int_eq(armature_find_anim(arm, "idle"), 0);
    ck_assert_int_eq(armature_find_anim(arm, "walk"), 1);
    ck_assert_int_eq(armature_find_anim(arm, "0"), 0);
    ck_assert_int_eq(armature_find_anim(arm, "1"), 1);
    ck_assert_int_eq(armature_find_anim(arm, "2"), -1);
    ck_assert_int_eq(armature_find_anim(arm, "-1"), -1);
    ck_assert_int_eq(armature_find_anim(arm, "1x"), -1);
    ck_assert_int_eq(armature_find_anim(arm, ""), -1);
    ck_assert_int_eq(armature_find_anim(arm, "run"), -1);

    ck_assert_int_eq(armature_find_style(arm, "default"), 0);
    ck_assert_int_eq(armature_find_style(arm, "alt"), 1);
    ck_assert_int_eq(armature_find_style(arm, "0"), 2); /* a name wins over an index */
    ck_assert_int_eq(armature_find_style(arm, "1"), 1);
    ck_assert_int_eq(armature_find_style(arm, "2"), 2);
    ck_assert_int_eq(armature_find_style(arm, "3"), -1);
    ck_assert_int_eq(armature_find_style(arm, "Default"), -1);
    ck_assert_int_eq(armature_find_style(arm, ""), -1);
    ck_assert_int_eq(armature_find_style(arm, "#0"), 0); /* "#N" is an index, never a name */
    ck_assert_int_eq(armature_find_style(arm, "#2"), 2);
    ck_assert_int_eq(armature_find_style(arm, "#3"), -1);
    armature_free(arm);
}
END_TEST

/* Names that collide: "#N" reaches every item, whatever the others are called. */
/* A name quoted in a message keeps its characters when they are UTF-8 that shows as itself
 * (an animation named in Japanese reads as such); control characters, bytes that are no
 * UTF-8 (one '?' each) and marks that reorder text (one '?' a character) do not pass, and a
 * long name is cut between characters. */
START_TEST(quote_keeps_utf8_not_controls)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"Walk", "Walk"},
        {"\xe6\xad\xa9\xe3\x81\x8f", "\xe6\xad\xa9\xe3\x81\x8f"}, /* 歩く */
        {"caf\xc3\xa9", "caf\xc3\xa9"},
        {"\xf0\x9f\x98\x80!", "\xf0\x9f\x98\x80!"}, /* an emoji: four bytes */
        {"a\x1b[2Jb\x7f", "a?[2Jb?"},
        {"x\xc2\x9by", "x?y"}, /* C1 CSI */
        {"\xe2\x80\xae"
         "evil",
         "?evil"}, /* right-to-left override */
        {"\xef\xbb\xbf"
         "BOM",
         "?BOM"},
        {"\xff\xfe", "??"},
        {"\xc0\xaf", "??"},           /* an overlong '/' */
        {"\xed\xa0\x80", "???"},      /* a surrogate */
        {"\xf4\x90\x80\x80", "????"}, /* past U+10FFFF */
        {"a\xe3\x81", "a??"},         /* cut short */
    };
    char q[ENG_QUOTE_MAX];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_str_eq(eng_quote(cases[i].in, q), cases[i].out);
    char long_name[64 * 3 + 1] = "";
    for (int i = 0; i < 64; i++)
        strcat(long_name, "\xe3\x81\x82"); /* あ */
    eng_quote(long_name, q);
    size_t n = strlen(q);
    ck_assert_uint_lt(n, ENG_QUOTE_MAX);
    ck_assert_str_eq(q + n - 3, "...");
    ck_assert_uint_eq((n - 3) % 3, 0); /* whole characters only */
    ck_assert_int_eq(memcmp(q, long_name, n - 3), 0);
}
END_TEST

START_TEST(index_form_reaches_every_item)
{
    struct armature *arm = must_load("{'bones':[{'id':0}],'animations':[{'name':'1'},"
                                     "{'name':'#0'},{'name':'a,b'},{'name':'1'}],"
                                     "'styles':[{'name':'#1'},{'name':'0'}]}",
                                     0);
    ck_assert_int_eq(armature_find_anim(arm, "1"), 0);  /* the first of that name */
    ck_assert_int_eq(armature_find_anim(arm, "#0"), 0); /* an index, not the name "#0" */
    ck_assert_int_eq(armature_find_anim(arm, "#1"), 1);
    ck_assert_int_eq(armature_find_anim(arm, "#3"), 3); /* the second "1" */
    ck_assert_int_eq(armature_find_anim(arm, "#03"), 3);
    ck_assert_int_eq(armature_find_anim(arm, "#4"), -1);
    ck_assert_int_eq(armature_find_anim(arm, "#99999999999999999999999"), -1);
    ck_assert_int_eq(armature_find_anim(arm, "#"), -1); /* no digits: a name, and none is */
    ck_assert_int_eq(armature_find_anim(arm, "#-1"), -1);
    ck_assert_int_eq(armature_find_anim(arm, "#1x"), -1);
    ck_assert(armature_is_index_form("#12") && !armature_is_index_form("#") &&
              !armature_is_index_form("# 1") && !armature_is_index_form("12"));
    ck_assert_int_eq(armature_find_style(arm, "#1"), 1);
    ck_assert_int_eq(armature_find_style(arm, "0"), 1); /* a name still wins over "0" */
    ck_assert_int_eq(armature_find_style(arm, "#0"), 0);
    ck_assert_int_eq(armature_find_anim(arm, "+1"), -1); /* a plain index is digits only */
    ck_assert_int_eq(armature_find_anim(arm, " 1"), -1);
    ck_assert_int_eq(armature_find_anim(arm, "2"), 2);
    /* The messages list each item as it can be asked for. */
    struct eng_error err;
    int i;
    ck_assert_int_eq(request_find_anim(arm, "nope", &i, &err), ENG_ENOTFOUND);
    ck_assert_str_eq(err.msg, "unknown animation \"nope\" (valid: 1, #1 (#0), #2 (a,b), #3 (1))");
    ck_assert_int_eq(request_find_anim(arm, "#9", &i, &err), ENG_ENOTFOUND);
    ck_assert_str_eq(err.msg, "animation #9 is out of range (valid: #0 to #3)");
    ck_assert_int_eq(request_find_style(arm, "x", &i, &err), ENG_ENOTFOUND);
    ck_assert_str_eq(err.msg, "unknown style \"x\" (valid: #0 (#1), 0)");
    armature_free(arm);
    /* A space at either end of a name is kept visible: the name in quotes. */
    arm = must_load("{'bones':[{'id':0}],'animations':[{'name':'Walk '},{'name':' Run'},"
                    "{'name':'a b'},{'name':'x, '}]}",
                    0);
    ck_assert_int_eq(request_find_anim(arm, "Walk", &i, &err), ENG_ENOTFOUND);
    ck_assert_str_eq(err.msg, "unknown animation \"Walk\" (valid: \"Walk \", \" Run\", a b, "
                              "#3 (\"x, \"))");
    ck_assert_int_eq(request_find_anim(arm, "Walk ", &i, &err), 0);
    armature_free(arm);
}
END_TEST

/* ---- keyframes and tracks ------------------------------------------------------------------ */

static const struct arm_track *track_of(const struct armature *arm, uint32_t anim, int bone,
                                        int element)
{
    const struct arm_anim *a = &arm->anims[anim];
    for (uint32_t t = a->track_off; t < a->track_off + a->track_len; t++)
        if (arm->tracks[t].bone == bone && arm->tracks[t].element == element)
            return &arm->tracks[t];
    return NULL;
}

START_TEST(tracks_grouped_per_bone_and_element)
{
    struct armature *arm = must_load(VALID, 1);
    const struct arm_anim *idle = &arm->anims[0], *walk = &arm->anims[1];
    ck_assert_str_eq(idle->name, "idle");
    ck_assert(idle->fps == 30);
    ck_assert(idle->last_frame == 20);
    ck_assert_uint_eq(idle->track_off, 0);
    ck_assert_uint_eq(idle->track_len, 2);
    ck_assert_str_eq(walk->name, "walk");
    ck_assert(walk->fps == 60); /* default */
    ck_assert(walk->last_frame == 0);
    ck_assert_uint_eq(walk->track_len, 0);

    /* tracks sorted by bone, then element; keyframes in file order within a track */
    const struct arm_track *t0 = &arm->tracks[0], *t1 = &arm->tracks[1];
    ck_assert_int_eq(t0->bone, 0);
    ck_assert_int_eq(t0->element, EL_POS_X);
    ck_assert_uint_eq(t0->kf_len, 2);
    ck_assert_int_eq(t1->bone, 1);
    ck_assert_int_eq(t1->element, EL_ROT);
    ck_assert_uint_eq(t1->kf_len, 3);
    ck_assert_uint_eq(t0->kf_off + t0->kf_len, t1->kf_off);
    const struct arm_keyframe *k0 = arm->keyframes + t0->kf_off, *k1 = arm->keyframes + t1->kf_off;
    ck_assert(k0[0].frame == 0 && k0[0].value == 1);
    ck_assert(k0[1].frame == 20 && k0[1].value == 2);
    ck_assert(k1[0].frame == 0 && k1[0].value == 0);
    ck_assert(k1[1].frame == 10 && k1[1].value == 1);
    ck_assert(k1[2].frame == 20 && k1[2].value == 2);
    /* next_kf absent: derived, as track-local indices; the last points at itself */
    ck_assert_uint_eq(k0[0].next, 1);
    ck_assert_uint_eq(k0[1].next, 1);
    ck_assert_uint_eq(k1[0].next, 1);
    ck_assert_uint_eq(k1[1].next, 2);
    ck_assert_uint_eq(k1[2].next, 2);
    ck_assert(t0->monotone && t1->monotone);
    ck_assert_ptr_eq(track_of(arm, 0, 1, EL_ROT), t1);
    ck_assert_ptr_null(track_of(arm, 0, 2, EL_ROT));
    armature_free(arm);
}
END_TEST

/* Derived links are the first later keyframe with a greater frame, for sorted frames with
 * many ties: checked against that definition, scan by scan, on 300 keyframes (the loader
 * finds them in one pass, where a scan from each took minutes for 480,000 ties). */
START_TEST(derived_next_kf_matches_its_definition)
{
    enum { N = 300 };
    double frame[N];
    uint32_t seed = 7;
    size_t cap = 64 + 72 * (size_t)N;
    char *j = malloc(cap);
    ck_assert_ptr_nonnull(j);
    size_t at = (size_t)snprintf(j, cap, "{'bones':[{'id':0}],'animations':[{'keyframes':[");
    for (int i = 0; i < N; i++) {
        frame[i] = i && lcg(&seed) % 3 ? frame[i - 1] : i; /* sorted, as files must be */
        at += (size_t)snprintf(j + at, cap - at,
                               "%s{'frame':%g,'bone_id':0,'element':'PositionX','value':%d}",
                               i ? "," : "", frame[i], i);
    }
    snprintf(j + at, cap - at, "]}]}");
    struct armature *arm = must_load(j, 0);
    const struct arm_track *t = track_of(arm, 0, 0, EL_POS_X);
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_eq(t->kf_len, N);
    const struct arm_keyframe *k = arm->keyframes + t->kf_off;
    for (uint32_t i = 0; i < N; i++) {
        uint32_t want = i; /* none: itself */
        for (uint32_t n = i + 1; n < N && want == i; n++)
            if (frame[n] > frame[i])
                want = n;
        ck_assert_msg(k[i].next == want, "keyframe %u (frame %g): next %u, want %u", i, frame[i],
                      k[i].next, want);
    }
    armature_free(arm);
    free(j);
}
END_TEST

START_TEST(next_kf_explicit_derived_and_mixed)
{
    struct armature *arm =
        must_load("{'bones':[{'id':0},{'id':1}],'animations':["
                  /* explicit next_kf that skips a keyframe of the same track */
                  " {'keyframes':["
                  "  {'frame':0,'bone_id':0,'element':'PositionY','value':1,'next_kf':2},"
                  "  {'frame':5,'bone_id':0,'element':'PositionY','value':2,'next_kf':-1},"
                  "  {'frame':10,'bone_id':0,'element':'PositionY','value':3,'next_kf':-1}]},"
                  /* derived: keyframes at the same frame are skipped; other tracks interleave */
                  " {'keyframes':["
                  "  {'frame':0,'bone_id':1,'element':'ScaleX','value':1},"
                  "  {'frame':0,'bone_id':1,'element':'ScaleX','value':2},"
                  "  {'frame':0,'bone_id':0,'element':'ScaleX','value':9},"
                  "  {'frame':5,'bone_id':1,'element':'ScaleX','value':3}]},"
                  /* mixed: explicit on the first, derived on the second */
                  " {'keyframes':["
                  "  {'frame':0,'bone_id':1,'element':'TintA','value':0,'next_kf':2},"
                  "  {'frame':3,'bone_id':1,'element':'TintA','value':0},"
                  "  {'frame':6,'bone_id':1,'element':'TintA','value':0},"
                  "  {'frame':9,'bone_id':1,'element':'TintA','value':0,'next_kf':-1}]}"
                  "]}",
                  0);
    ck_assert_uint_eq(arm->anim_count, 3);
    ck_assert_uint_eq(arm->keyframe_count, 11);

    const struct arm_track *t = track_of(arm, 0, 0, EL_POS_Y);
    ck_assert_ptr_nonnull(t);
    const struct arm_keyframe *k = arm->keyframes + t->kf_off;
    ck_assert_uint_eq(t->kf_len, 3);
    ck_assert_uint_eq(k[0].next, 2);
    ck_assert_uint_eq(k[1].next, 1);
    ck_assert_uint_eq(k[2].next, 2);

    ck_assert_uint_eq(arm->anims[1].track_len, 2);
    t = track_of(arm, 1, 1, EL_SCALE_X);
    ck_assert_ptr_nonnull(t);
    k = arm->keyframes + t->kf_off;
    ck_assert_uint_eq(t->kf_len, 3);
    ck_assert(k[0].value == 1 && k[1].value == 2 && k[2].value == 3);
    ck_assert_uint_eq(k[0].next, 2);
    ck_assert_uint_eq(k[1].next, 2);
    ck_assert_uint_eq(k[2].next, 2);
    t = track_of(arm, 1, 0, EL_SCALE_X);
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_eq(t->kf_len, 1);
    ck_assert_uint_eq(arm->keyframes[t->kf_off].next, 0);

    t = track_of(arm, 2, 1, EL_TINT_A);
    ck_assert_ptr_nonnull(t);
    k = arm->keyframes + t->kf_off;
    ck_assert_uint_eq(k[0].next, 2);
    ck_assert_uint_eq(k[1].next, 2);
    ck_assert_uint_eq(k[2].next, 3);
    ck_assert_uint_eq(k[3].next, 3);
    armature_free(arm);
}
END_TEST

START_TEST(keyframe_discrete_values)
{
    struct armature *arm =
        must_load("{'bones':[{'tex':'a'}],'animations':[{'keyframes':["
                  "{'element':'Texture','value_str':'b'},{'element':'IkMode','value_str':'Arc'},"
                  "{'element':'IkConstraint','value_str':'CounterClockwise'},"
                  "{'element':'Zindex','value':-4},{'element':'Hidden','value':1},"
                  "{'element':'Texture','frame':2,'value_str':''},"
                  "{'element':'PositionX','frame':3,'start_handle':{'x':0.1,'y':0.2},"
                  "'end_handle':{'x':0.3,'y':999}}]}]}",
                  0);
    ck_assert_uint_eq(arm->track_count, 6);
    const struct arm_track *t = track_of(arm, 0, 0, EL_TEXTURE);
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_eq(t->kf_len, 2);
    ck_assert_str_eq(armature_tex_name(arm, arm->keyframes[t->kf_off].ivalue), "b");
    ck_assert_int_eq(arm->keyframes[t->kf_off + 1].ivalue, -1);
    t = track_of(arm, 0, 0, EL_IK_MODE);
    ck_assert_int_eq(arm->keyframes[t->kf_off].ivalue, IK_ARC);
    t = track_of(arm, 0, 0, EL_IK_CONSTRAINT);
    ck_assert_int_eq(arm->keyframes[t->kf_off].ivalue, IKC_COUNTER_CLOCKWISE);
    t = track_of(arm, 0, 0, EL_ZINDEX);
    ck_assert_int_eq(arm->keyframes[t->kf_off].ivalue, -4);
    t = track_of(arm, 0, 0, EL_HIDDEN);
    ck_assert(arm->keyframes[t->kf_off].value == 1);
    t = track_of(arm, 0, 0, EL_POS_X);
    const struct arm_keyframe *k = &arm->keyframes[t->kf_off];
    ck_assert(k->h1.x == 0.1 && k->h1.y == 0.2 && k->h2.x == 0.3 && k->h2.y == 999);
    ck_assert(arm->anims[0].last_frame == 3);
    ck_assert_uint_eq(arm->tex_name_count, 2);
    armature_free(arm);
}
END_TEST

/* ---- meshes and IK ------------------------------------------------------------------------- */

START_TEST(mesh_and_binds)
{
    struct armature *arm =
        must_load("{'bones':[{'id':0},{'id':1,'vertices':["
                  " {'id':0,'pos':{'x':1,'y':2},'uv':{'x':0.5,'y':0.25}},"
                  " {'id':1,'pos':{'x':3,'y':4},'init_pos':{'x':5,'y':6}},"
                  " {'id':2}],"
                  " 'indices':[0,1,2,2,1,0],"
                  " 'binds':[{'bone_id':0,'is_path':true,'verts':[{'id':2,'weight':0.5},{'id':0}]},"
                  "          {}]}]}",
                  0);
    ck_assert_uint_eq(arm->vert_count, 3);
    ck_assert_uint_eq(arm->index_count, 6);
    ck_assert_uint_eq(arm->bind_count, 2);
    const struct arm_bone *b = &arm->bones[1];
    ck_assert_uint_eq(b->vert_off, 0);
    ck_assert_uint_eq(b->vert_len, 3);
    ck_assert_uint_eq(b->index_len, 6);
    ck_assert_uint_eq(b->bind_len, 2);
    ck_assert_uint_eq(arm->bones[0].vert_len, 0);
    ck_assert(arm->vert_init[0].x == 1 && arm->vert_init[0].y == 2); /* init_pos = pos */
    ck_assert(arm->vert_init[1].x == 5 && arm->vert_init[1].y == 6);
    ck_assert(arm->vert_uv[0].x == 0.5 && arm->vert_uv[0].y == 0.25);
    ck_assert(arm->vert_init[2].x == 0 && arm->vert_uv[2].y == 0);
    ck_assert_uint_eq(arm->indices[b->index_off + 3], 2);
    const struct arm_bind *bd = &arm->binds[b->bind_off];
    ck_assert_int_eq(bd[0].bone, 0);
    ck_assert(bd[0].is_path);
    ck_assert_uint_eq(bd[0].vert_len, 2);
    ck_assert_uint_eq(arm->bind_verts[bd[0].vert_off].vert, 2);
    ck_assert(arm->bind_verts[bd[0].vert_off].weight == 0.5);
    ck_assert(arm->bind_verts[bd[0].vert_off + 1].weight == 0);
    ck_assert_int_eq(bd[1].bone, -1); /* unset */
    ck_assert(!bd[1].is_path);
    ck_assert_uint_eq(bd[1].vert_len, 0);
    armature_free(arm);
}
END_TEST

START_TEST(ik_families)
{
    struct armature *arm =
        must_load("{'ik_root_ids':[0,3,4],'bones':["
                  " {'id':0,'ik_target_id':4,'ik_bone_ids':[0,1,2],'ik_mode':'Arc',"
                  "  'ik_constraint':'Clockwise'},"
                  " {'id':1,'parent_id':0},{'id':2,'parent_id':1},"
                  " {'id':3,'ik_target_id':4,'ik_bone_ids':[3]},"
                  " {'id':4,'ik_bone_ids':[0,1]}]}",
                  0);
    /* only families with a target and at least two bones are kept */
    ck_assert_uint_eq(arm->ik_root_count, 1);
    ck_assert_int_eq(arm->ik_roots[0], 0);
    const struct arm_bone *b = &arm->bones[0];
    ck_assert_int_eq(b->ik_target, 4);
    ck_assert_uint_eq(b->ik_len, 3);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(arm->ik_chain[b->ik_off + i], i);
    ck_assert_int_eq(b->start.ik_mode, IK_ARC);
    ck_assert_int_eq(b->start.ik_constraint, IKC_CLOCKWISE);
    ck_assert_uint_eq(arm->bones[3].ik_len, 1);
    ck_assert_int_eq(arm->ik_chain[arm->bones[3].ik_off], 3);
    ck_assert_int_eq(arm->bones[4].ik_target, -1);
    ck_assert_uint_ge(arm->max_chain, 3);
    armature_free(arm);
}
END_TEST

START_TEST(parent_listed_after_child)
{
    /* not a cycle: a parent may come later in the list */
    struct armature *arm = must_load("{'bones':[{'id':0,'parent_id':2},{'id':1,'parent_id':0},"
                                     "{'id':2}]}",
                                     0);
    ck_assert_int_eq(arm->bones[0].parent, 2);
    ck_assert_int_eq(arm->bones[1].parent, 0);
    ck_assert_int_eq(arm->bones[2].parent, -1);
    armature_free(arm);
}
END_TEST

START_TEST(version_variants_accepted)
{
    static const char *const ok[] = {"{'version':'0.5.0'}", "{'version':'0.5.1'}", "{'version':''}",
                                     "{'img_format':'PNG'}"};
    for (size_t i = 0; i < N_ELEMS(ok); i++) {
        struct armature *arm = must_load(ok[i], 0);
        armature_free(arm);
    }
}
END_TEST

/* ---- the 0.6/0.7 layout (SPEC.md section 4) ------------------------------------------------ */

static void assert_identity_pivots(const struct arm_bone *b)
{
    ck_assert(b->pivot_pos.x == 0 && b->pivot_pos.y == 0);
    ck_assert(b->pivot_rot == 0);
    ck_assert(b->pivot_scale.x == 1 && b->pivot_scale.y == 1);
    ck_assert(!b->pivot_xform);
}

static void assert_no_phys(const struct arm_bone *b)
{
    const struct bone_phys *ph = &b->phys;
    ck_assert(!b->has_phys);
    ck_assert(ph->pos_damping == 0 && ph->pos_ratio == 0 && ph->scale_damping == 0 &&
              ph->scale_ratio == 0 && ph->rot_damping == 0 && ph->sway == 0 && ph->rot_bounce == 0);
    ck_assert(ph->global_pos.x == 0 && ph->global_pos.y == 0 && ph->global_scale.x == 0 &&
              ph->global_scale.y == 0 && ph->global_rot == 0 && ph->global_orbit == 0 &&
              ph->global_orbit_vel == 0 && ph->global_orbit_diff == 0);
}

/* A bone without visuals (or with an empty entry) has no texture, zindex 0, white tint, and
 * so nothing to draw: the texture lookup finds nothing even though a style has textures. */
static void assert_default_looks(const struct armature *arm, const struct arm_bone *b)
{
    ck_assert_int_eq(b->start.tex, -1);
    ck_assert_int_eq(b->init.tex, -1);
    ck_assert_int_eq(armature_resolve_texture(arm, b->start.tex, NULL, 0), -1);
    ck_assert_int_eq(b->start.zindex, 0);
    ck_assert_int_eq(b->init.zindex, 0);
    /* white is 1,1,1,1 in these files, 255 once loaded (not 1) */
    for (int i = 0; i < 4; i++)
        ck_assert(b->start.tint[i] == 255.0 && b->init.tint[i] == 255.0);
    ck_assert_uint_eq(b->vert_len, 0);
    ck_assert_uint_eq(b->index_len, 0);
    ck_assert_uint_eq(b->bind_len, 0);
    assert_identity_pivots(b);
}

START_TEST(arrays_defaults_when_keys_absent)
{
    /* bone 0 has no visuals_id or physics_id at all, bone 1 points at empty entries; family
     * 0 (bones 2, 3) has a target and nothing else; family 1 (4, 5) no target key; family 2
     * (6, 7) target -1. */
    struct armature *arm =
        must_load("{'version':'0.7.0','atlases':[{'filename':'atlas0.png'}],"
                  "'styles':[{'name':'Default','textures':[{'name':'x','size':{'x':4,'y':4}}]}],"
                  "'visuals':[{}],'physics':[{}],"
                  "'inverse_kinematics':[{'target_id':0,'bone_ids':[2,3]},{'bone_ids':[4,5]},"
                  " {'target_id':-1,'bone_ids':[6,7]}],"
                  "'bones':[{'id':0},{'id':1,'visuals_id':0,'physics_id':0},"
                  " {'id':2,'ik_family_id':0},{'id':3,'parent_id':2,'ik_family_id':0},"
                  " {'id':4,'ik_family_id':1},{'id':5,'parent_id':4,'ik_family_id':1},"
                  " {'id':6,'ik_family_id':2},{'id':7,'parent_id':6,'ik_family_id':2}]}",
                  1);
    ck_assert_int_eq(arm->layout, ARM_LAYOUT_ARRAYS);
    ck_assert_str_eq(armature_layout_name(arm), "arrays");
    for (uint32_t b = 0; b < arm->bone_count; b++) {
        assert_default_looks(arm, &arm->bones[b]);
        assert_no_phys(&arm->bones[b]);
    }
    ck_assert(!arm->any_phys);
    /* family 0: FABRIK, None, no mimic, both as start and init, held by its root (bone 2) */
    const struct arm_bone *r = &arm->bones[2];
    ck_assert_int_eq(r->ik_target, 0);
    ck_assert_uint_eq(r->ik_len, 2);
    ck_assert_int_eq(r->start.ik_mode, IK_FABRIK);
    ck_assert_int_eq(r->start.ik_constraint, IKC_NONE);
    ck_assert(!r->start.ik_mimic);
    ck_assert_int_eq(r->init.ik_mode, IK_FABRIK);
    ck_assert_int_eq(r->init.ik_constraint, IKC_NONE);
    ck_assert(!r->init.ik_mimic);
    /* families 1 and 2 have no target: skipped, only family 0 is solved */
    ck_assert_uint_eq(arm->ik_root_count, 1);
    ck_assert_int_eq(arm->ik_roots[0], 2);
    ck_assert_int_eq(arm->bones[4].ik_target, -1);
    ck_assert_int_eq(arm->bones[6].ik_target, -1);
    armature_free(arm);
}
END_TEST

START_TEST(arrays_tint_scaled_to_255)
{
    /* 0..1 in the file, x 255 on load: 0.5 -> 127.5, 0.25 -> 63.75, 0.2 -> 51. init_tint's
     * missing channels default to the start tint (already scaled: stays 255 and 63.75), a
     * partial tint's missing channels to white. Keyframes: TintR 0.5 -> 127.5, TintA 1 ->
     * 255; other elements keep their values (PositionX 0.5 stays 0.5). */
    struct armature *arm =
        must_load("{'version':'0.7.0',"
                  "'visuals':[{'tint':{'r':0.5,'g':0,'b':1,'a':0.25},'init_tint':{'r':1,'g':0.2}},"
                  "           {'tint':{'g':0.5}}],"
                  "'bones':[{'id':0,'visuals_id':0},{'id':1,'visuals_id':1}],"
                  "'animations':[{'keyframes':["
                  " {'frame':0,'bone_id':0,'element':'TintR','value':0.5},"
                  " {'frame':0,'bone_id':1,'element':'TintA','value':1},"
                  " {'frame':0,'bone_id':1,'element':'PositionX','value':0.5}]}]}",
                  0);
    const struct bone_fields *s = &arm->bones[0].start, *i = &arm->bones[0].init;
    ck_assert_double_eq_tol(s->tint[0], 127.5, 1e-9);
    ck_assert_double_eq_tol(s->tint[1], 0.0, 1e-9);
    ck_assert_double_eq_tol(s->tint[2], 255.0, 1e-9);
    ck_assert_double_eq_tol(s->tint[3], 63.75, 1e-9);
    ck_assert_double_eq_tol(i->tint[0], 255.0, 1e-9);
    ck_assert_double_eq_tol(i->tint[1], 51.0, 1e-9);
    ck_assert_double_eq_tol(i->tint[2], 255.0, 1e-9);
    ck_assert_double_eq_tol(i->tint[3], 63.75, 1e-9);
    const struct bone_fields *s1 = &arm->bones[1].start;
    ck_assert_double_eq_tol(s1->tint[0], 255.0, 1e-9);
    ck_assert_double_eq_tol(s1->tint[1], 127.5, 1e-9);
    ck_assert_double_eq_tol(s1->tint[3], 255.0, 1e-9);
    const struct arm_track *t = track_of(arm, 0, 0, EL_TINT_R);
    ck_assert_ptr_nonnull(t);
    ck_assert_double_eq_tol(arm->keyframes[t->kf_off].value, 127.5, 1e-9);
    t = track_of(arm, 0, 1, EL_TINT_A);
    ck_assert_ptr_nonnull(t);
    ck_assert_double_eq_tol(arm->keyframes[t->kf_off].value, 255.0, 1e-9);
    t = track_of(arm, 0, 1, EL_POS_X);
    ck_assert_ptr_nonnull(t);
    ck_assert(arm->keyframes[t->kf_off].value == 0.5);
    armature_free(arm);
}
END_TEST

START_TEST(layout_decided_by_keys_not_version)
{
    /* "0.5.0" with physics[]: the new layout. The bone's own tex, tint and phys_* are 0.5
     * keys, ignored: no texture, white, and the damping of physics[0] (3, not 9). */
    struct armature *arm = must_load(
        "{'version':'0.5.0','physics':[{'pos_damping':3}],"
        "'bones':[{'id':0,'physics_id':0,'tex':'a','tint':{'r':0.5},'phys_pos_damping':9}]}",
        0);
    ck_assert_int_eq(arm->layout, ARM_LAYOUT_ARRAYS);
    const struct arm_bone *b = &arm->bones[0];
    ck_assert_int_eq(b->start.tex, -1);
    ck_assert(b->start.tint[0] == 255.0);
    ck_assert(b->phys.pos_damping == 3);
    ck_assert(b->has_phys);
    armature_free(arm);

    /* "0.7.0" with none of the three arrays: the 0.5 layout, everything on the bone, tint
     * 0..255 as written (0.5 stays 0.5, not 127.5). */
    arm = must_load("{'version':'0.7.0','bones':[{'id':0,'tex':'a','tint':{'r':0.5,'g':10},"
                    "'zindex':3,'phys_pos_damping':2}]}",
                    0);
    ck_assert_int_eq(arm->layout, ARM_LAYOUT_BONES);
    ck_assert_str_eq(armature_layout_name(arm), "bones");
    b = &arm->bones[0];
    ck_assert_str_eq(armature_tex_name(arm, b->start.tex), "a");
    ck_assert(b->start.tint[0] == 0.5 && b->start.tint[1] == 10 && b->start.tint[2] == 255);
    ck_assert_int_eq(b->start.zindex, 3);
    ck_assert(b->phys.pos_damping == 2);
    armature_free(arm);

    /* Any one of the three keys is enough, even as an empty array, whatever the version says
     * (nightly "0.5.3", none at all): the bone's tex is then ignored. */
    static const char *const arrays[] = {
        "{'version':'0.5.3','visuals':[],'bones':[{'tex':'a'}]}",
        "{'version':'0.6.0','inverse_kinematics':[],'bones':[{'tex':'a'}]}",
        "{'physics':[],'bones':[{'tex':'a'}]}",
    };
    for (size_t k = 0; k < N_ELEMS(arrays); k++) {
        arm = must_load(arrays[k], 0);
        ck_assert_msg(arm->layout == ARM_LAYOUT_ARRAYS, "case %zu", k);
        ck_assert_int_eq(arm->bones[0].start.tex, -1);
        armature_free(arm);
    }
}
END_TEST

/* Every physics field read from its own key, in both layouts: phys_-prefixed on the bone
 * (0.5) and bare in physics[] (0.6/0.7), each given a distinct value. */
START_TEST(every_physics_field_in_both_layouts)
{
    static const char fields[] =
        "pos_damping':1,'%spos_ratio':2,'%sscale_damping':3,'%sscale_ratio':4,'%srot_damping':5,"
        "'%ssway':6,'%srot_bounce':7,'%sglobal_pos':{'x':8,'y':9},"
        "'%sglobal_scale':{'x':10,'y':11},'%sglobal_rot':12,'%sglobal_orbit':13,"
        "'%sglobal_orbit_vel':14,'%sglobal_orbit_diff':15";
    char body[1024], json[1400];
    for (int arrays = 0; arrays < 2; arrays++) {
        const char *p = arrays ? "" : "phys_";
        snprintf(body, sizeof body, fields, p, p, p, p, p, p, p, p, p, p, p, p);
        if (arrays)
            snprintf(json, sizeof json,
                     "{'version':'0.7.0','physics':[{'%s}],'bones':[{'id':0,'physics_id':0}]}",
                     body);
        else
            snprintf(json, sizeof json, "{'bones':[{'id':0,'phys_%s}]}", body);
        struct armature *arm = must_load(json, 0);
        const struct bone_phys *ph = &arm->bones[0].phys;
        ck_assert_msg(ph->pos_damping == 1 && ph->pos_ratio == 2 && ph->scale_damping == 3 &&
                          ph->scale_ratio == 4 && ph->rot_damping == 5 && ph->sway == 6 &&
                          ph->rot_bounce == 7,
                      "layout %d: a number field read from the wrong key", arrays);
        ck_assert_msg(ph->global_pos.x == 8 && ph->global_pos.y == 9 && ph->global_scale.x == 10 &&
                          ph->global_scale.y == 11 && ph->global_rot == 12 &&
                          ph->global_orbit == 13 && ph->global_orbit_vel == 14 &&
                          ph->global_orbit_diff == 15,
                      "layout %d: a global field read from the wrong key", arrays);
        armature_free(arm);
    }
}
END_TEST

START_TEST(arrays_ignore_copies_on_bones)
{
    /* Bone 0 carries 0.5-style copies that disagree with the arrays (tex, zindex, tint,
     * pivots, physics, IK, a mesh) and the file has an ik_root_ids naming it: all ignored.
     * What counts is visuals[0], physics[0] and inverse_kinematics[0]. */
    struct armature *arm = must_load(
        "{'version':'0.6.0','ik_root_ids':[0],"
        "'visuals':[{'tex':'right','zindex':2,'pivot_pos':{'x':0.25,'y':0.5},'pivot_rot':0.5,"
        "            'pivot_scale':{'x':2,'y':0.5}}],"
        "'physics':[{'rot_damping':3}],"
        "'inverse_kinematics':[{'target_id':2,'bone_ids':[0,1],'constraint':'CounterClockwise'}],"
        "'bones':["
        " {'id':0,'visuals_id':0,'physics_id':0,'ik_family_id':0,"
        "  'tex':'wrong','zindex':9,'tint':{'r':0,'g':0,'b':0,'a':0},"
        "  'pivot_pos':{'x':5,'y':5},'pivot_rot':2,'pivot_scale':{'x':3,'y':3},"
        "  'phys_pos_damping':4,'phys_sway':1,"
        "  'ik_target_id':1,'ik_bone_ids':[0,1,2],'ik_mode':'Arc','ik_constraint':'Clockwise',"
        "  'vertices':[{},{},{}],'indices':[0,1,2]},"
        " {'id':1,'parent_id':0,'ik_family_id':0},{'id':2}]}",
        0);
    const struct arm_bone *b = &arm->bones[0];
    ck_assert_str_eq(armature_tex_name(arm, b->start.tex), "right");
    ck_assert_int_eq(b->start.zindex, 2);
    for (int i = 0; i < 4; i++)
        ck_assert(b->start.tint[i] == 255.0);
    ck_assert(b->pivot_pos.x == 0.25 && b->pivot_pos.y == 0.5);
    ck_assert(b->pivot_rot == 0.5);
    ck_assert(b->pivot_scale.x == 2 && b->pivot_scale.y == 0.5);
    ck_assert(b->pivot_xform);
    ck_assert(b->phys.rot_damping == 3);
    ck_assert(b->phys.pos_damping == 0 && b->phys.sway == 0);
    ck_assert_uint_eq(arm->ik_root_count, 1);
    ck_assert_int_eq(arm->ik_roots[0], 0);
    ck_assert_int_eq(b->ik_target, 2);
    ck_assert_uint_eq(b->ik_len, 2);
    ck_assert_int_eq(b->start.ik_mode, IK_FABRIK);
    ck_assert_int_eq(b->start.ik_constraint, IKC_COUNTER_CLOCKWISE);
    ck_assert_uint_eq(b->vert_len, 0);
    ck_assert_uint_eq(arm->vert_count, 0);
    ck_assert_uint_eq(arm->index_count, 0);
    armature_free(arm);
}
END_TEST

START_TEST(arrays_shared_visuals_entry)
{
    /* Two bones name visuals[0]: each gets its texture, zindex, tint, pivots and its own
     * copy of the mesh (so the vertices are counted twice). */
    struct armature *arm =
        must_load("{'version':'0.7.0','visuals':[{'tex':'t','zindex':4,'tint':{'r':0.5},"
                  " 'pivot_pos':{'x':0.1,'y':0.2},'pivot_rot':0.3,"
                  " 'vertices':[{'pos':{'x':1,'y':2}},{'pos':{'x':3,'y':4}},{'pos':{'x':5,'y':6}}],"
                  " 'indices':[0,1,2],'binds':[{'bone_id':0,'verts':[{'id':1,'weight':0.5}]}]}],"
                  "'bones':[{'id':0,'visuals_id':0},{'id':1,'visuals_id':0,'pos':{'x':7,'y':0}}]}",
                  0);
    ck_assert_uint_eq(arm->vert_count, 6);
    ck_assert_uint_eq(arm->index_count, 6);
    ck_assert_uint_eq(arm->bind_count, 2);
    const struct arm_bone *a = &arm->bones[0], *b = &arm->bones[1];
    ck_assert_int_ge(a->start.tex, 0);
    ck_assert_int_eq(a->start.tex, b->start.tex);
    ck_assert_str_eq(armature_tex_name(arm, b->start.tex), "t");
    ck_assert_int_eq(b->start.zindex, 4);
    ck_assert_double_eq_tol(b->start.tint[0], 127.5, 1e-9);
    ck_assert(b->pivot_pos.x == 0.1 && b->pivot_pos.y == 0.2 && b->pivot_rot == 0.3);
    ck_assert_uint_eq(a->vert_len, 3);
    ck_assert_uint_eq(b->vert_len, 3);
    ck_assert_uint_ne(a->vert_off, b->vert_off);
    for (uint32_t v = 0; v < 3; v++) {
        ck_assert(arm->vert_init[a->vert_off + v].x == 2 * v + 1);
        ck_assert(arm->vert_init[b->vert_off + v].x == 2 * v + 1);
        ck_assert(arm->vert_init[b->vert_off + v].y == 2 * v + 2);
    }
    ck_assert_uint_eq(b->index_len, 3);
    ck_assert_uint_eq(b->bind_len, 1);
    ck_assert_int_eq(arm->binds[b->bind_off].bone, 0);
    ck_assert(arm->bind_verts[arm->binds[b->bind_off].vert_off].weight == 0.5);
    armature_free(arm);
}
END_TEST

START_TEST(arrays_family_on_every_chain_bone)
{
    /* Every chain bone names its family; the chain [0, 2] skips bone 1 (which lies between
     * them in the hierarchy and names no family) and still loads. The family's state (with
     * init_ values different from the start) goes on the root, bone 0; IK keyframes on bone 2
     * land on the root too, while a Rotation key on bone 2 stays on bone 2. */
    struct armature *arm = must_load(
        "{'version':'0.7.0',"
        "'inverse_kinematics':[{'target_id':3,'bone_ids':[0,2],'mode':'Arc','init_mode':'FABRIK',"
        " 'constraint':'Clockwise','mimic_target':true,'init_mimic_target':false}],"
        "'bones':[{'id':0,'ik_family_id':0},{'id':1,'parent_id':0,'pos':{'x':5,'y':0}},"
        " {'id':2,'parent_id':1,'pos':{'x':5,'y':0},'ik_family_id':0},"
        " {'id':3,'pos':{'x':0,'y':10}}],"
        "'animations':[{'keyframes':["
        " {'frame':0,'bone_id':2,'element':'IkConstraint','value_str':'CounterClockwise'},"
        " {'frame':0,'bone_id':2,'element':'MimicTarget','value':0},"
        " {'frame':0,'bone_id':2,'element':'IkMode','value_str':'FABRIK'},"
        " {'frame':0,'bone_id':2,'element':'Rotation','value':1}]}]}",
        0);
    ck_assert_uint_eq(arm->ik_root_count, 1);
    ck_assert_int_eq(arm->ik_roots[0], 0);
    const struct arm_bone *r = &arm->bones[0];
    ck_assert_int_eq(r->ik_target, 3);
    ck_assert_uint_eq(r->ik_len, 2);
    ck_assert_int_eq(arm->ik_chain[r->ik_off], 0);
    ck_assert_int_eq(arm->ik_chain[r->ik_off + 1], 2);
    ck_assert_int_eq(r->start.ik_mode, IK_ARC);
    ck_assert_int_eq(r->init.ik_mode, IK_FABRIK);
    ck_assert_int_eq(r->start.ik_constraint, IKC_CLOCKWISE);
    ck_assert_int_eq(r->init.ik_constraint, IKC_CLOCKWISE); /* init_ defaults to the start */
    ck_assert(r->start.ik_mimic && !r->init.ik_mimic);
    /* the non-root chain bone holds no family state and no family of its own */
    ck_assert_uint_eq(arm->bones[2].ik_len, 0);
    ck_assert_int_eq(arm->bones[2].ik_target, -1);
    ck_assert(!arm->bones[2].start.ik_mimic);
    ck_assert_int_eq(arm->bones[2].start.ik_mode, IK_FABRIK);
    ck_assert_ptr_null(track_of(arm, 0, 2, EL_IK_CONSTRAINT));
    ck_assert_ptr_null(track_of(arm, 0, 2, EL_MIMIC_TARGET));
    ck_assert_ptr_null(track_of(arm, 0, 2, EL_IK_MODE));
    const struct arm_track *t = track_of(arm, 0, 0, EL_IK_CONSTRAINT);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(arm->keyframes[t->kf_off].ivalue, IKC_COUNTER_CLOCKWISE);
    t = track_of(arm, 0, 0, EL_MIMIC_TARGET);
    ck_assert_ptr_nonnull(t);
    ck_assert(arm->keyframes[t->kf_off].value == 0);
    t = track_of(arm, 0, 0, EL_IK_MODE);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(arm->keyframes[t->kf_off].ivalue, IK_FABRIK);
    ck_assert_ptr_nonnull(track_of(arm, 0, 2, EL_ROT));
    ck_assert_ptr_null(track_of(arm, 0, 0, EL_ROT));
    armature_free(arm);
}
END_TEST

/* ---- errors: table-driven ------------------------------------------------------------------ */

struct err_case {
    const char *json;
    int atlases;
    int code;
    const char *msg;
    enum match how;
};

#define BADF ENG_EBADFILE

/* Malformed JSON and wrong types. */
static const struct err_case json_errors[] = {
    {"{\n 'bones': [\n  {'id': 0,}\n ]\n}", 0, BADF,
     "armature.json: invalid JSON at line 3 column 12: string or '}' expected near '}'", EXACT},
    {"{'bones':[", 0, BADF, "armature.json: invalid JSON at line 1 column 10: ", PREFIX},
    {"", 0, BADF, "armature.json: invalid JSON at line ", PREFIX},
    {"{'bones':[],'bones':[]}", 0, BADF, "duplicate object key", CONTAINS},
    {"[1,2]", 0, BADF, "armature.json: the top level is not an object", EXACT},
    {"[{}]", 0, BADF, "armature.json: the top level is not an object", EXACT},
    {"'skf'", 0, BADF, "armature.json: invalid JSON at line 1 column 5: ", PREFIX},
    /* string where a number is expected */
    {"{'bones':[{'rot':'1'}]}", 0, BADF, "armature.json: bones[0].rot: expected a number", EXACT},
    {"{'bones':[{},{'pos':{'x':1,'y':'2'}}]}", 0, BADF,
     "armature.json: bones[1].pos.y: expected a number", EXACT},
    {"{'bones':[{'tint':{'r':'red'}}]}", 0, BADF,
     "armature.json: bones[0].tint.r: expected a number", EXACT},
    /* a vector's or colour's path is made only when a component is wrong: any component */
    {"{'bones':[{'scale':{'x':'1'}}]}", 0, BADF,
     "armature.json: bones[0].scale.x: expected a number", EXACT},
    {"{'bones':[{'tint':{'r':1,'g':1,'b':1,'a':'1'}}]}", 0, BADF,
     "armature.json: bones[0].tint.a: expected a number", EXACT},
    {"{'bones':[{'phys_global_pos':{'x':0,'y':[]}}]}", 0, BADF,
     "armature.json: bones[0].phys_global_pos.y: expected a number", EXACT},
    {"{'bones':[{'parent_id':'0'}]}", 0, BADF,
     "armature.json: bones[0].parent_id: expected a number", EXACT},
    {"{'bones':[{}],'animations':[{'keyframes':[{'frame':'3'}]}]}", 0, BADF,
     "armature.json: animations[0].keyframes[0].frame: expected a number", EXACT},
    {"{'animations':[{'fps':'30'}]}", 0, BADF,
     "armature.json: animations[0].fps: expected a number", EXACT},
    /* number where an object is expected */
    {"{'bones':[{'pos':5}]}", 0, BADF,
     "armature.json: bones[0].pos: expected an object {\"x\", \"y\"}", EXACT},
    {"{'bones':[{'tint':255}]}", 0, BADF,
     "armature.json: bones[0].tint: expected an object {\"r\", \"g\", \"b\", \"a\"}", EXACT},
    {"{'bones':[5]}", 0, BADF, "armature.json: bones[0]: expected an object", EXACT},
    {"{'animations':[5]}", 0, BADF, "armature.json: animations[0]: expected an object", EXACT},
    {"{'animations':[{'keyframes':[{},7]}],'bones':[{}]}", 0, BADF,
     "armature.json: animations[0].keyframes[1]: expected an object", EXACT},
    {"{'styles':[1]}", 0, BADF, "armature.json: styles[0]: expected an object", EXACT},
    {"{'styles':[{'textures':[1]}]}", 0, BADF,
     "armature.json: styles[0].textures[0]: expected an object", EXACT},
    {"{'atlases':[1]}", 0, BADF, "armature.json: atlases[0]: expected an object", EXACT},
    /* 0.6/0.7 entries a bone points at: never read as empty, which dropped its looks */
    {"{'version':'0.7.0','visuals':[{},5],'bones':[{'visuals_id':1}]}", 0, BADF,
     "armature.json: visuals[1]: expected an object", EXACT},
    {"{'version':'0.7.0','visuals':[{}],'physics':[[1]],'bones':[{'physics_id':0}]}", 0, BADF,
     "armature.json: physics[0]: expected an object", EXACT},
    {"{'bones':[{'vertices':[{},3]}]}", 0, BADF,
     "armature.json: bones[0].vertices[1]: expected an object", EXACT},
    {"{'bones':[{'vertices':[{}],'binds':[{'verts':[5]}]}]}", 0, BADF,
     "armature.json: bones[0].binds[0].verts[0]: expected an object", EXACT},
    /* array expected */
    {"{'bones':{}}", 0, BADF, "armature.json: bones: expected an array", EXACT},
    {"{'animations':5}", 0, BADF, "armature.json: animations: expected an array", EXACT},
    {"{'styles':'x'}", 0, BADF, "armature.json: styles: expected an array", EXACT},
    {"{'atlases':{}}", 0, BADF, "armature.json: atlases: expected an array", EXACT},
    {"{'ik_root_ids':0}", 0, BADF, "armature.json: ik_root_ids: expected an array", EXACT},
    {"{'animations':[{'keyframes':{}}]}", 0, BADF,
     "armature.json: animations[0].keyframes: expected an array", EXACT},
    {"{'styles':[{'textures':5}]}", 0, BADF, "armature.json: styles[0].textures: expected an array",
     EXACT},
    {"{'bones':[{'indices':5}]}", 0, BADF, "armature.json: bones[0].indices: expected an array",
     EXACT},
    {"{'bones':[{'vertices':{}}]}", 0, BADF, "armature.json: bones[0].vertices: expected an array",
     EXACT},
    {"{'bones':[{'binds':1}]}", 0, BADF, "armature.json: bones[0].binds: expected an array", EXACT},
    {"{'bones':[{'binds':[{'verts':1}]}]}", 0, BADF,
     "armature.json: bones[0].binds[0].verts: expected an array", EXACT},
    {"{'bones':[{'ik_bone_ids':3}]}", 0, BADF,
     "armature.json: bones[0].ik_bone_ids: expected an array", EXACT},
    /* other types */
    {"{'bones':[{'hidden':1}]}", 0, BADF, "armature.json: bones[0].hidden: expected true or false",
     EXACT},
    {"{'bones':[{'name':5}]}", 0, BADF, "armature.json: bones[0].name: expected a string", EXACT},
    {"{'bones':[{'tex':{}}]}", 0, BADF, "armature.json: bones[0].tex: expected a string", EXACT},
    {"{'bones':[{'zindex':1.5}]}", 0, BADF,
     "armature.json: bones[0].zindex: expected an integer, got 1.5", EXACT},
    {"{'bones':[{'id':0.5}]}", 0, BADF, "armature.json: bones[0].id: expected an integer, got 0.5",
     EXACT},
    {"{'bones':[{'parent_id':1e12}]}", 0, BADF,
     "armature.json: bones[0].parent_id: 1e+12 is out of range", EXACT},
    {"{'bones':[{'ik_bone_ids':[0,'1']}]}", 0, BADF,
     "armature.json: bones[0].ik_bone_ids[1]: expected an integer", EXACT},
    {"{'bones':[{}],'ik_root_ids':[0.0]}", 0, BADF,
     "armature.json: ik_root_ids[0]: expected an integer", EXACT},
    {"{'bones':[{'vertices':[{},{},{}],'indices':[0,1,'2']}]}", 0, BADF,
     "armature.json: bones[0].indices[2]: expected an integer", EXACT},
    {"{'bones':[{}],'animations':[{'keyframes':[{'element':5}]}]}", 0, BADF,
     "armature.json: animations[0].keyframes[0].element: expected a string", EXACT},
    {"{'bones':[{}],'animations':[{'keyframes':[{'next_kf':true}]}]}", 0, BADF,
     "armature.json: animations[0].keyframes[0].next_kf: expected a number", EXACT},
    {"{'styles':[{'name':1}]}", 0, BADF, "armature.json: styles[0].name: expected a string", EXACT},
    {"{'animations':[{'name':[]}]}", 0, BADF,
     "armature.json: animations[0].name: expected a string", EXACT},
    {"{'atlases':[{'filename':3}]}", 0, BADF,
     "armature.json: atlases[0].filename: expected a string", EXACT},
    /* Top-level scalars: the message currently reads "armature.json: .version: ..." (a stray
     * dot, see the report); only the unambiguous part is asserted. */
    {"{'version':5}", 0, BADF, "version: expected a string", CONTAINS},
    {"{'img_format':5}", 0, BADF, "img_format: expected a string", CONTAINS},
    {"{'baked_ik':1}", 0, BADF, "baked_ik: expected true or false", CONTAINS},
};

/* Ids, parents, IK references, mesh references, enums. */
static const struct err_case reference_errors[] = {
    {"{'bones':[{'id':0},{'id':5}]}", 0, BADF,
     "armature.json: bones[1].id: 5, expected 1 (ids are sequential from 0)", EXACT},
    {"{'bones':[{'id':1},{'id':0}]}", 0, BADF,
     "armature.json: bones[0].id: 1, expected 0 (ids are sequential from 0)", EXACT},
    {"{'bones':[{'id':0},{'id':1,'parent_id':40}]}", 0, BADF,
     "armature.json: bones[1].parent_id: 40 is out of range", EXACT},
    {"{'bones':[{'id':0},{'id':1,'parent_id':2}]}", 0, BADF,
     "armature.json: bones[1].parent_id: 2 is out of range", EXACT},
    {"{'bones':[{'id':0,'parent_id':-2}]}", 0, BADF,
     "armature.json: bones[0].parent_id: -2 is out of range", EXACT},
    {"{'bones':[{'id':0},{'id':1,'parent_id':1}]}", 0, BADF,
     "armature.json: bones[1].parent_id: a bone cannot be its own parent", EXACT},
    {"{'bones':[{'id':0,'parent_id':1},{'id':1,'parent_id':0}]}", 0, BADF,
     "armature.json: bones[0].parent_id: parent chain forms a cycle", EXACT},
    {"{'bones':[{'id':0},{'id':1,'parent_id':3},{'id':2,'parent_id':1},"
     "{'id':3,'parent_id':2},{'id':4,'parent_id':0}]}",
     0, BADF, "armature.json: bones[1].parent_id: parent chain forms a cycle", EXACT},
    {"{'bones':[{'id':0,'ik_target_id':3},{'id':1}]}", 0, BADF,
     "armature.json: bones[0].ik_target_id: 3 is out of range", EXACT},
    {"{'bones':[{'id':0,'ik_target_id':-5}]}", 0, BADF,
     "armature.json: bones[0].ik_target_id: -5 is out of range", EXACT},
    {"{'bones':[{'id':0},{'id':1,'ik_bone_ids':[0,7]}]}", 0, BADF,
     "armature.json: bones[1].ik_bone_ids[1]: 7 is out of range", EXACT},
    {"{'bones':[{'id':0,'ik_bone_ids':[-1]}]}", 0, BADF,
     "armature.json: bones[0].ik_bone_ids[0]: -1 is out of range", EXACT},
    {"{'bones':[{'id':0},{'id':1}],'ik_root_ids':[1,2]}", 0, BADF,
     "armature.json: ik_root_ids[1]: 2 is out of range", EXACT},
    {"{'bones':[{'id':0}],'ik_root_ids':[-1]}", 0, BADF,
     "armature.json: ik_root_ids[0]: -1 is out of range", EXACT},
    {"{'bones':[{'id':0,'ik_mode':'Spline'}]}", 0, BADF,
     "armature.json: bones[0].ik_mode: unknown value \"Spline\"", EXACT},
    {"{'bones':[{'id':0,'ik_mode':'fabrik'}]}", 0, BADF,
     "armature.json: bones[0].ik_mode: unknown value \"fabrik\"", EXACT},
    {"{'bones':[{'id':0,'ik_constraint':'Both'}]}", 0, BADF,
     "armature.json: bones[0].ik_constraint: unknown value \"Both\"", EXACT},
    {"{'bones':[{'id':0,'init_ik_mode':''}]}", 0, BADF,
     "armature.json: bones[0].init_ik_mode: unknown value \"\"", EXACT},
    /* meshes */
    {"{'bones':[{'vertices':[{},{},{}],'indices':[0,1,3]}]}", 0, BADF,
     "armature.json: bones[0].indices[2]: vertex 3 is out of range (3 vertices)", EXACT},
    {"{'bones':[{},{'vertices':[{},{},{}],'indices':[0,1,2,-1,0,1]}]}", 0, BADF,
     "armature.json: bones[1].indices[3]: vertex -1 is out of range (3 vertices)", EXACT},
    {"{'bones':[{'indices':[0,0,0]}]}", 0, BADF,
     "armature.json: bones[0].indices[0]: vertex 0 is out of range (0 vertices)", EXACT},
    {"{'bones':[{'vertices':[{},{},{}],'indices':[0,1,2,0]}]}", 0, BADF,
     "armature.json: bones[0].indices: 4 entries is not a whole number of triangles", EXACT},
    {"{'bones':[{'vertices':[{},{}],'indices':[0,1]}]}", 0, BADF,
     "armature.json: bones[0].indices: 2 entries is not a whole number of triangles", EXACT},
    {"{'bones':[{'vertices':[{},{},{}],'binds':[{'bone_id':0,'verts':[{'id':0},{'id':3}]}]}]}", 0,
     BADF, "armature.json: bones[0].binds[0].verts[1].id: 3 is out of range", EXACT},
    {"{'bones':[{'vertices':[{}],'binds':[{},{'verts':[{'id':-1}]}]}]}", 0, BADF,
     "armature.json: bones[0].binds[1].verts[0].id: -1 is out of range", EXACT},
    {"{'bones':[{},{'vertices':[{}],'binds':[{'bone_id':4}]}]}", 0, BADF,
     "armature.json: bones[1].binds[0].bone_id: 4 is out of range", EXACT},
    {"{'bones':[{'vertices':[{}],'binds':[{'bone_id':-2}]}]}", 0, BADF,
     "armature.json: bones[0].binds[0].bone_id: -2 is out of range", EXACT},
};

/* The 0.6/0.7 layout: the three arrays and the indices into them. */
static const struct err_case layout_errors[] = {
    {"{'visuals':{}}", 0, BADF, "armature.json: visuals: expected an array", EXACT},
    {"{'inverse_kinematics':3}", 0, BADF, "armature.json: inverse_kinematics: expected an array",
     EXACT},
    {"{'physics':'x'}", 0, BADF, "armature.json: physics: expected an array", EXACT},
    /* a 0.6/0.7 bone in a file whose arrays are gone would draw nothing, silently */
    {"{'version':'0.7.0','bones':[{},{'visuals_id':0}]}", 0, BADF,
     "armature.json: bones[1].visuals_id: 0 names a visuals[] entry, but the file has no visuals "
     "array (0.6/0.7 files keep visuals, inverse_kinematics and physics there)",
     EXACT},
    {"{'visuals':[{}],'bones':[{'visuals_id':1}]}", 0, BADF,
     "armature.json: bones[0].visuals_id: 1 is out of range", EXACT},
    {"{'visuals':[{}],'bones':[{'visuals_id':-2}]}", 0, BADF,
     "armature.json: bones[0].visuals_id: -2 is out of range", EXACT},
    {"{'physics':[{}],'bones':[{},{'physics_id':1}]}", 0, BADF,
     "armature.json: bones[1].physics_id: 1 is out of range", EXACT},
    {"{'inverse_kinematics':[],'bones':[{'ik_family_id':0}]}", 0, BADF,
     "armature.json: bones[0].ik_family_id: 0 is out of range", EXACT},
    {"{'physics':[],'bones':[{'visuals_id':0}]}", 0, BADF,
     "armature.json: bones[0].visuals_id: 0 is out of range", EXACT},
    {"{'inverse_kinematics':[{'bone_ids':[0,4]}],'bones':[{},{}]}", 0, BADF,
     "armature.json: inverse_kinematics[0].bone_ids[1]: 4 is out of range", EXACT},
    {"{'inverse_kinematics':[{'bone_ids':[0,'a']}],'bones':[{},{}]}", 0, BADF,
     "armature.json: inverse_kinematics[0].bone_ids[1]: expected an integer", EXACT},
    {"{'inverse_kinematics':[{'target_id':2,'bone_ids':[0,1]}],'bones':[{},{}]}", 0, BADF,
     "armature.json: inverse_kinematics[0].target_id: 2 is out of range", EXACT},
    {"{'inverse_kinematics':[{'mode':'CCD'}]}", 0, BADF,
     "armature.json: inverse_kinematics[0].mode: unknown value \"CCD\"", EXACT},
    {"{'inverse_kinematics':[{'constraint':'Both'}]}", 0, BADF,
     "armature.json: inverse_kinematics[0].constraint: unknown value \"Both\"", EXACT},
    {"{'inverse_kinematics':[{'init_mode':''}]}", 0, BADF,
     "armature.json: inverse_kinematics[0].init_mode: unknown value \"\"", EXACT},
    {"{'inverse_kinematics':[{'mimic_target':1}]}", 0, BADF,
     "armature.json: inverse_kinematics[0].mimic_target: expected true or false", EXACT},
    {"{'inverse_kinematics':[{'bone_ids':[0,1]},{'bone_ids':[0,1]}],'bones':[{},{}]}", 0, BADF,
     "armature.json: inverse_kinematics[1].bone_ids[0]: bone 0 already starts another family",
     EXACT},
    {"{'inverse_kinematics':[7]}", 0, BADF,
     "armature.json: inverse_kinematics[0]: expected an object", EXACT},
    {"{'visuals':[{'vertices':[{},{},{}],'indices':[0,1,3]}],'bones':[{'visuals_id':0}]}", 0, BADF,
     "armature.json: visuals[0].indices[2]: vertex 3 is out of range (3 vertices)", EXACT},
    {"{'visuals':[{'pivot_rot':'x'}],'bones':[{'visuals_id':0}]}", 0, BADF,
     "armature.json: visuals[0].pivot_rot: expected a number", EXACT},
    {"{'visuals':[{'pivot_scale':{'x':1,'y':null,'z':[]}},{'pivot_pos':{'y':'0'}}],"
     "'bones':[{'visuals_id':0},{'visuals_id':1}]}",
     0, BADF, "armature.json: visuals[1].pivot_pos.y: expected a number", EXACT},
    {"{'visuals':[{'tint':{'r':'1'}}],'bones':[{'visuals_id':0}]}", 0, BADF,
     "armature.json: visuals[0].tint.r: expected a number", EXACT},
    {"{'physics':[{'pos_damping':true}],'bones':[{'physics_id':0}]}", 0, BADF,
     "armature.json: physics[0].pos_damping: expected a number", EXACT},
    {"{'physics':[{'global_pos':3}],'bones':[{'physics_id':0}]}", 0, BADF,
     "armature.json: physics[0].global_pos: expected an object {\"x\", \"y\"}", EXACT},
    {"{'visuals':[{'binds':[{'bone_id':5}],'vertices':[{}]}],'bones':[{'visuals_id':0}]}", 0, BADF,
     "armature.json: visuals[0].binds[0].bone_id: 5 is out of range", EXACT},
    {"{'bones':[{}],'visuals':[],'animations':[{'keyframes':[{'element':'MimicTarget',"
     "'value':1},{'element':'Mimic'}]}]}",
     0, BADF, "armature.json: animations[0].keyframes[1].element: unknown element \"Mimic\"",
     EXACT},
};

static const struct err_case anim_errors[] = {
    {"{'bones':[{'id':0},{'id':1}],'animations':[{'keyframes':["
     "{'bone_id':1},{'bone_id':2}]}]}",
     0, BADF, "armature.json: animations[0].keyframes[1].bone_id: 2 is not a bone (2 bones)",
     EXACT},
    {"{'bones':[{}],'animations':[{'keyframes':[]},{'keyframes':[{'bone_id':-1}]}]}", 0, BADF,
     "armature.json: animations[1].keyframes[0].bone_id: -1 is not a bone (1 bones)", EXACT},
    {"{'animations':[{'keyframes':[{}]}]}", 0, BADF,
     "armature.json: animations[0].keyframes[0].bone_id: 0 is not a bone (0 bones)", EXACT},
    {"{'bones':[{}],'animations':[{'keyframes':[{'element':'Scale'}]}]}", 0, BADF,
     "armature.json: animations[0].keyframes[0].element: unknown element \"Scale\"", EXACT},
    {"{'bones':[{}],'animations':[{'keyframes':[{'element':'rotation'}]}]}", 0, BADF,
     "armature.json: animations[0].keyframes[0].element: unknown element \"rotation\"", EXACT},
    {"{'bones':[{}],'animations':[{'keyframes':[{'element':'IkMode','value_str':'CCD'}]}]}", 0,
     BADF, "armature.json: animations[0].keyframes[0].value_str: unknown value \"CCD\"", EXACT},
    {"{'bones':[{}],'animations':[{'keyframes':[{'element':'IkConstraint'}]}]}", 0, BADF,
     "armature.json: animations[0].keyframes[0].value_str: unknown value \"\"", EXACT},
    {"{'bones':[{}],'animations':[{'keyframes':[{'frame':0},{'frame':10},{'frame':5}]}]}", 0, BADF,
     "armature.json: animations[0].keyframes[2].frame: 5 comes after frame 10 (keyframes must be "
     "sorted)",
     EXACT},
    {"{'bones':[{}],'animations':[{'keyframes':[{'frame':-1}]}]}", 0, BADF,
     "armature.json: animations[0].keyframes[0].frame: -1 is negative", EXACT},
    {"{'bones':[{}],'animations':[{'fps':0}]}", 0, BADF,
     "armature.json: animations[0].fps: 0 is not positive", EXACT},
    {"{'bones':[{}],'animations':[{'keyframes':[{'element':'Zindex','value':1e10}]}]}", 0, BADF,
     "armature.json: animations[0].keyframes[0].value: 1e+10 is not a valid zindex", EXACT},
    {"{'bones':[{}],'animations':[{'keyframes':[{'next_kf':3},{},{}]}]}", 0, BADF,
     "armature.json: animations[0].keyframes[0].next_kf: 3 is out of range", EXACT},
    {"{'bones':[{}],'animations':[{'keyframes':[{},{'next_kf':-3}]}]}", 0, BADF,
     "armature.json: animations[0].keyframes[1].next_kf: -3 is out of range", EXACT},
    /* next_kf naming a keyframe of another bone, then of another element */
    {"{'bones':[{'id':0},{'id':1}],'animations':[{'keyframes':["
     "{'bone_id':0,'next_kf':1},{'bone_id':1,'frame':5}]}]}",
     0, BADF,
     "armature.json: animations[0].keyframes[0].next_kf: 1 is not a keyframe of the same bone and "
     "element",
     EXACT},
    {"{'bones':[{}],'animations':[{'keyframes':["
     "{'element':'PositionX'},{'element':'PositionY','next_kf':2,'frame':1},"
     "{'element':'PositionX','frame':2}]}]}",
     0, BADF,
     "armature.json: animations[0].keyframes[1].next_kf: 2 is not a keyframe of the same bone and "
     "element",
     EXACT},
    {"{'bones':[{}],'animations':[{'keyframes':[{'frame':1000001}]}]}", 0, BADF,
     "armature.json: animations[0].keyframes[0].frame: 1000001 is past the last frame skeld reads "
     "(1000000)",
     EXACT},
    /* next_kf naming the keyframe itself, then one before it */
    {"{'bones':[{}],'animations':[{'keyframes':[{'next_kf':0},{'frame':5,'next_kf':-1}]}]}", 0,
     BADF, "armature.json: animations[0].keyframes[0].next_kf: 0 is not a later keyframe", EXACT},
    {"{'bones':[{}],'animations':[{'keyframes':[{'next_kf':1},{'frame':5,'next_kf':0}]}]}", 0, BADF,
     "armature.json: animations[0].keyframes[1].next_kf: 0 is not a later keyframe", EXACT},
};

/* Atlases and texture rectangles; version and format. */
static const struct err_case atlas_errors[] = {
    {"{'atlases':[{'filename':'atlas0.png'},{'filename':'atlas1.png'}]}", 1, BADF,
     "armature.json: atlases[1].filename: atlas1.png is not in the archive", EXACT},
    {"{'atlases':[{'filename':'atlas0.png'}]}", 0, BADF,
     "armature.json: atlases[0].filename: atlas0.png is not in the archive", EXACT},
    {"{'atlases':[{'size':{'x':64,'y':64}}]}", 0, BADF,
     "armature.json: atlases[0].filename: missing", EXACT},
    {"{'atlases':[{'filename':'atlas0.png'}],'styles':[{'textures':[{'atlas_idx':1}]}]}", 1, BADF,
     "armature.json: styles[0].textures[0].atlas_idx: 1 is out of range", EXACT},
    {"{'styles':[{'textures':[{'name':'t'}]}]}", 0, BADF,
     "armature.json: styles[0].textures[0].atlas_idx: 0 is out of range", EXACT},
    {"{'atlases':[{'filename':'atlas0.png'}],'styles':[{},{'textures':[{},{'atlas_idx':-1}]}]}", 1,
     BADF, "armature.json: styles[1].textures[1].atlas_idx: -1 is out of range", EXACT},
    {"{'atlases':[{'filename':'atlas0.png'}],'styles':[{'textures':["
     "{'size':{'x':64,'y':64}},{'offset':{'x':40,'y':0},'size':{'x':32,'y':16}}]}]}",
     1, BADF,
     "armature.json: styles[0].textures[1]: rectangle 32x16 at (40,0) exceeds atlas0.png (64x64)",
     EXACT},
    {"{'atlases':[{'filename':'atlas0.png'},{'filename':'atlas1.png'}],'styles':[{'textures':["
     "{'atlas_idx':1,'offset':{'x':0,'y':60},'size':{'x':1,'y':5}}]}]}",
     2, BADF,
     "armature.json: styles[0].textures[0]: rectangle 1x5 at (0,60) exceeds atlas1.png (64x64)",
     EXACT},
    {"{'atlases':[{'filename':'atlas0.png'}],'styles':[{'textures':[{'offset':{'x':-1}}]}]}", 1,
     BADF, "armature.json: styles[0].textures[0]: negative offset or size", EXACT},
    /* A version skeld does not know is refused by name only when its keys do not read. */
    {"{'version':'0.9.0','visuals':[],'bones':[{'visuals_id':3}]}", 0, ENG_EUNSUPPORTED,
     "armature.json: unsupported format version 0.9.0 (skeld reads 0.5 to 0.7): "
     "bones[0].visuals_id: 3 is out of range",
     EXACT},
    {"{'version':'1.0','bones':{}}", 0, ENG_EUNSUPPORTED,
     "armature.json: unsupported format version 1.0 (skeld reads 0.5 to 0.7): bones: expected an "
     "array",
     EXACT},
    /* A known version keeps the plain error. */
    {"{'version':'0.7.0','visuals':[],'bones':[{'visuals_id':3}]}", 0, BADF,
     "armature.json: bones[0].visuals_id: 3 is out of range", EXACT},
    {"{'img_format':'JPG'}", 0, ENG_EUNSUPPORTED,
     "armature.json: img_format: unsupported atlas format JPG", EXACT},
    {"{'img_format':'png'}", 0, ENG_EUNSUPPORTED,
     "armature.json: img_format: unsupported atlas format png", EXACT},
};

static void run_case(const struct err_case *c)
{
    expect_err(c->json, c->atlases, NULL, c->code, c->msg, c->how);
}

START_TEST(json_error_case)
{
    run_case(&json_errors[_i]);
}
END_TEST

START_TEST(reference_error_case)
{
    run_case(&reference_errors[_i]);
}
END_TEST

START_TEST(layout_error_case)
{
    run_case(&layout_errors[_i]);
}
END_TEST

START_TEST(anim_error_case)
{
    run_case(&anim_errors[_i]);
}
END_TEST

START_TEST(atlas_error_case)
{
    run_case(&atlas_errors[_i]);
}
END_TEST

/* ---- errors: the archive ------------------------------------------------------------------- */

START_TEST(not_a_zip)
{
    uint8_t junk[512];
    uint32_t s = 42;
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (uint8_t)lcg(&s);
    struct armature *arm;
    struct eng_error err;
    int rc = load_bytes(junk, sizeof junk, NULL, &arm, &err);
    check_msg(&err, rc, BADF, "not a .skf file (zip archive): ", PREFIX);
    ck_assert_uint_gt(strlen(err.msg), strlen("not a .skf file (zip archive): "));
    /* a PNG is not a zip either */
    void *png;
    size_t plen;
    ck_assert_int_eq(th_png(4, 4, th_fill, &png, &plen), 0);
    rc = load_bytes(png, plen, NULL, &arm, &err);
    check_msg(&err, rc, BADF, "not a .skf file (zip archive): ", PREFIX);
    free(png);
}
END_TEST

START_TEST(truncated_zip)
{
    void *buf;
    size_t len;
    valid_skf(&buf, &len);
    struct armature *arm;
    struct eng_error err;
    /* without its end: no central directory */
    int rc = load_bytes(buf, len - 30, NULL, &arm, &err);
    check_msg(&err, rc, BADF, "a .skf (zip archive) cut short or damaged: ", PREFIX);
    free(buf);
}
END_TEST

START_TEST(empty_input)
{
    /* libzip reads zero bytes as an empty archive: the loader says what it is first */
    struct armature *arm;
    struct eng_error err;
    char none = 0;
    int rc = load_bytes(&none, 0, NULL, &arm, &err);
    check_msg(&err, rc, BADF, "the file is empty: not a .skf", EXACT);
    /* bytes that are no zip at all */
    static const char text[] = "# a README, not an armature\n";
    rc = load_bytes(text, sizeof text - 1, NULL, &arm, &err);
    check_msg(&err, rc, BADF, "not a .skf file (zip archive): ", PREFIX);
}
END_TEST

START_TEST(corrupt_member)
{
    /* the central directory is intact but armature.json's compressed data is garbage */
    void *buf;
    size_t len;
    valid_skf(&buf, &len);
    uint8_t *z = buf;
    ck_assert(z[0] == 'P' && z[1] == 'K' && z[2] == 3 && z[3] == 4);
    size_t name_len = z[26] | (size_t)z[27] << 8, extra_len = z[28] | (size_t)z[29] << 8;
    size_t csize = z[18] | (size_t)z[19] << 8 | (size_t)z[20] << 16 | (size_t)z[21] << 24;
    ck_assert_uint_eq(name_len, strlen("armature.json"));
    ck_assert(!memcmp(z + 30, "armature.json", name_len));
    ck_assert_uint_gt(csize, 16);
    size_t data = 30 + name_len + extra_len;
    ck_assert_uint_le(data + csize, len);
    for (size_t i = 4; i < csize; i++)
        z[data + i] ^= 0x5a;
    struct armature *arm;
    struct eng_error err;
    int rc = load_bytes(buf, len, NULL, &arm, &err);
    check_msg(&err, rc, BADF, "armature.json: cannot be read from the archive (corrupt?)", EXACT);
    free(buf);
}
END_TEST

/* A member whose bytes no longer match its CRC-32 (here: the CRC fields changed, so that the
 * data still inflates) is a damaged archive, not an armature: libzip only checks at the end of
 * a read, which the loader must reach. */
START_TEST(zip_crc_mismatch_is_refused)
{
    void *buf;
    size_t len;
    valid_skf(&buf, &len);
    uint8_t *z = buf;
    int changed = 0;
    for (size_t i = 0; i + 46 + 13 <= len; i++) {
        bool local = !memcmp(z + i, "PK\3\4", 4) && !memcmp(z + i + 30, "armature.json", 13);
        bool central = !memcmp(z + i, "PK\1\2", 4) && !memcmp(z + i + 46, "armature.json", 13);
        if (local || central) {
            z[i + (local ? 14 : 16)] ^= 0x01; /* the CRC's low byte */
            changed++;
        }
    }
    ck_assert_int_eq(changed, 2);
    struct armature *arm;
    struct eng_error err;
    int rc = load_bytes(buf, len, NULL, &arm, &err);
    check_msg(&err, rc, BADF, "armature.json: its CRC-32 does not match: the archive is damaged",
              EXACT);
    free(buf);
}
END_TEST

/* Renames every member called from (in its local and its central header) to to, of the same
 * length: libzip will not write two members of one name, other zip tools do. */
static void rename_member(uint8_t *z, size_t len, const char *from, const char *to)
{
    size_t n = strlen(from);
    ck_assert_uint_eq(strlen(to), n);
    int changed = 0;
    for (size_t i = 0; i + 46 + n <= len; i++) {
        bool local = !memcmp(z + i, "PK\3\4", 4) && !memcmp(z + i + 30, from, n);
        bool central = !memcmp(z + i, "PK\1\2", 4) && !memcmp(z + i + 46, from, n);
        if (local || central) {
            memcpy(z + i + (local ? 30 : 46), to, n);
            changed++;
        }
    }
    ck_assert_int_eq(changed, 2);
}

/* Two members of one name: readers disagree on which counts (libzip the first, most others
 * the last), so the file is refused rather than read as one of them. Either copy alone would
 * load. */
START_TEST(zip_member_twice_is_refused)
{
    char *j = dq(VALID);
    void *png;
    size_t png_len;
    static const uint8_t fill[4] = {1, 2, 3, 255};
    ck_assert_int_eq(th_png(64, 64, fill, &png, &png_len), 0);
    const char *names[4] = {"armature.json", "atlas0.png", "armature.jsoo", "atlas0.pnh"};
    const void *data[4] = {j, png, j, png};
    size_t lens[4] = {strlen(j), png_len, strlen(j), png_len};
    for (int twice = 0; twice < 2; twice++) {
        void *buf;
        size_t len;
        ck_assert_int_eq(th_zip(names, data, lens, 4, &buf, &len), 0);
        struct armature *arm = NULL;
        struct eng_error err;
        ck_assert_int_eq(load_bytes(buf, len, NULL, &arm, &err), 0); /* the odd names unread */
        armature_free(arm);
        rename_member(buf, len, twice ? "atlas0.pnh" : "armature.jsoo",
                      twice ? "atlas0.png" : "armature.json");
        int rc = load_bytes(buf, len, NULL, &arm, &err);
        check_msg(&err, rc, BADF,
                  twice ? "atlas0.png is in the archive more than once: which copy is meant is "
                          "unclear (rewrite the archive with one)"
                        : "armature.json is in the archive more than once: which copy is meant "
                          "is unclear (rewrite the archive with one)",
                  EXACT);
        free(buf);
    }
    free(png);
    free(j);
}
END_TEST

/* Two atlases may name one member: it is read once for each, and that is no repeat. */
START_TEST(two_atlases_of_one_member_load)
{
    struct armature *arm =
        must_load("{'atlases':[{'filename':'atlas0.png'},{'filename':'atlas0.png'}],"
                  "'bones':[{'id':0,'name':'root'}]}",
                  1);
    ck_assert_uint_eq(arm->atlas_count, 2);
    ck_assert_uint_eq(arm->atlases[1].width, 64);
    armature_free(arm);
}
END_TEST

START_TEST(zip_without_armature_json)
{
    static const char readme[] = "hello";
    const char *names[1] = {"readme.md"};
    const void *data[1] = {readme};
    size_t lens[1] = {5};
    void *buf;
    size_t len;
    ck_assert_int_eq(th_zip(names, data, lens, 1, &buf, &len), 0);
    struct armature *arm;
    struct eng_error err;
    int rc = load_bytes(buf, len, NULL, &arm, &err);
    check_msg(&err, rc, BADF, "armature.json is not in the archive", EXACT);
    free(buf);
}
END_TEST

START_TEST(undecodable_png)
{
    static const char garbage[] = "this is not a PNG file at all, just some bytes";
    void *buf;
    size_t len;
    zip_with("{'atlases':[{'filename':'atlas0.png'}]}", "atlas0.png", garbage, sizeof garbage - 1,
             &buf, &len);
    struct armature *arm;
    struct eng_error err;
    int rc = load_bytes(buf, len, NULL, &arm, &err);
    check_msg(&err, rc, BADF, "atlas0.png: undecodable PNG: ", PREFIX);
    ck_assert_uint_gt(strlen(err.msg), strlen("atlas0.png: undecodable PNG: "));
    free(buf);
}
END_TEST

START_TEST(truncated_png)
{
    /* a valid header but the image data cut short: fails while decoding the pixels */
    void *png, *buf;
    size_t plen, len;
    ck_assert_int_eq(th_png(64, 64, th_fill, &png, &plen), 0);
    ck_assert_uint_gt(plen, 60);
    zip_with("{'atlases':[{'filename':'atlas0.png'}]}", "atlas0.png", png, plen - 20, &buf, &len);
    struct armature *arm;
    struct eng_error err;
    int rc = load_bytes(buf, len, NULL, &arm, &err);
    check_msg(&err, rc, BADF, "atlas0.png: undecodable PNG: ", PREFIX);
    free(buf);
    free(png);
}
END_TEST

START_TEST(load_file_missing)
{
    struct armature *arm = (struct armature *)(void *)&arm;
    struct eng_error err = {0};
    int rc = armature_load_file("/nonexistent/check_load/none.skf", NULL, &arm, &err);
    ck_assert_ptr_null(arm);
    check_msg(&err, rc, ENG_EIO, "/nonexistent/check_load/none.skf: No such file or directory",
              EXACT);
}
END_TEST

START_TEST(load_file_read_error)
{
    /* a directory, and a FIFO nobody writes to: refused as what they are, at once (a
     * blocking open of the FIFO would wait for a writer for ever) */
    char dir[] = "/tmp/check_load_dir_XXXXXX", fifo[64], want[128];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(fifo, sizeof fifo, "%s/fifo.skf", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    const char *const paths[] = {dir, fifo};
    for (int i = 0; i < 2; i++) {
        struct armature *arm = (struct armature *)(void *)&arm;
        struct eng_error err = {0};
        int rc = armature_load_file(paths[i], NULL, &arm, &err);
        ck_assert_ptr_null(arm);
        snprintf(want, sizeof want, "%s: not a regular file", paths[i]);
        check_msg(&err, rc, ENG_EIO, want, EXACT);
    }
    unlink(fifo);
    rmdir(dir);
}
END_TEST

START_TEST(error_without_err_struct)
{
    char *j = dq("{'bones':[{'parent_id':9}]}");
    void *buf;
    size_t len;
    ck_assert_int_eq(th_skf(j, 0, &buf, &len), 0);
    free(j);
    struct armature *arm = NULL;
    ck_assert_int_eq(armature_load(buf, len, NULL, &arm, NULL), BADF);
    ck_assert_ptr_null(arm);
    free(buf);
}
END_TEST

/* ---- limits -------------------------------------------------------------------------------- */

static struct load_limits small_limits(void)
{
    struct load_limits lim;
    memset(&lim, 0, sizeof lim); /* zero = default */
    return lim;
}

START_TEST(limit_bones)
{
    struct load_limits lim = small_limits();
    lim.max_bones = 2;
    expect_err("{'bones':[{'id':0},{'id':1},{'id':2}]}", 0, &lim, ENG_ELIMIT,
               "armature.json: 3 bones exceed the limit of 2", EXACT);
    struct armature *arm;
    struct eng_error err;
    ck_assert_int_eq(load_q("{'bones':[{'id':0},{'id':1}]}", 0, &lim, &arm, &err), 0);
    armature_free(arm);
}
END_TEST

/* The JSON is bounded before jansson builds anything: by its size (from the zip directory,
 * before inflating), then by a count of its values. A 100 KB upload once held 64 MiB of
 * numbers in an unknown key and took a gigabyte to parse. */
START_TEST(limit_json_size_and_values)
{
    struct load_limits lim = small_limits();
    lim.max_json = 64;
    static const char small[] = "{'bones':[{'id':0}]}";
    struct armature *arm;
    struct eng_error err;
    ck_assert_int_eq(load_q(small, 0, &lim, &arm, &err), 0);
    armature_free(arm);
    /* 20 unknown numbers make it 80 bytes */
    expect_err("{'bones':[{'id':0}],'junk':[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]}",
               0, &lim, ENG_ELIMIT, "armature.json: 80 bytes uncompressed exceed the limit of 64",
               EXACT);
    lim.max_json = 0; /* the default */
    lim.max_json_values = 10;
    /* commas and brackets inside strings do not count: 6 values */
    ck_assert_int_eq(load_q("{'bones':[{'id':0,'name':',,,[[{{,,,,,,,,,'}]}", 0, &lim, &arm, &err),
                     0);
    armature_free(arm);
    expect_err("{'bones':[{},{},{},{},{},{},{},{},{},{},{}]}", 0, &lim, ENG_ELIMIT,
               "armature.json: more than 10 JSON values (counted before parsing)", EXACT);
    /* the size is known before reading, for servers that schedule big parses apart */
    void *buf;
    size_t len;
    uint64_t size = 0;
    char *j = dq(small);
    ck_assert_int_eq(th_skf(j, 0, &buf, &len), 0);
    ck_assert_int_eq(armature_json_size(buf, len, &size, &err), 0);
    ck_assert_uint_eq(size, strlen(j));
    ck_assert_int_eq(armature_json_size("not a zip", 9, &size, &err), ENG_EBADFILE);
    free(buf);
    free(j);
}
END_TEST

/* {'bones':[{}],'KEY':[{},{},...]} with n empty objects: malloc'd. */
static char *many_of(const char *key, size_t n)
{
    size_t cap = 64 + strlen(key) + 3 * n;
    char *j = malloc(cap);
    ck_assert_ptr_nonnull(j);
    size_t at = (size_t)snprintf(j, cap, "{'bones':[{}],'%s':[", key);
    for (size_t i = 0; i < n; i++)
        at += (size_t)snprintf(j + at, cap - at, i ? ",{}" : "{}");
    snprintf(j + at, cap - at, "]}");
    return j;
}

/* Animations, styles and atlases are at most 65535 each: a LOAD reply counts each in 16
 * bits, and 65,537 animations once made one that said 1 and listed them all. */
START_TEST(limit_listed)
{
    static const char *const keys[] = {"animations", "styles", "atlases"};
    for (size_t k = 0; k < 3; k++) {
        char *j = many_of(keys[k], 65536), want[96];
        snprintf(want, sizeof want, "armature.json: 65536 %s exceed the limit of 65535", keys[k]);
        expect_err(j, 0, NULL, ENG_ELIMIT, want, EXACT);
        free(j);
    }
    char *j = many_of("animations", 65535);
    struct armature *arm;
    struct eng_error err;
    ck_assert_msg(load_q(j, 0, NULL, &arm, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(arm->anim_count, 65535);
    armature_free(arm);
    free(j);
}
END_TEST

/* Styles index every texture name: 4100 styles and 4100 names would take 16.8 million
 * entries, past the limit of 16 Mi, refused before any is made. */
START_TEST(limit_style_index)
{
    enum { N = 4100 };
    size_t cap = 64 + 24 * (size_t)N + 4 * (size_t)N; /* {'name':'tNNNN'}, and ,{} */
    char *j = malloc(cap);
    ck_assert_ptr_nonnull(j);
    size_t at = (size_t)snprintf(
        j, cap, "{'bones':[{}],'atlases':[{'filename':'atlas0.png'}],'styles':[{'textures':[");
    for (int i = 0; i < N; i++)
        at += (size_t)snprintf(j + at, cap - at, "%s{'name':'t%d'}", i ? "," : "", i);
    at += (size_t)snprintf(j + at, cap - at, "]}");
    for (int i = 1; i < N; i++)
        at += (size_t)snprintf(j + at, cap - at, ",{}");
    snprintf(j + at, cap - at, "]}");
    expect_err(j, 1, NULL, ENG_ELIMIT,
               "armature.json: 4100 styles x 4100 texture names exceed the limit of 16777216",
               EXACT);
    free(j);
}
END_TEST

START_TEST(limit_keyframes)
{
    struct load_limits lim = small_limits();
    lim.max_keyframes = 4;
    static const char json[] = "{'bones':[{}],'animations':[{'keyframes':[{},{},{}]},"
                               "{'keyframes':[{},{}]}]}";
    expect_err(json, 0, &lim, ENG_ELIMIT, "armature.json: 5 keyframes exceed the limit of 4",
               EXACT);
    lim.max_keyframes = 5;
    struct armature *arm;
    struct eng_error err;
    ck_assert_int_eq(load_q(json, 0, &lim, &arm, &err), 0);
    armature_free(arm);
}
END_TEST

START_TEST(limit_vertices)
{
    struct load_limits lim = small_limits();
    lim.max_vertices = 3;
    static const char json[] = "{'bones':[{'vertices':[{},{}]},{'vertices':[{},{}]}]}";
    expect_err(json, 0, &lim, ENG_ELIMIT, "armature.json: 4 mesh vertices exceed the limit of 3",
               EXACT);
    lim.max_vertices = 4;
    struct armature *arm;
    struct eng_error err;
    ck_assert_int_eq(load_q(json, 0, &lim, &arm, &err), 0);
    armature_free(arm);
    /* index, bind and chain arrays are capped at 16 entries per allowed vertex */
    lim.max_vertices = 1;
    expect_err("{'bones':[{'vertices':[{}],'indices':[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}]}", 0,
               &lim, ENG_ELIMIT, "armature.json: mesh or IK arrays too large", EXACT);
}
END_TEST

START_TEST(limit_atlas_pixels)
{
    struct load_limits lim = small_limits();
    lim.max_atlas_pixels = 64 * 64 - 1;
    static const char json[] = "{'atlases':[{'filename':'atlas0.png'}]}";
    expect_err(json, 1, &lim, ENG_ELIMIT, "atlas0.png: 64x64 pixels exceed the limit of 4095",
               EXACT);
    lim.max_atlas_pixels = 64 * 64;
    struct armature *arm;
    struct eng_error err;
    ck_assert_int_eq(load_q(json, 1, &lim, &arm, &err), 0);
    armature_free(arm);
    /* all atlases together: one small PNG named again and again once decoded to gigabytes */
    static const char twice[] = "{'atlases':[{'filename':'atlas0.png'},{'filename':'atlas0.png'}]}";
    lim.max_total_atlas_pixels = 2 * 64 * 64 - 1;
    expect_err(twice, 1, &lim, ENG_ELIMIT,
               "atlas0.png: 64x64 pixels more exceed the limit of 8191 for all atlases", EXACT);
    lim.max_total_atlas_pixels = 2 * 64 * 64;
    ck_assert_int_eq(load_q(twice, 1, &lim, &arm, &err), 0);
    armature_free(arm);
}
END_TEST

START_TEST(limit_uncompressed)
{
    char *j = dq("{'atlases':[{'filename':'atlas0.png'}]}");
    size_t jlen = strlen(j);
    void *png, *buf;
    size_t plen, len;
    ck_assert_int_eq(th_png(64, 64, th_fill, &png, &plen), 0);
    const char *names[2] = {"armature.json", "atlas0.png"};
    const void *data[2] = {j, png};
    size_t lens[2] = {jlen, plen};
    ck_assert_int_eq(th_zip(names, data, lens, 2, &buf, &len), 0);

    struct load_limits lim = small_limits();
    struct armature *arm;
    struct eng_error err;
    char want[256];
    /* armature.json alone is over */
    lim.max_uncompressed = jlen - 1;
    int rc = load_bytes(buf, len, &lim, &arm, &err);
    snprintf(want, sizeof want,
             "armature.json: %zu bytes uncompressed exceed the remaining limit of %zu", jlen,
             jlen - 1);
    check_msg(&err, rc, ENG_ELIMIT, want, EXACT);
    /* armature.json fits, the atlas does not: the budget is a total */
    lim.max_uncompressed = jlen + plen - 1;
    rc = load_bytes(buf, len, &lim, &arm, &err);
    snprintf(want, sizeof want,
             "atlas0.png: %zu bytes uncompressed exceed the remaining limit of %zu", plen,
             plen - 1);
    check_msg(&err, rc, ENG_ELIMIT, want, EXACT);
    /* exactly the total loads */
    lim.max_uncompressed = jlen + plen;
    rc = load_bytes(buf, len, &lim, &arm, &err);
    ck_assert_msg(rc == 0, "%s", err.msg);
    armature_free(arm);
    free(j);
    free(png);
    free(buf);
}
END_TEST

/* ---- fuzz-style mutations ------------------------------------------------------------------ */

static const char *const FUZZ_BASE =
    "{'version':'0.5.0','ik_root_ids':[0],"
    "'atlases':[{'filename':'atlas0.png','size':{'x':64,'y':64}}],"
    "'bones':[{'id':0,'name':'a','tex':'t','ik_target_id':2,'ik_bone_ids':[0,1]},"
    "{'id':1,'parent_id':0,'pos':{'x':1,'y':2},'vertices':[{'id':0,'pos':{'x':0,'y':0}},"
    "{'id':1,'uv':{'x':1,'y':0}},{'id':2}],'indices':[0,1,2],"
    "'binds':[{'bone_id':0,'verts':[{'id':1,'weight':0.5}]}]},"
    "{'id':2,'parent_id':-1,'zindex':3}],"
    "'animations':[{'name':'go','fps':24,'keyframes':["
    "{'frame':0,'bone_id':1,'element':'Rotation','value':1,'next_kf':2},"
    "{'frame':0,'bone_id':0,'element':'Texture','value_str':'t','next_kf':-1},"
    "{'frame':8,'bone_id':1,'element':'Rotation','value':2.5,'next_kf':-1},"
    "{'frame':9,'bone_id':2,'element':'Zindex','value':4}]}],"
    "'styles':[{'id':0,'name':'s','textures':[{'name':'t','offset':{'x':8,'y':8},"
    "'size':{'x':16,'y':16},'atlas_idx':0}]}]}";

/* The same armature in the 0.6/0.7 layout, with pivots, tint, physics and mimic keys. */
static const char *const FUZZ_BASE_07 =
    "{'version':'0.7.0',"
    "'atlases':[{'filename':'atlas0.png','size':{'x':64,'y':64}}],"
    "'bones':[{'id':0,'name':'a','visuals_id':0,'ik_family_id':0,'physics_id':-1},"
    "{'id':1,'parent_id':0,'pos':{'x':1,'y':2},'visuals_id':1,'ik_family_id':0,'physics_id':0},"
    "{'id':2,'parent_id':-1,'visuals_id':2}],"
    "'visuals':[{'tex':'t','pivot_pos':{'x':0.25,'y':-0.5},'pivot_rot':0.5},"
    "{'tex':'t','vertices':[{'id':0,'pos':{'x':0,'y':0}},{'id':1,'uv':{'x':1,'y':0}},{'id':2}],"
    "'indices':[0,1,2],'binds':[{'bone_id':0,'verts':[{'id':1,'weight':0.5}]}],"
    "'pivot_scale':{'x':2,'y':0.5},'tint':{'r':1,'g':0.5,'b':0.25,'a':1}},{'zindex':3}],"
    "'inverse_kinematics':[{'id':0,'target_id':2,'bone_ids':[0,1],'mode':'Arc',"
    "'constraint':'Clockwise','mimic_target':false}],"
    "'physics':[{'pos_damping':3,'pos_ratio':0.5,'sway':1,'rot_bounce':0.5}],"
    "'animations':[{'name':'go','fps':24,'keyframes':["
    "{'frame':0,'bone_id':1,'element':'Rotation','value':1,'next_kf':3},"
    "{'frame':0,'bone_id':1,'element':'MimicTarget','value':1},"
    "{'frame':0,'bone_id':0,'element':'Texture','value_str':'t','next_kf':-1},"
    "{'frame':8,'bone_id':1,'element':'Rotation','value':2.5,'next_kf':-1},"
    "{'frame':9,'bone_id':2,'element':'TintA','value':0.5}]}],"
    "'styles':[{'id':0,'name':'s','textures':[{'name':'t','offset':{'x':8,'y':8},"
    "'size':{'x':16,'y':16},'atlas_idx':0}]}]}";

/* Start and length of the n-th number token outside strings (n modulo their count). */
static bool nth_number(const char *s, unsigned n, size_t *start, size_t *len)
{
    size_t pos[256], lens[256];
    unsigned count = 0;
    bool in_str = false;
    for (size_t i = 0; s[i];) {
        if (s[i] == '"') {
            in_str = !in_str;
            i++;
        } else if (!in_str && (s[i] == '-' || (s[i] >= '0' && s[i] <= '9'))) {
            size_t j = i + 1;
            while (s[j] && strchr("0123456789.eE+-", s[j]))
                j++;
            if (count < 256) {
                pos[count] = i;
                lens[count++] = j - i;
            }
            i = j;
        } else {
            i++;
        }
    }
    if (!count)
        return false;
    *start = pos[n % count];
    *len = lens[n % count];
    return true;
}

/* Mutation i of base (caller frees). */
static char *mutate(const char *base, unsigned i, uint32_t *seed)
{
    size_t n = strlen(base);
    char *m = malloc(n + 64);
    ck_assert_ptr_nonnull(m);
    if (i < 70) { /* truncate at every few bytes */
        size_t cut = (size_t)i * n / 70;
        memcpy(m, base, cut);
        m[cut] = 0;
    } else if (i < 130) { /* flip one character (and a second one every other time) */
        static const char repl[] = "{}[]\":,01-9.eaxtn \\";
        memcpy(m, base, n + 1);
        m[lcg(seed) % n] = repl[lcg(seed) % (sizeof repl - 1)];
        if (i % 2)
            m[lcg(seed) % n] = repl[lcg(seed) % (sizeof repl - 1)];
    } else { /* replace a number with a string or another hostile value */
        static const char *const subst[] = {"\"1\"", "\"\"", "\"x\"", "-1", "1e9",  "-2147483649",
                                            "0.5",   "null", "[]",    "{}", "true", "99999999999"};
        size_t at, len;
        ck_assert(nth_number(base, i - 130, &at, &len));
        const char *r = (i - 130) < 40 ? subst[(i - 130) % 3] : subst[lcg(seed) % N_ELEMS(subst)];
        snprintf(m, n + 64, "%.*s%s%s", (int)at, base, r, base + at + len);
    }
    return m;
}

START_TEST(fuzz_mutations_never_crash)
{
    char *base = dq(_i ? FUZZ_BASE_07 : FUZZ_BASE);
    /* the unmutated file loads: mutations start from a valid armature */
    struct armature *arm;
    struct eng_error err;
    void *buf;
    size_t len;
    ck_assert_int_eq(th_skf(base, 1, &buf, &len), 0);
    int rc = load_bytes(buf, len, NULL, &arm, &err);
    free(buf);
    ck_assert_msg(rc == 0, "base does not load: %s", err.msg);
    ck_assert_uint_eq(arm->ik_root_count, 1);
    ck_assert_int_eq(arm->layout, _i ? ARM_LAYOUT_ARRAYS : ARM_LAYOUT_BONES);
    armature_free(arm);

    uint32_t seed = 12345;
    unsigned ok = 0, bad_json = 0, other = 0;
    bool verbose = getenv("CHECK_LOAD_VERBOSE") != NULL;
    for (unsigned i = 0; i < 200; i++) {
        char *m = mutate(base, i, &seed);
        ck_assert_int_eq(th_skf(m, 1, &buf, &len), 0);
        rc = load_bytes(buf, len, NULL, &arm, &err);
        free(buf);
        if (verbose)
            fprintf(stderr, "mutation %u: %d %s\n", i, rc, rc ? err.msg : "loaded");
        if (rc == 0) {
            ok++;
            armature_free(arm);
        } else {
            ck_assert_msg(rc < 0 && rc >= ENG_EIO, "mutation %u: code %d", i, rc);
            ck_assert_msg(rc == BADF || rc == ENG_ELIMIT || rc == ENG_EUNSUPPORTED,
                          "mutation %u: unexpected code %d (%s): %s", i, rc, eng_strerror(rc),
                          err.msg);
            ck_assert_int_eq(err.code, rc);
            ck_assert_msg(err.msg[0] != 0, "mutation %u: empty message", i);
            /* every message names its place: the JSON or the atlas */
            ck_assert_msg(!strncmp(err.msg, "armature.json: ", 15) ||
                              !strncmp(err.msg, "atlas0.png: ", 12),
                          "mutation %u: message names no place: %s", i, err.msg);
            if (strstr(err.msg, "invalid JSON"))
                bad_json++;
            else
                other++;
        }
        free(m);
    }
    free(base);
    /* the mutations reach past the JSON parser, and some still load */
    ck_assert_uint_gt(ok, 0);
    ck_assert_uint_gt(bad_json, 0);
    ck_assert_uint_gt(other, 10);
}
END_TEST

/* ---- suite --------------------------------------------------------------------------------- */

static Suite *load_suite(void)
{
    Suite *s = suite_create("load");
    TCase *tc = tcase_create("valid armature");
    tcase_add_test(tc, valid_counts);
    tcase_add_test(tc, empty_object_loads);
    tcase_add_test(tc, bone_defaults);
    tcase_add_test(tc, bone_values_and_init_defaults);
    tcase_add_test(tc, explicit_init_fields_and_physics);
    tcase_add_test(tc, mesh_and_binds);
    tcase_add_test(tc, ik_families);
    tcase_add_test(tc, parent_listed_after_child);
    tcase_add_test(tc, version_variants_accepted);
    tcase_add_test(tc, load_file_roundtrip);
    suite_add_tcase(s, tc);

    tc = tcase_create("0.6/0.7 layout");
    tcase_add_test(tc, arrays_defaults_when_keys_absent);
    tcase_add_test(tc, arrays_tint_scaled_to_255);
    tcase_add_test(tc, layout_decided_by_keys_not_version);
    tcase_add_test(tc, arrays_ignore_copies_on_bones);
    tcase_add_test(tc, every_physics_field_in_both_layouts);
    tcase_add_test(tc, arrays_shared_visuals_entry);
    tcase_add_test(tc, arrays_family_on_every_chain_bone);
    suite_add_tcase(s, tc);

    tc = tcase_create("atlases");
    tcase_add_test(tc, atlas_decoded_rgba);
    tcase_add_test(tc, atlas_other_size_premultiplied);
    tcase_add_test(tc, atlas_premultiply_and_clear_blocks);
    tcase_add_test(tc, atlas_premultiply_sixteen_at_once);
    tcase_add_test(tc, atlas_reader_matches_libpng);
    tcase_add_test(tc, atlas_reader_declines);
    tcase_add_test(tc, atlas_reader_on_real_atlases);
    tcase_add_test(tc, atlas_skip_pixels);
    suite_add_tcase(s, tc);

    tc = tcase_create("lookups");
    tcase_add_test(tc, texture_resolution_by_style_priority);
    tcase_add_test(tc, texture_first_of_duplicate_names_wins);
    tcase_add_test(tc, many_texture_names);
    tcase_add_test(tc, find_anim_and_style);
    tcase_add_test(tc, index_form_reaches_every_item);
    tcase_add_test(tc, quote_keeps_utf8_not_controls);
    suite_add_tcase(s, tc);

    tc = tcase_create("keyframes");
    tcase_add_test(tc, tracks_grouped_per_bone_and_element);
    tcase_add_test(tc, next_kf_explicit_derived_and_mixed);
    tcase_add_test(tc, derived_next_kf_matches_its_definition);
    tcase_add_test(tc, keyframe_discrete_values);
    suite_add_tcase(s, tc);

    tc = tcase_create("archive errors");
    tcase_add_test(tc, not_a_zip);
    tcase_add_test(tc, truncated_zip);
    tcase_add_test(tc, empty_input);
    tcase_add_test(tc, corrupt_member);
    tcase_add_test(tc, zip_without_armature_json);
    tcase_add_test(tc, zip_member_twice_is_refused);
    tcase_add_test(tc, two_atlases_of_one_member_load);
    tcase_add_test(tc, zip_crc_mismatch_is_refused);
    tcase_add_test(tc, atlas_16bit_is_srgb);
    tcase_add_test(tc, undecodable_png);
    tcase_add_test(tc, truncated_png);
    tcase_add_test(tc, load_file_missing);
    tcase_add_test(tc, load_file_read_error);
    tcase_add_test(tc, error_without_err_struct);
    suite_add_tcase(s, tc);

    tc = tcase_create("json and type errors");
    tcase_add_loop_test(tc, json_error_case, 0, (int)N_ELEMS(json_errors));
    suite_add_tcase(s, tc);

    tc = tcase_create("reference errors");
    tcase_add_loop_test(tc, reference_error_case, 0, (int)N_ELEMS(reference_errors));
    suite_add_tcase(s, tc);

    tc = tcase_create("0.6/0.7 layout errors");
    tcase_add_loop_test(tc, layout_error_case, 0, (int)N_ELEMS(layout_errors));
    suite_add_tcase(s, tc);

    tc = tcase_create("animation errors");
    tcase_add_loop_test(tc, anim_error_case, 0, (int)N_ELEMS(anim_errors));
    suite_add_tcase(s, tc);

    tc = tcase_create("atlas, texture and version errors");
    tcase_add_loop_test(tc, atlas_error_case, 0, (int)N_ELEMS(atlas_errors));
    suite_add_tcase(s, tc);

    tc = tcase_create("limits");
    tcase_add_test(tc, limit_bones);
    tcase_add_test(tc, limit_keyframes);
    tcase_add_test(tc, limit_listed);
    tcase_add_test(tc, limit_style_index);
    tcase_add_test(tc, limit_json_size_and_values);
    tcase_add_test(tc, limit_vertices);
    tcase_add_test(tc, limit_atlas_pixels);
    tcase_add_test(tc, limit_uncompressed);
    suite_add_tcase(s, tc);

    tc = tcase_create("fuzz");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, fuzz_mutations_never_crash, 0, 2); /* 0.5 and 0.7 bases */
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(load_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
