/* Writes the seed corpora of the request and reply fuzzers: small byte streams of valid frames,
 * encoded with the project's own codec (skp_msg, skp_writer), one file per stream.
 *
 *   make-seeds request DIR   a client's requests (fuzz-request.c)
 *   make-seeds reply DIR     a server's replies (fuzz-reply.c), after the byte that says
 *                            what the fuzzer's four pending requests wait for
 *
 * contrib/fuzz/run.sh seeds rebuilds contrib/fuzz/corpus/request and contrib/fuzz/corpus/reply.
 * Armatures are named by the fuzzer's fixed ids: the sample's file name padded with zeros to
 * 32 bytes (fuzz-request.c); contrib/fuzz/live.py swaps in the ids a real daemon reports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reply-kinds.h"
#include "skp_msg.h"

#define MAX_STREAM 8192

struct stream {
    uint8_t buf[MAX_STREAM];
    size_t len;
    uint32_t next_id;
};

static void die(const char *what)
{
    fprintf(stderr, "make-seeds: %s\n", what);
    exit(1);
}

static void fuzz_id(uint8_t id[SKP_ID_SIZE], const char *name)
{
    memset(id, 0, SKP_ID_SIZE);
    memcpy(id, name, strlen(name));
}

/* Appends the frame h heads, with its h->body_len bytes of body. */
static void append(struct stream *s, const struct skp_header *h, const uint8_t *body)
{
    if (s->len + SKP_HEADER_SIZE + h->body_len > sizeof s->buf)
        die("a stream outgrew its buffer");
    skp_encode_header(h, s->buf + s->len);
    if (h->body_len)
        memcpy(s->buf + s->len + SKP_HEADER_SIZE, body, h->body_len);
    s->len += SKP_HEADER_SIZE + h->body_len;
}

/* Appends one request frame whose body w wrote into body. */
static void frame(struct stream *s, uint8_t opcode, const uint8_t *body, size_t len)
{
    struct skp_header h = {SKP_VERSION, opcode, 0, 0, ++s->next_id, (uint32_t)len};
    append(s, &h, body);
}

/* POSE, MESH or (with rr) RENDER. */
static void eval(struct stream *s, uint8_t opcode, const struct skp_eval_req *er,
                 const struct skp_render_req *rr)
{
    uint8_t body[4096];
    struct skp_writer w;
    skp_writer_init(&w, body, sizeof body);
    skp_encode_eval_req(&w, er);
    if (rr)
        skp_encode_render_req(&w, rr);
    if (w.err)
        die("a request outgrew its buffer");
    frame(s, opcode, body, w.len);
}

static void id_body(struct stream *s, uint8_t opcode, const char *sample)
{
    uint8_t id[SKP_ID_SIZE];
    fuzz_id(id, sample);
    frame(s, opcode, id, sizeof id);
}

static void u32_body(struct stream *s, uint8_t opcode, uint32_t v)
{
    uint8_t b[4];
    skp_put_u32(b, v);
    frame(s, opcode, b, 4);
}

static struct skp_str str(const char *s)
{
    return (struct skp_str){s, strlen(s)};
}

/* An evaluation of sample's animation anim at frame. */
static struct skp_eval_req on(const char *sample, const char *anim, double frame)
{
    struct skp_eval_req r;
    skp_eval_req_init(&r);
    fuzz_id(r.armature, sample);
    r.anim_count = 1;
    r.anims[0].name = str(anim);
    r.anims[0].frame = frame;
    return r;
}

/* A small picture: the fuzzer's limit is 64 x 64. */
static struct skp_render_req small(uint32_t side)
{
    struct skp_render_req r;
    skp_render_req_init(&r);
    r.width = r.height = side;
    return r;
}

static void save(const char *dir, const char *name, const struct stream *s)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(s->buf, 1, s->len, f) != s->len || fclose(f))
        die(path);
}

