/* HTTP/1.1 connections (http.h) over Debian's http-parser. The parser is paused at the end of
 * each request, so requests are handed over one at a time and reading stops while
 * --max-inflight of them await their answers; answers are queued per connection and written
 * strictly in request order. */
#include "http.h"

#include <http_parser.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "skp_cli.h"

#define IN_SIZE 65536          /* bytes read at a time; a request's body is copied out */
#define MAX_URL 8192           /* 414 past it */
#define MAX_HEADER_BYTES 16384 /* 431 past it */
#define MAX_HEADERS 100        /* 431 past it */
#define LINGER_MS 2000
#define SHUTDOWN_MS 10000

/* Connections past --max-connections read for a health probe at once, at most: their
 * memory (an input buffer each) is the price of a liveness probe that still answers. */
#define PROBE_ROOM 8

struct http_conn {
    union conn_stream h;
    struct http_set *set;
    struct conn_link link;   /* in set->list */
    struct flush_node ready; /* in set->flush: answers to write */
    char peer[64];           /* for the access log: conn_peer_name */
    http_parser parser;
    uint8_t *in;
    size_t in_len, in_off;
    struct http_req *cur;         /* being parsed */
    struct http_req *head, *tail; /* read, awaiting or holding their answers, in order */
    unsigned pending;
    char field[32]; /* the header name being read, lowercased (longer ones are cut) */
    size_t field_len;
    bool in_value;     /* the last callback was a header value */
    unsigned hosts;    /* Host headers in the request being read */
    char **value;      /* where the current header's value goes, or NULL to skip it */
    char *expect;      /* the Expect header of the current request */
    char *coding;      /* and its Transfer-Encoding */
    bool headers_done; /* the current request's header block has ended: fields now are trailers */
    bool continue_due; /* its 100 Continue waits for the answers before it (flush_answers) */
    size_t header_bytes, header_count;
    size_t body_cap;
    int fail_status;      /* a limit a callback hit: answered, then the connection ends */
    const char *fail_why; /* its message, when the status alone does not say it */
    bool reading, closing, closed, close_after, lingering;
    bool parsing;    /* in parse_input: an answer given meanwhile must not parse (or read) again */
    bool probe_only; /* let in past --max-connections: a health probe, then the end */
    /* At the drain, a request was part-way in the bytes read but not parsed yet (parsing
     * waited on --max-inflight): it is answered, as one being parsed then is (req_since).
     * The count of whole requests before it there (refused), or -1 for none part-way. */
    int64_t part_way_at_drain;
    uint64_t requests; /* delivered so far: bytes that start none (CRLF) are not activity */
    int inflight;      /* writes and the half-close: the connection lives while > 0 */
    uv_shutdown_t shutdown;
    uint64_t last_active, linger_until, req_since;
};

/* One write of one or more answers (each malloc'd, freed when written). */
struct write_req {
    uv_write_t req;
    struct http_conn *c;
    unsigned count;
    uint8_t *data[];
};

static uint64_t now_ms(const struct http_conn *c)
{
    return uv_now(c->set->loop);
}

const char *http_reason(int status)
{
    switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return status < 400 ? "OK" : status < 500 ? "Bad Request" : "Server Error";
    }
}

/* ---- lifetime ------------------------------------------------------------------------------ */

static void free_req(struct http_req *r)
{
    free(r->url);
    free(r->if_none_match);
    free(r->authorization);
    free(r->cookie);
    free(r->origin);
    free(r->forwarded_for);
    free(r->body);
    free(r->out);
    free(r->out_body);
    free(r);
}

static void free_conn(struct http_conn *c)
{
    struct http_set *set = c->set;
    flush_cancel(&set->flush, &c->ready);
    conn_list_remove(&set->list, &c->link);
    free(c->in);
    free(c);
}

static void uncharge_body(struct http_conn *c);

/* The client is gone: what it asked and was not answered is forgotten by the owner. */
static void drop_requests(struct http_conn *c)
{
    for (struct http_req *r = c->head, *n; r; r = n) {
        n = r->next;
        if (!r->answered)
            c->set->hooks->on_gone(c->set->owner, r);
        free_req(r);
    }
    c->head = c->tail = NULL;
    c->pending = 0;
    if (c->cur)
        free_req(c->cur);
    c->cur = NULL;
    uncharge_body(c);
    free(c->expect);
    c->expect = NULL;
    free(c->coding);
    c->coding = NULL;
}

static void on_closed(uv_handle_t *h)
{
    struct http_conn *c = h->data;
    c->closed = true;
    if (c->probe_only)
        c->set->probes--;
    drop_requests(c);
    if (c->inflight == 0)
        free_conn(c);
}

static void http_close(struct http_conn *c)
{
    if (c->closing)
        return;
    c->closing = true;
    uv_read_stop(&c->h.stream);
    uv_close(&c->h.handle, on_closed);
}

/* ---- ending politely: half-close once all is written, then read to the peer's end --------- */

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
        http_close(st->data);
}

