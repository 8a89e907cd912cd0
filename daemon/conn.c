/* Connections of the binary protocol (conn.h): reading frames, queuing replies with
 * backpressure, and ending without resets (STYLE.md section 6). */
#include "conn.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>

#include "log.h"

/* A reply waiting for the connection's next write. */
struct out_reply {
    struct out_reply *next;
    uint8_t *body; /* owned */
    size_t len;
    uint8_t header[SKP_HEADER_SIZE];
};

/* One write of up to WRITE_BATCH replies, which it owns until the write ends. */
#define WRITE_BATCH 64

struct write_req {
    uv_write_t req;
    struct conn *c;
    struct out_reply *replies; /* a list */
    unsigned count;
};

static uint64_t now_ms(const struct conn *c)
{
    return uv_now(c->set->loop);
}

static struct conn *conn_of(struct conn_link *k)
{
    return (struct conn *)(void *)((char *)k - offsetof(struct conn, link));
}

/* ---- connection lifetime ----------------------------------------------------------------- */

static void free_conn(struct conn *c)
{
    struct conn_set *set = c->set;
    flush_cancel(&set->flush, &c->ready); /* nothing is queued by now: replies hold c */
    conn_list_remove(&set->list, &c->link);
    set->in_bytes -= c->in_cap;
    free(c->in);
    free(c);
}

static void on_conn_closed(uv_handle_t *h)
{
    struct conn *c = h->data;
    c->closed = true;
    if (c->session)
        c->set->hooks->on_close(c->set->owner, c);
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
    c->linger_until = now_ms(c) + LINGER_MS;
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
    bool ending = c->close_after_write || c->set->stopping;
    if (!ending || c->inflight != 0 || uv_stream_get_write_queue_size(&c->h.stream) != 0)
        return;
    if (!c->close_after_write && (input_pending(c) || c->begun_at_drain)) {
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
    if (c->set->stopping) /* the shutdown deadline counts from the last job done */
        c->set->stop_deadline = now_ms(c) + SHUTDOWN_MS;
    if (c->closed && c->inflight == 0) {
        free_conn(c);
        return;
    }
    update_reading(c);
    finish_if_done(c);
}

/* ---- writing ----------------------------------------------------------------------------- */

static void free_replies(struct out_reply *r)
{
    while (r) {
        struct out_reply *n = r->next;
        free(r->body);
        free(r);
        r = n;
    }
}

/* count replies (the list from first) are written, or failed with status: they no longer
 * hold c. False if c was freed. */
static bool replies_written(struct conn *c, struct out_reply *first, unsigned count, int status)
{
    free_replies(first);
    c->inflight -= (int)count; /* each reply held the connection */
    if (c->closed && c->inflight == 0) {
        free_conn(c);
        return false;
    }
    c->last_active = now_ms(c); /* a reply went out: the peer is reading */
    if (status < 0) {
        conn_close(c);
        return true;
    }
    update_reading(c);
    finish_if_done(c);
    return true;
}

static void on_written(uv_write_t *req, int status)
{
    struct write_req *w = (struct write_req *)req;
    struct conn *c = w->c;
    struct out_reply *first = w->replies;
    unsigned count = w->count;
    free(w);
    replies_written(c, first, count, status);
}

/* Takes up to WRITE_BATCH replies off the queue into one write: what the socket takes at
 * once is written there, the rest queued. False if c ended meanwhile (it may then be
 * freed). */
static bool write_batch(struct conn *c)
{
    uv_buf_t bufs[2 * WRITE_BATCH];
    unsigned n = 0, count = 0;
    struct out_reply *first = c->out_head, *last = NULL;
    for (struct out_reply *r = first; r && count < WRITE_BATCH; r = r->next, count++) {
        bufs[n++] = uv_buf_init((char *)r->header, SKP_HEADER_SIZE);
        if (r->len)
            bufs[n++] = uv_buf_init((char *)r->body, (unsigned)r->len);
        last = r;
    }
    c->out_head = last->next;
    if (!c->out_head)
        c->out_tail = NULL;
    last->next = NULL;
    bool writable = !c->closing && !c->lingering;
    /* The request is had first: once part of a reply is out, the rest must follow. */
    struct write_req *w = writable ? malloc(sizeof *w) : NULL;
    if (w && flush_write_now(&c->h.stream, bufs, &n) == 0) {
        if (n == 0) {
            free(w);
            return replies_written(c, first, count, 0);
        }
        *w = (struct write_req){.c = c, .replies = first, .count = count};
        if (uv_write(&w->req, &c->h.stream, bufs, n, on_written) == 0) /* copies bufs */
            return true;
    }
    free(w);
    /* Not written: the connection is ending, or cannot write. */
    free_replies(first);
    c->inflight -= (int)count;
    if (c->closed && c->inflight == 0) {
        free_conn(c);
        return false;
    }
    if (writable)
        conn_close(c); /* c->closed is still false: c stays valid */
    return true;
}

static void flush_replies(struct conn *c)
{
    while (c->out_head)
        if (!write_batch(c))
            return;
}

/* flush_set's callback: the connection's queued replies, written. */
static void on_flush(struct flush_node *n)
{
    flush_replies((struct conn *)((char *)n - offsetof(struct conn, ready)));
}

void conn_peer_name(const uv_stream_t *st, char *out, size_t cap)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    char host[INET6_ADDRSTRLEN] = "";
    snprintf(out, cap, "unix");
    if (st->type != UV_TCP ||
        uv_tcp_getpeername((const uv_tcp_t *)st, (struct sockaddr *)&ss, &len))
        return;
    if (ss.ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;
        uv_ip4_name(a, host, sizeof host);
        snprintf(out, cap, "%s:%u", host, (unsigned)ntohs(a->sin_port));
    } else if (ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;
        uv_ip6_name(a, host, sizeof host);
        snprintf(out, cap, "[%s]:%u", host, (unsigned)ntohs(a->sin6_port));
    }
}

