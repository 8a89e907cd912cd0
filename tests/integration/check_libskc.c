/* libskc against the real daemon: the ids skc_id_of computes are the daemon's; the
 * asynchronous API on a libuv loop (skc_uv.h) answers exactly what the blocking calls answer;
 * skc_reconnect gets a client back after its daemon restarted.
 *
 * Each test starts `skeld serve` on a unix socket in a temp dir of its own and waits for the
 * daemon's "listening" line (never a sleep); the checked teardown kills what is left, and in
 * fork mode Check kills the test's process group anyway. The program exits 77 (skip) when
 * SKELD_BIN or the samples (built by make) cannot be found. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "skc.h"
#include "skc_uv.h"

enum { READY_MS = 120000 }; /* a bound for a loaded machine, never a pace */

static const char *g_bin, *g_samples;
static long g_maxfd;
static char g_dir[128]; /* this test's temp dir */

struct daemon {
    pid_t pid; /* 0: not running */
    int out;   /* its stdout */
    char uri[192];
};

static struct daemon g_daemon;

/* ---- utilities -------------------------------------------------------------------------- */

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A whole file (malloc'd), or NULL. */
static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    unsigned char *buf = NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) &&
        fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = buf ? (size_t)n : 0;
    return buf;
}

static unsigned char *sample(const char *name, size_t *len)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", g_samples, name);
    unsigned char *data = slurp(path, len);
    ck_assert_msg(data != NULL, "cannot read %s", path);
    return data;
}

/* ---- the daemon --------------------------------------------------------------------------- */

/* Reads the daemon's stdout up to its "listening unix:..." line. */
static void await_ready(struct daemon *d)
{
    char buf[4096];
    size_t n = 0;
    int64_t deadline = now_ms() + READY_MS;
    for (;;) {
        char *nl;
        while ((nl = memchr(buf, '\n', n))) {
            *nl = '\0';
            if (strncmp(buf, "listening unix:", 15) == 0) {
                ck_assert_uint_lt(strlen(buf + 10), sizeof d->uri);
                memcpy(d->uri, buf + 10, strlen(buf + 10) + 1);
                return;
            }
            n -= (size_t)(nl + 1 - buf);
            memmove(buf, nl + 1, n);
        }
        ck_assert_uint_lt(n, sizeof buf - 1);
        int left = (int)(deadline - now_ms());
        ck_assert_msg(left > 0, "skeld printed no listening line in %d s", READY_MS / 1000);
        struct pollfd p = {d->out, POLLIN, 0};
        int r = poll(&p, 1, left);
        ck_assert_msg(r >= 0 || errno == EINTR, "poll: %s", strerror(errno));
        if (r <= 0)
            continue;
        ssize_t got = read(d->out, buf + n, sizeof buf - 1 - n);
        ck_assert_msg(got > 0, "skeld exited before listening (its stderr is above)");
        n += (size_t)got;
    }
}

/* `skeld serve` on <test dir>/s.sock (the same path every time, so a restarted daemon has
 * the same URI), with an auth token if one is given. */
static void daemon_start(struct daemon *d, const char *token)
{
    char listen[192];
    snprintf(listen, sizeof listen, "unix:%s/s.sock", g_dir);
    const char *argv[] = {g_bin,         "serve",  "--listen",
                          listen,        "--root", g_samples,
                          "--log-level", "warn",   token ? "--auth-token" : NULL,
                          token,         NULL};
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    memset(d, 0, sizeof *d);
    d->pid = fork();
    ck_assert_int_ge(d->pid, 0);
    if (d->pid == 0) {
        dup2(p[1], 1);
        /* Nothing of ours leaks in: a client socket kept open by the daemon would hide the
         * end of a connection from the test. */
        for (long fd = 3; fd < g_maxfd; fd++)
            close((int)fd);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(p[1]);
    d->out = p[0];
    await_ready(d);
}

/* A crash, as far as clients can tell: SIGKILL, and the daemon is gone when this returns. */
static void daemon_kill(struct daemon *d)
{
    if (d->pid > 0) {
        kill(d->pid, SIGKILL);
        while (waitpid(d->pid, NULL, 0) < 0 && errno == EINTR)
            ;
        close(d->out);
    }
    d->pid = 0;
}

static void test_setup(void)
{
    const char *t = getenv("TMPDIR");
    /* Short enough that the socket path fits in sun_path. */
    snprintf(g_dir, sizeof g_dir, "%s/sklc.XXXXXX", t && *t && strlen(t) < 48 ? t : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(g_dir));
    g_daemon.pid = 0;
}

static void test_teardown(void)
{
    char sock[192];
    daemon_kill(&g_daemon);
    snprintf(sock, sizeof sock, "%s/s.sock", g_dir);
    unlink(sock);
    rmdir(g_dir);
}

static skc_client *client_open(const char *uri, const char *token)
{
    skc_options o = {uri, token, 20000, 60000, 0};
    skc_client *c = NULL;
    int rc = skc_connect(&c, &o);
    ck_assert_msg(rc == 0, "connect %s: %s", uri, skc_errmsg(c));
    return c;
}

/* ---- ids ---------------------------------------------------------------------------------- */

START_TEST(ids_match_the_daemon)
{
    daemon_start(&g_daemon, NULL);
    skc_client *c = client_open(g_daemon.uri, NULL);
    DIR *dir = opendir(g_samples);
    ck_assert_ptr_nonnull(dir);
    int files = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        size_t n = strlen(e->d_name), len;
        if (n < 5 || strcmp(e->d_name + n - 4, ".skf") != 0)
            continue;
        unsigned char *skf = sample(e->d_name, &len);
        unsigned char mine[SKC_ID_SIZE], by_bytes[SKC_ID_SIZE], by_path[SKC_ID_SIZE],
            back[SKC_ID_SIZE];
        char hex[SKC_ID_HEX_SIZE];
        ck_assert_int_eq(skc_id_of(skf, len, mine), 0);
        ck_assert_msg(skc_load_bytes(c, skf, len, by_bytes, NULL) == 0, "%s: %s", e->d_name,
                      skc_errmsg(c));
        ck_assert_msg(skc_load_path(c, e->d_name, by_path, NULL) == 0, "%s: %s", e->d_name,
                      skc_errmsg(c));
        ck_assert_msg(memcmp(mine, by_bytes, SKC_ID_SIZE) == 0, "%s: LOAD_BYTES id differs",
                      e->d_name);
        ck_assert_msg(memcmp(mine, by_path, SKC_ID_SIZE) == 0, "%s: LOAD_PATH id differs",
                      e->d_name);
        ck_assert_int_eq(skc_id_from_hex(back, skc_id_to_hex(hex, mine)), 0);
        ck_assert(memcmp(back, mine, SKC_ID_SIZE) == 0);
        /* The id alone is enough to use it. */
        ck_assert_int_eq(skc_info(c, back, NULL), 0);
        free(skf);
        files++;
    }
    closedir(dir);
    ck_assert_int_ge(files, 4); /* make builds four samples */
    skc_free(c);
}
END_TEST

