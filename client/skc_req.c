/* Requests (PROTOCOL.md "Messages"): argument checks, body encoders, and the public blocking,
 * pipelined and asynchronous calls built from them. The library checks only what it needs to
 * encode a request (counts, lengths, field ranges); the daemon judges the meaning. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skc_int.h"
#include "skp_msg.h"

#define EVAL_FLAGS (SKC_EVAL_LOOP | SKC_EVAL_REVERSE | SKC_EVAL_MS | SKC_EVAL_Y_DOWN)

/* The public constants are the wire's (skc.h cannot include proto headers). */
_Static_assert(SKC_EVAL_LOOP == SKP_EVAL_LOOP && SKC_EVAL_REVERSE == SKP_EVAL_REVERSE &&
                   SKC_EVAL_MS == SKP_EVAL_MS && SKC_EVAL_Y_DOWN == SKP_EVAL_Y_DOWN,
               "skc.h evaluation flags match the protocol's");
_Static_assert(SKC_MAX_ANIMS == SKP_MAX_ANIMS && SKC_MAX_STYLES == SKP_MAX_STYLES &&
                   SKC_PNG_FAST == SKP_PNG_FAST && SKC_PNG_DEFAULT == SKP_PNG_DEFAULT &&
                   (int)SKC_TARGET_INSTANCE == SKP_TARGET_INSTANCE &&
                   (int)SKC_CAMERA_EXPLICIT == SKP_CAMERA_EXPLICIT &&
                   (int)SKC_FORMAT_RGBA == SKP_FORMAT_RGBA,
               "skc.h limits and enums match the protocol's");

struct blob {
    const void *p;
    size_t len;
};

struct eval_render {
    const skc_eval *ev;
    const skc_render_opts *ro;
};

/* ---- encoders ------------------------------------------------------------------------- */

static void put_str(struct skp_writer *w, const char *s)
{
    skp_write_str(w, s, strlen(s));
}

static void enc_hello(struct skp_writer *w, const void *arg)
{
    skp_write_u16(w, SKP_VERSION);
    put_str(w, arg ? arg : "");
}

static void enc_blob(struct skp_writer *w, const void *arg)
{
    const struct blob *b = arg;
    skp_write_bytes(w, b->p, b->len);
}

static void enc_str(struct skp_writer *w, const void *arg)
{
    put_str(w, arg);
}

static void enc_id(struct skp_writer *w, const void *arg)
{
    skp_write_raw(w, arg, SKP_ID_SIZE);
}

static void enc_u32(struct skp_writer *w, const void *arg)
{
    skp_write_u32(w, *(const uint32_t *)arg);
}

static void enc_empty(struct skp_writer *w, const void *arg)
{
    (void)w;
    (void)arg;
}

static void vec2_to(double out[2], skc_vec2 v)
{
    out[0] = v.x;
    out[1] = v.y;
}

static struct skp_str str_of(const char *s)
{
    return (struct skp_str){s, strlen(s)};
}

/* The public request as the wire's message (checked by check_eval first). */
static void to_eval_req(const skc_eval *ev, struct skp_eval_req *m)
{
    skp_eval_req_init(m);
    m->target = (uint8_t)ev->target;
    memcpy(m->armature, ev->armature, SKP_ID_SIZE);
    m->instance = ev->instance;
    m->flags = (uint16_t)(ev->flags | (ev->has_from ? SKP_EVAL_FROM : 0));
    m->anim_count = (uint8_t)ev->anim_count;
    for (unsigned i = 0; i < ev->anim_count; i++)
        m->anims[i] = (struct skp_anim_ref){str_of(ev->anims[i].name), ev->anims[i].frame,
                                            ev->anims[i].smoothing};
    m->from = ev->has_from ? ev->from : 0.0;
    m->warmup = ev->warmup;
    vec2_to(m->position, ev->position);
    vec2_to(m->scale, ev->scale);
    vec2_to(m->velocity, ev->velocity);
}

