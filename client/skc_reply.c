/* Reply decoding (PROTOCOL.md "Messages") into one skc_reply tree: the reply owns the frame
 * body (image bytes point into it) and an arena of chunks holding the arrays and the
 * NUL-terminated strings, so skc_reply_free releases everything in a few free() calls.
 * Counts from the wire are checked against the bytes left before anything is allocated. */
#include <stdalign.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "skc_int.h"

struct chunk {
    struct chunk *next;
    size_t cap, used;
    max_align_t data[];
};

struct skc_reply {
    int op;
    uint32_t id;
    uint8_t *raw; /* the frame body */
    struct chunk *arena;
    const unsigned char *armature_id;
    unsigned char own_id[SKC_ID_SIZE]; /* armature_id when the client set it (not the wire) */
    skc_summary summary;
    int has_summary;
    skc_bone_info *infos;
    uint32_t info_count, instance;
    skc_bone *bones;
    uint32_t bone_count;
    skc_draw *draws;
    uint32_t draw_count;
    skc_image *images;
    uint32_t image_count;
    char *sheet_json;
    size_t sheet_len;
    skc_counter *counters;
    uint32_t counter_count;
    const void *payload;
    size_t payload_len;
    unsigned version; /* HELLO */
    const char *server_name;
    uint32_t max_frame;
};

/* A decode in progress: the body reader and the reply being built. */
struct dec {
    struct skp_reader r;
    skc_reply *rep;
    int nomem;
    const char *broken; /* a promise of skc.h the reply breaks, well formed as it may be */
    bool raw;           /* a RENDER asked for raw RGBA (SKC__RAW) */
};

static void *arena_alloc(struct dec *d, size_t n)
{
    size_t align = alignof(max_align_t);
    n = (n + align - 1) / align * align;
    struct chunk *ch = d->rep->arena;
    if (!ch || ch->cap - ch->used < n) {
        size_t cap = ch && ch->cap * 2 > n ? ch->cap * 2 : n;
        cap = cap < 4096 ? 4096 : cap;
        struct chunk *fresh = malloc(sizeof *fresh + cap);
        if (!fresh) {
            d->nomem = 1;
            return NULL;
        }
        *fresh = (struct chunk){.next = ch, .cap = cap};
        d->rep->arena = ch = fresh;
    }
    void *p = (char *)ch->data + ch->used;
    ch->used += n;
    return p;
}

/* n elements of size bytes each, after checking that the body still holds n wire entries of
 * at least min bytes (which also bounds the allocation by the body size). NULL for none, or
 * on failure (recorded in d). */
static void *alloc_array(struct dec *d, uint64_t n, size_t min, size_t size)
{
    if (d->r.err || d->nomem)
        return NULL;
    if (n > (d->r.len - d->r.pos) / min) {
        d->r.err = SKP_ETRUNCATED;
        return NULL;
    }
    return n ? arena_alloc(d, (size_t)n * size) : NULL;
}

static const char *read_str(struct dec *d)
{
    size_t len;
    const char *s = skp_read_str(&d->r, &len);
    char *copy = s && !d->nomem ? arena_alloc(d, len + 1) : NULL;
    if (!copy)
        return "";
    memcpy(copy, s, len);
    copy[len] = '\0';
    return copy;
}

/* A number of a pose or a draw: the daemon never sends one that is not finite (it refuses a
 * pose that overflows), and a caller prints or draws it as it is (skc.h). */
static double read_finite(struct dec *d)
{
    double v = skp_read_f64(&d->r);
    if (!isfinite(v) && !d->broken)
        d->broken = "a number that is not finite";
    return v;
}

static void read_f64s(struct dec *d, double *out, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = read_finite(d);
}

void skc_reply_free(skc_reply *r)
{
    if (!r)
        return;
    for (struct chunk *ch = r->arena, *next; ch; ch = next) {
        next = ch->next;
        free(ch);
    }
    free(r->raw);
    free(r);
}

/* ---- bodies --------------------------------------------------------------------------- */

static void dec_summary(struct dec *d)
{
    skc_summary *s = &d->rep->summary;
    s->bone_count = skp_read_u32(&d->r);
    s->anim_count = skp_read_u16(&d->r);
    skc_anim_info *anims = alloc_array(d, s->anim_count, 2 + 8 + 4, sizeof *anims);
    for (uint32_t i = 0; anims && i < s->anim_count; i++) {
        anims[i].name = read_str(d);
        anims[i].fps = skp_read_f64(&d->r);
        anims[i].frames = skp_read_u32(&d->r);
    }
    s->anims = anims;
    s->style_count = skp_read_u16(&d->r);
    const char **styles = alloc_array(d, s->style_count, 2, sizeof *styles);
    for (uint32_t i = 0; styles && i < s->style_count; i++)
        styles[i] = read_str(d);
    s->styles = styles;
    s->atlas_count = skp_read_u16(&d->r);
    d->rep->has_summary = 1;
}