/* The daemon's count of LOAD_BYTES requests (STATS requests.LOAD_BYTES). */
static uint64_t uploads(skc_client *c)
{
    skc_reply *r = NULL;
    ck_assert_msg(skc_stats(c, &r) == 0, "%s", skc_errmsg(c));
    uint32_t n;
    const skc_counter *k = skc_reply_counters(r, &n);
    uint64_t v = UINT64_MAX;
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(k[i].name, "requests.LOAD_BYTES"))
            v = k[i].value;
    skc_reply_free(r);
    ck_assert(v != UINT64_MAX);
    return v;
}

/* skc_ensure sends the bytes only when the daemon lacks the armature: once at first, not
 * while it is cached, once more after it was unloaded; the id is skc_id_of's every time. */
START_TEST(ensure_uploads_only_when_missing)
{
    daemon_start(&g_daemon, NULL);
    skc_client *c = client_open(g_daemon.uri, NULL);
    size_t len;
    unsigned char *skf = sample("critter.skf", &len), want[SKC_ID_SIZE], id[SKC_ID_SIZE];
    ck_assert_int_eq(skc_id_of(skf, len, want), 0);
    uint64_t n0 = uploads(c);
    ck_assert_msg(skc_ensure(c, skf, len, id) == 0, "%s", skc_errmsg(c));
    ck_assert(memcmp(id, want, SKC_ID_SIZE) == 0);
    ck_assert_uint_eq(uploads(c), n0 + 1);
    memset(id, 0, sizeof id);
    ck_assert_int_eq(skc_ensure(c, skf, len, id), 0);
    ck_assert(memcmp(id, want, SKC_ID_SIZE) == 0);
    ck_assert_uint_eq(uploads(c), n0 + 1); /* cached: nothing sent */
    ck_assert_int_eq(skc_unload(c, want), 0);
    ck_assert_int_eq(skc_ensure(c, skf, len, id), 0);
    ck_assert_uint_eq(uploads(c), n0 + 2);
    ck_assert_int_eq(skc_info(c, id, NULL), 0);
    /* Bytes that are no .skf: the upload's error comes back (BAD_FILE), nothing cached. */
    static const char junk[] = "not a zip";
    ck_assert_int_eq(skc_ensure(c, junk, sizeof junk, id), SKC_ESERVER);
    ck_assert_int_eq(skc_status(c), SKC_S_BAD_FILE);
    free(skf);
    skc_free(c);
}
END_TEST

/* ---- the asynchronous API on libuv ------------------------------------------------------- */

enum { POSES = 24 };

/* One request's outcome, filled by its callback. */
struct slot {
    int done, err;
    skc_reply *reply;
};

struct run {
    struct slot pose[POSES], render, load, info, stats, ping;
    int expected, done;
    int connect_err, disconnect_err, disconnects;
    char disconnect_msg[256];
    int late_rc;
    struct daemon *kill_on_connect;
};

static void on_slot(skc_async *ac, int err, skc_reply *r, void *privdata)
{
    struct slot *s = privdata;
    struct run *run = skc_async_data(ac);
    ck_assert_int_eq(s->done, 0); /* exactly once */
    s->done = 1;
    s->err = err;
    s->reply = r;
    if (err)
        fprintf(stderr, "check_libskc: a request failed: %s\n", skc_async_errmsg(ac));
    if (++run->done == run->expected)
        ck_assert_int_eq(skc_async_disconnect(ac), 0);
}

static void on_connected(skc_async *ac, int err)
{
    struct run *run = skc_async_data(ac);
    run->connect_err = err;
    if (err == 0 && run->kill_on_connect) {
        daemon_kill(run->kill_on_connect);
        ck_assert_int_eq(skc_async_ping(ac, "orphan", 6, on_slot, &run->ping), 0);
    }
}

static void on_disconnected(skc_async *ac, int err)
{
    struct run *run = skc_async_data(ac);
    run->disconnects++;
    run->disconnect_err = err;
    snprintf(run->disconnect_msg, sizeof run->disconnect_msg, "%s", skc_async_errmsg(ac));
    run->late_rc = skc_async_stats(ac, on_slot, &run->stats);
}

static skc_async *async_open(uv_loop_t *loop, struct run *run, const char *uri, const char *token,
                             int connect_ms)
{
    skc_options o = {uri, token, connect_ms, 60000, 0};
    skc_async *ac = NULL;
    int rc = skc_async_connect(&ac, &o);
    ck_assert_msg(rc == 0, "async connect %s: %s", uri, skc_async_errmsg(ac));
    skc_async_set_data(ac, run);
    ck_assert_int_eq(skc_async_set_connect_cb(ac, on_connected), 0);
    ck_assert_int_eq(skc_async_set_disconnect_cb(ac, on_disconnected), 0);
    rc = skc_uv_attach(ac, loop);
    ck_assert_msg(rc == 0, "skc_uv_attach: %s", skc_async_errmsg(ac));
    run->connect_err = run->disconnect_err = 1; /* not an SKC code: "not called" */
    return ac;
}