static void to_render_req(const skc_render_opts *ro, struct skp_render_req *m)
{
    skp_render_req_init(m);
    m->width = ro->width;
    m->height = ro->height;
    memcpy(m->background, ro->background, 4);
    m->camera = (uint8_t)ro->camera;
    m->fit = ro->fit;
    vec2_to(m->scale, ro->scale);
    vec2_to(m->position, ro->position);
    m->style_count = (uint8_t)ro->style_count;
    for (unsigned i = 0; i < ro->style_count; i++)
        m->styles[i] = str_of(ro->styles[i]);
    m->samples = (uint8_t)ro->samples;
    m->format = (uint8_t)ro->format;
    m->png_level = (uint8_t)ro->png_level;
    m->first = ro->has_range ? ro->first : 0;
    m->last = ro->has_range ? ro->last : 0;
    m->cols = (uint16_t)ro->sheet_cols;
    m->rows = (uint16_t)ro->sheet_rows;
}

static void enc_eval(struct skp_writer *w, const void *arg)
{
    struct skp_eval_req m;
    to_eval_req(arg, &m);
    skp_encode_eval_req(w, &m);
}

static void enc_eval_render(struct skp_writer *w, const void *arg)
{
    const struct eval_render *er = arg;
    struct skp_eval_req m;
    struct skp_render_req rm;
    to_eval_req(er->ev, &m);
    if (er->ro->has_range)
        m.flags |= SKP_EVAL_RANGE;
    to_render_req(er->ro, &rm);
    skp_encode_eval_req(w, &m);
    skp_encode_render_req(w, &rm);
}

/* ---- argument checks ------------------------------------------------------------------ */

/* Every public call starts here: NULL handle, or a fresh message and status. */
static int start(skc_client *c)
{
    if (!c)
        return SKC_EINVAL;
    skc__begin(c);
    return 0;
}

static int check_eval(skc_client *c, const skc_eval *ev)
{
    if (!ev)
        return skc__fail(c, SKC_EINVAL, "no evaluation request");
    if (ev->target != SKC_TARGET_ARMATURE && ev->target != SKC_TARGET_INSTANCE)
        return skc__fail(c, SKC_EINVAL, "target %d: not armature (0) or instance (1)", ev->target);
    if (ev->flags & ~EVAL_FLAGS)
        return skc__fail(c, SKC_EINVAL, "unknown evaluation flags 0x%x", ev->flags & ~EVAL_FLAGS);
    if (ev->anim_count > SKC_MAX_ANIMS)
        return skc__fail(c, SKC_EINVAL, "%u animations, at most %d", ev->anim_count, SKC_MAX_ANIMS);
    for (unsigned i = 0; i < ev->anim_count; i++)
        if (!ev->anims[i].name)
            return skc__fail(c, SKC_EINVAL, "animation %u has no name", i);
    return 0;
}

static int check_render(skc_client *c, const skc_render_opts *ro)
{
    if (!ro)
        return skc__fail(c, SKC_EINVAL, "no render options");
    /* What the wire's fields or its values cannot say; the daemon judges the rest. */
    const char *bad =
        ro->camera != SKC_CAMERA_FIT && ro->camera != SKC_CAMERA_EXPLICIT
            ? "camera (SKC_CAMERA_FIT or SKC_CAMERA_EXPLICIT)"
        : ro->format != SKC_FORMAT_PNG && ro->format != SKC_FORMAT_RGBA
            ? "format (SKC_FORMAT_PNG or SKC_FORMAT_RGBA)"
        : ro->samples > 255 ? "samples (1 or 4)"
        : ro->png_level > 9 && ro->png_level != SKC_PNG_FAST && ro->png_level != SKC_PNG_DEFAULT
            ? "png_level (SKC_PNG_DEFAULT or a zlib level 0-9)"
        : ro->sheet_cols > 65535 || ro->sheet_rows > 65535
            ? "sheet_cols, sheet_rows (at most 65535)"
            : NULL;
    if (bad)
        return skc__fail(c, SKC_EINVAL, "render option out of range: %s", bad);
    if (ro->style_count > SKC_MAX_STYLES || (ro->style_count && !ro->styles))
        return skc__fail(c, SKC_EINVAL, "%u styles: at most %d, and styles must be given",
                         ro->style_count, SKC_MAX_STYLES);
    for (unsigned i = 0; i < ro->style_count; i++)
        if (!ro->styles[i])
            return skc__fail(c, SKC_EINVAL, "style %u is NULL", i);
    return 0;
}