static void dec_load(struct dec *d)
{
    d->rep->armature_id = skp_read_raw(&d->r, SKP_ID_SIZE);
    dec_summary(d);
}

static void dec_info(struct dec *d)
{
    dec_summary(d);
    uint32_t n = d->rep->summary.bone_count;
    skc_bone_info *infos = alloc_array(d, n, 2 + 4, sizeof *infos);
    for (uint32_t i = 0; infos && i < n; i++) {
        infos[i].name = read_str(d);
        infos[i].parent = skp_read_i32(&d->r);
    }
    d->rep->infos = infos;
    d->rep->info_count = infos ? n : 0;
}

static void dec_bone(struct dec *d, skc_bone *b)
{
    double f[5];
    read_f64s(d, f, 5);
    b->pos = (skc_vec2){f[0], f[1]};
    b->rot = f[2];
    b->scale = (skc_vec2){f[3], f[4]};
    read_f64s(d, b->matrix, 6);
    b->hidden = skp_read_u8(&d->r) != 0;
    b->zindex = skp_read_i32(&d->r);
    b->tex = read_str(d);
    read_f64s(d, b->tint, 4);
    b->vertex_count = skp_read_u32(&d->r);
    skc_vec2 *v = alloc_array(d, b->vertex_count, 16, sizeof *v);
    for (uint32_t i = 0; v && i < b->vertex_count; i++) {
        v[i].x = read_finite(d);
        v[i].y = read_finite(d);
    }
    b->vertices = v;
}

static void dec_pose(struct dec *d)
{
    uint32_t n = skp_read_u32(&d->r);
    /* per bone: 11 f64, u8, i32, u16 name length, 4 f64, u32 vertex count */
    skc_bone *bones = alloc_array(d, n, 15 * 8 + 1 + 4 + 2 + 4, sizeof *bones);
    for (uint32_t i = 0; bones && i < n; i++)
        dec_bone(d, &bones[i]);
    d->rep->bones = bones;
    d->rep->bone_count = bones ? n : 0;
}

static void dec_draw(struct dec *d, skc_draw *e)
{
    e->bone = skp_read_u32(&d->r);
    e->atlas = skp_read_u32(&d->r);
    read_f64s(d, e->tint, 4);
    e->vertex_count = skp_read_u32(&d->r);
    skc_vertex *v = alloc_array(d, e->vertex_count, 32, sizeof *v);
    for (uint32_t i = 0; v && i < e->vertex_count; i++) {
        double f[4];
        read_f64s(d, f, 4);
        v[i] = (skc_vertex){f[0], f[1], f[2], f[3]};
    }
    e->vertices = v;
    e->index_count = skp_read_u32(&d->r);
    uint32_t *ix = alloc_array(d, e->index_count, 4, sizeof *ix);
    for (uint32_t i = 0; ix && i < e->index_count; i++)
        ix[i] = skp_read_u32(&d->r);
    e->indices = ix;
    /* skc.h promises triangles of the draw's own vertices: a caller indexes vertices[] with
     * these, unchecked */
    bool whole = e->index_count % 3 == 0;
    for (uint32_t i = 0; ix && whole && i < e->index_count; i++)
        whole = ix[i] < e->vertex_count;
    if (!whole && !d->broken)
        d->broken = "a draw's indices are not triangles of its vertices";
}

static void dec_mesh(struct dec *d)
{
    uint32_t n = skp_read_u32(&d->r);
    skc_draw *draws = alloc_array(d, n, 4 + 4 + 32 + 4 + 4, sizeof *draws);
    for (uint32_t i = 0; draws && i < n; i++)
        dec_draw(d, &draws[i]);
    d->rep->draws = draws;
    d->rep->draw_count = draws ? n : 0;
}

/* Whether a picture is what was asked for, of the size the reply says: raw RGBA of width x
 * height x 4 bytes, or a PNG file whose header (the signature, then IHDR) says width x
 * height. A caller sizes its buffers from width and height. */