/* Runs the loop until every handle closed (the adapter's too), then closes it. */
static void loop_finish(uv_loop_t *loop)
{
    ck_assert_int_eq(uv_run(loop, UV_RUN_DEFAULT), 0);
    ck_assert_int_eq(uv_loop_close(loop), 0);
}

static void same_bones(const skc_reply *a, const skc_reply *b, int frame)
{
    uint32_t na, nb;
    const skc_bone *x = skc_reply_bones(a, &na), *y = skc_reply_bones(b, &nb);
    ck_assert_msg(na == nb && na > 0, "frame %d: %u bones against %u", frame, na, nb);
    for (uint32_t i = 0; i < na; i++) {
        int same = x[i].pos.x == y[i].pos.x && x[i].pos.y == y[i].pos.y && x[i].rot == y[i].rot &&
                   x[i].scale.x == y[i].scale.x && x[i].scale.y == y[i].scale.y &&
                   memcmp(x[i].matrix, y[i].matrix, sizeof x[i].matrix) == 0 &&
                   x[i].hidden == y[i].hidden && x[i].zindex == y[i].zindex &&
                   strcmp(x[i].tex, y[i].tex) == 0 &&
                   memcmp(x[i].tint, y[i].tint, sizeof x[i].tint) == 0 &&
                   x[i].vertex_count == y[i].vertex_count &&
                   (x[i].vertex_count == 0 || memcmp(x[i].vertices, y[i].vertices,
                                                     x[i].vertex_count * sizeof(skc_vec2)) == 0);
        ck_assert_msg(same, "frame %d, bone %u: the async pose differs from the blocking one",
                      frame, i);
    }
}

static void same_images(const skc_reply *a, const skc_reply *b)
{
    uint32_t na, nb;
    const skc_image *x = skc_reply_images(a, &na), *y = skc_reply_images(b, &nb);
    ck_assert_uint_eq(na, 1);
    ck_assert_uint_eq(nb, 1);
    ck_assert(x[0].width == y[0].width && x[0].height == y[0].height);
    ck_assert_uint_eq(x[0].size, y[0].size);
    ck_assert_msg(memcmp(x[0].data, y[0].data, x[0].size) == 0, "the PNGs differ");
}

static void pose_at(skc_eval *ev, const unsigned char id[SKC_ID_SIZE], const char *anim, int frame)
{
    skc_eval_init(ev);
    memcpy(ev->armature, id, SKC_ID_SIZE);
    ev->flags = SKC_EVAL_LOOP;
    ev->anim_count = 1;
    ev->anims[0] = (skc_anim){anim, frame, 0};
}

START_TEST(uv_pipeline_matches_blocking)
{
    size_t len;
    unsigned char *skf = sample("robot.skf", &len), id[SKC_ID_SIZE];
    /* With a token: the requests queued before HELLO is answered must pass as authenticated
     * (the daemon reads them after HELLO). */
    daemon_start(&g_daemon, "uv-t0ken");
    skc_client *c = client_open(g_daemon.uri, "uv-t0ken");
    skc_reply *loaded = NULL;
    ck_assert_msg(skc_load_bytes(c, skf, len, id, &loaded) == 0, "%s", skc_errmsg(c));
    const char *anim = skc_reply_summary(loaded)->anims[0].name;
    skc_reply *ref[POSES], *ref_render = NULL;
    skc_eval ev;
    skc_render_opts ro;
    skc_render_opts_init(&ro);
    ro.width = ro.height = 96;
    for (int i = 0; i < POSES; i++) {
        pose_at(&ev, id, anim, i);
        ck_assert_msg(skc_pose(c, &ev, &ref[i]) == 0, "%s", skc_errmsg(c));
    }
    pose_at(&ev, id, anim, 7);
    ck_assert_msg(skc_render(c, &ev, &ro, &ref_render) == 0, "%s", skc_errmsg(c));

    uv_loop_t loop;
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    static struct run run;
    memset(&run, 0, sizeof run);
    skc_async *ac = async_open(&loop, &run, g_daemon.uri, "uv-t0ken", 20000);
    /* Everything in flight at once, before the loop even runs. */
    for (int i = 0; i < POSES; i++) {
        pose_at(&ev, id, anim, i);
        ck_assert_int_eq(skc_async_pose(ac, &ev, on_slot, &run.pose[i]), 0);
    }
    pose_at(&ev, id, anim, 7);
    ck_assert_int_eq(skc_async_render(ac, &ev, &ro, on_slot, &run.render), 0);
    ck_assert_int_eq(skc_async_load_bytes(ac, skf, len, on_slot, &run.load), 0);
    ck_assert_int_eq(skc_async_info(ac, id, on_slot, &run.info), 0);
    ck_assert_int_eq(skc_async_ping(ac, "uv", 2, on_slot, &run.ping), 0);
    run.expected = POSES + 4;
    ck_assert_uint_eq(skc_async_pending(ac), (size_t)run.expected + 1); /* and HELLO */
    loop_finish(&loop);

    ck_assert_int_eq(run.connect_err, 0);
    ck_assert_int_eq(run.disconnects, 1);
    ck_assert_int_eq(run.disconnect_err, 0);
    ck_assert_int_eq(run.late_rc, SKC_EIO); /* nothing goes out after the end */
    ck_assert_int_eq(run.done, run.expected);
    for (int i = 0; i < POSES; i++) {
        ck_assert_int_eq(run.pose[i].err, 0);
        same_bones(run.pose[i].reply, ref[i], i);
        skc_reply_free(run.pose[i].reply);
        skc_reply_free(ref[i]);
    }
    ck_assert_int_eq(run.render.err, 0);
    same_images(run.render.reply, ref_render);
    ck_assert_int_eq(run.load.err, 0);
    ck_assert(memcmp(skc_reply_armature_id(run.load.reply), id, SKC_ID_SIZE) == 0);
    ck_assert_int_eq(run.info.err, 0);
    ck_assert_uint_eq(skc_reply_summary(run.info.reply)->bone_count,
                      skc_reply_summary(loaded)->bone_count);
    size_t plen;
    ck_assert_int_eq(run.ping.err, 0);
    ck_assert(memcmp(skc_reply_payload(run.ping.reply, &plen), "uv", 2) == 0 && plen == 2);
    skc_reply_free(run.render.reply);
    skc_reply_free(run.load.reply);
    skc_reply_free(run.info.reply);
    skc_reply_free(run.ping.reply);
    skc_reply_free(ref_render);
    skc_reply_free(loaded);
    skc_free(c);
    free(skf);
}
END_TEST

