/* The opcode table and the loop-thread half of every request: decode, check, resolve names,
 * submit to the pool, and reply when the job is done. No bone math here. */
#include "autoconfig.h"

#include "dispatch.h"
#include "confine.h"
#include "work.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/png.h"
#include "engine/request.h"
#include "log.h"
#include "sha256.h"
#include "skp_msg.h"

/* A stateful instance: a pose that persists between requests on one connection. */
struct instance {
    uint32_t id;
    size_t bytes;              /* counted in dispatch's instance_bytes */
    struct cache_entry *entry; /* referenced while the instance lives */
    struct pose *pose;
    bool busy;   /* a job is running on it: later requests wait in order */
    bool doomed; /* freed by its owner while busy: goes once its jobs are done */
    struct request *wait_head, *wait_tail;
};

/* What dispatch keeps per connection (conn->session). */
struct session {
    bool authed;
    uint64_t auth_generation;    /* the config's when authed: another means the token changed */
    struct request *outstanding; /* evaluations submitted and not done (cancelled at close) */
    struct instance **instances; /* index = instance id - 1 */
    uint32_t instance_cap;
    uint32_t instance_free_from; /* no free slot below it: INSTANCE_NEW looks from here */
};

/* One request between the loop and a worker: the worker sees only work (work.h); the rest
 * is the loop's. */
struct request {
    struct work work;           /* first: the pool hands back &work.job */
    struct request *wait_next;  /* next on its instance's queue, or waiting on the same LOAD */
    struct request *parse_next; /* on d->parsing */
    struct dispatch *d;
    struct conn *conn;
    uint32_t id;
    uint8_t opcode;
    uint64_t started_us;
    struct cache_entry *entry; /* referenced until done */
    struct instance *inst;
    bool big;       /* a LOAD whose parse counts as the one big parse (WORK_BIG_PARSE_BYTES) */
    bool cacheable; /* a stateless evaluation: its answer goes to the result cache */
    uint8_t result_key[32];
    bool has_want; /* a LOAD of bytes that must hash to want (HTTP's PUT to an id) */
    uint8_t want[32];
    struct request *out_prev, *out_next; /* on the session's outstanding list */
    bool outstanding;
    /* another front's request (conn NULL): its completion, until forgotten */
    dispatch_done_fn done;
    void *done_ctx;
};

static struct dispatch *disp(const struct conn *c)
{
    return c->set->owner;
}

static struct session *sess(const struct conn *c)
{
    return c->session;
}

typedef void (*handler_fn)(struct conn *, const struct skp_frame *, struct skp_reader *);

/* The largest body an unauthenticated client may send: a HELLO or a PING. */
#define PRE_AUTH_MAX_FRAME (4 + 2 + SKP_MAX_NAME + 64)

struct command {
    handler_fn fn;
    uint32_t min_body, max_body;
    bool open; /* allowed before authentication */
};

/* ---- requests and completion -------------------------------------------------------------- */

static uint64_t now_us(void)
{
    return uv_hrtime() / 1000;
}

static struct request *new_request(struct conn *c, const struct skp_frame *f)
{
    struct request *r = calloc(1, sizeof *r);
    if (!r) {
        conn_error(c, f->h.opcode, f->h.id, SKP_S_NO_MEMORY, "out of memory");
        return NULL;
    }
    r->d = disp(c);
    r->conn = c;
    r->id = f->h.id;
    r->opcode = f->h.opcode;
    r->started_us = now_us();
    r->work.root_fd = -1;
    eval_request_init(&r->work.eval);
    construct_opts_default(&r->work.opts);
    picture_request_init(&r->work.picture);
    return r;
}

static void record_latency(struct dispatch *s, uint64_t us)
{
    int b = 0;
    while (b < 15 && us >= (64ull << b))
        b++;
    s->latency_us[b]++;
    s->latency_sum_us += us;
}

/* The pool's queue is full: the request ends with BUSY. */
static void refuse_busy(struct request *r)
{
    r->d->busy++;
    r->work.status = SKP_S_BUSY;
    snprintf(r->work.msg, sizeof r->work.msg, "queue full, retry");
}

static void free_request(struct request *r)
{
    work_release(&r->work);
    free(r);
}

static void submit(struct request *r);

static void instance_free_now(struct dispatch *s, struct instance *inst)
{
    s->instance_bytes -= inst->bytes;
    cache_unref(s->cache, inst->entry);
    pose_free(inst->pose);
    free(inst);
}

/* Frees inst, or dooms it until the jobs running or waiting on it are done. */
static void instance_release(struct dispatch *s, struct instance *inst)
{
    if (inst->busy || inst->wait_head)
        inst->doomed = true;
    else
        instance_free_now(s, inst);
}

/* An instance runs one request at a time, in arrival order. */
static void instance_next(struct dispatch *s, struct instance *inst)
{
    inst->busy = false;
    struct request *next = inst->wait_head;
    if (!next) {
        if (inst->doomed)
            instance_free_now(s, inst);
        return;
    }
    inst->wait_head = next->wait_next;
    if (!inst->wait_head)
        inst->wait_tail = NULL;
    submit(next);
}

static void reply_done(struct request *r)
{
    struct conn *c = r->conn;
    if (!c && r == r->d->starting) { /* refused as it started: the start returns it */
        r->d->start_status = r->work.status ? r->work.status : SKP_S_INTERNAL;
        snprintf(r->d->start_msg, sizeof r->d->start_msg, "%s", r->work.msg);
        return;
    }
    if (!c) { /* another front's: it takes the result (and the body) */
        bool changed = r->work.check_run && !r->work.status && !r->work.unchanged;
        struct dispatch_result res = {r->work.status,   r->work.msg,    r->work.body,
                                      r->work.body_len, r->work.digest, changed};
        if (r->done)
            r->done(r->done_ctx, &res);
        r->work.body = res.body; /* NULL if taken */
        return;
    }
    bool load = r->opcode == SKP_OP_LOAD_PATH || r->opcode == SKP_OP_LOAD_BYTES;
    conn_note(c, r->started_us,
              r->entry                  ? r->entry->id
              : load && !r->work.status ? r->work.digest
                                        : NULL);
    if (r->work.status)
        conn_error(c, r->opcode, r->id, r->work.status, "%s", r->work.msg);
    else {
        if (r->cacheable && !r->work.job.dropped) /* a dropped job (its client left) made nothing */
            rcache_put(&r->d->results, r->result_key, r->opcode, r->work.body, r->work.body_len);
        conn_reply(c, r->opcode, r->id, SKP_S_OK, r->work.body, r->work.body_len);
        r->work.body = NULL;
    }
}

/* An evaluation joins its session's outstanding list until done, so that the session's end
 * can cancel it. LOADs stay off the list: other LOADs may wait on their parse. */
static void outstanding_add(struct request *r)
{
    if (!r->conn)
        return; /* another front cancels through dispatch_forget */
    struct session *s = sess(r->conn);
    r->out_prev = NULL;
    r->out_next = s->outstanding;
    if (s->outstanding)
        s->outstanding->out_prev = r;
    s->outstanding = r;
    r->outstanding = true;
}

static void outstanding_remove(struct request *r)
{
    if (!r->outstanding)
        return;
    if (r->out_prev)
        r->out_prev->out_next = r->out_next;
    else
        sess(r->conn)->outstanding = r->out_next;
    if (r->out_next)
        r->out_next->out_prev = r->out_prev;
    r->outstanding = false;
}