static bool picture_as_said(const skc_image *im, bool raw)
{
    static const unsigned char png_start[16] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n',
                                                0,    0,   0,   13,  'I',  'H',  'D',  'R'};
    if (!im->data)
        return true; /* truncated: the reader says so */
    if (raw)
        return im->size == (uint64_t)im->width * im->height * 4;
    const unsigned char *p = im->data;
    return im->size >= 24 && !memcmp(p, png_start, 16) &&
           ((uint32_t)p[16] << 24 | (uint32_t)p[17] << 16 | (uint32_t)p[18] << 8 | p[19]) ==
               im->width &&
           ((uint32_t)p[20] << 24 | (uint32_t)p[21] << 16 | (uint32_t)p[22] << 8 | p[23]) ==
               im->height;
}

static void dec_render(struct dec *d)
{
    uint32_t n = skp_read_u32(&d->r);
    skc_image *im = alloc_array(d, n, 16, sizeof *im);
    for (uint32_t i = 0; im && i < n; i++) {
        im[i].frame = skp_read_u32(&d->r);
        im[i].width = skp_read_u32(&d->r);
        im[i].height = skp_read_u32(&d->r);
        im[i].data = skp_read_bytes(&d->r, &im[i].size, SKP_MAX_FRAME);
        if (!picture_as_said(&im[i], d->raw) && !d->broken)
            d->broken = d->raw ? "a raw picture is not width x height x 4 bytes"
                               : "a picture is not a PNG file of the size it is said to be";
    }
    d->rep->images = im;
    d->rep->image_count = im ? n : 0;
    size_t len = 0;
    const void *json = skp_read_bytes(&d->r, &len, SKP_MAX_FRAME);
    char *copy = json && !d->nomem ? arena_alloc(d, len + 1) : NULL;
    if (copy) {
        memcpy(copy, json, len);
        copy[len] = '\0';
    }
    d->rep->sheet_json = copy;
    d->rep->sheet_len = copy ? len : 0;
}

static void dec_stats(struct dec *d)
{
    uint32_t n = skp_read_u32(&d->r);
    skc_counter *ct = alloc_array(d, n, 2 + 8, sizeof *ct);
    for (uint32_t i = 0; ct && i < n; i++) {
        ct[i].name = read_str(d);
        uint64_t high = skp_read_u32(&d->r);
        ct[i].value = high << 32 | skp_read_u32(&d->r);
    }
    d->rep->counters = ct;
    d->rep->counter_count = ct ? n : 0;
}

static void dec_ping(struct dec *d)
{
    d->rep->payload = skp_read_bytes(&d->r, &d->rep->payload_len, SKP_MAX_FRAME);
}

static void dec_hello(struct dec *d)
{
    d->rep->version = skp_read_u16(&d->r);
    if (d->rep->version != SKP_VERSION) /* PROTOCOL.md: a version 1 daemon answers 1 */
        d->broken = "the daemon speaks another protocol version";
    d->rep->server_name = read_str(d);
    d->rep->max_frame = skp_read_u32(&d->r);
}

static void dec_instance(struct dec *d)
{
    d->rep->instance = skp_read_u32(&d->r);
}

static void dec_empty(struct dec *d)
{
    (void)d;
}

typedef void (*decoder)(struct dec *d);

static decoder decoder_for(int op)
{
    switch (op) {
    case SKP_OP_HELLO: return dec_hello;
    case SKP_OP_PING:
    case SKP_OP_INFO_JSON: return dec_ping; /* bytes: the echo, or the JSON */
    case SKP_OP_LOAD_PATH:
    case SKP_OP_LOAD_BYTES: return dec_load;
    case SKP_OP_INFO: return dec_info;
    case SKP_OP_INSTANCE_NEW: return dec_instance;
    case SKP_OP_POSE: return dec_pose;
    case SKP_OP_MESH: return dec_mesh;
    case SKP_OP_RENDER: return dec_render;
    case SKP_OP_STATS: return dec_stats;
    default: return dec_empty; /* UNLOAD, INSTANCE_FREE */
    }
}

/* ---- entry ---------------------------------------------------------------------------- */

/* An error reply: one str naming the problem (or nothing usable). */
static int server_error(skc_client *c, const struct skc__frame *f)
{
    struct skp_reader r;
    size_t len = 0;
    skp_reader_init(&r, f->body, f->h.body_len);
    const char *msg = skp_read_str(&r, &len);
    c->status = f->h.status;
    if (!msg || len == 0)
        return skc__fail(c, SKC_ESERVER, "server: %s", skp_strerror(f->h.status));
    return skc__fail(c, SKC_ESERVER, "server: %.*s (%s)", (int)len, msg, skp_strerror(f->h.status));
}