/* skc_async_ensure, each one queued from the callback of the one before: the first uploads
 * (its reply is LOAD_BYTES's), the second finds the armature cached (INFO's reply, carrying
 * the id, and no upload), the third's bytes are no .skf (the upload's BAD_FILE). */
struct ensure_run {
    skc_client *stats; /* a blocking connection counting uploads */
    const unsigned char *skf;
    size_t len;
    int calls, err[3], status[3];
    skc_reply *reply[3];
    uint64_t uploads_after[3];
};

static void on_ensured(skc_async *ac, int err, skc_reply *r, void *privdata)
{
    struct ensure_run *e = privdata;
    static const char junk[] = "not a zip";
    int k = e->calls++;
    ck_assert_int_lt(k, 3);
    e->err[k] = err;
    e->status[k] = err == SKC_ESERVER ? skc_async_status(ac) : 0;
    e->reply[k] = r;
    e->uploads_after[k] = uploads(e->stats);
    if (k == 0)
        ck_assert_int_eq(skc_async_ensure(ac, e->skf, e->len, on_ensured, e), 0);
    else if (k == 1)
        ck_assert_int_eq(skc_async_ensure(ac, junk, sizeof junk, on_ensured, e), 0);
    else
        ck_assert_int_eq(skc_async_disconnect(ac), 0);
}

START_TEST(uv_ensure_uploads_only_when_missing)
{
    daemon_start(&g_daemon, NULL);
    size_t len;
    unsigned char *skf = sample("critter.skf", &len), *again = sample("critter.skf", &len),
                  want[SKC_ID_SIZE];
    ck_assert_int_eq(skc_id_of(skf, len, want), 0);
    static struct ensure_run e;
    memset(&e, 0, sizeof e);
    e.stats = client_open(g_daemon.uri, NULL);
    e.len = len;
    e.skf = again; /* for the second ensure */
    uint64_t n0 = uploads(e.stats);
    uv_loop_t loop;
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    static struct run run;
    memset(&run, 0, sizeof run);
    skc_async *ac = async_open(&loop, &run, g_daemon.uri, NULL, 20000);
    ck_assert_int_eq(skc_async_ensure(ac, skf, len, on_ensured, &e), 0);
    memset(skf, 0, len); /* the bytes were copied: the caller's may go at once */
    loop_finish(&loop);

    ck_assert_int_eq(e.calls, 3);
    ck_assert_int_eq(run.disconnect_err, 0);
    ck_assert_msg(e.err[0] == 0 && e.err[1] == 0, "ensure failed: %d, %d", e.err[0], e.err[1]);
    ck_assert_int_eq(skc_reply_op(e.reply[0]), SKC_OP_LOAD_BYTES);
    ck_assert_uint_eq(e.uploads_after[0], n0 + 1);
    ck_assert_int_eq(skc_reply_op(e.reply[1]), SKC_OP_INFO);
    ck_assert_uint_eq(e.uploads_after[1], n0 + 1); /* cached: nothing sent */
    for (int k = 0; k < 2; k++) {
        ck_assert_ptr_nonnull(skc_reply_armature_id(e.reply[k]));
        ck_assert(memcmp(skc_reply_armature_id(e.reply[k]), want, SKC_ID_SIZE) == 0);
        ck_assert_ptr_nonnull(skc_reply_summary(e.reply[k]));
        skc_reply_free(e.reply[k]);
    }
    ck_assert_int_eq(e.err[2], SKC_ESERVER);
    ck_assert_int_eq(e.status[2], SKC_S_BAD_FILE);
    ck_assert_ptr_null(e.reply[2]);
    ck_assert_uint_eq(e.uploads_after[2], n0 + 2);
    skc_free(e.stats);
    free(skf);
    free(again);
}
END_TEST

static void on_ensured_once(skc_async *ac, int err, skc_reply *r, void *privdata)
{
    (void)ac;
    struct slot *s = privdata;
    ck_assert_int_eq(s->done, 0); /* exactly once */
    s->done = 1;
    s->err = err;
    s->reply = r;
}

/* An ensure accepted before skc_async_disconnect still uploads (the disconnect waits for it),
 * and one without a callback uploads too, its reply freed by the library (CI runs this under
 * ASan and valgrind, which would report the leak). */
