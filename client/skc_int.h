/* libskc internals shared by the files under client/ (never installed). Cross-file names carry the
 * skc__ prefix; -fvisibility=hidden keeps them out of the .so's dynamic symbols. Everything
 * here works on one handle and inherits its rule: one thread at a time. */
#ifndef SKC_INT_H
#define SKC_INT_H

#include <stdint.h>

#include "skc.h"
#include "skp.h"

#define SKC__ERRMSG 512

/* A reply frame taken off the stream: header plus a malloc'd copy of the body. */
struct skc__frame {
    struct skp_header h;
    uint8_t *body; /* h.body_len bytes, owned; never NULL once filed */
};

/* Set on a RENDER's op while it is pending, never sent: its pictures were asked for as raw
 * RGBA. The reply does not say which format it holds, and skc.h promises raw pictures of
 * width x height x 4 bytes and PNG files of the size they are said to be. */
#define SKC__RAW 0x80u
#define SKC__WIRE_OP(op) ((uint8_t)((op) & ~SKC__RAW))
_Static_assert(SKP_OP_MAX <= SKC__RAW, "an opcode would collide with SKC__RAW");

/* A request that was sent and whose reply was not collected yet. */
struct skc__pending {
    uint32_t id;
    uint8_t op;   /* its opcode, with SKC__RAW for a RENDER of raw pictures */
    uint64_t seq; /* the order requests were queued in (replies swap them around in pend) */
    int done;     /* 1: f holds the reply; < 0: the reply arrived but an SKC_E* error hit it */
    struct skc__frame f;
    /* skc_async only: who gets the reply, and until when (monotonic ms, -1 for ever) */
    skc_async_cb cb;
    void *privdata;
    int64_t deadline;
};

/* One slot of the pending table's index (skc_pend.c): a request id (0: free) and where its
 * entry is in pend. */
struct skc__pend_ix {
    uint32_t id, at;
};

struct skc_client {
    int fd;                 /* -1 once the connection is gone */
    int nonblock;           /* skc_set_nonblocking: the pipelined calls never wait */
    int connect_timeout_ms; /* resolved: < 0 means none */
    int io_timeout_ms;
    uint32_t max_reply;  /* body limit for the frame parser */
    uint32_t server_max; /* request body limit from HELLO */
    unsigned server_version;
    char server_name[SKP_MAX_NAME + 1];
    char *uri, *token; /* the options' strings, kept for skc_reconnect (token NULL for none) */
    uint32_t next_id;
    uint64_t next_seq; /* struct skc__pending's seq */
    int ids_wrapped;   /* next_id went round: new ids must skip pending ones */
    uint8_t *in;       /* received bytes not yet parsed */
    size_t in_len, in_cap;
    uint8_t *out; /* encoded requests; out[out_off, out_len) is not written yet */
    size_t out_off, out_len, out_cap;
    size_t out_frame;          /* where the request out_off is in starts: whole frames follow it */
    struct skc__pending *pend; /* in no order: see skc_pend.c */
    size_t npend, pend_cap;
    struct skc__pend_ix *ix; /* id -> slot in pend, ix_cap slots (a power of two, or 0) */
    size_t ix_cap;
    unsigned ix_shift;       /* 32 - log2(ix_cap): the hash's top bits (skc_pend.c) */
    struct skc_async *async; /* the asynchronous handle this client works for, or NULL */
    int status;              /* wire status of the last SKC_ESERVER */
    char gone[SKC__ERRMSG];  /* why the connection closed; "" while open */
    /* The request whose reply passed max_reply, which closed the connection: its own error is
     * SKC_EPROTO, the others' SKC_EIO (skc_async's end) */
    uint32_t too_big_id;
    int has_too_big;
    char err[SKC__ERRMSG];
};

/* Encodes a request body into w (which records overflow; the caller retries bigger). */
typedef void (*skc__encoder)(struct skp_writer *w, const void *arg);

