/* libFuzzer target: libskc's receive path (client/skc_io.c, skc_reply.c) on a server's byte
 * stream. Byte 0 chooses what four pending requests (ids 1 to 4) wait for: its low nibble the
 * first entry of `kinds` (a RENDER asked as PNG and one asked as raw RGBA among them), its high
 * nibble the step to the next. The rest is written into a socketpair, whose far end is then
 * shut, and each reply is collected in turn with skc__recv, as skc_recv does: frames cut by
 * proto's parser, filed by id in any order, decoded. Every reply that decodes is walked to its
 * last byte (each string to its NUL, each array element, each picture byte), so an over-read
 * trips ASan, and checked against what skc.h promises of it: the opcode and id it answers,
 * which accessors give what (NULL for an empty part), a draw's indices triangles of its own
 * vertices, pictures of the size and format they say. A broken promise aborts, as does a call
 * ending otherwise than in a reply or a documented error. The stream ends with EOF: nothing
 * waits for a timeout. Seeds: contrib/fuzz/corpus/reply (make-seeds.c). Build and run:
 * contrib/fuzz/run.sh reply */
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "reply-kinds.h"
#include "skc_int.h"

#define PENDING 4
#define MAX_STREAM 65536 /* what the socketpair holds before a write would block */

/* What a pending request waits for (reply-kinds.h, which make-seeds.c reads too), as the
 * pending opcode libskc files it under. */
#define SKP_OP_RENDER_RAW (SKP_OP_RENDER | SKC__RAW)
#define KIND_OP(name) [K_##name] = SKP_OP_##name,
static const uint8_t kinds[REPLY_KIND_COUNT] = {REPLY_KINDS(KIND_OP)};
#define KINDS REPLY_KIND_COUNT

static volatile uint64_t sink; /* what the walk reads goes here, so no read is left out */
static bool trace;             /* $FUZZ_TRACE: each request's outcome, to see what an input does */

/* The one way out for a broken promise: say which, then abort for libFuzzer to keep the input. */
static void promise(bool kept, const skc_reply *r, const char *what)
{
    if (kept)
        return;
    fprintf(stderr, "fuzz-reply: %s reply to request %u: %s\n", skp_opcode_name(skc_reply_op(r)),
            (unsigned)skc_reply_id(r), what);
    abort();
}

/* Reads n bytes at p: ASan checks each of them is inside what the reply owns. */
static void touch(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        sink += b[i];
}

/* A string skc.h hands out: never NULL, and NUL-terminated (strlen reads to the NUL). */
static void walk_str(const skc_reply *r, const char *s)
{
    promise(s != NULL, r, "a NULL string");
    sink += strlen(s);
}

/* An accessor's array: NULL exactly when it is empty, else count whole elements. */
static void walk_array(const skc_reply *r, const void *p, uint32_t count, size_t size,
                       const char *what)
{
    promise((p == NULL) == (count == 0), r, what);
    touch(p, (size_t)count * size);
}

/* LOAD_PATH, LOAD_BYTES and INFO: a summary (LOAD_* with an id); nothing else has them. */
static void walk_summary(const skc_reply *r, int op)
{
    bool load = op == SKP_OP_LOAD_PATH || op == SKP_OP_LOAD_BYTES;
    const unsigned char *id = skc_reply_armature_id(r);
    promise((id != NULL) == load, r, "an armature id where there is none, or none on a LOAD");
    touch(id, id ? SKC_ID_SIZE : 0);
    const skc_summary *s = skc_reply_summary(r);
    promise((s != NULL) == (load || op == SKP_OP_INFO), r, "a summary where there is none");
    if (!s)
        return;
    walk_array(r, s->anims, s->anim_count, sizeof *s->anims, "animations");
    for (uint32_t i = 0; i < s->anim_count; i++)
        walk_str(r, s->anims[i].name);
    walk_array(r, s->styles, s->style_count, sizeof *s->styles, "styles");
    for (uint32_t i = 0; i < s->style_count; i++)
        walk_str(r, s->styles[i]);
}

/* INFO: summary bone_count entries. */
static void walk_infos(const skc_reply *r, int op)
{
    uint32_t n;
    const skc_bone_info *bi = skc_reply_bone_infos(r, &n);
    walk_array(r, bi, n, sizeof *bi, "bone infos");
    if (op == SKP_OP_INFO)
        promise(n == skc_reply_summary(r)->bone_count, r, "not one bone info per bone");
    for (uint32_t i = 0; i < n; i++)
        walk_str(r, bi[i].name);
}

/* Whether every one of n numbers is finite. */
static bool all_finite(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return false;
    return true;
}