START_TEST(uv_ensure_survives_disconnect)
{
    daemon_start(&g_daemon, NULL);
    skc_client *c = client_open(g_daemon.uri, NULL);
    size_t len, len2;
    unsigned char *skf = sample("critter.skf", &len), *skf2 = sample("lamp-0.7.skf", &len2),
                  want[SKC_ID_SIZE];
    ck_assert_int_eq(skc_id_of(skf, len, want), 0);
    uint64_t n0 = uploads(c);
    uv_loop_t loop;
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    static struct run run;
    memset(&run, 0, sizeof run);
    static struct slot slot;
    memset(&slot, 0, sizeof slot);
    skc_async *ac = async_open(&loop, &run, g_daemon.uri, NULL, 20000);
    ck_assert_int_eq(skc_async_ensure(ac, skf2, len2, NULL, NULL), 0);
    ck_assert_int_eq(skc_async_ensure(ac, skf, len, on_ensured_once, &slot), 0);
    ck_assert_int_eq(skc_async_disconnect(ac), 0);
    ck_assert_int_eq(skc_async_ping(ac, "late", 4, on_slot, &run.ping), SKC_EIO);
    loop_finish(&loop);
    ck_assert_int_eq(slot.done, 1);
    ck_assert_msg(slot.err == 0, "ensure during disconnect: %d", slot.err);
    ck_assert_int_eq(skc_reply_op(slot.reply), SKC_OP_LOAD_BYTES);
    ck_assert(memcmp(skc_reply_armature_id(slot.reply), want, SKC_ID_SIZE) == 0);
    ck_assert_int_eq(run.disconnect_err, 0);
    ck_assert_uint_eq(uploads(c), n0 + 2);
    skc_reply_free(slot.reply);
    skc_free(c);
    free(skf);
    free(skf2);
}
END_TEST

START_TEST(uv_daemon_gone)
{
    daemon_start(&g_daemon, NULL);
    uv_loop_t loop;
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    static struct run run;
    memset(&run, 0, sizeof run);
    run.kill_on_connect = &g_daemon; /* once HELLO is answered, and a PING sent after */
    run.expected = 99;               /* never disconnect by ourselves */
    async_open(&loop, &run, g_daemon.uri, NULL, 20000);
    loop_finish(&loop);
    ck_assert_int_eq(run.connect_err, 0);
    ck_assert_int_eq(run.ping.done, 1);
    ck_assert_int_eq(run.ping.err, SKC_EIO);
    ck_assert_int_eq(run.disconnects, 1);
    ck_assert_int_eq(run.disconnect_err, SKC_EIO);
    ck_assert_msg(strlen(run.disconnect_msg) > 0, "no reason given");
}
END_TEST

/* A unix socket listening at g_dir/name (its path and URI into path and uri), never accepting
 * by itself: the test plays the peer. Returns its descriptor. */
static int unix_listener(const char *name, char path[192], char uri[200])
{
    snprintf(path, 192, "%s/%s", g_dir, name);
    snprintf(uri, 200, "unix:%s", path);
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    ck_assert_uint_lt(strlen(path), sizeof sun.sun_path);
    memcpy(sun.sun_path, path, strlen(path) + 1);
    int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_ge(lfd, 0);
    ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sun, sizeof sun), 0);
    ck_assert_int_eq(listen(lfd, 8), 0);
    return lfd;
}

/* A listener that never accepts: the connect completes in its backlog, HELLO goes
 * unanswered, and the adapter's timer must end it. */
START_TEST(uv_connect_timeout)
{
    char path[192], uri[200];
    int lfd = unix_listener("mute.sock", path, uri);
    uv_loop_t loop;
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    static struct run run;
    memset(&run, 0, sizeof run);
    run.expected = 99;
    skc_async *ac = async_open(&loop, &run, uri, NULL, 150);
    ck_assert_int_eq(skc_async_ping(ac, "never", 5, on_slot, &run.ping), 0);
    loop_finish(&loop);
    ck_assert_int_eq(run.connect_err, SKC_ETIMEOUT);
    ck_assert_int_eq(run.ping.err, SKC_EIO);
    ck_assert_int_eq(run.disconnect_err, SKC_ETIMEOUT);
    ck_assert_ptr_nonnull(strstr(run.disconnect_msg, "no answer within 150 ms"));
    close(lfd);
    unlink(path);
}
END_TEST

/* The opcodes the peer tells apart (proto/skp.h). */
enum { OP_HELLO = 1, OP_LOAD_BYTES = 4 };

/* A frame the peer read: its opcode, id and body (up to 64 bytes kept). */
struct peer_frame {
    unsigned op;
    uint32_t id;
    size_t len;
    unsigned char body[64];
};

/* Reads one whole frame from fd (blocking): 1, or 0 at the client's end of stream, or -1 if
 * the stream ends inside a frame. */
static int peer_read(int fd, struct peer_frame *f)
{
    unsigned char h[20];
    for (size_t got = 0; got < sizeof h;) {
        ssize_t n = read(fd, h + got, sizeof h - got);
        if (n <= 0)
            return 0;
        got += (size_t)n;
    }
    f->op = h[5];
    f->id = h[12] | h[13] << 8 | (uint32_t)h[14] << 16 | (uint32_t)h[15] << 24;
    f->len = h[16] | h[17] << 8 | (size_t)h[18] << 16 | (size_t)h[19] << 24;
    for (size_t got = 0; got < f->len;) {
        unsigned char junk[4096];
        size_t want = f->len - got > sizeof junk ? sizeof junk : f->len - got;
        ssize_t n = read(fd, junk, want);
        if (n <= 0)
            return -1;
        if (got < sizeof f->body)
            memcpy(f->body + got, junk,
                   (size_t)n < sizeof f->body - got ? (size_t)n : sizeof f->body - got);
        got += (size_t)n;
    }
    return 1;
}

/* A peer that answers HELLO, starts a reply and closes with a request still unread: the
 * client's socket then holds data and an error (ECONNRESET) at once. libuv reports that as a
 * poll error and stops the poll handle; the adapter must go on watching, or the read that
 * would meet the error never comes: no callback, and the loop returns with the handle alive. */