static void on_half_closed(uv_shutdown_t *req, int status)
{
    struct http_conn *c = req->data;
    c->inflight--;
    if (c->closed && c->inflight == 0) {
        free_conn(c);
        return;
    }
    if (c->closing)
        return;
    if (status < 0 || uv_read_start(&c->h.stream, on_discard_alloc, on_discard_read))
        http_close(c);
}

static void finish_if_done(struct http_conn *c)
{
    bool ending = c->close_after || (c->set->stopping && !c->cur);
    if (!ending || c->pending || c->inflight || c->lingering || c->closing)
        return;
    c->lingering = true;
    c->linger_until = now_ms(c) + LINGER_MS;
    uv_read_stop(&c->h.stream);
    c->reading = false;
    c->shutdown.data = c;
    if (uv_shutdown(&c->shutdown, &c->h.stream, on_half_closed) == 0)
        c->inflight++;
    else
        http_close(c);
}

/* ---- writing ------------------------------------------------------------------------------- */

static void update_reading(struct http_conn *c);

/* A write of c's ended with status: it no longer holds c. */
static void written(struct http_conn *c, int status)
{
    c->inflight--;
    if (c->closed && c->inflight == 0) {
        free_conn(c);
        return;
    }
    c->last_active = now_ms(c);
    if (status < 0) {
        http_close(c);
        return;
    }
    update_reading(c);
    finish_if_done(c);
}

static void free_all(uint8_t **data, unsigned count)
{
    for (unsigned i = 0; i < count; i++)
        free(data[i]);
}

static void on_written(uv_write_t *req, int status)
{
    struct write_req *w = (struct write_req *)req;
    struct http_conn *c = w->c;
    free_all(w->data, w->count);
    free(w);
    written(c, status);
}

/* Writes count buffers (taking them) to c in one write: what the socket takes at once is
 * written there, the rest queued. Either way it may be called while a request is being parsed
 * (100 Continue): whatever follows a write that ends at once is left to the caller. */
static void write_owned_v(struct http_conn *c, uint8_t **data, const size_t *len, unsigned count)
{
    uv_buf_t small[16], *bufs = count <= 16 ? small : malloc(count * sizeof *bufs);
    bool writable = !c->closing && !c->lingering;
    unsigned n = count;
    for (unsigned i = 0; bufs && i < count; i++)
        bufs[i] = uv_buf_init((char *)data[i], (unsigned)len[i]);
    /* The request is had first: once part of an answer is out, the rest must follow. */
    struct write_req *w = writable && bufs ? malloc(sizeof *w + count * sizeof w->data[0]) : NULL;
    int rc = w ? flush_write_now(&c->h.stream, bufs, &n) : UV_ENOMEM;
    if (rc == 0 && n == 0) { /* the callers see to reading and ending (flush_answers) */
        free_all(data, count);
        free(w);
        c->last_active = now_ms(c);
    } else if (rc == 0) {
        w->c = c;
        w->count = count;
        memcpy(w->data, data, count * sizeof *data);
        c->inflight++;
        rc = uv_write(&w->req, &c->h.stream, bufs, n, on_written); /* copies bufs */
        if (rc < 0) {
            c->inflight--;
            free(w);
        }
    } else {
        free(w);
    }
    if (bufs != small)
        free(bufs);
    if (rc < 0) {
        free_all(data, count);
        if (writable)
            http_close(c);
    }
}

static void write_owned(struct http_conn *c, uint8_t *data, size_t len)
{
    write_owned_v(c, &data, &len, 1);
}

const char *http_target_path(const char *url, size_t *len)
{
    if (!url) {
        *len = 1;
        return "/";
    }
    size_t scheme = !strncasecmp(url, "http://", 7) ? 7 : !strncasecmp(url, "https://", 8) ? 8 : 0;
    if (scheme)
        url += scheme + strcspn(url + scheme, "/?#");
    *len = strcspn(url, "?#");
    return url;
}

static bool probe_url(const struct http_req *r)
{
    size_t n;
    const char *path = http_target_path(r->url, &n);
    return (n == 8 && !memcmp(path, "/healthz", 8)) || (n == 7 && !memcmp(path, "/readyz", 7));
}

/* A health probe answered 200: a balancer asks every second or two, and so does a liveness
 * probe, which would drown the traffic in the log. Those are logged at debug level only; a
 * probe answered otherwise (503 while preloading or draining) is news, and logged. */
static bool quiet_probe(const struct http_req *r)
{
    return r->status == 200 && probe_url(r);
}

