/* Integration: the real daemon (`skeld serve`) as a child process, driven through libskc,
 * skelctl and raw sockets, and compared with the offline front end (`skeld eval`/`render`).
 *
 * Every test starts its own daemon with a unix listener and a loopback TCP listener on port 0
 * and learns the URIs from its "listening URI" lines. Cleanup does not depend on the test
 * passing: in fork mode Check runs each test in its own process group and SIGKILLs the group
 * when the test ends, so a daemon never outlives a failed test; the checked teardown stops
 * daemons otherwise (and after a failure with CK_FORK=no). Files live in a temp dir made per
 * TCase by an unchecked fixture, which runs in the parent and so also cleans up after failed
 * tests. The program exits 77 (skip) when the daemon cannot bind its listeners at all. */
#define _GNU_SOURCE     /* nftw, symlink, syscall (renameat2) */
#include "autoconfig.h" /* PACKAGE_VERSION */

#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "skc.h"
#include "skp_msg.h"
#include "skp_parser.h"
#include "testhelp.h"

enum { MAX_DAEMONS = 3, MAX_ARGV = 48, CMD_MS = 20000 };
enum { UP = 0, NO_BIND = 1, BROKEN = 2 };

static const char *g_bin, *g_ctl, *g_samples; /* $SKELD_BIN, $SKELD_CTL, $SKELD_SAMPLES */
static char g_tmp[96];                        /* the TCase's temp dir (unchecked fixture) */
static char g_work[128];                      /* this test's dir inside it (checked fixture) */
static long g_maxfd;

/* ---- small utilities ------------------------------------------------------------------- */

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A NULL-terminated list of extra command-line arguments. */
#define FLAGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
}

/* read() with a deadline: bytes read, 0 at end of stream, -1 on an error or when the deadline
 * passes (errno ETIMEDOUT). */
static ssize_t read_timed(int fd, void *buf, size_t n, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd p = {fd, POLLIN, 0};
        int rc = poll(&p, 1, (int)left);
        if (rc < 0 && errno != EINTR)
            return -1;
        if (rc <= 0)
            continue;
        ssize_t r = read(fd, buf, n);
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        return r;
    }
}

/* A whole file, NUL-terminated (malloc'd), or NULL. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        char *grown = cap - n < 4096 ? realloc(buf, cap *= 2) : buf;
        if (!grown)
            free(buf);
        buf = grown;
    }
    fclose(f);
    if (buf)
        buf[n] = 0;
    if (len)
        *len = n;
    return buf;
}

static void spit(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f && fwrite(p, 1, n, f) == n && fclose(f) == 0, "cannot write %s", path);
}

static void copy_file(const char *from, const char *to)
{
    size_t n;
    char *data = slurp(from, &n);
    ck_assert_msg(data != NULL, "cannot read %s", from);
    spit(to, data, n);
    free(data);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    remove(path);
    return 0;
}

static void rm_rf(const char *dir)
{
    if (dir[0])
        nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* dir/name into out (PATH_MAX). */
static const char *join(char *out, const char *dir, const char *name)
{
    int n = snprintf(out, PATH_MAX, "%s/%s", dir, name);
    ck_assert_msg(n > 0 && n < PATH_MAX, "path too long: %s/%s", dir, name);
    return out;
}

/* ---- child processes ------------------------------------------------------------------- */

/* The flags as one string, for failure messages. */
static const char *describe(const char *const *flags)
{
    static char buf[512];
    buf[0] = 0;
    for (int i = 0; flags[i]; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? " " : "", flags[i]);
    return buf;
}

/* In a forked child, before exec: async-signal-safe calls only. */
static void child_exec(const char *const *argv, const char *cwd, int out_fd, int err_fd)
{
    if (cwd && chdir(cwd))
        _exit(126);
    if (out_fd >= 0)
        dup2(out_fd, 1);
    if (err_fd >= 0)
        dup2(err_fd, 2);
    /* Nothing of ours leaks in: an inherited client socket would keep a connection open
     * after the test closed it. */
    for (long fd = 3; fd < g_maxfd; fd++)
        close((int)fd);
    execv(argv[0], (char *const *)argv);
    _exit(127);
}

/* Polls for pid's exit for up to timeout_ms; true (with *status) once it has exited. */
static bool wait_exit(pid_t pid, int timeout_ms, int *status)
{
    int64_t deadline = now_ms() + timeout_ms;
    for (;;) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w == pid)
            return true;
        if ((w < 0 && errno != EINTR) || now_ms() > deadline)
            return false;
        sleep_ms(10);
    }
}

/* Reads fd to its end into a malloc'd NUL-terminated buffer; false on timeout. */
static bool read_all(int fd, int64_t deadline, char **out, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    ssize_t r = -1;
    while (buf && (r = read_timed(fd, buf + n, cap - n - 1, deadline)) > 0) {
        n += (size_t)r;
        char *grown = cap - n < 4096 ? realloc(buf, cap *= 2) : buf;
        if (!grown)
            free(buf);
        buf = grown;
    }
    ck_assert_ptr_nonnull(buf);
    buf[n] = 0;
    *out = buf;
    *len = n;
    return r == 0;
}

/* Runs argv (no shell) in cwd (NULL: ours) with stdout captured into *out (free it) and
 * stderr passed through to the test log. Returns the exit status, or -1 if it did not exit
 * normally in time. */
static int run_in(const char *const *argv, const char *cwd, char **out, size_t *len)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
        child_exec(argv, cwd, p[1], -1);
    close(p[1]);
    bool done = read_all(p[0], now_ms() + CMD_MS, out, len);
    close(p[0]);
    int status = 0;
    if (!done || !wait_exit(pid, 5000, &status)) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int run_cmd(const char *const *argv, char **out, size_t *len)
{
    return run_in(argv, NULL, out, len);
}

/* Runs argv in cwd for its files: it must exit 0. */
static void run_ok(const char *const *argv, const char *cwd)
{
    char *out;
    size_t len;
    int rc = run_in(argv, cwd, &out, &len);
    free(out);
    ck_assert_msg(rc == 0, "%s %s exited %d", argv[0], describe(argv + 1), rc);
}

/* argv[at..] = extra (NULL-terminated), then NULL; returns the new count. */
static int append_args(const char **argv, int at, const char *const *extra)
{
    for (int i = 0; extra && extra[i]; i++) {
        ck_assert_int_lt(at, MAX_ARGV - 1);
        argv[at++] = extra[i];
    }
    argv[at] = NULL;
    return at;
}

/* ---- the daemon ------------------------------------------------------------------------ */

struct daemon {
    pid_t pid;  /* 0 when the slot is free */
    int out_fd; /* its stdout, kept open so a late line cannot hit a closed pipe */
    char dir[160], err[176];
    char unix_uri[192], tcp_uri[128];
};

static struct daemon g_daemons[MAX_DAEMONS];

/* Consumes the whole lines in buf[0..n), noting listener URIs; returns the partial rest. */
static size_t take_lines(struct daemon *d, char *buf, size_t n)
{
    char *line = buf, *nl;
    while ((nl = memchr(line, '\n', n - (size_t)(line - buf)))) {
        *nl = 0;
        if (!strncmp(line, "listening unix:", 15))
            snprintf(d->unix_uri, sizeof d->unix_uri, "%s", line + 10);
        else if (!strncmp(line, "listening tcp://", 16))
            snprintf(d->tcp_uri, sizeof d->tcp_uri, "%s", line + 10);
        line = nl + 1;
    }
    size_t rest = n - (size_t)(line - buf);
    memmove(buf, line, rest);
    return rest;
}

/* The daemon stopped before listening: a failed bind is NO_BIND, anything else BROKEN. */
static int startup_failed(struct daemon *d, bool eof, char *why, size_t whylen)
{
    int status;
    if (!eof || !wait_exit(d->pid, 5000, &status)) {
        snprintf(why, whylen, "skeld printed no \"listening\" lines within 10 s");
        return BROKEN;
    }
    d->pid = 0;
    char *log = slurp(d->err, NULL);
    int rc = log && strstr(log, "cannot listen") ? NO_BIND : BROKEN;
    snprintf(why, whylen, "skeld exited (status 0x%x) before listening: %s", (unsigned)status,
             log ? log : "(no log)");
    free(log);
    return rc;
}

static int await_listening(struct daemon *d, char *why, size_t whylen)
{
    char buf[4096];
    size_t n = 0;
    int64_t deadline = now_ms() + 120000;
    while (!d->unix_uri[0] || !d->tcp_uri[0]) {
        ssize_t r = read_timed(d->out_fd, buf + n, sizeof buf - 1 - n, deadline);
        if (r <= 0)
            return startup_failed(d, r == 0, why, whylen);
        n = take_lines(d, buf, n + (size_t)r);
        if (n == sizeof buf - 1)
            n = 0; /* an absurdly long line: drop it */
    }
    return UP;
}

/* Starts `skeld serve` on a unix socket in its own dir and on 127.0.0.1:0, with --root and
 * extra options; UP once both listeners are reported. */
