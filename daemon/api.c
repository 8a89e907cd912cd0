/* The HTTP front's request layer (api.h, proto/HTTP.md). */
#include "autoconfig.h"

#include "api.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/png.h"
#include "log.h"
#include "sha256.h"
#include "skp_cli.h"
#include "skp_msg.h"
#include "skp_prom.h"
#include "work.h"
#include "www.h"

/* Bumped whenever the bytes of an answer for the same content and query change, so that
 * caches holding the old ones (ETag, result cache, CDNs) stop matching. */
/* 2: info's JSON begins with the armature's "id"; 3: PNGs from the fitted-Huffman encoder by
 * default; 4: texture positions stepped in fixed point, integer tints (pixels may differ by 1
 * in 255), POSE matrices from construct's cos/sin (last bits); 5: the PNG encoder's codes from
 * sampled counts, and sheets' repeats one cell to the left (the same pixels, other bytes); 6:
 * a 0.6/0.7 bone without visuals never takes a texture or zindex from keys, sway under a
 * parent listed after its bone, time in ms to frames as ms / 1000 * fps (SPEC.md) */
#define OUTPUT_VERSION 6

enum route { R_OTHER, R_LIST, R_UPLOAD, R_INFO, R_POSE, R_MESH, R_RENDER, R_SHEET, R_OPS };
static const char *const route_names[API_ROUTES] = {"other", "list",   "upload", "info", "pose",
                                                    "mesh",  "render", "sheet",  "ops"};
/* Every status the HTTP front answers with, the connection layer's own included: count()
 * drops one missing here, and /metrics would not show it (505 once went uncounted). */
static const int statuses[API_STATUSES] = {200, 201, 204, 304, 400, 401, 403, 404, 405,
                                           408, 413, 414, 429, 431, 500, 501, 503, 505};

/* One HTTP request on its way: its route, its armature, the job running for it. */
struct exchange {
    struct api *api;
    struct http_req *hr;
    struct request *job; /* dispatch's, while one runs */
    enum route route;
    bool files; /* under /v1/files/: the armature is a file under --root */
    /* ... file is its path, and recalled says its armature came from the path memo, not yet
     * checked against the file: the evaluation checks it (dispatch_recall_file) */
    const char *file;
    bool recalled;
    struct dispatch_file known;
    bool check_put; /* PUT /v1/armatures/{id}: the bytes must hash to want */
    uint8_t want[32];
    char *query; /* the query string (owned), read again once the armature is known */
    char *path;  /* the URL's path (owned): routing cuts it up, the access log keeps the URL */
    char etag[80];
    uint8_t key[32]; /* the answer's result-cache key (the ETag is its first half) */
};

/* ---- answers --------------------------------------------------------------------------------- */

static void count(struct api *a, enum route r, int status)
{
    for (int i = 0; i < API_STATUSES; i++)
        if (statuses[i] == status)
            a->counts[r][i]++;
}

static void free_exchange(struct exchange *ex)
{
    if (ex->hr)
        ex->hr->ctx = NULL;
    free(ex->query);
    free(ex->path);
    free(ex);
}

/* Ends ex, handing back its request to answer (answering may free it, so ex lets go first). */
static struct http_req *finish(struct exchange *ex)
{
    struct http_req *hr = ex->hr;
    free_exchange(ex);
    return hr;
}

/* The preview page's own files: what they may load (their own origin only), and no framing
 * by other sites. */
#define PAGE_POLICY                                                                                \
    "Content-Security-Policy: default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; "  \
    "base-uri 'none'; form-action 'none'\r\n"

static void reply(struct exchange *ex, int status, const char *type, const char *extra,
                  const void *body, size_t len)
{
    char headers[1024];
    count(ex->api, ex->route, status);
    http_common_headers(ex->api->cfg, extra, headers, sizeof headers);
    http_respond(finish(ex), status, type, headers, body, len);
}