/* A RENDER's op as it waits for its reply: raw pictures are checked for their size. */
static uint8_t render_op(const skc_render_opts *ro)
{
    return (uint8_t)(SKP_OP_RENDER | (ro->format == SKC_FORMAT_RGBA ? SKC__RAW : 0));
}

static int check_ptr(skc_client *c, const void *p, const char *what)
{
    return p ? 0 : skc__fail(c, SKC_EINVAL, "%s is NULL", what);
}

static int check_ping(skc_client *c, const void *payload, size_t len)
{
    if (len > SKC_MAX_PING)
        return skc__fail(c, SKC_EINVAL, "ping payload of %zu bytes, at most %d", len, SKC_MAX_PING);
    return len ? check_ptr(c, payload, "the ping payload") : 0;
}

/* ---- sending and calling -------------------------------------------------------------- */

static int send_req(skc_client *c, uint8_t op, skc__encoder enc, const void *arg, size_t hint,
                    uint32_t *req_id)
{
    int rc = check_ptr(c, req_id, "req_id");
    if (rc)
        return rc;
    if (c->nonblock)
        return skc__send_nowait(c, op, enc, arg, hint, req_id);
    return skc__send(c, op, enc, arg, hint, skc__deadline(c->io_timeout_ms), req_id);
}

/* Sends and waits for the reply before the deadline; a timed-out request is forgotten. */
static int call_until(skc_client *c, uint8_t op, skc__encoder enc, const void *arg, size_t hint,
                      int64_t deadline, skc_reply **out)
{
    uint32_t id;
    skc_reply *rep = NULL;
    int rc = skc__send(c, op, enc, arg, hint, deadline, &id);
    if (rc)
        return rc;
    rc = skc__recv(c, id, deadline, &rep);
    if (rc == SKC_ETIMEOUT)
        skc__forget(c, id); /* still pending: its late reply will be dropped */
    if (rc == 0 && out)
        *out = rep;
    else
        skc_reply_free(rep);
    return rc;
}

static int call(skc_client *c, uint8_t op, skc__encoder enc, const void *arg, size_t hint,
                skc_reply **out)
{
    return call_until(c, op, enc, arg, hint, skc__deadline(c->io_timeout_ms), out);
}

void skc__hello_reply(skc_client *c, const skc_reply *r)
{
    uint32_t max;
    const char *name = skc__reply_hello(r, &c->server_version, &max);
    snprintf(c->server_name, sizeof c->server_name, "%s", name);
    c->server_max = max == 0 || max > SKP_MAX_FRAME ? SKP_MAX_FRAME : max;
}

int skc__hello(skc_client *c, const char *token, int64_t deadline)
{
    skc_reply *rep = NULL;
    size_t hint = 8 + (token ? strlen(token) : 0);
    int rc = call_until(c, SKP_OP_HELLO, enc_hello, token, hint, deadline, &rep);
    if (rc)
        return rc;
    skc__hello_reply(c, rep);
    skc_reply_free(rep);
    return 0;
}

int skc__queue_hello(skc_client *c, const char *token, uint32_t *req_id)
{
    size_t hint = 8 + (token ? strlen(token) : 0);
    return skc__queue(c, SKP_OP_HELLO, enc_hello, token, hint, req_id);
}

/* ---- public: blocking ----------------------------------------------------------------- */

int skc_hello(skc_client *c, const char *auth_token)
{
    int rc = start(c);
    if (rc || (rc = skc__hello(c, auth_token, skc__deadline(c->io_timeout_ms))))
        return rc;
    /* The token the daemon took is the one a reconnect must send. */
    return skc_set_auth_token(c, auth_token);
}

int skc_ping(skc_client *c, const void *payload, size_t len)
{
    skc_reply *rep = NULL;
    struct blob b = {payload, len};
    int rc = start(c);
    if (rc || (rc = check_ping(c, payload, len)) ||
        (rc = call(c, SKP_OP_PING, enc_blob, &b, len + 4, &rep)))
        return rc;
    size_t got;
    const void *echo = skc_reply_payload(rep, &got);
    if (got != len || (len && memcmp(echo, payload, len) != 0))
        rc = skc__fail(c, SKC_EPROTO, "the ping echo differs from the payload");
    skc_reply_free(rep);
    return rc;
}

