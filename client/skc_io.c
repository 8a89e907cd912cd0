/* The stream: request framing and the output queue, reading and parsing replies with
 * proto/'s frame parser, and the table of pending requests where replies wait until they are
 * asked for (or, for skc_async, go straight to their callbacks). The socket never blocks:
 * waiting is poll() with a deadline, and non-blocking callers get SKC_EAGAIN instead. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "skc_int.h"
#include "skp_parser.h"

#define READ_CHUNK 65536
#define KEEP_BUFFER (1u << 20) /* buffers above this are given back once idle */

void skc__close(skc_client *c, const char *fmt, ...)
{
    if (c->async && c->fd >= 0)
        skc__async_closing(c->async); /* an event loop must not watch a closed descriptor */
    if (c->fd >= 0)
        close(c->fd); /* the descriptor is released even when close reports an error */
    c->fd = -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->gone, sizeof c->gone, fmt, ap);
    va_end(ap);
}

/* The error for I/O on a closed connection. */
static int gone(skc_client *c)
{
    return skc__fail(c, SKC_EIO, "connection closed: %s", c->gone[0] ? c->gone : "never opened");
}

/* What to do when the daemon hung up first (its --idle-timeout, a restart): a blocking
 * client reconnects; an asynchronous handle ends, and a new one connects again. */
static const char *reconnect_hint(const skc_client *c)
{
    return c->async ? " (the daemon closed the connection: connect a new handle)"
                    : " (the daemon closed the connection: skc_reconnect opens it again)";
}

static int broken(skc_client *c, int code, const char *what)
{
    char buf[128];
    int e = errno;
    skc__errno_str(e, buf, sizeof buf);
    const char *hint = e == EPIPE || e == ECONNRESET ? reconnect_hint(c) : "";
    skc__close(c, "%s: %s%s", what, buf, hint);
    return skc__fail(c, code, "%s: %s%s", what, buf, hint);
}

static void drop(skc_client *c, struct skc__pending *p)
{
    free(p->f.body);
    skc__pend_remove(c, p);
}

int skc__forget(skc_client *c, uint32_t req_id)
{
    struct skc__pending *p = skc__pend_find(c, req_id);
    if (!p)
        return skc__fail(c, SKC_EINVAL, "no request %u is pending", (unsigned)req_id);
    drop(c, p);
    return 0;
}

void skc__reset(skc_client *c)
{
    while (c->npend)
        drop(c, &c->pend[c->npend - 1]);
    c->in_len = 0;
    c->out_off = c->out_len = c->out_frame = 0;
}

/* ---- reading ------------------------------------------------------------------------ */

/* Stores a reply in its request's slot. Replies to forgotten requests are dropped. */
static int file_frame(skc_client *c, const struct skp_frame *f)
{
    if (!(f->h.flags & SKP_F_REPLY)) {
        skc__close(c, "the server sent a request (opcode %u)", f->h.opcode);
        return skc__fail(c, SKC_EPROTO, "%s", c->gone);
    }
    struct skc__pending *p = skc__pend_find(c, f->h.id);
    if (!p && f->h.id == 0 && f->h.status != SKP_S_OK) {
        /* A connection-level error (framing, version): the server closes after it. */
        size_t len = 0;
        struct skp_reader r;
        skp_reader_init(&r, f->body, f->h.body_len);
        const char *msg = skp_read_str(&r, &len);
        skc__close(c, "the server ended the connection: %.*s (%s)", (int)len, msg ? msg : "",
                   skp_strerror(f->h.status));
        c->status = f->h.status;
        return skc__fail(c, SKC_ESERVER, "%s", c->gone);
    }
    if (!p || p->done)
        return 0; /* forgotten after a timeout, or a duplicate: nobody wants it */
    p->f.h = f->h;
    p->f.body = malloc(f->h.body_len ? f->h.body_len : 1);
    p->done = p->f.body ? 1 : SKC_ENOMEM;
    if (p->f.body)
        memcpy(p->f.body, f->body, f->h.body_len);
    if (c->async) {
        /* Out of the table before the callback runs: it may send requests, which can move
         * the table. */
        struct skc__pending got = *p;
        skc__pend_remove(c, p);
        skc__async_reply(c->async, &got);
    }
    return 0;
}