static void fail(struct exchange *ex, int status, const char *extra, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void fail(struct exchange *ex, int status, const char *extra, const char *fmt, ...)
{
    char msg[400], headers[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    count(ex->api, ex->route, status);
    http_common_headers(ex->api->cfg, extra, headers, sizeof headers);
    http_error(finish(ex), status, headers, "%s", msg);
}

/* The HTTP status for a wire status. */
static int http_status_of(uint16_t st)
{
    switch (st) {
    case SKP_S_OK: return 200;
    case SKP_S_NOT_FOUND: return 404;
    case SKP_S_FORBIDDEN_PATH: return 403;
    case SKP_S_BUSY: return 429;
    case SKP_S_SHUTDOWN: return 503;
    case SKP_S_AUTH: return 401;
    case SKP_S_NO_MEMORY:
    case SKP_S_INTERNAL: return 500;
    default: return 400;
    }
}

static void fail_status(struct exchange *ex, uint16_t st, const char *msg)
{
    conn_count_refusal(ex->api->d->conns, st);
    fail(ex, http_status_of(st), st == SKP_S_BUSY ? "Retry-After: 1\r\n" : NULL, "%s", msg);
}

/* Cache-Control and ETag of an answer about content: immutable under /v1/armatures/{id}/. */
static const char *cache_headers(const struct exchange *ex, char *buf, size_t cap)
{
    /* behind --auth-token, for the browser's own cache only: "public" would let a shared
     * cache hand what the token guards to anyone (RFC 9111 3.5) */
    const char *token = ex->api->cfg->auth_token;
    snprintf(buf, cap, "Cache-Control: %s, %s\r\nETag: %s\r\n",
             token && *token ? "private" : "public",
             ex->files ? "max-age=60" : "max-age=31536000, immutable", ex->etag);
    return buf;
}

static bool any_will_do(const struct exchange *ex);

static void reply_content(struct exchange *ex, const char *type, const void *body, size_t len)
{
    char h[256];
    if (any_will_do(ex))
        reply(ex, 304, NULL, cache_headers(ex, h, sizeof h), NULL, 0);
    else
        reply(ex, 200, type, cache_headers(ex, h, sizeof h), body, len);
}

/* reply_content of a body handed over (malloc'd), written without a copy. */
static void reply_content_owned(struct exchange *ex, const char *type, uint8_t *body, size_t len)
{
    if (any_will_do(ex)) {
        reply_content(ex, type, NULL, 0);
        free(body);
        return;
    }
    char h[256], headers[1024];
    count(ex->api, ex->route, 200);
    http_common_headers(ex->api->cfg, cache_headers(ex, h, sizeof h), headers, sizeof headers);
    http_respond_owned(finish(ex), 200, type, headers, body, len);
}

/* ---- keys and tags --------------------------------------------------------------------------- */

/* The bytes an answer depends on: the armature, the output version, the resource and the
 * request in its canonical encoding (so the query's spelling does not matter). */
static void write_key(struct skp_writer *w, const struct exchange *ex, const uint8_t id[32],
                      const struct skp_eval_req *m, const struct skp_render_req *rm, bool matrix)
{
    skp_write_raw(w, id, 32);
    skp_write_u32(w, OUTPUT_VERSION);
    skp_write_u8(w, (uint8_t)ex->route);
    if (matrix) /* only then: the tags of every other answer stay what they were */
        skp_write_u8(w, 1);
    if (m)
        skp_encode_eval_req(w, m);
    if (rm)
        skp_encode_render_req(w, rm);
}

/* The answer's ETag and result-cache key: the SHA-256 of all of write_key's bytes. Most
 * requests fit the stack; a longer one (animation and style names of up to 1 KiB each) is
 * written again into as large a buffer as it needs, since a key of part of it would give two
 * requests one answer. */
static int make_etag(struct exchange *ex, const uint8_t id[32], const struct skp_eval_req *m,
                     const struct skp_render_req *rm, bool matrix)
{
    uint8_t stack[8192], digest[32], *heap = NULL;
    struct skp_writer w;
    skp_writer_init(&w, stack, sizeof stack);
    write_key(&w, ex, id, m, rm, matrix);
    /* only room can be missing: the query's names were held to SKP_MAX_NAME already */
    for (size_t cap = 2 * sizeof stack; w.err == SKP_ENOSPACE && cap <= SKP_MAX_FRAME; cap *= 2) {
        uint8_t *bigger = realloc(heap, cap);
        if (!bigger)
            break;
        heap = bigger;
        skp_writer_init(&w, heap, cap);
        write_key(&w, ex, id, m, rm, matrix);
    }
    int rc = w.err ? -1 : sha256(w.buf, w.len, digest);
    free(heap);
    if (rc && w.err && w.err != SKP_ENOSPACE) { /* the query's validator lets none through */
        fail(ex, 400, NULL, "a name in the query is longer than the protocol's 1024 bytes");
        return -1;
    }
    if (rc) {
        fail(ex, 500, NULL, "out of memory");
        return -1;
    }
    memcpy(ex->key, digest, 32);
    char h[33];
    skp_hex(h, digest, 16);
    snprintf(ex->etag, sizeof ex->etag, "\"v%d-%s\"", OUTPUT_VERSION, h);
    return 0;
}

/* If-None-Match names our tag: the client has this answer already. ("*" is not enough here:
 * it matches only an answer that exists, which is known once it has been made; see
 * any_will_do.) */
static bool not_modified(const struct exchange *ex)
{
    const char *inm = ex->hr->if_none_match;
    return inm && strstr(inm, ex->etag);
}

/* If-None-Match: * (RFC 9110 13.1.2), true of any answer that exists: the request is
 * answered as usual, and a success is then a 304. */
static bool any_will_do(const struct exchange *ex)
{
    const char *inm = ex->hr->if_none_match;
    return inm && !strcmp(inm, "*");
}

/* ---- evaluation ------------------------------------------------------------------------------ */

static const char *content_of(enum route r)
{
    return r == R_RENDER ? "image/png" : "application/json";
}

/* The first picture of a RENDER reply body, or its sheet JSON. */
static bool render_part(const uint8_t *body, size_t len, bool sheet, const uint8_t **out,
                        size_t *out_len)
{
    struct skp_reader rd;
    skp_reader_init(&rd, body, len);
    uint32_t count = skp_read_u32(&rd);
    for (uint32_t i = 0; i < count && !rd.err; i++) {
        skp_read_u32(&rd);
        skp_read_u32(&rd);
        skp_read_u32(&rd);
        size_t n;
        const void *p = skp_read_bytes(&rd, &n, len);
        if (i == 0 && !sheet) {
            *out = p;
            *out_len = n;
            return p != NULL;
        }
    }
    *out = skp_read_bytes(&rd, out_len, len);
    return *out != NULL && !rd.err;
}

static void load_file(struct exchange *ex);

static void on_eval_done(void *ctx, struct dispatch_result *res)
{
    struct exchange *ex = ctx;
    ex->job = NULL;
    if (res->file_changed) {
        load_file(ex);
        return;
    }
    if (res->status) {
        fail_status(ex, res->status, res->msg);
        return;
    }
    struct rcache *results = &ex->api->d->results;
    if (ex->route == R_POSE || ex->route == R_MESH) {
        rcache_put(results, ex->key, (uint8_t)ex->route, res->body, res->len);
        uint8_t *body = res->body;
        res->body = NULL; /* taken: written as it is */
        reply_content_owned(ex, "application/json", body, res->len);
        return;
    }
    const uint8_t *part;
    size_t len;
    if (!render_part(res->body, res->len, ex->route == R_SHEET, &part, &len)) {
        fail(ex, 500, NULL, "the render's reply could not be read");
        return;
    }
    rcache_put(results, ex->key, (uint8_t)ex->route, part, len);
    reply_content(ex, content_of(ex->route), part, len);
}

/* A query that does not parse: 400, once the file of a recalled exchange is known to be there
 * (a LOAD answers first if it is not, as it did before the path memo). */
static void bad_query(struct exchange *ex, const char *msg)
{
    char said[256];
    snprintf(said, sizeof said, "%s", msg);
    skp_cli_as_query(said); /* "frame: ..." rather than "--frame: ..." */
    if (ex->recalled)
        load_file(ex);
    else
        fail(ex, 400, NULL, "%s", said);
}

/* The query as the flags of the route: pose and mesh take the evaluation flags and engine
 * options (pose also matrix), render.png and sheet.json the render flags. 0, or -1 after
 * answering (bad_query). */
static int read_query(struct exchange *ex, char *query, struct skp_cli_args *a,
                      struct skp_eval_req *m, struct skp_render_req *rm, struct skp_cli_eval *e,
                      struct skp_cli_render *r)
{
    bool render = ex->route == R_RENDER || ex->route == R_SHEET;
    char msg[256];
    uint32_t allowed = render                ? SKP_CLI_RENDER_FLAGS
                       : ex->route == R_POSE ? SKP_CLI_POSE_FLAGS
                                             : SKP_CLI_EVAL_FLAGS | SKP_CLI_OPTS_FLAGS;
    allowed &= ~SKP_CLI_BIT(SKP_CLI_HELP) & ~SKP_CLI_BIT(SKP_CLI_OUTPUT);
    if (skp_cli_query(query, allowed, a, msg, sizeof msg) ||
        skp_cli_eval_parse(a, !render, e, msg, sizeof msg) ||
        (render && skp_cli_render_parse(a, r, msg, sizeof msg))) {
        bad_query(ex, msg);
        return -1;
    }
    skp_cli_eval_req(e, m);
    if (!render)
        return 0;
    if (r->range && !(r->cols || r->rows)) {
        bad_query(ex, "frames needs sheet=COLSxROWS: one picture per answer");
        return -1;
    }
    if (ex->route == R_SHEET && !(r->cols || r->rows)) {
        bad_query(ex,
                  "sheet.json needs sheet=COLSxROWS (and frames=F0-F1 for more than one frame)");
        return -1;
    }
    if (skp_cli_render_req(r, rm, msg, sizeof msg)) {
        bad_query(ex, msg);
        return -1;
    }
    if (r->range)
        m->flags |= SKP_EVAL_RANGE;
    return 0;
}

/* The resource asked of the cached entry e (referenced by the caller for this call), query
 * being ex's, which reading cuts up. */
static void run_query(struct exchange *ex, struct cache_entry *e, char *query)
{
    if (ex->route == R_INFO) {
        dispatch_count(ex->api->d, SKP_OP_INFO_JSON);
        if (make_etag(ex, e->id, NULL, NULL, false))
            return;
        if (not_modified(ex)) {
            char h[256];
            reply(ex, 304, NULL, cache_headers(ex, h, sizeof h), NULL, 0);
            return;
        }
        struct byte_buf b = {NULL, 0, 0};
        if (work_info_json(e->arm, e->id, &b))
            fail(ex, 500, NULL, "out of memory");
        else
            reply_content(ex, "application/json", b.data, b.len);
        free(b.data);
        return;
    }
    struct skp_cli_args a;
    struct skp_cli_eval ev;
    struct skp_cli_render rv;
    struct skp_eval_req m;
    struct skp_render_req rm;
    bool render = ex->route == R_RENDER || ex->route == R_SHEET;
    if (read_query(ex, query, &a, &m, &rm, &ev, &rv))
        return;
    bool matrix = a.value[SKP_CLI_MATRIX] != NULL; /* pose only: read_query saw to it */
    if (make_etag(ex, e->id, &m, render ? &rm : NULL, matrix))
        return;
    if (ex->recalled && (not_modified(ex) || rcache_has(&ex->api->d->results, ex->key))) {
        load_file(ex); /* what the client or the cache holds stands once the file is checked */
        return;
    }
    if (not_modified(ex)) {
        char h[256];
        reply(ex, 304, NULL, cache_headers(ex, h, sizeof h), NULL, 0);
        return;
    }
    const struct rcache_item *hit = rcache_get(&ex->api->d->results, ex->key);
    if (hit) { /* answered before: from memory, nothing evaluated */
        reply_content(ex, content_of(ex->route), hit->body, hit->len);
        return;
    }
    uint16_t st;
    char why[256];
    uint8_t op = ex->route == R_POSE   ? SKP_OP_POSE
                 : ex->route == R_MESH ? SKP_OP_MESH
                                       : SKP_OP_RENDER;
    uint8_t output = ex->route == R_SHEET ? WORK_OUT_SHEET_JSON
                     : matrix             ? WORK_OUT_JSON_MATRIX
                                          : WORK_OUT_JSON;
    ex->job =
        dispatch_eval(ex->api->d, e, op, output, &m, render ? &rm : NULL,
                      ex->recalled ? &ex->known : NULL, on_eval_done, ex, &st, why, sizeof why);
    /* refused by an armature the file may no longer be: asked again of the file's */
    bool busy = st == SKP_S_BUSY || st == SKP_S_NO_MEMORY || st == SKP_S_SHUTDOWN;
    if (!ex->job && ex->recalled && !busy)
        load_file(ex);
    else if (!ex->job)
        fail_status(ex, st, why);
}

/* The resource asked of the cached entry e (referenced by the caller for this call). A
 * recalled file's query may have to be read again, after the file is loaded: a copy is read. */
static void run_resource(struct exchange *ex, struct cache_entry *e)
{
    char *query = ex->recalled ? strdup(ex->query) : ex->query;
    if (!query) {
        fail(ex, 500, NULL, "out of memory");
        return;
    }
    bool copy = query != ex->query; /* ex may end within run_query */
    run_query(ex, e, query);
    if (copy)
        free(query);
}

/* ---- armatures ------------------------------------------------------------------------------- */

static void on_file_loaded(void *ctx, struct dispatch_result *res)
{
    struct exchange *ex = ctx;
    ex->job = NULL;
    if (res->status) {
        fail_status(ex, res->status, res->msg);
        return;
    }
    struct cache *cache = ex->api->d->cache; /* run_resource may end ex */
    struct cache_entry *e = cache_get(cache, res->id);
    if (!e) {
        fail(ex, 503, "Retry-After: 1\r\n", "the armature was evicted at once: retry");
        return;
    }
    run_resource(ex, e);
    cache_unref(cache, e);
}

/* An upload answered: the info (which begins with the id), 201 with its Location. */
static void on_uploaded(void *ctx, struct dispatch_result *res)
{
    struct exchange *ex = ctx;
    ex->job = NULL;
    if (res->status) {
        fail_status(ex, res->status, res->msg);
        return;
    }
    char id[65], loc[128];
    skp_hex(id, res->id, 32); /* a PUT's bytes were checked against its URL's id before loading */
    struct cache *cache = ex->api->d->cache; /* reply ends ex */
    struct cache_entry *e = cache_get(cache, res->id);
    struct byte_buf b = {NULL, 0, 0};
    if (!e || work_info_json(e->arm, res->id, &b)) {
        fail(ex, e ? 500 : 503, NULL, e ? "out of memory" : "the armature was evicted at once");
    } else {
        snprintf(loc, sizeof loc, "Location: /v1/armatures/%s\r\n", id);
        reply(ex, 201, "application/json", loc, b.data, b.len);
    }
    free(b.data);
    if (e)
        cache_unref(cache, e);
}

static void upload(struct exchange *ex)
{
    struct http_req *hr = ex->hr;
    /* The two usual slips, said plainly rather than as a zip that does not open: no body, and
     * a form (curl -F) whose first bytes are its boundary's "--" where a zip has "PK". */
    if (!hr->body_len || (hr->body_len > 2 && !memcmp(hr->body, "--", 2))) {
        fail(ex, 400, NULL,
             "the body is %s: send the .skf file's bytes as the body (curl "
             "--data-binary @FILE.skf)",
             hr->body_len ? "a form (multipart)" : "empty");
        return;
    }
    uint8_t *body = hr->body ? hr->body : malloc(1);
    size_t len = hr->body_len;
    hr->body = NULL; /* the LOAD takes it */
    if (!body) {
        fail(ex, 500, NULL, "out of memory");
        return;
    }
    uint16_t st;
    char why[256];
    ex->job = dispatch_load_bytes(ex->api->d, body, len, ex->check_put ? ex->want : NULL,
                                  on_uploaded, ex, &st, why, sizeof why);
    if (!ex->job)
        fail_status(ex, st, why);
}

/* Appends s as a JSON string, or null for NULL. Nonzero if out of memory. */
static int append_quoted(struct byte_buf *b, const char *s)
{
    if (!s)
        return byte_buf_append(b, "null", 4);
    char small[128], *q = skp_json_quoted(s, small, sizeof small);
    int rc = !q || byte_buf_append(b, q, strlen(q));
    if (q && q != small)
        free(q);
    return rc;
}

static void list(struct exchange *ex)
{
    struct byte_buf b = {NULL, 0, 0};
    bool bad = byte_buf_append(&b, "{\"armatures\":[", 14) != 0;
    const struct cache *c = ex->api->d->cache;
    for (const struct cache_entry *e = c->head; e && !bad; e = e->next) {
        char id[65], item[160];
        skp_hex(id, e->id, 32);
        int n = snprintf(item, sizeof item, "%s\n{\"id\":\"%s\",\"file\":", e == c->head ? "" : ",",
                         id);
        bad = byte_buf_append(&b, item, (size_t)n) || append_quoted(&b, e->file);
        n = snprintf(item, sizeof item, ",\"bones\":%u,\"animations\":[", e->arm->bone_count);
        bad = bad || byte_buf_append(&b, item, (size_t)n);
        for (uint32_t i = 0; i < e->arm->anim_count && !bad; i++)
            bad = (i && byte_buf_append(&b, ",", 1)) || append_quoted(&b, e->arm->anims[i].name);
        bad = bad || byte_buf_append(&b, "]}", 2);
    }
    if (bad || byte_buf_append(&b, "\n]}\n", 4))
        fail(ex, 500, NULL, "out of memory");
    else
        reply(ex, 200, "application/json", "Cache-Control: no-store\r\n", b.data, b.len);
    free(b.data);
}

/* ---- routing --------------------------------------------------------------------------------- */

static enum route resource_of(const char *s)
{
    return !*s                        ? R_INFO
           : !strcmp(s, "pose")       ? R_POSE
           : !strcmp(s, "mesh")       ? R_MESH
           : !strcmp(s, "render.png") ? R_RENDER
           : !strcmp(s, "sheet.json") ? R_SHEET
                                      : R_OTHER;
}

static bool is_read(const struct http_req *hr)
{
    return hr->verb == HTTP_VERB_GET || hr->verb == HTTP_VERB_HEAD;
}

static void method_not_allowed(struct exchange *ex, const char *allow)
{
    char h[96];
    snprintf(h, sizeof h, "Allow: %s\r\n", allow);
    fail(ex, 405, h, "%s is not allowed here (%s are)", ex->hr->method, allow);
}

/* /v1/armatures/{id}[/resource] */
/* A resource that takes no query parameters (the list, an upload, an armature's or a file's
 * info, a DELETE) refuses one with 400 naming it, as the others refuse one they do not take:
 * a forgotten "/pose" must not answer the info as if it were the pose. true if it answered. */
static bool refuse_query(struct exchange *ex)
{
    const char *q = ex->query + strspn(ex->query, "&"); /* "?&" has no parameter */
    if (!*q)
        return false;
    int n = (int)strcspn(q, "=&");
    fail(ex, 400, NULL,
         "%.*s%s: this resource takes no query parameters (pose, mesh, render.png and "
         "sheet.json take the flags)",
         n < 64 ? n : 64, q, n ? "" : "a parameter without a name");
    return true;
}

static void route_armature(struct exchange *ex, char *rest)
{
    char *slash = strchr(rest, '/');
    size_t idlen = slash ? (size_t)(slash - rest) : strlen(rest);
    uint8_t id[32];
    if (skp_unhex(id, 32, rest, idlen)) {
        fail(ex, 404, NULL, "an armature id is 64 lowercase hex digits");
        return;
    }
    /* "{id}/" names no resource: read as {id}, a balancer hashing the path with its slash
     * would send it to another node than {id}'s */
    ex->route = slash && !slash[1] ? R_OTHER : resource_of(slash ? slash + 1 : "");
    if (ex->route == R_OTHER) {
        fail(ex, 404, NULL, "no such resource (pose, mesh, render.png or sheet.json)");
        return;
    }
    struct http_req *hr = ex->hr;
    if (ex->route == R_INFO && hr->verb == HTTP_VERB_PUT)
        ex->route = R_UPLOAD; /* counted as one in /metrics, refused or not */
    bool info_verb = is_read(hr) || hr->verb == HTTP_VERB_DELETE;
    if ((ex->route == R_UPLOAD || (ex->route == R_INFO && info_verb)) && refuse_query(ex))
        return;
    if (ex->route == R_UPLOAD) {
        ex->check_put = true;
        memcpy(ex->want, id, 32);
        upload(ex);
        return;
    }
    if (ex->route == R_INFO && hr->verb == HTTP_VERB_DELETE) {
        dispatch_count(ex->api->d, SKP_OP_UNLOAD);
        if (cache_remove(ex->api->d->cache, id))
            reply(ex, 204, NULL, NULL, NULL, 0);
        else
            fail(ex, 404, NULL, "no armature with that id is loaded");
        return;
    }
    if (!is_read(hr)) {
        method_not_allowed(ex, ex->route == R_INFO ? "GET, HEAD, PUT, DELETE" : "GET, HEAD");
        return;
    }
    struct cache *cache = ex->api->d->cache; /* run_resource may end ex */
    struct cache_entry *e = cache_get(cache, id);
    if (!e) {
        fail(ex, 404, NULL, "no armature with that id is loaded");
        return;
    }
    run_resource(ex, e);
    cache_unref(cache, e);
}

/* /v1/files/{path}[/resource]: the path is everything before a known resource name. */
static void route_file(struct exchange *ex, char *path)
{
    static const char *const names[] = {"/pose", "/mesh", "/render.png", "/sheet.json"};
    ex->files = true;
    ex->route = R_INFO;
    size_t len = strlen(path);
    for (size_t i = 0; i < 4; i++) {
        size_t n = strlen(names[i]);
        if (len > n && !strcmp(path + len - n, names[i])) {
            ex->route = resource_of(names[i] + 1);
            path[len - n] = 0;
            break;
        }
    }
    if (!is_read(ex->hr)) {
        method_not_allowed(ex, "GET, HEAD");
        return;
    }
    if (ex->route == R_INFO && refuse_query(ex))
        return;
    if (!skp_cli_path_decode(path)) {
        fail(ex, 400, NULL, "malformed percent-encoding in the path");
        return;
    }
    ex->file = path;
    /* A file whose version the daemon knows and whose armature is cached: the evaluation
     * checks the file itself, one trip to a worker rather than two. */
    struct cache *cache = ex->api->d->cache; /* run_resource may end ex */
    struct cache_entry *e =
        ex->route == R_INFO ? NULL : dispatch_recall_file(ex->api->d, path, &ex->known);
    if (e) {
        ex->recalled = true;
        run_resource(ex, e);
        cache_unref(cache, e);
        return;
    }
    load_file(ex);
}

/* LOADs ex's file (checked beneath --root by a worker), then answers from its armature. */
static void load_file(struct exchange *ex)
{
    uint16_t st;
    char why[256];
    ex->recalled = false;
    ex->job = dispatch_load_path(ex->api->d, ex->file, strlen(ex->file), on_file_loaded, ex, &st,
                                 why, sizeof why);
    if (!ex->job)
        fail_status(ex, st, why);
}

static void route_v1(struct exchange *ex, char *path)
{
    struct http_req *hr = ex->hr;
    if (!strcmp(path, "/v1/armatures")) {
        ex->route = hr->verb == HTTP_VERB_POST ? R_UPLOAD : R_LIST;
        if ((hr->verb == HTTP_VERB_POST || is_read(hr)) && refuse_query(ex))
            return;
        if (hr->verb == HTTP_VERB_POST)
            upload(ex);
        else if (is_read(hr))
            list(ex);
        else
            method_not_allowed(ex, "GET, HEAD, POST");
    } else if (!strncmp(path, "/v1/armatures/", 14)) {
        route_armature(ex, path + 14);
    } else if (!strncmp(path, "/v1/files/", 10)) {
        route_file(ex, path + 10);
    } else {
        fail(ex, 404, NULL, "no such resource");
    }
}

static void route_ops(struct exchange *ex, const char *path);

/* The value of the cookie skeld_token (percent-decoded) in a Cookie header, copied to out;
 * false if there is none or it does not fit. A browser cannot put a header on the pictures
 * and links a page loads: the preview page sets this cookie (SameSite=Strict) instead. */
static bool cookie_token(const char *cookie, char *out, size_t cap)
{
    for (const char *p = cookie; p && *p;) {
        p += strspn(p, " ;");
        size_t n = strcspn(p, ";");
        if (n > 12 && !strncmp(p, "skeld_token=", 12) && n - 12 < cap) {
            memcpy(out, p + 12, n - 12);
            out[n - 12] = 0;
            return skp_cli_path_decode(out);
        }
        p += n;
    }
    return false;
}

/* Authorization: Bearer TOKEN, or the cookie skeld_token=TOKEN, when --auth-token is set. */
static bool authorized_req(const struct config *cfg, const struct http_req *hr)
{
    const char *got = hr->authorization;
    char from_cookie[3 * 1024 + 1];            /* a 1024-byte token percent-encoded whole */
    if (!cfg->auth_token || !*cfg->auth_token) /* no cookie to read */
        return true;
    if (got && !strncasecmp(got, "Bearer ", 7)) /* the scheme is case-insensitive (RFC 9110 11.1) */
        return config_token_ok(cfg, got + 7, strlen(got + 7));
    return cookie_token(hr->cookie, from_cookie, sizeof from_cookie) &&
           config_token_ok(cfg, from_cookie, strlen(from_cookie));
}

static bool authorized(const struct exchange *ex)
{
    return authorized_req(ex->api->cfg, ex->hr);
}

/* What needs no token: the checks, and the preview page's own files (code, no data: it asks
 * for its token). */
static bool open_path(const char *path)
{
    return !strcmp(path, "/healthz") || !strcmp(path, "/readyz") || www_find(path);
}

/* A request whose body follows, its head read: without the token it is refused before the
 * body is read (or a 100 Continue sent), so that a client without it cannot make the daemon
 * hold --max-input-mb. */
static int on_head(void *owner, const struct http_req *hr)
{
    struct api *a = owner;
    if (hr->verb == HTTP_VERB_OPTIONS || authorized_req(a->cfg, hr))
        return 0;
    size_t len;
    const char *at = http_target_path(hr->url, &len);
    char path[256]; /* longer than any open path */
    if (len >= sizeof path)
        return 401;
    memcpy(path, at, len);
    path[len] = 0;
    return open_path(len ? path : "/") ? 0 : 401;
}

static void on_request(void *owner, struct http_req *hr)
{
    struct api *a = owner;
    struct exchange *ex = calloc(1, sizeof *ex);
    if (!ex) {
        http_error(hr, 500, NULL, "out of memory");
        return;
    }
    ex->api = a;
    ex->hr = hr;
    hr->ctx = ex;
    size_t path_len;
    const char *full = http_target_path(hr->url, &path_len);
    const char *q = full[path_len] == '?' ? full + path_len + 1 : NULL;
    ex->path = path_len ? strndup(full, path_len) : strdup("/");
    ex->query = q ? strndup(q, strcspn(q, "#")) : strdup("");
    if (!ex->path || !ex->query) {
        fail(ex, 500, NULL, "out of memory");
        return;
    }
    char *url = ex->path;
    if (hr->verb == HTTP_VERB_OPTIONS) { /* a CORS preflight */
        reply(ex, 204, NULL,
              "Access-Control-Allow-Methods: GET, HEAD, POST, PUT, DELETE, OPTIONS\r\n"
              "Access-Control-Allow-Headers: Authorization, Content-Type, If-None-Match\r\n",
              NULL, 0);
        return;
    }
    if (!open_path(url) && !authorized(ex)) {
        fail(ex, 401, "WWW-Authenticate: Bearer\r\n", "send Authorization: Bearer TOKEN");
        return;
    }
    if (!strncmp(url, "/v1/", 4))
        route_v1(ex, url);
    else
        route_ops(ex, url);
}

static void on_gone(void *owner, struct http_req *hr)
{
    (void)owner;
    struct exchange *ex = hr->ctx;
    if (!ex)
        return;
    if (ex->job)
        dispatch_forget(ex->job);
    ex->hr = NULL;
    free_exchange(ex);
}

static void on_refused(void *owner, int status)
{
    count(owner, R_OTHER, status);
}

const struct http_hooks api_http_hooks = {on_request, on_gone, on_refused, on_head};

void api_init(struct api *a, struct dispatch *d, const struct config *cfg, struct http_set *http)
{
    memset(a, 0, sizeof *a);
    a->d = d;
    a->cfg = cfg;
    a->http = http;
}

/* ---- operations ------------------------------------------------------------------------------ */

/* The Prometheus text format: the STATS counters under proto/skp_prom's names (the ones
 * `skelctl stats --prometheus` prints), then HTTP answers by route and status. */
static void metrics(struct exchange *ex)
{
    struct api *a = ex->api;
    struct dispatch_counters k;
    dispatch_counters(a->d, &k);
    size_t len = skp_prom_text(NULL, 0, k.k, k.n);
    struct byte_buf b = {NULL, 0, 0};
    bool bad = byte_buf_reserve(&b, len + 1) != 0;
    if (!bad)
        b.len = skp_prom_text((char *)b.data, len + 1, k.k, k.n);
    char info[256]; /* which node this is, for dashboards over a cluster (--node-name) */
    const char *node = a->cfg->node_name ? a->cfg->node_name : "";
    size_t in = skp_prom_node_info(info, sizeof info, node, strlen(node), PACKAGE_VERSION,
                                   strlen(PACKAGE_VERSION));
    bad = bad || in >= sizeof info || byte_buf_append(&b, info, in);
    static const char head[] = "# HELP skeld_http_requests_total HTTP answers by route and "
                               "status.\n# TYPE skeld_http_requests_total counter\n";
    bad = bad || byte_buf_append(&b, head, sizeof head - 1);
    for (int r = 0; r < API_ROUTES && !bad; r++)
        for (int s = 0; s < API_STATUSES && !bad; s++) {
            char line[160];
            int n = snprintf(line, sizeof line,
                             "skeld_http_requests_total{route=\"%s\",status=\"%d\"} %llu\n",
                             route_names[r], statuses[s], (unsigned long long)a->counts[r][s]);
            bad = a->counts[r][s] && byte_buf_append(&b, line, (size_t)n);
        }
    if (bad)
        fail(ex, 500, NULL, "out of memory");
    else
        reply(ex, 200, "text/plain; version=0.0.4", "Cache-Control: no-store\r\n", b.data, b.len);
    free(b.data);
}

/* One of the preview page's files, with the strong ETag of its bytes that contrib/embed made
 * (revalidated on every use: no-cache), so that a reload of an unchanged page is a 304. */
static void page_file(struct exchange *ex, const struct www_file *page)
{
    char headers[256];
    snprintf(headers, sizeof headers, "Cache-Control: no-cache\r\nETag: %s\r\n%s", page->etag,
             PAGE_POLICY);
    const char *inm = ex->hr->if_none_match;
    bool same = inm && (!strcmp(inm, "*") || strstr(inm, page->etag));
    if (same)
        reply(ex, 304, NULL, headers, NULL, 0);
    else
        reply(ex, 200, page->content_type, headers, page->bytes, page->length);
}

static void route_ops(struct exchange *ex, const char *path)
{
    const struct www_file *page;
    ex->route = R_OPS;
    if (!is_read(ex->hr)) {
        method_not_allowed(ex, "GET, HEAD");
    } else if (!strcmp(path, "/healthz")) {
        reply(ex, 200, "text/plain", "Cache-Control: no-store\r\n", "ok\n", 3);
    } else if (!strcmp(path, "/readyz")) {
        bool ready = ex->api->ready && !ex->api->http->stopping;
        reply(ex, ready ? 200 : 503, "text/plain", "Cache-Control: no-store\r\n",
              ready ? "ready\n" : "not ready\n", ready ? 6 : 10);
    } else if (!strcmp(path, "/metrics")) {
        metrics(ex);
    } else if ((page = www_find(path))) {
        page_file(ex, page);
    } else {
        fail(ex, 404, NULL, "no such resource");
    }
}