/* The client is gone: what it asked for and is not yet running will not run. */
static void cancel_outstanding(struct session *s)
{
    for (struct request *r = s->outstanding, *n; r; r = n) {
        n = r->out_next;
        atomic_store_explicit(&r->work.job.cancelled, true, memory_order_relaxed);
        r->outstanding = false;
    }
    s->outstanding = NULL;
}

static void on_job_done(struct job *job)
{
    struct request *r = (struct request *)job;
    outstanding_remove(r);
    struct dispatch *s = r->d;
    s->unchanged += r->work.check_run && r->work.unchanged; /* a file checked, not read */
    record_latency(s, now_us() - r->started_us);
    reply_done(r);
    if (r->inst)
        instance_next(s, r->inst);
    if (r->entry)
        cache_unref(s->cache, r->entry);
    if (r->conn)
        conn_job_done(r->conn);
    free_request(r);
}

/* A stateless POSE or MESH of at most DISPATCH_INLINE_JOB_STEPS bone-steps (constructs x
 * armature_step_weight; one step of a 256-bone armature is a few microseconds) is staged: it may
 * run on the loop thread at the end of the iteration (pool_stage), with the others that arrived in
 * it, up to DISPATCH_INLINE_BATCH_STEPS. Returns the job's cost, or 0 for a job that always
 * goes to the workers. */
static unsigned inline_cost(const struct request *r)
{
    if (r->inst || (r->work.job.run != work_pose && r->work.job.run != work_mesh))
        return 0;
    uint64_t weight = armature_step_weight(r->work.arm);
    uint64_t steps = (uint64_t)r->work.eval.warmup + (uint64_t)eval_steps(&r->work.eval);
    if (steps > DISPATCH_INLINE_JOB_STEPS ||
        weight > DISPATCH_INLINE_JOB_STEPS / (steps ? steps : 1))
        return 0; /* a step of a heavy armature (IK chains, vertices) is no microsecond's work */
    return steps ? (unsigned)(steps * weight) : 1;
}

static void submit(struct request *r)
{
    if (r->inst) {
        if (r->inst->busy) {
            if (r->inst->wait_tail)
                r->inst->wait_tail->wait_next = r;
            else
                r->inst->wait_head = r;
            r->inst->wait_tail = r;
            return;
        }
        r->inst->busy = true;
    }
    r->work.job.done = on_job_done;
    unsigned cost = inline_cost(r);
    int rc =
        cost ? pool_stage(r->d->pool, &r->work.job, cost) : pool_submit(r->d->pool, &r->work.job);
    if (rc == 0)
        return;
    refuse_busy(r);
    on_job_done(&r->work.job);
}

/* Starts r's job (run already set): the connection and the armature stay referenced until
 * done. */
static void start_eval(struct request *r)
{
    r->work.arm = r->entry->arm;
    r->work.arm_serial = r->entry->serial;
    r->work.pose = r->inst ? r->inst->pose : NULL;
    outstanding_add(r);
    if (r->conn)
        conn_job_started(r->conn);
    if (r->entry)
        cache_ref(r->entry);
    submit(r);
}

static void start_job(struct request *r, void (*run)(struct job *, struct worker *))
{
    r->work.job.run = run;
    start_eval(r);
}

/* ---- request decoding ----------------------------------------------------------------------- */

static bool read_id(struct skp_reader *rd, uint8_t id[32])
{
    const void *p = skp_read_raw(rd, 32);
    if (p)
        memcpy(id, p, 32);
    return p != NULL;
}

/* The armature named by id, referenced; replies NOT_FOUND itself when absent. */
static struct cache_entry *lookup(struct conn *c, const struct skp_frame *f, const uint8_t id[32])
{
    struct cache_entry *e = cache_get(disp(c)->cache, id);
    if (!e)
        conn_error(c, f->h.opcode, f->h.id, SKP_S_NOT_FOUND, "no armature with that id is loaded");
    return e;
}

static bool finish_body(struct conn *c, const struct skp_frame *f, struct skp_reader *rd)
{
    int rc = skp_reader_finish(rd);
    if (rc == SKP_EOK)
        return true;
    conn_error(c, f->h.opcode, f->h.id, SKP_S_BAD_REQUEST, "%s body: %s",
               skp_opcode_name(f->h.opcode),
               rc == SKP_ETRAILING  ? "unexpected bytes after the last field"
               : rc == SKP_ETOOLONG ? "a string or blob is too long"
               : rc == SKP_ENUL     ? "a string holds a NUL byte"
                                    : "ends before its last field");
    return false;
}

static struct instance *find_instance(struct conn *c, uint32_t id)
{
    return id >= 1 && id <= sess(c)->instance_cap ? sess(c)->instances[id - 1] : NULL;
}

static bool bad(struct conn *c, const struct skp_frame *f, const char *msg)
{
    conn_error(c, f->h.opcode, f->h.id, SKP_S_BAD_REQUEST, "%s", msg);
    return false;
}

/* A wire string as a C string in buf (SKP_MAX_NAME + 1 bytes). */
static const char *cstr(struct skp_str s, char *buf)
{
    memcpy(buf, s.p ? s.p : "", s.len);
    buf[s.len] = 0;
    return buf;
}

/* The message's target: the armature (referenced by the job later) or an instance. On error
 * replies and returns false. */
static bool resolve_target(struct conn *c, const struct skp_frame *f, const struct skp_eval_req *m,
                           struct request *r)
{
    if (m->target == SKP_TARGET_ARMATURE) {
        if (!(r->entry = lookup(c, f, m->armature)))
            return false;
        cache_unref(disp(c)->cache, r->entry); /* start_job takes the job's own reference */
        return true;
    }
    r->inst = find_instance(c, m->instance);
    if (!r->inst || r->inst->doomed) {
        conn_error(c, f->h.opcode, f->h.id, SKP_S_NOT_FOUND, "no such instance on this connection");
        return false;
    }
    r->entry = r->inst->entry;
    return true;
}

/* The message's evaluation as the engine's request: names resolved, times made frames. */
static int to_eval(const struct armature *arm, const struct skp_eval_req *m, struct request *r,
                   struct eng_error *err)
{
    struct eval_request *e = &r->work.eval;
    e->count = m->anim_count;
    for (unsigned i = 0; i < m->anim_count; i++) {
        char buf[SKP_MAX_NAME + 1];
        int rc = request_find_anim(arm, cstr(m->anims[i].name, buf), &e->anims[i], err);
        if (rc)
            return rc;
        e->frames[i] = m->anims[i].frame;
        e->smooth[i] = m->anims[i].smooth;
    }
    e->from = m->from;
    e->has_from = m->flags & SKP_EVAL_FROM;
    e->warmup = m->warmup;
    e->loop = m->flags & SKP_EVAL_LOOP;
    e->reverse = m->flags & SKP_EVAL_REVERSE;
    /* Times in ms become frames of each animation: TimeFrame is the fractional frame, then
     * FormatFrame. With loop or reverse, each step's FormatFrame (eval_step) is that second
     * half (formatting here too reversed twice). Else, and for a play from `from`, which ends a
     * whole number of frames on, the frame is rounded here as FormatFrame rounds. */
    bool formatted_later = e->loop || e->reverse;
    for (unsigned i = 0; (m->flags & SKP_EVAL_MS) && i < e->count; i++) {
        if (!isfinite(e->frames[i]))
            continue;
        double f = anim_time_to_frame(arm, e->anims[i], e->frames[i]);
        e->frames[i] = formatted_later && !e->has_from
                           ? f
                           : anim_format_frame(arm, e->anims[i], f, false, false);
    }
    r->work.opts = (struct construct_opts){{m->position[0], m->position[1]},
                                           {m->scale[0], m->scale[1]},
                                           {m->velocity[0], m->velocity[1]},
                                           (m->flags & SKP_EVAL_Y_DOWN) != 0};
    return 0;
}

