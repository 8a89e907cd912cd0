/* libFuzzer target: the daemon's request path, from a client's bytes to its replies, with no
 * socket, thread or timer. The input is what one connection sends. It goes to the frame
 * parser in chunks of sizes drawn from a hash of the input (so a corpus file stays a plain
 * byte stream that live.py can replay too); each whole frame goes to dispatch's own on_frame,
 * which decodes POSE, MESH and RENDER with skp_decode_eval_req / skp_decode_render_req,
 * resolves and checks them with the request model and submits work_pose / work_mesh /
 * work_render. The pool is replaced by a queue run on this thread between chunks (or not,
 * so instance queues and BUSY happen), with one struct worker whose scratch lives across
 * inputs as a real worker's does.
 *
 * dispatch.c is included, not copied or mirrored: every check the daemon makes is the one
 * fuzzed here. The connection layer (conn.c) is replaced by the four calls dispatch makes
 * (conn_reply, conn_error, conn_set_max_frame, conn_job_started, conn_job_done), which check what
 * they are given.
 *
 * Armatures: the project's samples, loaded once from $SKELD_SAMPLES (default ./samples) and
 * cached under fixed ids, the file name padded with zeros to 32 bytes ("robot.skf\0..."), so
 * the seed corpus (contrib/fuzz/corpus/request, made by make-seeds.c) stays valid whatever
 * bytes gen-samples writes. LOAD_PATH, LOAD_BYTES and UNLOAD frames are skipped: loading is
 * the load and json targets' work, and unloading would change the state later inputs see.
 *
 * Each input is played twice, on one connection and then on a fresh one, so what a closed
 * session leaves behind meets the same requests again. Besides the sanitizers it checks:
 * every request is answered exactly once; no reply is INTERNAL (a reply that did not fit its
 * computed size); a RENDER reply a client could see holds pictures inside its body and within
 * the limits; no job or armature reference is left after a connection closes and its jobs
 * finish.
 *
 * Build and run: contrib/fuzz/run.sh request (from a built tree: it needs autoconfig.h and
 * samples/). */

/* dispatch.c calls the pool through these names; they go to the queue below instead, while
 * pool.c stays linked for worker_pose. */
#define pool_submit fuzz_pool_submit
#define pool_stage fuzz_pool_stage
#define pool_depth fuzz_pool_depth
#define pool_dropped fuzz_pool_dropped
#include "dispatch.c"
#undef pool_submit
#undef pool_stage
#undef pool_depth
#undef pool_dropped

#include <stdarg.h>

#include "engine/load.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

/* Small enough that the worst request allowed runs in milliseconds. */
#define FUZZ_MAX_PIXELS (64 * 64)
#define FUZZ_MAX_BONE_STEPS 100000
#define FUZZ_QUEUE_DEPTH 4 /* the pipelined seed holds more */

static const char *const sample_names[] = {"robot.skf", "critter.skf", "robot-0.7.skf",
                                           "lamp-0.7.skf"};

static struct {
    uv_loop_t loop;
    struct config cfg;
    struct cache cache;
    struct pool pool; /* never started: dispatch only passes its address to the queue */
    struct conn_set set;
    struct dispatch d;
    struct worker worker;
    struct job *head, *tail; /* the queue standing in for the pool */
    size_t queued;
    uint64_t dropped; /* cancelled jobs not run */
    bool trace;       /* $FUZZ_TRACE: each reply to stderr, to see what a reproducer does */
    /* over the current input's two sessions */
    uint32_t requests, replies;
} g;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz-request: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    abort();
}

/* ---- the pool: a FIFO run on this thread ------------------------------------------------- */

int fuzz_pool_submit(struct pool *p, struct job *job)
{
    (void)p;
    if (g.queued >= FUZZ_QUEUE_DEPTH)
        return UV_EBUSY;
    job->next = NULL;
    if (g.tail)
        g.tail->next = job;
    else
        g.head = job;
    g.tail = job;
    g.queued++;
    return 0;
}