static bool finite_bone(const skc_bone *b)
{
    double f[5] = {b->pos.x, b->pos.y, b->rot, b->scale.x, b->scale.y};
    bool ok = all_finite(f, 5) && all_finite(b->matrix, 6) && all_finite(b->tint, 4);
    for (uint32_t k = 0; ok && k < b->vertex_count; k++)
        ok = isfinite(b->vertices[k].x) && isfinite(b->vertices[k].y);
    return ok;
}

static bool finite_draw(const skc_draw *d)
{
    bool ok = all_finite(d->tint, 4);
    for (uint32_t k = 0; ok && k < d->vertex_count; k++)
        ok = isfinite(d->vertices[k].x) && isfinite(d->vertices[k].y) &&
             isfinite(d->vertices[k].u) && isfinite(d->vertices[k].v);
    return ok;
}

static void walk_bones(const skc_reply *r)
{
    uint32_t n;
    const skc_bone *b = skc_reply_bones(r, &n);
    walk_array(r, b, n, sizeof *b, "bones");
    for (uint32_t i = 0; i < n; i++) {
        promise(b[i].hidden == 0 || b[i].hidden == 1, r, "a bone's hidden is not 0 or 1");
        promise(finite_bone(&b[i]), r, "a bone's number is not finite");
        walk_str(r, b[i].tex);
        walk_array(r, b[i].vertices, b[i].vertex_count, sizeof *b[i].vertices, "bone vertices");
    }
}

/* MESH: triangles, each index below the draw's vertex_count (a caller indexes unchecked). */
static void walk_draws(const skc_reply *r)
{
    uint32_t n;
    const skc_draw *d = skc_reply_draws(r, &n);
    walk_array(r, d, n, sizeof *d, "draws");
    for (uint32_t i = 0; i < n; i++) {
        walk_array(r, d[i].vertices, d[i].vertex_count, sizeof *d[i].vertices, "draw vertices");
        promise(finite_draw(&d[i]), r, "a draw's number is not finite");
        walk_array(r, d[i].indices, d[i].index_count, sizeof *d[i].indices, "draw indices");
        promise(d[i].index_count % 3 == 0, r, "a draw's index count is not a multiple of 3");
        for (uint32_t k = 0; k < d[i].index_count; k++)
            promise(d[i].indices[k] < d[i].vertex_count, r, "an index past the draw's vertices");
    }
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A picture as asked: raw RGBA of width x height x 4 bytes, or a PNG file whose signature and
 * IHDR say width x height (a caller sizes its buffers from them). */
static void check_picture(const skc_reply *r, const skc_image *im, bool raw)
{
    static const unsigned char png_start[16] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n',
                                                0,    0,   0,   13,  'I',  'H',  'D',  'R'};
    promise(im->data != NULL, r, "a picture without bytes");
    touch(im->data, im->size);
    if (raw) {
        promise(im->size == (uint64_t)im->width * im->height * 4, r,
                "a raw picture is not width x height x 4 bytes");
        return;
    }
    promise(im->size >= 24 && !memcmp(im->data, png_start, sizeof png_start), r,
            "a PNG picture does not start with the signature and IHDR");
    promise(be32(im->data + 16) == im->width && be32(im->data + 20) == im->height, r,
            "a PNG picture's IHDR gives another size");
}

/* RENDER: pictures, then the sheet JSON, never NULL on a RENDER ("" without a sheet). */
static void walk_images(const skc_reply *r, int op, bool raw)
{
    uint32_t n;
    const skc_image *im = skc_reply_images(r, &n);
    walk_array(r, im, n, sizeof *im, "images");
    for (uint32_t i = 0; i < n; i++)
        check_picture(r, &im[i], raw);
    size_t len;
    const char *json = skc_reply_sheet_json(r, &len);
    promise((json != NULL) == (op == SKP_OP_RENDER), r, "sheet JSON where there is none");
    promise(json || len == 0, r, "a length for no sheet JSON");
    touch(json, json ? len + 1 : 0);
    promise(!json || json[len] == '\0', r, "the sheet JSON is not NUL-terminated");
}

static void walk_counters(const skc_reply *r)
{
    uint32_t n;
    const skc_counter *ct = skc_reply_counters(r, &n);
    walk_array(r, ct, n, sizeof *ct, "counters");
    for (uint32_t i = 0; i < n; i++)
        walk_str(r, ct[i].name);
}