static int daemon_spawn(struct daemon *d, const char *base, const char *root,
                        const char *const *extra, char *why, size_t whylen)
{
    memset(d, 0, sizeof *d);
    d->out_fd = -1;
    char sock[176], listen_unix[192];
    snprintf(d->dir, sizeof d->dir, "%s/skeld.XXXXXX", base);
    if (!mkdtemp(d->dir)) {
        snprintf(why, whylen, "mkdtemp %s: %s", d->dir, strerror(errno));
        return BROKEN;
    }
    snprintf(d->err, sizeof d->err, "%s/stderr", d->dir);
    snprintf(sock, sizeof sock, "%s/s.sock", d->dir);
    snprintf(listen_unix, sizeof listen_unix, "unix:%s", sock);
    if (strlen(sock) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
        snprintf(why, whylen, "socket path too long: %s", sock);
        return BROKEN;
    }
    const char *argv[MAX_ARGV] = {
        g_bin,    "serve", "--listen",    listen_unix, "--listen", "tcp://127.0.0.1:0",
        "--root", root,    "--log-level", "warn"};
    /* a test's own --log-level in place of warn: a flag is given once */
    int flags_end = 10;
    for (int i = 0; extra && extra[i]; i++)
        if (!strcmp(extra[i], "--log-level"))
            flags_end = 8;
    append_args(argv, flags_end, extra);
    int p[2], errfd = open(d->err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (errfd < 0 || pipe(p)) {
        snprintf(why, whylen, "%s: %s", d->err, strerror(errno));
        if (errfd >= 0)
            close(errfd);
        return BROKEN;
    }
    d->pid = fork();
    if (d->pid == 0)
        child_exec(argv, NULL, p[1], errfd);
    close(p[1]);
    close(errfd);
    d->out_fd = p[0];
    if (d->pid < 0) {
        d->pid = 0;
        snprintf(why, whylen, "fork: %s", strerror(errno));
        return BROKEN;
    }
    return await_listening(d, why, whylen);
}

/* A daemon for the current test, or the test fails. */
static struct daemon *daemon_up(const char *root, const char *const *extra)
{
    struct daemon *d = NULL;
    for (int i = 0; i < MAX_DAEMONS && !d; i++)
        if (!g_daemons[i].pid)
            d = &g_daemons[i];
    ck_assert_ptr_nonnull(d);
    char why[4096];
    int rc = daemon_spawn(d, g_work, root, extra, why, sizeof why);
    ck_assert_msg(rc == UP, "%s", why);
    return d;
}

/* Teardown: no questions asked. */
static void daemon_kill(struct daemon *d)
{
    if (d->pid > 0) {
        kill(d->pid, SIGKILL);
        while (waitpid(d->pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    if (d->out_fd >= 0)
        close(d->out_fd);
    d->pid = 0;
    d->out_fd = -1;
}

/* The daemon has exited (status given): it must be a clean exit 0 with no error logged
 * ("loop did not close cleanly" would name a handle or request left behind). */
static void assert_clean_exit(struct daemon *d, int status)
{
    d->pid = 0;
    close(d->out_fd);
    d->out_fd = -1;
    char *log = slurp(d->err, NULL);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "skeld exit status 0x%x: %s",
                  (unsigned)status, log ? log : "");
    ck_assert_msg(log && !strstr(log, " level=error "), "skeld logged an error: %s", log);
    free(log);
}

/* SIGTERM; the daemon must then exit cleanly within 10 s. */
/* After SIGTERM: the daemon exits 0, cleanly, within 5 s of draining. */
static void expect_drained_exit(struct daemon *d)
{
    int status = 0;
    ck_assert_msg(wait_exit(d->pid, 5000, &status), "skeld still running 5 s after draining");
    assert_clean_exit(d, status);
}

static void daemon_stop(struct daemon *d)
{
    int status = 0;
    ck_assert_int_eq(kill(d->pid, SIGTERM), 0);
    ck_assert_msg(wait_exit(d->pid, 10000, &status), "skeld did not exit within 10 s of SIGTERM");
    assert_clean_exit(d, status);
}

static bool daemon_alive(const struct daemon *d)
{
    int status;
    return waitpid(d->pid, &status, WNOHANG) == 0;
}

/* ---- fixtures -------------------------------------------------------------------------- */

static void make_tmp(void)
{
    const char *t = getenv("TMPDIR");
    /* Short enough that every socket path fits in sun_path. */
    if (!t || !*t || strlen(t) > 48)
        t = "/tmp";
    snprintf(g_tmp, sizeof g_tmp, "%s/skrt.XXXXXX", t);
    if (!mkdtemp(g_tmp)) {
        perror("check_roundtrip: mkdtemp");
        exit(99);
    }
}

static void tmp_setup(void)
{
    make_tmp();
}

static void tmp_teardown(void)
{
    rm_rf(g_tmp);
    g_tmp[0] = 0;
}

static void test_setup(void)
{
    for (int i = 0; i < MAX_DAEMONS; i++) {
        g_daemons[i].pid = 0;
        g_daemons[i].out_fd = -1;
    }
    snprintf(g_work, sizeof g_work, "%s/t.XXXXXX", g_tmp);
    ck_assert_ptr_nonnull(mkdtemp(g_work));
}

static void test_teardown(void)
{
    for (int i = 0; i < MAX_DAEMONS; i++)
        daemon_kill(&g_daemons[i]);
    rm_rf(g_work);
}

/* ---- libskc helpers -------------------------------------------------------------------- */

static skc_client *client_open(const char *uri, const char *token)
{
    skc_options o = {uri, token, 5000, 20000, 0};
    skc_client *c = NULL;
    int rc = skc_connect(&c, &o);
    ck_assert_msg(rc == 0, "connect %s: %s", uri, skc_errmsg(c));
    return c;
}

/* A client once the daemon has room again: it may still refuse while it has not yet seen
 * earlier clients leave, so retry (bounded) until a PING is answered. */
static skc_client *client_when_room(const char *uri)
{
    skc_options o = {uri, NULL, 5000, 20000, 0};
    int64_t deadline = now_ms() + 120000;
    for (;;) {
        skc_client *c = NULL;
        if (skc_connect(&c, &o) == 0 && skc_ping(c, "k", 1) == 0)
            return c;
        skc_free(c);
        ck_assert_msg(now_ms() < deadline, "no room for a client after 2 minutes");
        sleep_ms(10);
    }
}

/* rc must be an error reply with the given wire status. */
static void expect_status(skc_client *c, int rc, int status, const char *what)
{
    ck_assert_msg(rc == SKC_ESERVER && skc_status(c) == status,
                  "%s: expected status %d (%s), got rc %d status %d: %s", what, status,
                  skc_status_str(status), rc, skc_status(c), skc_errmsg(c));
}

static void load_path(skc_client *c, const char *path, unsigned char id[SKC_ID_SIZE])
{
    int rc = skc_load_path(c, path, id, NULL);
    ck_assert_msg(rc == 0, "LOAD_PATH %s: %s", path, skc_errmsg(c));
}

/* A stateless request for one animation. */
static void eval_one(skc_eval *ev, const unsigned char id[SKC_ID_SIZE], const char *anim,
                     double frame, double smooth)
{
    skc_eval_init(ev);
    memcpy(ev->armature, id, SKC_ID_SIZE);
    ev->anim_count = 1;
    ev->anims[0] = (skc_anim){anim, frame, smooth};
}

static skc_reply *pose_ok(skc_client *c, const skc_eval *ev)
{
    skc_reply *r = NULL;
    int rc = skc_pose(c, ev, &r);
    ck_assert_msg(rc == 0, "POSE: %s", skc_errmsg(c));
    return r;
}

static skc_reply *render_ok(skc_client *c, const skc_eval *ev, const skc_render_opts *ro)
{
    skc_reply *r = NULL;
    int rc = skc_render(c, ev, ro, &r);
    ck_assert_msg(rc == 0, "RENDER: %s", skc_errmsg(c));
    return r;
}

static bool same_f64s(const double *a, const double *b, size_t n)
{
    return memcmp(a, b, n * sizeof *a) == 0; /* bit for bit: -0 and 0 differ too */
}

/* The first field in which two bones differ, or NULL. */
/* Loads robot.skf and sets up a stateless RENDER of Walk at frame 10, size x size. */
static void robot_walk_render(skc_client *c, skc_eval *ev, skc_render_opts *ro, uint32_t size)
{
    unsigned char id[SKC_ID_SIZE];
    load_path(c, "robot.skf", id);
    eval_one(ev, id, "Walk", 10, 0);
    skc_render_opts_init(ro);
    ro->width = ro->height = size;
}

static const char *bone_diff(const skc_bone *x, const skc_bone *y)
{
    const double fx[5] = {x->pos.x, x->pos.y, x->rot, x->scale.x, x->scale.y};
    const double fy[5] = {y->pos.x, y->pos.y, y->rot, y->scale.x, y->scale.y};
    if (!same_f64s(fx, fy, 5))
        return "pos/rot/scale";
    if (!same_f64s(x->matrix, y->matrix, 6))
        return "matrix";
    if (x->hidden != y->hidden || x->zindex != y->zindex || strcmp(x->tex, y->tex))
        return "hidden/zindex/tex";
    if (!same_f64s(x->tint, y->tint, 4))
        return "tint";
    if (x->vertex_count != y->vertex_count)
        return "vertex count";
    for (uint32_t v = 0; v < x->vertex_count; v++)
        if (!same_f64s(&x->vertices[v].x, &y->vertices[v].x, 1) ||
            !same_f64s(&x->vertices[v].y, &y->vertices[v].y, 1))
            return "vertices";
    return NULL;
}

/* NULL when two POSE replies agree in every field, else what differs. */
static const char *pose_diff(const skc_reply *a, const skc_reply *b)
{
    static char msg[128];
    uint32_t na, nb;
    const skc_bone *x = skc_reply_bones(a, &na), *y = skc_reply_bones(b, &nb);
    if (na != nb || na == 0) {
        snprintf(msg, sizeof msg, "%u vs %u bones", na, nb);
        return msg;
    }
    for (uint32_t i = 0; i < na; i++) {
        const char *d = bone_diff(&x[i], &y[i]);
        if (d) {
            snprintf(msg, sizeof msg, "bone %u: %s", i, d);
            return msg;
        }
    }
    return NULL;
}

static void assert_same_pose(const skc_reply *a, const skc_reply *b, const char *what)
{
    const char *d = pose_diff(a, b);
    ck_assert_msg(d == NULL, "%s: %s", what, d);
}

static const skc_counter *find_counter(const skc_reply *r, const char *name)
{
    uint32_t n;
    const skc_counter *k = skc_reply_counters(r, &n);
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(k[i].name, name))
            return &k[i];
    return NULL;
}

static uint64_t counter(skc_client *c, const char *name)
{
    skc_reply *r = NULL;
    ck_assert_msg(skc_stats(c, &r) == 0, "STATS: %s", skc_errmsg(c));
    const skc_counter *k = find_counter(r, name);
    ck_assert_msg(k != NULL, "STATS has no counter %s", name);
    uint64_t v = k->value;
    skc_reply_free(r);
    return v;
}

/* Polls a counter until it has the wanted value (work finishing in the background). */
static void await_counter(skc_client *c, const char *name, uint64_t want)
{
    int64_t deadline = now_ms() + 120000;
    uint64_t v;
    while ((v = counter(c, name)) != want && now_ms() < deadline)
        sleep_ms(20);
    ck_assert_msg(v == want, "%s stayed %llu, expected %llu", name, (unsigned long long)v,
                  (unsigned long long)want);
}

static const char *sample(char *out, const char *name)
{
    return join(out, g_samples, name);
}

/* ---- raw sockets: bytes libskc would never send ---------------------------------------- */

struct raw {
    int fd;
    size_t len, used; /* bytes in buf; bytes of it the last frame returned took */
    uint8_t buf[1 << 16];
};

static int dial_unix(const char *path)
{
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    ck_assert_uint_lt(strlen(path), sizeof sun.sun_path);
    memcpy(sun.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_msg(connect(fd, (struct sockaddr *)&sun, sizeof sun) == 0, "connect %s: %s", path,
                  strerror(errno));
    return fd;
}

static int dial_tcp(const char *hostport)
{
    struct sockaddr_in sin = {.sin_family = AF_INET};
    unsigned port = 0;
    ck_assert_msg(sscanf(hostport, "127.0.0.1:%u", &port) == 1 && port > 0 && port < 65536,
                  "not a loopback URI: %s", hostport);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sin.sin_port = htons((uint16_t)port);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_msg(connect(fd, (struct sockaddr *)&sin, sizeof sin) == 0, "connect %s: %s", hostport,
                  strerror(errno));
    return fd;
}

static struct raw *raw_open(const char *uri)
{
    struct raw *r = calloc(1, sizeof *r);
    ck_assert_ptr_nonnull(r);
    r->fd = !strncmp(uri, "unix:", 5) ? dial_unix(uri + 5) : dial_tcp(uri + 6);
    return r;
}

static void raw_close(struct raw *r)
{
    close(r->fd);
    free(r);
}

static void raw_send(struct raw *r, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n) {
        ssize_t w = send(r->fd, b, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        ck_assert_msg(w > 0, "send: %s", strerror(errno));
        b += w;
        n -= (size_t)w;
    }
}

/* A well-formed request frame (header, then body). */
static void raw_frame(struct raw *r, uint8_t op, uint32_t id, const void *body, size_t len)
{
    uint8_t hdr[SKP_HEADER_SIZE];
    struct skp_header h = {SKP_VERSION, op, 0, 0, id, (uint32_t)len};
    skp_encode_header(&h, hdr);
    raw_send(r, hdr, sizeof hdr);
    if (len)
        raw_send(r, body, len);
}

/* The next frame from the daemon: 1 (*h, and *body valid until the next call), 0 at a clean
 * end of stream, -1 on a timeout, a socket error or bytes that are not a frame. */
static int raw_recv(struct raw *r, struct skp_header *h, const uint8_t **body)
{
    memmove(r->buf, r->buf + r->used, r->len - r->used);
    r->len -= r->used;
    r->used = 0;
    int64_t deadline = now_ms() + 120000;
    for (;;) {
        struct skp_frame f;
        size_t used;
        int rc = skp_parser_feed(r->buf, r->len, sizeof r->buf - SKP_HEADER_SIZE, &f, &used);
        if (rc == SKP_FRAME) {
            *h = f.h;
            *body = f.body;
            r->used = used;
            return 1;
        }
        if (rc < 0)
            return -1;
        ssize_t n = read_timed(r->fd, r->buf + r->len, sizeof r->buf - r->len, deadline);
        if (n <= 0)
            return n == 0 && r->len == 0 ? 0 : -1;
        r->len += (size_t)n;
    }
}

/* The daemon closes the stream (end of file, or a reset) with nothing more to say. */
static void raw_expect_closed(struct raw *r)
{
    uint8_t b[256];
    ck_assert_msg(r->len == r->used, "bytes after the last reply");
    ssize_t n = read_timed(r->fd, b, sizeof b, now_ms() + 120000);
    ck_assert_msg(n == 0 || (n < 0 && errno == ECONNRESET),
                  "the daemon did not close the connection (read %zd: %s)", n,
                  n < 0 ? strerror(errno) : "more data");
}

/* Reads the next reply and checks its header: a reply to (op, id) with that status. */
static const uint8_t *raw_expect(struct raw *r, int op, uint32_t id, int status, uint32_t *len)
{
    struct skp_header h;
    const uint8_t *body = NULL;
    ck_assert_msg(raw_recv(r, &h, &body) == 1, "no reply frame (expected status %d)", status);
    ck_assert_msg(h.flags == SKP_F_REPLY && h.opcode == op && h.id == id && h.status == status,
                  "reply op %u id %u status %u flags %u; expected op %d id %u status %d", h.opcode,
                  h.id, h.status, h.flags, op, id, status);
    if (len)
        *len = h.body_len;
    return body;
}

/* An error reply: the expected header and a body of one non-empty message. */
/* An error reply whose message is want (NULL: any message). */
static void raw_expect_error_saying(struct raw *r, int op, uint32_t id, int status,
                                    const char *want)
{
    uint32_t len;
    const uint8_t *body = raw_expect(r, op, id, status, &len);
    struct skp_reader rd;
    size_t mlen = 0;
    skp_reader_init(&rd, body, len);
    const char *msg = skp_read_str(&rd, &mlen);
    ck_assert_msg(msg && mlen > 0 && skp_reader_finish(&rd) == SKP_EOK,
                  "the error body is not one message");
    ck_assert_msg(!want || (mlen == strlen(want) && !memcmp(msg, want, mlen)),
                  "the error says \"%.*s\", not \"%s\"", (int)mlen, msg, want);
}

static void raw_expect_error(struct raw *r, int op, uint32_t id, int status)
{
    raw_expect_error_saying(r, op, id, status, NULL);
}

static void raw_ping(struct raw *r, uint32_t id, const char *payload)
{
    uint8_t body[64];
    struct skp_writer w;
    skp_writer_init(&w, body, sizeof body);
    skp_write_bytes(&w, payload, strlen(payload));
    raw_frame(r, SKP_OP_PING, id, body, w.len);
}

static void raw_expect_pong(struct raw *r, uint32_t id, const char *payload)
{
    uint32_t len;
    const uint8_t *body = raw_expect(r, SKP_OP_PING, id, SKP_S_OK, &len);
    ck_assert_uint_eq(len, 4 + strlen(payload));
    ck_assert_uint_eq(skp_get_u32(body), strlen(payload));
    ck_assert(memcmp(body + 4, payload, strlen(payload)) == 0);
}

static void raw_hello(struct raw *r, uint32_t id, const char *token)
{
    uint8_t body[64];
    struct skp_writer w;
    skp_writer_init(&w, body, sizeof body);
    skp_write_u16(&w, SKP_VERSION);
    skp_write_str(&w, token, strlen(token));
    raw_frame(r, SKP_OP_HELLO, id, body, w.len);
}

static void raw_load_path(struct raw *r, uint32_t id, const char *path)
{
    uint8_t body[256];
    struct skp_writer w;
    skp_writer_init(&w, body, sizeof body);
    skp_write_str(&w, path, strlen(path));
    raw_frame(r, SKP_OP_LOAD_PATH, id, body, w.len);
}

/* ======================================================================================== */
/* 1. Every message through libskc                                                          */
/* ======================================================================================== */

/* Pipelined PINGs collected in reverse order: each reply echoes its own payload and id. */
static void check_pipelined_pings(skc_client *c)
{
    static const size_t sizes[3] = {1, 300, SKC_MAX_PING};
    uint8_t payload[3][SKC_MAX_PING];
    uint32_t ids[3];
    for (int i = 0; i < 3; i++) {
        for (size_t k = 0; k < sizes[i]; k++)
            payload[i][k] = (uint8_t)(k * 31 + (size_t)i);
        ck_assert_int_eq(skc_send_ping(c, payload[i], sizes[i], &ids[i]), 0);
    }
    for (int i = 2; i >= 0; i--) {
        skc_reply *r = NULL;
        ck_assert_msg(skc_recv(c, ids[i], &r) == 0, "PING: %s", skc_errmsg(c));
        size_t len;
        const void *p = skc_reply_payload(r, &len);
        ck_assert_int_eq(skc_reply_op(r), SKC_OP_PING);
        ck_assert_uint_eq(skc_reply_id(r), ids[i]);
        ck_assert_uint_eq(len, sizes[i]);
        ck_assert(memcmp(p, payload[i], len) == 0);
        skc_reply_free(r);
    }
    ck_assert_uint_eq(skc_pending(c), 0);
}

START_TEST(hello_and_ping)
{
    struct daemon *d = daemon_up(g_samples, NULL);
    skc_client *c = client_open(d->unix_uri, NULL);
    ck_assert_uint_eq(skc_server_version(c), 1);
    ck_assert_msg(!strncmp(skc_server_name(c), "skeld ", 6), "server name \"%s\"",
                  skc_server_name(c));
    struct skp_str version, node; /* "skeld VERSION on NODE", the node the host's name */
    ck_assert_msg(skp_hello_name_parse(skc_server_name(c), &version, &node),
                  "server name \"%s\" names no node", skc_server_name(c));
    ck_assert(version.len == strlen(PACKAGE_VERSION) &&
              !memcmp(version.p, PACKAGE_VERSION, version.len));
    ck_assert_uint_eq(skc_server_max_frame(c), 64u << 20);
    ck_assert_int_eq(skc_ping(c, "roundtrip", 9), 0);
    ck_assert_int_eq(skc_ping(c, NULL, 0), 0);
    check_pipelined_pings(c);
    ck_assert_int_eq(skc_hello(c, NULL), 0); /* HELLO again on an open connection */
    ck_assert_int_eq(skc_ping(c, "again", 5), 0);
    skc_free(c);
    daemon_stop(d);
}
END_TEST

static void assert_same_summary(const skc_summary *a, const skc_summary *b)
{
    ck_assert_uint_eq(a->bone_count, b->bone_count);
    ck_assert_uint_eq(a->anim_count, b->anim_count);
    for (uint32_t i = 0; i < a->anim_count; i++) {
        ck_assert_str_eq(a->anims[i].name, b->anims[i].name);
        ck_assert(a->anims[i].fps == b->anims[i].fps);
        ck_assert_uint_eq(a->anims[i].frames, b->anims[i].frames);
    }
    ck_assert_uint_eq(a->style_count, b->style_count);
    for (uint32_t i = 0; i < a->style_count; i++)
        ck_assert_str_eq(a->styles[i], b->styles[i]);
    ck_assert_uint_eq(a->atlas_count, b->atlas_count);
}

START_TEST(load_by_path_and_bytes)
{
    struct daemon *d = daemon_up(g_samples, NULL);
    skc_client *c = client_open(d->tcp_uri, NULL);
    unsigned char by_path[SKC_ID_SIZE], by_bytes[SKC_ID_SIZE], again[SKC_ID_SIZE];
    unsigned char other[SKC_ID_SIZE];
    skc_reply *rp = NULL, *rb = NULL;
    ck_assert_msg(skc_load_path(c, "robot.skf", by_path, &rp) == 0, "%s", skc_errmsg(c));
    ck_assert(memcmp(skc_reply_armature_id(rp), by_path, SKC_ID_SIZE) == 0);
    char path[PATH_MAX];
    size_t len;
    char *skf = slurp(sample(path, "robot.skf"), &len);
    ck_assert_ptr_nonnull(skf);
    ck_assert_msg(skc_load_bytes(c, skf, len, by_bytes, &rb) == 0, "%s", skc_errmsg(c));
    ck_assert_msg(memcmp(by_path, by_bytes, SKC_ID_SIZE) == 0, "path and upload ids differ");
    assert_same_summary(skc_reply_summary(rp), skc_reply_summary(rb));
    ck_assert_int_eq(skc_load_bytes(c, skf, len, again, NULL), 0);
    ck_assert(memcmp(by_bytes, again, SKC_ID_SIZE) == 0);
    load_path(c, "critter.skf", other);
    ck_assert(memcmp(by_path, other, SKC_ID_SIZE) != 0);
    /* Three loads of one file and one of another: two armatures, each loaded once. */
    ck_assert_uint_eq(counter(c, "cache.loads"), 2);
    ck_assert_uint_eq(counter(c, "cache.entries"), 2);
    expect_status(c, skc_load_bytes(c, "not a zip", 9, again, NULL), SKC_S_BAD_FILE, "garbage");
    expect_status(c, skc_load_path(c, "nothing.skf", again, NULL), SKC_S_NOT_FOUND, "missing");
    skc_reply_free(rp);
    skc_reply_free(rb);
    free(skf);
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* `skeld info FILE` parsed as JSON. */
static json_t *skeld_info(const char *file)
{
    const char *argv[] = {g_bin, "info", file, NULL};
    char *out;
    size_t len;
    ck_assert_int_eq(run_cmd(argv, &out, &len), 0);
    json_error_t err;
    json_t *j = json_loads(out, 0, &err);
    ck_assert_msg(j != NULL, "skeld info: %s", err.text);
    free(out);
    return j;
}

static void check_info_against(const skc_reply *r, json_t *j)
{
    const skc_summary *s = skc_reply_summary(r);
    uint32_t nb;
    const skc_bone_info *b = skc_reply_bone_infos(r, &nb);
    json_t *bones = json_object_get(j, "bones"), *anims = json_object_get(j, "animations");
    json_t *styles = json_object_get(j, "styles"), *atlases = json_object_get(j, "atlases");
    ck_assert_uint_eq(json_array_size(bones), s->bone_count);
    ck_assert_uint_eq(nb, s->bone_count);
    for (uint32_t i = 0; i < nb; i++) {
        json_t *e = json_array_get(bones, i);
        ck_assert_str_eq(b[i].name, json_string_value(json_object_get(e, "name")));
        ck_assert_int_eq(b[i].parent, json_integer_value(json_object_get(e, "parent")));
    }
    ck_assert_uint_eq(json_array_size(anims), s->anim_count);
    for (uint32_t i = 0; i < s->anim_count; i++) {
        json_t *e = json_array_get(anims, i);
        ck_assert_str_eq(s->anims[i].name, json_string_value(json_object_get(e, "name")));
        ck_assert(s->anims[i].fps == json_number_value(json_object_get(e, "fps")));
        ck_assert_int_eq(s->anims[i].frames, json_integer_value(json_object_get(e, "frames")));
    }
    ck_assert_uint_eq(json_array_size(styles), s->style_count);
    for (uint32_t i = 0; i < s->style_count; i++)
        ck_assert_str_eq(s->styles[i],
                         json_string_value(json_object_get(json_array_get(styles, i), "name")));
    ck_assert_uint_eq(json_array_size(atlases), s->atlas_count);
}

/* n uploads of the same bytes, pipelined: their request ids into ids. */
static void send_loads(skc_client *c, const char *skf, size_t len, int n, uint32_t *ids)
{
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(skc_send_load_bytes(c, skf, len, &ids[i]), 0);
}

/* A burst of uploads of one uncached file parses it once: the LOADs that arrive while it is
 * being parsed wait for that parse, and those after it find it cached. */
START_TEST(concurrent_loads_parse_once)
{
    enum { N = 8 };
    struct daemon *d = daemon_up(g_samples, FLAGS("--threads", "2"));
    skc_client *c = client_open(d->unix_uri, NULL);
    char path[PATH_MAX];
    size_t len;
    char *skf = slurp(sample(path, "robot.skf"), &len);
    ck_assert_ptr_nonnull(skf);
    uint32_t ids[N];
    send_loads(c, skf, len, N, ids);
    unsigned char first[SKC_ID_SIZE];
    for (int i = 0; i < N; i++) {
        skc_reply *r = NULL;
        ck_assert_msg(skc_recv(c, ids[i], &r) == 0, "LOAD %d: %s", i, skc_errmsg(c));
        if (i == 0)
            memcpy(first, skc_reply_armature_id(r), SKC_ID_SIZE);
        ck_assert(memcmp(first, skc_reply_armature_id(r), SKC_ID_SIZE) == 0);
        ck_assert_uint_eq(skc_reply_summary(r)->bone_count, 25);
        skc_reply_free(r);
    }
    ck_assert_uint_eq(counter(c, "loads.parsed"), 1);
    ck_assert_uint_eq(counter(c, "cache.entries"), 1);
    /* The same for bytes that fail to parse: every LOAD gets the parse's error. */
    skf[len / 2] ^= 0x55;
    skf[len / 2 + 1] ^= 0x55;
    send_loads(c, skf, len, N, ids);
    for (int i = 0; i < N; i++) {
        int rc = skc_recv(c, ids[i], NULL);
        ck_assert_msg(rc == SKC_ESERVER && skc_status(c) == SKC_S_BAD_FILE, "bad LOAD %d: %s", i,
                      skc_errmsg(c));
    }
    ck_assert_uint_ge(counter(c, "loads.parsed"), 2);
    free(skf);
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* The LOADs that wait on another's parse are answered from the entry it adds even when the
 * cache lets that entry go as soon as the first reply is made: over --cache-mb with an
 * armature in use (an instance holds robot's 0.9 MiB of 1), critter's 0.6 MiB are evicted at
 * their last unref. The waiters were answered INTERNAL "armature evicted" (HTTP: 500). */
START_TEST(concurrent_loads_outlive_a_full_cache)
{
    enum { N = 4 };
    struct daemon *d = daemon_up(g_samples, FLAGS("--threads", "2", "--cache-mb", "1"));
    skc_client *c = client_open(d->unix_uri, NULL);
    unsigned char robot[SKC_ID_SIZE];
    uint32_t inst = 0;
    load_path(c, "robot.skf", robot);
    ck_assert_int_eq(skc_instance_new(c, robot, &inst), 0);
    char path[PATH_MAX];
    size_t len;
    char *skf = slurp(sample(path, "critter.skf"), &len);
    ck_assert_ptr_nonnull(skf);
    uint32_t ids[N];
    send_loads(c, skf, len, N, ids);
    for (int i = 0; i < N; i++) {
        skc_reply *r = NULL;
        ck_assert_msg(skc_recv(c, ids[i], &r) == 0, "LOAD %d: %s", i, skc_errmsg(c));
        skc_reply_free(r);
    }
    /* Usually the burst waits on one parse (2 in all, with robot's). A LOAD that arrives after
     * the parse's replies, the entry evicted by then, parses again: on a slow machine (TSan)
     * the uploads can be that far apart, so only the bounds are certain. */
    uint64_t parsed = counter(c, "loads.parsed");
    ck_assert_uint_ge(parsed, 2);
    ck_assert_uint_le(parsed, 1 + N);
    free(skf);
    skc_free(c);
    daemon_stop(d);
}
END_TEST

START_TEST(info_matches_skeld_info)
{
    static const char *const files[2] = {"robot.skf", "critter.skf"};
    struct daemon *d = daemon_up(g_samples, NULL);
    skc_client *c = client_open(d->unix_uri, NULL);
    for (int i = 0; i < 2; i++) {
        unsigned char id[SKC_ID_SIZE];
        skc_reply *load = NULL, *info = NULL;
        ck_assert_msg(skc_load_path(c, files[i], id, &load) == 0, "%s", skc_errmsg(c));
        ck_assert_msg(skc_info(c, id, &info) == 0, "INFO: %s", skc_errmsg(c));
        assert_same_summary(skc_reply_summary(load), skc_reply_summary(info));
        char path[PATH_MAX];
        json_t *j = skeld_info(sample(path, files[i]));
        check_info_against(info, j);
        json_decref(j);
        skc_reply_free(load);
        skc_reply_free(info);
    }
    unsigned char none[SKC_ID_SIZE] = {0};
    expect_status(c, skc_info(c, none, NULL), SKC_S_NOT_FOUND, "INFO of an unknown id");
    skc_free(c);
    daemon_stop(d);
}
END_TEST

START_TEST(instance_new_and_free)
{
    struct daemon *d = daemon_up(g_samples, NULL);
    skc_client *c = client_open(d->unix_uri, NULL), *other = client_open(d->tcp_uri, NULL);
    unsigned char id[SKC_ID_SIZE], none[SKC_ID_SIZE] = {0};
    uint32_t a = 0, b = 0, x = 0;
    load_path(c, "robot.skf", id);
    ck_assert_int_eq(skc_instance_new(c, id, &a), 0);
    ck_assert_int_eq(skc_instance_new(c, id, &b), 0);
    ck_assert(a != 0 && b != 0 && a != b);
    skc_eval ev;
    eval_one(&ev, id, "Walk", 3, 0);
    ev.target = SKC_TARGET_INSTANCE;
    ev.instance = a;
    skc_reply_free(pose_ok(c, &ev));
    /* Instances belong to their connection. */
    expect_status(other, skc_pose(other, &ev, NULL), SKC_S_NOT_FOUND, "another's instance");
    ck_assert_int_eq(skc_instance_free(c, a), 0);
    expect_status(c, skc_instance_free(c, a), SKC_S_NOT_FOUND, "freed twice");
    expect_status(c, skc_pose(c, &ev, NULL), SKC_S_NOT_FOUND, "POSE on a freed instance");
    ev.instance = b;
    skc_reply_free(pose_ok(c, &ev));
    expect_status(c, skc_instance_new(c, none, &x), SKC_S_NOT_FOUND, "instance of nothing");
    ck_assert_int_eq(skc_instance_free(c, b), 0);
    skc_free(other);
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* Instances count against one budget over all connections (--max-instance-mb): past it
 * INSTANCE_NEW is LIMIT, naming the option; a freed instance, or a closed connection's,
 * gives its bytes back. Before, 2,000 instances of a 10,000-bone armature took 5.6 GB. */
START_TEST(instances_have_a_memory_budget)
{
    struct daemon *d = daemon_up(g_samples, FLAGS("--max-instance-mb", "1"));
    skc_client *c = client_open(d->unix_uri, NULL), *other = client_open(d->tcp_uri, NULL);
    unsigned char id[SKC_ID_SIZE];
    load_path(c, "robot.skf", id);
    enum { MOST = 100000 };
    uint32_t inst = 0, first = 0, n = 0;
    int rc = 0;
    while (n < MOST && (rc = skc_instance_new(c, id, &inst)) == 0)
        first = first ? first : inst, n++;
    expect_status(c, rc, SKC_S_LIMIT, "INSTANCE_NEW past the budget");
    ck_assert_msg(strstr(skc_errmsg(c), "--max-instance-mb"), "%s", skc_errmsg(c));
    uint64_t held = counter(c, "instances.bytes");
    ck_assert_msg(n > 1 && held <= 1u << 20 && held > (1u << 20) - held / n,
                  "%u instances hold %llu bytes of a 1 MiB budget", n, (unsigned long long)held);
    /* the budget is the daemon's: another connection is refused too */
    expect_status(other, skc_instance_new(other, id, &inst), SKC_S_LIMIT, "on another connection");
    ck_assert_int_eq(skc_instance_free(c, first), 0);
    ck_assert_int_eq(skc_instance_new(other, id, &inst), 0);
    ck_assert_int_eq(skc_instance_free(other, inst), 0);
    skc_free(c);
    await_counter(other, "instances.bytes", 0);
    skc_free(other);
    daemon_stop(d);
}
END_TEST

/* POSE: the bones of robot.skf, the matrix built from pos/rot/scale, frames differ. */
static void check_pose_reply(skc_client *c, const unsigned char id[SKC_ID_SIZE])
{
    skc_eval ev;
    eval_one(&ev, id, "Walk", 10, 0);
    skc_reply *r10 = pose_ok(c, &ev);
    ev.anims[0].frame = 0;
    skc_reply *r0 = pose_ok(c, &ev);
    uint32_t n, textured = 0;
    const skc_bone *b = skc_reply_bones(r10, &n);
    ck_assert_uint_eq(n, 25);
    ck_assert_int_eq(skc_reply_op(r10), SKC_OP_POSE);
    for (uint32_t i = 0; i < n; i++) {
        double c0 = cos(b[i].rot) * b[i].scale.x, s0 = sin(b[i].rot) * b[i].scale.x;
        ck_assert(b[i].matrix[4] == b[i].pos.x && b[i].matrix[5] == b[i].pos.y);
        ck_assert(fabs(b[i].matrix[0] - c0) <= 1e-9 * (1 + fabs(c0)));
        ck_assert(fabs(b[i].matrix[1] - s0) <= 1e-9 * (1 + fabs(s0)));
        ck_assert(b[i].hidden == 0 || b[i].hidden == 1);
        textured += b[i].tex[0] != 0;
    }
    ck_assert_uint_gt(textured, 5);
    ck_assert_msg(pose_diff(r0, r10) != NULL, "frames 0 and 10 of Walk pose the same");
    skc_reply_free(r0);
    skc_reply_free(r10);
}

/* MESH: triangles over each drawn bone's own vertices, atlas coordinates inside the atlas. */
static void check_mesh_reply(skc_client *c, const unsigned char id[SKC_ID_SIZE])
{
    skc_eval ev;
    eval_one(&ev, id, "Walk", 10, 0);
    skc_reply *r = NULL;
    ck_assert_msg(skc_mesh(c, &ev, &r) == 0, "MESH: %s", skc_errmsg(c));
    uint32_t n;
    const skc_draw *d = skc_reply_draws(r, &n);
    ck_assert(n > 5 && n <= 25);
    for (uint32_t i = 0; i < n; i++) {
        ck_assert(d[i].bone < 25 && d[i].atlas < 2);
        ck_assert(d[i].vertex_count >= 4 && d[i].index_count % 3 == 0 && d[i].index_count > 0);
        for (uint32_t k = 0; k < d[i].index_count; k++)
            ck_assert_uint_lt(d[i].indices[k], d[i].vertex_count);
        for (uint32_t v = 0; v < d[i].vertex_count; v++) {
            const skc_vertex *x = &d[i].vertices[v];
            ck_assert(x->u >= 0 && x->u <= 1 && x->v >= 0 && x->v <= 1);
            ck_assert(isfinite(x->x) && isfinite(x->y));
        }
    }
    skc_reply_free(r);
}

/* RENDER: the PNG decodes to exactly the raw RGBA rendering of the same request. */
static void check_render_reply(skc_client *c, const unsigned char id[SKC_ID_SIZE])
{
    skc_eval ev;
    skc_render_opts ro;
    eval_one(&ev, id, "Walk", 10, 0);
    skc_render_opts_init(&ro);
    ro.width = 160;
    ro.height = 120;
    skc_reply *png = render_ok(c, &ev, &ro);
    ro.format = SKC_FORMAT_RGBA;
    skc_reply *raw = render_ok(c, &ev, &ro);
    uint32_t n1, n2, w, h;
    const skc_image *a = skc_reply_images(png, &n1), *b = skc_reply_images(raw, &n2);
    ck_assert(n1 == 1 && n2 == 1);
    ck_assert(a->width == 160 && a->height == 120 && a->frame == 10);
    ck_assert_uint_eq(b->size, 160 * 120 * 4);
    uint8_t *px = NULL;
    ck_assert_int_eq(th_png_decode(a->data, a->size, &w, &h, &px), 0);
    ck_assert(w == 160 && h == 120 && memcmp(px, b->data, b->size) == 0);
    size_t opaque = 0;
    for (size_t i = 0; i < (size_t)w * h; i++)
        opaque += px[4 * i + 3] != 0;
    ck_assert_msg(opaque > w * h / 50 && opaque < w * h * 9 / 10, "%zu pixels drawn", opaque);
    ck_assert_uint_eq(px[3], 0); /* fitted to 0.9: the corner stays transparent */
    free(px);
    skc_reply_free(png);
    skc_reply_free(raw);
}

/* A frame range gives one picture per frame. */
static skc_reply *check_render_range(skc_client *c, const skc_eval *ev, skc_render_opts *ro)
{
    ro->has_range = 1;
    ro->first = 2;
    ro->last = 4;
    skc_reply *r = render_ok(c, ev, ro);
    uint32_t n;
    const skc_image *im = skc_reply_images(r, &n);
    ck_assert_uint_eq(n, 3);
    for (uint32_t i = 0; i < n; i++)
        ck_assert(im[i].frame == 2 + i && im[i].size == (size_t)ro->width * ro->height * 4);
    return r;
}

/* A 2 x 2 sheet of the same range: one picture whose cells are those pictures, row-major,
 * the fourth cell empty, and a JSON description. */
static void check_render_sheet(skc_client *c, const unsigned char id[SKC_ID_SIZE])
{
    skc_eval ev;
    skc_render_opts ro;
    eval_one(&ev, id, "Wave", 0, 0);
    skc_render_opts_init(&ro);
    ro.width = ro.height = 64;
    ro.format = SKC_FORMAT_RGBA;
    skc_reply *frames = check_render_range(c, &ev, &ro);
    ro.sheet_cols = ro.sheet_rows = 2;
    skc_reply *sheet = render_ok(c, &ev, &ro);
    uint32_t n;
    size_t jlen;
    const skc_image *cells = skc_reply_images(frames, NULL), *im = skc_reply_images(sheet, &n);
    const char *json = skc_reply_sheet_json(sheet, &jlen);
    ck_assert(n == 1 && im->width == 128 && im->height == 128 && im->frame == 2);
    ck_assert_msg(jlen > 0 && strstr(json, "\"cols\":2"), "sheet JSON: %s", json);
    for (uint32_t k = 0; k < 4; k++) {
        for (uint32_t y = 0; y < 64; y++) {
            const uint8_t *row = im->data + ((k / 2 * 64 + y) * 128 + k % 2 * 64) * 4;
            if (k < 3)
                ck_assert_msg(!memcmp(row, cells[k].data + y * 64 * 4, 64 * 4), "cell %u", k);
            else
                for (uint32_t x = 0; x < 64 * 4; x++)
                    ck_assert_uint_eq(row[x], 0);
        }
    }
    skc_reply_free(frames);
    skc_reply_free(sheet);
}

/* MESH with engine options: every vertex and quad corner of the plain draw list, moved as a
 * point (y flipped, scaled, moved). On the 0.7 lamp, whose shade and beam have pivots, a
 * mirror once misplaced the pivoted parts and y-down turned quads' textures over. */
static void check_mesh_options(skc_client *c, const unsigned char id[SKC_ID_SIZE])
{
    static const struct {
        double sx, sy, px, py;
        unsigned flags;
    } opts[] = {{-1, 1, 5, 7, 0}, {1, 1, 0, 0, SKC_EVAL_Y_DOWN}, {2, -0.5, -3, 1, 0}};
    skc_eval ev;
    eval_one(&ev, id, "Look", 12, 0);
    skc_reply *plain = NULL, *moved = NULL;
    ck_assert_msg(skc_mesh(c, &ev, &plain) == 0, "MESH: %s", skc_errmsg(c));
    uint32_t n, m;
    const skc_draw *a = skc_reply_draws(plain, &n);
    ck_assert_uint_gt(n, 3);
    for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
        ev.scale = (skc_vec2){opts[k].sx, opts[k].sy};
        ev.position = (skc_vec2){opts[k].px, opts[k].py};
        ev.flags = opts[k].flags;
        ck_assert_msg(skc_mesh(c, &ev, &moved) == 0, "MESH: %s", skc_errmsg(c));
        const skc_draw *b = skc_reply_draws(moved, &m);
        ck_assert_uint_eq(m, n);
        for (uint32_t i = 0; i < n; i++) {
            ck_assert_uint_eq(a[i].bone, b[i].bone);
            ck_assert_uint_eq(a[i].vertex_count, b[i].vertex_count);
            for (uint32_t v = 0; v < a[i].vertex_count; v++) {
                const skc_vertex *p = &a[i].vertices[v], *q = &b[i].vertices[v];
                double y = opts[k].flags ? -p->y : p->y;
                ck_assert_msg(fabs(q->x - (p->x * opts[k].sx + opts[k].px)) < 1e-9 &&
                                  fabs(q->y - (y * opts[k].sy + opts[k].py)) < 1e-9,
                              "options %zu, bone %u, vertex %u: (%g, %g) from (%g, %g)", k,
                              a[i].bone, v, q->x, q->y, p->x, p->y);
                ck_assert(q->u == p->u && q->v == p->v);
            }
        }
        skc_reply_free(moved);
    }
    skc_reply_free(plain);
}

START_TEST(mesh_options_move_points)
{
    struct daemon *d = daemon_up(g_samples, NULL);
    skc_client *c = client_open(d->tcp_uri, NULL);
    unsigned char id[SKC_ID_SIZE];
    load_path(c, "lamp-0.7.skf", id);
    check_mesh_options(c, id);
    skc_free(c);
    daemon_stop(d);
}
END_TEST

START_TEST(pose_mesh_render)
{
    struct daemon *d = daemon_up(g_samples, NULL);
    skc_client *c = client_open(d->tcp_uri, NULL);
    unsigned char id[SKC_ID_SIZE];
    load_path(c, "robot.skf", id);
    check_pose_reply(c, id);
    check_mesh_reply(c, id);
    check_render_reply(c, id);
    check_render_sheet(c, id);
    skc_eval ev;
    eval_one(&ev, id, "NoSuchAnim", 1, 0);
    expect_status(c, skc_pose(c, &ev, NULL), SKC_S_NOT_FOUND, "unknown animation");
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* The POSE of Walk (30 fps, frames 0..40) at t (a time in ms with SKC_EVAL_MS, else a frame),
 * with flags, and from >= 0 a play from that frame. */
static skc_reply *walk_pose(skc_client *c, const unsigned char id[SKC_ID_SIZE], double t,
                            unsigned flags, double from)
{
    skc_eval ev;
    eval_one(&ev, id, "Walk", t, 0);
    ev.flags = flags;
    ev.has_from = from >= 0;
    ev.from = from >= 0 ? from : 0;
    return pose_ok(c, &ev);
}

/* Times in ms are TimeFrame (SPEC): the fractional frame, then FormatFrame once. Reverse
 * applied twice had undone itself: 100 ms reversed played frame 3, not 37. */
START_TEST(times_in_ms_are_time_frame)
{
    struct daemon *d = daemon_up(g_samples, NULL);
    skc_client *c = client_open(d->tcp_uri, NULL);
    unsigned char id[SKC_ID_SIZE];
    load_path(c, "robot.skf", id);
    const unsigned ms = SKC_EVAL_MS, rev = SKC_EVAL_REVERSE, loop = SKC_EVAL_LOOP;
    struct {
        double t;
        unsigned flags;
        double from, frame; /* the same request in frames */
    } cases[] = {
        {100, ms, -1, 3},                /* 3 frames in */
        {110, ms, -1, 3},                /* 3.3, rounded */
        {100, ms | rev, -1, 37},         /* 40 - 3 */
        {1500, ms | loop | rev, -1, 36}, /* 45 % 41 = 4, then 40 - 4 */
        {1500, ms | loop, -1, 4},        /* 45 % 41 */
        {110, ms | rev, 0, 3},           /* a play from 0 ends 3 frames on, reversed */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        skc_reply *a = walk_pose(c, id, cases[k].t, cases[k].flags, cases[k].from);
        unsigned same = cases[k].flags & ~ms & (cases[k].from >= 0 ? ~0u : ~(rev | loop));
        skc_reply *b = walk_pose(c, id, cases[k].frame, same, cases[k].from);
        const char *diff = pose_diff(a, b);
        ck_assert_msg(!diff, "case %zu: %g ms (flags %#x) is not frame %g: %s", k, cases[k].t,
                      cases[k].flags, cases[k].frame, diff);
        skc_reply_free(a);
        skc_reply_free(b);
    }
    /* and the frames differ, so the cases could fail */
    skc_reply *f3 = walk_pose(c, id, 3, 0, -1), *f37 = walk_pose(c, id, 37, 0, -1);
    ck_assert_msg(pose_diff(f3, f37), "frames 3 and 37 of Walk are the same pose");
    skc_reply_free(f3);
    skc_reply_free(f37);
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* The result cache: a repeated stateless RENDER or POSE is answered from memory, byte for
 * byte the same; requests on an instance never are (their answer depends on its state); and
 * under a small --result-cache-mb old answers are evicted. */
START_TEST(result_cache_hits_and_evictions)
{
    struct daemon *d = daemon_up(g_samples, FLAGS("--result-cache-mb", "1"));
    skc_client *c = client_open(d->unix_uri, NULL);
    unsigned char id[SKC_ID_SIZE];
    load_path(c, "robot.skf", id);
    skc_eval ev;
    skc_render_opts ro;
    eval_one(&ev, id, "Walk", 10, 0);
    skc_render_opts_init(&ro);
    ro.width = ro.height = 96;
    skc_reply *a = render_ok(c, &ev, &ro);
    uint64_t hits = counter(c, "results.hits");
    skc_reply *b = render_ok(c, &ev, &ro);
    ck_assert_uint_eq(counter(c, "results.hits"), hits + 1);
    const skc_image *ia = skc_reply_images(a, NULL), *ib = skc_reply_images(b, NULL);
    ck_assert(ia->size == ib->size && !memcmp(ia->data, ib->data, ia->size));
    skc_reply_free(b);
    ro.png_level = SKC_PNG_FAST; /* an old client's name for the default encoder: the same answer */
    b = render_ok(c, &ev, &ro);
    ck_assert_uint_eq(counter(c, "results.hits"), hits + 2);
    ib = skc_reply_images(b, NULL);
    ck_assert(ia->size == ib->size && !memcmp(ia->data, ib->data, ia->size));
    ro.png_level = SKC_PNG_DEFAULT;
    hits++;
    skc_reply_free(a);
    skc_reply_free(b);
    skc_reply *p1 = pose_ok(c, &ev), *p2 = pose_ok(c, &ev);
    ck_assert_uint_eq(counter(c, "results.hits"), hits + 2);
    assert_same_pose(p1, p2, "a cached pose");
    skc_reply_free(p1);
    skc_reply_free(p2);
    uint32_t inst;
    ck_assert_int_eq(skc_instance_new(c, id, &inst), 0);
    ev.target = SKC_TARGET_INSTANCE;
    ev.instance = inst;
    for (int i = 0; i < 2; i++)
        skc_reply_free(pose_ok(c, &ev));
    ck_assert_uint_eq(counter(c, "results.hits"), hits + 2);
    /* 512x512 renders of many frames: more than 1 MiB of answers */
    ev.target = SKC_TARGET_ARMATURE;
    ro.width = ro.height = 512;
    for (int f = 0; f < 40; f++) {
        ev.anims[0].frame = f;
        skc_reply_free(render_ok(c, &ev, &ro));
    }
    ck_assert_uint_gt(counter(c, "results.evictions"), 0);
    ck_assert_uint_le(counter(c, "results.bytes"), 1u << 20);
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* latency.sum_us against the buckets of one STATS reply: at least each job at its bucket's
 * floor and, with nothing in the open-ended bucket, under each at its ceiling. Returns how many
 * jobs the buckets count. */
static uint64_t check_latency_sum(skc_client *c)
{
    skc_reply *r = NULL;
    ck_assert_msg(skc_stats(c, &r) == 0, "STATS: %s", skc_errmsg(c));
    uint64_t jobs = 0, floor = 0, ceiling = 0;
    for (int b = 0; b < 16; b++) {
        char name[32];
        if (b < 15)
            snprintf(name, sizeof name, "latency.lt_%lluus", 64ull << b);
        else
            snprintf(name, sizeof name, "latency.ge_%lluus", 64ull << 14);
        const skc_counter *k = find_counter(r, name);
        ck_assert_msg(k != NULL, "no counter %s", name);
        jobs += k->value;
        floor += k->value * (b ? 64ull << (b - 1) : 0);
        ceiling = b < 15 ? ceiling + k->value * (64ull << b) : k->value ? UINT64_MAX : ceiling;
    }
    const skc_counter *sum = find_counter(r, "latency.sum_us");
    ck_assert_msg(sum != NULL, "no counter latency.sum_us");
    ck_assert_msg(sum->value >= floor && sum->value < ceiling + (jobs == 0),
                  "latency.sum_us %llu out of the buckets' [%llu, %llu)",
                  (unsigned long long)sum->value, (unsigned long long)floor,
                  (unsigned long long)ceiling);
    skc_reply_free(r);
    return jobs;
}

START_TEST(stats_count_requests)
{
    struct daemon *d = daemon_up(g_samples, NULL);
    skc_client *c = client_open(d->unix_uri, NULL);
    unsigned char id[SKC_ID_SIZE], none[SKC_ID_SIZE] = {0};
    load_path(c, "robot.skf", id);
    skc_reply *r = NULL;
    ck_assert_int_eq(skc_stats(c, &r), 0);
    static const char *const names[] = {
        "requests.HELLO",  "requests.POSE",        "requests.STATS", "errors",      "busy",
        "cache.hits",      "cache.bytes",          "queue.depth",    "connections", "uptime.ms",
        "latency.lt_64us", "latency.ge_1048576us", "latency.sum_us"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        ck_assert_msg(find_counter(r, names[i]) != NULL, "no counter %s", names[i]);
    uint64_t poses = find_counter(r, "requests.POSE")->value;
    uint64_t errors = find_counter(r, "errors")->value;
    ck_assert_uint_eq(find_counter(r, "connections")->value, 1);
    ck_assert_uint_eq(find_counter(r, "requests.LOAD_PATH")->value, 1);
    skc_reply_free(r);
    skc_eval ev;
    eval_one(&ev, id, "Idle", 5, 0);
    uint64_t inlined = counter(c, "jobs.inline");
    for (int i = 0; i < 3; i++) {
        ev.anims[0].frame = 5 + i; /* each its own answer: none from the result cache */
        skc_reply_free(pose_ok(c, &ev));
    }
    ck_assert_uint_eq(counter(c, "requests.POSE"), poses + 3);
    /* Lone, small and the workers idle: each ran on the loop thread. */
    ck_assert_uint_eq(counter(c, "jobs.inline"), inlined + 3);
    /* So do small ones pipelined, far under the batch budget however the reads split them. */
    uint32_t ids[4];
    for (int i = 0; i < 4; i++) {
        ev.anims[0].frame = 20 + i;
        ck_assert_int_eq(skc_send_pose(c, &ev, &ids[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        ck_assert_msg(skc_recv(c, ids[i], NULL) == 0, "POSE %d: %s", i, skc_errmsg(c));
    ck_assert_uint_eq(counter(c, "jobs.inline"), inlined + 7);
    ck_assert_uint_eq(counter(c, "requests.POSE"), poses + 7);
    /* A warm-up of many steps goes to a worker. */
    ev.warmup = 1000;
    skc_reply_free(pose_ok(c, &ev));
    ck_assert_uint_eq(counter(c, "jobs.inline"), inlined + 7);
    /* The histogram's sum adds up the latencies its buckets count. */
    ck_assert_uint_ge(check_latency_sum(c), 8);
    uint64_t not_found = counter(c, "refusals.NOT_FOUND");
    expect_status(c, skc_info(c, none, NULL), SKC_S_NOT_FOUND, "INFO of nothing");
    ck_assert_uint_eq(counter(c, "errors"), errors + 1);
    ck_assert_uint_eq(counter(c, "refusals.NOT_FOUND"), not_found + 1);
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* UNLOAD forgets the id, but an instance keeps its armature alive. */
START_TEST(unload_keeps_instances)
{
    struct daemon *d = daemon_up(g_samples, NULL);
    skc_client *c = client_open(d->tcp_uri, NULL);
    unsigned char id[SKC_ID_SIZE], id2[SKC_ID_SIZE];
    uint32_t inst = 0, x = 0;
    load_path(c, "robot.skf", id);
    ck_assert_int_eq(skc_instance_new(c, id, &inst), 0);
    skc_eval ev, iev;
    eval_one(&ev, id, "Walk", 7, 0);
    skc_reply *before = pose_ok(c, &ev);
    ck_assert_msg(skc_unload(c, id) == 0, "UNLOAD: %s", skc_errmsg(c));
    ck_assert_uint_eq(counter(c, "cache.entries"), 0);
    expect_status(c, skc_info(c, id, NULL), SKC_S_NOT_FOUND, "INFO after UNLOAD");
    expect_status(c, skc_pose(c, &ev, NULL), SKC_S_NOT_FOUND, "POSE after UNLOAD");
    expect_status(c, skc_instance_new(c, id, &x), SKC_S_NOT_FOUND, "instance after UNLOAD");
    expect_status(c, skc_unload(c, id), SKC_S_NOT_FOUND, "UNLOAD twice");
    iev = ev;
    iev.target = SKC_TARGET_INSTANCE;
    iev.instance = inst;
    skc_reply *kept = pose_ok(c, &iev);
    assert_same_pose(before, kept, "the instance after UNLOAD");
    ck_assert_int_eq(skc_instance_free(c, inst), 0);
    load_path(c, "robot.skf", id2);
    ck_assert(memcmp(id, id2, SKC_ID_SIZE) == 0);
    skc_reply *after = pose_ok(c, &ev);
    assert_same_pose(before, after, "reloaded");
    skc_reply_free(before);
    skc_reply_free(kept);
    skc_reply_free(after);
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* ======================================================================================== */
/* 2. skelctl against the offline front end                                                 */
/* ======================================================================================== */

struct eval_case {
    const char *file;
    const char *const *flags;
};

static const struct eval_case pose_cases[] = {
    {"robot.skf", FLAGS("--anim", "Walk", "--frame", "10")},
    {"robot.skf",
     FLAGS("--anim", "Walk", "--frame", "10", "--smooth", "3", "--from", "0", "--warmup", "30")},
    {"robot.skf",
     FLAGS("--anim", "Idle,Wave", "--frame", "12,40", "--smooth", "0,5", "--from", "0")},
    {"robot.skf", FLAGS("--anim", "1", "--frame", "199", "--from", "0", "--loop")},
    {"robot.skf", FLAGS("--anim", "Glitch", "--frame", "7", "--reverse", "--position", "10,-5",
                        "--scale", "2,-1", "--velocity", "3,0", "--y-down")},
    {"robot.skf", FLAGS("--anim", "Walk,Glitch", "--frame", "5.5", "--smooth", "2")},
    {"critter.skf", FLAGS("--anim", "Hop,Sniff", "--frame", "30,20", "--from", "10", "--warmup",
                          "30", "--smooth", "4,1")},
    {"critter.skf", FLAGS("--warmup", "5")},
};

/* skelctl [--uri URI] pose ARM FLAGS and skeld eval FILE FLAGS print the same bytes. */
static void assert_pose_equal(const char *uri, const char *arm, const char *file,
                              const char *const *flags)
{
    const char *ctl[MAX_ARGV] = {g_ctl, "--uri", uri, "pose", arm};
    const char *off[MAX_ARGV] = {g_bin, "eval", file};
    append_args(ctl, 5, flags);
    append_args(off, 3, flags);
    char *a, *b;
    size_t la, lb;
    int ra = run_cmd(ctl, &a, &la), rb = run_cmd(off, &b, &lb);
    ck_assert_msg(ra == 0 && rb == 0, "exit %d/%d for %s", ra, rb, describe(flags));
    ck_assert_msg(la > 2 && a[0] == '[', "skelctl pose printed no bones for %s", describe(flags));
    ck_assert_msg(la == lb && memcmp(a, b, la) == 0,
                  "skelctl pose (%s, %s) differs from skeld eval for %s", uri, arm,
                  describe(flags));
    free(a);
    free(b);
}

START_TEST(skelctl_pose_matches_eval)
{
    struct daemon *d = daemon_up(g_samples, NULL);
    for (size_t i = 0; i < sizeof pose_cases / sizeof pose_cases[0]; i++) {
        char file[PATH_MAX];
        sample(file, pose_cases[i].file);
        /* Alternate listeners, and a path under --root with an uploaded local file. */
        const char *uri = i % 2 ? d->tcp_uri : d->unix_uri;
        const char *arm = i % 3 == 2 ? file : pose_cases[i].file;
        assert_pose_equal(uri, arm, file, pose_cases[i].flags);
    }
    daemon_stop(d);
}
END_TEST

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The sorted names in dir (at most max); returns the count. */
static int list_dir(const char *dir, char **names, int max)
{
    DIR *dp = opendir(dir);
    ck_assert_ptr_nonnull(dp);
    int n = 0;
    for (struct dirent *e; (e = readdir(dp));)
        if (e->d_name[0] != '.' && n < max)
            names[n++] = strdup(e->d_name);
    closedir(dp);
    qsort(names, (size_t)n, sizeof *names, by_name);
    return n;
}

/* want files in each dir, the same names, the same bytes in each pair; PNGs are PNGs. */
static void assert_same_dirs(const char *da, const char *db, int want, const char *what)
{
    char *na[16], *nb[16];
    int n = list_dir(da, na, 16), m = list_dir(db, nb, 16);
    ck_assert_msg(n == want && m == want, "%d and %d files, expected %d, for %s", n, m, want, what);
    for (int i = 0; i < n; i++) {
        char pa[PATH_MAX], pb[PATH_MAX];
        size_t la, lb, nl = strlen(na[i]);
        ck_assert_str_eq(na[i], nb[i]);
        char *a = slurp(join(pa, da, na[i]), &la), *b = slurp(join(pb, db, nb[i]), &lb);
        ck_assert_msg(a && b && la == lb && memcmp(a, b, la) == 0, "%s differs for %s", na[i],
                      what);
        ck_assert(nl < 4 || strcmp(na[i] + nl - 4, ".png") || !memcmp(a, "\x89PNG", 4));
        free(a);
        free(b);
        free(na[i]);
        free(nb[i]);
    }
}

/* Two new empty dirs in the test's dir, for the two commands' output. */
static void fresh_dirs(char *da, char *db)
{
    static int seq;
    char name[32];
    snprintf(name, sizeof name, "ctl.%d", seq);
    ck_assert_int_eq(mkdir(join(da, g_work, name), 0700), 0);
    snprintf(name, sizeof name, "off.%d", seq++);
    ck_assert_int_eq(mkdir(join(db, g_work, name), 0700), 0);
}

/* `skelctl render ARM FLAGS -o OUT` and `skeld render FILE FLAGS -o OUT`, each run in a dir
 * of its own (so OUT and the sheet JSON's "image" read the same), write the same files. */
static void assert_render_equal(const char *uri, const char *arm, const char *file,
                                const char *const *flags, const char *out, int files)
{
    char da[PATH_MAX], db[PATH_MAX];
    fresh_dirs(da, db);
    const char *ctl[MAX_ARGV] = {g_ctl, "--uri", uri, "render", arm};
    const char *off[MAX_ARGV] = {g_bin, "render", file};
    append_args(ctl, append_args(ctl, 5, flags), FLAGS("-o", out));
    append_args(off, append_args(off, 3, flags), FLAGS("-o", out));
    run_ok(ctl, da);
    run_ok(off, db);
    assert_same_dirs(da, db, files, describe(flags));
}

static const struct eval_case render_cases[] = {
    {"robot.skf", FLAGS("--anim", "Walk", "--frame", "10", "--warmup", "30", "--from", "0",
                        "--size", "128x128", "--fit", "0.9")},
    {"robot.skf", FLAGS("--anim", "Wave", "--frame", "20", "--size", "128x96", "--scale", "0.25",
                        "--background", "336699ff")},
    {"robot.skf",
     FLAGS("--anim", "Walk", "--frame", "3", "--size", "100x80", "--scale", "0.3,0.2", "--position",
           "40,-60", "--samples", "1", "--png-level", "6", "--style", "Red")},
    {"critter.skf", FLAGS("--anim", "Curl,Sniff", "--frame", "40,12", "--smooth", "3", "--size",
                          "96x128", "--style", "Night,Default", "--png-level", "0")},
};

START_TEST(skelctl_render_matches_render)
{
    struct daemon *d = daemon_up(g_samples, NULL);
    for (size_t i = 0; i < sizeof render_cases / sizeof render_cases[0]; i++) {
        char file[PATH_MAX];
        sample(file, render_cases[i].file);
        const char *uri = i % 2 ? d->unix_uri : d->tcp_uri;
        assert_render_equal(uri, i == 1 ? file : render_cases[i].file, file, render_cases[i].flags,
                            "a.png", 1);
    }
    daemon_stop(d);
}
END_TEST

/* A frame range: one file per frame, named by the pattern. */
START_TEST(skelctl_render_range_matches)
{
    struct daemon *d = daemon_up(g_samples, NULL);
    char file[PATH_MAX];
    sample(file, "robot.skf");
    assert_render_equal(d->unix_uri, "robot.skf", file,
                        FLAGS("--anim", "Walk", "--frames", "0-3", "--smooth", "2", "--warmup",
                              "30", "--size", "96x96", "--fit", "0.8"),
                        "x_%04d.png", 4);
    assert_render_equal(d->tcp_uri, file, file,
                        FLAGS("--anim", "Wave,Walk", "--frames", "10-17", "--from", "5", "--size",
                              "64x48", "--scale", "0.1"),
                        "w%d.png", 8);
    daemon_stop(d);
}
END_TEST

/* A spritesheet: the PNG and its JSON. */
START_TEST(skelctl_render_sheet_matches)
{
    struct daemon *d = daemon_up(g_samples, NULL);
    char file[PATH_MAX];
    sample(file, "critter.skf");
    assert_render_equal(d->tcp_uri, "critter.skf", file,
                        FLAGS("--anim", "Hop", "--frames", "0-6", "--sheet", "3x3", "--size",
                              "64x64", "--warmup", "30"),
                        "s.png", 2);
    daemon_stop(d);
}
END_TEST

/* ======================================================================================== */
/* 3. Instance state carries over                                                           */
/* ======================================================================================== */

/* Steps on an instance at frames 0..N, one POSE each, equal the stateless POSE that plays
 * from 0 to N: smoothing (and physics) state carries over between requests. */
START_TEST(instance_steps_equal_from)
{
    enum { N = 12 };
    struct daemon *d = daemon_up(g_samples, NULL);
    skc_client *c = client_open(d->unix_uri, NULL);
    unsigned char id[SKC_ID_SIZE];
    uint32_t inst = 0;
    load_path(c, "robot.skf", id);
    ck_assert_int_eq(skc_instance_new(c, id, &inst), 0);
    skc_reply *last = NULL;
    skc_eval ev;
    for (int f = 0; f <= N; f++) {
        eval_one(&ev, id, "Walk", f, 4);
        ev.target = SKC_TARGET_INSTANCE;
        ev.instance = inst;
        ev.warmup = f == 0 ? 30 : 0;
        skc_reply_free(last);
        last = pose_ok(c, &ev);
    }
    eval_one(&ev, id, "Walk", N, 4);
    ev.warmup = 30;
    ev.has_from = 1;
    skc_reply *ref = pose_ok(c, &ev);
    assert_same_pose(last, ref, "instance steps 0..N vs --from 0");
    /* One step without the history lands elsewhere: the comparison above means something. */
    ev.has_from = 0;
    skc_reply *one = pose_ok(c, &ev);
    ck_assert_msg(pose_diff(one, ref) != NULL, "smoothing made no difference");
    skc_reply_free(one);
    skc_reply_free(ref);
    skc_reply_free(last);
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* A fitted RENDER on an instance finds its camera by playing the animation through on the
 * worker's scratch pose, never on the instance's: after two renders (one worker, the same
 * animation, warm-up and smoothing, so the second finds the framing in the worker's memo) the
 * instance is where two POSEs of the same frames leave another one. */
START_TEST(instance_render_framing_leaves_state_alone)
{
    struct daemon *d = daemon_up(g_samples, FLAGS("--threads", "1"));
    skc_client *c = client_open(d->unix_uri, NULL);
    unsigned char id[SKC_ID_SIZE];
    uint32_t a = 0, b = 0, fresh = 0;
    load_path(c, "robot.skf", id);
    ck_assert_int_eq(skc_instance_new(c, id, &a), 0);
    ck_assert_int_eq(skc_instance_new(c, id, &b), 0);
    ck_assert_int_eq(skc_instance_new(c, id, &fresh), 0);
    skc_render_opts ro;
    skc_render_opts_init(&ro);
    ck_assert_int_eq(ro.camera, SKC_CAMERA_FIT);
    ro.width = ro.height = 64;
    skc_eval ev;
    for (int f = 3; f <= 4; f++) {
        eval_one(&ev, id, "Walk", f, 4);
        ev.target = SKC_TARGET_INSTANCE;
        ev.instance = a;
        skc_reply *r = NULL;
        ck_assert_msg(skc_render(c, &ev, &ro, &r) == 0, "render %d: %s", f, skc_errmsg(c));
        skc_reply_free(r);
        ev.instance = b;
        skc_reply_free(pose_ok(c, &ev));
    }
    eval_one(&ev, id, "Walk", 5, 4);
    ev.target = SKC_TARGET_INSTANCE;
    ev.instance = a;
    skc_reply *pa = pose_ok(c, &ev);
    ev.instance = b;
    skc_reply *pb = pose_ok(c, &ev);
    assert_same_pose(pa, pb, "instance after two fitted renders vs after two poses");
    /* Without that history the pose differs: the comparison above means something. */
    ev.instance = fresh;
    skc_reply *pf = pose_ok(c, &ev);
    ck_assert_msg(pose_diff(pf, pb) != NULL, "the instance's history made no difference");
    skc_reply_free(pa);
    skc_reply_free(pb);
    skc_reply_free(pf);
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* Two looping animations, the second 5 frames ahead; plays frames from..last. */
static void two_anims(skc_eval *ev, const unsigned char id[SKC_ID_SIZE], double from, double last)
{
    eval_one(ev, id, "Walk", last, 3);
    ev->anim_count = 2;
    ev->anims[1] = (skc_anim){"Wave", last + 5, 2};
    ev->flags = SKC_EVAL_LOOP;
    ev->has_from = 1;
    ev->from = from;
}

/* Pipelined on one instance, each request playing the next M frames (long enough for two
 * workers to overlap if the daemon let them), collected in reverse order: the k-th reply
 * equals the stateless play from 0 through its last frame, so the requests ran one at a
 * time in arrival order. */
START_TEST(instance_pipelined_in_order)
{
    enum { N = 10, M = 400 };
    struct daemon *d = daemon_up(g_samples, FLAGS("--threads", "2"));
    skc_client *c = client_open(d->tcp_uri, NULL);
    unsigned char id[SKC_ID_SIZE];
    uint32_t inst = 0, ids[N];
    load_path(c, "robot.skf", id);
    ck_assert_int_eq(skc_instance_new(c, id, &inst), 0);
    skc_eval ev;
    for (int k = 0; k < N; k++) {
        two_anims(&ev, id, k * M, (k + 1) * M - 1);
        ev.target = SKC_TARGET_INSTANCE;
        ev.instance = inst;
        ck_assert_int_eq(skc_send_pose(c, &ev, &ids[k]), 0);
    }
    for (int k = N - 1; k >= 0; k--) {
        skc_reply *got = NULL;
        ck_assert_msg(skc_recv(c, ids[k], &got) == 0, "POSE %d: %s", k, skc_errmsg(c));
        two_anims(&ev, id, 0, (k + 1) * M - 1);
        skc_reply *ref = pose_ok(c, &ev);
        char what[64];
        snprintf(what, sizeof what, "pipelined request %d", k);
        assert_same_pose(got, ref, what);
        skc_reply_free(got);
        skc_reply_free(ref);
    }
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* A client that sends many requests before it reads a reply: the replies outgrow the socket
 * buffers, so the daemon writes part of them at once, queues the rest and stops reading until
 * they drain. Every reply still arrives whole, in order, and equal to the same POSE asked
 * alone (the path of writes that end part way, flush.c's flush_write_now). */
START_TEST(late_reader_gets_every_reply_whole)
{
    enum { N = 400 }; /* about 4 KiB a robot POSE: far more than a socket buffer holds */
    struct daemon *d = daemon_up(g_samples, FLAGS("--threads", "2"));
    skc_client *c = client_open(d->unix_uri, NULL);
    unsigned char id[SKC_ID_SIZE];
    load_path(c, "robot.skf", id);
    uint32_t ids[N];
    skc_eval ev;
    for (int k = 0; k < N; k++) {
        eval_one(&ev, id, "Walk", k % 37, 0);
        ck_assert_int_eq(skc_send_pose(c, &ev, &ids[k]), 0);
    }
    skc_reply *alone[37];
    skc_client *ref = client_open(d->tcp_uri, NULL);
    for (int f = 0; f < 37; f++) {
        eval_one(&ev, id, "Walk", f, 0);
        alone[f] = pose_ok(ref, &ev);
    }
    for (int k = 0; k < N; k++) {
        skc_reply *got = NULL;
        ck_assert_msg(skc_recv(c, ids[k], &got) == 0, "POSE %d: %s", k, skc_errmsg(c));
        char what[64];
        snprintf(what, sizeof what, "reply %d of %d read late", k, N);
        assert_same_pose(got, alone[k % 37], what);
        skc_reply_free(got);
    }
    for (int f = 0; f < 37; f++)
        skc_reply_free(alone[f]);
    ck_assert_msg(skc_ping(c, "after", 5) == 0, "PING: %s", skc_errmsg(c));
    skc_free(ref);
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* ======================================================================================== */
/* 4. Malformed input                                                                       */
/* ======================================================================================== */

enum bad_kind { GARBAGE, BAD_MAGIC, BAD_VERSION, OVERSIZE, RESERVED_FLAG, RESERVED_FIELD };

/* A broken frame followed by a valid PING (id 8) that must never be answered. */
static size_t bad_bytes(enum bad_kind kind, uint8_t *out)
{
    static const char http[] = "GET / HTTP/1.1\r\nHost: skeld\r\n\r\n";
    uint8_t ping[SKP_HEADER_SIZE + 4];
    struct skp_header h = {SKP_VERSION, SKP_OP_PING, 0, 0, 8, 4};
    skp_encode_header(&h, ping);
    skp_put_u32(ping + SKP_HEADER_SIZE, 0);
    size_t n = sizeof ping;
    memcpy(out, ping, n);
    switch (kind) {
    case GARBAGE: memcpy(out, http, n = sizeof http - 1); break;
    case BAD_MAGIC: out[3] = 'X'; break;
    case BAD_VERSION: out[4] = 2; break;
    case OVERSIZE: skp_put_u32(out + 16, 65537); break; /* --max-frame 65536 */
    case RESERVED_FLAG: skp_put_u16(out + 6, 0x8000); break;
    case RESERVED_FIELD: skp_put_u16(out + 10, 1); break;
    }
    memcpy(out + n, ping, sizeof ping);
    return n + sizeof ping;
}

static int bad_status(enum bad_kind kind)
{
    return kind == BAD_VERSION ? SKP_S_VERSION : kind == OVERSIZE ? SKP_S_TOO_BIG : SKP_S_FRAMING;
}

/* What the daemon says of it: only a version it does not speak names the one it does. */
static const char *bad_message(enum bad_kind kind)
{
    return kind == BAD_VERSION ? "protocol version not supported (this daemon speaks 1)"
           : kind == OVERSIZE  ? "frame larger than the limit"
                               : "not a skeld frame";
}

/* A libskc client that must keep getting the same answers. */
static void witness_check(skc_client *w, const skc_eval *ev, const skc_reply *ref)
{
    ck_assert_msg(skc_ping(w, "still here", 10) == 0, "PING: %s", skc_errmsg(w));
    skc_reply *r = pose_ok(w, ev);
    assert_same_pose(r, ref, "witness POSE");
    skc_reply_free(r);
}

START_TEST(framing_errors_close)
{
    struct daemon *d = daemon_up(g_samples, FLAGS("--max-frame", "65536"));
    skc_client *w = client_open(d->tcp_uri, NULL);
    ck_assert_uint_eq(skc_server_max_frame(w), 65536);
    unsigned char id[SKC_ID_SIZE];
    load_path(w, "robot.skf", id);
    skc_eval ev;
    eval_one(&ev, id, "Walk", 9, 1);
    skc_reply *ref = pose_ok(w, &ev);
    for (int k = GARBAGE; k <= RESERVED_FIELD; k++) {
        uint8_t bytes[128];
        size_t n = bad_bytes((enum bad_kind)k, bytes);
        struct raw *r = raw_open(k % 2 ? d->unix_uri : d->tcp_uri);
        raw_send(r, bytes, n);
        /* A connection-level error: opcode 0, request id 0, then the daemon hangs up. */
        raw_expect_error_saying(r, 0, 0, bad_status((enum bad_kind)k),
                                bad_message((enum bad_kind)k));
        raw_expect_closed(r);
        raw_close(r);
        witness_check(w, &ev, ref);
    }
    skc_client *late = client_open(d->unix_uri, NULL);
    witness_check(late, &ev, ref);
    skc_free(late);
    skc_reply_free(ref);
    skc_free(w);
    daemon_stop(d);
}
END_TEST

/* Well-framed but bad requests get an error reply each, and the connection stays usable. */
START_TEST(bad_requests_keep_connection)
{
    struct daemon *d = daemon_up(g_samples, NULL);
    struct raw *r = raw_open(d->unix_uri);
    static const uint8_t trailing[] = {2, 0, 0, 0, 'a', 'b', 'x'};
    raw_frame(r, SKP_OP_PING, 11, trailing, sizeof trailing);
    raw_expect_error(r, SKP_OP_PING, 11, SKP_S_BAD_REQUEST);
    raw_frame(r, 200, 12, NULL, 0);
    raw_expect_error(r, 200, 12, SKP_S_UNKNOWN_OPCODE);
    uint8_t reply[SKP_HEADER_SIZE];
    struct skp_header h = {SKP_VERSION, SKP_OP_PING, SKP_F_REPLY, 0, 13, 0};
    skp_encode_header(&h, reply);
    raw_send(r, reply, sizeof reply);
    raw_expect_error(r, SKP_OP_PING, 13, SKP_S_BAD_REQUEST);
    static const uint8_t pose_target[40] = {2}; /* target 2 does not exist */
    raw_frame(r, SKP_OP_POSE, 14, pose_target, sizeof pose_target);
    raw_expect_error(r, SKP_OP_POSE, 14, SKP_S_BAD_REQUEST);
    static const uint8_t short_str[] = {200, 0, 'a'}; /* a string running past the body */
    raw_frame(r, SKP_OP_LOAD_PATH, 15, short_str, sizeof short_str);
    raw_expect_error(r, SKP_OP_LOAD_PATH, 15, SKP_S_BAD_REQUEST);
    raw_frame(r, SKP_OP_STATS, 16, "x", 1);
    raw_expect_error(r, SKP_OP_STATS, 16, SKP_S_BAD_REQUEST);
    /* flags the daemon does not know, or RENDER's range on a POSE: refused, not dropped; a
     * name holding a NUL: refused, not read as the shorter name before it */
    static const struct {
        uint16_t flags;
        struct skp_str name;
    } odd[] = {{0x40, {"Walk", 4}}, {SKP_EVAL_RANGE, {"Walk", 4}}, {0, {"Walk\0xyz", 8}}};
    for (uint32_t k = 0; k < 3; k++) {
        struct skp_eval_req m;
        uint8_t body[256];
        struct skp_writer w;
        skp_eval_req_init(&m);
        m.flags = odd[k].flags;
        m.anim_count = 1;
        m.anims[0] = (struct skp_anim_ref){odd[k].name, 1, 0};
        skp_writer_init(&w, body, sizeof body);
        skp_encode_eval_req(&w, &m);
        raw_frame(r, SKP_OP_POSE, 20 + k, body, w.len);
        raw_expect_error(r, SKP_OP_POSE, 20 + k, SKP_S_BAD_REQUEST);
    }
    /* a path that is not UTF-8: the message about it is (its bytes shown as '?') */
    static const uint8_t bad_path[] = {3, 0, 0xff, 0xfe, 'x'};
    raw_frame(r, SKP_OP_LOAD_PATH, 30, bad_path, sizeof bad_path);
    uint32_t len;
    const uint8_t *body = raw_expect(r, SKP_OP_LOAD_PATH, 30, SKP_S_NOT_FOUND, &len);
    ck_assert_uint_ge(len, 2);
    for (uint32_t i = 2; i < len; i++)
        ck_assert_msg(body[i] < 0x80, "byte %u of the message is 0x%02x", i, body[i]);
    raw_ping(r, 17, "fine");
    raw_expect_pong(r, 17, "fine");
    raw_close(r);
    daemon_stop(d);
}
END_TEST

/* ======================================================================================== */
/* 5. A slow request whose client hangs up                                                  */
/* ======================================================================================== */

/* Sends slow work on a fresh connection (and on an instance of it) and hangs up at once. */
static void abandon_slow_work(const char *uri, const unsigned char id[SKC_ID_SIZE])
{
    skc_client *q = client_open(uri, NULL);
    uint32_t inst = 0, req;
    ck_assert_int_eq(skc_instance_new(q, id, &inst), 0);
    skc_eval ev;
    skc_render_opts ro;
    eval_one(&ev, id, "Walk", 10, 0);
    skc_render_opts_init(&ro);
    ro.width = ro.height = 2048;
    ro.png_level = 9;
    ck_assert_int_eq(skc_send_render(q, &ev, &ro, &req), 0);
    ro.width = ro.height = 512;
    ro.png_level = SKC_PNG_FAST;
    ro.has_range = 1;
    ro.first = 0;
    ro.last = 40;
    ev.target = SKC_TARGET_INSTANCE;
    ev.instance = inst;
    ck_assert_int_eq(skc_send_render(q, &ev, &ro, &req), 0);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(skc_send_pose(q, &ev, &req), 0);
    skc_free(q);
}

START_TEST(slow_request_then_disconnect)
{
    struct daemon *d = daemon_up(g_samples, FLAGS("--threads", "2"));
    skc_client *w = client_open(d->tcp_uri, NULL);
    unsigned char id[SKC_ID_SIZE];
    load_path(w, "robot.skf", id);
    skc_eval ev;
    skc_render_opts ro;
    eval_one(&ev, id, "Walk", 17, 2);
    ev.has_from = 1;
    skc_render_opts_init(&ro);
    ro.width = ro.height = 64;
    ro.format = SKC_FORMAT_RGBA;
    skc_reply *ref = pose_ok(w, &ev), *pic = render_ok(w, &ev, &ro);
    abandon_slow_work(d->unix_uri, id);
    abandon_slow_work(d->tcp_uri, id);
    /* While the abandoned work runs, and after it is done: the same answers. */
    for (int round = 0; round < 2; round++) {
        witness_check(w, &ev, ref);
        skc_reply *again = render_ok(w, &ev, &ro);
        const skc_image *a = skc_reply_images(pic, NULL), *b = skc_reply_images(again, NULL);
        ck_assert(a->size == b->size && memcmp(a->data, b->data, a->size) == 0);
        skc_reply_free(again);
        if (round == 0) {
            await_counter(w, "connections", 1);
            await_counter(w, "queue.depth", 0);
        }
    }
    ck_assert(daemon_alive(d));
    skc_reply_free(ref);
    skc_reply_free(pic);
    skc_free(w);
    daemon_stop(d); /* a clean uv_loop_close: nothing of the dead connections is left */
}
END_TEST

/* Work for a client that has gone is dropped, not run: 20 slow requests on one worker, then
 * the client hangs up. An end of input alone may be a half-close (whose replies are still
 * owed), so the daemon learns that the client is gone from the first reply it cannot write;
 * what is still queued then never runs. (682 such jobs once ran on for nobody.) Waits on the
 * daemon's counters, not on time. */
START_TEST(jobs_of_gone_clients_are_dropped)
{
    struct daemon *d = daemon_up(g_samples, FLAGS("--threads", "1"));
    skc_client *w = client_open(d->tcp_uri, NULL), *q = client_open(d->unix_uri, NULL);
    unsigned char id[SKC_ID_SIZE];
    load_path(w, "robot.skf", id);
    skc_eval ev;
    uint32_t req;
    eval_one(&ev, id, "Walk", 3, 0);
    ev.warmup = 60000; /* a tenth of a second or more of the one worker, each */
    uint64_t before = counter(w, "requests.POSE");
    for (int i = 0; i < 20; i++) { /* each its own answer, for the result cache */
        ev.anims[0].frame = i;
        ck_assert_int_eq(skc_send_pose(q, &ev, &req), 0);
    }
    int64_t deadline = now_ms() + 120000;
    while (counter(w, "requests.POSE") < before + 20 && now_ms() < deadline)
        sleep_ms(5); /* until the daemon has read all 20 */
    ck_assert_uint_eq(counter(w, "requests.POSE"), before + 20);
    skc_free(q);
    await_counter(w, "connections", 1);
    await_counter(w, "queue.depth", 0);
    uint64_t dropped = counter(w, "jobs.dropped");
    ck_assert_msg(dropped >= 10 && dropped <= 19, "%llu of 20 queued jobs dropped",
                  (unsigned long long)dropped);
    /* The last one asked was surely dropped: it is evaluated now, not answered from a cache
     * with the nothing it produced (an empty OK once came back). */
    skc_reply *r = pose_ok(w, &ev);
    uint32_t bones = 0;
    ck_assert_ptr_nonnull(skc_reply_bones(r, &bones));
    ck_assert_uint_gt(bones, 0);
    skc_reply_free(r);
    ev.warmup = 0;
    r = pose_ok(w, &ev); /* and the worker serves the next client */
    skc_reply_free(r);
    skc_free(w);
    daemon_stop(d);
}
END_TEST

/* A client that stops reading its replies is closed once nothing has moved for
 * --idle-timeout, while the others are served as usual. */
START_TEST(stalled_reader_is_closed)
{
    struct daemon *d = daemon_up(g_samples, FLAGS("--idle-timeout", "1"));
    skc_client *watch = client_open(d->tcp_uri, NULL), *stall = client_open(d->unix_uri, NULL);
    skc_eval ev;
    skc_render_opts ro;
    robot_walk_render(stall, &ev, &ro, 1024);
    ro.format = SKC_FORMAT_RGBA; /* 4 MiB a reply: far more than the socket buffers hold */
    uint32_t ids[4];
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(skc_send_render(stall, &ev, &ro, &ids[i]), 0);
    ck_assert_uint_eq(counter(watch, "connections"), 2);
    await_counter(watch, "connections", 1);
    skc_eval pose;
    eval_one(&pose, ev.armature, "Walk", 3, 0);
    skc_reply_free(pose_ok(watch, &pose));
    for (int i = 0; i < 4; i++)
        skc_discard(stall, ids[i]);
    skc_free(stall);
    skc_free(watch);
    daemon_stop(d);
}
END_TEST

/* ======================================================================================== */
/* 6. LOAD paths are confined to --root                                                     */
/* ======================================================================================== */

/* work/outside/robot.skf, work/root2/robot.skf, and work/root with robot.skf, a copy named
 * "..x.skf", symlinks out (link.skf, sub/, sib.skf) and one that stays in (inlink.skf). */
static void make_root(const char *work, char *root)
{
    char p[PATH_MAX], q[PATH_MAX], src[PATH_MAX];
    sample(src, "robot.skf");
    join(root, work, "root");
    ck_assert_int_eq(mkdir(root, 0700), 0);
    ck_assert_int_eq(mkdir(join(p, work, "outside"), 0700), 0);
    ck_assert_int_eq(mkdir(join(p, work, "root2"), 0700), 0);
    copy_file(src, join(p, work, "outside/robot.skf"));
    copy_file(src, join(p, work, "root2/robot.skf"));
    copy_file(src, join(p, root, "robot.skf"));
    copy_file(src, join(p, root, "..x.skf"));
    ck_assert_int_eq(symlink(join(q, work, "outside/robot.skf"), join(p, root, "link.skf")), 0);
    ck_assert_int_eq(symlink(join(q, work, "outside"), join(p, root, "sub")), 0);
    ck_assert_int_eq(symlink("../root2/robot.skf", join(p, root, "sib.skf")), 0);
    ck_assert_int_eq(symlink("robot.skf", join(p, root, "inlink.skf")), 0);
}

/* A header announcing a body of len bytes for op, and then only part bytes of the body. */
static void raw_partial(struct raw *r, uint8_t op, uint32_t len, size_t part)
{
    uint8_t hdr[SKP_HEADER_SIZE];
    struct skp_header h = {SKP_VERSION, op, 0, 0, 1, len};
    skp_encode_header(&h, hdr);
    raw_send(r, hdr, sizeof hdr);
    uint8_t *body = calloc(part ? part : 1, 1);
    ck_assert_ptr_nonnull(body);
    if (part)
        raw_send(r, body, part);
    free(body);
}

/* A slow sender is not activity: a frame must arrive whole within --frame-timeout, however
 * steadily its bytes trickle. (1 byte a second once kept a connection for ever.) Others are
 * served meanwhile. */
START_TEST(slow_sender_meets_frame_deadline)
{
    struct daemon *d = daemon_up(g_samples, FLAGS("--frame-timeout", "1"));
    struct raw *slow = raw_open(d->unix_uri), *ok = raw_open(d->tcp_uri);
    raw_partial(slow, SKP_OP_PING, 100, 3);
    int64_t start = now_ms();
    for (int i = 0; i < 3; i++) { /* a byte now and then, and another client at work */
        uint8_t b = 0;
        raw_send(slow, &b, 1);
        raw_ping(ok, (uint32_t)i + 1, "still here");
    }
    raw_expect_error(slow, 0, 0, SKP_S_FRAMING); /* within raw_recv's 10 s */
    raw_expect_closed(slow);
    ck_assert_int_lt(now_ms() - start, 9000);
    raw_ping(ok, 9, "after");
    raw_close(slow);
    raw_close(ok);
    daemon_stop(d);
}
END_TEST

/* n POSE frames of robot.skf's Walk (frames 0.., warmup steps each), ids 1..n, into buf. */
static size_t slow_poses(uint8_t *buf, size_t cap, const unsigned char id[SKC_ID_SIZE], uint32_t n,
                         uint32_t warmup)
{
    size_t at = 0;
    for (uint32_t k = 0; k < n; k++) {
        struct skp_eval_req m;
        skp_eval_req_init(&m);
        memcpy(m.armature, id, SKP_ID_SIZE);
        m.anim_count = 1;
        m.anims[0] = (struct skp_anim_ref){{"Walk", 4}, k, 0};
        m.warmup = warmup;
        struct skp_writer w;
        ck_assert_uint_lt(at + SKP_HEADER_SIZE, cap);
        skp_writer_init(&w, buf + at + SKP_HEADER_SIZE, cap - at - SKP_HEADER_SIZE);
        skp_encode_eval_req(&w, &m);
        ck_assert_int_eq(w.err, 0);
        struct skp_header h = {SKP_VERSION, SKP_OP_POSE, 0, 0, k + 1, (uint32_t)w.len};
        skp_encode_header(&h, buf + at);
        at += SKP_HEADER_SIZE + w.len;
    }
    return at;
}

/* Each of ids 1..n answered OK once, in any order. */
static void expect_poses_ok(struct raw *r, uint32_t n)
{
    bool seen[64] = {false};
    ck_assert_uint_le(n, 64);
    for (uint32_t k = 0; k < n; k++) {
        struct skp_header h;
        const uint8_t *body;
        ck_assert_msg(raw_recv(r, &h, &body) == 1, "reply %u of %u missing", k + 1, n);
        ck_assert_msg(h.opcode == SKP_OP_POSE && h.status == SKP_S_OK && h.id >= 1 && h.id <= n &&
                          !seen[h.id - 1],
                      "reply %u: op %u id %u status %u", k + 1, h.opcode, h.id, h.status);
        seen[h.id - 1] = true;
    }
}

/* Frames that come in one read run as --max-inflight lets them, the rest waiting in the
 * connection's buffer: a client that never read its replies once had every frame of its
 * reads run at once (290 renders of 2048x2048, 4.8 GB). With one worker, a queue of 3 and
 * --max-inflight 2, twelve slow POSEs sent in one write never fill the queue: none is BUSY. */
START_TEST(buffered_frames_wait_for_max_inflight)
{
    enum { N = 12 };
    struct daemon *d =
        daemon_up(g_samples, FLAGS("--threads", "1", "--max-inflight", "2", "--queue-depth", "3"));
    skc_client *c = client_open(d->unix_uri, NULL);
    unsigned char id[SKC_ID_SIZE];
    load_path(c, "robot.skf", id);
    static uint8_t frames[N * 256];
    size_t n = slow_poses(frames, sizeof frames, id, N, 20000);
    struct raw *r = raw_open(d->tcp_uri);
    raw_send(r, frames, n);
    expect_poses_ok(r, N);
    raw_close(r);
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* The frame deadline runs only while the daemon reads: a frame whose rest waits unread
 * because the daemon paused (--max-inflight) is not late. Three slow POSEs and the first bytes
 * of a fourth; once the first is answered (so all of that has been read), the rest of the
 * fourth: all four are answered, where the paused frame once ran into --frame-timeout 1 while
 * the two slow POSEs before it ran, and ended the connection with FRAMING. */
START_TEST(paused_reading_stops_the_frame_deadline)
{
    struct daemon *d = daemon_up(
        g_samples, FLAGS("--threads", "1", "--max-inflight", "1", "--frame-timeout", "1"));
    skc_client *c = client_open(d->unix_uri, NULL);
    unsigned char id[SKC_ID_SIZE];
    load_path(c, "robot.skf", id);
    static uint8_t frames[4 * 256];
    size_t n = slow_poses(frames, sizeof frames, id, 4, 400000); /* a second or so each */
    struct raw *r = raw_open(d->tcp_uri);
    raw_send(r, frames, n - 10);
    raw_expect(r, SKP_OP_POSE, 1, SKP_S_OK, NULL);
    raw_send(r, frames + n - 10, 10);
    for (uint32_t k = 2; k <= 4; k++) /* one worker, one at a time: in order */
        raw_expect(r, SKP_OP_POSE, k, SKP_S_OK, NULL);
    raw_close(r);
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* Before HELLO with the auth token, a frame bigger than a HELLO is refused by its header:
 * four unauthenticated clients once held 200 MB of LOAD bodies. */
START_TEST(unauthenticated_frames_are_tiny)
{
    struct daemon *d = daemon_up(g_samples, FLAGS("--auth-token", "s3cret"));
    struct raw *r = raw_open(d->unix_uri);
    raw_partial(r, SKP_OP_LOAD_BYTES, 48u << 20, 4096);
    raw_expect_error(r, 0, 0, SKP_S_TOO_BIG);
    raw_expect_closed(r);
    raw_close(r);
    skc_client *c = client_open(d->tcp_uri, "s3cret"); /* authenticated: the usual limit */
    unsigned char id[SKC_ID_SIZE];
    load_path(c, "robot.skf", id);
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* Over --max-connections a client is told so (BUSY, then the end), not cut off in silence. */
START_TEST(over_max_connections_gets_busy)
{
    struct daemon *d = daemon_up(g_samples, FLAGS("--max-connections", "2"));
    struct raw *a = raw_open(d->unix_uri), *b = raw_open(d->unix_uri);
    raw_ping(a, 1, "a");
    raw_ping(b, 1, "b");
    struct raw *c = raw_open(d->unix_uri);
    raw_expect_error(c, 0, 0, SKP_S_BUSY);
    raw_expect_closed(c);
    raw_close(c);
    raw_close(b);
    skc_client *k = client_when_room(d->unix_uri);
    ck_assert_uint_ge(counter(k, "connections.refused"), 1);
    skc_free(k);
    raw_close(a);
    daemon_stop(d);
}
END_TEST

/* Memory for partly received frames is bounded over all connections: past --max-input-mb a
 * connection is answered BUSY and ended, and the others go on. (16 half-sent LOADs once held
 * 791 MB.) Two frames of 900 KiB, 800 KiB of each sent, against a budget of 1 MiB: whichever
 * the daemon reads second cannot grow its buffer. */
START_TEST(input_buffers_are_bounded)
{
    struct daemon *d = daemon_up(g_samples, FLAGS("--max-input-mb", "1"));
    struct raw *r[2] = {raw_open(d->unix_uri), raw_open(d->unix_uri)};
    for (int i = 0; i < 2; i++)
        raw_partial(r[i], SKP_OP_LOAD_BYTES, 900u << 10, 800u << 10);
    struct pollfd p[2] = {{r[0]->fd, POLLIN, 0}, {r[1]->fd, POLLIN, 0}};
    ck_assert_int_eq(poll(p, 2, 10000), 1); /* one answer, the other frame still pending */
    int refused = (p[1].revents & POLLIN) ? 1 : 0;
    raw_expect_error(r[refused], 0, 0, SKP_S_BUSY);
    raw_expect_closed(r[refused]);
    struct raw *other = raw_open(d->tcp_uri); /* and there is room for small frames */
    raw_ping(other, 1, "small");
    raw_close(other);
    raw_close(r[0]);
    raw_close(r[1]);
    daemon_stop(d);
}
END_TEST

/* The daemon's resident memory, in KiB. */
static long rss_kb(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kb = atol(line + 6);
    fclose(f);
    ck_assert_int_gt(kb, 0);
    return kb;
}

/* Hostile armatures are refused before they cost memory, the refusal names the limit, the
 * daemon keeps serving and its memory comes back near where it was: a 100 KB upload holding
 * 64 MiB of numbers in an unknown key once took 11 s and 1 GB, and a file of a million bones
 * kept 1.75 GB after its LIMIT reply. */
START_TEST(hostile_armatures_cost_no_memory)
{
    struct daemon *d = daemon_up(g_samples, FLAGS("--threads", "2"));
    skc_client *c = client_open(d->unix_uri, NULL);
    unsigned char id[SKC_ID_SIZE];
    load_path(c, "robot.skf", id);
    long base = rss_kb(d->pid);
    /* 64 MiB of numbers in an unknown key */
    size_t n = 64u << 20;
    char *json = malloc(n + 64);
    ck_assert_ptr_nonnull(json);
    strcpy(json, "{\"bones\":[{}],\"junk\":[");
    size_t at = strlen(json);
    while (at + 4 < n) {
        memcpy(json + at, "1,", 2);
        at += 2;
    }
    strcpy(json + at, "1]}");
    void *skf;
    size_t len;
    ck_assert_int_eq(th_skf(json, 0, &skf, &len), 0);
    ck_assert_uint_lt(len, 1u << 20); /* it compresses to almost nothing */
    for (int i = 0; i < 4; i++) {
        expect_status(c, skc_load_bytes(c, skf, len, id, NULL), SKC_S_LIMIT, "64 MiB of numbers");
        ck_assert_msg(strstr(skc_errmsg(c), "exceed the limit"), "%s", skc_errmsg(c));
    }
    free(skf);
    /* a million bones, in 3 MB of JSON */
    strcpy(json, "{\"bones\":[{}");
    at = strlen(json);
    for (int i = 1; i < 1000000; i++) {
        memcpy(json + at, ",{}", 3);
        at += 3;
    }
    strcpy(json + at, "]}");
    ck_assert_int_eq(th_skf(json, 0, &skf, &len), 0);
    free(json);
    for (int i = 0; i < 4; i++)
        expect_status(c, skc_load_bytes(c, skf, len, id, NULL), SKC_S_LIMIT, "a million bones");
    free(skf);
    load_path(c, "critter.skf", id); /* still serving */
    long after = rss_kb(d->pid);
    ck_assert_msg(after < base + 64 * 1024, "RSS %ld KiB after the attack, %ld before", after,
                  base);
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* RENDER takes no engine options: its camera places the picture, and the framing (and every
 * other front) draws without them; a scale of 2 drew past a fitted camera's picture. Each is
 * BAD_REQUEST naming them, and the connection goes on. */
START_TEST(render_refuses_engine_options)
{
    struct daemon *d = daemon_up(g_samples, NULL);
    skc_client *c = client_open(d->unix_uri, NULL);
    skc_eval ev;
    skc_render_opts ro;
    robot_walk_render(c, &ev, &ro, 64);
    for (int k = 0; k < 4; k++) {
        skc_eval odd = ev;
        if (k == 0)
            odd.scale = (skc_vec2){2, 2};
        else if (k == 1)
            odd.position = (skc_vec2){0, 5};
        else if (k == 2)
            odd.velocity = (skc_vec2){1, 0};
        else
            odd.flags |= SKC_EVAL_Y_DOWN;
        expect_status(c, skc_render(c, &odd, &ro, NULL), SKC_S_BAD_REQUEST, "engine options");
        ck_assert_msg(strstr(skc_errmsg(c), "RENDER takes no engine options"), "%s", skc_errmsg(c));
    }
    skc_reply_free(render_ok(c, &ev, &ro));
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* A reply over the protocol's 64 MiB frame (a 4096x4096 picture as raw RGBA is 64 MiB and
 * then some) is LIMIT, saying why, and the connection goes on: libskc would have closed it on
 * such a frame. The same picture as a PNG is far smaller and comes. */
START_TEST(reply_over_the_frame_is_limit)
{
    struct daemon *d = daemon_up(g_samples, FLAGS("--threads", "1"));
    skc_client *c = client_open(d->unix_uri, NULL);
    skc_eval ev;
    skc_render_opts ro;
    robot_walk_render(c, &ev, &ro, 4096);
    ro.format = SKC_FORMAT_RGBA;
    expect_status(c, skc_render(c, &ev, &ro, NULL), SKC_S_LIMIT, "64 MiB of RGBA");
    ck_assert_msg(strstr(skc_errmsg(c), "over the protocol's frame"), "%s", skc_errmsg(c));
    ck_assert_int_eq(skc_ping(c, "after", 5), 0);
    ro.format = SKC_FORMAT_PNG;
    skc_reply_free(render_ok(c, &ev, &ro));
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* Loads a .skf of 1,000 translucent layers, each a 64x64 texture 8 times its size (framed at
 * 512x512, they cover the picture about 800 times). With grow, they hang from a root bone that
 * grows at frame 5 of "grow" from a thousandth of its size: the frames before it draw in a moment.
 */
static void load_layers(skc_client *c, bool grow, unsigned char id[SKC_ID_SIZE])
{
    size_t cap = 1024 + 1000 * 160;
    char *json = malloc(cap);
    ck_assert_ptr_nonnull(json);
    int n = snprintf(json, cap,
                     "{\"atlases\":[{\"filename\":\"atlas0.png\",\"size\":{\"x\":64,"
                     "\"y\":64}}],\"styles\":[{\"id\":0,\"name\":\"Default\",\"textures\":[{"
                     "\"name\":\"t\",\"offset\":{\"x\":0,\"y\":0},\"size\":{\"x\":64,"
                     "\"y\":64},\"atlas_idx\":0}]}],\"bones\":[%s",
                     grow ? "{\"id\":0,\"name\":\"root\"}," : "");
    for (int i = 0; i < 1000; i++)
        n += snprintf(json + n, cap - (size_t)n,
                      "%s{\"id\":%d,%s\"tex\":\"t\",\"scale\":{\"x\":8,\"y\":8},"
                      "\"tint\":{\"r\":255,\"g\":255,\"b\":255,\"a\":40}}",
                      i ? "," : "", i + grow, grow ? "\"parent_id\":0," : "");
    n += snprintf(json + n, cap - (size_t)n, "]");
    if (grow) {
        static const int frames[] = {0, 4, 5};
        n += snprintf(json + n, cap - (size_t)n,
                      ",\"animations\":[{\"name\":\"grow\",\"fps\":10,\"keyframes\":[");
        for (int k = 0; k < 6; k++)
            n += snprintf(json + n, cap - (size_t)n,
                          "%s{\"frame\":%d,\"bone_id\":0,\"element\":\"%s\",\"value\":%s}",
                          k ? "," : "", frames[k / 2], k % 2 ? "ScaleY" : "ScaleX",
                          k < 4 ? "0.001" : "1");
        n += snprintf(json + n, cap - (size_t)n, "]}]");
    }
    n += snprintf(json + n, cap - (size_t)n, "}");
    ck_assert_uint_lt((size_t)n, cap);
    void *skf;
    size_t len;
    ck_assert_int_eq(th_skf(json, 1, &skf, &len), 0);
    free(json);
    ck_assert_int_eq(skc_load_bytes(c, skf, len, id, NULL), 0);
    free(skf);
}

/* A small file whose drawing would hold a worker for seconds (1,000 translucent layers, each
 * the whole drawing) is refused before it is drawn, naming the frame; the file stays loaded
 * and posable, and the daemon keeps drawing everyone else. */
START_TEST(hostile_drawing_is_refused)
{
    struct daemon *d =
        daemon_up(g_samples, FLAGS("--threads", "1", "--max-bone-steps", "10000000"));
    skc_client *c = client_open(d->unix_uri, NULL);
    unsigned char id[SKC_ID_SIZE], robot[SKC_ID_SIZE];
    load_layers(c, false, id);
    load_path(c, "robot.skf", robot);
    skc_eval ev;
    skc_render_opts ro;
    skc_eval_init(&ev);
    memcpy(ev.armature, id, SKC_ID_SIZE);
    skc_render_opts_init(&ro);
    ro.width = ro.height = 512; /* framed: the layers cover it about 800 times */
    for (int i = 0; i < 3; i++) {
        expect_status(c, skc_render(c, &ev, &ro, NULL), SKC_S_LIMIT, "1,000 layers");
        ck_assert_msg(strstr(skc_errmsg(c), "frame 0: its triangles would take at least") &&
                          strstr(skc_errmsg(c), "pixels of fill"),
                      "%s", skc_errmsg(c));
    }
    ro.width = ro.height = 16; /* the same file, small enough to draw */
    skc_reply_free(render_ok(c, &ev, &ro));
    skc_reply_free(pose_ok(c, &ev));
    eval_one(&ev, robot, "Walk", 10, 0);
    ro.width = ro.height = 512;
    skc_reply_free(render_ok(c, &ev, &ro));
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* A range is refused at the first frame past its share of the drawing budget, named in the
 * message, and the frames before it do not make a partial answer; the same range short of
 * that frame is drawn, and so is the frame alone at a size within the budget. */
START_TEST(a_range_is_refused_at_the_frame_past_its_share)
{
    struct daemon *d =
        daemon_up(g_samples, FLAGS("--threads", "1", "--max-bone-steps", "10000000"));
    skc_client *c = client_open(d->unix_uri, NULL);
    unsigned char id[SKC_ID_SIZE];
    load_layers(c, true, id);
    skc_eval ev;
    skc_render_opts ro;
    eval_one(&ev, id, "grow", 0, 0);
    skc_render_opts_init(&ro);
    ro.width = ro.height = 512;
    ro.has_range = 1;
    ro.first = 1; /* frame 5 is the range's fifth picture: the message names the frame */
    ro.last = 6;
    expect_status(c, skc_render(c, &ev, &ro, NULL), SKC_S_LIMIT, "frames 1-6 of growing layers");
    ck_assert_msg(strstr(skc_errmsg(c), "frame 5: its triangles would take at least"), "%s",
                  skc_errmsg(c));
    ck_assert_uint_eq(counter(c, "refusals.LIMIT"), 1); /* STATS says what refused it */
    ro.last = 4;
    skc_reply *r = render_ok(c, &ev, &ro);
    uint32_t n;
    const skc_image *im = skc_reply_images(r, &n);
    ck_assert_uint_eq(n, 4);
    ck_assert(im[0].frame == 1 && im[3].frame == 4);
    skc_reply_free(r);
    ro.has_range = 0;
    ro.width = ro.height = 16;
    eval_one(&ev, id, "grow", 5, 0);
    skc_reply_free(render_ok(c, &ev, &ro));
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* A picture far larger than a worker keeps (4096x4096: 64 MiB of buffers) is
 * let go after its reply, not held for the worker's life: the daemon's memory comes back near
 * where it was after a usual render, and it keeps serving. */
START_TEST(large_picture_memory_is_let_go)
{
    /* Under AddressSanitizer, freed memory waits in a quarantine of 256 MiB, where the
     * 64 MiB buffers would sit and count: this daemon's quarantine is made smaller than they
     * are, so that they go back as they would without it (other options are kept). */
    const char *asan = getenv("ASAN_OPTIONS");
    char *saved = asan ? strdup(asan) : NULL, opts[1024];
    snprintf(opts, sizeof opts, "%s%squarantine_size_mb=16", asan ? asan : "", asan ? ":" : "");
    setenv("ASAN_OPTIONS", opts, 1);
    struct daemon *d = daemon_up(g_samples, FLAGS("--threads", "1"));
    if (saved)
        setenv("ASAN_OPTIONS", saved, 1);
    else
        unsetenv("ASAN_OPTIONS");
    free(saved);
    skc_client *c = client_open(d->unix_uri, NULL);
    skc_eval ev;
    skc_render_opts ro;
    robot_walk_render(c, &ev, &ro, 512);
    skc_reply_free(render_ok(c, &ev, &ro)); /* the buffers a worker keeps */
    long base = rss_kb(d->pid);
    ro.width = ro.height = 4096;
    for (int i = 0; i < 2; i++)
        skc_reply_free(render_ok(c, &ev, &ro));
    ro.width = ro.height = 512;
    skc_reply_free(render_ok(c, &ev, &ro));
    long after = rss_kb(d->pid);
    ck_assert_msg(after < base + 32 * 1024, "RSS %ld KiB after 4096x4096 renders, %ld before",
                  after, base);
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* Near the file-descriptor limit the daemon keeps accepting: a connection it cannot keep is
 * told so (BUSY) and ended, never left hanging in the backlog; the log says why; and once
 * descriptors are free it serves again. The limit is lowered on the running daemon. */
START_TEST(fd_exhaustion_keeps_accepting)
{
    struct daemon *d = daemon_up(g_samples, NULL);
    struct rlimit rl = {48, 48};
    ck_assert_int_eq(prlimit(d->pid, RLIMIT_NOFILE, &rl, NULL), 0);
    enum { N = 80 };
    struct raw *r[N];
    int served = 0, ended = 0;
    for (int i = 0; i < N; i++) {
        r[i] = raw_open(d->unix_uri);
        uint8_t ping[SKP_HEADER_SIZE + 4] = {0};
        struct skp_header hd = {SKP_VERSION, SKP_OP_PING, 0, 0, 1, 4};
        skp_encode_header(&hd, ping);
        if (send(r[i]->fd, ping, sizeof ping, MSG_NOSIGNAL) != (ssize_t)sizeof ping) {
            ended++; /* already ended by the daemon: fine, it did not hang */
            continue;
        }
        struct pollfd p = {r[i]->fd, POLLIN, 0};
        ck_assert_msg(poll(&p, 1, 10000) == 1, "connection %d hangs", i);
        struct skp_header h;
        const uint8_t *body;
        if (raw_recv(r[i], &h, &body) == 1 && h.status == SKP_S_OK)
            served++;
        else
            ended++;
    }
    ck_assert_msg(served >= 10 && ended >= 10, "%d served, %d ended", served, ended);
    for (int i = 0; i < N; i++)
        raw_close(r[i]);
    skc_client *k = client_when_room(d->unix_uri);
    skc_free(k);
    daemon_stop(d);
    size_t len;
    char *log = slurp(d->err, &len);
    ck_assert_msg(log && strstr(log, "file-descriptor limit"), "nothing logged");
    free(log);
}
END_TEST

/* Under the root, a FIFO nobody writes to and a directory are refused as what they are, at
 * once: two such LOADs once blocked both workers in open() and SIGTERM never completed. And
 * no error names the root's absolute path. */
START_TEST(load_path_fifo_and_leaks)
{
    char root[PATH_MAX], p[PATH_MAX];
    make_root(g_work, root);
    ck_assert_int_eq(mkfifo(join(p, root, "fifo.skf"), 0600), 0);
    ck_assert_int_eq(mkdir(join(p, root, "dir.skf"), 0700), 0);
    struct daemon *d = daemon_up(root, FLAGS("--threads", "2"));
    skc_client *c = client_open(d->unix_uri, NULL);
    unsigned char id[SKC_ID_SIZE];
    for (int i = 0; i < 3; i++) {
        expect_status(c, skc_load_path(c, "fifo.skf", id, NULL), SKC_S_BAD_REQUEST, "FIFO");
        ck_assert_msg(strstr(skc_errmsg(c), "fifo.skf: not a regular file"), "%s", skc_errmsg(c));
    }
    expect_status(c, skc_load_path(c, "dir.skf", id, NULL), SKC_S_BAD_REQUEST, "directory");
    const char *const missing[] = {"missing.skf", "dir.skf/x.skf", "sub/nothing.skf"};
    for (size_t i = 0; i < 3; i++) {
        skc_load_path(c, missing[i], id, NULL);
        ck_assert_msg(!strstr(skc_errmsg(c), g_work), "error names the root: %s", skc_errmsg(c));
    }
    load_path(c, "robot.skf", id); /* the workers are free */
    skc_free(c);
    daemon_stop(d); /* and SIGTERM completes */
}
END_TEST

/* The root escape by race: a directory under the root swapped with a symlink to the outside
 * (renameat2 RENAME_EXCHANGE) while LOADs of a file in it run. The outside holds another
 * armature; it must never load. The daemon once checked the path, then opened it later
 * following links: 2% of such LOADs escaped. A bounded number of tries, no timing. */
START_TEST(load_path_swap_race)
{
    char root[PATH_MAX], p[PATH_MAX], q[PATH_MAX], src[PATH_MAX];
    make_root(g_work, root);
    copy_file(sample(src, "critter.skf"), join(p, g_work, "outside/robot.skf"));
    ck_assert_int_eq(mkdir(join(p, root, "swap"), 0700), 0);
    copy_file(sample(src, "robot.skf"), join(p, root, "swap/robot.skf"));
    ck_assert_int_eq(symlink(join(q, g_work, "outside"), join(p, root, "other")), 0);
    struct daemon *d = daemon_up(root, FLAGS("--threads", "2"));
    skc_client *c = client_open(d->unix_uri, NULL);
    unsigned char id[SKC_ID_SIZE], inside[SKC_ID_SIZE];
    load_path(c, "swap/robot.skf", inside);
    pid_t swapper = fork();
    ck_assert_int_ge(swapper, 0);
    if (swapper == 0) {
        char a[PATH_MAX], b[PATH_MAX];
        join(a, root, "swap");
        join(b, root, "other");
        for (long i = 0; i < 2000000; i++) /* bounded; killed when the LOADs are done */
            if (syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, 2 /* RENAME_EXCHANGE */))
                _exit(3);
        _exit(0);
    }
    int escaped = 0, loaded = 0;
    for (int i = 0; i < 3000; i++) {
        if (skc_load_path(c, "swap/robot.skf", id, NULL) != 0)
            continue; /* refused or not found mid-swap: fine */
        loaded++;
        escaped += memcmp(id, inside, SKC_ID_SIZE) != 0;
    }
    kill(swapper, SIGKILL);
    int st;
    waitpid(swapper, &st, 0);
    ck_assert_msg(!WIFEXITED(st) || WEXITSTATUS(st) == 0, "the swapper failed");
    ck_assert_msg(escaped == 0, "%d of %d LOADs read the file outside the root", escaped, loaded);
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* How many times needle is in hay (NULL: none). */
static int occurrences(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay ? strstr(hay, needle) : NULL; p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* Sends SIGHUP and waits until d logs this reload (--log-level info), not an earlier one;
 * returns the log (free it). */
static char *reload(struct daemon *d)
{
    char *log = slurp(d->err, NULL);
    int before = occurrences(log, "configuration reloaded");
    ck_assert_int_eq(kill(d->pid, SIGHUP), 0);
    int64_t deadline = now_ms() + 120000; /* a bound for a hung daemon, not a timing */
    for (;;) {                            /* until the daemon says it reloaded */
        free(log);
        log = slurp(d->err, NULL);
        if (occurrences(log, "configuration reloaded") > before || now_ms() > deadline)
            break;
        sleep_ms(20);
    }
    return log;
}

/* A file LOADed by path again, still the version read before and its armature still cached,
 * is opened but not read or hashed: loads.unchanged counts it, and the answer is the same.
 * With --file-settle-ms 0 a file is remembered as soon as it is read (the default waits until
 * it has not changed for 3 s). Another spelling of the path is read once for itself; a file
 * replaced by another is read again; once the armature is unloaded the file is read and
 * parsed again, and remembered. Reloaded with -1, every LOAD reads, remembered files too. */
START_TEST(load_path_reads_an_unchanged_file_once)
{
    char root[PATH_MAX], p[PATH_MAX], src[PATH_MAX];
    if (!th_local_fs(g_work)) { /* the daemon reads every time there: nothing to see */
        fprintf(stderr,
                "SKIP load_path_reads_an_unchanged_file_once: %s is not on a local "
                "filesystem\n",
                g_work);
        return;
    }
    make_root(g_work, root);
    char conf[PATH_MAX];
    join(conf, g_work, "skeld.conf");
    spit(conf, "file-settle-ms = 0\n", 19);
    struct daemon *d = daemon_up(root, FLAGS("--config", conf, "--log-level", "info"));
    skc_client *c = client_open(d->unix_uri, NULL);
    unsigned char id[SKC_ID_SIZE], again[SKC_ID_SIZE];
    uint64_t parsed = counter(c, "loads.parsed");
    load_path(c, "robot.skf", id);
    ck_assert_uint_eq(counter(c, "loads.unchanged"), 0);
    load_path(c, "robot.skf", again);
    ck_assert(!memcmp(id, again, SKC_ID_SIZE));
    ck_assert_uint_eq(counter(c, "loads.unchanged"), 1);
    ck_assert_uint_eq(counter(c, "loads.parsed"), parsed + 1);
    load_path(c, "./robot.skf", again);
    ck_assert(!memcmp(id, again, SKC_ID_SIZE));
    ck_assert_uint_eq(counter(c, "loads.unchanged"), 1);
    load_path(c, "./robot.skf", again);
    ck_assert_uint_eq(counter(c, "loads.unchanged"), 2);

    /* replaced by another armature (another size, another inode): read, a new id */
    char tmp[PATH_MAX];
    copy_file(sample(src, "critter.skf"), join(tmp, root, "new.tmp"));
    ck_assert_int_eq(rename(tmp, join(p, root, "robot.skf")), 0);
    load_path(c, "robot.skf", again);
    ck_assert(memcmp(id, again, SKC_ID_SIZE) != 0);
    ck_assert_uint_eq(counter(c, "loads.unchanged"), 2);
    ck_assert_uint_eq(counter(c, "loads.parsed"), parsed + 2);
    load_path(c, "robot.skf", id);
    ck_assert(!memcmp(id, again, SKC_ID_SIZE));
    ck_assert_uint_eq(counter(c, "loads.unchanged"), 3);

    /* unloaded: read and parsed again, then remembered again */
    ck_assert_msg(skc_unload(c, id) == 0, "UNLOAD: %s", skc_errmsg(c));
    load_path(c, "robot.skf", again);
    ck_assert(!memcmp(id, again, SKC_ID_SIZE));
    ck_assert_uint_eq(counter(c, "loads.parsed"), parsed + 3);
    ck_assert_uint_eq(counter(c, "loads.unchanged"), 3);
    load_path(c, "robot.skf", again);
    ck_assert_uint_eq(counter(c, "loads.unchanged"), 4);

    /* -1 after a reload: every LOAD reads the file, though the memo still holds it */
    spit(conf, "file-settle-ms = -1\n", 20);
    char *log = reload(d);
    ck_assert_msg(log && strstr(log, "configuration reloaded, 1 option changed"), "%s", log);
    free(log);
    for (int i = 0; i < 3; i++)
        load_path(c, "robot.skf", again);
    ck_assert_uint_eq(counter(c, "loads.unchanged"), 4);
    skc_free(c);
    daemon_stop(d);
}
END_TEST

START_TEST(load_path_confined)
{
    char root[PATH_MAX], outside[PATH_MAX];
    make_root(g_work, root);
    join(outside, g_work, "outside/robot.skf");
    struct daemon *d = daemon_up(root, NULL);
    skc_client *c = client_open(d->unix_uri, NULL);
    /* Each of these exists and would load if the daemon followed it out of the root. */
    const char *const refused[] = {"../outside/robot.skf", "sub/../robot.skf", outside, "link.skf",
                                   "sub/robot.skf",        "sib.skf"};
    unsigned char id[SKC_ID_SIZE], ok[SKC_ID_SIZE];
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        expect_status(c, skc_load_path(c, refused[i], id, NULL), SKC_S_FORBIDDEN_PATH, refused[i]);
    ck_assert_uint_eq(counter(c, "cache.entries"), 0);
    load_path(c, "robot.skf", ok);
    const char *const allowed[] = {"inlink.skf", "..x.skf", "./robot.skf"};
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++) {
        load_path(c, allowed[i], id);
        ck_assert_msg(memcmp(id, ok, SKC_ID_SIZE) == 0, "%s: another id", allowed[i]);
    }
    expect_status(c, skc_load_path(c, "missing.skf", id, NULL), SKC_S_NOT_FOUND, "missing");
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* ======================================================================================== */
/* 7. Auth token                                                                            */
/* ======================================================================================== */

/* Before a good HELLO only HELLO and PING are answered; a wrong HELLO changes nothing. */
static void check_raw_auth(const char *uri)
{
    static const uint8_t pose_body[8] = {0};
    struct raw *r = raw_open(uri);
    raw_ping(r, 1, "open");
    raw_expect_pong(r, 1, "open");
    raw_load_path(r, 2, "robot.skf");
    raw_expect_error(r, SKP_OP_LOAD_PATH, 2, SKP_S_AUTH);
    raw_frame(r, SKP_OP_POSE, 3, pose_body, sizeof pose_body);
    raw_expect_error(r, SKP_OP_POSE, 3, SKP_S_AUTH);
    raw_frame(r, SKP_OP_STATS, 4, NULL, 0);
    raw_expect_error(r, SKP_OP_STATS, 4, SKP_S_AUTH);
    raw_hello(r, 5, "wrong");
    raw_expect_error(r, SKP_OP_HELLO, 5, SKP_S_AUTH);
    raw_load_path(r, 6, "robot.skf");
    raw_expect_error(r, SKP_OP_LOAD_PATH, 6, SKP_S_AUTH);
    raw_hello(r, 7, "s3cret");
    raw_expect(r, SKP_OP_HELLO, 7, SKP_S_OK, NULL);
    raw_load_path(r, 8, "robot.skf");
    raw_expect(r, SKP_OP_LOAD_PATH, 8, SKP_S_OK, NULL);
    raw_close(r);
}

/* A connection refused for token (NULL: none), with the message why. */
static void expect_refused(const char *uri, const char *token, const char *why)
{
    skc_options o = {uri, token, 5000, 5000, 0};
    skc_client *c = NULL;
    int rc = skc_connect(&c, &o);
    ck_assert_msg(rc == SKC_ESERVER && skc_status(c) == SKC_S_AUTH && strstr(skc_errmsg(c), why),
                  "token \"%s\": rc %d status %d: %s", token ? token : "(none)", rc, skc_status(c),
                  skc_errmsg(c));
    skc_free(c);
}

START_TEST(auth_token)
{
    struct daemon *d = daemon_up(g_samples, FLAGS("--auth-token", "s3cret"));
    check_raw_auth(d->tcp_uri);
    /* libskc always says HELLO: without a token, the answer says one is needed */
    expect_refused(d->unix_uri, NULL, "needs an auth token; the HELLO has none");
    expect_refused(d->tcp_uri, "guess", "wrong auth token");
    expect_refused(d->tcp_uri, "s3cret-and-more", "wrong auth token");
    /* A handle refused for its token takes another and reconnects with it */
    skc_options wrong = {d->unix_uri, "guess", 5000, 5000, 0};
    skc_client *c = NULL;
    ck_assert_int_eq(skc_connect(&c, &wrong), SKC_ESERVER);
    ck_assert_int_eq(skc_set_auth_token(c, "s3cret"), 0);
    ck_assert_msg(skc_reconnect(c) == 0, "%s", skc_errmsg(c));
    ck_assert_int_eq(skc_ping(c, "in", 2), 0);
    /* one HELLO accepts a token, a wrong one changes nothing, and a reconnect sends the
     * accepted one */
    ck_assert_int_eq(skc_set_auth_token(c, NULL), 0);
    ck_assert_int_eq(skc_hello(c, "s3cret"), 0);
    ck_assert_int_eq(skc_hello(c, "guess"), SKC_ESERVER);
    ck_assert_msg(skc_reconnect(c) == 0, "%s", skc_errmsg(c));
    ck_assert_int_eq(skc_ping(c, "in", 2), 0);
    skc_free(c);
    c = client_open(d->unix_uri, "s3cret");
    unsigned char id[SKC_ID_SIZE];
    load_path(c, "robot.skf", id);
    skc_eval ev;
    eval_one(&ev, id, "Idle", 4, 0);
    skc_reply_free(pose_ok(c, &ev));
    ck_assert_uint_ge(counter(c, "requests.HELLO"), 4);
    skc_free(c);
    const char *ok[] = {g_ctl, "--uri", d->tcp_uri, "--token", "s3cret", "ping", NULL};
    const char *no[] = {g_ctl, "--uri", d->tcp_uri, "ping", NULL};
    char *out;
    size_t len;
    ck_assert_int_eq(run_cmd(ok, &out, &len), 0);
    ck_assert_str_eq(out, "pong\n");
    free(out);
    fprintf(stderr, "check_roundtrip: an auth error from skelctl is expected next:\n");
    ck_assert_int_eq(run_cmd(no, &out, &len), 1);
    free(out);
    daemon_stop(d);
}
END_TEST

/* A request refused because the token c authenticated with has changed since. */
static void expect_token_changed(skc_client *c, int rc, const char *what)
{
    expect_status(c, rc, SKC_S_AUTH, what);
    ck_assert_msg(strstr(skc_errmsg(c), "auth token changed") &&
                      strstr(skc_errmsg(c), "send HELLO with the new one"),
                  "%s: %s", what, skc_errmsg(c));
}

/* The token set in a config file, then SIGHUP (a NULL token: none). */
static void reload_token(struct daemon *d, const char *conf, const char *token)
{
    char text[128];
    int n = token ? snprintf(text, sizeof text, "auth-token = %s\n", token) : 0;
    spit(conf, text, (size_t)n);
    char *log = reload(d);
    ck_assert_msg(log && strstr(log, "configuration reloaded"), "%s", log);
    free(log);
}

/* A token changed by SIGHUP ends what connections authenticated under the old one may do:
 * their next request but HELLO and PING is AUTH until a HELLO with the new token, on the same
 * connection. So does setting a token where there was none, and removing one. A reload that
 * leaves the token alone revokes nothing. */
START_TEST(sighup_token_change_revokes)
{
    char conf[PATH_MAX];
    join(conf, g_work, "skeld.conf");
    spit(conf, "auth-token = old\n", 17);
    struct daemon *d = daemon_up(g_samples, FLAGS("--config", conf, "--log-level", "info"));
    skc_client *c = client_open(d->unix_uri, "old");
    unsigned char id[SKC_ID_SIZE];
    load_path(c, "robot.skf", id);

    reload_token(d, conf, "new");
    expect_token_changed(c, skc_load_path(c, "robot.skf", id, NULL), "LOAD after the change");
    ck_assert_int_eq(skc_ping(c, "still", 5), 0); /* open: PING, and the connection */
    expect_status(c, skc_hello(c, "old"), SKC_S_AUTH, "HELLO with the old token");
    expect_token_changed(c, skc_load_path(c, "robot.skf", id, NULL), "LOAD after a bad HELLO");
    ck_assert_msg(skc_hello(c, "new") == 0, "HELLO with the new token: %s", skc_errmsg(c));
    load_path(c, "robot.skf", id);
    expect_refused(d->tcp_uri, "old", "wrong auth token");

    /* another option changed, the token not: nothing revoked */
    spit(conf, "auth-token = new\nmax-bones = 5000\n", 34);
    free(reload(d));
    load_path(c, "robot.skf", id);

    /* removed: a HELLO (with no token) is needed again; a new connection needs none */
    reload_token(d, conf, NULL);
    expect_token_changed(c, skc_load_path(c, "robot.skf", id, NULL), "LOAD after the removal");
    ck_assert_msg(skc_hello(c, NULL) == 0, "HELLO with no token: %s", skc_errmsg(c));
    load_path(c, "robot.skf", id);
    skc_client *open = client_open(d->unix_uri, NULL);
    load_path(open, "robot.skf", id);

    /* set where there was none: the connection that needed none must now HELLO with it */
    reload_token(d, conf, "again");
    expect_token_changed(open, skc_load_path(open, "robot.skf", id, NULL), "LOAD after the set");
    ck_assert_msg(skc_hello(open, "again") == 0, "HELLO with the set token: %s", skc_errmsg(open));
    load_path(open, "robot.skf", id);
    skc_free(open);
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* ======================================================================================== */
/* 8. BUSY when the queue is full                                                           */
/* ======================================================================================== */

START_TEST(busy_when_queue_full)
{
    enum { N = 32 };
    struct daemon *d = daemon_up(g_samples, FLAGS("--threads", "1", "--queue-depth", "1"));
    skc_client *c = client_open(d->unix_uri, NULL);
    skc_eval ev;
    skc_render_opts ro;
    robot_walk_render(c, &ev, &ro, 1024);
    uint32_t ids[N];
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(skc_send_render(c, &ev, &ro, &ids[i]), 0);
    unsigned ok = 0, busy = 0;
    for (int i = 0; i < N; i++) {
        skc_reply *r = NULL;
        int rc = skc_recv(c, ids[i], &r);
        if (rc == 0) {
            uint32_t n;
            const skc_image *im = skc_reply_images(r, &n);
            ck_assert(n == 1 && im->width == 1024 && im->height == 1024);
            ok++;
        } else {
            expect_status(c, rc, SKC_S_BUSY, "a render past the queue");
            busy++;
        }
        skc_reply_free(r);
    }
    ck_assert_msg(ok >= 1 && busy >= 1, "%u rendered, %u busy", ok, busy);
    ck_assert_uint_eq(counter(c, "busy"), busy);
    /* Afterwards it answers again, renders included. */
    ck_assert_int_eq(skc_ping(c, "after", 5), 0);
    skc_reply_free(render_ok(c, &ev, &ro));
    skc_reply_free(pose_ok(c, &ev));
    skc_free(c);
    daemon_stop(d);
}
END_TEST

/* ======================================================================================== */
/* 9. SIGTERM drains                                                                        */
/* ======================================================================================== */

/* Pipelined renders, then a PING answered: the PING is parsed after the renders before it,
 * so once its reply is back they are queued in the daemon, not waiting in a socket buffer.
 * (Requests not yet read when the signal arrives: sigterm_answers_unread_requests.) */
static void send_renders_then_ping(skc_client *c, const unsigned char id[SKC_ID_SIZE],
                                   uint32_t *ids, int n)
{
    skc_eval ev;
    skc_render_opts ro;
    uint32_t ping;
    eval_one(&ev, id, "Walk", 10, 0);
    skc_render_opts_init(&ro);
    ro.width = ro.height = 2048;
    for (int i = 0; i < n; i++) {
        /* Slow ones first (about half a second each with zlib level 9), then raw pictures
         * of 16 MiB: more than socket buffers hold, so the drain must really wait for the
         * writes before closing. */
        ro.png_level = i < n - 2 ? 9 : SKC_PNG_FAST;
        ro.format = i < n - 2 ? SKC_FORMAT_PNG : SKC_FORMAT_RGBA;
        ck_assert_int_eq(skc_send_render(c, &ev, &ro, &ids[i]), 0);
    }
    ck_assert_int_eq(skc_send_ping(c, "x", 1, &ping), 0);
    ck_assert_msg(skc_recv(c, ping, NULL) == 0, "PING: %s", skc_errmsg(c));
}

/* SIGHUP reloads the configuration file: a limit lowered in it applies to the next request,
 * the daemon keeps its connections and state, and an option that needs a restart is named.
 * (SIGHUP once killed the daemon without draining.) */
START_TEST(sighup_reloads_config)
{
    char conf[PATH_MAX];
    join(conf, g_work, "skeld.conf");
    spit(conf, "max-bone-steps = 100000000\n", 27);
    struct daemon *d = daemon_up(g_samples, FLAGS("--config", conf, "--log-level", "info"));
    skc_client *c = client_open(d->unix_uri, NULL);
    unsigned char id[SKC_ID_SIZE];
    load_path(c, "robot.skf", id);
    skc_eval ev;
    eval_one(&ev, id, "Walk", 3, 0);
    ev.warmup = 2000; /* 2001 steps of 25 bones: about 50,000 bone-steps */
    skc_reply_free(pose_ok(c, &ev));
    const char lowered[] = "max-bone-steps = 10000\nthreads = 3\n";
    spit(conf, lowered, sizeof lowered - 1);
    char *log = reload(d);
    ck_assert_msg(log && strstr(log, "configuration reloaded, 1 option changed: max-bone-steps"),
                  "%s", log);
    ck_assert_msg(strstr(log, "threads changed: it takes effect at the next start"), "%s", log);
    free(log);
    expect_status(c, skc_pose(c, &ev, NULL), SKC_S_LIMIT, "the lowered limit");
    ev.warmup = 0;
    skc_reply_free(pose_ok(c, &ev)); /* same connection, still served */
    skc_free(c);
    daemon_stop(d);
}
END_TEST

START_TEST(sigterm_drains)
{
    enum { N = 5 };
    struct daemon *d = daemon_up(g_samples, FLAGS("--threads", "1"));
    skc_client *c = client_open(d->tcp_uri, NULL), *idle = client_open(d->unix_uri, NULL);
    unsigned char id[SKC_ID_SIZE];
    uint32_t ids[N];
    load_path(c, "robot.skf", id);
    send_renders_then_ping(c, id, ids, N);
    ck_assert_int_eq(kill(d->pid, SIGTERM), 0);
    for (int i = 0; i < N; i++) {
        skc_reply *r = NULL;
        ck_assert_msg(skc_recv(c, ids[i], &r) == 0, "render %d: %s", i, skc_errmsg(c));
        const skc_image *im = skc_reply_images(r, NULL);
        ck_assert(im->width == 2048 && (i < N - 2 || im->size == 2048u * 2048 * 4));
        skc_reply_free(r);
    }
    /* The last render finished long after the signal, so the listeners closed before it:
     * while the connections drain, nobody new gets in. */
    skc_options o = {d->tcp_uri, NULL, 2000, 2000, 0};
    skc_client *late = NULL;
    ck_assert_int_eq(skc_connect(&late, &o), SKC_EIO);
    skc_free(late);
    /* Then the daemon hangs up on both connections and exits 0. */
    ck_assert_int_eq(skc_ping(c, "x", 1), SKC_EIO);
    ck_assert_int_eq(skc_ping(idle, "x", 1), SKC_EIO);
    expect_drained_exit(d);
    skc_free(c);
    skc_free(idle);
}
END_TEST

/* Requests still unread in the socket when the signal comes (reading was paused at
 * --max-inflight 2 behind two slow renders) are read and answered SHUTDOWN, not reset: every
 * request gets a reply, the renders in flight complete, and the daemon exits 0. */
START_TEST(sigterm_answers_unread_requests)
{
    enum { PINGS = 40 };
    struct daemon *d = daemon_up(g_samples, FLAGS("--threads", "1", "--max-inflight", "2"));
    skc_client *c = client_open(d->tcp_uri, NULL);
    skc_eval ev;
    skc_render_opts ro;
    robot_walk_render(c, &ev, &ro, 2048);
    ro.png_level = 9;
    uint32_t renders[2], pings[PINGS];
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(skc_send_render(c, &ev, &ro, &renders[i]), 0);
    for (int i = 0; i < PINGS; i++)
        ck_assert_int_eq(skc_send_ping(c, "p", 1, &pings[i]), 0);
    sleep_ms(150); /* the renders are running; the pings wait unread */
    ck_assert_int_eq(kill(d->pid, SIGTERM), 0);
    for (int i = 0; i < 2; i++) {
        skc_reply *r = NULL;
        ck_assert_msg(skc_recv(c, renders[i], &r) == 0, "render %d: %s", i, skc_errmsg(c));
        skc_reply_free(r);
    }
    unsigned answered = 0, shutdown = 0;
    for (int i = 0; i < PINGS; i++) {
        int rc = skc_recv(c, pings[i], NULL);
        ck_assert_msg(rc == 0 || (rc == SKC_ESERVER && skc_status(c) == SKC_S_SHUTDOWN),
                      "ping %d: %s", i, skc_errmsg(c));
        answered += rc == 0;
        shutdown += rc != 0;
    }
    ck_assert_msg(shutdown > 0, "%u pings answered, none refused: the test did not race", answered);
    expect_drained_exit(d);
    skc_free(c);
}
END_TEST

/* An upload part-way in when the signal comes is read whole and answered, as HTTP answers a
 * request begun before the drain: refused after its whole body, it could not be sent
 * elsewhere. A frame sent whole after the signal is refused (SHUTDOWN), then the end. Behind
 * a slow POSE at --max-inflight 1, the upload waits in the buffer for its turn, still begun. */
static void upload_across_sigterm(bool behind_slow_pose)
{
    /* at debug level the log says why a connection ended, for a failure to show */
    struct daemon *d =
        daemon_up(g_samples, behind_slow_pose ? FLAGS("--threads", "1", "--max-inflight", "1",
                                                      "--log-level", "debug")
                                              : FLAGS("--log-level", "debug"));
    char path[PATH_MAX];
    size_t len;
    join(path, g_samples, "robot.skf");
    char *skf = slurp(path, &len);
    struct raw *r = raw_open(d->unix_uri);
    skc_client *c = client_open(d->unix_uri, NULL);
    unsigned char id[SKC_ID_SIZE];
    load_path(c, "robot.skf", id);
    static uint8_t buf[1 << 16];
    size_t at = behind_slow_pose ? slow_poses(buf, sizeof buf, id, 1, 1000000) : 0;
    skp_encode_header(
        &(struct skp_header){SKP_VERSION, SKP_OP_LOAD_BYTES, 0, 0, 7, (uint32_t)(4 + len)},
        buf + at);
    at += SKP_HEADER_SIZE;
    skp_put_u32(buf + at, (uint32_t)len);
    ck_assert_uint_lt(at + 4 + len / 2, sizeof buf);
    memcpy(buf + at + 4, skf, len / 2);
    raw_send(r, buf, at + 4 + len / 2); /* in one write: read at once, the POSE first */
    /* A round trip on another connection after those bytes went out: the daemon's loop has
     * read them (their socket was readable first) before it answers. */
    ck_assert_int_eq(skc_ping(c, "x", 1), 0);
    ck_assert_int_eq(kill(d->pid, SIGTERM), 0);
    skc_options o = {d->unix_uri, NULL, 2000, 2000, 0};
    for (int64_t until = now_ms() + 60000;; sleep_ms(5)) { /* the listener closes at SIGTERM */
        skc_client *late = NULL;
        int rc = skc_connect(&late, &o);
        skc_free(late);
        if (rc == SKC_EIO)
            break;
        ck_assert_msg(now_ms() < until, "still accepting a minute after SIGTERM");
    }
    /* The rest of the upload and the PING in one write: the daemon ends the connection once
     * nothing begun is left in it, so a PING written after a pause (a loaded machine) could
     * come after the end, and be answered by no one, rightly. */
    size_t rest = len - len / 2, ping_at;
    uint8_t *tail = malloc(rest + 64);
    ck_assert_ptr_nonnull(tail);
    memcpy(tail, skf + len / 2, rest);
    skp_encode_header(&(struct skp_header){SKP_VERSION, SKP_OP_PING, 0, 0, 8, 4 + 5}, tail + rest);
    ping_at = rest + SKP_HEADER_SIZE;
    skp_put_u32(tail + ping_at, 5);
    memcpy(tail + ping_at + 4, "after", 5);
    raw_send(r, tail, ping_at + 4 + 5);
    free(tail);
    /* The replies, in any order: the PING's is given at once, the others by a worker. */
    bool posed = !behind_slow_pose, loaded = false, refused = false;
    for (int i = behind_slow_pose ? 0 : 1; i < 3; i++) {
        struct skp_header h;
        const uint8_t *body;
        int got = raw_recv(r, &h, &body);
        if (got != 1) { /* once seen under ASan on a loaded machine: what the daemon said */
            char *log = slurp(d->err, NULL);
            ck_abort_msg(
                "reply %d of 3 never came (%d: 0 the end, -1 an error); the daemon logged:\n%s",
                i + 1, got, log ? log : "(nothing)");
        }
        posed |= h.id == 1 && h.opcode == SKP_OP_POSE && h.status == SKP_S_OK;
        loaded |= h.id == 7 && h.opcode == SKP_OP_LOAD_BYTES && h.status == SKP_S_OK;
        refused |= h.id == 8 && h.opcode == SKP_OP_PING && h.status == SKP_S_SHUTDOWN;
    }
    ck_assert_msg(posed && loaded && refused, "POSE %s, upload %s, PING %s",
                  posed ? "answered" : "not answered", loaded ? "answered" : "not answered",
                  refused ? "refused" : "not refused");
    raw_expect_closed(r);
    expect_drained_exit(d);
    raw_close(r);
    skc_free(c);
    free(skf);
}

START_TEST(sigterm_answers_a_frame_begun_before)
{
    upload_across_sigterm(false);
}
END_TEST

START_TEST(sigterm_answers_a_frame_begun_behind_the_limits)
{
    upload_across_sigterm(true);
}
END_TEST

/* Requests waiting their turn on an instance when the signal comes still run (the pool keeps
 * working through a shutdown), so all of them are answered OK. */
START_TEST(sigterm_completes_instance_queue)
{
    enum { N = 3 };
    struct daemon *d = daemon_up(g_samples, FLAGS("--threads", "2"));
    skc_client *c = client_open(d->unix_uri, NULL);
    skc_eval ev;
    skc_render_opts ro;
    robot_walk_render(c, &ev, &ro, 2048);
    ro.png_level = 9;
    uint32_t inst = 0, ids[N];
    ck_assert_int_eq(skc_instance_new(c, ev.armature, &inst), 0);
    ev.target = SKC_TARGET_INSTANCE;
    ev.instance = inst;
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(skc_send_render(c, &ev, &ro, &ids[i]), 0);
    sleep_ms(100); /* the first runs; the others wait on the instance */
    ck_assert_int_eq(kill(d->pid, SIGTERM), 0);
    for (int i = 0; i < N; i++) {
        skc_reply *r = NULL;
        ck_assert_msg(skc_recv(c, ids[i], &r) == 0, "render %d on the instance: %s", i,
                      skc_errmsg(c));
        skc_reply_free(r);
    }
    expect_drained_exit(d);
    skc_free(c);
}
END_TEST

/* A client that half-closes after its requests still gets every reply, then the end. */
START_TEST(half_closed_client_gets_replies)
{
    struct daemon *d = daemon_up(g_samples, NULL);
    struct raw *r = raw_open(d->unix_uri);
    raw_load_path(r, 7, "critter.skf"); /* a pool job: answered after the end of input */
    raw_ping(r, 8, "after");
    ck_assert_int_eq(shutdown(r->fd, SHUT_WR), 0);
    raw_expect_pong(r, 8, "after");
    raw_expect(r, SKP_OP_LOAD_PATH, 7, SKP_S_OK, NULL);
    raw_expect_closed(r);
    raw_close(r);
    daemon_stop(d);
}
END_TEST

/* ======================================================================================== */

static TCase *tcase(Suite *s, const char *name)
{
    TCase *tc = tcase_create(name);
    tcase_add_unchecked_fixture(tc, tmp_setup, tmp_teardown);
    tcase_add_checked_fixture(tc, test_setup, test_teardown);
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);
    return tc;
}

static Suite *roundtrip_suite(void)
{
    Suite *s = suite_create("roundtrip");
    TCase *tc = tcase(s, "messages");
    tcase_add_test(tc, hello_and_ping);
    tcase_add_test(tc, load_by_path_and_bytes);
    tcase_add_test(tc, concurrent_loads_parse_once);
    tcase_add_test(tc, concurrent_loads_outlive_a_full_cache);
    tcase_add_test(tc, info_matches_skeld_info);
    tcase_add_test(tc, instance_new_and_free);
    tcase_add_test(tc, instances_have_a_memory_budget);
    tcase_add_test(tc, pose_mesh_render);
    tcase_add_test(tc, times_in_ms_are_time_frame);
    tcase_add_test(tc, result_cache_hits_and_evictions);
    tcase_add_test(tc, mesh_options_move_points);
    tcase_add_test(tc, stats_count_requests);
    tcase_add_test(tc, unload_keeps_instances);
    tc = tcase(s, "offline");
    tcase_add_test(tc, skelctl_pose_matches_eval);
    tcase_add_test(tc, skelctl_render_matches_render);
    tcase_add_test(tc, skelctl_render_range_matches);
    tcase_add_test(tc, skelctl_render_sheet_matches);
    tc = tcase(s, "instances");
    tcase_add_test(tc, instance_steps_equal_from);
    tcase_add_test(tc, instance_render_framing_leaves_state_alone);
    tcase_add_test(tc, instance_pipelined_in_order);
    tcase_add_test(tc, late_reader_gets_every_reply_whole);
    tc = tcase(s, "malformed");
    tcase_add_test(tc, framing_errors_close);
    tcase_add_test(tc, bad_requests_keep_connection);
    tc = tcase(s, "disconnect");
    tcase_add_test(tc, slow_request_then_disconnect);
    tcase_add_test(tc, jobs_of_gone_clients_are_dropped);
    tcase_add_test(tc, stalled_reader_is_closed);
    tc = tcase(s, "paths");
    tcase_add_test(tc, load_path_confined);
    tcase_add_test(tc, load_path_reads_an_unchanged_file_once);
    tcase_add_test(tc, load_path_fifo_and_leaks);
    tcase_add_test(tc, load_path_swap_race);
    tc = tcase(s, "hostile");
    tcase_add_test(tc, slow_sender_meets_frame_deadline);
    tcase_add_test(tc, buffered_frames_wait_for_max_inflight);
    tcase_add_test(tc, paused_reading_stops_the_frame_deadline);
    tcase_add_test(tc, unauthenticated_frames_are_tiny);
    tcase_add_test(tc, over_max_connections_gets_busy);
    tcase_add_test(tc, input_buffers_are_bounded);
    tcase_add_test(tc, fd_exhaustion_keeps_accepting);
    tcase_add_test(tc, hostile_armatures_cost_no_memory);
    tcase_add_test(tc, reply_over_the_frame_is_limit);
    tcase_add_test(tc, render_refuses_engine_options);
    tcase_add_test(tc, hostile_drawing_is_refused);
    tcase_add_test(tc, a_range_is_refused_at_the_frame_past_its_share);
    tcase_add_test(tc, large_picture_memory_is_let_go);
    tc = tcase(s, "auth");
    tcase_add_test(tc, auth_token);
    tcase_add_test(tc, sighup_token_change_revokes);
    tc = tcase(s, "busy");
    tcase_add_test(tc, busy_when_queue_full);
    tc = tcase(s, "shutdown");
    tcase_add_test(tc, sigterm_drains);
    tcase_add_test(tc, sighup_reloads_config);
    tcase_add_test(tc, sigterm_answers_unread_requests);
    tcase_add_test(tc, sigterm_answers_a_frame_begun_before);
    tcase_add_test(tc, sigterm_answers_a_frame_begun_behind_the_limits);
    tcase_add_test(tc, sigterm_completes_instance_queue);
    tcase_add_test(tc, half_closed_client_gets_replies);
    return s;
}

/* A PING through a fresh connection to uri: 0, or the skc error. */
static int reachable(const char *uri, char *why, size_t whylen)
{
    skc_options o = {uri, NULL, 2000, 2000, 0};
    skc_client *c = NULL;
    int rc = skc_connect(&c, &o);
    if (rc == 0)
        rc = skc_ping(c, "probe", 5);
    if (rc)
        snprintf(why, whylen, "%s: %s", uri, skc_errmsg(c));
    skc_free(c);
    return rc;
}

/* Can a daemon listen here, and can we reach it? NO_BIND means skip the whole program (a
 * sandbox without loopback may refuse the bind, or accept it and leave it unreachable). */
static int probe(char *why, size_t whylen)
{
    struct daemon d;
    make_tmp();
    int rc = daemon_spawn(&d, g_tmp, g_samples, NULL, why, whylen);
    if (rc == UP && reachable(d.unix_uri, why, whylen))
        rc = BROKEN;
    else if (rc == UP && reachable(d.tcp_uri, why, whylen))
        rc = NO_BIND;
    if (d.pid > 0) {
        kill(d.pid, SIGTERM);
        if (!wait_exit(d.pid, 5000, NULL)) {
            kill(d.pid, SIGKILL);
            waitpid(d.pid, NULL, 0);
        }
    }
    if (d.out_fd >= 0)
        close(d.out_fd);
    rm_rf(g_tmp);
    return rc;
}

int main(void)
{
    /* Absolute paths: commands also run in other directories. */
    static char bin[PATH_MAX], ctl[PATH_MAX], samples[PATH_MAX];
    g_bin = getenv("SKELD_BIN") ? realpath(getenv("SKELD_BIN"), bin) : NULL;
    g_ctl = getenv("SKELD_CTL") ? realpath(getenv("SKELD_CTL"), ctl) : NULL;
    g_samples = th_samples_dir() ? realpath(th_samples_dir(), samples) : NULL;
    if (!g_bin || !g_ctl || !g_samples) {
        fprintf(stderr, "check_roundtrip: set SKELD_BIN, SKELD_CTL and SKELD_SAMPLES "
                        "(make check does)\n");
        return 99;
    }
    long maxfd = sysconf(_SC_OPEN_MAX);
    g_maxfd = maxfd > 0 && maxfd < 4096 ? maxfd : 4096;
    char why[4096];
    int up = probe(why, sizeof why);
    if (up == NO_BIND) {
        fprintf(stderr, "check_roundtrip: SKIP: no usable loopback for skeld here: %s\n", why);
        return 77;
    }
    if (up != UP) {
        fprintf(stderr, "check_roundtrip: skeld does not start: %s\n", why);
        return EXIT_FAILURE;
    }
    SRunner *sr = srunner_create(roundtrip_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