/* A job the daemon may run on its loop thread at the end of the iteration: here every job runs
 * on this thread, from the same queue. */
int fuzz_pool_stage(struct pool *p, struct job *job, unsigned cost)
{
    (void)cost;
    return fuzz_pool_submit(p, job);
}

size_t fuzz_pool_depth(struct pool *p)
{
    (void)p;
    return g.queued;
}

uint64_t fuzz_pool_dropped(struct pool *p)
{
    (void)p;
    return g.dropped;
}

/* Runs every queued job and completes it, as the pool's workers and drain would; completions
 * may queue more (the next request on an instance). */
static void run_jobs(void)
{
    for (uint32_t n = 0; g.head; n++) {
        if (n > 1u << 20)
            die("the queue never empties");
        struct job *j = g.head;
        g.head = j->next;
        if (!g.head)
            g.tail = NULL;
        g.queued--;
        /* As pool.c: a job cancelled before it runs is dropped, and done() still comes. */
        j->dropped = atomic_load_explicit(&j->cancelled, memory_order_relaxed);
        g.dropped += j->dropped;
        if (!j->dropped)
            j->run(j, &g.worker);
        j->done(j);
    }
}

/* ---- the connection layer: what dispatch calls, checked ---------------------------------- */

/* A RENDER reply: u32 count, count x (u32 frame, width, height, bytes data), bytes JSON. */
static void check_render_reply(const uint8_t *b, size_t len)
{
    struct skp_reader rd;
    skp_reader_init(&rd, b, len);
    uint32_t count = skp_read_u32(&rd);
    uint64_t pixels = 0;
    for (uint32_t i = 0; i < count && !rd.err; i++) {
        skp_read_u32(&rd);
        uint64_t w = skp_read_u32(&rd), h = skp_read_u32(&rd);
        size_t n;
        const uint8_t *data = skp_read_bytes(&rd, &n, len);
        if (rd.err)
            break;
        pixels += w * h;
        if (w == 0 || h == 0 || w * h > 16 * (uint64_t)FUZZ_MAX_PIXELS)
            die("RENDER reply: picture %u is %llu x %llu", i, (unsigned long long)w,
                (unsigned long long)h);
        static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
        if (n != w * h * 4 && (n < 8 || memcmp(data, sig, 8)))
            die("RENDER reply: picture %u is neither raw RGBA nor a PNG", i);
    }
    size_t json_len;
    skp_read_bytes(&rd, &json_len, len);
    if (skp_reader_finish(&rd) != SKP_EOK)
        die("RENDER reply: the body does not hold its %u pictures exactly", count);
    if (pixels > 16 * (uint64_t)FUZZ_MAX_PIXELS)
        die("RENDER reply: %llu pixels, over the reply limit", (unsigned long long)pixels);
}

void conn_reply(struct conn *c, uint8_t opcode, uint32_t id, uint16_t status, uint8_t *body,
                size_t len)
{
    g.replies++;
    if (g.trace)
        fprintf(stderr, "reply %s #%u: %s, %zu bytes%s%.*s\n", skp_opcode_name(opcode), id,
                skp_strerror(status), len, status && len > 2 ? ": " : "",
                status && len > 2 ? (int)len - 2 : 0, status && len > 2 ? (char *)body + 2 : "");
    if (status == SKP_S_INTERNAL)
        die("%s answered INTERNAL", skp_opcode_name(opcode));
    if (status != SKP_S_OK)
        c->set->error_replies++;
    else if (opcode == SKP_OP_RENDER && !c->closed) /* what a client can see */
        check_render_reply(body, len);
    free(body);
}

