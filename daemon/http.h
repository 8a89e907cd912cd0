/* HTTP/1.1 connections (proto/HTTP.md): one per accepted stream on an http:// listener. The
 * bytes go through Debian's http-parser; each whole request (method, URL, the headers skeld
 * reads, body) is handed to the owner's hook, and the owner answers it with http_respond() at
 * any later time. Answers go out in request order (pipelining), keep-alive is the default,
 * bodies may be chunked, `Expect: 100-continue` is honoured, and HEAD answers carry no body.
 * The limits of proto/HTTP.md (URL, headers, body, time) are enforced here with their status.
 * It knows nothing of what a request means.
 *
 * Loop thread only. */
#ifndef SKELD_HTTP_H
#define SKELD_HTTP_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "config.h"
#include "conn.h"
#include "flush.h"

struct http_conn;

enum http_verb {
    HTTP_VERB_GET,
    HTTP_VERB_HEAD,
    HTTP_VERB_POST,
    HTTP_VERB_PUT,
    HTTP_VERB_DELETE,
    HTTP_VERB_OPTIONS,
    HTTP_VERB_OTHER
};

/* One request, from its parse to its answer. Owned by the connection; the owner may keep
 * the pointer until it calls http_respond() (or until on_gone says the client left). */
struct http_req {
    struct http_conn *c;
    enum http_verb verb;
    char method[12];
    char *url; /* path and query, as sent (owned) */
    size_t url_len;
    char *if_none_match, *authorization, *origin; /* the headers skeld reads; NULL if absent */
    char *cookie;        /* the preview page's token (skeld_token), for the pictures it loads */
    char *forwarded_for; /* X-Forwarded-For, set by a load balancer: for the access log */
    uint8_t *body;       /* the request body (owned), or NULL */
    size_t body_len;
    uint64_t started_us; /* when its first byte arrived: for the access log */
    bool http10;         /* an HTTP/1.0 request: keep-alive is said, not assumed */
    bool close;          /* the connection ends after this answer */
    void *ctx;           /* the owner's */
    /* the answer */
    bool answered;
    uint8_t *out; /* status line, headers and (if copied) body, ready to write */
    size_t out_len;
    uint8_t *out_body; /* the body, when it was handed over rather than copied */
    size_t out_body_len;
    int status;
    size_t body_bytes; /* of out, for the access log */
    struct http_req *next;
};

struct http_hooks {
    /* A whole request. Answer it with http_respond(), now or later. */
    void (*on_request)(void *owner, struct http_req *r);
    /* The connection is gone before r was answered: forget r (the owner must not answer it);
     * r is freed after this returns. */
    void (*on_gone)(void *owner, struct http_req *r);
    /* A request answered by the connection layer itself (a limit, malformed, draining), for
     * the owner's counters; the owner never sees r otherwise. */
    void (*on_refused)(void *owner, int status);
    /* Optional: r's head (method, URL, headers) is whole and a body follows. Nonzero (an
     * HTTP status, 401) refuses r before its body is read or a 100 Continue sent: a client
     * without the token must not make the daemon hold --max-skf-mb for it. */
    int (*on_head)(void *owner, const struct http_req *r);
};

/* Every HTTP connection. Shares --max-connections and --max-input-mb with the binary
 * connections (peer). */
struct http_set {
    uv_loop_t *loop;
    const struct config *cfg;
    const struct http_hooks *hooks;
    void *owner;
    struct conn_set *peer; /* its input-buffer bytes are shared */
    struct conn_list list;
    struct flush_set flush; /* connections with answers to write this loop iteration */
    bool stopping;
    uint64_t stop_started, stop_deadline; /* ms: when the drain began, and its bound */
    unsigned probes;      /* connections let in past --max-connections for a health probe */
    char node_header[96]; /* "X-Skeld-Node: NAME\r\n": which node answered, behind a balancer */
};

void http_set_init(struct http_set *set, uv_loop_t *loop, const struct config *cfg,
                   const struct http_hooks *hooks, void *owner, struct conn_set *peer);

/* Accepts a connection from listener and starts reading it (refused with 503 past the
 * connection limits or while stopping). Past --max-connections alone a few are still read,
 * for one request each: a health probe (GET or HEAD /healthz or /readyz) is answered, so that
 * a busy node is not restarted by its liveness probe, and anything else gets the 503. */
void http_accept(struct http_set *set, uv_stream_t *listener);

/* Answers r: status, a Content-Type (NULL for none), extra header lines (each ending in
 * "\r\n", may be NULL), and the body (copied; not sent for HEAD, whose Content-Length is the
 * body's). Answers go out in request order. */
void http_respond(struct http_req *r, int status, const char *content_type, const char *headers,
                  const void *body, size_t len);

/* http_respond with a body the caller hands over (malloc'd; freed once written, or at once
 * if r is gone or the answer has no body): no copy of a large answer. */
void http_respond_owned(struct http_req *r, int status, const char *content_type,
                        const char *headers, uint8_t *body, size_t len);

/* The path of a request target, with its length: absolute form's authority skipped (RFC 9112
 * 3.2.2), up to the query, a fragment ('#' starts one: HTTP.md) or the end. */
const char *http_target_path(const char *url, size_t *len);

/* The headers every answer carries (HTTP.md), then extra, written to buf (returned): the CORS
 * headers when --cors-origin is set, no MIME sniffing (a JSON error naming a file's
 * "<script>" is never read as a page), no Referer to other sites (a page's URL holds the
 * armature's id). */
const char *http_common_headers(const struct config *cfg, const char *extra, char *buf, size_t cap);

/* An error answer with the JSON body {"error": reason, "message": message}. */
void http_error(struct http_req *r, int status, const char *headers, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The reason phrase of a status ("Not Found"). */
const char *http_reason(int status);

/* Shutdown: requests already read are answered, new ones get 503, and each connection ends
 * once it has nothing left to say. */
void http_set_drain(struct http_set *set);

/* Periodic sweep at now (ms): --frame-timeout for a request's headers and body (408),
 * --idle-timeout between requests, and the shutdown deadline. */
void http_set_sweep(struct http_set *set, uint64_t now);

/* Closes every connection now (startup failure). */
void http_set_close_all(struct http_set *set);

/* Writes what is ready and closes the set's own handles: the last step of a shutdown, after
 * which the loop can end. */
void http_set_close(struct http_set *set);

#endif