/* The id out-parameter of the load calls, then the reply to the caller (or freed). */
static int loaded(skc_reply *rep, unsigned char *id, skc_reply **out)
{
    if (id)
        memcpy(id, skc_reply_armature_id(rep), SKC_ID_SIZE);
    if (out)
        *out = rep;
    else
        skc_reply_free(rep);
    return 0;
}

int skc_load_path(skc_client *c, const char *path, unsigned char id[SKC_ID_SIZE], skc_reply **out)
{
    skc_reply *rep = NULL;
    int rc = start(c);
    if (rc || (rc = check_ptr(c, path, "path")) ||
        (rc = call(c, SKP_OP_LOAD_PATH, enc_str, path, strlen(path) + 2, &rep)))
        return rc;
    return loaded(rep, id, out);
}

int skc_load_bytes(skc_client *c, const void *skf, size_t len, unsigned char id[SKC_ID_SIZE],
                   skc_reply **out)
{
    skc_reply *rep = NULL;
    struct blob b = {skf, len};
    int rc = start(c);
    if (rc || (rc = check_ptr(c, skf, "skf")) ||
        (rc = call(c, SKP_OP_LOAD_BYTES, enc_blob, &b, len + 4, &rep)))
        return rc;
    return loaded(rep, id, out);
}

int skc_ensure(skc_client *c, const void *skf, size_t len, unsigned char id[SKC_ID_SIZE])
{
    unsigned char mine[SKC_ID_SIZE];
    skc_reply *rep = NULL;
    int rc = start(c);
    if (rc || (rc = check_ptr(c, skf, "skf")) || (rc = check_ptr(c, id, "id")))
        return rc;
    if ((rc = skc_id_of(skf, len, mine)))
        return rc;
    rc = skc_info(c, mine, &rep);
    skc_reply_free(rep);
    if (rc == SKC_ESERVER && skc_status(c) == SKC_S_NOT_FOUND)
        rc = skc_load_bytes(c, skf, len, mine, NULL);
    if (!rc)
        memcpy(id, mine, SKC_ID_SIZE);
    return rc;
}

int skc_unload(skc_client *c, const unsigned char id[SKC_ID_SIZE])
{
    int rc = start(c);
    if (rc || (rc = check_ptr(c, id, "id")))
        return rc;
    return call(c, SKP_OP_UNLOAD, enc_id, id, SKP_ID_SIZE, NULL);
}

int skc_info(skc_client *c, const unsigned char id[SKC_ID_SIZE], skc_reply **out)
{
    int rc = start(c);
    if (rc || (rc = check_ptr(c, id, "id")))
        return rc;
    return call(c, SKP_OP_INFO, enc_id, id, SKP_ID_SIZE, out);
}

int skc_info_json(skc_client *c, const unsigned char id[SKC_ID_SIZE], skc_reply **out)
{
    int rc = start(c);
    if (rc || (rc = check_ptr(c, id, "id")) || (rc = check_ptr(c, out, "out")))
        return rc;
    return call(c, SKP_OP_INFO_JSON, enc_id, id, SKP_ID_SIZE, out);
}

int skc_instance_new(skc_client *c, const unsigned char id[SKC_ID_SIZE], uint32_t *instance)
{
    skc_reply *rep = NULL;
    int rc = start(c);
    if (rc || (rc = check_ptr(c, id, "id")) || (rc = check_ptr(c, instance, "instance")) ||
        (rc = call(c, SKP_OP_INSTANCE_NEW, enc_id, id, SKP_ID_SIZE, &rep)))
        return rc;
    *instance = skc_reply_instance(rep);
    skc_reply_free(rep);
    return 0;
}

int skc_instance_free(skc_client *c, uint32_t instance)
{
    int rc = start(c);
    return rc ? rc : call(c, SKP_OP_INSTANCE_FREE, enc_u32, &instance, 4, NULL);
}

int skc_pose(skc_client *c, const skc_eval *ev, skc_reply **out)
{
    int rc = start(c);
    if (rc || (rc = check_eval(c, ev)))
        return rc;
    return call(c, SKP_OP_POSE, enc_eval, ev, 512, out);
}

int skc_mesh(skc_client *c, const skc_eval *ev, skc_reply **out)
{
    int rc = start(c);
    if (rc || (rc = check_eval(c, ev)))
        return rc;
    return call(c, SKP_OP_MESH, enc_eval, ev, 512, out);
}