void conn_error(struct conn *c, uint8_t opcode, uint32_t id, uint16_t status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (status == SKP_S_OK || !msg[0])
        die("%s: an error reply with status %u and message \"%s\"", skp_opcode_name(opcode), status,
            msg);
    /* The body conn.c would send (u16 length, message), for the trace. */
    size_t n = strlen(msg);
    uint8_t *body = malloc(n + 2);
    if (!body)
        die("out of memory");
    skp_put_u16(body, (uint16_t)n);
    memcpy(body + 2, msg, n);
    conn_reply(c, opcode, id, status, body, n + 2);
}

/* The access-log note: kept as conn.c keeps it, so a note on the wrong connection or a
 * stale armature id would at least be read by ASan. */
void conn_note(struct conn *c, uint64_t started_us, const uint8_t *armature)
{
    c->note_started_us = started_us;
    c->note_has_id = armature != NULL;
    if (armature)
        memcpy(c->note_id, armature, sizeof c->note_id);
}

void conn_set_max_frame(struct conn *c, uint32_t max)
{
    c->max_frame = max;
}

void conn_job_started(struct conn *c)
{
    c->inflight++;
    c->jobs++;
}

void conn_job_done(struct conn *c)
{
    if (c->jobs <= 0)
        die("conn_job_done without a job");
    c->inflight--;
    c->jobs--;
}

/* ---- setup --------------------------------------------------------------------------------- */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *dir = getenv("SKELD_SAMPLES");
    if (!dir || !*dir)
        dir = "samples";
    g.trace = getenv("FUZZ_TRACE") && *getenv("FUZZ_TRACE");
    log_set_level(LOG_ERROR);
    if (uv_loop_init(&g.loop))
        die("uv_loop_init failed");
    config_init(&g.cfg, 1);
    free(g.cfg.root);
    g.cfg.root = strdup(dir);
    g.cfg.max_image_pixels = FUZZ_MAX_PIXELS;
    g.cfg.max_bone_steps = FUZZ_MAX_BONE_STEPS;
    g.cfg.queue_depth = FUZZ_QUEUE_DEPTH;
    g.cfg.max_frame = 1 << 20;
    if (!g.cfg.root || cache_init(&g.cache, (size_t)g.cfg.cache_mb << 20))
        die("out of memory");
    g.set.loop = &g.loop;
    g.set.cfg = &g.cfg;
    g.set.hooks = &dispatch_conn_hooks;
    g.set.owner = &g.d;
    if (dispatch_init(&g.d, &g.loop, &g.cfg, &g.cache, &g.pool, &g.set))
        die("%s: not a directory (set SKELD_SAMPLES to the built samples/)", dir);
    image_init(&g.worker.image);
    for (size_t i = 0; i < sizeof sample_names / sizeof sample_names[0]; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, sample_names[i]);
        struct armature *arm;
        struct eng_error err;
        if (armature_load_file(path, NULL, &arm, &err))
            die("%s: %s (run make first, or set SKELD_SAMPLES)", path, err.msg);
        uint8_t id[32] = {0};
        memcpy(id, sample_names[i], strlen(sample_names[i]));
        struct cache_entry *e = cache_add(&g.cache, id, arm);
        if (!e)
            die("out of memory");
        cache_unref(&g.cache, e);
    }
    return 0;
}

/* ---- one input ------------------------------------------------------------------------------ */

/* xorshift64*, seeded from the input: the chunk sizes and when the "workers" run. */
static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static uint64_t hash_input(const uint8_t *data, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ data[i]) * 1099511628211ull;
    return h ? h : 1;
}

/* Bytes in the next chunk: often a few (a frame split anywhere, even in its header), often
 * up to a frame's size, sometimes everything left. */
static size_t chunk_size(uint64_t *rng, size_t left)
{
    uint64_t r = next_rand(rng);
    size_t n;
    switch (r & 3) {
    case 0: n = 1 + (r >> 8) % 8; break;
    case 1: n = 1 + (r >> 8) % 64; break;
    case 2: n = 1 + (r >> 8) % 1024; break;
    default: n = left; break;
    }
    return n < left ? n : left;
}