/* An error reply is an error whatever opcode it carries; a success must match the request. */
static int check_frame(skc_client *c, uint8_t op, const struct skc__frame *f)
{
    if (f->h.status != SKP_S_OK)
        return server_error(c, f);
    if (f->h.opcode != op)
        return skc__fail(c, SKC_EPROTO, "reply %u answers %s, the request was %s",
                         (unsigned)f->h.id, skp_opcode_name(f->h.opcode), skp_opcode_name(op));
    return 0;
}

int skc__decode(skc_client *c, uint8_t pending_op, struct skc__frame *f, skc_reply **out)
{
    uint8_t op = SKC__WIRE_OP(pending_op);
    int rc = check_frame(c, op, f);
    skc_reply *rep = rc ? NULL : calloc(1, sizeof *rep);
    if (!rc && !rep)
        rc = skc__fail(c, SKC_ENOMEM, "out of memory for a reply");
    if (rc) {
        free(f->body);
        return rc;
    }
    *rep = (skc_reply){.op = op, .id = f->h.id, .raw = f->body};
    struct dec d = {.rep = rep, .raw = (pending_op & SKC__RAW) != 0};
    skp_reader_init(&d.r, f->body, f->h.body_len);
    decoder_for(op)(&d);
    int err = skp_reader_finish(&d.r);
    if (d.nomem || err || d.broken) {
        skc_reply_free(rep);
        const char *why = err == SKP_ETRAILING  ? "bytes left over"
                          : err == SKP_ENUL     ? "a string holds a NUL byte"
                          : err == SKP_ETOOLONG ? "a field longer than the protocol allows"
                          : err                 ? "truncated"
                                                : d.broken;
        return d.nomem
                   ? skc__fail(c, SKC_ENOMEM, "out of memory decoding a %s reply",
                               skp_opcode_name(op))
                   : skc__fail(c, SKC_EPROTO, "malformed %s reply (%s)", skp_opcode_name(op), why);
    }
    *out = rep;
    return 0;
}

/* ---- accessors ------------------------------------------------------------------------ */

#define SET(p, v)                                                                                  \
    do {                                                                                           \
        if (p)                                                                                     \
            *(p) = (v);                                                                            \
    } while (0)

int skc_reply_op(const skc_reply *r)
{
    return r ? r->op : 0;
}

uint32_t skc_reply_id(const skc_reply *r)
{
    return r ? r->id : 0;
}

const unsigned char *skc_reply_armature_id(const skc_reply *r)
{
    return r ? r->armature_id : NULL;
}

void skc__reply_set_armature_id(skc_reply *r, const unsigned char id[SKC_ID_SIZE])
{
    memcpy(r->own_id, id, SKC_ID_SIZE);
    r->armature_id = r->own_id;
}

const skc_summary *skc_reply_summary(const skc_reply *r)
{
    return r && r->has_summary ? &r->summary : NULL;
}

const skc_bone_info *skc_reply_bone_infos(const skc_reply *r, uint32_t *count)
{
    SET(count, r ? r->info_count : 0);
    return r && r->op == SKP_OP_INFO ? r->infos : NULL;
}

uint32_t skc_reply_instance(const skc_reply *r)
{
    return r ? r->instance : 0;
}

const skc_bone *skc_reply_bones(const skc_reply *r, uint32_t *count)
{
    SET(count, r ? r->bone_count : 0);
    return r && r->op == SKP_OP_POSE ? r->bones : NULL;
}

const skc_draw *skc_reply_draws(const skc_reply *r, uint32_t *count)
{
    SET(count, r ? r->draw_count : 0);
    return r && r->op == SKP_OP_MESH ? r->draws : NULL;
}

const skc_image *skc_reply_images(const skc_reply *r, uint32_t *count)
{
    SET(count, r ? r->image_count : 0);
    return r && r->op == SKP_OP_RENDER ? r->images : NULL;
}

const char *skc_reply_sheet_json(const skc_reply *r, size_t *len)
{
    SET(len, r ? r->sheet_len : 0);
    return r ? r->sheet_json : NULL;
}

const skc_counter *skc_reply_counters(const skc_reply *r, uint32_t *count)
{
    SET(count, r ? r->counter_count : 0);
    return r && r->op == SKP_OP_STATS ? r->counters : NULL;
}

const void *skc_reply_payload(const skc_reply *r, size_t *len)
{
    SET(len, r ? r->payload_len : 0);
    return r ? r->payload : NULL;
}

const char *skc__reply_hello(const skc_reply *r, unsigned *version, uint32_t *max_frame)
{
    *version = r->version;
    *max_frame = r->max_frame;
    return r->server_name;
}