static void request_seeds(const char *dir)
{
    static struct stream s;

    /* POSE: a looping frame past the end, with a warm-up. */
    memset(&s, 0, sizeof s);
    struct skp_eval_req e = on("robot.skf", "Walk", 52.5);
    e.flags = SKP_EVAL_LOOP;
    e.warmup = 5;
    eval(&s, SKP_OP_POSE, &e, NULL);
    save(dir, "pose-loop", &s);

    /* POSE: two animations blended by index, times in ms, reversed, from a first frame. */
    memset(&s, 0, sizeof s);
    e = on("robot-0.7.skf", "0", 250);
    e.anim_count = 2;
    e.anims[1] = (struct skp_anim_ref){str("2"), 400, 0.5};
    e.flags = SKP_EVAL_MS | SKP_EVAL_REVERSE | SKP_EVAL_FROM;
    e.from = 1; /* a frame: only the animations' frames are times */
    eval(&s, SKP_OP_POSE, &e, NULL);
    save(dir, "pose-blend-ms", &s);

    /* MESH: y-down, moved and mirrored, on the 0.7 lamp (mesh pivots). */
    memset(&s, 0, sizeof s);
    e = on("lamp-0.7.skf", "Stretch", 30);
    e.flags = SKP_EVAL_Y_DOWN;
    e.position[0] = 10;
    e.position[1] = -4;
    e.scale[0] = -1;
    eval(&s, SKP_OP_MESH, &e, NULL);
    save(dir, "mesh-mirror", &s);

    /* RENDER: a fitted frame, PNG from the fast encoder. */
    memset(&s, 0, sizeof s);
    e = on("robot.skf", "Idle", 10);
    struct skp_render_req r = small(32);
    eval(&s, SKP_OP_RENDER, &e, &r);
    save(dir, "render-fit", &s);

    /* RENDER: explicit camera, a style by name, one sample, raw RGBA on a background. */
    memset(&s, 0, sizeof s);
    e = on("critter.skf", "Hop", 20);
    r = small(24);
    r.camera = SKP_CAMERA_EXPLICIT;
    r.scale[0] = r.scale[1] = 0.1;
    r.position[0] = 12;
    r.position[1] = 12;
    r.style_count = 2;
    r.styles[0] = str("Night");
    r.styles[1] = str("0");
    r.samples = 1;
    r.format = SKP_FORMAT_RGBA;
    memcpy(r.background, (const uint8_t[4]){20, 30, 40, 255}, 4);
    eval(&s, SKP_OP_RENDER, &e, &r);
    save(dir, "render-explicit-rgba", &s);

    /* RENDER: a range of frames into a 2 x 2 sheet, zlib level 6. */
    memset(&s, 0, sizeof s);
    e = on("lamp-0.7.skf", "Flicker", 0);
    e.flags = SKP_EVAL_RANGE;
    r = small(16);
    r.first = 2;
    r.last = 5;
    r.cols = r.rows = 2;
    r.png_level = 6;
    eval(&s, SKP_OP_RENDER, &e, &r);
    save(dir, "render-sheet", &s);

    /* RENDER: a range as separate pictures, with velocity (physics). */
    memset(&s, 0, sizeof s);
    e = on("critter.skf", "Curl", 0);
    e.flags = SKP_EVAL_RANGE | SKP_EVAL_LOOP;
    e.velocity[0] = 3;
    r = small(12);
    r.first = 0;
    r.last = 2;
    eval(&s, SKP_OP_RENDER, &e, &r);
    save(dir, "render-range", &s);

    /* An instance: made, posed with velocity, drawn, meshed and freed; requests on it run
     * in order and its state carries over. */
    memset(&s, 0, sizeof s);
    id_body(&s, SKP_OP_INSTANCE_NEW, "robot.skf");
    e = on("robot.skf", "Wave", 15);
    e.target = SKP_TARGET_INSTANCE;
    e.instance = 1;
    e.velocity[0] = 2;
    e.anims[0].smooth = 3;
    eval(&s, SKP_OP_POSE, &e, NULL);
    e.anims[0].frame = 30;
    r = small(20);
    eval(&s, SKP_OP_RENDER, &e, &r);
    eval(&s, SKP_OP_MESH, &e, NULL);
    u32_body(&s, SKP_OP_INSTANCE_FREE, 1);
    save(dir, "instance", &s);

    /* Pipelined: more evaluations than the fuzzer's queue holds (BUSY when the "workers" do
     * not run in between), stateless and on an instance, whose requests wait their turn. */
    memset(&s, 0, sizeof s);
    id_body(&s, SKP_OP_INSTANCE_NEW, "critter.skf");
    for (int i = 0; i < 6; i++) {
        e = on(i % 2 ? "critter.skf" : "robot-0.7.skf", "1", 4.0 * i);
        if (i >= 3) {
            e.target = SKP_TARGET_INSTANCE;
            e.instance = 1;
        }
        eval(&s, i % 3 == 2 ? SKP_OP_MESH : SKP_OP_POSE, &e, NULL);
    }
    save(dir, "pipelined", &s);

    /* The small messages: HELLO, PING, INFO, STATS. */
    memset(&s, 0, sizeof s);
    uint8_t hello[8];
    struct skp_writer w;
    skp_writer_init(&w, hello, sizeof hello);
    skp_write_u16(&w, SKP_VERSION);
    skp_write_str(&w, "", 0);
    frame(&s, SKP_OP_HELLO, hello, w.len);
    uint8_t ping[8];
    skp_writer_init(&w, ping, sizeof ping);
    skp_write_bytes(&w, "ping", 4);
    frame(&s, SKP_OP_PING, ping, w.len);
    id_body(&s, SKP_OP_INFO, "lamp-0.7.skf");
    frame(&s, SKP_OP_STATS, NULL, 0);
    save(dir, "small-messages", &s);
}

