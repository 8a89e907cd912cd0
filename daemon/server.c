/* Loop, listeners, signals and the shutdown sequence (STYLE.md section 6). */
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <uv.h>

#include "api.h"
#include "cache.h"
#include "conn.h"
#include "http.h"
#include "dispatch.h"
#include "log.h"
#include "notify.h"
#include "pool.h"
#include "preload.h"

struct listener {
    union conn_stream h;
    struct server *srv;
    bool http; /* an http:// listener: its connections speak HTTP/1.1 */
    char uri[256];
};

struct server {
    uv_loop_t *loop;
    struct config *cfg;
    struct cache cache;
    struct pool pool;
    struct conn_set conns;
    struct http_set http;
    struct dispatch dispatch;
    struct api api;
    struct preload preload;
    struct listener listeners[CONFIG_MAX_LISTEN];
    int listener_count;
    uv_signal_t sigint, sigterm, sighup;
    const struct config_source *src;
    uv_timer_t sweep;
    uv_timer_t grace; /* --drain-grace: SIGTERM's wait before the drain */
    bool stopping, in_grace;
    bool failed; /* the start failed after the loop began (the preload ran out of memory) */
    uint64_t accept_errors, accept_logged_ms;
};

/* ---- listeners --------------------------------------------------------------------------- */

static void on_connection(uv_stream_t *server_stream, int status)
{
    struct listener *l = server_stream->data;
    if (status >= 0) {
        if (l->http)
            http_accept(&l->srv->http, server_stream);
        else
            conn_accept(&l->srv->conns, server_stream);
        return;
    }
    /* Out of file descriptors, typically: libuv has accepted and closed the connection to keep
     * the backlog moving. Say so, at most once a second. */
    uint64_t now = uv_now(l->srv->loop);
    l->srv->accept_errors++;
    if (now - l->srv->accept_logged_ms >= 1000 || !l->srv->accept_logged_ms) {
        log_msg(LOG_WARN, "%s: cannot accept a connection: %s (%llu so far; see ulimit -n)", l->uri,
                uv_strerror(status), (unsigned long long)l->srv->accept_errors);
        l->srv->accept_logged_ms = now ? now : 1;
    }
}

static int listen_tcp(struct server *s, struct listener *l, const char *hostport, bool v6only)
{
    struct sockaddr_storage addr;
    int rc;
    if (config_listen_addr(hostport, &addr)) /* config_check refused it already */
        return UV_EINVAL;
    if ((rc = uv_tcp_init(s->loop, &l->h.tcp)))
        return rc;
    l->h.handle.data = l;
    if ((rc = uv_tcp_bind(&l->h.tcp, (struct sockaddr *)&addr, v6only ? UV_TCP_IPV6ONLY : 0)) ||
        (rc = uv_listen(&l->h.stream, 511, on_connection)))
        return rc;
    /* Port 0 asks the kernel: report what we got, for scripts and tests. */
    int len = sizeof addr;
    char ip[64] = "";
    uv_tcp_getsockname(&l->h.tcp, (struct sockaddr *)&addr, &len);
    if (addr.ss_family == AF_INET6) {
        uv_ip6_name((struct sockaddr_in6 *)&addr, ip, sizeof ip);
        snprintf(l->uri, sizeof l->uri, "%s://[%s]:%d", l->http ? "http" : "tcp", ip,
                 ntohs(((struct sockaddr_in6 *)&addr)->sin6_port));
    } else {
        uv_ip4_name((struct sockaddr_in *)&addr, ip, sizeof ip);
        snprintf(l->uri, sizeof l->uri, "%s://%s:%d", l->http ? "http" : "tcp", ip,
                 ntohs(((struct sockaddr_in *)&addr)->sin_port));
    }
    return 0;
}

/* A socket file left by an earlier run is removed; a live daemon's socket, or anything that
 * is not a socket, is left alone (and the bind then fails with EADDRINUSE). */
static void remove_stale_socket(const char *path)
{
    struct stat st;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (lstat(path, &st) || !S_ISSOCK(st.st_mode) || strlen(path) >= sizeof a.sun_path)
        return;
    memcpy(a.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0)
        return;
    /* Non-blocking, so a live daemon with a full backlog cannot hang our start. Only a refusal
     * proves nobody listens: EAGAIN (backlog full) and EACCES (not ours) leave it alone. */
    int flags = fcntl(fd, F_GETFL);
    bool stale = flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 &&
                 connect(fd, (struct sockaddr *)&a, sizeof a) != 0 && errno == ECONNREFUSED;
    close(fd);
    if (stale)
        unlink(path);
    else
        log_msg(LOG_ERROR, "%s: a socket another process listens on (or may not be ours)", path);
}