static void access_log(const struct http_req *r, uint64_t now_us)
{
    enum log_level level = quiet_probe(r) ? LOG_DEBUG : LOG_INFO;
    if (!log_enabled(level))
        return;
    char url[260], path[600];
    snprintf(url, sizeof url, "%.*s", (int)(r->url_len > 256 ? 256 : r->url_len),
             r->url ? r->url : "");
    /* Behind a balancer the peer is the balancer: fwd= is the client it names (its last
     * X-Forwarded-For, the one it added). */
    char fwd[224] = "";
    if (r->forwarded_for) {
        char v[100], quoted[208];
        snprintf(v, sizeof v, "%s", r->forwarded_for);
        snprintf(fwd, sizeof fwd, " fwd=%s", log_value(quoted, sizeof quoted, v));
    }
    log_access(level, "proto=http peer=%s%s method=%s path=%s status=%d bytes=%zu us=%llu",
               r->c->peer, fwd, r->method[0] ? r->method : "-",
               log_value(path, sizeof path, url[0] ? url : "-"), r->status, r->body_bytes,
               (unsigned long long)(now_us - r->started_us));
}

/* Sends the 100 Continue the current request waits for. */
static void send_continue(struct http_conn *c)
{
    static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
    uint8_t *b = malloc(sizeof cont - 1);
    if (b) {
        memcpy(b, cont, sizeof cont - 1);
        write_owned(c, b, sizeof cont - 1);
    }
    c->continue_due = false;
}

/* Writes the answers at the head of the queue, in order, that are ready: in one write, so
 * pipelined answers finished in one loop iteration cost one system call. */
static void flush_answers(struct http_conn *c)
{
    enum { BATCH = 64 }; /* buffers per write: a head, and a body when it was not copied */
    uint64_t now_us = uv_hrtime() / 1000;
    while (c->head && c->head->answered) {
        uint8_t *data[BATCH];
        size_t len[BATCH];
        unsigned n = 0;
        while (n + 2 <= BATCH && c->head && c->head->answered) {
            struct http_req *r = c->head;
            c->head = r->next;
            if (!c->head)
                c->tail = NULL;
            c->pending--;
            access_log(r, now_us);
            data[n] = r->out;
            len[n++] = r->out_len;
            if (r->out_body) {
                data[n] = r->out_body;
                len[n++] = r->out_body_len;
            }
            r->out = r->out_body = NULL;
            free_req(r);
        }
        write_owned_v(c, data, len, n);
    }
    if (c->continue_due && !c->head && !c->closing)
        send_continue(c); /* the answers before it are out: the request being read may go on */
    update_reading(c);
    finish_if_done(c);
}

/* flush_set's callback: the connection's answers that are ready, written. */
static void on_flush(struct flush_node *n)
{
    flush_answers((struct http_conn *)((char *)n - offsetof(struct http_conn, ready)));
}

/* Whether r's answer is the connection's last: r asked for it or broke a limit, or the daemon
 * is draining and nothing is read after r. */
static bool last_answer(const struct http_req *r)
{
    const struct http_conn *c = r->c;
    return r->close || (c->set->stopping && !r->next && !c->cur && c->in_off == c->in_len);
}

/* Appends n bytes at *p if they fit before end; returns false (and writes nothing) if not. */
static bool add(char **p, const char *end, const char *s, size_t n)
{
    if ((size_t)(end - *p) < n)
        return false;
    memcpy(*p, s, n);
    *p += n;
    return true;
}

static bool add_str(char **p, const char *end, const char *s)
{
    return add(p, end, s, strlen(s));
}