/* ---- the reply fuzzer's seeds --------------------------------------------------------- */

/* A reply stream starts with the byte that makes requests 1 to 4 wait for the kinds first,
 * first + step, first + 2 step and first + 3 step (of the 14, round again past the last). */
static void pending(struct stream *s, enum reply_kind first, unsigned step)
{
    memset(s, 0, sizeof *s);
    s->buf[0] = (uint8_t)(first | step << 4);
    s->len = 1;
}

/* A reply body being written. */
struct body {
    struct skp_writer w;
    uint8_t buf[4096];
};

static struct skp_writer *begin(struct body *b)
{
    skp_writer_init(&b->w, b->buf, sizeof b->buf);
    return &b->w;
}

/* Appends the reply to request id, with status and the body b holds. */
static void reply(struct stream *s, uint8_t opcode, uint32_t id, uint16_t status,
                  const struct body *b)
{
    if (b->w.err)
        die("a reply outgrew its buffer");
    struct skp_header h = {SKP_VERSION, opcode, SKP_F_REPLY, status, id, (uint32_t)b->w.len};
    append(s, &h, b->buf);
}

/* An error reply: the message, or an empty body (the client says the status's name). */
static void error_reply(struct stream *s, uint8_t opcode, uint32_t id, uint16_t status,
                        const char *msg)
{
    struct body b;
    struct skp_writer *w = begin(&b);
    if (msg)
        skp_write_str(w, msg, strlen(msg));
    reply(s, opcode, id, status, &b);
}

/* Replies whose body is one u32 (INSTANCE_NEW) or empty (UNLOAD, INSTANCE_FREE). */
static void u32_reply(struct stream *s, uint8_t opcode, uint32_t id, uint32_t v)
{
    struct body b;
    skp_write_u32(begin(&b), v);
    reply(s, opcode, id, SKP_S_OK, &b);
}

static void empty_reply(struct stream *s, uint8_t opcode, uint32_t id)
{
    struct body b;
    begin(&b);
    reply(s, opcode, id, SKP_S_OK, &b);
}

/* PING's echo and INFO_JSON's text: bytes. */
static void bytes_reply(struct stream *s, uint8_t opcode, uint32_t id, const void *p, size_t len)
{
    struct body b;
    skp_write_bytes(begin(&b), p, len);
    reply(s, opcode, id, SKP_S_OK, &b);
}