START_TEST(uv_reset_after_data)
{
    char path[192], uri[200];
    int lfd = unix_listener("reset.sock", path, uri);
    uv_loop_t loop;
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    static struct run run;
    memset(&run, 0, sizeof run);
    run.expected = 99;
    /* No connect timeout; the PING's (a minute) comes long after the end of the connection,
     * which alone can answer it. */
    skc_async *ac = async_open(&loop, &run, uri, NULL, -1);
    ck_assert_int_eq(skc_async_ping(ac, "unread", 6, on_slot, &run.ping), 0);
    int sfd = accept(lfd, NULL, NULL);
    ck_assert_int_ge(sfd, 0);
    /* HELLO and PING go out on the loop's first turns. */
    struct pollfd p = {sfd, POLLIN, 0};
    for (int turns = 0; poll(&p, 1, 0) == 0; turns++) {
        ck_assert_int_lt(turns, 1000);
        uv_run(&loop, UV_RUN_NOWAIT);
    }
    struct peer_frame hello_req;
    ck_assert_int_eq(peer_read(sfd, &hello_req), 1); /* HELLO; the PING stays unread */
    /* HELLO's reply (version 1, "fake", a 64 KiB limit), then a PING reply promising 64 KiB
     * and sending none of it. */
    static const char hello[] = "SKLD\1\1\1\0\0\0\0\0\1\0\0\0\14\0\0\0"
                                "\1\0\4\0fake\0\0\1\0";
    static const char part[] = "SKLD\1\2\1\0\0\0\0\0\2\0\0\0\0\0\1\0";
    ck_assert_int_eq(write(sfd, hello, sizeof hello - 1), (ssize_t)sizeof hello - 1);
    ck_assert_int_eq(write(sfd, part, sizeof part - 1), (ssize_t)sizeof part - 1);
    close(sfd);
    loop_finish(&loop);
    ck_assert_int_eq(run.connect_err, 0);
    ck_assert_int_eq(run.ping.done, 1);
    ck_assert_int_eq(run.ping.err, SKC_EIO);
    ck_assert_int_eq(run.disconnects, 1);
    ck_assert_int_eq(run.disconnect_err, SKC_EIO);
    close(lfd);
    unlink(path);
}
END_TEST

/* ---- a peer on a thread of its own, for the pending table --------------------------------- */

/* The peers run on threads of their own and report what went wrong to the test's thread,
 * which asserts (Check's assertions belong to it): each peer function returns NULL, or why it
 * failed, and a peer that fails closes its socket, so the client's loop ends. */

/* Answers f with body (a PING's echo, or HELLO's reply). */
static const char *peer_reply(int fd, const struct peer_frame *f, const void *body, size_t len)
{
    unsigned char h[20] = {'S', 'K', 'L', 'D', 1, (unsigned char)f->op, 1};
    for (int k = 0; k < 4; k++) {
        h[12 + k] = (unsigned char)(f->id >> (8 * k));
        h[16 + k] = (unsigned char)(len >> (8 * k));
    }
    if (write(fd, h, sizeof h) != (ssize_t)sizeof h || write(fd, body, len) != (ssize_t)len)
        return "a reply could not be written";
    return NULL;
}

/* Accepts on lfd (the connection into *fd), reads HELLO and answers it (version 1, "fake", a
 * 64 KiB limit). */
static const char *peer_hello(int lfd, int *fd)
{
    static const unsigned char hello[] = {1, 0, 4, 0, 'f', 'a', 'k', 'e', 0, 0, 1, 0};
    struct peer_frame f;
    if ((*fd = accept(lfd, NULL, NULL)) < 0)
        return "accept failed";
    if (peer_read(*fd, &f) != 1 || f.op != OP_HELLO)
        return "the client did not begin with HELLO";
    return peer_reply(*fd, &f, hello, sizeof hello);
}

/* The peer's end: the connection closed, why it failed (NULL for nothing) as the thread's
 * result. */
static void *peer_end(int fd, const char *why)
{
    if (fd >= 0)
        close(fd);
    return (void *)why;
}

/* The peer thread's result, asserted on the test's thread. */
static void join_peer(pthread_t peer)
{
    void *why = NULL;
    ck_assert_int_eq(pthread_join(peer, &why), 0);
    ck_assert_msg(why == NULL, "the fake peer: %s", (const char *)why);
}

enum { DEEP = 5000 };

struct deep_peer {
    int lfd;
    struct peer_frame frames[DEEP];
};

/* Reads DEEP PINGs, then answers every other one oldest first, and the rest newest first. */
static void *deep_peer_main(void *arg)
{
    struct deep_peer *dp = arg;
    int fd = -1;
    const char *why = peer_hello(dp->lfd, &fd);
    for (int i = 0; !why && i < DEEP; i++)
        why = peer_read(fd, &dp->frames[i]) == 1 ? NULL : "the client hung up before its PINGs";
    for (int i = 0; !why && i < DEEP; i += 2)
        why = peer_reply(fd, &dp->frames[i], dp->frames[i].body, dp->frames[i].len);
    for (int i = (DEEP - 1) | 1; !why && i > 0; i -= 2)
        if (i < DEEP)
            why = peer_reply(fd, &dp->frames[i], dp->frames[i].body, dp->frames[i].len);
    struct peer_frame f;
    while (!why && peer_read(fd, &f) == 1) /* until the client hangs up */
        ;
    return peer_end(fd, why);
}

struct echo_slot {
    char payload[16];
    int err, done, echoed;
};

static void on_echo(skc_async *ac, int err, skc_reply *r, void *privdata)
{
    struct echo_slot *e = privdata;
    size_t len = 0;
    const void *p = r ? skc_reply_payload(r, &len) : NULL;
    e->done++;
    e->err = err;
    e->echoed = p && len == strlen(e->payload) && !memcmp(p, e->payload, len);
    skc_reply_free(r);
    int *left = skc_async_data(ac);
    if (--*left == 0)
        ck_assert_int_eq(skc_async_disconnect(ac), 0);
}

