/* Writes the request fuzzer's seed corpus: small client byte streams of valid frames, encoded
 * with the project's own codec (skp_msg), one file per stream.
 *
 *   make-seeds DIR        (contrib/fuzz/run.sh seeds rebuilds contrib/fuzz/corpus/request)
 *
 * Armatures are named by the fuzzer's fixed ids: the sample's file name padded with zeros to
 * 32 bytes (fuzz-request.c); contrib/fuzz/live.py swaps in the ids a real daemon reports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Appends one request frame whose body w wrote into body. */
static void frame(struct stream *s, uint8_t opcode, const uint8_t *body, size_t len)
{
    if (s->len + SKP_HEADER_SIZE + len > sizeof s->buf)
        die("a stream outgrew its buffer");
    struct skp_header h = {SKP_VERSION, opcode, 0, 0, ++s->next_id, (uint32_t)len};
    skp_encode_header(&h, s->buf + s->len);
    if (len)
        memcpy(s->buf + s->len + SKP_HEADER_SIZE, body, len);
    s->len += SKP_HEADER_SIZE + len;
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

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make-seeds DIR\n");
        return 2;
    }
    const char *dir = argv[1];
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
    return 0;
}
