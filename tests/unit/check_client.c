/* libskc against a tiny in-process fake server: a thread that accepts one connection on a
 * temp unix socket (or loopback TCP) and runs a script written with proto/'s codec. The
 * server never calls ck_assert (it is not the test's thread): it records the first problem
 * it sees in fake.fail, which the test checks after joining it. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "skc.h"
#include "skp_parser.h"

#define BODY_MAX (1u << 16)

struct fake;
typedef void (*script_fn)(struct fake *f, int fd);

struct fake {
    char dir[256], path[300], uri[400];
    int lfd;
    pthread_t thread;
    script_fn script;
    char fail[256];
    const char *token; /* the auth token HELLO must carry, or NULL for any */
};

/* ---- the fake server's side ------------------------------------------------------------ */

static void fake_failf(struct fake *f, const char *fmt, ...)
{
    if (f->fail[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->fail, sizeof f->fail, fmt, ap);
    va_end(ap);
}

static int read_exact(int fd, uint8_t *p, size_t n)
{
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* One request frame; body must hold BODY_MAX bytes. 0, or -1 at EOF or on a bad frame. */
static int srv_read(int fd, struct skp_header *h, uint8_t *body)
{
    uint8_t buf[SKP_HEADER_SIZE + BODY_MAX];
    struct skp_frame fr;
    size_t used;
    if (read_exact(fd, buf, SKP_HEADER_SIZE))
        return -1;
    uint32_t len = skp_get_u32(buf + 16);
    if (len > BODY_MAX || read_exact(fd, buf + SKP_HEADER_SIZE, len))
        return -1;
    if (skp_parser_feed(buf, SKP_HEADER_SIZE + len, BODY_MAX, &fr, &used) != SKP_FRAME)
        return -1;
    *h = fr.h;
    memcpy(body, fr.body, len);
    return 0;
}

static int srv_reply(int fd, uint8_t op, uint16_t status, uint32_t id, const uint8_t *body,
                     size_t len)
{
    uint8_t hdr[SKP_HEADER_SIZE];
    struct skp_header h = {SKP_VERSION, op, SKP_F_REPLY, status, id, (uint32_t)len};
    skp_encode_header(&h, hdr);
    return write_all(fd, hdr, sizeof hdr) || write_all(fd, body, len) ? -1 : 0;
}

static int srv_error(int fd, uint8_t op, uint16_t status, uint32_t id, const char *msg)
{
    uint8_t body[512];
    struct skp_writer w;
    skp_writer_init(&w, body, sizeof body);
    skp_write_str(&w, msg, strlen(msg));
    return srv_reply(fd, op, status, id, body, w.len);
}

/* Answers HELLO (checking version and token). 0 when the client is in. */
static int srv_hello(struct fake *f, int fd)
{
    struct skp_header h;
    uint8_t body[BODY_MAX], out[64];
    if (srv_read(fd, &h, body))
        return -1;
    struct skp_reader r;
    size_t len;
    skp_reader_init(&r, body, h.body_len);
    uint16_t version = skp_read_u16(&r);
    const char *tok = skp_read_str(&r, &len);
    if (h.opcode != SKP_OP_HELLO || version != SKP_VERSION || skp_reader_finish(&r)) {
        fake_failf(f, "bad HELLO: opcode %u version %u", h.opcode, version);
        return -1;
    }
    if (f->token && (len != strlen(f->token) || memcmp(tok, f->token, len))) {
        srv_error(fd, SKP_OP_HELLO, SKP_S_AUTH, h.id, "wrong auth token");
        return -1;
    }
    struct skp_writer w;
    skp_writer_init(&w, out, sizeof out);
    skp_write_u16(&w, SKP_VERSION);
    skp_write_str(&w, "fake 1.0", 8);
    skp_write_u32(&w, 1u << 20);
    return srv_reply(fd, SKP_OP_HELLO, 0, h.id, out, w.len);
}

static void *fake_main(void *arg)
{
    struct fake *f = arg;
    int fd;
    do
        fd = accept(f->lfd, NULL, NULL);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        fake_failf(f, "accept: %s", strerror(errno));
        return NULL;
    }
    f->script(f, fd);
    close(fd);
    return NULL;
}

static void fake_listen_unix(struct fake *f)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(f->dir, sizeof f->dir, "%s/skc-test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/sock", f->dir);
    snprintf(f->uri, sizeof f->uri, "unix:%s", f->path);
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    ck_assert_uint_lt(strlen(f->path), sizeof sun.sun_path);
    strcpy(sun.sun_path, f->path);
    f->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_ge(f->lfd, 0);
    ck_assert_int_eq(bind(f->lfd, (struct sockaddr *)&sun, sizeof sun), 0);
}

static void fake_run(struct fake *f, script_fn script, int backlog)
{
    f->script = script;
    ck_assert_int_eq(listen(f->lfd, backlog), 0);
    if (script)
        ck_assert_int_eq(pthread_create(&f->thread, NULL, fake_main, f), 0);
}

static void fake_start_token(struct fake *f, script_fn script, const char *token)
{
    memset(f, 0, sizeof *f);
    f->token = token;
    fake_listen_unix(f);
    fake_run(f, script, 8);
}

static void fake_start(struct fake *f, script_fn script)
{
    fake_start_token(f, script, NULL);
}

/* Loopback TCP on port 0; returns 0, or -1 when the address family is unavailable. */
static int fake_start_tcp(struct fake *f, int family, script_fn script)
{
    memset(f, 0, sizeof *f);
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t len = family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    if (family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_loopback;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    }
    f->lfd = socket(family, SOCK_STREAM, 0);
    if (f->lfd < 0 || bind(f->lfd, (struct sockaddr *)&ss, len) < 0 ||
        getsockname(f->lfd, (struct sockaddr *)&ss, &len) < 0) {
        if (f->lfd >= 0)
            close(f->lfd);
        return -1;
    }
    unsigned port = ntohs(family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                             : ((struct sockaddr_in *)&ss)->sin_port);
    snprintf(f->uri, sizeof f->uri, family == AF_INET6 ? "tcp://[::1]:%u" : "tcp://127.0.0.1:%u",
             port);
    fake_run(f, script, 8);
    return 0;
}

/* Joins the server, removes its socket, and fails the test if the server saw a problem. */
static void fake_stop(struct fake *f)
{
    if (f->script)
        pthread_join(f->thread, NULL);
    close(f->lfd);
    if (f->path[0])
        unlink(f->path);
    if (f->dir[0])
        rmdir(f->dir);
    ck_assert_msg(f->fail[0] == '\0', "fake server: %s", f->fail);
}

static skc_client *connect_to(struct fake *f, const char *token)
{
    skc_options o = {f->uri, token, 2000, 5000, 0};
    skc_client *c = NULL;
    int rc = skc_connect(&c, &o);
    ck_assert_msg(rc == 0, "connect %s: %s", f->uri, skc_errmsg(c));
    return c;
}

/* ---- scripts ---------------------------------------------------------------------------- */

/* HELLO, then echo every PING until the client leaves. */
static void script_echo(struct fake *f, int fd)
{
    struct skp_header h;
    uint8_t body[BODY_MAX];
    if (srv_hello(f, fd))
        return;
    while (srv_read(fd, &h, body) == 0) {
        if (h.opcode != SKP_OP_PING) {
            fake_failf(f, "expected PING, got opcode %u", h.opcode);
            return;
        }
        srv_reply(fd, SKP_OP_PING, 0, h.id, body, h.body_len);
    }
}

START_TEST(connect_unix_hello)
{
    struct fake f;
    fake_start_token(&f, script_echo, "sekrit");
    skc_client *c = connect_to(&f, "sekrit");
    ck_assert_str_eq(skc_server_name(c), "fake 1.0");
    ck_assert_uint_eq(skc_server_version(c), 1);
    ck_assert_uint_eq(skc_server_max_frame(c), 1u << 20);
    ck_assert_uint_eq(skc_pending(c), 0);
    skc_free(c);
    fake_stop(&f);
}
END_TEST

START_TEST(connect_wrong_token)
{
    struct fake f;
    fake_start_token(&f, script_echo, "sekrit");
    skc_options o = {f.uri, "guess", 2000, 2000, 0};
    skc_client *c = NULL;
    ck_assert_int_eq(skc_connect(&c, &o), SKC_ESERVER);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(skc_status(c), SKC_S_AUTH);
    ck_assert_ptr_nonnull(strstr(skc_errmsg(c), "wrong auth token"));
    ck_assert_int_eq(skc_ping(c, "x", 1), SKC_EIO); /* the failed handle does no I/O */
    skc_free(c);
    fake_stop(&f);
}
END_TEST

/* A token HELLO cannot carry is named as the token, before anything is sent; a reply past the
 * caller's own max_reply is said to be that, not the server's fault. */
START_TEST(token_too_long_and_own_max_reply)
{
    struct fake f;
    fake_start(&f, script_echo);
    char token[1026];
    memset(token, 'a', sizeof token - 1);
    token[sizeof token - 1] = 0;
    skc_options o = {f.uri, token, 2000, 2000, 0};
    skc_client *c = NULL;
    ck_assert_int_eq(skc_connect(&c, &o), SKC_EINVAL);
    ck_assert_msg(strstr(skc_errmsg(c), "the auth token is over 1024 bytes"), "%s", skc_errmsg(c));
    skc_free(c);
    o = (skc_options){f.uri, NULL, 2000, 2000, 64};
    c = NULL;
    ck_assert_msg(skc_connect(&c, &o) == 0, "%s", skc_errmsg(c)); /* HELLO's reply fits */
    char echo[100] = {0};
    ck_assert_int_eq(skc_ping(c, echo, sizeof echo), SKC_EPROTO);
    ck_assert_msg(strstr(skc_errmsg(c), "a reply over this client's max_reply of 64 bytes"), "%s",
                  skc_errmsg(c));
    skc_free(c);
    fake_stop(&f);
}
END_TEST

START_TEST(ping_round_trip)
{
    struct fake f;
    fake_start(&f, script_echo);
    skc_client *c = connect_to(&f, NULL);
    ck_assert_int_eq(skc_ping(c, "hello", 5), 0);
    ck_assert_int_eq(skc_ping(c, NULL, 0), 0);
    uint8_t big[SKC_MAX_PING];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)(i * 7);
    ck_assert_int_eq(skc_ping(c, big, sizeof big), 0);
    ck_assert_int_eq(skc_ping(c, big, sizeof big + 1), SKC_EINVAL);
    ck_assert_ptr_nonnull(strstr(skc_errmsg(c), "1024"));
    ck_assert_int_eq(skc_ping(c, "again", 5), 0); /* still connected */
    skc_free(c);
    fake_stop(&f);
}
END_TEST

static void tcp_case(int family)
{
    struct fake f;
    if (fake_start_tcp(&f, family, script_echo)) {
        fprintf(stderr, "check_client: no %s loopback, skipping\n",
                family == AF_INET6 ? "IPv6" : "IPv4");
        return;
    }
    skc_client *c = connect_to(&f, NULL);
    ck_assert_int_eq(skc_ping(c, "tcp", 3), 0);
    skc_free(c);
    fake_stop(&f);
}

START_TEST(connect_tcp_v4)
{
    tcp_case(AF_INET);
}
END_TEST

START_TEST(connect_tcp_v6)
{
    tcp_case(AF_INET6);
}
END_TEST

/* ---- evaluation: the request's encoding and the bones reply ----------------------------- */

static int expect_str(struct skp_reader *r, const char *want)
{
    size_t len;
    const char *s = skp_read_str(r, &len);
    return s && len == strlen(want) && memcmp(s, want, len) == 0;
}

/* target 0, id 0..31, LOOP|Y_DOWN|from, anims "walk"@3.5/0 and "1"@2/0.5, from 1.25,
 * warmup 7, position (1, 2), scale (3, 4), velocity (5, 6). */