static int listen_unix(struct server *s, struct listener *l, const char *path)
{
    int rc = uv_pipe_init(s->loop, &l->h.pipe, 0);
    if (rc)
        return rc;
    l->h.handle.data = l;
    remove_stale_socket(path);
    if ((rc = uv_pipe_bind(&l->h.pipe, path)) || (rc = uv_listen(&l->h.stream, 511, on_connection)))
        return rc;
    snprintf(l->uri, sizeof l->uri, "unix:%s", path);
    return 0;
}

static int open_listeners(struct server *s)
{
    for (int i = 0; i < s->cfg->listen_count; i++) {
        struct listener *l = &s->listeners[i];
        const char *uri = s->cfg->listen[i];
        l->srv = s;
        l->http = !strncmp(uri, "http://", 7);
        bool v6only = config_listen_v6only(s->cfg, i);
        int rc = !strncmp(uri, "unix:", 5)    ? listen_unix(s, l, uri + 5)
                 : !strncmp(uri, "tcp://", 6) ? listen_tcp(s, l, uri + 6, v6only)
                 : l->http                    ? listen_tcp(s, l, uri + 7, v6only)
                                              : UV_EINVAL;
        if (rc) {
            log_msg(LOG_ERROR, "cannot listen on %s: %s", uri, uv_strerror(rc));
            if (uv_is_active(&l->h.handle) || l->h.handle.loop)
                uv_close(&l->h.handle, NULL);
            return rc;
        }
        s->listener_count++;
        log_msg(LOG_INFO, "listening on %s", l->uri);
        printf("listening %s\n", l->uri);
        fflush(stdout);
    }
    return 0;
}

/* ---- shutdown ---------------------------------------------------------------------------- */

static void close_if_open(uv_handle_t *h)
{
    if (h->loop && !uv_is_closing(h)) /* h->loop is NULL if startup never set it up */
        uv_close(h, NULL);
}

static void on_sweep(uv_timer_t *t);

/* The end of a shutdown: no connection is left, so no job is either; the workers are idle. */
static void finish_shutdown(struct server *s)
{
    uv_signal_stop(&s->sigint);
    uv_signal_stop(&s->sigterm);
    uv_signal_stop(&s->sighup);
    close_if_open((uv_handle_t *)&s->sigint);
    close_if_open((uv_handle_t *)&s->sigterm);
    close_if_open((uv_handle_t *)&s->sighup);
    pool_shutdown(&s->pool);
    http_set_close(&s->http);
    conn_set_close(&s->conns);
    close_if_open((uv_handle_t *)&s->sweep);
}

/* Stop accepting; connections keep reading, answer SHUTDOWN to new requests and end once their
 * queued work is done and written. The pool keeps running meanwhile, so requests waiting on an
 * instance, or a LOAD between its steps, still complete. on_sweep enforces the deadlines and
 * calls finish_shutdown once the last connection is gone. */
static void begin_shutdown(struct server *s)
{
    if (s->stopping)
        return;
    s->stopping = s->conns.stopping = true;
    preload_stop(&s->preload); /* the file in flight is still cached: the pool delivers it */
    log_msg(LOG_INFO, "shutting down: finishing %zu staged, queued or running jobs",
            pool_depth(&s->pool));
    notify_stopping("draining: %zu staged, queued or running jobs", pool_depth(&s->pool));
    for (int i = 0; i < s->listener_count; i++)
        close_if_open(&s->listeners[i].h.handle);
    uv_timer_stop(&s->grace);
    close_if_open((uv_handle_t *)&s->grace);
    /* The signal handlers stay until finish_shutdown: stopped here, SIGTERM, SIGINT and
     * SIGHUP (logrotate) would take their default action and kill the drain mid-way. */
    s->http.stopping = true;
    conn_set_drain(&s->conns);
    http_set_drain(&s->http);
    if ((!s->conns.list.head && !s->http.list.head) || !uv_is_active((uv_handle_t *)&s->sweep)) {
        conn_set_close_all(&s->conns);
        http_set_close_all(&s->http);
        finish_shutdown(s);
        return;
    }
    uv_timer_stop(&s->sweep);
    uv_timer_start(&s->sweep, on_sweep, 100, 100);
}