/* Thousands of requests in flight, answered out of order both ways: each reply reaches its own
 * request's callback, once (the pending table's index through growth and removals). */
START_TEST(uv_deep_pipeline_out_of_order)
{
    char path[192], uri[200];
    static struct deep_peer dp;
    static struct echo_slot slots[DEEP];
    memset(slots, 0, sizeof slots);
    dp.lfd = unix_listener("deep.sock", path, uri);
    pthread_t peer;
    ck_assert_int_eq(pthread_create(&peer, NULL, deep_peer_main, &dp), 0);
    uv_loop_t loop;
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    skc_options o = {uri, NULL, -1, -1, 0};
    skc_async *ac = NULL;
    ck_assert_int_eq(skc_async_connect(&ac, &o), 0);
    ck_assert_int_eq(skc_uv_attach(ac, &loop), 0);
    int left = DEEP;
    skc_async_set_data(ac, &left);
    for (int i = 0; i < DEEP; i++) {
        snprintf(slots[i].payload, sizeof slots[i].payload, "p%d", i);
        ck_assert_int_eq(
            skc_async_ping(ac, slots[i].payload, strlen(slots[i].payload), on_echo, &slots[i]), 0);
    }
    loop_finish(&loop);
    join_peer(peer);
    for (int i = 0; i < DEEP; i++) {
        ck_assert_msg(slots[i].done == 1 && slots[i].err == 0 && slots[i].echoed,
                      "request %d: %d callbacks, error %d, echo %s", i, slots[i].done, slots[i].err,
                      slots[i].echoed ? "right" : "wrong");
    }
    close(dp.lfd);
    unlink(path);
}
END_TEST

enum { BIG = 200, BIG_BYTES = 60000 };

struct mute_peer {
    int lfd;
    int go[2];        /* the test writes a byte when every big request has timed out */
    int big_seen;     /* LOAD_BYTES frames read, whole */
    int marker_found; /* the PING after them was read and answered */
};

/* Answers HELLO, reads nothing more until told, then reads every frame up to the PING that
 * follows the big requests, and answers it. */
static void *mute_peer_main(void *arg)
{
    struct mute_peer *mp = arg;
    int fd = -1, r = 0;
    const char *why = peer_hello(mp->lfd, &fd);
    char go;
    if (!why && read(mp->go[0], &go, 1) != 1)
        why = "the test did not say go";
    struct peer_frame f;
    while (!why && (r = peer_read(fd, &f)) == 1) {
        if (f.op == OP_LOAD_BYTES) {
            mp->big_seen++;
            continue;
        }
        mp->marker_found = 1;
        why = peer_reply(fd, &f, f.body, f.len);
        break;
    }
    if (!why && r < 0)
        why = "the stream ended inside a frame: the queue lost its place";
    while (!why && (r = peer_read(fd, &f)) == 1)
        ;
    return peer_end(fd, why ? why : r < 0 ? "the stream ended inside a frame" : NULL);
}

struct timeout_log {
    int order[BIG + 1], n, errs[BIG + 1];
    int left;
};

static void on_logged(skc_async *ac, int err, skc_reply *r, void *privdata)
{
    struct timeout_log *log = skc_async_data(ac);
    int which = (int)(intptr_t)privdata;
    skc_reply_free(r);
    log->order[log->n] = which;
    log->errs[log->n++] = err;
    log->left--;
}

/* Requests past their deadline while the socket is full: each gets SKC_ETIMEOUT, in the order
 * they were sent; those that had not begun to go out never do (the server would work for
 * nobody), and the stream stays whole: a request sent afterwards is answered. */
START_TEST(uv_timeouts_in_order_and_unsent)
{
    char path[192], uri[200];
    static struct mute_peer mp;
    memset(&mp, 0, sizeof mp);
    mp.lfd = unix_listener("mute2.sock", path, uri);
    ck_assert_int_eq(pipe(mp.go), 0);
    pthread_t peer;
    ck_assert_int_eq(pthread_create(&peer, NULL, mute_peer_main, &mp), 0);
    uv_loop_t loop;
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    /* 1.5 s: the big requests must time out while the peer waits, and the last PING be
     * answered before it times out too (the peer answers at once) */
    skc_options o = {uri, NULL, -1, 1500, 0};
    skc_async *ac = NULL;
    ck_assert_int_eq(skc_async_connect(&ac, &o), 0);
    ck_assert_int_eq(skc_uv_attach(ac, &loop), 0);
    static struct timeout_log log;
    memset(&log, 0, sizeof log);
    skc_async_set_data(ac, &log);
    static unsigned char junk[BIG_BYTES];
    log.left = BIG;
    for (int i = 0; i < BIG; i++)
        ck_assert_int_eq(
            skc_async_load_bytes(ac, junk, sizeof junk, on_logged, (void *)(intptr_t)i), 0);
    while (log.left > 0)
        ck_assert_int_ne(uv_run(&loop, UV_RUN_ONCE), 0);
    for (int i = 0; i < BIG; i++) {
        ck_assert_int_eq(log.order[i], i);
        ck_assert_int_eq(log.errs[i], SKC_ETIMEOUT);
    }
    log.left = 1;
    ck_assert_int_eq(skc_async_ping(ac, "after", 5, on_logged, (void *)(intptr_t)BIG), 0);
    ck_assert_int_eq(write(mp.go[1], "g", 1), 1);
    while (log.left > 0)
        ck_assert_int_ne(uv_run(&loop, UV_RUN_ONCE), 0);
    ck_assert_int_eq(log.errs[BIG], 0);
    ck_assert_int_eq(skc_async_disconnect(ac), 0);
    loop_finish(&loop);
    join_peer(peer);
    ck_assert(mp.marker_found);
    /* what the socket had taken before the deadline went out; 12 MB could not all fit */
    ck_assert_int_lt(mp.big_seen, BIG);
    close(mp.go[0]);
    close(mp.go[1]);
    close(mp.lfd);
    unlink(path);
}
END_TEST