/* The render message as the engine's picture request. */
static int to_picture(const struct armature *arm, const struct skp_render_req *m, uint16_t flags,
                      struct request *r, struct eng_error *err)
{
    struct picture_request *pr = &r->work.picture;
    picture_request_init(pr);
    pr->opts.width = m->width;
    pr->opts.height = m->height;
    memcpy(pr->opts.background, m->background, 4);
    pr->fit = m->camera == SKP_CAMERA_FIT;
    pr->fraction = m->fit;
    pr->opts.scale = (struct vec2){m->scale[0], m->scale[1]};
    pr->opts.position = (struct vec2){m->position[0], m->position[1]};
    for (unsigned i = 0; i < m->style_count; i++) {
        char buf[SKP_MAX_NAME + 1];
        int rc = request_find_style(arm, cstr(m->styles[i], buf), &pr->opts.styles[i], err);
        if (rc)
            return rc;
    }
    pr->opts.style_count = m->style_count;
    pr->opts.samples = m->samples;
    /* (SKP_PNG_FAST arrives as SKP_PNG_DEFAULT: skp_decode_render_req) */
    pr->png_level = m->png_level == SKP_PNG_DEFAULT ? PNG_LEVEL_DEFAULT : m->png_level;
    pr->range = flags & SKP_EVAL_RANGE;
    pr->first = m->first;
    pr->last = m->last;
    pr->cols = m->cols;
    pr->rows = m->rows;
    r->work.format = m->format;
    if (m->camera > SKP_CAMERA_EXPLICIT)
        return eng_seterr(err, ENG_EINVAL, "camera %u: 0 (fit) or 1 (scale and position)",
                          m->camera);
    if (m->format > SKP_FORMAT_RGBA)
        return eng_seterr(err, ENG_EINVAL, "format %u: 0 (PNG) or 1 (raw RGBA)", m->format);
    return 0;
}

static void request_limits_of(const struct config *cfg, struct request_limits *l)
{
    l->max_image_pixels = (uint64_t)cfg->max_image_pixels;
    l->max_reply_pixels = 16 * (uint64_t)cfg->max_image_pixels;
    l->max_bone_steps = (uint64_t)cfg->max_bone_steps;
}

/* Decodes, resolves and checks an evaluation (and, for RENDER, its picture) into r. On error
 * replies and returns false. */
static bool read_eval(struct conn *c, const struct skp_frame *f, struct skp_reader *rd,
                      struct request *r, bool render)
{
    struct skp_eval_req m;
    struct skp_render_req rm;
    int rc = skp_decode_eval_req(rd, &m);
    if (rc == SKP_EOK && render)
        rc = skp_decode_render_req(rd, &rm);
    if (rc == SKP_ECOUNT) { /* which count: the decoder stops at the first past its bound */
        char why[96];
        if (m.target != SKP_TARGET_ARMATURE && m.target != SKP_TARGET_INSTANCE)
            snprintf(why, sizeof why, "target %u: 0 (an armature) or 1 (an instance)", m.target);
        else if (m.anim_count > SKP_MAX_ANIMS)
            snprintf(why, sizeof why, "%u animations: at most %d", m.anim_count, SKP_MAX_ANIMS);
        else
            snprintf(why, sizeof why, "%u styles: at most %d", rm.style_count, SKP_MAX_STYLES);
        return bad(c, f, why);
    }
    if (!finish_body(c, f, rd))
        return false;
    /* flags this daemon does not know are refused, not dropped (PROTOCOL.md, Versioning) */
    if (m.flags & ~SKP_EVAL_KNOWN_FLAGS || (!render && m.flags & SKP_EVAL_RANGE)) {
        char why[96];
        snprintf(why, sizeof why, "flags 0x%x: bits this daemon does not take for %s",
                 (unsigned)m.flags, skp_opcode_name(f->h.opcode));
        return bad(c, f, why);
    }
    /* A picture's camera is the render request's; the framing and every other front draw
     * without engine options, so RENDER takes none rather than draw what they would not. */
    bool engine_opts = m.position[0] != 0 || m.position[1] != 0 || m.scale[0] != 1 ||
                       m.scale[1] != 1 || m.velocity[0] != 0 || m.velocity[1] != 0 ||
                       (m.flags & SKP_EVAL_Y_DOWN);
    if (render && engine_opts)
        return bad(c, f,
                   "RENDER takes no engine options (position 0,0, scale 1,1, velocity 0,0, no "
                   "y-down): the render request's camera places the picture");
    if (!resolve_target(c, f, &m, r))
        return false;
    const struct armature *arm = r->entry->arm;
    struct request_limits lim;
    struct eng_error err;
    request_limits_of(disp(c)->cfg, &lim);
    rc = to_eval(arm, &m, r, &err);
    if (!rc && render && !(rc = to_picture(arm, &rm, m.flags, r, &err)))
        rc = request_check_picture(arm, &r->work.eval, &r->work.opts, &r->work.picture, &lim, &err);
    else if (!rc && !render)
        rc = request_check_eval(arm, &r->work.eval, &r->work.opts, &lim, &err);
    if (rc)
        conn_error(c, f->h.opcode, f->h.id, work_status_of(rc), "%s%s", err.msg,
                   work_limit_option(&err));
    return rc == 0;
}

_Static_assert(SKP_MAX_ANIMS <= EVAL_MAX_ANIMS, "a request's animations fit the engine's");

/* ---- handlers ------------------------------------------------------------------------------- */

static void h_hello(struct conn *c, const struct skp_frame *f, struct skp_reader *rd)
{
    uint16_t version = skp_read_u16(rd);
    size_t len;
    const char *token = skp_read_str(rd, &len);
    if (!finish_body(c, f, rd))
        return;
    if (!config_token_ok(disp(c)->cfg, token ? token : "", len)) {
        /* A client that sent none was most likely not told to: say what it lacks. */
        conn_error(c, f->h.opcode, f->h.id, SKP_S_AUTH,
                   len ? "wrong auth token"
                       : "this daemon needs an auth token; the HELLO has none");
        return;
    }
    if (version != SKP_VERSION) {
        conn_error(c, f->h.opcode, f->h.id, SKP_S_VERSION, "this daemon speaks protocol version %d",
                   SKP_VERSION);
        return;
    }
    sess(c)->authed = true;
    sess(c)->auth_generation = disp(c)->cfg->auth_generation;
    conn_set_max_frame(c, (uint32_t)disp(c)->cfg->max_frame);
    char name[sizeof PACKAGE_STRING + 4 + SKP_MAX_NODE_NAME]; /* "skeld 0.2.0 on NODE" */
    size_t name_len = skp_hello_name(name, sizeof name, PACKAGE_STRING, disp(c)->cfg->node_name);
    uint8_t *body = malloc(2 + 2 + name_len + 4);
    if (!body) {
        conn_error(c, f->h.opcode, f->h.id, SKP_S_NO_MEMORY, "out of memory");
        return;
    }
    struct skp_writer w;
    skp_writer_init(&w, body, 2 + 2 + name_len + 4);
    skp_write_u16(&w, SKP_VERSION);
    skp_write_str(&w, name, name_len);
    skp_write_u32(&w, (uint32_t)disp(c)->cfg->max_frame);
    conn_reply(c, f->h.opcode, f->h.id, SKP_S_OK, body, w.len);
}