/* Each line the configuration wrote to said (what does not read, what waits for a restart),
 * logged at level without config.c's "skeld: " prefix: the log, which may be a file, is where
 * an operator looks after a reload. */
static void log_said(enum log_level level, FILE *said, char **text)
{
    if (!said)
        return;
    fclose(said); /* sets *text */
    char *save = NULL;
    for (char *line = *text ? strtok_r(*text, "\n", &save) : NULL; line;
         line = strtok_r(NULL, "\n", &save))
        log_msg(level, "SIGHUP: %s", strncmp(line, "skeld: ", 7) ? line : line + 7);
    free(*text);
}

/* logrotate moved the file: write to a new one at the same path (--log-file is not live, so
 * the running configuration's is the path log_open was given) */
static void reopen_log(const struct server *s)
{
    if (log_reopen())
        log_msg(LOG_ERROR, "SIGHUP: cannot reopen the log file %s: %s", s->cfg->log_file,
                strerror(errno));
}

/* SIGHUP: the command line and its --config file read again; what can change at run time
 * changes (nothing in flight is touched: requests read their limits as they arrive). While
 * draining only the log is reopened: nothing new will be served, and READY=1 would tell
 * systemd otherwise. */
static void on_reload(uv_signal_t *h, int signum)
{
    struct server *s = h->data;
    struct config fresh;
    (void)signum;
    if (s->stopping) {
        reopen_log(s);
        log_msg(LOG_INFO, "SIGHUP while draining: the log reopened, the configuration kept");
        return;
    }
    /* While preloading, systemd still waits for the start's READY=1: a reload's RELOADING=1
     * and READY=1 would end the start early. In the --drain-grace, STOPPING=1 was sent: READY=1
     * would say the node serves again. The reload itself happens all the same. */
    bool quiet = preload_running(&s->preload) || s->in_grace;
    if (!quiet)
        notify_reloading();
    reopen_log(s);
    char *text = NULL;
    size_t text_len = 0;
    FILE *said = open_memstream(&text, &text_len); /* for the log; NULL: straight to stderr */
    FILE *out = said ? said : stderr;
    /* The start's default, not the running value: a --threads taken out of the file is a
     * change for the next start, and the cores counted again since are not. */
    config_init(&fresh, s->src->cores);
    int rc = config_parse_args(&fresh, s->src->argc, s->src->argv, s->src->first, out);
    int level = rc == 0 && config_check(&fresh, out) == 0 ? log_parse_level(fresh.log_level) : -1;
    if (rc != 0 || level < 0) {
        log_said(LOG_ERROR, said, &text);
        log_msg(LOG_ERROR, "SIGHUP: the configuration does not read: keeping the running one");
        if (!quiet)
            notify_ready("serving; the last reload failed: the configuration does not read");
    } else {
        char names[512];
        int n = config_apply_live(s->cfg, &fresh, out, names, sizeof names);
        log_set_level((enum log_level)level);
        log_said(LOG_WARN, said, &text);
        log_msg(LOG_INFO, "SIGHUP: configuration reloaded, %d option%s changed%s%s", n,
                n == 1 ? "" : "s", n ? ": " : "", names);
        if (!quiet)
            notify_ready("serving; configuration reloaded, %d option%s changed", n,
                         n == 1 ? "" : "s");
    }
    config_free(&fresh);
}

static void on_grace_over(uv_timer_t *t)
{
    log_msg(LOG_INFO, "drain grace over: draining");
    begin_shutdown(t->data);
}

/* SIGTERM with --drain-grace: /readyz turns 503 at once while everything else is served as
 * before, so a load balancer's health check takes the node out before it refuses anything;
 * the drain starts when the grace is over. SIGINT, a second SIGTERM, or a SIGTERM before the
 * node was ever ready (while preloading: no balancer sends it anything) drains at once. */
static void on_signal(uv_signal_t *h, int signum)
{
    struct server *s = h->data;
    log_msg(LOG_INFO, "signal %d", signum);
    if (signum == SIGTERM && s->cfg->drain_grace > 0 && !s->in_grace && !s->stopping &&
        s->api.ready && uv_is_active((uv_handle_t *)&s->sweep)) {
        s->in_grace = true;
        s->api.ready = false;
        log_msg(LOG_INFO, "not ready: draining in %d s (--drain-grace)", (int)s->cfg->drain_grace);
        notify_stopping("not ready; draining in %d s", (int)s->cfg->drain_grace);
        uv_timer_start(&s->grace, on_grace_over, (uint64_t)s->cfg->drain_grace * 1000, 0);
        return;
    }
    begin_shutdown(s);
}