static void check_pose_request(struct fake *f, const uint8_t *body, size_t len)
{
    struct skp_reader r;
    skp_reader_init(&r, body, len);
    int ok = skp_read_u8(&r) == 0;
    const uint8_t *id = skp_read_raw(&r, 32);
    for (int i = 0; ok && id && i < 32; i++)
        ok = id[i] == i;
    ok = ok && skp_read_u16(&r) == (0x01 | 0x04 | 0x10) && skp_read_u8(&r) == 2;
    ok = ok && expect_str(&r, "walk") && skp_read_f64(&r) == 3.5 && skp_read_f64(&r) == 0;
    ok = ok && expect_str(&r, "1") && skp_read_f64(&r) == 2 && skp_read_f64(&r) == 0.5;
    ok = ok && skp_read_f64(&r) == 1.25 && skp_read_u32(&r) == 7;
    for (int i = 1; ok && i <= 6; i++)
        ok = skp_read_f64(&r) == i;
    if (!ok || skp_reader_finish(&r))
        fake_failf(f, "the POSE request body is not what skc_pose was given");
}

static void put_bone(struct skp_writer *w, double base, const char *tex, uint32_t verts)
{
    for (int i = 0; i < 11; i++) /* pos, rot, scale, matrix */
        skp_write_f64(w, base + i);
    skp_write_u8(w, tex[0] ? 0 : 1);
    skp_write_i32(w, -3);
    skp_write_str(w, tex, strlen(tex));
    for (int i = 0; i < 4; i++)
        skp_write_f64(w, 255 - i);
    skp_write_u32(w, verts);
    for (uint32_t v = 0; v < verts; v++) {
        skp_write_f64(w, v);
        skp_write_f64(w, -(double)v);
    }
}

static void script_pose(struct fake *f, int fd)
{
    struct skp_header h;
    uint8_t body[BODY_MAX], out[4096];
    if (srv_hello(f, fd) || srv_read(fd, &h, body))
        return;
    if (h.opcode != SKP_OP_POSE)
        fake_failf(f, "expected POSE, got opcode %u", h.opcode);
    check_pose_request(f, body, h.body_len);
    struct skp_writer w;
    skp_writer_init(&w, out, sizeof out);
    skp_write_u32(&w, 2);
    put_bone(&w, 10, "head", 0);
    put_bone(&w, 20, "", 3);
    srv_reply(fd, SKP_OP_POSE, 0, h.id, out, w.len);
    while (srv_read(fd, &h, body) == 0)
        ;
}

START_TEST(pose_decoded)
{
    struct fake f;
    fake_start(&f, script_pose);
    skc_client *c = connect_to(&f, NULL);
    skc_eval ev;
    skc_eval_init(&ev);
    for (int i = 0; i < 32; i++)
        ev.armature[i] = (unsigned char)i;
    ev.flags = SKC_EVAL_LOOP | SKC_EVAL_Y_DOWN;
    ev.anim_count = 2;
    ev.anims[0] = (skc_anim){"walk", 3.5, 0};
    ev.anims[1] = (skc_anim){"1", 2, 0.5};
    ev.has_from = 1;
    ev.from = 1.25;
    ev.warmup = 7;
    ev.position = (skc_vec2){1, 2};
    ev.scale = (skc_vec2){3, 4};
    ev.velocity = (skc_vec2){5, 6};
    skc_reply *rep = NULL;
    ck_assert_msg(skc_pose(c, &ev, &rep) == 0, "%s", skc_errmsg(c));
    ck_assert_int_eq(skc_reply_op(rep), SKC_OP_POSE);
    uint32_t n = 0;
    const skc_bone *b = skc_reply_bones(rep, &n);
    ck_assert_uint_eq(n, 2);
    ck_assert(b[0].pos.x == 10 && b[0].pos.y == 11 && b[0].rot == 12);
    ck_assert(b[0].scale.x == 13 && b[0].scale.y == 14);
    for (int i = 0; i < 6; i++)
        ck_assert(b[0].matrix[i] == 15 + i && b[1].matrix[i] == 25 + i);
    ck_assert_int_eq(b[0].hidden, 0);
    ck_assert_int_eq(b[1].hidden, 1);
    ck_assert_int_eq(b[0].zindex, -3);
    ck_assert_str_eq(b[0].tex, "head");
    ck_assert_str_eq(b[1].tex, "");
    ck_assert(b[1].tint[0] == 255 && b[1].tint[3] == 252);
    ck_assert_uint_eq(b[0].vertex_count, 0);
    ck_assert_ptr_null(b[0].vertices);
    ck_assert_uint_eq(b[1].vertex_count, 3);
    ck_assert(b[1].vertices[2].x == 2 && b[1].vertices[2].y == -2);
    ck_assert_ptr_null(skc_reply_draws(rep, &n)); /* not a MESH reply */
    ck_assert_uint_eq(n, 0);
    skc_reply_free(rep);
    skc_free(c);
    fake_stop(&f);
}
END_TEST

START_TEST(eval_bad_arguments)
{
    struct fake f;
    fake_start(&f, script_echo);
    skc_client *c = connect_to(&f, NULL);
    skc_eval ev;
    skc_eval_init(&ev);
    ev.anim_count = SKC_MAX_ANIMS + 1;
    ck_assert_int_eq(skc_pose(c, &ev, NULL), SKC_EINVAL);
    ev.anim_count = 1;
    ev.anims[0].name = NULL;
    ck_assert_int_eq(skc_mesh(c, &ev, NULL), SKC_EINVAL);
    ck_assert_ptr_nonnull(strstr(skc_errmsg(c), "no name"));
    char long_name[SKC_MAX_NAME + 2];
    memset(long_name, 'a', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    ev.anims[0].name = long_name;
    ck_assert_int_eq(skc_pose(c, &ev, NULL), SKC_EINVAL);
    ev.anims[0].name = "idle";
    ev.flags = 0x04; /* `from` goes through has_from */
    ck_assert_int_eq(skc_pose(c, &ev, NULL), SKC_EINVAL);
    ev.flags = 0;
    skc_render_opts ro;
    skc_render_opts_init(&ro);
    ro.png_level = 10;
    ck_assert_int_eq(skc_render(c, &ev, &ro, NULL), SKC_EINVAL);
    ck_assert_msg(strstr(skc_errmsg(c), "out of range: png_level"), "%s", skc_errmsg(c));
    ck_assert_int_eq(skc_pose(NULL, &ev, NULL), SKC_EINVAL);
    ck_assert_int_eq(skc_pending(c), 0);
    ck_assert_int_eq(skc_ping(c, "ok", 2), 0); /* nothing bad was sent */
    skc_free(c);
    fake_stop(&f);
}
END_TEST

/* ---- errors ------------------------------------------------------------------------------ */

static void script_not_found(struct fake *f, int fd)
{
    struct skp_header h;
    uint8_t body[BODY_MAX];
    if (srv_hello(f, fd))
        return;
    while (srv_read(fd, &h, body) == 0) {
        if (h.opcode == SKP_OP_PING)
            srv_reply(fd, SKP_OP_PING, 0, h.id, body, h.body_len);
        else
            srv_error(fd, h.opcode, SKP_S_NOT_FOUND, h.id, "no armature with that id");
    }
}

START_TEST(error_reply)
{
    struct fake f;
    fake_start(&f, script_not_found);
    skc_client *c = connect_to(&f, NULL);
    unsigned char id[SKC_ID_SIZE] = {0};
    skc_reply *rep = NULL;
    ck_assert_int_eq(skc_info(c, id, &rep), SKC_ESERVER);
    ck_assert_ptr_null(rep);
    ck_assert_int_eq(skc_status(c), SKC_S_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(skc_errmsg(c), "no armature with that id"));
    ck_assert_str_eq(skc_status_str(skc_status(c)), "not found");
    ck_assert_int_eq(skc_unload(c, id), SKC_ESERVER);
    /* A request-level error keeps the connection, and the next call resets the status. */
    ck_assert_int_eq(skc_ping(c, "p", 1), 0);
    ck_assert_int_eq(skc_status(c), 0);
    skc_free(c);
    fake_stop(&f);
}
END_TEST

/* Replies to a PING with a truncated POSE-shaped body, then a good echo. */
static void script_malformed(struct fake *f, int fd)
{
    struct skp_header h;
    uint8_t body[BODY_MAX], out[16] = {0};
    if (srv_hello(f, fd) || srv_read(fd, &h, body))
        return;
    skp_put_u32(out, 1000000); /* 1e6 bones in 16 bytes */
    srv_reply(fd, SKP_OP_POSE, 0, h.id, out, sizeof out);
    if (srv_read(fd, &h, body) == 0)
        srv_reply(fd, SKP_OP_PING, 0, h.id, body, h.body_len);
    while (srv_read(fd, &h, body) == 0)
        ;
}

START_TEST(malformed_reply)
{
    struct fake f;
    fake_start(&f, script_malformed);
    skc_client *c = connect_to(&f, NULL);
    skc_eval ev;
    skc_eval_init(&ev);
    skc_reply *rep = NULL;
    ck_assert_int_eq(skc_pose(c, &ev, &rep), SKC_EPROTO);
    ck_assert_ptr_null(rep);
    ck_assert_ptr_nonnull(strstr(skc_errmsg(c), "POSE"));
    ck_assert_int_eq(skc_ping(c, "after", 5), 0);
    skc_free(c);
    fake_stop(&f);
}
END_TEST

/* Answers request h with a MESH reply of one draw (bone 0, atlas 0, tint 255s): vertices
 * vertices of xyuv (4 numbers each), then count indices. */
static void one_draw_reply(int fd, const struct skp_header *h, const double *xyuv,
                           uint32_t vertices, const uint32_t *indices, uint32_t count)
{
    uint8_t out[512];
    struct skp_writer w;
    skp_writer_init(&w, out, sizeof out);
    skp_write_u32(&w, 1);
    skp_write_u32(&w, 0);
    skp_write_u32(&w, 0);
    for (int i = 0; i < 4; i++)
        skp_write_f64(&w, 255);
    skp_write_u32(&w, vertices);
    for (uint32_t i = 0; i < 4 * vertices; i++)
        skp_write_f64(&w, xyuv[i]);
    skp_write_u32(&w, count);
    for (uint32_t i = 0; i < count; i++)
        skp_write_u32(&w, indices[i]);
    srv_reply(fd, h->opcode, 0, h->id, out, w.len);
}

/* Replies to each MESH with one draw whose indices break skc.h's promise (triangles of the
 * draw's own vertices): first 4 indices, then 3 with one past the vertices, then a good one;
 * echoes PINGs. */
static void script_bad_indices(struct fake *f, int fd)
{
    struct skp_header h;
    uint8_t body[BODY_MAX];
    static const uint32_t sets[3][4] = {{0, 1, 99999, 7}, {0, 1, 2}, {0, 1, 1}};
    static const uint32_t counts[3] = {4, 3, 3};
    int k = 0;
    if (srv_hello(f, fd))
        return;
    while (srv_read(fd, &h, body) == 0) {
        if (h.opcode == SKP_OP_PING) {
            srv_reply(fd, SKP_OP_PING, 0, h.id, body, h.body_len);
            continue;
        }
        static const double xyuv[8] = {0, 1, 2, 3, 4, 5, 6, 7};
        one_draw_reply(fd, &h, xyuv, 2, sets[k % 3], counts[k % 3]);
        k++;
    }
}

START_TEST(reply_breaking_the_header_is_eproto)
{
    struct fake f;
    fake_start(&f, script_bad_indices);
    skc_client *c = connect_to(&f, NULL);
    skc_eval ev;
    skc_eval_init(&ev);
    skc_reply *rep = NULL;
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(skc_mesh(c, &ev, &rep), SKC_EPROTO);
        ck_assert_ptr_null(rep);
        ck_assert_msg(strstr(skc_errmsg(c), "indices are not triangles of its vertices"), "%s",
                      skc_errmsg(c));
    }
    ck_assert_msg(skc_mesh(c, &ev, &rep) == 0, "%s", skc_errmsg(c)); /* a good one, then */
    skc_reply_free(rep);
    ck_assert_int_eq(skc_ping(c, "after", 5), 0);
    skc_free(c);
    fake_stop(&f);
}
END_TEST

/* Replies to each MESH with one draw of a triangle whose first vertex's x is, in turn, NaN,
 * infinite and 0. */
static void script_not_finite(struct fake *f, int fd)
{
    struct skp_header h;
    uint8_t body[BODY_MAX];
    const double firsts[3] = {NAN, INFINITY, 0};
    int k = 0;
    if (srv_hello(f, fd))
        return;
    while (srv_read(fd, &h, body) == 0) {
        double xyuv[12];
        static const uint32_t triangle[3] = {0, 1, 2};
        for (int i = 0; i < 12; i++)
            xyuv[i] = i ? i : firsts[k % 3];
        one_draw_reply(fd, &h, xyuv, 3, triangle, 3);
        k++;
    }
}