static void h_ping(struct conn *c, const struct skp_frame *f, struct skp_reader *rd)
{
    size_t len;
    const void *p = skp_read_bytes(rd, &len, 1024);
    if (!finish_body(c, f, rd))
        return;
    uint8_t *body = malloc(4 + len);
    if (!body) {
        conn_error(c, f->h.opcode, f->h.id, SKP_S_NO_MEMORY, "out of memory");
        return;
    }
    skp_put_u32(body, (uint32_t)len);
    if (len)
        memcpy(body + 4, p, len);
    conn_reply(c, f->h.opcode, f->h.id, SKP_S_OK, body, 4 + len);
}

/* A LOAD's reply body: the entry's id and summary. Drops the caller's reference to e. */
static void summary_reply(struct request *r, struct cache_entry *e)
{
    cache_name(e, r->work.path); /* NULL for uploads */
    r->work.body = work_summary(e->arm, e->id, false, &r->work.body_len);
    if (!r->work.body) {
        r->work.status = SKP_S_NO_MEMORY;
        snprintf(r->work.msg, sizeof r->work.msg, "out of memory");
    }
    cache_unref(r->d->cache, e);
}

/* A parsed armature goes into the cache (which dedups by content id) and r's reply is the
 * summary. Returns the entry with a reference kept for the caller, or NULL. */
static struct cache_entry *settle_load(struct request *r)
{
    if (r->work.status || !r->work.loaded)
        return NULL;
    struct cache_entry *e = cache_add(r->d->cache, r->work.digest, r->work.loaded);
    r->work.loaded = NULL;
    if (!e) {
        r->work.status = SKP_S_NO_MEMORY;
        snprintf(r->work.msg, sizeof r->work.msg, "out of memory");
        return NULL;
    }
    cache_ref(e);
    summary_reply(r, e);
    return e;
}

/* Sends a LOAD's reply and frees it. */
static void finish_load(struct request *r)
{
    struct cache_entry *e = settle_load(r);
    if (e)
        cache_unref(r->d->cache, e);
    record_latency(r->d, now_us() - r->started_us);
    reply_done(r);
    if (r->conn)
        conn_job_done(r->conn);
    free_request(r);
}

/* Takes r off the list of parses in progress; returns the LOADs that waited on it. */
static struct request *end_parse(struct request *r)
{
    for (struct request **pp = &r->d->parsing; *pp; pp = &(*pp)->parse_next) {
        if (*pp == r) {
            *pp = r->parse_next;
            struct request *waiters = r->wait_next;
            r->wait_next = NULL;
            return waiters;
        }
    }
    return NULL;
}

/* A LOAD that waited on another's parse of the same content: the cache has it now, or the
 * parse failed and this one fails the same way. */
static void finish_waiter(struct request *w, const struct request *leader)
{
    struct cache_entry *e = leader->work.status ? NULL : cache_get(w->d->cache, w->work.digest);
    if (e) {
        summary_reply(w, e);
    } else {
        w->work.status = leader->work.status ? leader->work.status : SKP_S_INTERNAL;
        snprintf(w->work.msg, sizeof w->work.msg, "%s",
                 leader->work.status ? leader->work.msg : "armature evicted");
    }
    finish_load(w);
}

static void submit_load_step(struct request *r, void (*run)(struct job *, struct worker *),
                             void (*done)(struct job *));
static void on_load_done(struct job *job);
static void on_load_hashed(struct job *job);

/* ---- the path memo ------------------------------------------------------------------------ */

/* Direct-mapped by a hash of the path: a path that collides replaces the one before, so the
 * memo stays small and a lookup is one comparison. */
#define PATH_MEMO_SLOTS 512

struct path_memo {
    char *path; /* NULL: empty */
    struct confine_sig sig;
    uint8_t digest[32];
};

static struct path_memo *memo_slot(struct dispatch *d, const char *path)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)path; *p; p++)
        h = (h ^ *p) * 16777619u;
    return &d->memo[h % PATH_MEMO_SLOTS];
}

/* What a worker reading a file under --root goes by: its size limit and the settle margin. */
static void file_limits(struct request *r)
{
    const struct config *cfg = r->d->cfg;
    r->work.max_skf = (uint64_t)cfg->max_skf_mb << 20;
    r->work.settle_ns = cfg->file_settle_ms < 0 ? -1 : cfg->file_settle_ms * 1000000;
}

/* What the memo knows of path, if its armature is still cached; else NULL. */
static struct path_memo *memo_known(struct dispatch *d, const char *path)
{
    /* --file-settle-ms -1 (perhaps since a reload) trusts no signature, even remembered ones */
    struct path_memo *m = d->memo && d->cfg->file_settle_ms >= 0 ? memo_slot(d, path) : NULL;
    if (!m || !m->path || strcmp(m->path, path) || !cache_contains(d->cache, m->digest))
        return NULL;
    return m;
}

/* A LOAD by path of a file whose armature is cached: the worker need only see that the file
 * is still the version that made it. */
static void memo_recall(struct request *r)
{
    struct path_memo *m = memo_known(r->d, r->work.path);
    if (!m)
        return;
    r->work.has_known = true;
    r->work.known = m->sig;
    memcpy(r->work.known_digest, m->digest, sizeof m->digest);
}

/* After a read: a settled file's version is remembered, an unsettled one's forgotten (it
 * may change again without changing its signature). */
static void memo_learn(struct request *r)
{
    struct path_memo *m = r->d->memo ? memo_slot(r->d, r->work.path) : NULL;
    if (!m || r->work.unchanged)
        return;
    bool same_path = m->path && !strcmp(m->path, r->work.path);
    if (!r->work.settled) {
        if (same_path) {
            free(m->path);
            m->path = NULL;
        }
        return;
    }
    if (!same_path) {
        char *copy = strdup(r->work.path);
        if (!copy)
            return; /* the memo only saves work */
        free(m->path);
        m->path = copy;
    }
    m->sig = r->work.sig;
    memcpy(m->digest, r->work.digest, sizeof m->digest);
}

/* A LOAD by path hashed (or found unchanged): the memo learns from it. True if the file was
 * the known version but its armature was evicted meanwhile: the load was started again, to
 * read the bytes after all. */
static bool memo_settle(struct request *r)
{
    memo_learn(r);
    if (r->work.unchanged && !cache_contains(r->d->cache, r->work.digest)) {
        r->work.has_known = r->work.unchanged = false;
        submit_load_step(r, work_load_hash, on_load_hashed);
        return true;
    }
    r->d->unchanged += r->work.unchanged;
    return false;
}

static void memo_free(struct dispatch *d)
{
    for (size_t i = 0; d->memo && i < PATH_MEMO_SLOTS; i++)
        free(d->memo[i].path);
    free(d->memo);
    d->memo = NULL;
}

/* The big parse finished: the next big one in line starts. */
static void next_big_parse(struct dispatch *d)
{
    struct request *next = d->big_head;
    d->big_parsing = next != NULL;
    if (!next)
        return;
    d->big_head = next->wait_next;
    if (!d->big_head)
        d->big_tail = NULL;
    next->wait_next = NULL;
    submit_load_step(next, work_load_parse, on_load_done);
}