/* Hands f to dispatch as conn.c does, in a buffer of exactly its size that is freed when
 * on_frame returns: a job that kept a pointer into the body would read freed memory. */
static void deliver(struct conn *c, const struct skp_frame *f)
{
    uint8_t op = f->h.opcode;
    if (op == SKP_OP_LOAD_PATH || op == SKP_OP_LOAD_BYTES || op == SKP_OP_UNLOAD)
        return;
    struct skp_frame copy = *f;
    uint8_t *body = malloc(f->h.body_len ? f->h.body_len : 1);
    if (!body)
        die("out of memory");
    memcpy(body, f->body, f->h.body_len);
    copy.body = body;
    g.requests++;
    uint32_t before = g.replies;
    g.set.hooks->on_frame(g.set.owner, c, &copy);
    free(body);
    if (g.replies > before + 1)
        die("one %s frame got %u replies", skp_opcode_name(op), g.replies - before);
}

/* One connection: the bytes arrive in chunks, the "workers" run now and then, and the
 * client goes away, with jobs still queued or after its replies. */
static void session(const uint8_t *data, size_t len, uint64_t *rng)
{
    struct conn c;
    memset(&c, 0, sizeof c);
    c.set = &g.set;
    c.max_frame = (uint32_t)g.cfg.max_frame; /* as conn.c starts it; on_open may lower it */
    if (g.set.hooks->on_open(g.set.owner, &c))
        die("on_open refused a connection");
    uint8_t *in = malloc(len ? len : 1); /* what has arrived and is not yet a frame */
    if (!in)
        die("out of memory");
    size_t in_len = 0, fed = 0;
    bool framing_error = false;
    while (fed < len && !framing_error) {
        size_t n = chunk_size(rng, len - fed);
        memcpy(in + in_len, data + fed, n);
        in_len += n;
        fed += n;
        size_t off = 0;
        for (;;) {
            struct skp_frame f;
            size_t used;
            int rc = skp_parser_feed(in + off, in_len - off, c.max_frame, &f, &used);
            if (rc == SKP_NEED_MORE)
                break;
            if (rc < 0) { /* conn.c replies and closes: nothing more is read */
                if (skp_parse_status(rc) == SKP_S_OK)
                    die("parse error %d has no status", rc);
                framing_error = true;
                break;
            }
            if (rc != SKP_FRAME || used < SKP_HEADER_SIZE || used > in_len - off ||
                used != SKP_HEADER_SIZE + (size_t)f.h.body_len)
                die("skp_parser_feed returned %d after %zu of %zu bytes", rc, used, in_len - off);
            off += used;
            deliver(&c, &f);
        }
        memmove(in, in + off, in_len - off);
        in_len -= off;
        if (next_rand(rng) & 1) /* or leave the jobs queued while more arrives */
            run_jobs();
    }
    free(in);
    if (next_rand(rng) & 1)
        run_jobs();
    c.closed = true; /* conn.c discards what is answered from now on */
    g.set.hooks->on_close(g.set.owner, &c);
    run_jobs();
    if (c.jobs || c.inflight)
        die("%d jobs left on a closed connection", c.jobs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    uint64_t rng = hash_input(data, len);
    g.requests = g.replies = 0;
    /* The same bytes on two connections, one after the other: whatever a closed session
     * leaves behind (cached state, scratch, references) must not spoil the next one's
     * answers. */
    session(data, len, &rng);
    session(data, len, &rng);
    if (g.replies != g.requests)
        die("%u requests got %u replies", g.requests, g.replies);
    rcache_clear(&g.d.results); /* the next input runs its requests rather than finds them */
    for (struct cache_entry *e = g.cache.head; e; e = e->next)
        if (e->refs)
            die("an armature is still referenced %d times after the connection ended", e->refs);
    return 0;
}