/* skc.h promises finite numbers: a caller prints them as JSON or draws them as they are. */
START_TEST(number_not_finite_is_eproto)
{
    struct fake f;
    fake_start(&f, script_not_finite);
    skc_client *c = connect_to(&f, NULL);
    skc_eval ev;
    skc_eval_init(&ev);
    skc_reply *rep = NULL;
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(skc_mesh(c, &ev, &rep), SKC_EPROTO);
        ck_assert_ptr_null(rep);
        ck_assert_msg(strstr(skc_errmsg(c), "not finite"), "%s", skc_errmsg(c));
    }
    ck_assert_msg(skc_mesh(c, &ev, &rep) == 0, "%s", skc_errmsg(c)); /* a finite one, then */
    skc_reply_free(rep);
    skc_free(c);
    fake_stop(&f);
}
END_TEST

/* Replies to each RENDER with one 2x2 picture, in turn: 15 bytes of "RGBA", 16 bytes, a PNG
 * whose header says 3x2, a PNG whose header says 2x2, 16 bytes again. */
static void script_picture_sizes(struct fake *f, int fd)
{
    struct skp_header h;
    uint8_t body[BODY_MAX];
    static const uint8_t png[2][24] = {{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13,
                                        'I',  'H', 'D', 'R', 0,    0,    0,    3,    0, 0, 0, 2},
                                       {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13,
                                        'I',  'H', 'D', 'R', 0,    0,    0,    2,    0, 0, 0, 2}};
    static const uint8_t raw[16] = {0};
    int k = 0;
    if (srv_hello(f, fd))
        return;
    while (srv_read(fd, &h, body) == 0) {
        uint8_t out[128];
        struct skp_writer w;
        skp_writer_init(&w, out, sizeof out);
        skp_write_u32(&w, 1); /* frame 0, 2x2 */
        skp_write_u32(&w, 0);
        skp_write_u32(&w, 2);
        skp_write_u32(&w, 2);
        switch (k++ % 5) {
        case 0: skp_write_bytes(&w, raw, 15); break;
        case 1: skp_write_bytes(&w, raw, 16); break;
        case 2: skp_write_bytes(&w, png[0], 24); break;
        case 3: skp_write_bytes(&w, png[1], 24); break;
        default: skp_write_bytes(&w, raw, 16); break;
        }
        skp_write_bytes(&w, "", 0); /* no sheet */
        srv_reply(fd, h.opcode, 0, h.id, out, w.len);
    }
}

/* skc.h promises raw pictures of width x height x 4 bytes and PNG files of the size said: a
 * caller sizes its buffers from width and height. */
START_TEST(picture_not_as_said_is_eproto)
{
    struct fake f;
    fake_start(&f, script_picture_sizes);
    skc_client *c = connect_to(&f, NULL);
    skc_eval ev;
    skc_eval_init(&ev);
    skc_render_opts ro;
    skc_render_opts_init(&ro);
    ro.width = ro.height = 2;
    ro.format = SKC_FORMAT_RGBA;
    skc_reply *rep = NULL;
    ck_assert_int_eq(skc_render(c, &ev, &ro, &rep), SKC_EPROTO);
    ck_assert_ptr_null(rep);
    ck_assert_msg(strstr(skc_errmsg(c), "a raw picture is not width x height x 4 bytes"), "%s",
                  skc_errmsg(c));
    ck_assert_msg(skc_render(c, &ev, &ro, &rep) == 0, "%s", skc_errmsg(c));
    skc_reply_free(rep);
    ro.format = SKC_FORMAT_PNG; /* pipelined, this time */
    uint32_t id;
    ck_assert_int_eq(skc_send_render(c, &ev, &ro, &id), 0);
    ck_assert_int_eq(skc_recv(c, id, &rep), SKC_EPROTO);
    ck_assert_msg(strstr(skc_errmsg(c), "a picture is not a PNG file of the size it is said to be"),
                  "%s", skc_errmsg(c));
    ck_assert_int_eq(skc_send_render(c, &ev, &ro, &id), 0);
    ck_assert_msg(skc_recv(c, id, &rep) == 0, "%s", skc_errmsg(c));
    uint32_t n;
    ck_assert_uint_eq(skc_reply_images(rep, &n)[0].size, 24);
    skc_reply_free(rep);
    ck_assert_int_eq(skc_render(c, &ev, &ro, &rep), SKC_EPROTO); /* raw bytes for a PNG */
    skc_free(c);
    fake_stop(&f);
}
END_TEST

/* HELLO answered with protocol version 2: not a daemon this library speaks to. */
static void script_hello_v2(struct fake *f, int fd)
{
    struct skp_header h;
    uint8_t body[BODY_MAX], out[64];
    (void)f;
    if (srv_read(fd, &h, body))
        return;
    struct skp_writer w;
    skp_writer_init(&w, out, sizeof out);
    skp_write_u16(&w, 2);
    skp_write_str(&w, "future", 6);
    skp_write_u32(&w, 1u << 20);
    srv_reply(fd, SKP_OP_HELLO, 0, h.id, out, w.len);
    while (srv_read(fd, &h, body) == 0)
        ;
}

START_TEST(hello_of_another_version_is_eproto)
{
    struct fake f;
    fake_start(&f, script_hello_v2);
    skc_options o = {f.uri, NULL, 2000, 5000, 0};
    skc_client *c = NULL;
    ck_assert_int_eq(skc_connect(&c, &o), SKC_EPROTO);
    ck_assert_msg(strstr(skc_errmsg(c), "another protocol version"), "%s", skc_errmsg(c));
    skc_free(c);
    fake_stop(&f);
}
END_TEST

/* Reads one request, sends half a reply, and hangs up. */
static void script_close_mid_reply(struct fake *f, int fd)
{
    struct skp_header h;
    uint8_t body[BODY_MAX], out[SKP_HEADER_SIZE + 10] = {0};
    if (srv_hello(f, fd) || srv_read(fd, &h, body))
        return;
    struct skp_header rh = {SKP_VERSION, h.opcode, SKP_F_REPLY, 0, h.id, 100};
    skp_encode_header(&rh, out);
    write_all(fd, out, sizeof out);
}

START_TEST(close_mid_reply)
{
    struct fake f;
    fake_start(&f, script_close_mid_reply);
    skc_client *c = connect_to(&f, NULL);
    skc_reply *rep = NULL;
    ck_assert_int_eq(skc_stats(c, &rep), SKC_EIO);
    ck_assert_ptr_null(rep);
    ck_assert_ptr_nonnull(strstr(skc_errmsg(c), "middle of a reply"));
    ck_assert_int_eq(skc_pending(c), 0);
    ck_assert_int_eq(skc_ping(c, "x", 1), SKC_EIO);
    ck_assert_ptr_nonnull(strstr(skc_errmsg(c), "connection closed"));
    uint32_t id;
    ck_assert_int_eq(skc_send_stats(c, &id), SKC_EIO);
    skc_free(c);
    fake_stop(&f);
}
END_TEST

/* HELLO, then the server hangs up, as a daemon's --idle-timeout or a restart would. */
static void script_hello_then_close(struct fake *f, int fd)
{
    srv_hello(f, fd);
}

/* A request on a connection the daemon closed meanwhile says it was closed and what reopens
 * it. (A unix socket whose peer is gone refuses the write at once: EPIPE, no timing.) */
START_TEST(send_after_the_server_hung_up_says_reconnect)
{
    struct fake f;
    fake_start(&f, script_hello_then_close);
    skc_client *c = connect_to(&f, NULL);
    fake_stop(&f); /* the server's end is closed now */
    ck_assert_int_eq(skc_ping(c, "x", 1), SKC_EIO);
    ck_assert_msg(strstr(skc_errmsg(c), "skc_reconnect"), "%s", skc_errmsg(c));
    skc_free(c);
}
END_TEST

/* HELLO, one request read, then the server hangs up without answering it. */
static void script_read_then_close(struct fake *f, int fd)
{
    struct skp_header h;
    uint8_t body[BODY_MAX];
    if (!srv_hello(f, fd))
        srv_read(fd, &h, body);
}

/* A reply cut off by the daemon's hanging up (end of file while waiting) says what reopens
 * the connection too. */
START_TEST(eof_while_waiting_says_reconnect)
{
    struct fake f;
    fake_start(&f, script_read_then_close);
    skc_client *c = connect_to(&f, NULL);
    ck_assert_int_eq(skc_ping(c, "x", 1), SKC_EIO);
    ck_assert_msg(strstr(skc_errmsg(c), "closed the connection") &&
                      strstr(skc_errmsg(c), "skc_reconnect"),
                  "%s", skc_errmsg(c));
    skc_free(c);
    fake_stop(&f);
}
END_TEST

/* A framing error reply (request id 0), then the server hangs up. */
static void script_framing_error(struct fake *f, int fd)
{
    struct skp_header h;
    uint8_t body[BODY_MAX];
    if (srv_hello(f, fd) || srv_read(fd, &h, body))
        return;
    srv_error(fd, 0, SKP_S_FRAMING, 0, "reserved bits set");
}

START_TEST(connection_level_error)
{
    struct fake f;
    fake_start(&f, script_framing_error);
    skc_client *c = connect_to(&f, NULL);
    ck_assert_int_eq(skc_stats(c, NULL), SKC_ESERVER);
    ck_assert_int_eq(skc_status(c), SKC_S_FRAMING);
    ck_assert_ptr_nonnull(strstr(skc_errmsg(c), "reserved bits set"));
    ck_assert_int_eq(skc_stats(c, NULL), SKC_EIO); /* the connection is gone */
    ck_assert_ptr_nonnull(strstr(skc_errmsg(c), "reserved bits set"));
    skc_free(c);
    fake_stop(&f);
}
END_TEST

/* ---- pipelining --------------------------------------------------------------------------- */

/* Reads 4 requests, answers them in reverse order, with an unsolicited reply in between. */
static void script_reverse(struct fake *f, int fd)
{
    struct skp_header h[4];
    static uint8_t body[4][BODY_MAX];
    if (srv_hello(f, fd))
        return;
    for (int i = 0; i < 4; i++)
        if (srv_read(fd, &h[i], body[i]))
            return fake_failf(f, "client hung up after %d requests", i);
    for (int i = 3; i >= 0; i--) {
        if (i == 1)
            srv_reply(fd, SKP_OP_PING, 0, 9999, (const uint8_t *)"\0\0\0\0", 4);
        if (h[i].opcode == SKP_OP_STATS) {
            uint8_t out[64];
            struct skp_writer w;
            skp_writer_init(&w, out, sizeof out);
            skp_write_u32(&w, 1);
            skp_write_str(&w, "requests", 8);
            skp_write_u32(&w, 1);
            skp_write_u32(&w, 2);
            srv_reply(fd, SKP_OP_STATS, 0, h[i].id, out, w.len);
        } else {
            srv_reply(fd, h[i].opcode, 0, h[i].id, body[i], h[i].body_len);
        }
    }
    while (srv_read(fd, &h[0], body[0]) == 0)
        ;
}

static void expect_payload(skc_client *c, uint32_t id, const char *want)
{
    skc_reply *rep = NULL;
    ck_assert_msg(skc_recv(c, id, &rep) == 0, "%s", skc_errmsg(c));
    ck_assert_uint_eq(skc_reply_id(rep), id);
    size_t len;
    const char *p = skc_reply_payload(rep, &len);
    ck_assert_uint_eq(len, strlen(want));
    ck_assert(memcmp(p, want, len) == 0);
    skc_reply_free(rep);
}