static void on_load_done(struct job *job)
{
    struct request *r = (struct request *)job;
    struct request *waiters = end_parse(r);
    if (r->big) {
        r->big = false;
        next_big_parse(r->d);
    }
    if (r->work.job.run == work_load_parse && r->work.status != SKP_S_BUSY)
        r->d->parses++;
    /* Held until every LOAD of this parse is answered: the first reply lets the entry go,
     * and a cache kept over budget by armatures in use evicts it at once, which left the
     * waiters nothing to answer from (INTERNAL, "armature evicted"). */
    struct cache *cache = r->d->cache;
    struct cache_entry *held = settle_load(r);
    for (struct request *w = waiters, *n; w; w = n) {
        n = w->wait_next;
        w->wait_next = NULL;
        finish_waiter(w, r);
    }
    finish_load(r);
    if (held)
        cache_unref(cache, held);
}

/* Queues the next step of a LOAD, or finishes it with BUSY if it cannot. The pool keeps
 * running through a shutdown, so a LOAD between its steps still completes. */
static void submit_load_step(struct request *r, void (*run)(struct job *, struct worker *),
                             void (*done)(struct job *))
{
    r->work.job.run = run;
    r->work.job.done = done;
    if (pool_submit(r->d->pool, &r->work.job) == 0)
        return;
    refuse_busy(r);
    on_load_done(&r->work.job);
}

/* The content is hashed: a cached id answers at once; content another LOAD is parsing waits
 * for that parse (so a burst of uploads of one file parses it once); the rest is parsed. */
static void on_load_hashed(struct job *job)
{
    struct request *r = (struct request *)job;
    if (!r->work.status && r->work.path && r->work.root_fd >= 0 && memo_settle(r))
        return;
    if (!r->work.status && r->has_want && memcmp(r->want, r->work.digest, 32)) {
        /* refused before it is parsed or cached, or the refusal would load it all the same */
        char id[65];
        skp_hex(id, r->work.digest, 32);
        r->work.status = SKP_S_BAD_REQUEST;
        snprintf(r->work.msg, sizeof r->work.msg, "the body's SHA-256 is %s, not the id in the URL",
                 id);
    }
    struct cache_entry *e = r->work.status ? NULL : cache_get(r->d->cache, r->work.digest);
    if (r->work.status || e) {
        if (e)
            summary_reply(r, e);
        finish_load(r);
        return;
    }
    for (struct request *p = r->d->parsing; p; p = p->parse_next) {
        if (!memcmp(p->work.digest, r->work.digest, sizeof r->work.digest)) {
            r->wait_next = p->wait_next;
            p->wait_next = r;
            return;
        }
    }
    r->parse_next = r->d->parsing;
    r->d->parsing = r;
    /* Big parses take real memory: one at a time, in arrival order. */
    if (r->work.json_size > WORK_BIG_PARSE_BYTES) {
        r->big = true;
        if (r->d->big_parsing) {
            if (r->d->big_tail)
                r->d->big_tail->wait_next = r;
            else
                r->d->big_head = r;
            r->d->big_tail = r;
            return;
        }
        r->d->big_parsing = true;
    }
    submit_load_step(r, work_load_parse, on_load_done);
}

void dispatch_load_limits(const struct dispatch *d, struct work *w)
{
    w->max_skf = (uint64_t)d->cfg->max_skf_mb << 20;
    w->max_json = (uint64_t)d->cfg->max_json_mb << 20;
    w->max_bones = (uint32_t)d->cfg->max_bones;
    w->max_arm_bytes = d->cache->budget;
}

static void start_load(struct request *r)
{
    file_limits(r);
    dispatch_load_limits(r->d, &r->work);
    if (r->conn)
        conn_job_started(r->conn);
    if (r->work.path && r->work.root_fd >= 0)
        memo_recall(r);
    submit_load_step(r, work_load_hash, on_load_hashed);
}

static void h_load_path(struct conn *c, const struct skp_frame *f, struct skp_reader *rd)
{
    size_t len;
    const char *path = skp_read_str(rd, &len);
    if (!finish_body(c, f, rd))
        return;
    char why[256];
    uint16_t st = SKP_S_FORBIDDEN_PATH;
    if (disp(c)->root_fd < 0)
        snprintf(why, sizeof why, "%s", DISPATCH_NO_ROOT);
    else
        st = confine_check(path, len, why, sizeof why);
    if (st != SKP_S_OK) {
        conn_error(c, f->h.opcode, f->h.id, st, "%s", why);
        return;
    }
    struct request *r = new_request(c, f);
    if (!r)
        return;
    if (!(r->work.path = malloc(len + 1))) {
        conn_error(c, f->h.opcode, f->h.id, SKP_S_NO_MEMORY, "out of memory");
        free_request(r);
        return;
    }
    memcpy(r->work.path, path, len);
    r->work.path[len] = 0;
    r->work.root_fd = disp(c)->root_fd; /* opened beneath it by the worker, race-free */
    start_load(r);
}

static void h_load_bytes(struct conn *c, const struct skp_frame *f, struct skp_reader *rd)
{
    size_t len;
    const void *p = skp_read_bytes(rd, &len, SKP_MAX_FRAME);
    if (!finish_body(c, f, rd))
        return;
    /* The same limit as a file read by path or uploaded over HTTP: the frame limit alone
     * would let a file past it that the other two refuse. */
    uint64_t max_skf = (uint64_t)disp(c)->cfg->max_skf_mb << 20;
    if (len > max_skf) {
        conn_error(c, f->h.opcode, f->h.id, SKP_S_LIMIT,
                   "the file is %zu bytes, larger than %llu (--max-skf-mb)", len,
                   (unsigned long long)max_skf);
        return;
    }
    struct request *r = new_request(c, f);
    if (!r)
        return;
    r->work.input = malloc(len ? len : 1);
    if (!r->work.input) {
        conn_error(c, f->h.opcode, f->h.id, SKP_S_NO_MEMORY, "out of memory");
        free_request(r);
        return;
    }
    memcpy(r->work.input, p, len);
    r->work.input_len = len;
    start_load(r);
}

static void h_unload(struct conn *c, const struct skp_frame *f, struct skp_reader *rd)
{
    uint8_t id[32];
    read_id(rd, id);
    if (!finish_body(c, f, rd))
        return;
    conn_note(c, c->note_started_us, id);
    if (!cache_remove(disp(c)->cache, id))
        conn_error(c, f->h.opcode, f->h.id, SKP_S_NOT_FOUND, "no armature with that id is loaded");
    else
        conn_reply(c, f->h.opcode, f->h.id, SKP_S_OK, NULL, 0);
}

/* A body that is just an armature id: the entry, referenced, or NULL after the reply. */
static struct cache_entry *lookup_body(struct conn *c, const struct skp_frame *f,
                                       struct skp_reader *rd)
{
    uint8_t id[32];
    read_id(rd, id);
    return finish_body(c, f, rd) ? lookup(c, f, id) : NULL;
}

static void h_info(struct conn *c, const struct skp_frame *f, struct skp_reader *rd)
{
    struct cache_entry *e = lookup_body(c, f, rd);
    if (!e)
        return;
    size_t len;
    uint8_t *body = work_summary(e->arm, e->id, true, &len);
    conn_note(c, c->note_started_us, e->id);
    cache_unref(disp(c)->cache, e);
    if (!body)
        conn_error(c, f->h.opcode, f->h.id, SKP_S_NO_MEMORY, "out of memory");
    else
        conn_reply(c, f->h.opcode, f->h.id, SKP_S_OK, body, len);
}

/* `skeld info`'s JSON of a cached armature, as bytes: what INFO's binary summary lacks
 * (layout, version, IK families, textures...) for a client that wants the one JSON. */