/* PING's echo and INFO_JSON's text: non-NULL even when empty; no other reply has one. */
static void walk_payload(const skc_reply *r, int op)
{
    size_t len;
    const void *p = skc_reply_payload(r, &len);
    bool has = op == SKP_OP_PING || op == SKP_OP_INFO_JSON;
    promise((p != NULL) == has, r, "a payload where there is none, or none on a PING");
    promise(p || len == 0, r, "a length for no payload");
    touch(p, len);
}

/* HELLO: the version the client speaks (PROTOCOL.md: the daemon answers the same). */
static void walk_hello(const skc_reply *r)
{
    unsigned version;
    uint32_t max_frame;
    walk_str(r, skc__reply_hello(r, &version, &max_frame));
    promise(version == SKP_VERSION, r, "HELLO answers another protocol version");
    sink += max_frame;
}

/* Everything a reply to request id, which waited for pending_op, holds. */
static void walk_reply(const skc_reply *r, uint8_t pending_op, uint32_t id)
{
    int op = SKC__WIRE_OP(pending_op);
    promise(skc_reply_op(r) == op, r, "it answers another opcode than the request's");
    promise(skc_reply_id(r) == id, r, "it echoes another request id");
    promise(op == SKP_OP_INSTANCE_NEW || skc_reply_instance(r) == 0, r,
            "an instance id in a reply other than INSTANCE_NEW's");
    walk_summary(r, op);
    walk_infos(r, op);
    walk_bones(r);
    walk_draws(r);
    walk_images(r, op, pending_op & SKC__RAW);
    walk_counters(r);
    walk_payload(r, op);
    if (op == SKP_OP_HELLO)
        walk_hello(r);
}

/* skc_recv's outcomes (skc.h): a reply, an error reply with its status, a reply that does not
 * decode, or the connection gone; with the stream ended, never a wait that timed out. */
static void check_outcome(skc_client *c, int rc, uint8_t op, uint32_t id)
{
    const char *msg = rc ? skc_errmsg(c) : "";
    sink += strlen(msg);
    bool documented = rc == 0 || (rc == SKC_ESERVER && skc_status(c) != SKC_S_OK) ||
                      rc == SKC_EPROTO || rc == SKC_EIO || rc == SKC_ENOMEM;
    if (trace || !documented)
        fprintf(stderr, "%srequest %u (%s%s): %s, status %d%s%s\n",
                documented ? "" : "fuzz-reply: ", (unsigned)id, skp_opcode_name(SKC__WIRE_OP(op)),
                op & SKC__RAW ? ", raw" : "", skc_strerror(rc), skc_status(c), rc ? ": " : "", msg);
    if (!documented)
        abort();
}

/* Waits for request id's reply (the stream holds it, or ends first: the deadline is never
 * reached), and walks it. */
static void collect(skc_client *c, uint8_t op, uint32_t id)
{
    skc_reply *r = NULL;
    skc__begin(c); /* as skc_recv starts: the status is this call's */
    int rc = skc__recv(c, id, skc__deadline(10000), &r);
    check_outcome(c, rc, op, id);
    if (rc == 0)
        walk_reply(r, op, id);
    skc_reply_free(r);
}

/* Queues nothing on the wire: the requests only need to be pending. */
static void no_body(struct skp_writer *w, const void *arg)
{
    (void)w;
    (void)arg;
}

/* Hands the server's bytes to the client's end: all of them fit in the socket's buffer
 * (MAX_STREAM), so the write never waits for a reader, and the end of stream follows. */
static int server_says(const uint8_t *data, size_t len, int *client_fd)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
        abort();
    fcntl(sv[0], F_SETFL, O_NONBLOCK); /* as skc__dial leaves it */
    if (len && send(sv[1], data, len, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)len)
        abort();
    shutdown(sv[1], SHUT_WR);
    *client_fd = sv[0];
    return sv[1];
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    trace = getenv("FUZZ_TRACE") && *getenv("FUZZ_TRACE");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    if (len < 1 || len - 1 > MAX_STREAM)
        return 0;
    skc_client *c = calloc(1, sizeof *c);
    skc_options opt = {0};
    if (!c || skc__setup(c, &opt))
        abort();
    uint8_t op[PENDING];
    uint32_t id[PENDING];
    int server = server_says(data + 1, len - 1, &c->fd);
    for (unsigned i = 0; i < PENDING; i++) {
        op[i] = kinds[((data[0] & 15u) + i * (data[0] >> 4)) % KINDS];
        if (skc__queue(c, op[i], no_body, NULL, 0, &id[i]))
            abort();
    }
    for (unsigned i = 0; i < PENDING; i++)
        collect(c, op[i], id[i]);
    skc_free(c); /* closes the client's end unless the end of stream did */
    close(server);
    return 0;
}