START_TEST(pipelined_out_of_order)
{
    struct fake f;
    fake_start(&f, script_reverse);
    skc_client *c = connect_to(&f, NULL);
    uint32_t a, b, s, d;
    ck_assert_int_eq(skc_send_ping(c, "a", 1, &a), 0);
    ck_assert_int_eq(skc_send_ping(c, "bb", 2, &b), 0);
    ck_assert_int_eq(skc_send_stats(c, &s), 0);
    ck_assert_int_eq(skc_send_ping(c, "ccc", 3, &d), 0);
    ck_assert(a != b && b != s && s != d && a != 0);
    ck_assert_uint_eq(skc_pending(c), 4);
    expect_payload(c, b, "bb"); /* the server answers it third */
    skc_reply *rep = NULL;
    ck_assert_int_eq(skc_recv(c, s, &rep), 0);
    uint32_t n;
    const skc_counter *ct = skc_reply_counters(rep, &n);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(ct[0].name, "requests");
    ck_assert(ct[0].value == ((uint64_t)1 << 32 | 2));
    skc_reply_free(rep);
    expect_payload(c, a, "a");
    ck_assert_int_eq(skc_recv(c, a, NULL), SKC_EINVAL); /* collected already */
    expect_payload(c, d, "ccc");
    ck_assert_uint_eq(skc_pending(c), 0);
    skc_free(c);
    fake_stop(&f);
}
END_TEST

/* Echoes every request as it reads it. The client sends its whole batch before reading any
 * reply, so once the socket buffers fill the server blocks on its writes and stops reading:
 * the client's sends must drain replies to get through. */
static void script_batch_body(struct fake *f, int fd)
{
    struct skp_header h;
    uint8_t body[BODY_MAX];
    while (srv_read(fd, &h, body) == 0)
        if (srv_reply(fd, h.opcode, 0, h.id, body, h.body_len))
            return;
}

static void script_batch(struct fake *f, int fd)
{
    if (srv_hello(f, fd) == 0)
        script_batch_body(f, fd);
}

START_TEST(pipelined_batch_discard)
{
    struct fake f;
    fake_start(&f, script_batch);
    skc_client *c = connect_to(&f, NULL);
    enum { N = 2000 };
    static uint32_t ids[N];
    uint8_t payload[SKC_MAX_PING];
    for (int i = 0; i < N; i++) {
        memset(payload, i & 0xff, sizeof payload);
        ck_assert_msg(skc_send_ping(c, payload, sizeof payload, &ids[i]) == 0, "%d: %s", i,
                      skc_errmsg(c));
    }
    ck_assert_int_eq(skc_discard(c, ids[5]), 0);
    ck_assert_int_eq(skc_discard(c, ids[5]), SKC_EINVAL);
    for (int i = N - 1; i >= 0; i--) {
        skc_reply *rep = NULL;
        if (i == 5)
            continue;
        ck_assert_msg(skc_recv(c, ids[i], &rep) == 0, "%d: %s", i, skc_errmsg(c));
        size_t len;
        const uint8_t *p = skc_reply_payload(rep, &len);
        ck_assert_uint_eq(len, sizeof payload);
        ck_assert_uint_eq(p[len - 1], i & 0xff);
        skc_reply_free(rep);
    }
    ck_assert_uint_eq(skc_pending(c), 0);
    skc_free(c);
    fake_stop(&f);
}
END_TEST

/* ---- other replies ------------------------------------------------------------------------ */

static void put_summary(struct skp_writer *w)
{
    skp_write_u32(w, 2);
    skp_write_u16(w, 1);
    skp_write_str(w, "walk", 4);
    skp_write_f64(w, 24);
    skp_write_u32(w, 40);
    skp_write_u16(w, 2);
    skp_write_str(w, "Default", 7);
    skp_write_str(w, "alt", 3);
    skp_write_u16(w, 1);
}

static void reply_mesh(struct skp_writer *w)
{
    skp_write_u32(w, 1);
    skp_write_u32(w, 4);
    skp_write_u32(w, 0);
    for (int i = 0; i < 4; i++)
        skp_write_f64(w, 255);
    skp_write_u32(w, 4);
    for (int i = 0; i < 16; i++)
        skp_write_f64(w, i);
    skp_write_u32(w, 6);
    static const uint32_t quad[6] = {0, 1, 2, 2, 3, 0};
    for (int i = 0; i < 6; i++)
        skp_write_u32(w, quad[i]);
}

/* 1x1 RGBA, 2 frames, then sheet JSON. Also checks the render request. */
static void reply_render(struct fake *f, struct skp_reader *r, struct skp_writer *w)
{
    /* The evaluation part: target 0, any id, the range flag alone, no animations, no from,
     * warmup 0, identity engine options. */
    int ok = skp_read_u8(r) == 0 && skp_read_raw(r, 32) && skp_read_u16(r) == 0x20 &&
             skp_read_u8(r) == 0 && skp_read_f64(r) == 0 && skp_read_u32(r) == 0;
    for (int i = 0; i < 6; i++)
        ok = ok && skp_read_f64(r) == (i == 2 || i == 3 ? 1 : 0);
    if (!ok)
        fake_failf(f, "the evaluation part of RENDER is wrong");
    ok = skp_read_u32(r) == 64 && skp_read_u32(r) == 32;
    ok = ok && skp_read_u8(r) == 1 && skp_read_u8(r) == 2 && skp_read_u8(r) == 3 &&
         skp_read_u8(r) == 4 && skp_read_u8(r) == SKC_CAMERA_EXPLICIT && skp_read_f64(r) == 0.9;
    ok = ok && skp_read_f64(r) == 2 && skp_read_f64(r) == 2 && skp_read_f64(r) == 32 &&
         skp_read_f64(r) == -16;
    ok = ok && skp_read_u8(r) == 1 && expect_str(r, "alt") && skp_read_u8(r) == 1 &&
         skp_read_u8(r) == SKC_FORMAT_RGBA && skp_read_u8(r) == SKC_PNG_DEFAULT;
    ok = ok && skp_read_u32(r) == 3 && skp_read_u32(r) == 4 && skp_read_u16(r) == 0 &&
         skp_read_u16(r) == 0 && skp_reader_finish(r) == 0;
    if (!ok)
        fake_failf(f, "the RENDER request body is not what skc_render was given");
    skp_write_u32(w, 2);
    for (uint32_t i = 3; i <= 4; i++) {
        skp_write_u32(w, i);
        skp_write_u32(w, 1);
        skp_write_u32(w, 1);
        uint8_t px[4] = {(uint8_t)i, 0, 0, 255};
        skp_write_bytes(w, px, 4);
    }
    skp_write_bytes(w, "{}", 2);
}

static void answer(struct fake *f, int fd, const struct skp_header *h, const uint8_t *body)
{
    uint8_t out[4096];
    struct skp_writer w;
    struct skp_reader r;
    skp_writer_init(&w, out, sizeof out);
    skp_reader_init(&r, body, h->body_len);
    switch (h->opcode) {
    case SKP_OP_LOAD_BYTES:
    case SKP_OP_LOAD_PATH:
        for (int i = 0; i < 32; i++)
            skp_write_u8(&w, (uint8_t)(0xA0 + i));
        put_summary(&w);
        break;
    case SKP_OP_INFO:
        put_summary(&w);
        skp_write_str(&w, "root", 4);
        skp_write_i32(&w, -1);
        skp_write_str(&w, "arm", 3);
        skp_write_i32(&w, 0);
        break;
    case SKP_OP_INSTANCE_NEW: skp_write_u32(&w, 77); break;
    case SKP_OP_MESH: reply_mesh(&w); break;
    case SKP_OP_RENDER: reply_render(f, &r, &w); break;
    default: break; /* UNLOAD, INSTANCE_FREE: empty */
    }
    srv_reply(fd, h->opcode, 0, h->id, out, w.len);
}

static void script_replies(struct fake *f, int fd)
{
    struct skp_header h;
    uint8_t body[BODY_MAX];
    if (srv_hello(f, fd))
        return;
    while (srv_read(fd, &h, body) == 0)
        answer(f, fd, &h, body);
}