static void h_info_json(struct conn *c, const struct skp_frame *f, struct skp_reader *rd)
{
    struct cache_entry *e = lookup_body(c, f, rd);
    if (!e)
        return;
    struct byte_buf b = {NULL, 0, 0};
    int rc = byte_buf_reserve(&b, 4) || (b.len = 4, work_info_json(e->arm, e->id, &b));
    conn_note(c, c->note_started_us, e->id);
    cache_unref(disp(c)->cache, e);
    if (rc || b.len - 4 > UINT32_MAX) {
        free(b.data);
        conn_error(c, f->h.opcode, f->h.id, SKP_S_NO_MEMORY, "out of memory");
        return;
    }
    skp_put_u32(b.data, (uint32_t)(b.len - 4));
    conn_reply(c, f->h.opcode, f->h.id, SKP_S_OK, b.data, b.len);
}

/* The lowest free instance slot of c's session, grown as needed: UINT32_MAX when the session
 * holds as many as it may (SKP's instance ids are u32, and each slot is a pointer). */
#define SESSION_MAX_INSTANCES 65536u
static uint32_t free_instance_slot(struct session *ss)
{
    uint32_t slot = ss->instance_free_from;
    while (slot < ss->instance_cap && ss->instances[slot])
        slot++;
    ss->instance_free_from = slot;
    if (slot < ss->instance_cap)
        return slot;
    uint32_t cap = ss->instance_cap ? ss->instance_cap * 2 : 8;
    struct instance **n =
        cap <= SESSION_MAX_INSTANCES ? realloc(ss->instances, cap * sizeof *n) : NULL;
    if (!n)
        return UINT32_MAX;
    memset(n + ss->instance_cap, 0, (cap - ss->instance_cap) * sizeof *n);
    ss->instances = n;
    ss->instance_cap = cap;
    return slot;
}

static void h_instance_new(struct conn *c, const struct skp_frame *f, struct skp_reader *rd)
{
    struct cache_entry *e = lookup_body(c, f, rd);
    if (!e)
        return;
    struct dispatch *s = disp(c);
    /* Instances are the one thing a client keeps in the daemon's memory at will: counted
     * against one budget over all connections, or a few thousand of a big armature would
     * take the host's memory. */
    size_t bytes = sizeof(struct instance) + pose_bytes(e->arm),
           budget = (size_t)s->cfg->max_instance_mb << 20;
    if (bytes > budget || s->instance_bytes > budget - bytes) {
        cache_unref(s->cache, e);
        conn_error(c, f->h.opcode, f->h.id, SKP_S_LIMIT,
                   "an instance of this armature takes %zu KiB, and the instances of all "
                   "connections hold %zu of the %zu MiB --max-instance-mb allows: free some "
                   "(INSTANCE_FREE)",
                   (bytes + 1023) >> 10, (s->instance_bytes + (1u << 20) - 1) >> 20, budget >> 20);
        return;
    }
    uint32_t slot = free_instance_slot(sess(c));
    if (slot == UINT32_MAX) {
        cache_unref(s->cache, e);
        conn_error(c, f->h.opcode, f->h.id, SKP_S_LIMIT,
                   "too many instances on this connection (at most %u)", SESSION_MAX_INSTANCES);
        return;
    }
    struct instance *inst = calloc(1, sizeof *inst);
    struct pose *p = inst ? pose_new(e->arm) : NULL;
    if (!p) {
        free(inst);
        cache_unref(s->cache, e);
        conn_error(c, f->h.opcode, f->h.id, SKP_S_NO_MEMORY, "out of memory");
        return;
    }
    inst->id = slot + 1;
    inst->bytes = bytes;
    s->instance_bytes += bytes;
    inst->entry = e; /* keeps the reference lookup took */
    inst->pose = p;
    sess(c)->instances[slot] = inst;
    uint8_t *body = malloc(4);
    if (body)
        skp_put_u32(body, inst->id);
    conn_reply(c, f->h.opcode, f->h.id, body ? SKP_S_OK : SKP_S_NO_MEMORY, body, body ? 4 : 0);
}

static void h_instance_free(struct conn *c, const struct skp_frame *f, struct skp_reader *rd)
{
    uint32_t id = skp_read_u32(rd);
    if (!finish_body(c, f, rd))
        return;
    struct instance *inst = find_instance(c, id);
    if (!inst) {
        conn_error(c, f->h.opcode, f->h.id, SKP_S_NOT_FOUND, "no such instance on this connection");
        return;
    }
    sess(c)->instances[id - 1] = NULL;
    if (id - 1 < sess(c)->instance_free_from)
        sess(c)->instance_free_from = id - 1;
    instance_release(disp(c), inst);
    conn_reply(c, f->h.opcode, f->h.id, SKP_S_OK, NULL, 0);
}

/* A stateless evaluation's answer depends only on the armature and the request's bytes: its
 * result-cache key. A RENDER's png level is read as it is decoded (SKP_PNG_FAST is the
 * default encoder), so the two spellings of one request share their answer. */
static int result_key(const struct request *r, const struct skp_frame *f, uint8_t key[32])
{
    struct sha256_ctx h;
    uint8_t op = f->h.opcode;
    size_t len = f->h.body_len, png = len; /* png: where the level is, if a RENDER's */
    if (op == SKP_OP_RENDER && len >= SKP_RENDER_PNG_FROM_END)
        png = len - SKP_RENDER_PNG_FROM_END;
    sha256_init(&h); /* a failure shows in final */
    sha256_update(&h, "skeld-bin-v1", 12);
    sha256_update(&h, r->entry->id, 32);
    sha256_update(&h, &op, 1);
    sha256_update(&h, f->body, png);
    if (png < len) {
        uint8_t level = f->body[png] == SKP_PNG_FAST ? SKP_PNG_DEFAULT : f->body[png];
        sha256_update(&h, &level, 1);
        sha256_update(&h, f->body + png + 1, len - png - 1);
    }
    return sha256_final(&h, key);
}

static void h_eval(struct conn *c, const struct skp_frame *f, struct skp_reader *rd,
                   void (*run)(struct job *, struct worker *), bool render)
{
    struct request *r = new_request(c, f);
    if (!r)
        return;
    if (!read_eval(c, f, rd, r, render)) {
        free_request(r);
        return;
    }
    if (!r->inst && disp(c)->results.budget && result_key(r, f, r->result_key) == 0) {
        const struct rcache_item *hit = rcache_get(&disp(c)->results, r->result_key);
        uint8_t *body = hit ? malloc(hit->len ? hit->len : 1) : NULL;
        if (body) {
            memcpy(body, hit->body, hit->len);
            conn_note(c, c->note_started_us, r->entry->id);
            conn_reply(c, f->h.opcode, f->h.id, SKP_S_OK, body, hit->len);
            free_request(r);
            return;
        }
        r->cacheable = true;
    }
    start_job(r, run);
}

static void h_pose(struct conn *c, const struct skp_frame *f, struct skp_reader *rd)
{
    h_eval(c, f, rd, work_pose, false);
}

static void h_mesh(struct conn *c, const struct skp_frame *f, struct skp_reader *rd)
{
    h_eval(c, f, rd, work_mesh, false);
}

static void h_render(struct conn *c, const struct skp_frame *f, struct skp_reader *rd)
{
    h_eval(c, f, rd, work_render, true);
}