/* Sets c's message (printf-style) and returns code. */
int skc__fail(skc_client *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* errno e as text in buf (thread-safe, unlike strerror); returns buf. */
const char *skc__errno_str(int e, char *buf, size_t len);

/* Clears the message and status at the start of a public call. */
void skc__begin(skc_client *c);

/* Milliseconds on the monotonic clock at which timeout_ms from now ends; -1 for none. */
int64_t skc__deadline(int timeout_ms);

/* Milliseconds left before deadline, for poll(): -1 for none, 0 once it has passed. */
int skc__remaining(int64_t deadline);

/* A fresh (calloc'd) handle takes opt's settings, copying its strings; no connection yet
 * (skc.c). 0, SKC_EINVAL (no options) or SKC_ENOMEM. */
int skc__setup(skc_client *c, const skc_options *opt);

/* Opens c->fd to uri (skc_net.c). 0 or SKC_EINVAL / SKC_EIO / SKC_ETIMEOUT / SKC_ENOMEM. */
int skc__dial(skc_client *c, const char *uri, int64_t deadline);

/* The same without waiting (skc_async): 0 when c->fd is connected, 1 when the connect is in
 * progress (c->fd becomes writable when it ends: then skc__dial_done), or an error. */
int skc__dial_start(skc_client *c, const char *uri);

/* After an in-progress connect made c->fd writable (or readable): 0 if it succeeded, 1 if it
 * is still under way, else it closes the connection and returns SKC_EIO. */
int skc__dial_done(skc_client *c);

/* Closes the connection and records why (skc_io.c); later I/O fails with that reason. An
 * asynchronous handle's adapter lets go of the descriptor first (skc__async_closing). */
void skc__close(skc_client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Encodes one request (body via enc, size_hint a guess of its length) at the end of the
 * output queue and registers it as pending; writes nothing. 0 with *req_id, or an error with
 * nothing queued. */
int skc__queue(skc_client *c, uint8_t op, skc__encoder enc, const void *arg, size_t size_hint,
               uint32_t *req_id);

/* Writes what the socket takes of the output queue, without waiting: 0 once it is empty,
 * SKC_EAGAIN while some is left, SKC_EIO (connection closed) on a socket error. */
int skc__flush(skc_client *c);

/* Writes the whole queue before the deadline. On SKC_ETIMEOUT the rest stays queued for
 * later and the connection open. 0 or an error. */
int skc__flush_wait(skc_client *c, int64_t deadline);

/* skc__queue, then the whole queue written before the deadline (reading replies while the
 * socket is full). 0 with *req_id, or an error with nothing pending. */
int skc__send(skc_client *c, uint8_t op, skc__encoder enc, const void *arg, size_t size_hint,
              int64_t deadline, uint32_t *req_id);

/* skc__queue, then skc__flush: what the socket does not take waits in the queue. */
int skc__send_nowait(skc_client *c, uint8_t op, skc__encoder enc, const void *arg, size_t size_hint,
                     uint32_t *req_id);

/* Waits for req_id's reply and decodes it into *out (skc_reply.c's skc__decode). On
 * SKC_ETIMEOUT the request stays pending; on anything else it is done. */
int skc__recv(skc_client *c, uint32_t req_id, int64_t deadline, skc_reply **out);

/* skc__recv without waiting: writes and reads what the socket allows, then SKC_EAGAIN (the
 * request stays pending) if the reply is not all there yet. */
int skc__try_recv(skc_client *c, uint32_t req_id, skc_reply **out);

/* One read from the socket, filing (or, for skc_async, handing over) every whole reply in
 * it. 0 also when nothing was there; an error once the connection is closed. */
int skc__read(skc_client *c);

/* ---- the pending table (skc_pend.c) ------------------------------------------------- */

/* A new pending entry for request id, with the next seq and no deadline; NULL if there is no
 * memory. Entries may move on every add and remove: pointers to them last until the next. */
struct skc__pending *skc__pend_add(skc_client *c, uint32_t id, uint8_t op);

/* The pending entry of request id, or NULL. */
struct skc__pending *skc__pend_find(const skc_client *c, uint32_t id);

/* Takes p out of the table (its body is the caller's). */
void skc__pend_remove(skc_client *c, struct skc__pending *p);

/* The index built again after the entries were reordered in place (skc_async's finish).
 * 0 or SKC_ENOMEM, which leaves the old index (lookups then miss or fail safe). */
int skc__pend_rebuild(skc_client *c);

/* Frees every entry's body, the table and its index. */
void skc__pend_free(skc_client *c);

/* Takes out of the output queue every request that has not begun to go out and whose
 * deadline (skc_async's) is at or before now; they stay pending. A request cut in the middle
 * stays: the stream would break. */
void skc__unsend_overdue(skc_client *c, int64_t now);

/* Drops a pending request (and its reply, if it came). 0, or SKC_EINVAL if unknown. */
int skc__forget(skc_client *c, uint32_t req_id);

/* Forgets every pending request and empties both buffers (skc_reconnect). */
void skc__reset(skc_client *c);

/* Decodes frame f answering the pending op (SKC__RAW included) into a new reply (takes f->body
 * in every case). An error status gives SKC_ESERVER with c->status and the server's
 * message. */
int skc__decode(skc_client *c, uint8_t pending_op, struct skc__frame *f, skc_reply **out);

/* Sends HELLO with token (NULL for none) and records the server's answer in c (skc_req.c). */
int skc__hello(skc_client *c, const char *token, int64_t deadline);

/* Queues HELLO with token without writing it (skc_async); skc__hello_reply records the
 * answer. */
int skc__queue_hello(skc_client *c, const char *token, uint32_t *req_id);
void skc__hello_reply(skc_client *c, const skc_reply *r);

/* The HELLO reply's fields, for skc_hello (owned by r). */
const char *skc__reply_hello(const skc_reply *r, unsigned *version, uint32_t *max_frame);

/* Gives r (an INFO reply, which carries none) the armature id it was asked about, kept in r:
 * skc_async_ensure's callback reads the id from whichever reply it gets. */
void skc__reply_set_armature_id(skc_reply *r, const unsigned char id[SKC_ID_SIZE]);

/* ---- skc_async (skc_async.c) ---------------------------------------------------------- */

/* The connection of ac's client is about to close: the adapter lets go of the descriptor. */
void skc__async_closing(struct skc_async *ac);

/* A whole reply for pending request p, already out of the table: decode it and call its
 * callback. p->done < 0 if the body could not be copied. */
void skc__async_reply(struct skc_async *ac, struct skc__pending *p);

/* The request's callback, data and deadline, on the pending entry just queued (skc_req.c's
 * skc_async_* calls go through here). 0, or an error with nothing queued. */
int skc__async_queue(struct skc_async *ac, uint8_t op, skc__encoder enc, const void *arg,
                     size_t size_hint, skc_async_cb cb, void *privdata);

/* skc__async_queue for the second step of a request already accepted (skc_async_ensure's
 * LOAD_BYTES): skc_async_disconnect waits for it as for the first. */
int skc__async_follow(struct skc_async *ac, uint8_t op, skc__encoder enc, const void *arg,
                      size_t size_hint, skc_async_cb cb, void *privdata);

/* The client inside ac, for argument checks and messages. */
skc_client *skc__async_client(struct skc_async *ac);

#endif
