/* Loop, listeners, connections and the shutdown sequence (STYLE.md section 6). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"

struct write_req {
    uv_write_t req;
    uv_buf_t bufs[2];
    uint8_t header[SKP_HEADER_SIZE];
    uint8_t *body; /* owned until write_cb */
    struct conn *c;
};

uint64_t server_now_ms(struct server *s)
{
    return uv_now(s->loop);
}

/* ---- connection lifetime ----------------------------------------------------------------- */

static void free_conn(struct conn *c)
{
    struct server *s = c->srv;
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    s->conn_count--;
    free(c->in);
    free(c);
}

static void on_conn_closed(uv_handle_t *h)
{
    struct conn *c = h->data;
    c->closed = true;
    dispatch_conn_closed(c);
    if (c->inflight == 0)
        free_conn(c);
}

void conn_close(struct conn *c)
{
    if (c->closing)
        return;
    c->closing = true;
    uv_read_stop(&c->h.stream);
    uv_close(&c->h.handle, on_conn_closed);
}

/* ---- lingering close --------------------------------------------------------------------- */
/* Closing a socket with unread input makes the kernel send a reset, which can destroy
 * replies still on their way to the peer. So a connection we end ourselves (after a framing
 * error, or at shutdown) is half-closed once its replies are written, and read to the peer's
 * end, discarding, for at most LINGER_MS. */
#define LINGER_MS 2000
#define SHUTDOWN_MS 10000 /* at shutdown: from the last job done to closing what is left */

static void on_discard_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    static char sink[65536]; /* loop thread only, never read */
    (void)h;
    (void)suggested;
    *buf = uv_buf_init(sink, sizeof sink);
}

static void on_discard_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    (void)buf;
    if (nread < 0)
        conn_close(st->data);
}

static void on_half_closed(uv_shutdown_t *req, int status)
{
    struct conn *c = req->data;
    c->inflight--; /* the shutdown request held the connection */
    if (c->closed && c->inflight == 0) {
        free_conn(c);
        return;
    }
    if (c->closing)
        return;
    if (status < 0 || uv_read_start(&c->h.stream, on_discard_alloc, on_discard_read))
        conn_close(c);
}

static void conn_finish(struct conn *c)
{
    if (c->closing || c->lingering)
        return;
    c->lingering = true;
    c->linger_until = server_now_ms(c->srv) + LINGER_MS;
    uv_read_stop(&c->h.stream);
    c->reading = false;
    c->shutdown.data = c;
    if (uv_shutdown(&c->shutdown, &c->h.stream, on_half_closed) == 0)
        c->inflight++;
    else
        conn_close(c);
}

/* Bytes the peer sent that we have not read yet. */
static bool input_pending(struct conn *c)
{
    uv_os_fd_t fd;
    int n = 0;
    return uv_fileno(&c->h.handle, &fd) == 0 && ioctl(fd, FIONREAD, &n) == 0 && n > 0;
}

static void update_reading(struct conn *c);

/* Ends a connection we mean to end once nothing is in flight and its replies are written.
 * At shutdown, requests already sent are read and answered (SHUTDOWN) first. */
static void finish_if_done(struct conn *c)
{
    bool ending = c->close_after_write || c->srv->stopping;
    if (!ending || c->inflight != 0 || uv_stream_get_write_queue_size(&c->h.stream) != 0)
        return;
    if (!c->close_after_write && input_pending(c)) {
        update_reading(c);
        return;
    }
    conn_finish(c);
}

void conn_job_started(struct conn *c)
{
    c->inflight++;
    c->jobs++;
}

static void update_reading(struct conn *c);

void conn_job_done(struct conn *c)
{
    c->inflight--;
    c->jobs--;
    if (c->srv->stopping) /* the shutdown deadline counts from the last job done */
        c->srv->stop_deadline = server_now_ms(c->srv) + SHUTDOWN_MS;
    if (c->closed && c->inflight == 0) {
        free_conn(c);
        return;
    }
    update_reading(c);
    finish_if_done(c);
}

/* ---- writing ----------------------------------------------------------------------------- */

static void on_written(uv_write_t *req, int status)
{
    struct write_req *w = (struct write_req *)req;
    struct conn *c = w->c;
    free(w->body);
    free(w);
    c->inflight--; /* the write held the connection too */
    if (c->closed && c->inflight == 0) {
        free_conn(c);
        return;
    }
    c->last_active = server_now_ms(c->srv); /* a reply went out: the peer is reading */
    if (status < 0) {
        conn_close(c);
        return;
    }
    update_reading(c);
    finish_if_done(c);
}