void dispatch_counters(const struct dispatch *s, struct dispatch_counters *out)
{
    size_t n = 0, names = 0;
    for (int op = 1; op < SKP_OP_MAX; op++) {
        snprintf(out->names[names], sizeof out->names[names], "requests.%s", skp_opcode_name(op));
        out->k[n++] = (struct skp_counter){out->names[names++], s->requests[op]};
    }
    /* Connections of both fronts: the HTTP front's list is the binary one's other. */
    const struct conn_list *list = &s->conns->list, *other = list->other;
    uint64_t open_conns = list->count + (other ? other->count : 0);
    const struct skp_counter plain[] = {
        {"errors", s->conns->error_replies},
        {"busy", s->busy},
        {"jobs.dropped", pool_dropped(s->pool)},
        {"jobs.inline", s->pool->inlined},
        {"results.hits", s->results.stats.hits},
        {"results.misses", s->results.stats.misses},
        {"results.evictions", s->results.stats.evictions},
        {"results.bytes", s->results.stats.bytes},
        {"loads.parsed", s->parses},
        {"loads.unchanged", s->unchanged},
        {"cache.hits", s->cache->stats.hits},
        {"cache.misses", s->cache->stats.misses},
        {"cache.evictions", s->cache->stats.evictions},
        {"cache.loads", s->cache->stats.loads},
        {"cache.bytes", s->cache->bytes},
        {"cache.entries", s->cache->count},
        {"queue.depth", pool_depth(s->pool)},
        {"connections", open_conns},
        {"connections.total", list->total + (other ? other->total : 0)},
        {"connections.refused", list->refused + (other ? other->refused : 0)},
        {"input.bytes", s->conns->in_bytes},
        {"instances.bytes", s->instance_bytes},
        {"uptime.ms", uv_now(s->loop) - s->started_ms},
    };
    _Static_assert(sizeof plain / sizeof plain[0] == DISPATCH_PLAIN_COUNTERS,
                   "DISPATCH_COUNTERS counts them");
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        out->k[n++] = plain[i];
    static const uint16_t statuses[] = {
#define SKP_X(name, value, msg) SKP_S_##name,
        SKP_STATUSES(SKP_X)
#undef SKP_X
    };
    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
        if (statuses[i] == SKP_S_OK)
            continue;
        snprintf(out->names[names], sizeof out->names[names], "refusals.%s",
                 skp_status_name(statuses[i]));
        out->k[n++] = (struct skp_counter){out->names[names++], s->conns->refusals[statuses[i]]};
    }
    for (int b = 0; b < 16; b++) {
        char *name = out->names[names++];
        if (b < 15)
            snprintf(name, sizeof out->names[0], "latency.lt_%lluus", 64ull << b);
        else /* the last bucket is open-ended */
            snprintf(name, sizeof out->names[0], "latency.ge_%lluus", 64ull << 14);
        out->k[n++] = (struct skp_counter){name, s->latency_us[b]};
    }
    out->k[n++] = (struct skp_counter){"latency.sum_us", s->latency_sum_us};
    out->n = n;
}

static void h_stats(struct conn *c, const struct skp_frame *f, struct skp_reader *rd)
{
    if (!finish_body(c, f, rd))
        return;
    struct dispatch_counters k;
    dispatch_counters(disp(c), &k);
    size_t cap = 4 + k.n * (2 + 32 + 8);
    uint8_t *body = malloc(cap);
    if (!body) {
        conn_error(c, f->h.opcode, f->h.id, SKP_S_NO_MEMORY, "out of memory");
        return;
    }
    struct skp_writer w;
    skp_writer_init(&w, body, cap);
    skp_write_u32(&w, (uint32_t)k.n);
    for (size_t i = 0; i < k.n; i++) {
        skp_write_str(&w, k.k[i].name, strlen(k.k[i].name));
        skp_write_u32(&w, (uint32_t)(k.k[i].value >> 32));
        skp_write_u32(&w, (uint32_t)k.k[i].value);
    }
    conn_reply(c, f->h.opcode, f->h.id, w.err ? SKP_S_INTERNAL : SKP_S_OK, body, w.err ? 0 : w.len);
}

/* ---- the table -------------------------------------------------------------------------- */

static const struct command commands[SKP_OP_MAX] = {
    [SKP_OP_HELLO] = {h_hello, 4, 4 + SKP_MAX_NAME, true},
    [SKP_OP_PING] = {h_ping, 4, 4 + 1024, true},
    [SKP_OP_LOAD_PATH] = {h_load_path, 2, 2 + SKP_MAX_NAME, false},
    [SKP_OP_LOAD_BYTES] = {h_load_bytes, 4, SKP_MAX_FRAME, false},
    [SKP_OP_UNLOAD] = {h_unload, 32, 32, false},
    [SKP_OP_INFO] = {h_info, 32, 32, false},
    [SKP_OP_INSTANCE_NEW] = {h_instance_new, 32, 32, false},
    [SKP_OP_INSTANCE_FREE] = {h_instance_free, 4, 4, false},
    [SKP_OP_POSE] = {h_pose, 8, 65536, false},
    [SKP_OP_MESH] = {h_mesh, 8, 65536, false},
    [SKP_OP_RENDER] = {h_render, 8, 65536 + 64 * (2 + SKP_MAX_NAME), false},
    [SKP_OP_STATS] = {h_stats, 0, 0, false},
    [SKP_OP_INFO_JSON] = {h_info_json, 32, 32, false},
};

/* Whether c may send what is not HELLO or PING; else it is answered AUTH. A connection
 * authenticated under a token that a reload has since changed (or set, or removed) is not:
 * access granted for the old token ends with it, though the connection stays open. */
static bool authorized(struct conn *c, uint8_t op, uint32_t id)
{
    const struct session *s = sess(c);
    if (!s->authed) {
        conn_error(c, op, id, SKP_S_AUTH, "send HELLO with the auth token first");
        return false;
    }
    if (s->auth_generation != disp(c)->cfg->auth_generation) {
        conn_error(c, op, id, SKP_S_AUTH,
                   "the auth token changed (reload): send HELLO with the new one");
        return false;
    }
    return true;
}

static void on_frame(void *owner, struct conn *c, const struct skp_frame *f)
{
    (void)owner; /* disp(c) */
    uint8_t op = f->h.opcode;
    const struct command *cmd = op < SKP_OP_MAX ? &commands[op] : NULL;
    if (f->h.flags & SKP_F_REPLY) {
        conn_error(c, op, f->h.id, SKP_S_BAD_REQUEST, "a client may not send replies");
        return;
    }
    if (!cmd || !cmd->fn) {
        conn_error(c, op, f->h.id, SKP_S_UNKNOWN_OPCODE, "unknown opcode %u", op);
        return;
    }
    disp(c)->requests[op]++;
    if (disp(c)->conns->stopping && !c->frame_begun) {
        conn_error(c, op, f->h.id, SKP_S_SHUTDOWN, "shutting down");
        return;
    }
    if (!cmd->open && !authorized(c, op, f->h.id))
        return;
    if (f->h.body_len < cmd->min_body || f->h.body_len > cmd->max_body) {
        conn_error(c, op, f->h.id, SKP_S_BAD_REQUEST, "%s body of %u bytes is out of range",
                   skp_opcode_name(op), f->h.body_len);
        return;
    }
    struct skp_reader rd;
    skp_reader_init(&rd, f->body, f->h.body_len);
    cmd->fn(c, f, &rd);
}

static int on_open(void *owner, struct conn *c)
{
    const struct dispatch *d = owner;
    struct session *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    s->authed = !d->cfg->auth_token || !*d->cfg->auth_token;
    s->auth_generation = d->cfg->auth_generation;
    c->session = s;
    if (!s->authed) /* until HELLO: room for a HELLO or a PING, no more */
        conn_set_max_frame(c, PRE_AUTH_MAX_FRAME);
    return 0;
}