int skc_render(skc_client *c, const skc_eval *ev, const skc_render_opts *ro, skc_reply **out)
{
    struct eval_render er = {ev, ro};
    int rc = start(c);
    if (rc || (rc = check_eval(c, ev)) || (rc = check_render(c, ro)))
        return rc;
    return call(c, render_op(ro), enc_eval_render, &er, 1024, out);
}

int skc_stats(skc_client *c, skc_reply **out)
{
    int rc = start(c);
    return rc ? rc : call(c, SKP_OP_STATS, enc_empty, NULL, 0, out);
}

/* ---- public: pipelined ---------------------------------------------------------------- */

int skc_send_ping(skc_client *c, const void *payload, size_t len, uint32_t *req_id)
{
    struct blob b = {payload, len};
    int rc = start(c);
    if (rc || (rc = check_ping(c, payload, len)))
        return rc;
    return send_req(c, SKP_OP_PING, enc_blob, &b, len + 4, req_id);
}

int skc_send_load_path(skc_client *c, const char *path, uint32_t *req_id)
{
    int rc = start(c);
    if (rc || (rc = check_ptr(c, path, "path")))
        return rc;
    return send_req(c, SKP_OP_LOAD_PATH, enc_str, path, strlen(path) + 2, req_id);
}

int skc_send_load_bytes(skc_client *c, const void *skf, size_t len, uint32_t *req_id)
{
    struct blob b = {skf, len};
    int rc = start(c);
    if (rc || (rc = check_ptr(c, skf, "skf")))
        return rc;
    return send_req(c, SKP_OP_LOAD_BYTES, enc_blob, &b, len + 4, req_id);
}

/* UNLOAD, INFO and INSTANCE_NEW: a body of one armature id. */
static int send_id(skc_client *c, uint8_t op, const unsigned char *id, uint32_t *req_id)
{
    int rc = start(c);
    if (rc || (rc = check_ptr(c, id, "id")))
        return rc;
    return send_req(c, op, enc_id, id, SKP_ID_SIZE, req_id);
}

int skc_send_unload(skc_client *c, const unsigned char id[SKC_ID_SIZE], uint32_t *req_id)
{
    return send_id(c, SKP_OP_UNLOAD, id, req_id);
}

int skc_send_info(skc_client *c, const unsigned char id[SKC_ID_SIZE], uint32_t *req_id)
{
    return send_id(c, SKP_OP_INFO, id, req_id);
}

int skc_send_instance_new(skc_client *c, const unsigned char id[SKC_ID_SIZE], uint32_t *req_id)
{
    return send_id(c, SKP_OP_INSTANCE_NEW, id, req_id);
}

int skc_send_instance_free(skc_client *c, uint32_t instance, uint32_t *req_id)
{
    int rc = start(c);
    return rc ? rc : send_req(c, SKP_OP_INSTANCE_FREE, enc_u32, &instance, 4, req_id);
}

int skc_send_pose(skc_client *c, const skc_eval *ev, uint32_t *req_id)
{
    int rc = start(c);
    if (rc || (rc = check_eval(c, ev)))
        return rc;
    return send_req(c, SKP_OP_POSE, enc_eval, ev, 512, req_id);
}

int skc_send_mesh(skc_client *c, const skc_eval *ev, uint32_t *req_id)
{
    int rc = start(c);
    if (rc || (rc = check_eval(c, ev)))
        return rc;
    return send_req(c, SKP_OP_MESH, enc_eval, ev, 512, req_id);
}

int skc_send_render(skc_client *c, const skc_eval *ev, const skc_render_opts *ro, uint32_t *req_id)
{
    struct eval_render er = {ev, ro};
    int rc = start(c);
    if (rc || (rc = check_eval(c, ev)) || (rc = check_render(c, ro)))
        return rc;
    return send_req(c, render_op(ro), enc_eval_render, &er, 1024, req_id);
}

int skc_send_stats(skc_client *c, uint32_t *req_id)
{
    int rc = start(c);
    return rc ? rc : send_req(c, SKP_OP_STATS, enc_empty, NULL, 0, req_id);
}