static void shrink_input(skc_client *c);

/* Files every whole frame in the input buffer and keeps the partial rest. */
static int file_frames(skc_client *c)
{
    size_t off = 0;
    int rc = 0;
    while (rc == 0 && c->fd >= 0) {
        struct skp_frame f;
        size_t used;
        int r = skp_parser_feed(c->in + off, c->in_len - off, c->max_reply, &f, &used);
        if (r == SKP_NEED_MORE)
            break;
        if (r < 0) {
            int st = skp_parse_status(r);
            if (st == SKP_S_TOO_BIG) { /* the caller's own bound, not the server's fault */
                c->too_big_id = skp_get_u32(c->in + off + 12); /* the header is in */
                c->has_too_big = 1;
                skc__close(c, "a reply over this client's max_reply of %zu bytes",
                           (size_t)c->max_reply);
            } else {
                skc__close(c, "bad frame from the server (%s)", skp_strerror(st));
            }
            return skc__fail(c, SKC_EPROTO, "%s", c->gone);
        }
        rc = file_frame(c, &f);
        off += used;
    }
    memmove(c->in, c->in + off, c->in_len - off);
    c->in_len -= off;
    shrink_input(c); /* the replies are copied out: a big one's buffer goes (async: only here) */
    return rc;
}

/* Room for the next read: the rest of a partial frame, or at least READ_CHUNK. */
static int reserve_input(skc_client *c)
{
    size_t want = c->in_len + READ_CHUNK;
    if (c->in_len >= SKP_HEADER_SIZE) {
        size_t whole = SKP_HEADER_SIZE + (size_t)skp_get_u32(c->in + 16);
        want = whole > want ? whole : want;
    }
    if (want <= c->in_cap)
        return 0;
    uint8_t *p = realloc(c->in, want);
    if (!p) {
        /* The stream cannot advance past this frame: give the connection up. */
        skc__close(c, "out of memory for a %zu-byte reply", want);
        return skc__fail(c, SKC_ENOMEM, "%s", c->gone);
    }
    c->in = p;
    c->in_cap = want;
    return 0;
}

/* One read: files what arrived. EOF or a socket error closes the connection; *got (may be
 * NULL) says whether anything came. */
static int read_some(skc_client *c, int *got)
{
    int rc = reserve_input(c);
    if (got)
        *got = 0;
    if (rc)
        return rc;
    if (c->fd < 0)
        return gone(c);
    ssize_t n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
    if (n < 0)
        return errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK
                   ? 0
                   : broken(c, SKC_EIO, "receiving");
    if (got)
        *got = 1;
    if (n == 0) {
        if (c->in_len)
            skc__close(c, "the server closed the connection in the middle of a reply");
        else
            skc__close(c, "the server closed the connection%s", reconnect_hint(c));
        return gone(c);
    }
    c->in_len += (size_t)n;
    return file_frames(c);
}

/* poll() until events or the deadline. 0 with *rev, SKC_ETIMEOUT, or SKC_EIO. */
static int wait_fd(skc_client *c, short events, int64_t deadline, short *rev)
{
    struct pollfd p = {.fd = c->fd, .events = events};
    int n;
    do
        n = poll(&p, 1, skc__remaining(deadline));
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return broken(c, SKC_EIO, "poll");
    if (n == 0)
        return skc__fail(c, SKC_ETIMEOUT, "timed out waiting for the server");
    *rev = p.revents;
    return 0;
}

/* ---- writing ------------------------------------------------------------------------ */

/* Everything queued went out: start again at the front, and give a big buffer back. */
static void queue_drained(skc_client *c)
{
    c->out_off = c->out_len = c->out_frame = 0;
    if (c->out_cap > KEEP_BUFFER) {
        free(c->out);
        c->out = NULL;
        c->out_cap = 0;
    }
}