/* Once a second (every 100 ms while stopping): the connections' deadlines, and the end of a
 * shutdown once the last connection is gone. */
static void on_sweep(uv_timer_t *t)
{
    struct server *s = t->data;
    conn_set_sweep(&s->conns, uv_now(s->loop));
    http_set_sweep(&s->http, uv_now(s->loop));
    if (s->stopping && !s->conns.list.head && !s->http.list.head)
        finish_shutdown(s);
}

static int start(struct server *s)
{
    int rc;
    if ((rc = uv_signal_init(s->loop, &s->sigint)) || (rc = uv_signal_init(s->loop, &s->sigterm)) ||
        (rc = uv_signal_init(s->loop, &s->sighup)) || (rc = uv_timer_init(s->loop, &s->sweep)) ||
        (rc = uv_timer_init(s->loop, &s->grace)))
        return rc;
    s->sigint.data = s->sigterm.data = s->sighup.data = s->sweep.data = s->grace.data = s;
    uv_signal_start(&s->sigint, on_signal, SIGINT);
    uv_signal_start(&s->sigterm, on_signal, SIGTERM);
    uv_signal_start(&s->sighup, on_reload, SIGHUP);
    uv_timer_start(&s->sweep, on_sweep, 1000, 1000);
    if ((rc = pool_init(&s->pool, s->loop, (int)s->cfg->threads, (size_t)s->cfg->queue_depth,
                        DISPATCH_INLINE_BATCH_STEPS)))
        return rc;
    return open_listeners(s);
}

/* A listener's URI to connect to: a wildcard address (0.0.0.0, [::]) is one to bind, which
 * browsers refuse and other systems do not connect to: this host's loopback of its family
 * stands for it. */
static const char *loopback_for(const char *uri, char *out, size_t cap)
{
    static const char *const wild[2] = {"://0.0.0.0:", "://[::]:"}, *const loop[2] = {
                                                                        "://127.0.0.1:",
                                                                        "://[::1]:"};
    for (int k = 0; k < 2; k++) {
        const char *at = strstr(uri, wild[k]);
        if (at) {
            snprintf(out, cap, "%.*s%s%s", (int)(at - uri), uri, loop[k], at + strlen(wild[k]));
            return out;
        }
    }
    return uri;
}

/* The file under root the ready line suggests, into out: robot.skf, the samples' own (*walk:
 * it has a Walk), when the root holds it, else the root's first .skf by name among those whose
 * name a shell and a URL take as it is; "" for none. Read once, at the start. */
static void example_file(const char *root, char *out, size_t cap, bool *walk)
{
    static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
    *walk = false;
    out[0] = 0;
    DIR *d = opendir(root);
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || len >= cap || strcmp(e->d_name + len - 4, ".skf") ||
            strspn(e->d_name, plain) != len || e->d_name[0] == '-')
            continue;
        if ((*walk = !strcmp(e->d_name, "robot.skf")) || !out[0] || strcmp(e->d_name, out) < 0)
            snprintf(out, cap, "%s", e->d_name);
        if (*walk)
            break;
    }
    if (d)
        closedir(d);
}

/* How to try the daemon, for each kind of listener it has. */
static void print_ready(const struct server *s)
{
    const char *bin = NULL, *web = NULL;
    char bin_to[sizeof s->listeners[0].uri], web_to[sizeof bin_to];
    for (int i = 0; i < s->listener_count; i++) {
        const struct listener *l = &s->listeners[i];
        if (l->http && !web)
            web = loopback_for(l->uri, web_to, sizeof web_to);
        else if (!l->http && !bin)
            bin = loopback_for(l->uri, bin_to, sizeof bin_to);
    }
    /* Without --root a file is named by path only to skelctl, which uploads it. Run from the
     * build tree (daemon/skeld), skelctl is beside it in client/; installed, on the PATH. */
    char file[256] = "samples/robot.skf";
    bool walk = true;
    if (s->cfg->root)
        example_file(s->cfg->root, file, sizeof file, &walk);
    const char *anim = walk ? " --anim Walk --frame 10" : "",
               *query = walk ? "?anim=Walk&frame=10" : "";
    const char *argv0 = s->src->argc > 0 ? s->src->argv[0] : "";
    const char *ctl = strstr(argv0, "daemon/skeld") ? "client/skelctl" : "skelctl";
    printf("ready:");
    if (bin && file[0])
        printf(" %s --uri %s render %s%s -o out.png", ctl, bin, file, anim);
    else if (bin) /* a root without a file to show */
        printf(" %s --uri %s ping", ctl, bin);
    if (bin && web)
        printf(" |");
    if (web && s->cfg->root && file[0])
        printf(" curl -o out.png '%s/v1/files/%s/render.png%s' |", web, file, query);
    if (web)
        printf(" open %s/", web);
    printf("\n");
}