int skc_recv(skc_client *c, uint32_t req_id, skc_reply **out)
{
    skc_reply *rep = NULL;
    int rc = start(c);
    if (rc)
        return rc;
    rc = c->nonblock ? skc__try_recv(c, req_id, &rep)
                     : skc__recv(c, req_id, skc__deadline(c->io_timeout_ms), &rep);
    if (rc)
        return rc;
    if (out)
        *out = rep;
    else
        skc_reply_free(rep);
    return 0;
}

int skc_discard(skc_client *c, uint32_t req_id)
{
    int rc = start(c);
    return rc ? rc : skc__forget(c, req_id);
}

size_t skc_pending(const skc_client *c)
{
    return c ? c->npend : 0;
}

int skc_flush(skc_client *c)
{
    int rc = start(c);
    if (rc)
        return rc;
    if (!c->nonblock)
        return skc__flush_wait(c, skc__deadline(c->io_timeout_ms));
    rc = skc__flush(c);
    if (rc == SKC_EAGAIN)
        skc__fail(c, rc, "%zu request bytes wait for the socket", c->out_len - c->out_off);
    return rc;
}

/* ---- public: asynchronous ------------------------------------------------------------- */
/* Checked like the pipelined calls, then queued with the callback (skc_async.c). */

/* The async handle's client for the checks; NULL (SKC_EINVAL) for a NULL handle. */
static skc_client *astart(skc_async *ac)
{
    skc_client *c = ac ? skc__async_client(ac) : NULL;
    if (c)
        skc__begin(c);
    return c;
}

int skc_async_ping(skc_async *ac, const void *payload, size_t len, skc_async_cb cb, void *privdata)
{
    struct blob b = {payload, len};
    skc_client *c = astart(ac);
    int rc = c ? check_ping(c, payload, len) : SKC_EINVAL;
    return rc ? rc : skc__async_queue(ac, SKP_OP_PING, enc_blob, &b, len + 4, cb, privdata);
}

int skc_async_load_path(skc_async *ac, const char *path, skc_async_cb cb, void *privdata)
{
    skc_client *c = astart(ac);
    int rc = c ? check_ptr(c, path, "path") : SKC_EINVAL;
    return rc ? rc
              : skc__async_queue(ac, SKP_OP_LOAD_PATH, enc_str, path, strlen(path) + 2, cb,
                                 privdata);
}

int skc_async_load_bytes(skc_async *ac, const void *skf, size_t len, skc_async_cb cb,
                         void *privdata)
{
    struct blob b = {skf, len};
    skc_client *c = astart(ac);
    int rc = c ? check_ptr(c, skf, "skf") : SKC_EINVAL;
    return rc ? rc : skc__async_queue(ac, SKP_OP_LOAD_BYTES, enc_blob, &b, len + 4, cb, privdata);
}

/* skc_async_ensure between INFO's reply and LOAD_BYTES's: the caller's callback, the id, and
 * a copy of the bytes, freed once LOAD_BYTES has taken its own or is not needed. */
struct ensure {
    skc_async_cb cb;
    void *privdata;
    unsigned char id[SKC_ID_SIZE];
    unsigned char *skf;
    size_t len;
};

static void ensure_done(skc_async *ac, struct ensure *e, int err, skc_reply *r)
{
    if (e->cb)
        e->cb(ac, err, r, e->privdata);
    else
        skc_reply_free(r);
    free(e->skf);
    free(e);
}

static void ensure_loaded(skc_async *ac, int err, skc_reply *r, void *privdata)
{
    ensure_done(ac, privdata, err, r);
}

/* INFO answered: the daemon has the armature (the reply goes to the caller, with the id), or
 * NOT_FOUND sends the bytes, even while a disconnect waits (the ensure was accepted before
 * it); any other outcome is the caller's. */
static void ensure_info(skc_async *ac, int err, skc_reply *r, void *privdata)
{
    struct ensure *e = privdata;
    if (err == SKC_ESERVER && skc_async_status(ac) == SKC_S_NOT_FOUND) {
        struct blob b = {e->skf, e->len};
        /* INFO's NOT_FOUND is dealt with: an upload refused here (over the daemon's limit)
         * must not report it as its status. */
        skc__begin(skc__async_client(ac));
        err = skc__async_follow(ac, SKP_OP_LOAD_BYTES, enc_blob, &b, e->len + 4, ensure_loaded, e);
        if (!err) {
            free(e->skf); /* the request holds its own copy now */
            e->skf = NULL;
            return;
        }
    } else if (!err) {
        skc__reply_set_armature_id(r, e->id);
    }
    ensure_done(ac, e, err, r);
}