/* The frame at out[at] (a whole one: the queue holds only whole requests): its length, and
 * its request id. */
static size_t queued_frame(const skc_client *c, size_t at, uint32_t *id)
{
    struct skp_frame f;
    size_t used = 0;
    int r = skp_parser_feed(c->out + at, c->out_len - at, SKP_MAX_FRAME, &f, &used);
    *id = r == SKP_FRAME ? f.h.id : 0;
    return r == SKP_FRAME ? used : c->out_len - at; /* never: our own frames parse */
}

/* out_frame moves to the start of the request out_off is now in. */
static void follow_frames(skc_client *c)
{
    uint32_t id;
    while (c->out_frame < c->out_off) {
        size_t len = queued_frame(c, c->out_frame, &id);
        if (c->out_frame + len > c->out_off)
            break;
        c->out_frame += len;
    }
}

void skc__unsend_overdue(skc_client *c, int64_t now)
{
    uint32_t id;
    size_t from = c->out_frame, to = from;
    if (c->out_off > from && from < c->out_len) /* begun: it must go out whole */
        from = to = from + queued_frame(c, from, &id);
    while (from < c->out_len) {
        size_t len = queued_frame(c, from, &id);
        const struct skc__pending *p = skc__pend_find(c, id);
        if (!p || p->deadline < 0 || p->deadline > now) {
            if (to != from)
                memmove(c->out + to, c->out + from, len);
            to += len;
        }
        from += len;
    }
    c->out_len = to;
    if (c->out_off == c->out_len)
        queue_drained(c);
}

int skc__flush(skc_client *c)
{
    while (c->out_off < c->out_len) {
        if (c->fd < 0)
            return gone(c);
        ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
        if (n > 0) {
            c->out_off += (size_t)n;
            follow_frames(c);
        } else if (n < 0 && errno == EINTR)
            continue;
        else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return broken(c, SKC_EIO, "sending");
        else
            return SKC_EAGAIN;
    }
    queue_drained(c);
    return 0;
}

/* The deadline passed before the queue was written. A request that starts at mine and has
 * not begun to go out is taken back (the connection stays usable); one cut in the middle
 * leaves the stream broken, so the connection closes. */
static int write_timeout(skc_client *c, size_t mine)
{
    if (c->out_off <= mine) {
        c->out_len = mine;
        if (c->out_off == c->out_len)
            queue_drained(c);
        return skc__fail(c, SKC_ETIMEOUT, "timed out waiting for the server");
    }
    skc__close(c, "timed out in the middle of sending a request");
    return skc__fail(c, SKC_ETIMEOUT, "%s", c->gone);
}

/* Writes the whole queue before the deadline (see write_timeout for mine). While the socket
 * is full it also reads: the server may be waiting for us to read before it reads on. */
static int flush_wait(skc_client *c, size_t mine, int64_t deadline)
{
    for (;;) {
        int rc = skc__flush(c);
        if (rc != SKC_EAGAIN)
            return rc;
        short rev = 0;
        rc = wait_fd(c, POLLOUT | POLLIN, deadline, &rev);
        if (rc == SKC_ETIMEOUT)
            return write_timeout(c, mine);
        if (rc == 0 && (rev & (POLLIN | POLLHUP | POLLERR)))
            rc = read_some(c, NULL);
        if (rc)
            return rc;
    }
}

int skc__flush_wait(skc_client *c, int64_t deadline)
{
    return flush_wait(c, c->out_len, deadline);
}

/* Room for len more bytes at the end of the queue, moving the requests not yet sent whole
 * to the front first when more than half of it is sent (from the start of the one being
 * sent, so that the queue still starts with a whole request). */