static void hello(struct stream *s, uint32_t id, const char *node, uint32_t max_request)
{
    char name[128];
    size_t len = skp_hello_name(name, sizeof name, "skeld 0.2.0", node);
    struct body b;
    struct skp_writer *w = begin(&b);
    skp_write_u16(w, SKP_VERSION);
    skp_write_str(w, name, len);
    skp_write_u32(w, max_request);
    reply(s, SKP_OP_HELLO, id, SKP_S_OK, &b);
}

/* The robot's bones, as INFO lists them. */
static const char *const bone_names[] = {"root", "body", "arm", "hand"};
static const int32_t bone_parents[] = {-1, 0, 1, 2};
#define BONES 4

static void write_summary(struct skp_writer *w)
{
    static const char *const anims[] = {"Idle", "Walk", "#2"}; /* "#2" an animation's name */
    static const char *const styles[] = {"Default", "Night"};
    skp_write_u32(w, BONES);
    skp_write_u16(w, 3);
    for (int i = 0; i < 3; i++) {
        skp_write_str(w, anims[i], strlen(anims[i]));
        skp_write_f64(w, 24 + 6 * i);
        skp_write_u32(w, 40 + 12 * (uint32_t)i);
    }
    skp_write_u16(w, 2);
    for (int i = 0; i < 2; i++)
        skp_write_str(w, styles[i], strlen(styles[i]));
    skp_write_u16(w, 1);
}

/* LOAD_PATH and LOAD_BYTES: the id, then the summary. */
static void load(struct stream *s, uint8_t opcode, uint32_t id, const char *sample)
{
    uint8_t arm[SKP_ID_SIZE];
    fuzz_id(arm, sample);
    struct body b;
    struct skp_writer *w = begin(&b);
    skp_write_raw(w, arm, sizeof arm);
    write_summary(w);
    reply(s, opcode, id, SKP_S_OK, &b);
}

/* INFO: the summary, then every bone's name and parent. */
static void info(struct stream *s, uint32_t id)
{
    struct body b;
    struct skp_writer *w = begin(&b);
    write_summary(w);
    for (int i = 0; i < BONES; i++) {
        skp_write_str(w, bone_names[i], strlen(bone_names[i]));
        skp_write_i32(w, bone_parents[i]);
    }
    reply(s, SKP_OP_INFO, id, SKP_S_OK, &b);
}

/* POSE: n bones (at most BONES), a textured quad, a hidden one without texture, a mesh. */
static void pose(struct stream *s, uint32_t id, uint32_t n)
{
    static const double tint[4] = {255, 255, 255, 255}, half[4] = {255, 128, 0, 127.5};
    static const double quad[8] = {-1, -1, 1, -1, 1, 1, -1, 1};
    static const double mesh[10] = {0, 0, 2, 0, 2, 2, 0, 2, 1, 3};
    struct body b;
    struct skp_writer *w = begin(&b);
    skp_write_u32(w, n);
    for (uint32_t i = 0; i < n; i++) {
        struct skp_pose_bone pb = {
            .fields = {i, 2.0 * i, 0.25 * i, 1, 1 + i, 1, 0, 0, 1, i, 2.0 * i},
            .hidden = i == 1,
            .zindex = (int32_t)i - 1,
            .tex = i == 1 ? "" : bone_names[i],
            .tex_len = i == 1 ? 0 : strlen(bone_names[i]),
            .tint = i == 2 ? half : tint,
            .vert_count = i == 1   ? 0
                          : i == 3 ? 5
                                   : 4,
            .verts = i == 3 ? mesh : quad,
        };
        skp_write_pose_bone(w, &pb);
    }
    reply(s, SKP_OP_POSE, id, SKP_S_OK, &b);
}