int skc_async_ensure(skc_async *ac, const void *skf, size_t len, skc_async_cb cb, void *privdata)
{
    skc_client *c = astart(ac);
    int rc = c ? check_ptr(c, skf, "skf") : SKC_EINVAL;
    if (rc)
        return rc;
    struct ensure *e = malloc(sizeof *e);
    unsigned char *copy = malloc(len ? len : 1);
    if (!e || !copy) {
        free(e);
        free(copy);
        return skc__fail(c, SKC_ENOMEM, "out of memory copying %zu bytes", len);
    }
    *e = (struct ensure){cb, privdata, {0}, copy, len};
    memcpy(copy, skf, len);
    if ((rc = skc_id_of(skf, len, e->id)))
        rc = skc__fail(c, rc, "computing the armature id: out of memory");
    else
        rc = skc__async_queue(ac, SKP_OP_INFO, enc_id, e->id, SKP_ID_SIZE, ensure_info, e);
    if (rc) {
        free(copy);
        free(e);
    }
    return rc;
}

/* UNLOAD, INFO and INSTANCE_NEW: a body of one armature id. */
static int async_id(skc_async *ac, uint8_t op, const unsigned char *id, skc_async_cb cb,
                    void *privdata)
{
    skc_client *c = astart(ac);
    int rc = c ? check_ptr(c, id, "id") : SKC_EINVAL;
    return rc ? rc : skc__async_queue(ac, op, enc_id, id, SKP_ID_SIZE, cb, privdata);
}

int skc_async_unload(skc_async *ac, const unsigned char id[SKC_ID_SIZE], skc_async_cb cb,
                     void *privdata)
{
    return async_id(ac, SKP_OP_UNLOAD, id, cb, privdata);
}

int skc_async_info(skc_async *ac, const unsigned char id[SKC_ID_SIZE], skc_async_cb cb,
                   void *privdata)
{
    return async_id(ac, SKP_OP_INFO, id, cb, privdata);
}

int skc_async_instance_new(skc_async *ac, const unsigned char id[SKC_ID_SIZE], skc_async_cb cb,
                           void *privdata)
{
    return async_id(ac, SKP_OP_INSTANCE_NEW, id, cb, privdata);
}

int skc_async_instance_free(skc_async *ac, uint32_t instance, skc_async_cb cb, void *privdata)
{
    skc_client *c = astart(ac);
    return c ? skc__async_queue(ac, SKP_OP_INSTANCE_FREE, enc_u32, &instance, 4, cb, privdata)
             : SKC_EINVAL;
}

/* POSE and MESH: one evaluation request. */
static int async_eval(skc_async *ac, uint8_t op, const skc_eval *ev, skc_async_cb cb,
                      void *privdata)
{
    skc_client *c = astart(ac);
    int rc = c ? check_eval(c, ev) : SKC_EINVAL;
    return rc ? rc : skc__async_queue(ac, op, enc_eval, ev, 512, cb, privdata);
}

int skc_async_pose(skc_async *ac, const skc_eval *ev, skc_async_cb cb, void *privdata)
{
    return async_eval(ac, SKP_OP_POSE, ev, cb, privdata);
}

int skc_async_mesh(skc_async *ac, const skc_eval *ev, skc_async_cb cb, void *privdata)
{
    return async_eval(ac, SKP_OP_MESH, ev, cb, privdata);
}

int skc_async_render(skc_async *ac, const skc_eval *ev, const skc_render_opts *ro, skc_async_cb cb,
                     void *privdata)
{
    struct eval_render er = {ev, ro};
    skc_client *c = astart(ac);
    int rc = c ? check_eval(c, ev) : SKC_EINVAL;
    if (rc || (rc = check_render(c, ro)))
        return rc;
    return skc__async_queue(ac, render_op(ro), enc_eval_render, &er, 1024, cb, privdata);
}

int skc_async_stats(skc_async *ac, skc_async_cb cb, void *privdata)
{
    skc_client *c = astart(ac);
    return c ? skc__async_queue(ac, SKP_OP_STATS, enc_empty, NULL, 0, cb, privdata) : SKC_EINVAL;
}