static int reserve_output(skc_client *c, size_t len)
{
    size_t keep = c->out_frame;
    if (keep && keep >= c->out_len - keep) {
        memmove(c->out, c->out + keep, c->out_len - keep);
        c->out_len -= keep;
        c->out_off -= keep;
        c->out_frame = 0;
    }
    if (c->out_cap - c->out_len >= len)
        return 0;
    size_t want = c->out_len + len;
    want = want < 2 * c->out_cap ? 2 * c->out_cap : want;
    uint8_t *p = realloc(c->out, want);
    if (!p)
        return skc__fail(c, SKC_ENOMEM, "out of memory for a %zu-byte request", len);
    c->out = p;
    c->out_cap = want;
    return 0;
}

/* Encodes op's body after a header-sized gap at the end of the queue, growing it until the
 * body fits. */
static int encode(skc_client *c, skc__encoder enc, const void *arg, size_t hint, size_t *len)
{
    size_t cap = hint < 256 ? 256 : hint > c->server_max ? c->server_max : hint;
    for (;;) {
        int rc = reserve_output(c, SKP_HEADER_SIZE + cap);
        if (rc)
            return rc;
        struct skp_writer w;
        size_t room = c->out_cap - c->out_len - SKP_HEADER_SIZE;
        skp_writer_init(&w, c->out + c->out_len + SKP_HEADER_SIZE, room);
        enc(&w, arg);
        if (w.err == SKP_EOK && w.len <= c->server_max) {
            *len = w.len;
            return 0;
        }
        if (w.err == SKP_ETOOLONG)
            return skc__fail(c, SKC_EINVAL,
                             "a string over %d bytes, or data (a .skf) over the %u-byte request "
                             "limit (skc_server_max_frame)",
                             SKP_MAX_NAME, (unsigned)c->server_max);
        if (w.err == SKP_EOK || room >= c->server_max)
            return skc__fail(c, SKC_EINVAL, "request over the server's %u-byte limit",
                             (unsigned)c->server_max);
        cap = room * 2 > c->server_max ? c->server_max : room * 2;
    }
}

static int add_pending(skc_client *c, uint32_t id, uint8_t op)
{
    if (!skc__pend_add(c, id, op))
        return skc__fail(c, SKC_ENOMEM, "out of memory for the pending requests");
    return 0;
}

/* The next request id: never 0 (the server's connection-level errors use it) and, once the
 * counter has gone round, never one still pending. */
static uint32_t next_id(skc_client *c)
{
    for (;;) {
        if (++c->next_id == 0) {
            c->ids_wrapped = 1;
            continue;
        }
        if (!c->ids_wrapped || !skc__pend_find(c, c->next_id))
            return c->next_id;
    }
}

/* skc__queue, also saying where in the queue the request starts. */
static int queue_at(skc_client *c, uint8_t op, skc__encoder enc, const void *arg, size_t hint,
                    uint32_t *req_id, size_t *start)
{
    size_t len = 0;
    if (c->fd < 0)
        return gone(c);
    int rc = encode(c, enc, arg, hint, &len);
    if (rc)
        return rc;
    uint32_t id = next_id(c);
    /* Pending before any write: a reply can arrive while the write waits. */
    if ((rc = add_pending(c, id, op)))
        return rc;
    struct skp_header h = {SKP_VERSION, SKC__WIRE_OP(op), 0, 0, id, (uint32_t)len};
    skp_encode_header(&h, c->out + c->out_len);
    *start = c->out_len;
    c->out_len += SKP_HEADER_SIZE + len;
    *req_id = id;
    return 0;
}

int skc__queue(skc_client *c, uint8_t op, skc__encoder enc, const void *arg, size_t size_hint,
               uint32_t *req_id)
{
    size_t start;
    return queue_at(c, op, enc, arg, size_hint, req_id, &start);
}

/* A request that failed to go out is no longer pending. */
static void unsend(skc_client *c, uint32_t id)
{
    struct skc__pending *p = skc__pend_find(c, id);
    if (p)
        drop(c, p);
}