/* Instances go with their connection (once the jobs running on them are done). */
static void on_close(void *owner, struct conn *c)
{
    struct session *s = sess(c);
    cancel_outstanding(s);
    for (uint32_t i = 0; i < s->instance_cap; i++)
        if (s->instances[i])
            instance_release(owner, s->instances[i]);
    free(s->instances);
    free(s);
    c->session = NULL;
}

const struct conn_hooks dispatch_conn_hooks = {on_open, on_frame, on_close};

int dispatch_init(struct dispatch *d, uv_loop_t *loop, const struct config *cfg,
                  struct cache *cache, struct pool *pool, struct conn_set *conns)
{
    memset(d, 0, sizeof *d);
    d->loop = loop;
    d->cfg = cfg;
    d->cache = cache;
    d->pool = pool;
    d->conns = conns;
    d->started_ms = uv_now(loop);
    /* No implicit root: a daemon started from / must not serve every file by path. */
    d->root_fd = cfg->root ? open(cfg->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (cfg->root && d->root_fd < 0) {
        log_msg(LOG_ERROR, "--root %s: %s", cfg->root, strerror(errno));
        return -1;
    }
    if (!cfg->root)
        log_msg(LOG_INFO, "no --root: LOAD by path is refused");
    if ((cfg->root && !(d->memo = calloc(PATH_MEMO_SLOTS, sizeof *d->memo))) ||
        rcache_init(&d->results, (size_t)cfg->result_cache_mb << 20)) {
        log_msg(LOG_ERROR, "out of memory for the %s",
                cfg->root && !d->memo ? "path memo" : "result cache");
        memo_free(d);
        if (d->root_fd >= 0)
            close(d->root_fd);
        return -1;
    }
    return 0;
}

void dispatch_close(struct dispatch *d)
{
    rcache_close(&d->results);
    memo_free(d);
    if (d->root_fd >= 0)
        close(d->root_fd);
    d->root_fd = -1;
}

/* ---- the request machinery for other fronts (the HTTP front) ------------------------------- */

static struct request *front_request(struct dispatch *d, uint8_t opcode, dispatch_done_fn done,
                                     void *ctx)
{
    struct request *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->d = d;
    r->opcode = opcode;
    r->started_us = now_us();
    r->done = done;
    r->done_ctx = ctx;
    r->work.root_fd = -1;
    eval_request_init(&r->work.eval);
    construct_opts_default(&r->work.opts);
    picture_request_init(&r->work.picture);
    d->requests[opcode]++;
    return r;
}

void dispatch_count(struct dispatch *d, uint8_t opcode)
{
    if (opcode < SKP_OP_MAX)
        d->requests[opcode]++;
}

/* Starts front request r with start (a LOAD or an evaluation). r, or NULL with *status and
 * why if it ended within the start (the pool refused it; r is then already freed). */
static struct request *front_start(struct request *r, void (*start)(struct request *),
                                   uint16_t *status, char *why, size_t whylen)
{
    struct dispatch *d = r->d;
    d->starting = r;
    d->start_status = SKP_S_OK;
    start(r);
    d->starting = NULL;
    if (d->start_status == SKP_S_OK)
        return r;
    *status = d->start_status;
    snprintf(why, whylen, "%s", d->start_msg);
    return NULL;
}

static void no_memory(uint16_t *status, char *why, size_t whylen)
{
    *status = SKP_S_NO_MEMORY;
    snprintf(why, whylen, "out of memory");
}

struct request *dispatch_load_bytes(struct dispatch *d, uint8_t *bytes, size_t len,
                                    const uint8_t *want, dispatch_done_fn done, void *ctx,
                                    uint16_t *status, char *why, size_t whylen)
{
    struct request *r = front_request(d, SKP_OP_LOAD_BYTES, done, ctx);
    if (!r) {
        free(bytes);
        no_memory(status, why, whylen);
        return NULL;
    }
    if (want) {
        r->has_want = true;
        memcpy(r->want, want, 32);
    }
    r->work.input = bytes;
    r->work.input_len = len;
    return front_start(r, start_load, status, why, whylen);
}

struct request *dispatch_load_path(struct dispatch *d, const char *rel, size_t len,
                                   dispatch_done_fn done, void *ctx, uint16_t *status, char *why,
                                   size_t whylen)
{
    if (d->root_fd < 0) {
        *status = SKP_S_FORBIDDEN_PATH;
        snprintf(why, whylen, "%s", DISPATCH_NO_ROOT);
        return NULL;
    }
    if ((*status = confine_check(rel, len, why, whylen)) != SKP_S_OK)
        return NULL;
    struct request *r = front_request(d, SKP_OP_LOAD_PATH, done, ctx);
    if (r && (r->work.path = malloc(len + 1))) {
        memcpy(r->work.path, rel, len);
        r->work.path[len] = 0;
        r->work.root_fd = d->root_fd;
        return front_start(r, start_load, status, why, whylen);
    }
    free(r);
    no_memory(status, why, whylen);
    return NULL;
}

struct cache_entry *dispatch_recall_file(struct dispatch *d, const char *rel,
                                         struct dispatch_file *file)
{
    char why[256];
    struct path_memo *m =
        d->root_fd >= 0 && confine_check(rel, strlen(rel), why, sizeof why) == SKP_S_OK
            ? memo_known(d, rel)
            : NULL;
    if (!m)
        return NULL;
    file->path = rel;
    file->sig = m->sig;
    return cache_get(d->cache, m->digest);
}

/* An evaluation of a file's armature checks the file first (work_checked). */
static int check_file_first(struct request *r, const struct dispatch_file *file)
{
    if (!(r->work.path = strdup(file->path)))
        return -1;
    r->work.root_fd = r->d->root_fd;
    r->work.has_known = true;
    r->work.known = file->sig;
    file_limits(r);
    r->work.check_run = r->work.job.run;
    r->work.job.run = work_checked;
    return 0;
}

struct request *dispatch_eval(struct dispatch *d, struct cache_entry *e, uint8_t op, uint8_t output,
                              const struct skp_eval_req *m, const struct skp_render_req *rm,
                              const struct dispatch_file *file, dispatch_done_fn done, void *ctx,
                              uint16_t *status, char *why, size_t whylen)
{
    struct request *r = front_request(d, op, done, ctx);
    if (!r) {
        no_memory(status, why, whylen);
        return NULL;
    }
    r->entry = e;
    r->work.output = output;
    struct request_limits lim;
    struct eng_error err;
    request_limits_of(d->cfg, &lim);
    int rc = to_eval(e->arm, m, r, &err);
    if (!rc && rm && !(rc = to_picture(e->arm, rm, m->flags, r, &err)))
        rc = request_check_picture(e->arm, &r->work.eval, &r->work.opts, &r->work.picture, &lim,
                                   &err);
    else if (!rc && !rm)
        rc = request_check_eval(e->arm, &r->work.eval, &r->work.opts, &lim, &err);
    if (rc) {
        *status = work_status_of(rc);
        snprintf(why, whylen, "%s%s", err.msg, work_limit_option(&err));
        if (file) /* the caller asks again of the file's armature: one request, counted then */
            d->requests[op]--;
        free_request(r);
        return NULL;
    }
    r->work.job.run = op == SKP_OP_POSE ? work_pose : op == SKP_OP_MESH ? work_mesh : work_render;
    if (file && check_file_first(r, file)) {
        free_request(r);
        no_memory(status, why, whylen);
        return NULL;
    }
    return front_start(r, start_eval, status, why, whylen);
}

void dispatch_forget(struct request *r)
{
    r->done = NULL;
    atomic_store_explicit(&r->work.job.cancelled, true, memory_order_relaxed);
}
