/* What workers run: load, evaluate, draw and encode. No libuv and no locks here; each job
 * touches only itself, the immutable armature and the worker's scratch. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__ /* defined by the headers above */
#include <malloc.h>
#endif

#include "work.h"
#include "confine.h"
#include "engine/load.h"
#include "engine/png.h"
#include "engine/sheet.h"
#include "sha256.h"
#include "skp_cli.h"
#include "skp_json.h"
#include "skp_msg.h"

static struct work *req_of(struct job *job)
{
    return (struct work *)job; /* job is the first member */
}

static void fail(struct work *r, uint16_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(struct work *r, uint16_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    r->status = status;
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    va_end(ap);
}

uint16_t work_status_of(int eng)
{
    switch (eng) {
    case ENG_ENOMEM: return SKP_S_NO_MEMORY;
    case ENG_ELIMIT: return SKP_S_LIMIT;
    case ENG_EINVAL: return SKP_S_BAD_REQUEST;
    case ENG_EIO:
    case ENG_ENOTFOUND: return SKP_S_NOT_FOUND;
    default: return SKP_S_BAD_FILE;
    }
}

const char *work_limit_option(const struct eng_error *err)
{
    if (err->code != ENG_ELIMIT)
        return "";
    switch (err->limit) {
    case ENG_LIMIT_UNCOMPRESSED: return " (--max-skf-mb: 4 times it, uncompressed)";
    case ENG_LIMIT_JSON: return " (--max-json-mb)";
    case ENG_LIMIT_BONES: return " (--max-bones)";
    case ENG_LIMIT_IMAGE_PIXELS: return " (--max-image-pixels)";
    case ENG_LIMIT_REPLY_PIXELS: return " (16 x --max-image-pixels)";
    case ENG_LIMIT_BONE_STEPS: return " (--max-bone-steps)";
    default: return "";
    }
}

static uint16_t status_of(int eng)
{
    return work_status_of(eng);
}

void work_release(struct work *w)
{
    free(w->path);
    free(w->input);
    free(w->body);
    armature_free(w->loaded);
    w->path = NULL;
    w->input = NULL;
    w->body = NULL;
    w->loaded = NULL;
}

/* Allocates a writer of cap bytes for the reply body. */
static bool begin(struct work *r, struct skp_writer *w, size_t cap)
{
    r->body = malloc(cap ? cap : 1);
    if (!r->body) {
        fail(r, SKP_S_NO_MEMORY, "out of memory");
        return false;
    }
    skp_writer_init(w, r->body, cap);
    return true;
}

static void finish(struct work *r, struct skp_writer *w)
{
    if (w->err) {
        free(r->body);
        r->body = NULL;
        fail(r, SKP_S_INTERNAL, "reply encoding failed (%d)", w->err);
        return;
    }
    r->body_len = w->len;
}

/* ---- LOAD --------------------------------------------------------------------------------- */

/* Reads the file, or finds it is the known version (unchanged) and reads nothing. */
static int read_file(struct work *r)
{
    void *buf;
    struct confine_version v = {.known = r->has_known ? &r->known : NULL,
                                .settle_ns = r->settle_ns,
                                .check_only = r->check_run != NULL};
    r->status = confine_read(r->root_fd, r->path, r->max_skf, &v, &buf, &r->input_len, r->msg,
                             sizeof r->msg);
    if (r->status)
        return -1;
    r->sig = v.sig;
    r->unchanged = v.unchanged;
    r->settled = v.settled;
    r->input = buf;
    return 0;
}

void work_load_hash(struct job *job, struct worker *w)
{
    (void)w;
    struct work *r = req_of(job);
    if (!r->input && read_file(r))
        return;
    if (r->unchanged) {
        memcpy(r->digest, r->known_digest, sizeof r->digest);
        r->json_size = 0; /* asked only when the digest is not cached: then it is read again */
        return;
    }
    if (sha256(r->input, r->input_len, r->digest)) {
        fail(r, SKP_S_NO_MEMORY, "out of memory hashing the file");
        return;
    }
    struct eng_error err; /* a file that is no zip fails its parse, with the message */
    if (armature_json_size(r->input, r->input_len, &r->json_size, &err))
        r->json_size = 0;
}

void work_checked(struct job *job, struct worker *w)
{
    struct work *r = req_of(job);
    if (read_file(r) || !r->unchanged) /* changed: opened, not read; the LOAD reads it */
        return;
    r->check_run(job, w);
}

static void trim_memory(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

void work_load_parse(struct job *job, struct worker *w)
{
    (void)w;
    struct work *r = req_of(job);
    struct load_limits lim;
    struct eng_error err;
    load_limits_default(&lim);
    lim.max_uncompressed = r->max_skf * 4;
    lim.max_json = r->max_json;
    lim.max_bones = r->max_bones;
    int rc = armature_load(r->input, r->input_len, &lim, &r->loaded, &err);
    /* A big or failed parse leaves its freed memory in the allocator's arenas: hand it back,
     * or a hostile upload pins it after its error reply. */
    if (rc || r->json_size > WORK_BIG_PARSE_BYTES)
        trim_memory();
    if (rc) {
        fail(r, status_of(rc), "%s%s", err.msg, work_limit_option(&err));
    } else if (r->loaded->mem_bytes > r->max_arm_bytes) {
        fail(r, SKP_S_LIMIT, "the armature takes %zu MiB, more than the whole cache (--cache-mb)",
             (r->loaded->mem_bytes + (1u << 20) - 1) >> 20);
        armature_free(r->loaded);
        r->loaded = NULL;
    }
}

void work_load(struct job *job, struct worker *w)
{
    work_load_hash(job, w);
    if (!req_of(job)->status)
        work_load_parse(job, w);
}

static size_t summary_size(const struct armature *arm, bool bones)
{
    size_t n = 32 + 4 + 2 + 2 + 2;
    for (uint32_t a = 0; a < arm->anim_count; a++)
        n += 2 + strlen(arm->anims[a].name) + 12;
    for (uint32_t s = 0; s < arm->style_count; s++)
        n += 2 + strlen(arm->styles[s].name);
    for (uint32_t b = 0; bones && b < arm->bone_count; b++)
        n += 2 + strlen(arm->bones[b].name) + 4;
    return n;
}

static void put_name(struct skp_writer *w, const char *s)
{
    size_t n = strlen(s);
    skp_write_str(w, s, n > SKP_MAX_NAME ? SKP_MAX_NAME : n);
}

uint8_t *work_summary(const struct armature *arm, const uint8_t *id, bool bones, size_t *len)
{
    size_t cap = summary_size(arm, bones);
    uint8_t *body = malloc(cap);
    if (!body)
        return NULL;
    struct skp_writer w;
    skp_writer_init(&w, body, cap);
    if (!bones) /* LOAD replies with the id first; INFO was asked by id */
        skp_write_raw(&w, id, 32);
    skp_write_u32(&w, arm->bone_count);
    skp_write_u16(&w, (uint16_t)arm->anim_count);
    for (uint32_t a = 0; a < arm->anim_count; a++) {
        put_name(&w, arm->anims[a].name);
        skp_write_f64(&w, arm->anims[a].fps);
        skp_write_u32(&w, (uint32_t)(arm->anims[a].last_frame + 1));
    }
    skp_write_u16(&w, (uint16_t)arm->style_count);
    for (uint32_t s = 0; s < arm->style_count; s++)
        put_name(&w, arm->styles[s].name);
    skp_write_u16(&w, (uint16_t)arm->atlas_count);
    for (uint32_t b = 0; bones && b < arm->bone_count; b++) {
        put_name(&w, arm->bones[b].name);
        skp_write_i32(&w, arm->bones[b].parent);
    }
    if (w.err) {
        free(body);
        return NULL;
    }
    *len = w.len;
    return body;
}

/* ---- evaluation --------------------------------------------------------------------------- */

_Static_assert(sizeof(struct vec2) == 2 * sizeof(double), "vertices are written as doubles");

/* The pose the request evaluates on: the instance's, or the worker's scratch reset. */
static struct pose *pose_for(struct work *r, struct worker *w)
{
    struct pose *p = r->pose ? r->pose : worker_pose(w, r->arm, r->arm_serial);
    if (!p)
        fail(r, SKP_S_NO_MEMORY, "out of memory");
    return p;
}

static struct pose *evaluate(struct work *r, struct worker *w, const struct construct_opts *o)
{
    struct pose *p = pose_for(r, w);
    if (!p)
        return NULL;
    eval_run(p, &r->eval, o);
    struct eng_error err;
    int rc = pose_check_finite(p, &err);
    if (rc) {
        fail(r, work_status_of(rc), "%s%s", err.msg, work_limit_option(&err));
        return NULL;
    }
    return p;
}

int work_pose_json(const struct pose *p, bool matrix, struct byte_buf *out)
{
    const struct armature *arm = p->arm;
    uint32_t n = arm->bone_count;
    struct skp_bone_view *views = calloc(n ? n : 1, sizeof *views);
    double *m = matrix ? calloc(n ? n : 1, 6 * sizeof *m) : NULL;
    if (!views || (matrix && !m)) {
        free(views);
        free(m);
        return -1;
    }
    _Static_assert(sizeof(struct vec2) == 2 * sizeof(double), "vertices are x, y pairs");
    for (uint32_t b = 0; b < n; b++) {
        const struct bone_out *o = &p->out[b];
        const struct arm_bone *bone = &arm->bones[b];
        views[b] = (struct skp_bone_view){{o->pos.x, o->pos.y},
                                          o->rot,
                                          {o->scale.x, o->scale.y},
                                          o->hidden,
                                          o->zindex,
                                          armature_tex_name(arm, o->tex),
                                          bone->vert_len,
                                          (const double *)(p->verts + bone->vert_off),
                                          bone->vert_len > 0,
                                          NULL,
                                          NULL};
        if (matrix) { /* what the POSE reply carries besides */
            pose_bone_matrix(p, b, m + 6 * b);
            views[b].matrix = m + 6 * b;
            views[b].tint = o->tint;
        }
    }
    /* Formatting doubles is most of the cost: one pass into room for the longest output
     * (a second only if a name was longer than guessed). */
    size_t guess = 64 + (size_t)n * (matrix ? 440 : 200) + (size_t)arm->vert_count * 56;
    for (uint32_t b = 0; b < n; b++)
        guess += strlen(views[b].tex);
    int rc = byte_buf_reserve(out, guess + 1); /* room past out->len */
    size_t len = rc ? 0 : skp_pose_json((char *)out->data + out->len, guess + 1, views, n);
    if (!rc && len > guess && !(rc = byte_buf_reserve(out, len + 1)))
        skp_pose_json((char *)out->data + out->len, len + 1, views, n);
    if (!rc)
        out->len += len;
    free(views);
    free(m);
    return rc ? -1 : 0;
}

/* A reply body of JSON text (the HTTP front's). */
static void json_body(struct work *r, const struct pose *p)
{
    struct byte_buf b = {NULL, 0, 0};
    if (work_pose_json(p, r->output == WORK_OUT_JSON_MATRIX, &b)) {
        free(b.data);
        fail(r, SKP_S_NO_MEMORY, "out of memory");
        return;
    }
    r->body = b.data;
    r->body_len = b.len;
}

void work_pose(struct job *job, struct worker *w)
{
    struct work *r = req_of(job);
    struct pose *p = evaluate(r, w, &r->opts);
    if (!p)
        return;
    if (r->output != WORK_OUT_WIRE) {
        json_body(r, p);
        return;
    }
    const struct armature *arm = p->arm;
    size_t name_max = arm->tex_name_max < SKP_MAX_NAME ? arm->tex_name_max : SKP_MAX_NAME;
    size_t cap = 4 + (size_t)arm->bone_count * (15 * 8 + 1 + 4 + 2 + name_max + 4) +
                 (size_t)arm->vert_count * 16;
    struct skp_writer wr;
    if (!begin(r, &wr, cap))
        return;
    skp_write_u32(&wr, arm->bone_count);
    for (uint32_t b = 0; b < arm->bone_count; b++) {
        const struct bone_out *o = &p->out[b];
        const struct arm_bone *bone = &arm->bones[b];
        /* Every member set one by one: an initializer would have the compiler clear the
         * whole record first (a `rep stos` per bone, 3% of a pipelined POSE's time). */
        struct skp_pose_bone rec;
        rec.fields[0] = o->pos.x;
        rec.fields[1] = o->pos.y;
        rec.fields[2] = o->rot;
        rec.fields[3] = o->scale.x;
        rec.fields[4] = o->scale.y;
        pose_bone_matrix(p, b, rec.fields + 5);
        rec.hidden = o->hidden;
        rec.zindex = o->zindex;
        rec.tex = armature_tex_name(arm, o->tex);
        size_t tex_len = strlen(rec.tex);
        rec.tex_len = tex_len < SKP_MAX_NAME ? tex_len : SKP_MAX_NAME;
        rec.tint = o->tint;
        rec.vert_count = bone->vert_len;
        rec.verts = bone->vert_len ? (const double *)&p->verts[bone->vert_off] : NULL;
        skp_write_pose_bone(&wr, &rec);
    }
    finish(r, &wr);
}

/* ---- MESH --------------------------------------------------------------------------------- */

/* One draw item. Its geometry is built in armature space, where the renderer builds it
 * (pivots included), and only then moved by the request's engine options o as points, so a
 * mirror or y-down moves every vertex and quad corner alike. */
static void mesh_item(struct skp_writer *wr, const struct pose *p, uint32_t b, int ti,
                      const struct construct_opts *o)
{
    const struct armature *arm = p->arm;
    const struct arm_texture *t = &arm->textures[ti];
    const struct arm_bone *bone = &arm->bones[b];
    struct atlas_rect a; /* the renderer's texture mapping, so MESH draws what RENDER does */
    render_atlas_rect(arm, t, &a);
    skp_write_u32(wr, b);
    skp_write_u32(wr, (uint32_t)t->atlas);
    skp_write_f64s(wr, p->out[b].tint, 4);
    if (bone->vert_len) {
        struct vec2 off = render_pivot_offset(bone, &p->out[b], t);
        skp_write_u32(wr, bone->vert_len);
        for (uint32_t v = 0; v < bone->vert_len; v++) {
            uint32_t vi = bone->vert_off + v;
            struct vec2 at = construct_opts_point(
                o, (struct vec2){p->verts[vi].x + off.x, p->verts[vi].y + off.y});
            const double f[4] = {at.x, at.y, a.u0 + a.du * arm->vert_uv[vi].x,
                                 a.v0 + a.dv * arm->vert_uv[vi].y};
            skp_write_f64s(wr, f, 4);
        }
        skp_write_u32(wr, bone->index_len);
        if (bone->index_len)
            skp_write_u32s(wr, &arm->indices[bone->index_off], bone->index_len);
        return;
    }
    struct vec2 c[4];
    render_quad_corners(bone, &p->out[b], t, c);
    const double u[4] = {a.u0, a.u1, a.u1, a.u0}, v[4] = {a.v0, a.v0, a.v1, a.v1};
    skp_write_u32(wr, 4);
    for (int i = 0; i < 4; i++) {
        struct vec2 at = construct_opts_point(o, c[i]);
        const double f[4] = {at.x, at.y, u[i], v[i]};
        skp_write_f64s(wr, f, 4);
    }
    skp_write_u32(wr, 6);
    skp_write_u32s(wr, render_quad_indices, 6);
}

/* The binary draw list in r->body becomes its JSON. */
static void mesh_to_json(struct work *r)
{
    /* One pass: a number takes at most 16 bytes of text for its 8 of wire. */
    size_t cap = 64 + r->body_len * 3;
    char *json = malloc(cap + 1);
    size_t len = json ? skp_mesh_json_wire(json, cap + 1, r->body, r->body_len) : 0;
    if (json && (!len || len > cap)) {
        free(json);
        json = NULL;
    }
    free(r->body);
    r->body = (uint8_t *)json;
    r->body_len = json ? len : 0;
    if (!json)
        fail(r, SKP_S_NO_MEMORY, "out of memory");
}

void work_mesh(struct job *job, struct worker *w)
{
    struct work *r = req_of(job);
    /* Evaluated in armature space (velocity still moves the physics state); the options move
     * the finished geometry in mesh_item. */
    struct construct_opts space;
    construct_opts_default(&space);
    space.velocity = r->opts.velocity;
    struct pose *p = evaluate(r, w, &space);
    if (!p)
        return;
    const struct armature *arm = p->arm;
    struct image *img = &w->image; /* the worker's draw-order scratch */
    size_t n = arm->bone_count ? arm->bone_count : 1;
    struct skp_writer wr;
    size_t cap = 4 + n * (4 + 4 + 32 + 4 + 4 * 32 + 4 + 6 * 4) + (size_t)arm->vert_count * 32 +
                 (size_t)arm->index_count * 4;
    if (image_reserve_bones(img, arm->bone_count)) {
        fail(r, SKP_S_NO_MEMORY, "out of memory");
        return;
    }
    if (!begin(r, &wr, cap))
        return;
    uint32_t count = render_draw_order(arm, p, &r->picture.opts, img->order, img->keys, img->skip);
    skp_write_u32(&wr, count);
    for (uint32_t i = 0; i < count; i++)
        mesh_item(&wr, p, img->order[i],
                  render_bone_texture(arm, &r->picture.opts, p->out[img->order[i]].tex), &r->opts);
    finish(r, &wr);
    if (r->output == WORK_OUT_JSON && r->body)
        mesh_to_json(r);
}

/* ---- RENDER ------------------------------------------------------------------------------- */

static int append_u32(struct byte_buf *b, uint32_t v)
{
    uint8_t x[4];
    skp_put_u32(x, v);
    return byte_buf_append(b, x, 4);
}

/* Appends the picture's pixels as packed rows: a frame asked for as raw RGBA is drawn packed
 * (work_render sets png_rows for PNGs alone), a sheet is scanlines whatever the format. */
static int append_rows(struct byte_buf *out, const struct image *img)
{
    size_t row = (size_t)img->width * 4;
    if (img->pitch == row)
        return byte_buf_append(out, img->rgba, row * img->height);
    for (uint32_t y = 0; y < img->height; y++)
        if (byte_buf_append(out, img->rgba + y * img->pitch, row))
            return -1;
    return 0;
}

/* Appends one picture record (frame, size, PNG or raw bytes) to out. */
static int put_picture(struct work *r, struct worker *w, const struct image *img, uint32_t frame,
                       struct byte_buf *out)
{
    if (append_u32(out, frame) || append_u32(out, img->width) || append_u32(out, img->height))
        return -1;
    if (r->format == SKP_FORMAT_RGBA) {
        size_t len = (size_t)img->width * img->height * 4;
        return append_u32(out, (uint32_t)len) || byte_buf_reserve(out, len) || append_rows(out, img)
                   ? -1
                   : 0;
    }
    struct png_opts po;
    png_opts_for_level(&po, r->picture.png_level);
    po.live = img->live;
    po.scanlines = image_png_rows(img);
    po.cell_width = img->cell_width;
    w->png_out.len = 0;
    if (png_encode(img->rgba, img->width, img->height, &po, &w->png_out, &w->png_scratch))
        return -1;
    return append_u32(out, (uint32_t)w->png_out.len) ||
                   byte_buf_append(out, w->png_out.data, w->png_out.len)
               ? -1
               : 0;
}

/* Where a RENDER's frames go: each into the reply as it is drawn, or into one sheet. */
struct render_out {
    struct work *r;
    struct worker *w;
    struct byte_buf buf;
    struct sheet sheet; /* rgba NULL: no sheet */
    uint32_t count;     /* pictures in buf */
};

/* 0 if every number of frame's pose is finite, else -1 with r failed naming the frame. */
static int check_frame(struct work *r, const struct pose *p, uint32_t frame)
{
    struct eng_error err;
    int rc = pose_check_finite(p, &err);
    if (rc)
        fail(r, work_status_of(rc), "frame %u: %s%s", frame, err.msg, work_limit_option(&err));
    return rc ? -1 : 0;
}

/* request_play's callback: draws the frame into its cell or as the next picture. */
static int emit_frame(void *ctx, const struct pose *p, uint32_t frame, uint32_t index)
{
    struct render_out *out = ctx;
    const struct render_opts *o = &out->r->picture.opts;
    struct eng_error err;
    if (check_frame(out->r, p, frame))
        return -1;
    int rc = render(p->arm, p, o, &out->w->image);
    if (rc == ENG_ELIMIT) { /* its triangles would take more than the request's share */
        request_fill_error(&out->r->picture, &out->w->image, frame, &err);
        fail(out->r, work_status_of(rc), "%s%s", err.msg, work_limit_option(&err));
    }
    if (rc)
        return -1;
    if (out->sheet.rgba) {
        sheet_frame_played(&out->sheet, frame, index);
        sheet_put(&out->sheet, &out->w->image, index);
        return 0;
    }
    out->count++;
    return put_picture(out->r, out->w, &out->w->image, frame, &out->buf);
}

/* The sheet's JSON (sheet.h) as the reply's last field. */
static int put_sheet_json(struct byte_buf *buf, const struct sheet *s, const struct render_opts *o,
                          const struct bounds *b)
{
    size_t len = sheet_json(NULL, 0, s, o, b);
    if (append_u32(buf, (uint32_t)len) || byte_buf_reserve(buf, len + 1))
        return -1; /* + 1: sheet_json terminates what it writes */
    sheet_json((char *)buf->data + buf->len, len + 1, s, o, b);
    buf->len += len;
    return 0;
}

/* The sheet as the one picture of the reply, then its JSON. */
static int put_sheet(struct work *r, struct worker *w, struct render_out *out,
                     const struct bounds *b)
{
    struct sheet *s = &out->sheet;
    struct image whole = sheet_image(s);
    if (put_picture(r, w, &whole, s->first, &out->buf))
        return -1;
    out->count = 1;
    return put_sheet_json(&out->buf, s, &r->picture.opts, b);
}

/* request_play's callback for a sheet described, not drawn: each frame's pose must be finite,
 * as for a drawing, and the sheet's first frame is the range's or the one frame's. */
static int plan_frame(void *ctx, const struct pose *p, uint32_t frame, uint32_t index)
{
    struct render_out *out = ctx;
    sheet_frame_played(&out->sheet, frame, index);
    return check_frame(out->r, p, frame);
}

/* WORK_OUT_SHEET_JSON: a reply of no picture and the sheet's JSON, which needs the frames
 * played (to fail where a drawing would fail on a pose), the sheet's geometry, camera and
 * bounds (b), but none of its pixels. */
static void describe_sheet(struct work *r, struct worker *w, struct pose *p, const struct bounds *b)
{
    const struct picture_request *pr = &r->picture;
    struct render_out out = {r, w, {0}, {0}, 0};
    struct eng_error err;
    int rc = sheet_plan(&out.sheet, pr->cols, pr->rows, pr->opts.width, pr->opts.height, pr->first,
                        pr->range ? pr->last - pr->first + 1 : 1, &err);
    if (rc) {
        fail(r, status_of(rc), "%s%s", err.msg, work_limit_option(&err));
        return;
    }
    if (request_play(p, &r->eval, &r->opts, pr, plan_frame, &out))
        return; /* plan_frame said why */
    if (append_u32(&out.buf, 0) || put_sheet_json(&out.buf, &out.sheet, &pr->opts, b)) {
        free(out.buf.data);
        fail(r, SKP_S_NO_MEMORY, "out of memory");
        return;
    }
    r->body = out.buf.data;
    r->body_len = out.buf.len;
}

/* Bounds of the request's animation, for fit and for the sheet JSON: the worker's last ones
 * when the request is the same, else framing plays the animation through, on scratch, never
 * on an instance's state. */
static int frame_picture(struct work *r, struct worker *w, struct pose *p, struct bounds *b)
{
    if (request_frame_recall(&w->framing, r->arm_serial, &r->eval, &r->picture, b))
        return 0;
    struct pose *scratch = r->pose ? worker_pose(w, p->arm, r->arm_serial) : p;
    if (!scratch) {
        fail(r, SKP_S_NO_MEMORY, "out of memory");
        return -1;
    }
    request_frame_remember(&w->framing, r->arm_serial, p->arm, scratch, &r->eval, &r->picture, b);
    if (!r->pose)
        pose_reset(p);
    return 0;
}

static int start_sheet(struct work *r, struct render_out *out)
{
    const struct picture_request *pr = &r->picture;
    struct eng_error err;
    uint32_t count = pr->range ? pr->last - pr->first + 1 : 1;
    int rc = sheet_init(&out->sheet, pr->cols, pr->rows, pr->opts.width, pr->opts.height, pr->first,
                        count, &err);
    if (rc)
        fail(r, status_of(rc), "%s%s", err.msg, work_limit_option(&err));
    return rc;
}

/* A worker keeps its picture buffers for the next request up to this size (a 1024x1024
 * picture takes 4 MiB and its band of samples 256 KiB): a larger one (a 4096x4096 takes 64)
 * is let go after its request rather than held for the worker's life. */
#define WORK_KEEP_PICTURE_BYTES ((size_t)32 << 20)

static void trim_pictures(struct worker *w)
{
    image_trim(&w->image, WORK_KEEP_PICTURE_BYTES);
    if (w->png_scratch.cap > WORK_KEEP_PICTURE_BYTES) {
        free(w->png_scratch.data);
        w->png_scratch = (struct byte_buf){0};
    }
    if (w->png_out.cap > WORK_KEEP_PICTURE_BYTES) {
        free(w->png_out.data);
        w->png_out = (struct byte_buf){0};
    }
}

static void render_frames(struct work *r, struct worker *w)
{
    struct pose *p = pose_for(r, w);
    struct bounds b = {0, 0, 0, 0, true};
    bool sheet = r->picture.cols != 0;
    if (!p || (request_needs_bounds(&r->picture) && frame_picture(r, w, p, &b)))
        return;
    if (r->output == WORK_OUT_SHEET_JSON) {
        describe_sheet(r, w, p, &b);
        return;
    }
    r->picture.opts.straight_alpha = true;
    /* A frame that goes out as a PNG is drawn as its scanlines: encoded without a copy. */
    r->picture.opts.png_rows = !sheet && r->format != SKP_FORMAT_RGBA;
    struct render_out out = {r, w, {0}, {0}, 0};
    if (sheet && start_sheet(r, &out))
        return;
    if (append_u32(&out.buf, 0) ||
        request_play(p, &r->eval, &r->opts, &r->picture, emit_frame, &out) ||
        (sheet ? put_sheet(r, w, &out, &b) : append_u32(&out.buf, 0))) {
        free(out.buf.data);
        sheet_close(&out.sheet);
        if (r->status == SKP_S_OK) /* else emit_frame said why */
            fail(r, SKP_S_NO_MEMORY, "out of memory while rendering");
        return;
    }
    sheet_close(&out.sheet);
    skp_put_u32(out.buf.data, out.count);
    /* The reply grew by doubling: give back what it does not use while it waits in the queue
     * to be written. */
    uint8_t *fit = realloc(out.buf.data, out.buf.len);
    r->body = fit ? fit : out.buf.data;
    r->body_len = out.buf.len;
}

void work_render(struct job *job, struct worker *w)
{
    render_frames(req_of(job), w);
    trim_pictures(w);
}

/* ---- skeld info's JSON ------------------------------------------------------------------- */

/* The view's arrays over arm, in one allocation (NULL when memory runs out). */
static void *info_view(const struct armature *arm, struct skp_info_view *v)
{
    size_t nb = arm->bone_count, na = arm->anim_count, ns = arm->style_count;
    size_t size = nb * sizeof *v->bones + na * sizeof *v->anims + ns * sizeof *v->styles +
                  arm->atlas_count * sizeof *v->atlases;
    struct skp_info_bone *bones = malloc(size ? size : 1);
    if (!bones)
        return NULL;
    /* Sorted by alignment, most first: anims hold a double. */
    struct skp_info_anim *anims = (struct skp_info_anim *)(void *)bones;
    bones = (struct skp_info_bone *)(void *)(anims + na);
    struct skp_info_style *styles = (struct skp_info_style *)(void *)(bones + nb);
    struct skp_info_atlas *atlases = (struct skp_info_atlas *)(void *)(styles + ns);
    for (size_t i = 0; i < nb; i++)
        bones[i] = (struct skp_info_bone){arm->bones[i].name, arm->bones[i].parent};
    for (size_t a = 0; a < na; a++) /* frames as the INFO reply says it: a u32 */
        anims[a] = (struct skp_info_anim){arm->anims[a].name, arm->anims[a].fps,
                                          (uint32_t)(arm->anims[a].last_frame + 1)};
    for (size_t s = 0; s < ns; s++)
        styles[s] =
            (struct skp_info_style){arm->styles[s].name, arm->styles[s].id, arm->styles[s].tex_len};
    for (size_t a = 0; a < arm->atlas_count; a++)
        atlases[a] = (struct skp_info_atlas){arm->atlases[a].filename, arm->atlases[a].width,
                                             arm->atlases[a].height};
    *v = (struct skp_info_view){.bone_count = arm->bone_count,
                                .anim_count = arm->anim_count,
                                .style_count = arm->style_count,
                                .bones = bones,
                                .anims = anims,
                                .styles = styles,
                                .file = 1,
                                .version = arm->version,
                                .layout = armature_layout_name(arm),
                                .atlas_count = arm->atlas_count,
                                .atlases = atlases,
                                .ik_families = arm->ik_root_count,
                                .mesh_vertices = arm->vert_count,
                                .keyframes = arm->keyframe_count};
    return anims;
}

int work_info_json(const struct armature *arm, const uint8_t id[32], struct byte_buf *b)
{
    struct skp_info_view v;
    void *block = info_view(arm, &v);
    if (!block)
        return -1;
    char hex[65];
    skp_hex(hex, id, 32);
    v.id = hex;
    size_t len = skp_info_json(NULL, 0, &v);
    int rc = byte_buf_reserve(b, len + 1);
    if (!rc) {
        skp_info_json((char *)b->data + b->len, len + 1, &v);
        b->len += len;
    }
    free(block);
    return rc ? -1 : 0;
}