void conn_note(struct conn *c, uint64_t started_us, const uint8_t *armature)
{
    c->note_started_us = started_us;
    c->note_has_id = armature != NULL;
    if (armature)
        memcpy(c->note_id, armature, sizeof c->note_id);
}

/* One logfmt line per reply: who, what, which armature, how it ended, how big, how long. */
static void access_line(struct conn *c, uint8_t opcode, uint32_t id, uint16_t status, size_t len)
{
    uint64_t now = uv_hrtime() / 1000;
    char arm[2 * SKP_ID_SIZE + 1] = "-";
    if (c->note_has_id)
        skp_hex(arm, c->note_id, SKP_ID_SIZE);
    uint64_t since = c->note_started_us ? c->note_started_us : now;
    log_access(LOG_INFO, "proto=skp peer=%s op=%s req=%u armature=%s status=%s bytes=%zu us=%llu",
               c->peer, skp_opcode_name(opcode), id, arm, skp_status_name(status), len,
               (unsigned long long)(now > since ? now - since : 0));
}

void conn_reply(struct conn *c, uint8_t opcode, uint32_t id, uint16_t status, uint8_t *body,
                size_t len)
{
    /* No client takes a frame over the protocol's limit (libskc closes the connection on
     * one): a picture that came out bigger (raw RGBA, many frames) is refused instead. */
    if (len > SKP_MAX_FRAME) {
        free(body);
        conn_error(c, opcode, id, SKP_S_LIMIT,
                   "the reply would be %zu bytes, over the protocol's frame of %u: ask for fewer "
                   "frames, a smaller picture or a PNG that compresses (not raw RGBA or level 0)",
                   len, (unsigned)SKP_MAX_FRAME);
        return;
    }
    if (log_enabled(LOG_INFO))
        access_line(c, opcode, id, status, len);
    c->note_started_us = 0;
    c->note_has_id = false;
    struct out_reply *r = c->closing || c->lingering ? NULL : malloc(sizeof *r);
    if (!r) {
        free(body);
        if (!c->closing && !c->lingering)
            conn_close(c);
        return;
    }
    struct skp_header h = {SKP_VERSION, opcode, SKP_F_REPLY, status, id, (uint32_t)len};
    skp_encode_header(&h, r->header);
    r->body = body;
    r->len = len;
    r->next = NULL;
    if (c->out_tail)
        c->out_tail->next = r;
    else
        c->out_head = r;
    c->out_tail = r;
    c->inflight++;
    if (status != SKP_S_OK) {
        c->set->error_replies++;
        conn_count_refusal(c->set, status);
    }
    flush_schedule(&c->set->flush, &c->ready);
}