/* MESH: n draws (at most 3): quads of 4 vertices and 6 indices, and a mesh of 5 and 9. */
static void mesh(struct stream *s, uint32_t id, uint32_t n)
{
    static const double tint[4] = {255, 255, 255, 255};
    static const double quad[16] = {-1, -1, 0, 0, 1, -1, 0.5, 0, 1, 1, 0.5, 0.5, -1, 1, 0, 0.5};
    static const double pent[20] = {0, 0, 0.5, 0.5, 2,   0, 1, 0.5, 2,    2,
                                    1, 1, 0,   2,   0.5, 1, 1, 3,   0.75, 1};
    static const uint32_t quad_ix[6] = {0, 1, 2, 0, 2, 3}, pent_ix[9] = {0, 1, 2, 0, 2, 3, 3, 2, 4};
    struct body b;
    struct skp_writer *w = begin(&b);
    skp_write_u32(w, n);
    for (uint32_t i = 0; i < n; i++) {
        bool is_mesh = i == 1;
        skp_write_u32(w, i + 1);
        skp_write_u32(w, i % 2);
        skp_write_f64s(w, tint, 4);
        skp_write_u32(w, is_mesh ? 5 : 4);
        skp_write_f64s(w, is_mesh ? pent : quad, is_mesh ? 20 : 16);
        skp_write_u32(w, is_mesh ? 9 : 6);
        skp_write_u32s(w, is_mesh ? pent_ix : quad_ix, is_mesh ? 9 : 6);
    }
    reply(s, SKP_OP_MESH, id, SKP_S_OK, &b);
}

/* A 3 x 2 RGBA PNG file (valid: zlib stream and CRCs). */
static const uint8_t png_3x2[] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48,
    0x44, 0x52, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x02, 0x08, 0x06, 0x00, 0x00,
    0x00, 0x9d, 0x74, 0x66, 0x1a, 0x00, 0x00, 0x00, 0x1b, 0x49, 0x44, 0x41, 0x54, 0x78,
    0xda, 0x63, 0xf8, 0xcf, 0xc0, 0xf0, 0x1f, 0x0c, 0x19, 0xfe, 0x03, 0x31, 0x03, 0x88,
    0xfa, 0xdf, 0xa0, 0xe0, 0x90, 0xf0, 0x1f, 0x00, 0x8c, 0x12, 0x0b, 0x37, 0x98, 0x39,
    0xb1, 0xa0, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};

/* RENDER: n pictures of frames first.., each the 3 x 2 PNG or w x h raw RGBA, then the sheet
 * JSON (NULL: none). */
static void render(struct stream *s, uint32_t id, uint32_t n, uint32_t first, bool raw,
                   uint32_t w_px, uint32_t h_px, const char *json)
{
    static uint8_t rgba[16 * 16 * 4];
    for (size_t i = 0; i < sizeof rgba; i++)
        rgba[i] = (uint8_t)(i * 7 % 251);
    if ((size_t)w_px * h_px * 4 > sizeof rgba)
        die("a raw picture over 16 x 16");
    struct body b;
    struct skp_writer *w = begin(&b);
    skp_write_u32(w, n);
    for (uint32_t i = 0; i < n; i++) {
        skp_write_u32(w, first + i);
        skp_write_u32(w, raw ? w_px : 3);
        skp_write_u32(w, raw ? h_px : 2);
        if (raw)
            skp_write_bytes(w, rgba, (size_t)w_px * h_px * 4);
        else
            skp_write_bytes(w, png_3x2, sizeof png_3x2);
    }
    skp_write_bytes(w, json ? json : "", json ? strlen(json) : 0);
    reply(s, SKP_OP_RENDER, id, SKP_S_OK, &b);
}

/* STATS: the first n of a daemon's counters. */
static void stats(struct stream *s, uint32_t id, uint32_t n)
{
    static const char *const names[] = {"requests.HELLO", "requests.POSE", "errors",
                                        "busy",           "results.bytes", "loads.parsed"};
    struct body b;
    struct skp_writer *w = begin(&b);
    skp_write_u32(w, n);
    for (uint32_t i = 0; i < n && i < 6; i++) {
        uint64_t v = i == 4 ? (uint64_t)5 << 32 | 17 : 3 * i;
        skp_write_str(w, names[i], strlen(names[i]));
        skp_write_u32(w, (uint32_t)(v >> 32));
        skp_write_u32(w, (uint32_t)v);
    }
    reply(s, SKP_OP_STATS, id, SKP_S_OK, &b);
}