int skc__send(skc_client *c, uint8_t op, skc__encoder enc, const void *arg, size_t size_hint,
              int64_t deadline, uint32_t *req_id)
{
    uint32_t id;
    size_t start;
    int rc = queue_at(c, op, enc, arg, size_hint, &id, &start);
    if (rc)
        return rc;
    if ((rc = flush_wait(c, start, deadline))) {
        unsend(c, id);
        return rc;
    }
    *req_id = id;
    return 0;
}

int skc__send_nowait(skc_client *c, uint8_t op, skc__encoder enc, const void *arg, size_t size_hint,
                     uint32_t *req_id)
{
    uint32_t id;
    int rc = skc__queue(c, op, enc, arg, size_hint, &id);
    if (rc)
        return rc;
    rc = skc__flush(c);
    if (rc && rc != SKC_EAGAIN) {
        unsend(c, id); /* the connection closed: no reply can come */
        return rc;
    }
    *req_id = id;
    return 0;
}

static void shrink_input(skc_client *c)
{
    if (c->in_cap <= KEEP_BUFFER || c->in_len > READ_CHUNK)
        return;
    uint8_t *p = realloc(c->in, READ_CHUNK);
    if (p) {
        c->in = p;
        c->in_cap = READ_CHUNK;
    }
}

/* Takes a filed reply out of the table and decodes it. */
static int take(skc_client *c, struct skc__pending *p, skc_reply **out)
{
    int done = p->done;
    uint8_t op = p->op;
    struct skc__frame f = p->f;
    p->f.body = NULL;
    drop(c, p);
    shrink_input(c);
    if (done < 0)
        return skc__fail(c, done, "out of memory for the reply");
    return skc__decode(c, op, &f, out);
}

int skc__recv(skc_client *c, uint32_t req_id, int64_t deadline, skc_reply **out)
{
    /* Requests queued in non-blocking mode go out first: ours may be among them. Nothing of
     * the queue is taken back on a timeout (mine is its end). */
    int rc = c->out_off < c->out_len ? flush_wait(c, c->out_len, deadline) : 0;
    for (;;) {
        struct skc__pending *p = skc__pend_find(c, req_id);
        if (!p)
            return skc__fail(c, SKC_EINVAL, "no request %u is pending", (unsigned)req_id);
        if (p->done) {
            /* it came before the connection failed (the flush above may have said so): a
             * success says no error */
            int got = take(c, p, out);
            if (got == 0)
                c->err[0] = '\0';
            return got;
        }
        if (c->fd < 0) {
            drop(c, p); /* the reply can never come */
            return gone(c);
        }
        short rev = 0;
        if (rc == 0 && (rc = wait_fd(c, POLLIN, deadline, &rev)) == 0)
            rc = read_some(c, NULL);
        p = skc__pend_find(c, req_id);
        if (rc && p && p->done)
            return take(c, p, out); /* it arrived just before the error */
        if (rc && rc != SKC_ETIMEOUT && p)
            drop(c, p);
        if (rc)
            return rc;
    }
}

int skc__try_recv(skc_client *c, uint32_t req_id, skc_reply **out)
{
    for (;;) {
        struct skc__pending *p = skc__pend_find(c, req_id);
        if (!p)
            return skc__fail(c, SKC_EINVAL, "no request %u is pending", (unsigned)req_id);
        if (p->done)
            return take(c, p, out);
        if (c->fd < 0) {
            drop(c, p);
            return gone(c);
        }
        int got = 0, rc = skc__flush(c); /* ours may still be queued */
        if (rc == 0 || rc == SKC_EAGAIN)
            rc = read_some(c, &got);
        p = skc__pend_find(c, req_id);
        if (p && p->done)
            return take(c, p, out);
        if (rc && p)
            drop(c, p);
        if (rc)
            return rc;
        if (!got)
            return skc__fail(c, SKC_EAGAIN, "the reply to request %u has not arrived yet",
                             (unsigned)req_id);
    }
}

int skc__read(skc_client *c)
{
    return read_some(c, NULL);
}