/* Every status has its slot in refusals (SKP_STATUS_END names the largest by hand). */
#define SKP_X(name, value, msg)                                                                    \
    _Static_assert((value) < SKP_STATUS_END, "SKP_STATUS_END is past status " #name);
SKP_STATUSES(SKP_X)
#undef SKP_X

void conn_count_refusal(struct conn_set *set, uint16_t status)
{
    if (status != SKP_S_OK && status < SKP_STATUS_END)
        set->refusals[status]++;
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

#define IN_CHUNK 65536

/* Resizes c's input buffer to cap bytes, within the daemon's budget for input buffers (a
 * shrink always succeeds in the accounting). False if the budget or memory says no. */
static bool resize_input(struct conn *c, size_t cap)
{
    struct conn_set *set = c->set;
    size_t budget = (size_t)set->cfg->max_input_mb << 20;
    if (cap > c->in_cap && set->in_bytes - c->in_cap + cap > budget)
        return false;
    uint8_t *n = cap ? realloc(c->in, cap) : (free(c->in), NULL);
    if (cap && !n)
        return false;
    set->in_bytes = set->in_bytes - c->in_cap + cap;
    c->in = n;
    c->in_cap = cap;
    return true;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    struct conn *c = h->data;
    (void)suggested;
    size_t limit = (size_t)c->max_frame + SKP_HEADER_SIZE;
    if (c->in_cap - c->in_len < IN_CHUNK && c->in_cap < limit) {
        size_t cap = c->in_cap ? c->in_cap * 2 : IN_CHUNK;
        resize_input(c, cap > limit ? limit : cap);
    }
    /* No room (the budget for input buffers is spent): libuv reports UV_ENOBUFS. */
    *buf = c->in_cap > c->in_len
               ? uv_buf_init((char *)c->in + c->in_len, (unsigned)(c->in_cap - c->in_len))
               : uv_buf_init(NULL, 0);
}

/* After a big frame the buffer shrinks back, so an idle connection holds little. */
static void shrink_input(struct conn *c)
{
    if (c->in_len == 0 && c->in_cap > IN_CHUNK)
        resize_input(c, 0);
    else if (c->in_cap > 4 * IN_CHUNK && c->in_len <= IN_CHUNK)
        resize_input(c, IN_CHUNK);
}

void conn_set_max_frame(struct conn *c, uint32_t max)
{
    c->max_frame = max;
}

static bool over_limits(struct conn *c)
{
    return c->inflight >= c->set->cfg->max_inflight ||
           uv_stream_get_write_queue_size(&c->h.stream) > (size_t)c->set->cfg->out_high_water;
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf);

static void parse_input(struct conn *c);

static void update_reading(struct conn *c)
{
    if (c->closing || c->lingering || c->close_after_write)
        return;
    /* Frames read before the limits were reached wait in the buffer: their turn first. */
    if (!c->parsing && c->in_len && !over_limits(c))
        parse_input(c);
    if (c->closing || c->close_after_write)
        return;
    bool pause = over_limits(c);
    bool resume =
        c->inflight < c->set->cfg->max_inflight &&
        uv_stream_get_write_queue_size(&c->h.stream) <= (size_t)c->set->cfg->out_low_water;
    if (c->reading && pause) {
        uv_read_stop(&c->h.stream);
        c->reading = false;
    } else if (!c->reading && resume) {
        c->reading = uv_read_start(&c->h.stream, on_alloc, on_read) == 0;
        if (c->frame_since) /* the rest of it waited on us, not on the client */
            c->frame_since = now_ms(c);
    }
}

/* Runs the whole frames in the input buffer, in order, while the connection is within its
 * limits (--max-inflight, --out-high-water): the frames of one read past them wait in the
 * buffer for update_reading, or a client that never reads its replies could have a whole
 * buffer of renders run at once. */
static void parse_input(struct conn *c)
{
    if (c->parsing) /* a reply given by a frame being run: the loop below goes on */
        return;
    c->parsing = true;
    size_t off = 0;
    while (!c->closing && !c->close_after_write && !over_limits(c)) {
        struct skp_frame f;
        size_t used;
        int rc = skp_parser_feed(c->in + off, c->in_len - off, c->max_frame, &f, &used);
        if (rc == SKP_NEED_MORE)
            break;
        if (rc < 0) {
            if (rc == SKP_EBADVERSION) /* the one error a client can act on by version */
                conn_error(c, 0, 0, SKP_S_VERSION,
                           "protocol version not supported (this daemon speaks %d)", SKP_VERSION);
            else
                conn_error(c, 0, 0, (uint16_t)skp_parse_status(rc), "%s",
                           rc == SKP_EOVERSIZE ? "frame larger than the limit"
                                               : "not a skeld frame");
            c->close_after_write = true;
            uv_read_stop(&c->h.stream);
            c->reading = false;
            break;
        }
        off += used;
        conn_note(c, uv_hrtime() / 1000, NULL); /* a reply given at once is timed from here */
        c->frame_begun = c->begun_at_drain;     /* the frame that was part-way in, if any */
        c->begun_at_drain = false;
        c->set->hooks->on_frame(c->set->owner, c, &f);
        c->frame_begun = false;
        c->note_started_us = 0; /* one given later is noted by the owner */
        c->note_has_id = false;
    }
    c->parsing = false;
    memmove(c->in, c->in + off, c->in_len - off);
    c->in_len -= off;
    /* The deadline runs from the first byte of a frame until the frame is whole. */
    if (c->in_len == 0)
        c->frame_since = 0;
    else if (off || !c->frame_since)
        c->frame_since = now_ms(c);
    shrink_input(c);
}

/* Ends c with a reply saying why, once the reply is written. */
static void end_with(struct conn *c, uint16_t status, const char *why)
{
    conn_error(c, 0, 0, status, "%s", why);
    c->close_after_write = true;
    uv_read_stop(&c->h.stream);
    c->reading = false;
    finish_if_done(c);
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
    if (nread == UV_ENOBUFS) {
        log_msg(LOG_WARN, "input buffers are full (--max-input-mb): ending a connection");
        end_with(c, SKP_S_BUSY, "the daemon's input buffers are full (--max-input-mb), retry");
        return;
    }
    if (nread < 0) {
        log_msg(LOG_DEBUG, "connection read: %s", uv_strerror((int)nread));
        conn_close(c);
        return;
    }
    c->last_active = now_ms(c);
    c->in_len += (size_t)nread;
    parse_input(c);
    update_reading(c);
    finish_if_done(c); /* at shutdown, a trailing partial frame must not hold the connection */
}

/* ---- the set ------------------------------------------------------------------------------- */

void conn_set_init(struct conn_set *set, uv_loop_t *loop, const struct config *cfg,
                   const struct conn_hooks *hooks, void *owner)
{
    memset(set, 0, sizeof *set);
    set->loop = loop;
    set->cfg = cfg;
    set->hooks = hooks;
    set->owner = owner;
    flush_set_init(&set->flush, loop, on_flush);
}

void conn_set_close(struct conn_set *set)
{
    flush_set_close(&set->flush);
}

/* Descriptors kept free for everything but connections: listeners, the loop, files being
 * loaded, and the refusals themselves. */
#define FD_RESERVE 32

uint32_t conn_fd_room(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
        return UINT32_MAX;
    return rl.rlim_cur > FD_RESERVE ? (uint32_t)(rl.rlim_cur - FD_RESERVE) : 0;
}

void conn_list_add(struct conn_list *l, struct conn_link *k)
{
    k->prev = NULL;
    k->next = l->head;
    if (l->head)
        l->head->prev = k;
    l->head = k;
    l->count++;
    l->total++;
}

void conn_list_remove(struct conn_list *l, struct conn_link *k)
{
    if (k->prev)
        k->prev->next = k->next;
    else
        l->head = k->next;
    if (k->next)
        k->next->prev = k->prev;
    l->count--;
}

static const char *refused(struct conn_list *l, const char *why)
{
    l->refused++;
    return why;
}

const char conn_too_many[] = "too many connections (--max-connections)";

const char *conn_list_refusal(struct conn_list *l, const struct config *cfg, bool stopping,
                              uint64_t now)
{
    uint32_t all = l->count + (l->other ? l->other->count : 0);
    if (stopping)
        return refused(l, "shutting down");
    if (all > (uint32_t)cfg->max_connections)
        return refused(l, conn_too_many);
    if (all <= conn_fd_room())
        return NULL;
    if (!l->fd_logged_ms || now - l->fd_logged_ms >= 1000) {
        log_msg(LOG_WARN, "%u connections reach the file-descriptor limit (ulimit -n): refusing",
                all - 1);
        l->fd_logged_ms = now ? now : 1;
    }
    return refused(l, "too many connections for the daemon's file-descriptor limit");
}

void conn_accept(struct conn_set *set, uv_stream_t *listener)
{
    struct conn *c = calloc(1, sizeof *c);
    bool tcp = listener->type == UV_TCP;
    int rc = !c    ? UV_ENOMEM
             : tcp ? uv_tcp_init(set->loop, &c->h.tcp)
                   : uv_pipe_init(set->loop, &c->h.pipe, 0);
    if (rc) {
        free(c);
        return;
    }
    c->h.handle.data = c;
    c->set = set;
    c->max_frame = (uint32_t)set->cfg->max_frame;
    c->last_active = uv_now(set->loop);
    conn_list_add(&set->list, &c->link);
    if (uv_accept(listener, &c->h.stream) || set->hooks->on_open(set->owner, c)) {
        conn_close(c);
        return;
    }
    conn_peer_name(&c->h.stream, c->peer, sizeof c->peer);
    /* Refused, but told why (and read to its end, so no reset destroys the reply). */
    const char *why = conn_list_refusal(&set->list, set->cfg, set->stopping, uv_now(set->loop));
    if (why) {
        end_with(c, set->stopping ? SKP_S_SHUTDOWN : SKP_S_BUSY, why);
        return;
    }
    if (tcp)
        uv_tcp_nodelay(&c->h.tcp, 1);
    c->reading = uv_read_start(&c->h.stream, on_alloc, on_read) == 0;
}

/* Whether the next frame in c's buffer is only part-way in. A whole frame waiting there on the
 * limits was not begun (as HTTP's pipelined requests), nor were those behind it. */
static bool frame_part_way(struct conn *c)
{
    struct skp_frame f;
    size_t used;
    return c->in_len > 0 &&
           skp_parser_feed(c->in, c->in_len, c->max_frame, &f, &used) == SKP_NEED_MORE;
}

void conn_set_drain(struct conn_set *set)
{
    set->stop_deadline = uv_now(set->loop) + SHUTDOWN_MS;
    for (struct conn_link *k = set->list.head, *n; k; k = n) {
        n = k->next;
        struct conn *c = conn_of(k);
        c->begun_at_drain = !c->close_after_write && frame_part_way(c);
        finish_if_done(c);
    }
}

void conn_set_sweep(struct conn_set *set, uint64_t now)
{
    uint64_t idle_ms = (uint64_t)set->cfg->idle_timeout * 1000;
    uint64_t frame_ms = (uint64_t)set->cfg->frame_timeout * 1000;
    for (struct conn_link *k = set->list.head, *n; k; k = n) {
        n = k->next;
        struct conn *c = conn_of(k);
        if (c->closing)
            continue;
        /* only while reading: a frame the daemon stopped reading (its limits) is not late */
        if (c->frame_since && c->reading && !c->close_after_write && !c->lingering &&
            now - c->frame_since > frame_ms) {
            log_msg(LOG_DEBUG, "ending a connection whose frame did not arrive in time");
            end_with(c, SKP_S_FRAMING, "a frame must arrive whole within --frame-timeout");
            continue;
        }
        bool overdue = set->stopping && c->jobs == 0 && now > set->stop_deadline;
        if ((c->lingering && now > c->linger_until) || overdue) {
            log_msg(LOG_DEBUG, "closing a connection that did not end in time");
            conn_close(c); /* the peer never closed its side, or shutdown took too long */
            continue;
        }
        /* Idle: no job running and nothing read or written for the timeout, which also ends
         * a peer that stopped reading its replies. */
        if (idle_ms && c->jobs == 0 && now - c->last_active > idle_ms) {
            log_msg(LOG_DEBUG, "closing an idle connection");
            conn_close(c);
        }
    }
}

void conn_set_close_all(struct conn_set *set)
{
    for (struct conn_link *k = set->list.head; k; k = k->next)
        conn_close(conn_of(k));
}