static const char sheet_json[] =
    "{\"cell\":{\"w\":3,\"h\":2},\"cols\":2,\"rows\":1,\"scale\":[1,1],\"pivot\":{\"x\":1.5,"
    "\"y\":1},\"bounds\":{\"x\":0,\"y\":0,\"w\":3,\"h\":2},\"frames\":[{\"frame\":0,\"x\":0,"
    "\"y\":0,\"w\":3,\"h\":2},{\"frame\":1,\"x\":3,\"y\":0,\"w\":3,\"h\":2}]}";

static void reply_seeds(const char *dir)
{
    static struct stream s;
    static const char info_json[] = "{\"bones\":4,\"animations\":[\"Idle\",\"Walk\"]}";

    /* HELLO: a node's name, an older daemon's (no node), a refused token, a small limit. */
    pending(&s, K_HELLO, 0);
    hello(&s, 1, "node-1", SKP_MAX_FRAME);
    hello(&s, 2, NULL, SKP_MAX_FRAME);
    error_reply(&s, SKP_OP_HELLO, 3, SKP_S_AUTH, "wrong auth token");
    hello(&s, 4, "a.b_c-9", 1094);
    save(dir, "hello", &s);

    /* PING: echoes, one empty and one of the longest payload. */
    pending(&s, K_PING, 0);
    static uint8_t longest[1024];
    for (size_t i = 0; i < sizeof longest; i++)
        longest[i] = (uint8_t)i;
    bytes_reply(&s, SKP_OP_PING, 1, "ping", 4);
    bytes_reply(&s, SKP_OP_PING, 2, "", 0);
    bytes_reply(&s, SKP_OP_PING, 3, longest, sizeof longest);
    bytes_reply(&s, SKP_OP_PING, 4, "\0\1\2", 3);
    save(dir, "ping", &s);

    /* LOAD_PATH, LOAD_BYTES, UNLOAD, INFO. */
    pending(&s, K_LOAD_PATH, 1);
    load(&s, SKP_OP_LOAD_PATH, 1, "robot.skf");
    load(&s, SKP_OP_LOAD_BYTES, 2, "critter.skf");
    empty_reply(&s, SKP_OP_UNLOAD, 3);
    info(&s, 4);
    save(dir, "load-info", &s);

    /* INFO four times, one NOT_FOUND (skc_ensure then uploads). */
    pending(&s, K_INFO, 0);
    info(&s, 1);
    error_reply(&s, SKP_OP_INFO, 2, SKP_S_NOT_FOUND, "no armature with that id");
    info(&s, 3);
    info(&s, 4);
    save(dir, "info", &s);

    /* INSTANCE_NEW, INSTANCE_FREE, POSE, MESH: an instance's life. */
    pending(&s, K_INSTANCE_NEW, 1);
    u32_reply(&s, SKP_OP_INSTANCE_NEW, 1, 7);
    empty_reply(&s, SKP_OP_INSTANCE_FREE, 2);
    pose(&s, 3, 2);
    mesh(&s, 4, 1);
    save(dir, "instance", &s);

    /* POSE: no bones, one, all. */
    pending(&s, K_POSE, 0);
    pose(&s, 1, 0);
    pose(&s, 2, 1);
    pose(&s, 3, BONES);
    pose(&s, 4, 3);
    save(dir, "pose", &s);

    /* MESH: draw lists of quads and a mesh, and an empty one (nothing visible). */
    pending(&s, K_MESH, 0);
    mesh(&s, 1, 3);
    mesh(&s, 2, 0);
    mesh(&s, 3, 2);
    mesh(&s, 4, 1);
    save(dir, "mesh", &s);

    /* RENDER as PNG: one picture, a range, a sheet with its JSON, none. */
    pending(&s, K_RENDER, 0);
    render(&s, 1, 1, 0, false, 0, 0, NULL);
    render(&s, 2, 3, 4, false, 0, 0, NULL);
    render(&s, 3, 1, 0, false, 0, 0, sheet_json);
    render(&s, 4, 0, 0, false, 0, 0, NULL);
    save(dir, "render-png", &s);

    /* RENDER as raw RGBA: pictures of several sizes, one of a single pixel, a range. */
    pending(&s, K_RENDER_RAW, 0);
    render(&s, 1, 1, 0, true, 3, 2, NULL);
    render(&s, 2, 1, 9, true, 1, 1, NULL);
    render(&s, 3, 2, 0, true, 16, 16, NULL);
    render(&s, 4, 1, 0, true, 6, 2, sheet_json);
    save(dir, "render-raw", &s);

    /* RENDER as PNG and as raw, STATS, INFO_JSON. */
    pending(&s, K_RENDER, 1);
    render(&s, 1, 2, 0, false, 0, 0, NULL);
    render(&s, 2, 1, 0, true, 4, 4, NULL);
    stats(&s, 3, 6);
    bytes_reply(&s, SKP_OP_INFO_JSON, 4, info_json, strlen(info_json));
    save(dir, "render-stats-json", &s);

    /* STATS: counters, none, and BUSY without a message. */
    pending(&s, K_STATS, 0);
    stats(&s, 1, 6);
    stats(&s, 2, 0);
    error_reply(&s, SKP_OP_STATS, 3, SKP_S_BUSY, NULL);
    stats(&s, 4, 2);
    save(dir, "stats", &s);

    /* INFO_JSON: the text, and an empty one. */
    pending(&s, K_INFO_JSON, 0);
    bytes_reply(&s, SKP_OP_INFO_JSON, 1, info_json, strlen(info_json));
    bytes_reply(&s, SKP_OP_INFO_JSON, 2, "", 0);
    error_reply(&s, SKP_OP_INFO_JSON, 3, SKP_S_NOT_FOUND, "no armature with that id");
    bytes_reply(&s, SKP_OP_INFO_JSON, 4, "{}", 2);
    save(dir, "info-json", &s);

    /* Error replies to POSE, MESH, RENDER, then a connection-level one (id 0, opcode 0) that
     * ends the connection before the last request's reply. */
    pending(&s, K_POSE, 1);
    error_reply(&s, SKP_OP_POSE, 1, SKP_S_NOT_FOUND, "no armature with that id");
    error_reply(&s, SKP_OP_MESH, 2, SKP_S_BAD_REQUEST, "unknown animation \"Run\"");
    error_reply(&s, SKP_OP_RENDER, 3, SKP_S_LIMIT, "the picture is over --max-image-pixels");
    error_reply(&s, 0, 0, SKP_S_FRAMING, "bad magic");
    save(dir, "errors", &s);

    /* Out of order: LOAD_BYTES, INFO, INSTANCE_FREE, MESH answered last first, with a
     * duplicate and a reply to a request never made, both dropped. */
    pending(&s, K_LOAD_BYTES, 2);
    mesh(&s, 4, 2);
    empty_reply(&s, SKP_OP_INSTANCE_FREE, 3);
    info(&s, 2);
    empty_reply(&s, SKP_OP_INSTANCE_FREE, 3);
    u32_reply(&s, SKP_OP_INSTANCE_NEW, 9, 2);
    load(&s, SKP_OP_LOAD_BYTES, 1, "lamp-0.7.skf");
    save(dir, "out-of-order", &s);

    /* The stream ends in the middle of a reply: the first two arrive, the rest cannot. */
    pending(&s, K_POSE, 0);
    pose(&s, 2, 1);
    pose(&s, 1, 2);
    pose(&s, 3, 3);
    s.len -= 40;
    save(dir, "cut-short", &s);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "request"))
        request_seeds(argv[2]);
    else if (argc == 3 && !strcmp(argv[1], "reply"))
        reply_seeds(argv[2]);
    else {
        fprintf(stderr, "usage: make-seeds request|reply DIR\n");
        return 2;
    }
    return 0;
}