void conn_reply(struct conn *c, uint8_t opcode, uint32_t id, uint16_t status, uint8_t *body,
                size_t len)
{
    struct write_req *w = c->closing || c->lingering ? NULL : malloc(sizeof *w);
    if (!w) {
        free(body);
        if (!c->closing && !c->lingering)
            conn_close(c);
        return;
    }
    struct skp_header h = {SKP_VERSION, opcode, SKP_F_REPLY, status, id, (uint32_t)len};
    skp_encode_header(&h, w->header);
    w->bufs[0] = uv_buf_init((char *)w->header, SKP_HEADER_SIZE);
    w->bufs[1] = uv_buf_init((char *)body, (unsigned)len);
    w->body = body;
    w->c = c;
    c->inflight++;
    if (status != SKP_S_OK)
        c->srv->errors++;
    int rc = uv_write(&w->req, &c->h.stream, w->bufs, len ? 2 : 1, on_written);
    if (rc < 0) {
        c->inflight--;
        free(body);
        free(w);
        conn_close(c);
    }
}

void conn_error(struct conn *c, uint8_t opcode, uint32_t id, uint16_t status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t n = strlen(msg);
    uint8_t *body = malloc(n + 2);
    if (body) {
        skp_put_u16(body, (uint16_t)n);
        memcpy(body + 2, msg, n);
    }
    log_msg(LOG_DEBUG, "reply %s #%u: %s: %s", skp_opcode_name(opcode), id, skp_strerror(status),
            msg);
    conn_reply(c, opcode, id, status, body, body ? n + 2 : 0);
}

/* ---- reading ----------------------------------------------------------------------------- */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    struct conn *c = h->data;
    size_t limit = (size_t)c->srv->cfg->max_frame + SKP_HEADER_SIZE;
    if (c->in_cap - c->in_len < 65536 && c->in_cap < limit) {
        size_t cap = c->in_cap ? c->in_cap * 2 : 65536;
        cap = cap > limit ? limit : cap;
        uint8_t *n = realloc(c->in, cap);
        if (n) {
            c->in = n;
            c->in_cap = cap;
        }
    }
    /* A full buffer is reported by libuv as UV_ENOBUFS, and we close. */
    *buf = c->in_cap > c->in_len
               ? uv_buf_init((char *)c->in + c->in_len, (unsigned)(c->in_cap - c->in_len))
               : uv_buf_init(NULL, 0);
}

static bool over_limits(struct conn *c)
{
    return c->inflight >= c->srv->cfg->max_inflight ||
           uv_stream_get_write_queue_size(&c->h.stream) > (size_t)c->srv->cfg->out_high_water;
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf);

static void update_reading(struct conn *c)
{
    if (c->closing || c->lingering || c->close_after_write)
        return;
    bool pause = over_limits(c);
    bool resume =
        c->inflight < c->srv->cfg->max_inflight &&
        uv_stream_get_write_queue_size(&c->h.stream) <= (size_t)c->srv->cfg->out_low_water;
    if (c->reading && pause) {
        uv_read_stop(&c->h.stream);
        c->reading = false;
    } else if (!c->reading && resume) {
        c->reading = uv_read_start(&c->h.stream, on_alloc, on_read) == 0;
    }
}

static void parse_input(struct conn *c)
{
    size_t off = 0;
    while (!c->closing && !c->close_after_write) {
        struct skp_frame f;
        size_t used;
        int rc = skp_parser_feed(c->in + off, c->in_len - off, (uint32_t)c->srv->cfg->max_frame, &f,
                                 &used);
        if (rc == SKP_NEED_MORE)
            break;
        if (rc < 0) {
            conn_error(c, 0, 0, (uint16_t)skp_parse_status(rc), "%s (this daemon speaks %d)",
                       rc == SKP_EOVERSIZE     ? "frame larger than the limit"
                       : rc == SKP_EBADVERSION ? "protocol version not supported"
                                               : "not a skeld frame",
                       SKP_VERSION);
            c->close_after_write = true;
            uv_read_stop(&c->h.stream);
            c->reading = false;
            break;
        }
        off += used;
        dispatch_frame(c, &f);
    }
    memmove(c->in, c->in + off, c->in_len - off);
    c->in_len -= off;
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    struct conn *c = st->data;
    if (nread == UV_EOF) {
        /* The client is done sending; what it asked for is still answered. */
        c->close_after_write = true;
        uv_read_stop(&c->h.stream);
        c->reading = false;
        finish_if_done(c);
        return;
    }
    if (nread < 0) {
        log_msg(LOG_DEBUG, "connection read: %s", uv_strerror((int)nread));
        conn_close(c);
        return;
    }
    c->last_active = server_now_ms(c->srv);
    c->in_len += (size_t)nread;
    parse_input(c);
    update_reading(c);
    finish_if_done(c); /* at shutdown, a trailing partial frame must not hold the connection */
}