/* Listening, and preloaded: /readyz turns 200, and the ready line and READY=1 go out. */
static void serving(struct server *s)
{
    s->api.ready = true;
    log_msg(LOG_INFO, "serving with %d threads", (int)s->cfg->threads);
    print_ready(s);
    fflush(stdout);
    notify_ready("serving on %d listener%s with %d threads", s->listener_count,
                 s->listener_count == 1 ? "" : "s", (int)s->cfg->threads);
}

static void on_preloaded(void *ctx, int rc)
{
    struct server *s = ctx;
    if (!rc) {
        serving(s);
        return;
    }
    log_msg(LOG_ERROR, "startup failed: --preload"); /* which said why */
    s->failed = true;
    begin_shutdown(s);
}

/* Replies are made in the workers' malloc arenas and freed on the loop thread once written:
 * with glibc's default trim threshold, each batch of frees gave the top of a worker's arena
 * back to the kernel (madvise) and the next replies faulted it in again, 15% of the loop
 * thread's time under pipelined HTTP poses. Keep up to 8 MiB per arena instead (big parses
 * still trim explicitly, see work.c), and with the threshold fixed, mmap only past 4 MiB so
 * PNG replies stay on the heap. */
static void tune_malloc(void)
{
#ifdef __GLIBC__
    mallopt(M_TRIM_THRESHOLD, 8 << 20);
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
#endif
}

int server_run(struct config *cfg, const struct config_source *src)
{
    struct server s;
    memset(&s, 0, sizeof s);
    s.cfg = cfg;
    s.src = src;
    s.loop = uv_default_loop();
    /* A peer that hangs up before its replies are written must cost us an EPIPE on that
     * connection, not the process. */
    signal(SIGPIPE, SIG_IGN);
    /* Their default ends the process at once, with no drain and the socket file left: a
     * stray `kill -USR1` (a log rotation script meant for another daemon) must not. */
    signal(SIGUSR1, SIG_IGN);
    signal(SIGUSR2, SIG_IGN);
    tune_malloc();
    if (cache_init(&s.cache, (size_t)cfg->cache_mb << 20))
        return 1;
    conn_set_init(&s.conns, s.loop, cfg, &dispatch_conn_hooks, &s.dispatch);
    http_set_init(&s.http, s.loop, cfg, &api_http_hooks, &s.api, &s.conns);
    s.conns.list.other = &s.http.list; /* --max-connections counts both fronts */
    s.http.list.other = &s.conns.list;
    api_init(&s.api, &s.dispatch, cfg, &s.http);
    if (dispatch_init(&s.dispatch, s.loop, cfg, &s.cache, &s.pool, &s.conns)) {
        cache_close(&s.cache);
        return 1;
    }
    int rc = start(&s);
    const char *why = rc ? uv_strerror(rc) : NULL; /* the listeners said which and why */
    /* The directory is read now, so one that cannot be opened fails the start; its files
     * load while the loop runs, and serving() follows them (/readyz is 503 meanwhile). */
    if (!rc && cfg->preload &&
        preload_start(&s.preload, &s.dispatch, cfg->preload, on_preloaded, &s)) {
        rc = UV_EINVAL;
        why = "--preload"; /* which said why */
    }
    if (rc) {
        log_msg(LOG_ERROR, "startup failed: %s", why);
        begin_shutdown(&s);
    } else if (!cfg->preload) {
        serving(&s);
    }
    uv_run(s.loop, UV_RUN_DEFAULT);
    int closed = uv_loop_close(s.loop);
    dispatch_close(&s.dispatch);
    cache_close(&s.cache);
    if (closed)
        log_msg(LOG_ERROR, "loop did not close cleanly: %s", uv_strerror(closed));
    else
        log_msg(LOG_INFO, "stopped");
    return rc || s.failed || closed ? 1 : 0;
}