START_TEST(load_info_instance)
{
    struct fake f;
    fake_start(&f, script_replies);
    skc_client *c = connect_to(&f, NULL);
    unsigned char id[SKC_ID_SIZE];
    skc_reply *rep = NULL;
    ck_assert_int_eq(skc_load_bytes(c, "PK\3\4", 4, id, &rep), 0);
    ck_assert_uint_eq(id[0], 0xA0);
    ck_assert_uint_eq(id[31], 0xA0 + 31);
    const skc_summary *s = skc_reply_summary(rep);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(s->bone_count, 2);
    ck_assert_uint_eq(s->anim_count, 1);
    ck_assert_str_eq(s->anims[0].name, "walk");
    ck_assert(s->anims[0].fps == 24 && s->anims[0].frames == 40);
    ck_assert_uint_eq(s->style_count, 2);
    ck_assert_str_eq(s->styles[1], "alt");
    ck_assert_uint_eq(s->atlas_count, 1);
    skc_reply_free(rep);
    ck_assert_int_eq(skc_load_path(c, "robot.skf", NULL, NULL), 0);
    ck_assert_int_eq(skc_info(c, id, &rep), 0);
    uint32_t n;
    const skc_bone_info *bi = skc_reply_bone_infos(rep, &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(bi[1].name, "arm");
    ck_assert_int_eq(bi[0].parent, -1);
    ck_assert_ptr_null(skc_reply_armature_id(rep));
    skc_reply_free(rep);
    uint32_t inst = 0;
    ck_assert_int_eq(skc_instance_new(c, id, &inst), 0);
    ck_assert_uint_eq(inst, 77);
    ck_assert_int_eq(skc_instance_free(c, inst), 0);
    ck_assert_int_eq(skc_unload(c, id), 0);
    skc_free(c);
    fake_stop(&f);
}
END_TEST

START_TEST(mesh_and_render)
{
    struct fake f;
    fake_start(&f, script_replies);
    skc_client *c = connect_to(&f, NULL);
    skc_eval ev;
    skc_eval_init(&ev);
    skc_reply *rep = NULL;
    ck_assert_int_eq(skc_mesh(c, &ev, &rep), 0);
    uint32_t n;
    const skc_draw *d = skc_reply_draws(rep, &n);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(d[0].bone, 4);
    ck_assert_uint_eq(d[0].vertex_count, 4);
    ck_assert(d[0].vertices[3].x == 12 && d[0].vertices[3].v == 15);
    ck_assert_uint_eq(d[0].index_count, 6);
    ck_assert_uint_eq(d[0].indices[5], 0);
    skc_reply_free(rep);

    skc_render_opts ro;
    skc_render_opts_init(&ro);
    static const char *const styles[] = {"alt"};
    ro.width = 64;
    ro.height = 32;
    memcpy(ro.background, "\1\2\3\4", 4);
    ro.camera = SKC_CAMERA_EXPLICIT;
    ro.scale = (skc_vec2){2, 2};
    ro.position = (skc_vec2){32, -16};
    ro.style_count = 1;
    ro.styles = styles;
    ro.samples = 1;
    ro.format = SKC_FORMAT_RGBA;
    ro.has_range = 1;
    ro.first = 3;
    ro.last = 4;
    ck_assert_msg(skc_render(c, &ev, &ro, &rep) == 0, "%s", skc_errmsg(c));
    const skc_image *im = skc_reply_images(rep, &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(im[1].frame, 4);
    ck_assert_uint_eq(im[1].size, 4);
    ck_assert_uint_eq(im[1].data[0], 4);
    size_t len;
    ck_assert_str_eq(skc_reply_sheet_json(rep, &len), "{}");
    skc_reply_free(rep);
    skc_free(c);
    fake_stop(&f);
}
END_TEST

/* ---- connecting ------------------------------------------------------------------------- */

START_TEST(connect_refused)
{
    skc_options o = {"unix:/nonexistent/skc-test.sock", NULL, 1000, 1000, 0};
    skc_client *c = NULL;
    ck_assert_int_eq(skc_connect(&c, &o), SKC_EIO);
    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_nonnull(strstr(skc_errmsg(c), "/nonexistent/skc-test.sock"));
    skc_free(c);

    /* A loopback port nobody listens on (bound, then closed). */
    struct fake f;
    ck_assert_int_eq(fake_start_tcp(&f, AF_INET, NULL), 0);
    close(f.lfd);
    o.uri = f.uri;
    ck_assert_int_eq(skc_connect(&c, &o), SKC_EIO);
    ck_assert_ptr_nonnull(strstr(skc_errmsg(c), "refused"));
    skc_free(c);
}
END_TEST

START_TEST(connect_bad_uri)
{
    static const char *const bad[] = {"http://x",      "tcp://nohost", "tcp://:80", "tcp://h:0",
                                      "tcp://h:99999", "tcp://::1:80", "unix:",     NULL};
    for (int i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
        skc_options o = {bad[i], NULL, 100, 100, 0};
        skc_client *c = NULL;
        ck_assert_msg(skc_connect(&c, &o) == SKC_EINVAL, "%s", bad[i] ? bad[i] : "NULL");
        ck_assert(strlen(skc_errmsg(c)) > 0);
        skc_free(c);
    }
    skc_client *c = NULL;
    ck_assert_int_eq(skc_connect(&c, NULL), SKC_EINVAL);
    skc_free(c);
    ck_assert_int_eq(skc_connect(NULL, NULL), SKC_EINVAL);
    skc_free(NULL);
    ck_assert_str_eq(skc_strerror(SKC_ETIMEOUT), "timed out");
    ck_assert_str_eq(skc_strerror(12345), "unknown error");
    ck_assert_ptr_nonnull(skc_errmsg(NULL));
}
END_TEST

/* The server accepts and says nothing: HELLO must time out. */
static void script_silent(struct fake *f, int fd)
{
    struct skp_header h;
    uint8_t body[BODY_MAX];
    while (srv_read(fd, &h, body) == 0)
        ;
    (void)f;
}

START_TEST(connect_timeout_hello)
{
    struct fake f;
    fake_start(&f, script_silent);
    skc_options o = {f.uri, NULL, 200, 5000, 0};
    skc_client *c = NULL;
    ck_assert_int_eq(skc_connect(&c, &o), SKC_ETIMEOUT);
    ck_assert_ptr_nonnull(strstr(skc_errmsg(c), "timed out"));
    skc_free(c); /* the server sees EOF and returns */
    fake_stop(&f);
}
END_TEST

/* A listen queue that is full: the connect itself cannot finish. */
START_TEST(connect_timeout_queue_full)
{
    struct fake f;
    memset(&f, 0, sizeof f);
    fake_listen_unix(&f);
    fake_run(&f, NULL, 0);
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    strcpy(sun.sun_path, f.path);
    /* Fill the queue with non-blocking connects until the kernel refuses one. */
    int filler[16], nfill = 0, full = 0;
    while (!full && nfill < 16) {
        filler[nfill] = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
        ck_assert_int_ge(filler[nfill], 0);
        full = connect(filler[nfill], (struct sockaddr *)&sun, sizeof sun) < 0;
        ck_assert(!full || errno == EAGAIN);
        nfill++;
    }
    ck_assert_msg(full, "the listen queue never filled");
    skc_options o = {f.uri, NULL, 200, 200, 0};
    skc_client *c = NULL;
    ck_assert_int_eq(skc_connect(&c, &o), SKC_ETIMEOUT);
    ck_assert_ptr_nonnull(strstr(skc_errmsg(c), "queue full"));
    skc_free(c);
    while (nfill > 0)
        close(filler[--nfill]);
    fake_stop(&f);
}
END_TEST

/* ---- version and ids -------------------------------------------------------------------- */

START_TEST(version_agrees)
{
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", SKC_VERSION_MAJOR, SKC_VERSION_MINOR,
             SKC_VERSION_PATCH);
    ck_assert_str_eq(skc_version(), want);
    ck_assert_int_eq(skc_version_number(), SKC_VERSION_NUMBER);
    ck_assert_int_eq(SKC_VERSION_NUMBER,
                     SKC_VERSION_MAJOR * 10000 + SKC_VERSION_MINOR * 100 + SKC_VERSION_PATCH);
    ck_assert(SKC_VERSION_MINOR < 100 && SKC_VERSION_PATCH < 100);
    ck_assert(SKC_VERSION_NUMBER >= 200); /* 0.2.0 brought this function */
}
END_TEST

/* FIPS 180-2's "abc" and the empty message. */
static const char SHA_ABC[] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
static const char SHA_EMPTY[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

START_TEST(id_of_known_digests)
{
    unsigned char id[SKC_ID_SIZE], back[SKC_ID_SIZE];
    char hex[SKC_ID_HEX_SIZE];
    ck_assert_int_eq(skc_id_of("abc", 3, id), 0);
    ck_assert_str_eq(skc_id_to_hex(hex, id), SHA_ABC);
    ck_assert_int_eq(skc_id_from_hex(back, hex), 0);
    ck_assert(memcmp(back, id, SKC_ID_SIZE) == 0);
    ck_assert_int_eq(skc_id_of(NULL, 0, id), 0);
    ck_assert_ptr_eq(skc_id_to_hex(hex, id), hex);
    ck_assert_str_eq(hex, SHA_EMPTY);
    /* A million bytes: the digest is not limited to small inputs. */
    enum { BIG = 1000000 };
    char *a = malloc(BIG);
    ck_assert_ptr_nonnull(a);
    memset(a, 'a', BIG);
    ck_assert_int_eq(skc_id_of(a, BIG, id), 0);
    free(a);
    ck_assert_str_eq(skc_id_to_hex(hex, id),
                     "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    memset(back, 7, sizeof back);
    ck_assert_int_eq(skc_id_of(NULL, 1, back), SKC_EINVAL);
    ck_assert_int_eq(skc_id_of("abc", 3, NULL), SKC_EINVAL);
    ck_assert_uint_eq(back[0], 7);
    ck_assert_ptr_null(skc_id_to_hex(NULL, id));
    ck_assert_ptr_null(skc_id_to_hex(hex, NULL));
}
END_TEST

START_TEST(id_from_hex_is_strict)
{
    unsigned char id[SKC_ID_SIZE];
    char buf[80];
    static const char *const bad[] = {
        "",
        "ba7816bf",
        /* one digit short, one too many */
        "a7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad0",
        /* uppercase, a non-hex letter, a space, a sign */
        "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD",
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ag",
        "ba7816bf8f01cfea414140de5dae2223 00361a396177a9cb410ff61f20015ad",
        "+a7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    };
    memset(id, 0x5a, sizeof id);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(skc_id_from_hex(id, bad[i]) == SKC_EINVAL, "accepted \"%s\"", bad[i]);
    /* Trailing text after 64 good digits. */
    snprintf(buf, sizeof buf, "%s\n", SHA_ABC);
    ck_assert_int_eq(skc_id_from_hex(id, buf), SKC_EINVAL);
    ck_assert_int_eq(skc_id_from_hex(id, NULL), SKC_EINVAL);
    ck_assert_int_eq(skc_id_from_hex(NULL, SHA_ABC), SKC_EINVAL);
    for (int i = 0; i < SKC_ID_SIZE; i++)
        ck_assert_uint_eq(id[i], 0x5a); /* untouched by every failure */
    ck_assert_int_eq(skc_id_from_hex(id, SHA_ABC), 0);
    ck_assert(id[0] == 0xba && id[31] == 0xad);
}
END_TEST

/* ---- non-blocking mode ----------------------------------------------------------------- */

/* The test opens the gate (one byte into a pipe) when the server may go on. */
static int g_gate[2] = {-1, -1};

static void gate_make(void)
{
    ck_assert_int_eq(pipe(g_gate), 0);
}

static void gate_wait(void)
{
    char b;
    while (read(g_gate[0], &b, 1) < 0 && errno == EINTR)
        ;
}

static void gate_open(void)
{
    ck_assert_int_eq(write(g_gate[1], "g", 1), 1);
}

static void gate_close(void)
{
    close(g_gate[0]);
    close(g_gate[1]);
}

/* HELLO, one PING read, the gate, then its echo; then echo every PING until the end. */
static void script_gated_echo(struct fake *f, int fd)
{
    struct skp_header h;
    uint8_t body[BODY_MAX];
    if (srv_hello(f, fd) || srv_read(fd, &h, body))
        return;
    gate_wait();
    srv_reply(fd, SKP_OP_PING, 0, h.id, body, h.body_len);
    while (srv_read(fd, &h, body) == 0)
        srv_reply(fd, SKP_OP_PING, 0, h.id, body, h.body_len);
}

/* poll() on the client's socket, bounded (an upper limit, never a pace). */
static void wait_ready(int fd, short events)
{
    struct pollfd p = {fd, events, 0};
    int n;
    do
        n = poll(&p, 1, 20000);
    while (n < 0 && errno == EINTR);
    ck_assert_msg(n == 1, "the socket was not ready within 20 s");
}

START_TEST(nonblocking_recv_again)
{
    struct fake f;
    gate_make();
    fake_start(&f, script_gated_echo);
    skc_client *c = connect_to(&f, NULL);
    ck_assert_int_ge(skc_fd(c), 0);
    ck_assert_int_eq(skc_set_nonblocking(c, 1), 0);
    uint32_t id;
    ck_assert_int_eq(skc_send_ping(c, "nb", 2, &id), 0);
    ck_assert_int_eq(skc_flush(c), 0);
    /* The server holds the echo until the gate opens: the reply cannot be there. */
    ck_assert_int_eq(skc_recv(c, id, NULL), SKC_EAGAIN);
    ck_assert_ptr_nonnull(strstr(skc_errmsg(c), "not arrived"));
    ck_assert_uint_eq(skc_pending(c), 1);
    gate_open();
    skc_reply *rep = NULL;
    int rc;
    while ((rc = skc_recv(c, id, &rep)) == SKC_EAGAIN)
        wait_ready(skc_fd(c), POLLIN);
    ck_assert_msg(rc == 0, "%s", skc_errmsg(c));
    size_t len;
    ck_assert(memcmp(skc_reply_payload(rep, &len), "nb", 2) == 0 && len == 2);
    skc_reply_free(rep);
    /* The blocking calls still wait, in non-blocking mode too. */
    ck_assert_int_eq(skc_ping(c, "blocking", 8), 0);
    ck_assert_int_eq(skc_set_nonblocking(NULL, 1), SKC_EINVAL);
    ck_assert_int_eq(skc_fd(NULL), -1);
    skc_free(c);
    fake_stop(&f);
    gate_close();
}
END_TEST

/* HELLO, then nothing is read until the gate opens; then every request is echoed. */
static void script_gated_batch(struct fake *f, int fd)
{
    if (srv_hello(f, fd))
        return;
    gate_wait();
    script_batch_body(f, fd);
}

enum { PIPE_MAX = 20000 };

/* Pings of SKC_MAX_PING bytes (the first byte their index) sent in non-blocking mode until the
 * socket is full and skc_flush returns SKC_EAGAIN, the server reading nothing; their ids in
 * ids. Returns how many. */
static int send_until_full(skc_client *c, uint32_t *ids)
{
    uint8_t payload[SKC_MAX_PING];
    int n = 0, flushed;
    do {
        memset(payload, n & 0xff, sizeof payload);
        ck_assert_msg(skc_send_ping(c, payload, sizeof payload, &ids[n]) == 0, "%d: %s", n,
                      skc_errmsg(c));
        n++;
    } while ((flushed = skc_flush(c)) == 0 && n < PIPE_MAX);
    ck_assert_msg(flushed == SKC_EAGAIN, "the socket took %d requests without filling up", n);
    return n;
}

/* The echoes of n pings, in non-blocking mode: send_until_full's first, then those after
 * full (6 bytes, "queued"). */
static void recv_echoes(skc_client *c, const uint32_t *ids, int n, int full)
{
    for (int i = 0; i < n; i++) {
        skc_reply *rep = NULL;
        int rc;
        while ((rc = skc_recv(c, ids[i], &rep)) == SKC_EAGAIN)
            wait_ready(skc_fd(c), skc_flush(c) == SKC_EAGAIN ? POLLIN | POLLOUT : POLLIN);
        ck_assert_msg(rc == 0, "%d: %s", i, skc_errmsg(c));
        size_t len;
        const uint8_t *p = skc_reply_payload(rep, &len);
        if (i < full)
            ck_assert(len == SKC_MAX_PING && p[0] == (i & 0xff));
        else
            ck_assert(len == 6 && memcmp(p, "queued", 6) == 0);
        skc_reply_free(rep);
    }
    ck_assert_uint_eq(skc_pending(c), 0);
    ck_assert_int_eq(skc_flush(c), 0);
}

START_TEST(nonblocking_queue_and_flush)
{
    struct fake f;
    gate_make();
    fake_start(&f, script_gated_batch);
    skc_client *c = connect_to(&f, NULL);
    ck_assert_int_eq(skc_set_nonblocking(c, 1), 0);
    static uint32_t ids[PIPE_MAX + 8];
    /* The server reads nothing: sends pile up in the socket, then in the handle's queue. */
    int full = send_until_full(c, ids), n = full;
    /* A few more only queue. */
    for (int i = 0; i < 8; i++, n++)
        ck_assert_int_eq(skc_send_ping(c, "queued", 6, &ids[n]), 0);
    ck_assert_uint_eq(skc_pending(c), (size_t)n);
    gate_open();
    recv_echoes(c, ids, n, full);
    skc_free(c);
    fake_stop(&f);
    gate_close();
}
END_TEST

/* A blocking skc_flush that runs out of io_timeout_ms keeps what it could not write: the
 * connection stays open, the requests pending, and they go out once the server reads. */
START_TEST(blocking_flush_timeout_keeps_the_queue)
{
    struct fake f;
    gate_make();
    fake_start(&f, script_gated_batch);
    skc_options o = {f.uri, NULL, 2000, 200, 0};
    skc_client *c = NULL;
    ck_assert_msg(skc_connect(&c, &o) == 0, "connect: %s", skc_errmsg(c));
    ck_assert_int_eq(skc_set_nonblocking(c, 1), 0);
    static uint32_t ids[PIPE_MAX];
    int n = send_until_full(c, ids);
    ck_assert_int_eq(skc_set_nonblocking(c, 0), 0);
    ck_assert_int_eq(skc_flush(c), SKC_ETIMEOUT); /* the server reads nothing yet */
    ck_assert_uint_eq(skc_pending(c), (size_t)n);
    ck_assert_int_ge(skc_fd(c), 0);
    gate_open();
    ck_assert_int_eq(skc_set_nonblocking(c, 1), 0); /* no timeout on a loaded machine */
    recv_echoes(c, ids, n, n);
    skc_free(c);
    fake_stop(&f);
    gate_close();
}
END_TEST

/* ---- reconnect ---------------------------------------------------------------------------- */

START_TEST(reconnect_after_failed_connect)
{
    struct fake f;
    memset(&f, 0, sizeof f);
    fake_listen_unix(&f); /* bound, not listening yet: connects are refused */
    skc_options o = {f.uri, "sekrit", 2000, 5000, 0};
    skc_client *c = NULL;
    ck_assert_int_eq(skc_connect(&c, &o), SKC_EIO);
    ck_assert_int_eq(skc_reconnect(c), SKC_EIO);
    ck_assert_int_eq(skc_fd(c), -1);
    f.token = "sekrit"; /* the token must come again with the new HELLO */
    fake_run(&f, script_echo, 8);
    ck_assert_msg(skc_reconnect(c) == 0, "%s", skc_errmsg(c));
    ck_assert_str_eq(skc_server_name(c), "fake 1.0");
    ck_assert_int_eq(skc_ping(c, "again", 5), 0);
    skc_free(c);
    fake_stop(&f);
    ck_assert_int_eq(skc_reconnect(NULL), SKC_EINVAL);
    c = NULL;
    ck_assert_int_eq(skc_connect(&c, NULL), SKC_EINVAL);
    ck_assert_int_eq(skc_reconnect(c), SKC_EINVAL); /* no URI to go back to */
    skc_free(c);
}
END_TEST

/* ---- asynchronous API, driven by a poll() loop written here --------------------------- */

/* The smallest event loop: the hooks record what the library wants watched. */
struct loop {
    skc_async *ac; /* NULL once the handle let go (cleanup) */
    int rd, wr;
    long timer_ms; /* -1: none */
    int cleanups;
};

static void lp_add_read(void *d)
{
    ((struct loop *)d)->rd = 1;
}

static void lp_del_read(void *d)
{
    ((struct loop *)d)->rd = 0;
}

static void lp_add_write(void *d)
{
    ((struct loop *)d)->wr = 1;
}

static void lp_del_write(void *d)
{
    ((struct loop *)d)->wr = 0;
}

static void lp_set_timer(void *d, long ms)
{
    ((struct loop *)d)->timer_ms = ms;
}

static void lp_cleanup(void *d)
{
    struct loop *l = d;
    l->ac = NULL;
    l->cleanups++;
}

static void loop_attach(struct loop *l, skc_async *ac, int with_timer)
{
    memset(l, 0, sizeof *l);
    l->ac = ac;
    l->timer_ms = -1;
    skc_async_events ev = {l,
                           lp_add_read,
                           lp_del_read,
                           lp_add_write,
                           lp_del_write,
                           with_timer ? lp_set_timer : NULL,
                           lp_cleanup};
    ck_assert_msg(skc_async_attach(ac, &ev) == 0, "%s", skc_async_errmsg(ac));
}

/* Runs until the handle ends (20 s at most: a bound, not a pace). The timer is simply the
 * poll timeout: one handle, one timer. */
static void loop_run(struct loop *l)
{
    for (int turns = 0; l->ac; turns++) {
        ck_assert_msg(turns < 100000, "the loop did not end");
        struct pollfd p = {skc_async_fd(l->ac),
                           (short)((l->rd ? POLLIN : 0) | (l->wr ? POLLOUT : 0)), 0};
        long wait = l->timer_ms >= 0 && l->timer_ms < 20000 ? l->timer_ms : 20000;
        int n = poll(&p, 1, (int)wait);
        ck_assert_msg(n >= 0 || errno == EINTR, "poll: %s", strerror(errno));
        if (n == 0) {
            ck_assert_msg(l->timer_ms >= 0, "nothing happened for 20 s");
            l->timer_ms = -1;
            skc_async_handle_timeout(l->ac);
            continue;
        }
        if (n > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR)))
            skc_async_handle_read(l->ac);
        if (n > 0 && l->ac && (p.revents & (POLLOUT | POLLERR)))
            skc_async_handle_write(l->ac);
    }
}

/* What the callbacks saw. */
struct seen {
    int connect_calls, connect_err;
    int disconnect_calls, disconnect_err, disconnect_status;
    char disconnect_msg[256];
    int n;         /* replies (or errors) so far */
    int order[16]; /* privdata index of each, in arrival order */
    int err[16], status[16];
    char text[16][256];   /* payload (PING) or message (error) */
    int free_at;          /* skc_async_free in the callback of this index (-1: never) */
    int disconnect_after; /* skc_async_disconnect once this many came (0: never) */
    int late_rc;          /* what a request sent from a callback after the end got */
};

static struct seen g_seen;
static const int g_index[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

static void seen_reset(void)
{
    memset(&g_seen, 0, sizeof g_seen);
    g_seen.free_at = -1;
    g_seen.connect_err = g_seen.disconnect_err = 1; /* not an SKC code: "not called" */
}

static void on_connect(skc_async *ac, int err)
{
    g_seen.connect_calls++;
    g_seen.connect_err = err;
}

static void on_disconnect(skc_async *ac, int err)
{
    g_seen.disconnect_calls++;
    g_seen.disconnect_err = err;
    g_seen.disconnect_status = skc_async_status(ac);
    snprintf(g_seen.disconnect_msg, sizeof g_seen.disconnect_msg, "%s", skc_async_errmsg(ac));
    g_seen.late_rc = skc_async_ping(ac, "late", 4, NULL, NULL);
}

static void on_reply(skc_async *ac, int err, skc_reply *r, void *privdata)
{
    int i = *(const int *)privdata, k = g_seen.n++;
    ck_assert_int_lt(k, 16);
    g_seen.order[k] = i;
    g_seen.err[i] = err;
    g_seen.status[i] = skc_async_status(ac);
    if (err == 0 && skc_reply_op(r) == SKC_OP_PING) {
        size_t len;
        const char *p = skc_reply_payload(r, &len);
        snprintf(g_seen.text[i], sizeof g_seen.text[i], "%.*s", (int)len, p);
    } else if (err == 0 && skc_reply_op(r) == SKC_OP_STATS) {
        uint32_t n;
        snprintf(g_seen.text[i], sizeof g_seen.text[i], "%s", skc_reply_counters(r, &n)[0].name);
    } else if (err) {
        ck_assert_ptr_null(r);
        snprintf(g_seen.text[i], sizeof g_seen.text[i], "%s", skc_async_errmsg(ac));
    }
    skc_reply_free(r);
    /* A callback's own handle: the handlers must ignore it (the read under way owns the
     * input buffer). */
    skc_async_handle_read(ac);
    skc_async_handle_write(ac);
    skc_async_handle_timeout(ac);
    if (i == g_seen.free_at)
        skc_async_free(ac);
    if (g_seen.disconnect_after && g_seen.n == g_seen.disconnect_after)
        ck_assert_int_eq(skc_async_disconnect(ac), 0);
}

static skc_async *async_to(const char *uri, const char *token, int connect_ms, int io_ms)
{
    skc_options o = {uri, token, connect_ms, io_ms, 0};
    skc_async *ac = NULL;
    int rc = skc_async_connect(&ac, &o);
    ck_assert_msg(rc == 0, "async connect %s: %s", uri, skc_async_errmsg(ac));
    skc_async_set_connect_cb(ac, on_connect);
    skc_async_set_disconnect_cb(ac, on_disconnect);
    return ac;
}

START_TEST(async_out_of_order)
{
    struct fake f;
    struct loop l;
    seen_reset();
    fake_start(&f, script_reverse);
    skc_async *ac = async_to(f.uri, NULL, 2000, 5000);
    /* Sent before the loop runs: they go out after HELLO. */
    ck_assert_int_eq(skc_async_ping(ac, "a", 1, on_reply, (void *)&g_index[0]), 0);
    ck_assert_int_eq(skc_async_ping(ac, "bb", 2, on_reply, (void *)&g_index[1]), 0);
    ck_assert_int_eq(skc_async_stats(ac, on_reply, (void *)&g_index[2]), 0);
    ck_assert_int_eq(skc_async_ping(ac, "ccc", 3, on_reply, (void *)&g_index[3]), 0);
    ck_assert_uint_eq(skc_async_pending(ac), 5); /* HELLO too */
    g_seen.disconnect_after = 4;
    loop_attach(&l, ac, 1);
    loop_run(&l);
    ck_assert_int_eq(l.cleanups, 1);
    ck_assert_int_eq(g_seen.connect_calls, 1);
    ck_assert_int_eq(g_seen.connect_err, 0);
    ck_assert_int_eq(g_seen.n, 4);
    /* The server answers in reverse: the callbacks ran in that order. */
    for (int k = 0; k < 4; k++) {
        ck_assert_int_eq(g_seen.order[k], 3 - k);
        ck_assert_int_eq(g_seen.err[k], 0);
    }
    ck_assert_str_eq(g_seen.text[0], "a");
    ck_assert_str_eq(g_seen.text[1], "bb");
    ck_assert_str_eq(g_seen.text[2], "requests");
    ck_assert_str_eq(g_seen.text[3], "ccc");
    ck_assert_int_eq(g_seen.disconnect_calls, 1);
    ck_assert_int_eq(g_seen.disconnect_err, 0);
    ck_assert_int_eq(g_seen.late_rc, SKC_EIO);
    fake_stop(&f);
}
END_TEST

START_TEST(async_tcp_and_errors)
{
    struct fake f;
    struct loop l;
    seen_reset();
    if (fake_start_tcp(&f, AF_INET, script_not_found)) {
        fprintf(stderr, "check_client: no IPv4 loopback, skipping\n");
        return;
    }
    skc_async *ac = async_to(f.uri, NULL, 2000, 5000);
    unsigned char id[SKC_ID_SIZE] = {0};
    ck_assert_int_eq(skc_async_info(ac, id, on_reply, (void *)&g_index[0]), 0);
    ck_assert_int_eq(skc_async_ping(ac, "ok", 2, on_reply, (void *)&g_index[1]), 0);
    ck_assert_int_eq(skc_async_unload(ac, id, on_reply, (void *)&g_index[2]), 0);
    /* Refused before anything is queued: no callback will come for these. */
    skc_eval ev;
    skc_eval_init(&ev);
    ev.target = 7;
    ck_assert_int_eq(skc_async_pose(ac, &ev, on_reply, (void *)&g_index[9]), SKC_EINVAL);
    ck_assert_ptr_nonnull(strstr(skc_async_errmsg(ac), "target 7"));
    ck_assert_int_eq(skc_async_ping(ac, NULL, 3, on_reply, (void *)&g_index[9]), SKC_EINVAL);
    ck_assert_int_eq(skc_async_load_path(ac, NULL, on_reply, (void *)&g_index[9]), SKC_EINVAL);
    ck_assert_int_eq(skc_async_pose(NULL, &ev, on_reply, NULL), SKC_EINVAL);
    g_seen.disconnect_after = 3;
    loop_attach(&l, ac, 1);
    skc_async_events none = {0}, again = {&l,           lp_add_read, lp_del_read, lp_add_write,
                                          lp_del_write, NULL,        lp_cleanup};
    ck_assert_int_eq(skc_async_attach(ac, &none), SKC_EINVAL);
    ck_assert_ptr_nonnull(strstr(skc_async_errmsg(ac), "need"));
    ck_assert_int_eq(skc_async_attach(ac, &again), SKC_EINVAL);
    ck_assert_ptr_nonnull(strstr(skc_async_errmsg(ac), "already attached"));
    loop_run(&l);
    ck_assert_int_eq(g_seen.connect_err, 0);
    ck_assert_int_eq(g_seen.n, 3);
    ck_assert_int_eq(g_seen.err[0], SKC_ESERVER);
    ck_assert_int_eq(g_seen.status[0], SKC_S_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(g_seen.text[0], "no armature with that id"));
    ck_assert_int_eq(g_seen.err[1], 0);
    ck_assert_str_eq(g_seen.text[1], "ok");
    ck_assert_int_eq(g_seen.status[1], 0);
    ck_assert_int_eq(g_seen.err[2], SKC_ESERVER);
    ck_assert_int_eq(g_seen.disconnect_err, 0);
    fake_stop(&f);
}
END_TEST

START_TEST(async_connection_error_fails_pending)
{
    struct fake f;
    struct loop l;
    seen_reset();
    fake_start(&f, script_framing_error);
    skc_async *ac = async_to(f.uri, NULL, 2000, 5000);
    ck_assert_int_eq(skc_async_stats(ac, on_reply, (void *)&g_index[0]), 0);
    ck_assert_int_eq(skc_async_ping(ac, "x", 1, on_reply, (void *)&g_index[1]), 0);
    loop_attach(&l, ac, 0);
    loop_run(&l);
    ck_assert_int_eq(g_seen.n, 2);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(g_seen.err[i], SKC_EIO);
        ck_assert_ptr_nonnull(strstr(g_seen.text[i], "reserved bits set"));
    }
    ck_assert_int_eq(g_seen.disconnect_err, SKC_ESERVER);
    ck_assert_int_eq(g_seen.disconnect_status, SKC_S_FRAMING);
    ck_assert_ptr_nonnull(strstr(g_seen.disconnect_msg, "reserved bits set"));
    ck_assert_int_eq(g_seen.late_rc, SKC_EIO);
    fake_stop(&f);
}
END_TEST

START_TEST(async_free_inside_callback)
{
    struct fake f;
    struct loop l;
    seen_reset();
    fake_start(&f, script_echo);
    skc_async *ac = async_to(f.uri, NULL, 2000, 5000);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(skc_async_ping(ac, "p", 1, on_reply, (void *)&g_index[i]), 0);
    g_seen.free_at = 0;
    loop_attach(&l, ac, 1);
    loop_run(&l);
    ck_assert_int_eq(g_seen.n, 3);
    ck_assert_int_eq(g_seen.order[0], 0);
    ck_assert_int_eq(g_seen.err[0], 0);
    for (int i = 1; i < 3; i++) {
        ck_assert_int_eq(g_seen.err[i], SKC_EIO);
        ck_assert_ptr_nonnull(strstr(g_seen.text[i], "freed by the caller"));
    }
    ck_assert_int_eq(g_seen.disconnect_calls, 1);
    ck_assert_int_eq(g_seen.disconnect_err, 0);
    ck_assert_int_eq(l.cleanups, 1);
    fake_stop(&f);
}
END_TEST

/* HELLO answered, then requests are read and never answered. */
static void script_mute(struct fake *f, int fd)
{
    if (srv_hello(f, fd) == 0)
        script_silent(f, fd);
}

/* An asynchronous handle whose daemon hangs up is told to connect a new handle: skc_reconnect
 * is the blocking client's, and the handle ends. */
START_TEST(async_hang_up_says_connect_a_new_handle)
{
    struct fake f;
    struct loop l;
    seen_reset();
    fake_start(&f, script_read_then_close);
    skc_async *ac = async_to(f.uri, NULL, 2000, 5000); /* with on_disconnect */
    ck_assert_int_eq(skc_async_ping(ac, "p", 1, on_reply, (void *)&g_index[0]), 0);
    loop_attach(&l, ac, 1);
    loop_run(&l);
    ck_assert_int_eq(g_seen.err[0], SKC_EIO);
    ck_assert_msg(strstr(g_seen.disconnect_msg, "connect a new handle") &&
                      !strstr(g_seen.disconnect_msg, "skc_reconnect"),
                  "%s", g_seen.disconnect_msg);
    fake_stop(&f);
}
END_TEST

/* A reply past the handle's own max_reply ends the connection (its bytes cannot be skipped):
 * that request is told SKC_EPROTO, as skc_options promises, the ones after it SKC_EIO. */
START_TEST(async_reply_over_max_reply_is_eproto)
{
    struct fake f;
    struct loop l;
    seen_reset();
    fake_start(&f, script_echo);
    skc_options o = {f.uri, NULL, 2000, 5000, 64}; /* HELLO's reply fits */
    skc_async *ac = NULL;
    ck_assert_int_eq(skc_async_connect(&ac, &o), 0);
    skc_async_set_connect_cb(ac, on_connect);
    skc_async_set_disconnect_cb(ac, on_disconnect);
    char big[100] = {0};
    ck_assert_int_eq(skc_async_ping(ac, "small", 5, on_reply, (void *)&g_index[0]), 0);
    ck_assert_int_eq(skc_async_ping(ac, big, sizeof big, on_reply, (void *)&g_index[1]), 0);
    ck_assert_int_eq(skc_async_ping(ac, "after", 5, on_reply, (void *)&g_index[2]), 0);
    loop_attach(&l, ac, 1);
    loop_run(&l);
    fake_stop(&f);
    ck_assert_int_eq(g_seen.n, 3);
    ck_assert_int_eq(g_seen.err[0], 0);
    ck_assert_str_eq(g_seen.text[0], "small");
    ck_assert_int_eq(g_seen.err[1], SKC_EPROTO);
    ck_assert_msg(strstr(g_seen.text[1], "a reply over this client's max_reply of 64 bytes"), "%s",
                  g_seen.text[1]);
    ck_assert_int_eq(g_seen.err[2], SKC_EIO);
    ck_assert_int_eq(g_seen.disconnect_err, SKC_EPROTO);
}
END_TEST

/* HELLO, five requests read, only the second answered, then nothing more. */
static void script_answer_second(struct fake *f, int fd)
{
    struct skp_header h;
    uint8_t body[BODY_MAX];
    if (srv_hello(f, fd))
        return;
    for (int i = 0; i < 5; i++) {
        if (srv_read(fd, &h, body))
            return fake_failf(f, "client hung up after %d requests", i);
        if (i == 1)
            srv_reply(fd, SKP_OP_PING, 0, h.id, body, h.body_len);
    }
    script_silent(f, fd);
}

/* Requests still pending when the handle is freed get their SKC_EIO in the order they were
 * sent, a reply in between (which takes its request out of the middle) notwithstanding. */
START_TEST(async_free_fails_pending_in_order)
{
    struct fake f;
    struct loop l;
    seen_reset();
    fake_start(&f, script_answer_second);
    skc_async *ac = async_to(f.uri, NULL, 2000, 5000);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(skc_async_ping(ac, "p", 1, on_reply, (void *)&g_index[i]), 0);
    g_seen.free_at = 1;
    loop_attach(&l, ac, 1);
    loop_run(&l);
    ck_assert_int_eq(g_seen.n, 5);
    static const int want[5] = {1, 0, 2, 3, 4};
    for (int k = 0; k < 5; k++)
        ck_assert_msg(g_seen.order[k] == want[k], "callback %d was request %d's, not %d's", k,
                      g_seen.order[k], want[k]);
    ck_assert_int_eq(g_seen.err[1], 0);
    for (int i = 0; i < 5; i++)
        if (i != 1)
            ck_assert_int_eq(g_seen.err[i], SKC_EIO);
    fake_stop(&f);
}
END_TEST

START_TEST(async_timeouts)
{
    struct fake f;
    struct loop l;
    seen_reset();
    fake_start(&f, script_mute);
    skc_async *ac = async_to(f.uri, NULL, 2000, 100);
    ck_assert_int_eq(skc_async_ping(ac, "t", 1, on_reply, (void *)&g_index[0]), 0);
    g_seen.disconnect_after = 1;
    loop_attach(&l, ac, 1);
    loop_run(&l);
    ck_assert_int_eq(g_seen.connect_err, 0);
    ck_assert_int_eq(g_seen.err[0], SKC_ETIMEOUT);
    ck_assert_ptr_nonnull(strstr(g_seen.text[0], "within 100 ms"));
    ck_assert_int_eq(g_seen.disconnect_err, 0);
    fake_stop(&f);

    /* No HELLO answer: the connect times out, and takes the queued request with it. */
    seen_reset();
    fake_start(&f, script_silent);
    ac = async_to(f.uri, NULL, 100, 5000);
    ck_assert_int_eq(skc_async_ping(ac, "t", 1, on_reply, (void *)&g_index[0]), 0);
    loop_attach(&l, ac, 1);
    loop_run(&l);
    ck_assert_int_eq(g_seen.connect_err, SKC_ETIMEOUT);
    ck_assert_int_eq(g_seen.err[0], SKC_EIO);
    ck_assert_int_eq(g_seen.disconnect_err, SKC_ETIMEOUT);
    ck_assert_ptr_nonnull(strstr(g_seen.disconnect_msg, "no answer within 100 ms"));
    fake_stop(&f);
}
END_TEST

/* skc_async_ensure against the fake: INFO is answered with g_ensure_info_status; a
 * LOAD_BYTES is recorded (its body must be the bytes given) and refused as a bad file. */
static uint16_t g_ensure_info_status;
static int g_ensure_infos, g_ensure_loads;
static uint8_t g_ensure_body[64];
static uint32_t g_ensure_body_len;

static void script_ensure(struct fake *f, int fd)
{
    struct skp_header h;
    uint8_t body[BODY_MAX];
    if (srv_hello(f, fd))
        return;
    while (srv_read(fd, &h, body) == 0) {
        if (h.opcode == SKP_OP_INFO) {
            g_ensure_infos++;
            srv_error(fd, h.opcode, g_ensure_info_status, h.id, "info refused");
        } else if (h.opcode == SKP_OP_LOAD_BYTES) {
            g_ensure_loads++;
            g_ensure_body_len = h.body_len;
            memcpy(g_ensure_body, body, h.body_len < 64 ? h.body_len : 64);
            srv_error(fd, h.opcode, SKP_S_BAD_FILE, h.id, "not a zip");
        } else {
            fake_failf(f, "unexpected opcode %u", h.opcode);
        }
    }
}

/* One skc_async_ensure of bytes against script_ensure, whose INFO answers info_status: the
 * fake saw nothing wrong, and the ensure's callback came once (g_seen). */
static void ensure_once(const void *bytes, size_t len, int info_status)
{
    struct fake f;
    struct loop l;
    seen_reset();
    g_ensure_info_status = info_status;
    g_ensure_infos = g_ensure_loads = 0;
    fake_start(&f, script_ensure);
    skc_async *ac = async_to(f.uri, NULL, 2000, 5000);
    ck_assert_int_eq(skc_async_ensure(ac, bytes, len, on_reply, (void *)&g_index[0]), 0);
    g_seen.disconnect_after = 1;
    loop_attach(&l, ac, 1);
    loop_run(&l);
    fake_stop(&f);
    ck_assert_str_eq(f.fail, "");
    ck_assert_int_eq(g_seen.n, 1);
}

/* Each way an ensure can end calls its callback exactly once (on_reply counts): an INFO
 * error other than NOT_FOUND (no upload), NOT_FOUND then a refused upload (the bytes sent are
 * those given), an INFO that times out, and the handle freed while INFO is pending. */
START_TEST(async_ensure_outcomes)
{
    static const char bytes[] = "skf bytes";
    struct fake f;
    struct loop l;
    for (int pass = 0; pass < 2; pass++) {
        ensure_once(bytes, sizeof bytes, pass ? SKP_S_NOT_FOUND : SKP_S_BUSY);
        ck_assert_int_eq(g_seen.err[0], SKC_ESERVER);
        ck_assert_int_eq(g_ensure_infos, 1);
        if (!pass) {
            ck_assert_int_eq(g_seen.status[0], SKC_S_BUSY);
            ck_assert_int_eq(g_ensure_loads, 0);
        } else {
            ck_assert_int_eq(g_seen.status[0], SKC_S_BAD_FILE);
            ck_assert_int_eq(g_ensure_loads, 1);
            ck_assert_uint_eq(g_ensure_body_len, 4 + sizeof bytes); /* u32 length, bytes */
            ck_assert(memcmp(g_ensure_body + 4, bytes, sizeof bytes) == 0);
        }
    }

    seen_reset(); /* INFO never answered */
    fake_start(&f, script_mute);
    skc_async *ac = async_to(f.uri, NULL, 2000, 100);
    ck_assert_int_eq(skc_async_ensure(ac, bytes, sizeof bytes, on_reply, (void *)&g_index[0]), 0);
    g_seen.disconnect_after = 1;
    loop_attach(&l, ac, 1);
    loop_run(&l);
    fake_stop(&f);
    ck_assert_int_eq(g_seen.n, 1);
    ck_assert_int_eq(g_seen.err[0], SKC_ETIMEOUT);

    seen_reset(); /* freed with INFO pending: the ensure ends with the handle */
    fake_start(&f, script_mute);
    ac = async_to(f.uri, NULL, 2000, 5000);
    ck_assert_int_eq(skc_async_ping(ac, "p", 1, on_reply, (void *)&g_index[0]), 0);
    ck_assert_int_eq(skc_async_ensure(ac, bytes, sizeof bytes, on_reply, (void *)&g_index[1]), 0);
    skc_async_free(ac);
    ck_assert_int_eq(g_seen.n, 2);
    ck_assert_int_eq(g_seen.err[1], SKC_EIO);
    fake_stop(&f);
}
END_TEST

/* An upload the daemon's limit (HELLO's max frame) refuses before it is sent: the ensure's
 * callback gets SKC_EINVAL, and skc_async_status no longer says INFO's NOT_FOUND (the status
 * is for SKC_ESERVER only, as skc_ensure's is). */
START_TEST(async_ensure_upload_over_the_limit)
{
    size_t len = (1u << 20) + 1; /* srv_hello's limit, and one */
    unsigned char *bytes = calloc(1, len);
    ck_assert_ptr_nonnull(bytes);
    ensure_once(bytes, len, SKP_S_NOT_FOUND);
    ck_assert_int_eq(g_ensure_infos, 1);
    ck_assert_int_eq(g_ensure_loads, 0);
    ck_assert_int_eq(g_seen.err[0], SKC_EINVAL);
    ck_assert_ptr_nonnull(strstr(g_seen.text[0], "limit"));
    ck_assert_int_eq(g_seen.status[0], SKC_S_OK);
    free(bytes);
}
END_TEST

START_TEST(async_refused)
{
    seen_reset();
    skc_options o = {"unix:/nonexistent/skc-test.sock", NULL, 1000, 1000, 0};
    skc_async *ac = NULL;
    ck_assert_int_eq(skc_async_connect(&ac, &o), SKC_EIO);
    ck_assert_ptr_nonnull(ac);
    ck_assert_ptr_nonnull(strstr(skc_async_errmsg(ac), "/nonexistent/skc-test.sock"));
    skc_async_set_connect_cb(ac, on_connect);
    ck_assert_int_eq(skc_async_ping(ac, "x", 1, on_reply, (void *)&g_index[0]), SKC_EIO);
    ck_assert_int_eq(skc_async_fd(ac), -1);
    ck_assert_int_eq(skc_async_disconnect(ac), SKC_EINVAL);
    /* No socket to attach a loop to: refused, saying why (skc_uv_attach passes this on). */
    struct loop none;
    memset(&none, 0, sizeof none);
    skc_async_events ev = {&none,        lp_add_read, lp_del_read, lp_add_write,
                           lp_del_write, NULL,        lp_cleanup};
    ck_assert_int_eq(skc_async_attach(ac, &ev), SKC_EINVAL);
    ck_assert_msg(strstr(skc_async_errmsg(ac), "no connection to attach"), "%s",
                  skc_async_errmsg(ac));
    ck_assert_int_eq(skc_async_attach(ac, NULL), SKC_EINVAL);
    ck_assert_ptr_nonnull(strstr(skc_async_errmsg(ac), "no connection to attach"));
    skc_async_free(ac);
    ck_assert_int_eq(g_seen.connect_calls, 0); /* a failed start calls nothing */
    ck_assert_int_eq(skc_async_connect(&ac, NULL), SKC_EINVAL);
    skc_async_free(ac);
    ck_assert_int_eq(skc_async_connect(NULL, &o), SKC_EINVAL);
    skc_async_free(NULL);

    /* TCP to a closed loopback port: refused at once or once the connect ends. */
    struct fake f;
    ck_assert_int_eq(fake_start_tcp(&f, AF_INET, NULL), 0);
    close(f.lfd);
    o.uri = f.uri;
    int rc = skc_async_connect(&ac, &o);
    if (rc == 0) {
        struct loop l;
        skc_async_set_connect_cb(ac, on_connect);
        skc_async_set_disconnect_cb(ac, on_disconnect);
        loop_attach(&l, ac, 1);
        loop_run(&l);
        ck_assert_int_eq(g_seen.connect_err, SKC_EIO);
        ck_assert_int_eq(g_seen.disconnect_err, SKC_EIO);
        ck_assert_ptr_nonnull(strstr(g_seen.disconnect_msg, "refused"));
    } else {
        ck_assert_int_eq(rc, SKC_EIO);
        ck_assert_ptr_nonnull(strstr(skc_async_errmsg(ac), "refused"));
        skc_async_free(ac);
    }
}
END_TEST

START_TEST(async_wrong_token)
{
    struct fake f;
    struct loop l;
    seen_reset();
    fake_start_token(&f, script_echo, "sekrit");
    skc_async *ac = async_to(f.uri, "guess", 2000, 5000);
    ck_assert_int_eq(skc_async_ping(ac, "x", 1, on_reply, (void *)&g_index[0]), 0);
    loop_attach(&l, ac, 0);
    loop_run(&l);
    ck_assert_int_eq(g_seen.connect_calls, 1);
    ck_assert_int_eq(g_seen.connect_err, SKC_ESERVER);
    ck_assert_int_eq(g_seen.err[0], SKC_EIO);
    ck_assert_int_eq(g_seen.disconnect_err, SKC_ESERVER);
    ck_assert_int_eq(g_seen.disconnect_status, SKC_S_AUTH);
    ck_assert_ptr_nonnull(strstr(g_seen.disconnect_msg, "wrong auth token"));
    fake_stop(&f);
}
END_TEST

/* Two PINGs read; the first answered; the gate; the second answered. */
static void script_second_gated(struct fake *f, int fd)
{
    struct skp_header h[2];
    static uint8_t body[2][BODY_MAX];
    if (srv_hello(f, fd) || srv_read(fd, &h[0], body[0]) || srv_read(fd, &h[1], body[1]))
        return;
    srv_reply(fd, SKP_OP_PING, 0, h[0].id, body[0], h[0].body_len);
    gate_wait();
    srv_reply(fd, SKP_OP_PING, 0, h[1].id, body[1], h[1].body_len);
    script_silent(f, fd);
}

static int g_depth;

/* In the first reply's callback the second reply is made to arrive; a handler called from
 * there must leave it alone (reading it would parse the buffer the outer read is parsing). */
static void on_nested(skc_async *ac, int err, skc_reply *r, void *privdata)
{
    int i = *(const int *)privdata;
    ck_assert_int_eq(g_depth, 0);
    g_depth++;
    on_reply(ac, err, r, privdata);
    if (i == 0) {
        gate_open();
        wait_ready(skc_async_fd(ac), POLLIN);
        skc_async_handle_read(ac);
        ck_assert_int_eq(g_seen.n, 1);
    }
    g_depth--;
}

START_TEST(async_handlers_ignored_in_callbacks)
{
    struct fake f;
    struct loop l;
    seen_reset();
    gate_make();
    fake_start(&f, script_second_gated);
    skc_async *ac = async_to(f.uri, NULL, 2000, 5000);
    ck_assert_int_eq(skc_async_ping(ac, "first", 5, on_nested, (void *)&g_index[0]), 0);
    ck_assert_int_eq(skc_async_ping(ac, "second", 6, on_nested, (void *)&g_index[1]), 0);
    g_seen.disconnect_after = 2;
    loop_attach(&l, ac, 1);
    loop_run(&l);
    ck_assert_int_eq(g_seen.n, 2);
    ck_assert_str_eq(g_seen.text[0], "first");
    ck_assert_str_eq(g_seen.text[1], "second");
    ck_assert_int_eq(g_seen.disconnect_err, 0);
    fake_stop(&f);
    gate_close();
}
END_TEST

static Suite *client_suite(void)
{
    Suite *s = suite_create("client");
    TCase *tc = tcase_create("connect");
    tcase_add_test(tc, connect_unix_hello);
    tcase_add_test(tc, connect_wrong_token);
    tcase_add_test(tc, connect_tcp_v4);
    tcase_add_test(tc, connect_tcp_v6);
    tcase_add_test(tc, connect_refused);
    tcase_add_test(tc, connect_bad_uri);
    tcase_add_test(tc, connect_timeout_hello);
    tcase_add_test(tc, connect_timeout_queue_full);
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);

    tc = tcase_create("calls");
    tcase_add_test(tc, ping_round_trip);
    tcase_add_test(tc, pose_decoded);
    tcase_add_test(tc, eval_bad_arguments);
    tcase_add_test(tc, load_info_instance);
    tcase_add_test(tc, mesh_and_render);
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);

    tc = tcase_create("errors");
    tcase_add_test(tc, error_reply);
    tcase_add_test(tc, malformed_reply);
    tcase_add_test(tc, reply_breaking_the_header_is_eproto);
    tcase_add_test(tc, picture_not_as_said_is_eproto);
    tcase_add_test(tc, number_not_finite_is_eproto);
    tcase_add_test(tc, token_too_long_and_own_max_reply);
    tcase_add_test(tc, hello_of_another_version_is_eproto);
    tcase_add_test(tc, close_mid_reply);
    tcase_add_test(tc, send_after_the_server_hung_up_says_reconnect);
    tcase_add_test(tc, eof_while_waiting_says_reconnect);
    tcase_add_test(tc, connection_level_error);
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);

    tc = tcase_create("pipelining");
    tcase_add_test(tc, pipelined_out_of_order);
    tcase_add_test(tc, pipelined_batch_discard);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);

    tc = tcase_create("ids");
    tcase_add_test(tc, version_agrees);
    tcase_add_test(tc, id_of_known_digests);
    tcase_add_test(tc, id_from_hex_is_strict);
    suite_add_tcase(s, tc);

    tc = tcase_create("nonblocking");
    tcase_add_test(tc, nonblocking_recv_again);
    tcase_add_test(tc, nonblocking_queue_and_flush);
    tcase_add_test(tc, blocking_flush_timeout_keeps_the_queue);
    tcase_add_test(tc, reconnect_after_failed_connect);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);

    tc = tcase_create("async");
    tcase_add_test(tc, async_out_of_order);
    tcase_add_test(tc, async_tcp_and_errors);
    tcase_add_test(tc, async_connection_error_fails_pending);
    tcase_add_test(tc, async_free_inside_callback);
    tcase_add_test(tc, async_free_fails_pending_in_order);
    tcase_add_test(tc, async_hang_up_says_connect_a_new_handle);
    tcase_add_test(tc, async_reply_over_max_reply_is_eproto);
    tcase_add_test(tc, async_timeouts);
    tcase_add_test(tc, async_ensure_outcomes);
    tcase_add_test(tc, async_ensure_upload_over_the_limit);
    tcase_add_test(tc, async_refused);
    tcase_add_test(tc, async_wrong_token);
    tcase_add_test(tc, async_handlers_ignored_in_callbacks);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(client_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