/* skc_uv_attach on a handle whose connect failed (no socket) is refused, saying why. */
START_TEST(uv_attach_without_a_socket)
{
    char uri[200];
    snprintf(uri, sizeof uri, "unix:%s/nobody-listens.sock", g_dir);
    skc_options o = {uri, NULL, 1000, 1000, 0};
    skc_async *ac = NULL;
    ck_assert_int_eq(skc_async_connect(&ac, &o), SKC_EIO);
    uv_loop_t loop;
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    ck_assert_int_eq(skc_uv_attach(ac, &loop), SKC_EINVAL);
    ck_assert_msg(strstr(skc_async_errmsg(ac), "no connection to attach") &&
                      strstr(skc_async_errmsg(ac), "nobody-listens.sock"),
                  "%s", skc_async_errmsg(ac)); /* why, as skc_async_connect said it */
    skc_async_free(ac);
    loop_finish(&loop);
}
END_TEST

/* ---- reconnecting ------------------------------------------------------------------------- */

START_TEST(reconnect_after_restart)
{
    unsigned char id[SKC_ID_SIZE];
    daemon_start(&g_daemon, "t0ken");
    skc_client *c = client_open(g_daemon.uri, "t0ken");
    ck_assert_msg(skc_load_path(c, "robot.skf", id, NULL) == 0, "%s", skc_errmsg(c));
    uint32_t pending;
    ck_assert_int_eq(skc_send_ping(c, "old", 3, &pending), 0);

    daemon_kill(&g_daemon);
    ck_assert_int_eq(skc_ping(c, "dead", 4), SKC_EIO);
    /* Nobody listens: a reconnect fails, and may be tried again. */
    ck_assert_int_eq(skc_reconnect(c), SKC_EIO);
    ck_assert_int_eq(skc_fd(c), -1);
    ck_assert_int_eq(skc_stats(c, NULL), SKC_EIO);

    daemon_start(&g_daemon, "t0ken"); /* the same socket path, so the same URI */
    ck_assert_msg(skc_reconnect(c) == 0, "%s", skc_errmsg(c));
    ck_assert_uint_eq(skc_pending(c), 0); /* the old connection's request is forgotten */
    ck_assert_int_eq(skc_recv(c, pending, NULL), SKC_EINVAL);
    ck_assert_str_ne(skc_server_name(c), "");
    /* STATS needs the token: the reconnect sent it again. */
    ck_assert_msg(skc_stats(c, NULL) == 0, "%s", skc_errmsg(c));
    ck_assert_int_eq(skc_ping(c, "back", 4), 0);
    /* A new daemon, with an empty cache. */
    ck_assert_int_eq(skc_info(c, id, NULL), SKC_ESERVER);
    ck_assert_int_eq(skc_status(c), SKC_S_NOT_FOUND);

    /* A live connection reconnects too (a fresh one replaces it). */
    ck_assert_msg(skc_reconnect(c) == 0, "%s", skc_errmsg(c));
    ck_assert_int_eq(skc_ping(c, "again", 5), 0);
    skc_free(c);
}
END_TEST

/* ======================================================================================== */

static Suite *libskc_suite(void)
{
    Suite *s = suite_create("libskc");
    TCase *tc = tcase_create("ids");
    tcase_add_checked_fixture(tc, test_setup, test_teardown);
    tcase_add_test(tc, ids_match_the_daemon);
    tcase_add_test(tc, ensure_uploads_only_when_missing);
    tcase_set_timeout(tc, 300);
    suite_add_tcase(s, tc);
    tc = tcase_create("uv");
    tcase_add_checked_fixture(tc, test_setup, test_teardown);
    tcase_add_test(tc, uv_pipeline_matches_blocking);
    tcase_add_test(tc, uv_ensure_uploads_only_when_missing);
    tcase_add_test(tc, uv_ensure_survives_disconnect);
    tcase_add_test(tc, uv_daemon_gone);
    tcase_add_test(tc, uv_connect_timeout);
    tcase_add_test(tc, uv_reset_after_data);
    tcase_add_test(tc, uv_attach_without_a_socket);
    tcase_add_test(tc, uv_deep_pipeline_out_of_order);
    tcase_add_test(tc, uv_timeouts_in_order_and_unsent);
    tcase_set_timeout(tc, 300);
    suite_add_tcase(s, tc);
    tc = tcase_create("reconnect");
    tcase_add_checked_fixture(tc, test_setup, test_teardown);
    tcase_add_test(tc, reconnect_after_restart);
    tcase_set_timeout(tc, 300);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    static char bin[PATH_MAX], samples[PATH_MAX], robot[PATH_MAX + 16];
    struct stat st;
    g_bin = getenv("SKELD_BIN") ? realpath(getenv("SKELD_BIN"), bin) : NULL;
    g_samples = getenv("SKELD_SAMPLES") ? realpath(getenv("SKELD_SAMPLES"), samples) : NULL;
    if (g_samples)
        snprintf(robot, sizeof robot, "%s/robot.skf", g_samples);
    if (!g_bin || !g_samples || stat(robot, &st) != 0) {
        fprintf(stderr,
                "check_libskc: SKIP: no daemon or samples (SKELD_BIN=%s, "
                "SKELD_SAMPLES=%s; make check sets them after make builds both)\n",
                getenv("SKELD_BIN") ? getenv("SKELD_BIN") : "unset",
                getenv("SKELD_SAMPLES") ? getenv("SKELD_SAMPLES") : "unset");
        return 77;
    }
    long maxfd = sysconf(_SC_OPEN_MAX);
    g_maxfd = maxfd > 0 && maxfd < 4096 ? maxfd : 4096;
    SRunner *sr = srunner_create(libskc_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