/* ---- listeners --------------------------------------------------------------------------- */

static void on_connection(uv_stream_t *server_stream, int status)
{
    struct listener *l = server_stream->data;
    struct server *s = l->srv;
    if (status < 0)
        return;
    struct conn *c = calloc(1, sizeof *c);
    bool tcp = server_stream->type == UV_TCP;
    int rc = !c    ? UV_ENOMEM
             : tcp ? uv_tcp_init(s->loop, &c->h.tcp)
                   : uv_pipe_init(s->loop, &c->h.pipe, 0);
    if (rc) {
        free(c);
        return;
    }
    c->h.handle.data = c;
    c->srv = s;
    c->authed = !s->cfg->auth_token || !*s->cfg->auth_token;
    c->last_active = server_now_ms(s);
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
    s->conn_count++;
    s->connections_total++;
    if (uv_accept(server_stream, &c->h.stream) || s->stopping ||
        s->conn_count > (uint32_t)s->cfg->max_connections) {
        conn_close(c);
        return;
    }
    if (tcp)
        uv_tcp_nodelay(&c->h.tcp, 1);
    c->reading = uv_read_start(&c->h.stream, on_alloc, on_read) == 0;
}

static int listen_tcp(struct server *s, struct listener *l, const char *hostport)
{
    char host[256];
    const char *colon = strrchr(hostport, ':');
    if (!colon || (size_t)(colon - hostport) >= sizeof host)
        return UV_EINVAL;
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = 0;
    char *bare = host;
    if (bare[0] == '[') { /* [::1] */
        bare++;
        bare[strcspn(bare, "]")] = 0;
    }
    int port = atoi(colon + 1);
    struct sockaddr_storage addr;
    int rc = strchr(bare, ':') ? uv_ip6_addr(bare, port, (struct sockaddr_in6 *)&addr)
                               : uv_ip4_addr(bare, port, (struct sockaddr_in *)&addr);
    if (rc || (rc = uv_tcp_init(s->loop, &l->h.tcp)))
        return rc;
    l->h.handle.data = l;
    if ((rc = uv_tcp_bind(&l->h.tcp, (struct sockaddr *)&addr, 0)) ||
        (rc = uv_listen(&l->h.stream, 511, on_connection)))
        return rc;
    /* Port 0 asks the kernel: report what we got, for scripts and tests. */
    int len = sizeof addr;
    char ip[64] = "";
    uv_tcp_getsockname(&l->h.tcp, (struct sockaddr *)&addr, &len);
    if (addr.ss_family == AF_INET6) {
        uv_ip6_name((struct sockaddr_in6 *)&addr, ip, sizeof ip);
        snprintf(l->uri, sizeof l->uri, "tcp://[%s]:%d", ip,
                 ntohs(((struct sockaddr_in6 *)&addr)->sin6_port));
    } else {
        uv_ip4_name((struct sockaddr_in *)&addr, ip, sizeof ip);
        snprintf(l->uri, sizeof l->uri, "tcp://%s:%d", ip,
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
        int rc = !strncmp(uri, "unix:", 5)    ? listen_unix(s, l, uri + 5)
                 : !strncmp(uri, "tcp://", 6) ? listen_tcp(s, l, uri + 6)
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

/* At shutdown every connection keeps reading, so that requests already sent are answered
 * SHUTDOWN rather than reset, and ends (conn_finish) once it has nothing in flight and its
 * replies are written; idle ones end now. */
static void drain_conns(struct server *s)
{
    for (struct conn *c = s->conns, *n; c; c = n) {
        n = c->next;
        finish_if_done(c);
    }
}

static void on_sweep(uv_timer_t *t);

/* The end of a shutdown: no connection is left, so no job is either; the workers are idle. */
static void finish_shutdown(struct server *s)
{
    pool_shutdown(&s->pool);
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
    s->stopping = true;
    log_msg(LOG_INFO, "shutting down: finishing %zu queued or running jobs", pool_depth(&s->pool));
    for (int i = 0; i < s->listener_count; i++)
        close_if_open(&s->listeners[i].h.handle);
    uv_signal_stop(&s->sigint);
    uv_signal_stop(&s->sigterm);
    close_if_open((uv_handle_t *)&s->sigint);
    close_if_open((uv_handle_t *)&s->sigterm);
    s->stop_deadline = server_now_ms(s) + SHUTDOWN_MS;
    drain_conns(s);
    if (!s->conns || !uv_is_active((uv_handle_t *)&s->sweep)) {
        for (struct conn *c = s->conns; c; c = c->next)
            conn_close(c);
        finish_shutdown(s);
        return;
    }
    uv_timer_stop(&s->sweep);
    uv_timer_start(&s->sweep, on_sweep, 100, 100);
}

static void on_signal(uv_signal_t *h, int signum)
{
    log_msg(LOG_INFO, "signal %d", signum);
    begin_shutdown(h->data);
}

/* Once a second: close connections idle past --idle-timeout. */
static void on_sweep(uv_timer_t *t)
{
    struct server *s = t->data;
    uint64_t now = server_now_ms(s), limit = (uint64_t)s->cfg->idle_timeout * 1000;
    for (struct conn *c = s->conns, *n; c; c = n) {
        n = c->next;
        if (c->closing)
            continue;
        bool overdue = s->stopping && c->jobs == 0 && now > s->stop_deadline;
        if ((c->lingering && now > c->linger_until) || overdue) {
            log_msg(LOG_DEBUG, "closing a connection that did not end in time");
            conn_close(c); /* the peer never closed its side, or shutdown took too long */
            continue;
        }
        /* Idle: no job running and nothing read or written for the timeout, which also ends
         * a peer that stopped reading its replies. */
        if (limit && c->jobs == 0 && now - c->last_active > limit && !c->closing) {
            log_msg(LOG_DEBUG, "closing an idle connection");
            conn_close(c);
        }
    }
    if (s->stopping && !s->conns)
        finish_shutdown(s);
}

static int start(struct server *s)
{
    int rc;
    if ((rc = uv_signal_init(s->loop, &s->sigint)) || (rc = uv_signal_init(s->loop, &s->sigterm)) ||
        (rc = uv_timer_init(s->loop, &s->sweep)))
        return rc;
    s->sigint.data = s->sigterm.data = s->sweep.data = s;
    uv_signal_start(&s->sigint, on_signal, SIGINT);
    uv_signal_start(&s->sigterm, on_signal, SIGTERM);
    uv_timer_start(&s->sweep, on_sweep, 1000, 1000);
    if ((rc = pool_init(&s->pool, s->loop, (int)s->cfg->threads, (size_t)s->cfg->queue_depth)))
        return rc;
    return open_listeners(s);
}

int server_run(struct config *cfg)
{
    struct server s;
    memset(&s, 0, sizeof s);
    s.cfg = cfg;
    s.loop = uv_default_loop();
    /* A peer that hangs up before its replies are written must cost us an EPIPE on that
     * connection, not the process. */
    signal(SIGPIPE, SIG_IGN);
    if (!realpath(cfg->root, s.root)) {
        log_msg(LOG_ERROR, "--root %s: no such directory", cfg->root);
        return 1;
    }
    if (cache_init(&s.cache, (size_t)cfg->cache_mb << 20))
        return 1;
    s.started_ms = uv_now(s.loop);
    int rc = start(&s);
    if (rc == 0 && cfg->preload && dispatch_preload(&s, cfg->preload))
        rc = UV_EINVAL;
    if (rc) {
        log_msg(LOG_ERROR, "startup failed: %s", uv_strerror(rc));
        begin_shutdown(&s);
    } else {
        log_msg(LOG_INFO, "serving with %d threads", (int)cfg->threads);
        printf("ready: try `client/skelctl --uri %s stats` or `client/skelctl --uri %s render "
               "FILE.skf --anim 0 --frame 10 -o out.png`\n",
               s.listeners[0].uri, s.listeners[0].uri);
        fflush(stdout);
    }
    uv_run(s.loop, UV_RUN_DEFAULT);
    int closed = uv_loop_close(s.loop);
    cache_close(&s.cache);
    if (closed)
        log_msg(LOG_ERROR, "loop did not close cleanly: %s", uv_strerror(closed));
    else
        log_msg(LOG_INFO, "stopped");
    return rc || closed ? 1 : 0;
}