static bool add_uint(char **p, const char *end, uint64_t v)
{
    char b[24];
    int n = 0;
    do {
        b[23 - n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return add(p, end, b + 24 - n, (size_t)n);
}

/* The status line and headers every answer carries, then the caller's, into buf; the length,
 * or -1 if cap is too small. No Content-Length on 204 and 304 (RFC 9110 8.6: a 304's would
 * have to be the 200's, which is not known). Without printf: it runs for every answer. */
static int head_of(const struct http_req *r, int status, const char *type, const char *headers,
                   size_t len, char *buf, size_t cap)
{
    char *p = buf;
    const char *end = buf + cap;
    bool close = last_answer(r);
    bool ok = add_str(&p, end, "HTTP/1.1 ") && add_uint(&p, end, (uint64_t)status) &&
              add(&p, end, " ", 1) && add_str(&p, end, http_reason(status)) &&
              add_str(&p, end, "\r\nServer: skeld\r\n") && add_str(&p, end, r->c->set->node_header);
    if (ok && status != 204 && status != 304)
        ok = add_str(&p, end, "Content-Length: ") && add_uint(&p, end, len) &&
             add(&p, end, "\r\n", 2);
    if (ok && type)
        ok =
            add_str(&p, end, "Content-Type: ") && add_str(&p, end, type) && add(&p, end, "\r\n", 2);
    if (ok && headers)
        ok = add_str(&p, end, headers);
    if (ok && (close || r->http10))
        ok = add_str(&p, end, close ? "Connection: close\r\n" : "Connection: keep-alive\r\n");
    ok = ok && add(&p, end, "\r\n", 2);
    return ok ? (int)(p - buf) : -1;
}

/* Answers r with its head and either a copy of body or body itself (owned, then freed once
 * written). */
static void respond(struct http_req *r, int status, const char *content_type, const char *headers,
                    const void *body, uint8_t *owned, size_t len)
{
    if (r->answered) {
        free(owned);
        return;
    }
    bool with_body = r->verb != HTTP_VERB_HEAD && status != 304 && status != 204;
    size_t extra = headers ? strlen(headers) : 0;
    size_t cap = 256 + (content_type ? strlen(content_type) : 0) + extra;
    size_t copied = with_body && !owned ? len : 0;
    int n = -1;
    r->out = malloc(cap + copied);
    if (r->out)
        n = head_of(r, status, content_type, headers, len, (char *)r->out, cap);
    if (n < 0) {
        free(r->out);
        r->out = NULL;
        free(owned);
        r->c->close_after = r->close = true;
        r->out_len = 0;
    } else {
        if (copied)
            memcpy(r->out + n, body, copied);
        r->out_len = (size_t)n + copied;
        if (with_body && owned) {
            r->out_body = owned;
            r->out_body_len = len;
        } else {
            free(owned);
        }
    }
    r->status = status;
    r->body_bytes = with_body ? len : 0;
    r->answered = true;
    flush_schedule(&r->c->set->flush, &r->c->ready);
}

void http_respond(struct http_req *r, int status, const char *content_type, const char *headers,
                  const void *body, size_t len)
{
    respond(r, status, content_type, headers, body, NULL, len);
}

void http_respond_owned(struct http_req *r, int status, const char *content_type,
                        const char *headers, uint8_t *body, size_t len)
{
    respond(r, status, content_type, headers, NULL, body, len);
}

const char *http_common_headers(const struct config *cfg, const char *extra, char *buf, size_t cap)
{
    const char *origin = cfg->cors_origin;
    snprintf(buf, cap,
             "%s%s%sX-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n%s",
             origin ? "Access-Control-Allow-Origin: " : "", origin ? origin : "",
             origin ? "\r\nAccess-Control-Expose-Headers: ETag, Location, Retry-After, "
                      "X-Skeld-Node\r\nVary: Origin\r\n"
                    : "",
             extra ? extra : "");
    return buf;
}

void http_error(struct http_req *r, int status, const char *headers, const char *fmt, ...)
{
    char msg[512], body[3200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char quoted[6 * sizeof msg + 3]; /* room for every byte escaped as \u00XX */
    skp_json_quote(quoted, sizeof quoted, msg);
    int n = snprintf(body, sizeof body, "{\"error\":\"%s\",\"message\":%s}\n", http_reason(status),
                     quoted);
    log_msg(LOG_DEBUG, "http %s: %d %s", r->url ? r->url : "", status, msg);
    /* an error is a statement about now: no cache (a CDN would keep a 404 for an upload's
     * URL heuristically: RFC 9110 15.1) */
    char all[1100];
    snprintf(all, sizeof all, "Cache-Control: no-store\r\n%s", headers ? headers : "");
    http_respond(r, status, "application/json", all, body, (size_t)n);
}

/* ---- parsing ------------------------------------------------------------------------------- */

static struct http_conn *conn_of(http_parser *p)
{
    return p->data;
}

/* A limit was hit inside a callback: the parser stops; the request is answered with status. */
static int fail(struct http_conn *c, int status)
{
    c->fail_status = status;
    return -1;
}

static int fail_why(struct http_conn *c, int status, const char *why)
{
    c->fail_why = why;
    return fail(c, status);
}

/* The bytes held for the body being read count against --max-input-mb, with the binary
 * connections' input buffers: a thousand slow uploads cannot hold a thousand bodies. The
 * charge ends when the request is whole (handed over) or dropped. */
static bool charge_body(struct http_conn *c, size_t cap)
{
    struct conn_set *in = c->set->peer;
    if (!in)
        return true;
    size_t budget = (size_t)c->set->cfg->max_input_mb << 20;
    if (in->in_bytes - c->body_cap + cap > budget)
        return false;
    in->in_bytes = in->in_bytes - c->body_cap + cap;
    return true;
}

static void uncharge_body(struct http_conn *c)
{
    if (c->set->peer)
        c->set->peer->in_bytes -= c->body_cap;
    c->body_cap = 0;
}

static int append(char **dst, size_t *len, const char *at, size_t n, size_t max)
{
    if (*len + n > max)
        return -1;
    char *b = realloc(*dst, *len + n + 1);
    if (!b)
        return -1;
    memcpy(b + *len, at, n);
    *len += n;
    b[*len] = 0;
    *dst = b;
    return 0;
}

static int on_message_begin(http_parser *p)
{
    struct http_conn *c = conn_of(p);
    c->cur = calloc(1, sizeof *c->cur);
    if (!c->cur)
        return fail(c, 500);
    c->cur->c = c;
    c->cur->started_us = uv_hrtime() / 1000;
    c->req_since = now_ms(c);
    c->header_bytes = c->header_count = 0;
    c->in_value = false;
    c->field_len = 0;
    c->value = NULL;
    c->hosts = 0;
    c->headers_done = c->continue_due = false;
    uncharge_body(c);
    return 0;
}

static enum http_verb verb_of(unsigned m);

static int on_url(http_parser *p, const char *at, size_t n)
{
    struct http_conn *c = conn_of(p);
    /* the method is known from here: a HEAD refused before its headers end gets no body, and
     * the access line of a request refused in its headers (431) names its method */
    c->cur->verb = verb_of(p->method);
    snprintf(c->cur->method, sizeof c->cur->method, "%s",
             http_method_str((enum http_method)p->method));
    return append(&c->cur->url, &c->cur->url_len, at, n, MAX_URL) ? fail(c, 414) : 0;
}

static int on_header_field(http_parser *p, const char *at, size_t n)
{
    struct http_conn *c = conn_of(p);
    if ((c->header_bytes += n) > MAX_HEADER_BYTES)
        return fail(c, 431);
    /* RFC 9112 5.1: no whitespace between a field name and its colon, answered 400. The
     * parser would still read "Transfer-Encoding :" as the coding, which skeld's own checks
     * (the 501, the Host count) would not see. */
    if (memchr(at, ' ', n) || memchr(at, '\t', n))
        return fail_why(c, 400, "whitespace between a header field name and its colon");
    /* a chunked body's trailer: never merged into the headers (RFC 9110 6.5.1) */
    if (c->headers_done)
        return 0;
    if (c->in_value || !c->header_count) { /* a new field */
        if (++c->header_count > MAX_HEADERS)
            return fail(c, 431);
        c->in_value = false;
        c->field_len = 0;
        c->value = NULL;
    }
    for (size_t i = 0; i < n && c->field_len + 1 < sizeof c->field; i++)
        c->field[c->field_len++] = (char)(at[i] >= 'A' && at[i] <= 'Z' ? at[i] + 32 : at[i]);
    c->field[c->field_len] = 0;
    return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t n)
{
    struct http_conn *c = conn_of(p);
    if ((c->header_bytes += n) > MAX_HEADER_BYTES)
        return fail(c, 431);
    if (c->headers_done)
        return 0;
    if (!c->in_value) {
        c->in_value = true;
        c->hosts += !strcmp(c->field, "host");
        struct http_req *r = c->cur;
        c->value = !strcmp(c->field, "if-none-match")       ? &r->if_none_match
                   : !strcmp(c->field, "authorization")     ? &r->authorization
                   : !strcmp(c->field, "cookie")            ? &r->cookie
                   : !strcmp(c->field, "origin")            ? &r->origin
                   : !strcmp(c->field, "x-forwarded-for")   ? &r->forwarded_for
                   : !strcmp(c->field, "expect")            ? &c->expect
                   : !strcmp(c->field, "transfer-encoding") ? &c->coding
                                                            : NULL;
        /* A repeated list header is one list (RFC 9110 5.3): "gzip" then "chunked" is
         * "gzip, chunked" (a 501), two If-None-Match lines are both matched. Of the others
         * the last one counts. */
        bool list =
            c->value == &r->if_none_match || c->value == &c->coding || c->value == &r->cookie;
        if (c->value && *c->value && list) {
            size_t len = strlen(*c->value);
            const char *sep = c->value == &r->cookie ? "; " : ", ";
            if (append(c->value, &len, sep, 2, MAX_HEADER_BYTES))
                return fail(c, 431);
        } else if (c->value && *c->value) {
            free(*c->value);
            *c->value = NULL;
        }
    }
    if (!c->value)
        return 0;
    size_t len = *c->value ? strlen(*c->value) : 0;
    return append(c->value, &len, at, n, MAX_HEADER_BYTES) ? fail(c, 431) : 0;
}

static enum http_verb verb_of(unsigned m)
{
    switch (m) {
    case HTTP_GET: return HTTP_VERB_GET;
    case HTTP_HEAD: return HTTP_VERB_HEAD;
    case HTTP_POST: return HTTP_VERB_POST;
    case HTTP_PUT: return HTTP_VERB_PUT;
    case HTTP_DELETE: return HTTP_VERB_DELETE;
    case HTTP_OPTIONS: return HTTP_VERB_OPTIONS;
    default: return HTTP_VERB_OTHER;
    }
}

static uint64_t max_body(const struct http_conn *c)
{
    return (uint64_t)c->set->cfg->max_skf_mb << 20;
}

/* A field value without the spaces and tabs around it (RFC 9110 5.5), which the parser keeps
 * at its end. */
static void trim_value(char *v)
{
    if (!v)
        return;
    size_t len = strlen(v), lead = strspn(v, " \t");
    while (len > lead && (v[len - 1] == ' ' || v[len - 1] == '\t'))
        len--;
    memmove(v, v + lead, len - lead);
    v[len - lead] = 0;
}

static int on_headers_complete(http_parser *p)
{
    struct http_conn *c = conn_of(p);
    struct http_req *r = c->cur;
    c->headers_done = true;
    char *values[] = {r->if_none_match, r->authorization, r->cookie, r->origin,
                      r->forwarded_for, c->expect,        c->coding};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++)
        trim_value(values[i]);
    r->verb = verb_of(p->method);
    snprintf(r->method, sizeof r->method, "%s", http_method_str((enum http_method)p->method));
    /* HTTP/1.x only: an HTTP/2.0 request line or a bare one (0.9) would be answered in a
     * version the client did not speak (RFC 9112 2.3, RFC 9110 15.6.6) */
    if (p->http_major != 1)
        return fail(c, 505);
    /* RFC 9112 3.2: a server answers 400 to an HTTP/1.1 request without exactly one Host. */
    if (p->http_major == 1 && p->http_minor >= 1 && c->hosts != 1)
        return fail_why(c, 400,
                        c->hosts ? "more than one Host header"
                                 : "an HTTP/1.1 request needs a Host header (RFC 9112 3.2)");
    /* RFC 9112 6.1: a coding the server does not know is a 501; chunked is the one it does */
    if (c->coding && strcasecmp(c->coding, "chunked"))
        return fail_why(c, 501, "only Transfer-Encoding: chunked is supported");
    if ((p->flags & F_CONTENTLENGTH) && p->content_length > max_body(c))
        return fail(c, 413);
    bool body = (p->flags & F_CHUNKED) || p->content_length > 0;
    int refused = body && c->set->hooks->on_head ? c->set->hooks->on_head(c->set->owner, r) : 0;
    if (refused)
        return fail_why(c, refused, "send Authorization: Bearer TOKEN (before the body)");
    /* The client waits for this before sending the body (an HTTP/1.0 client never asks: RFC
     * 9110 10.1.1). An interim answer may not overtake the answers still due before it, so
     * it then waits for them (flush_answers). */
    bool http11 = p->http_major > 1 || (p->http_major == 1 && p->http_minor >= 1);
    if (body && http11 && c->expect && !strcasecmp(c->expect, "100-continue")) {
        c->continue_due = true;
        if (!c->head)
            send_continue(c);
    }
    return 0;
}

static int on_body(http_parser *p, const char *at, size_t n)
{
    struct http_conn *c = conn_of(p);
    struct http_req *r = c->cur;
    if (r->body_len + n > max_body(c))
        return fail(c, 413);
    if (r->body_len + n > c->body_cap) {
        size_t cap = c->body_cap ? c->body_cap : 65536;
        while (cap < r->body_len + n)
            cap *= 2;
        if (!charge_body(c, cap))
            return fail_why(c, 503,
                            "the input buffers of all connections are full "
                            "(--max-input-mb): try again later");
        uint8_t *b = realloc(r->body, cap);
        if (!b) {
            charge_body(c, c->body_cap); /* back to what is held */
            return fail(c, 500);
        }
        r->body = b;
        c->body_cap = cap;
    }
    memcpy(r->body + r->body_len, at, n);
    r->body_len += n;
    return 0;
}

static int on_message_complete(http_parser *p)
{
    struct http_conn *c = conn_of(p);
    c->continue_due = false; /* the body came without it */
    c->cur->http10 = p->http_major == 1 && p->http_minor == 0;
    if (!http_should_keep_alive(p))
        c->close_after = c->cur->close = true;
    http_parser_pause(p, 1); /* one request at a time: see parse_input */
    return 0;
}

static const http_parser_settings settings = {
    .on_message_begin = on_message_begin,
    .on_url = on_url,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

/* The request just parsed joins the queue of answers due and goes to the owner. */
static void deliver(struct http_conn *c)
{
    struct http_req *r = c->cur;
    c->cur = NULL;
    uncharge_body(c);
    free(c->expect);
    c->expect = NULL;
    free(c->coding);
    c->coding = NULL;
    /* A request that began arriving before the drain (an upload under way when the grace
     * ended) is answered: refused after its whole body, it could not be sent elsewhere. */
    bool begun_before =
        c->set->stopping &&
        ((c->req_since && c->req_since <= c->set->stop_started) || c->part_way_at_drain == 0);
    c->req_since = 0;
    if (c->part_way_at_drain >= 0)
        c->part_way_at_drain--;
    if (c->tail)
        c->tail->next = r;
    else
        c->head = r;
    c->tail = r;
    c->pending++;
    c->requests++;
    bool probe = probe_url(r) && (r->verb == HTTP_VERB_GET || r->verb == HTTP_VERB_HEAD);
    if (c->probe_only) /* one request only: it holds a place past the limit */
        c->close_after = r->close = true;
    if ((c->set->stopping && !begun_before) || (c->probe_only && !probe)) {
        char h[768];
        c->set->hooks->on_refused(c->set->owner, 503);
        http_error(r, 503, http_common_headers(c->set->cfg, "Retry-After: 1\r\n", h, sizeof h),
                   "%s", c->set->stopping ? "shutting down" : conn_too_many);
    } else {
        c->set->hooks->on_request(c->set->owner, r);
    }
}

/* A request that broke a limit or the syntax: answered (after those before it), then the end. */
static const char *reject_reason(int status)
{
    switch (status) {
    case 408: return "the request did not arrive in time (--frame-timeout)";
    case 413: return "the body is larger than --max-skf-mb";
    case 414: return "the URL is longer than 8 KiB";
    case 431: return "the headers are larger than 16 KiB or more than 100";
    case 500: return "out of memory";
    case 501: return "an unknown method: skeld takes GET, HEAD, POST, PUT, DELETE and OPTIONS";
    case 505: return "skeld speaks HTTP/1.1 and HTTP/1.0";
    case 503: return "the server is at its connection limit (--max-connections) or shutting down";
    default: return "malformed HTTP request";
    }
}

/* Answers status (why, or the status's usual reason) to the request being read, or to none,
 * and ends the connection after it. */
static void reject(struct http_conn *c, int status, const char *why)
{
    struct http_req *r = c->cur;
    c->cur = NULL;
    uncharge_body(c);
    if (!r && !(r = calloc(1, sizeof *r))) {
        http_close(c);
        return;
    }
    r->c = c;
    if (!r->started_us)
        r->started_us = uv_hrtime() / 1000;
    if (!r->method[0])
        snprintf(r->method, sizeof r->method, "-");
    if (c->tail)
        c->tail->next = r;
    else
        c->head = r;
    c->tail = r;
    c->pending++;
    c->close_after = r->close = true;
    uv_read_stop(&c->h.stream);
    c->reading = false;
    char h[768];
    c->set->hooks->on_refused(c->set->owner, status);
    http_error(r, status,
               http_common_headers(c->set->cfg,
                                   status == 503   ? "Retry-After: 1\r\n"
                                   : status == 401 ? "WWW-Authenticate: Bearer\r\n"
                                                   : NULL,
                                   h, sizeof h),
               "%s", why ? why : reject_reason(status));
}

static void parse_input(struct http_conn *c)
{
    if (c->parsing) /* an answer given from the loop below: the loop goes on when it returns */
        return;
    c->parsing = true;
    while (c->in_off < c->in_len && !c->closing && !c->close_after && !c->lingering &&
           c->pending < (unsigned)c->set->cfg->max_inflight) {
        size_t n = http_parser_execute(&c->parser, &settings, (const char *)c->in + c->in_off,
                                       c->in_len - c->in_off);
        c->in_off += n;
        enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);
        if (e == HPE_PAUSED) {
            http_parser_pause(&c->parser, 0);
            deliver(c);
            continue;
        }
        if (e != HPE_OK) {
            /* a method the parser does not know is not malformed: RFC 9110 says 501 */
            int status = c->fail_status ? c->fail_status : e == HPE_INVALID_METHOD ? 501 : 400;
            c->parsing = false;
            reject(c, status, c->fail_why);
            return;
        }
    }
    c->parsing = false;
    if (c->in_off == c->in_len)
        c->in_off = c->in_len = 0;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    struct http_conn *c = h->data;
    (void)suggested;
    if (c->in_off) { /* keep what a paused parse left, at the front */
        memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
        c->in_len -= c->in_off;
        c->in_off = 0;
    }
    *buf = c->in_len < IN_SIZE
               ? uv_buf_init((char *)c->in + c->in_len, (unsigned)(IN_SIZE - c->in_len))
               : uv_buf_init(NULL, 0);
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    struct http_conn *c = st->data;
    (void)buf;
    if (nread == UV_EOF) {
        /* The client is done sending: what it asked for is still answered. */
        http_parser_execute(&c->parser, &settings, NULL, 0);
        c->close_after = true;
        uv_read_stop(&c->h.stream);
        c->reading = false;
        if (c->cur) { /* a request cut short */
            free_req(c->cur);
            c->cur = NULL;
        }
        finish_if_done(c);
        return;
    }
    if (nread == UV_ENOBUFS) { /* the input buffer is full: read again once it drains */
        uv_read_stop(&c->h.stream);
        c->reading = false;
        return;
    }
    if (nread < 0) {
        http_close(c);
        return;
    }
    uint64_t seen = c->requests;
    c->in_len += (size_t)nread;
    parse_input(c);
    /* Only bytes of a request are activity: the parser skips CRLFs between requests without
     * starting one, and a client trickling them would otherwise outlive --idle-timeout and
     * --frame-timeout both (and hold a --max-connections place, or a probe's). */
    if (c->cur || c->requests != seen)
        c->last_active = now_ms(c);
    update_reading(c);
    finish_if_done(c);
}

/* Reading pauses while --max-inflight requests await answers or --out-high-water bytes of
 * answers are queued, and resumes below --out-low-water. */
static void update_reading(struct http_conn *c)
{
    if (c->closing || c->lingering || c->close_after)
        return;
    size_t queued = uv_stream_get_write_queue_size(&c->h.stream);
    bool full = c->pending >= (unsigned)c->set->cfg->max_inflight;
    if (c->reading && (full || queued > (size_t)c->set->cfg->out_high_water)) {
        uv_read_stop(&c->h.stream);
        c->reading = false;
    } else if (!c->reading && !full && queued <= (size_t)c->set->cfg->out_low_water) {
        parse_input(c); /* requests already read come first */
        if (!c->reading && !c->parsing && !c->closing && !c->lingering && !c->close_after &&
            c->pending < (unsigned)c->set->cfg->max_inflight)
            c->reading = uv_read_start(&c->h.stream, on_alloc, on_read) == 0;
    }
}

/* ---- the set ------------------------------------------------------------------------------- */

void http_set_init(struct http_set *set, uv_loop_t *loop, const struct config *cfg,
                   const struct http_hooks *hooks, void *owner, struct conn_set *peer)
{
    memset(set, 0, sizeof *set);
    set->loop = loop;
    set->cfg = cfg;
    set->hooks = hooks;
    set->owner = owner;
    set->peer = peer;
    if (cfg->node_name) /* validated by config_check: no quoting needed */
        snprintf(set->node_header, sizeof set->node_header, "X-Skeld-Node: %s\r\n", cfg->node_name);
    flush_set_init(&set->flush, loop, on_flush);
}

void http_set_close(struct http_set *set)
{
    flush_set_close(&set->flush);
}

static struct http_conn *http_conn_of(struct conn_link *k)
{
    return (struct http_conn *)(void *)((char *)k - offsetof(struct http_conn, link));
}

void http_accept(struct http_set *set, uv_stream_t *listener)
{
    struct http_conn *c = calloc(1, sizeof *c);
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
    c->part_way_at_drain = -1;
    c->in = malloc(IN_SIZE);
    http_parser_init(&c->parser, HTTP_REQUEST);
    c->parser.data = c;
    c->last_active = uv_now(set->loop);
    conn_list_add(&set->list, &c->link);
    if (!c->in || uv_accept(listener, &c->h.stream)) {
        http_close(c);
        return;
    }
    conn_peer_name(&c->h.stream, c->peer, sizeof c->peer);
    if (tcp)
        uv_tcp_nodelay(&c->h.tcp, 1);
    const char *why = conn_list_refusal(&set->list, set->cfg, set->stopping, uv_now(set->loop));
    if (why == conn_too_many && set->probes < PROBE_ROOM) { /* one request, then the end */
        set->probes++;
        c->probe_only = true;
        why = NULL;
    }
    if (why) {
        reject(c, 503, why);
        return;
    }
    c->reading = uv_read_start(&c->h.stream, on_alloc, on_read) == 0;
}

/* Requests begun and whole in the bytes request_part_way reads. */
struct drain_count {
    int64_t begun, whole;
};

static int request_begun(http_parser *p)
{
    ((struct drain_count *)p->data)->begun++;
    return 0;
}

static int request_whole(http_parser *p)
{
    ((struct drain_count *)p->data)->whole++;
    return 0;
}

/* Whether c's bytes read but not parsed yet end part-way into a request: then the count of
 * whole requests before it there (they were not begun, and are refused as the binary
 * protocol's whole frames are), else -1. Told by a parser of their own, as the connection's
 * stays where it paused. */
static int64_t request_part_way(const struct http_conn *c)
{
    static const http_parser_settings counted = {.on_message_begin = request_begun,
                                                 .on_message_complete = request_whole};
    if (c->cur || c->in_off == c->in_len)
        return -1;
    struct drain_count n = {0, 0};
    http_parser p;
    http_parser_init(&p, HTTP_REQUEST);
    p.data = &n;
    http_parser_execute(&p, &counted, (const char *)c->in + c->in_off, c->in_len - c->in_off);
    return n.begun > n.whole ? n.whole : -1;
}

void http_set_drain(struct http_set *set)
{
    set->stop_started = uv_now(set->loop);
    set->stop_deadline = set->stop_started + SHUTDOWN_MS;
    for (struct conn_link *k = set->list.head, *n; k; k = n) {
        n = k->next;
        struct http_conn *c = http_conn_of(k);
        c->part_way_at_drain = c->close_after ? -1 : request_part_way(c);
        finish_if_done(c);
    }
}

void http_set_sweep(struct http_set *set, uint64_t now)
{
    uint64_t idle_ms = (uint64_t)set->cfg->idle_timeout * 1000;
    uint64_t frame_ms = (uint64_t)set->cfg->frame_timeout * 1000;
    for (struct conn_link *k = set->list.head, *n; k; k = n) {
        n = k->next;
        struct http_conn *c = http_conn_of(k);
        if (c->closing)
            continue;
        if ((c->lingering && now > c->linger_until) ||
            (set->stopping && !c->pending && now > set->stop_deadline)) {
            http_close(c);
        } else if (c->req_since && !c->close_after && now - c->req_since > frame_ms) {
            reject(c, 408, NULL); /* headers or body too slow: a trickle is not activity */
        } else if (idle_ms && !c->pending && !c->req_since && now - c->last_active > idle_ms) {
            http_close(c);
        }
    }
}

void http_set_close_all(struct http_set *set)
{
    for (struct conn_link *k = set->list.head; k; k = k->next)
        http_close(http_conn_of(k));
}
