/* The request layer of the binary protocol: the opcode table, per-connection sessions
 * (authentication, stateful instances), the loop-thread half of every request (decode
 * through proto/, check through the engine's request model, submit to the pool, reply when
 * done), the LOAD pipeline, and the daemon's counters. It sits on the connection layer
 * through struct conn_hooks and hands workers a struct work (work.h). Loop thread only. */
#ifndef SKELD_DISPATCH_H
#define SKELD_DISPATCH_H

#include <stdint.h>
#include <uv.h>

#include "cache.h"
#include "config.h"
#include "confine.h"
#include "conn.h"
#include "pool.h"
#include "rcache.h"
#include "skp.h"
#include "skp_prom.h"

struct request;
struct skp_eval_req;
struct skp_render_req;

struct path_memo;
struct work;

struct dispatch {
    uv_loop_t *loop;
    const struct config *cfg;
    struct cache *cache;
    struct pool *pool;
    struct conn_set *conns; /* for STATS and the shutdown flag */
    int root_fd; /* --root, opened: LOAD by path opens beneath it; -1: no --root, refused */
    uint64_t started_ms;
    struct rcache results;   /* encoded answers of stateless evaluations, both fronts */
    struct request *parsing; /* LOADs whose content is being parsed, one per content id */
    bool big_parsing;        /* a big armature.json is being parsed: others wait in line */
    struct request *big_head, *big_tail;
    /* A front request being started: if it ends within the start (the pool refused it), its
     * result is kept here and the start returns it, so done is never called from the call. */
    struct request *starting;
    uint16_t start_status;
    char start_msg[256];
    /* LOAD by path: per path, the signature and digest of the version last read (settled
     * files only), so that a file whose armature is cached is opened but not read again */
    struct path_memo *memo;
    /* counters (STATS) */
    uint64_t requests[SKP_OP_MAX], busy, parses, unchanged;
    uint64_t latency_us[16]; /* histogram: bucket i counts latencies below 2^i * 64 us */
    uint64_t latency_sum_us; /* the latencies the histogram counts, added up (its _sum) */
    size_t instance_bytes;   /* held by the instances of all connections (--max-instance-mb) */
};

/* Small evaluations run on the loop thread when the workers are idle (pool_stage): one of at
 * most DISPATCH_INLINE_JOB_STEPS bone-steps, in batches of at most DISPATCH_INLINE_BATCH_STEPS
 * (the pool's inline budget: what the reads of one loop iteration stage). In
 * armature_step_weight's bone-steps, which count IK chains and vertices too: a real file's step
 * weighs about twice its bones, so these are twice the 256 and 1,024 bones they were. */
#define DISPATCH_INLINE_JOB_STEPS 512
#define DISPATCH_INLINE_BATCH_STEPS 2048

/* The hooks that make dispatch the owner of a struct conn_set (owner: the struct dispatch). */
extern const struct conn_hooks dispatch_conn_hooks;

/* Sets d up over the daemon's cache, pool and connections. 0, or -1 with the problem logged
 * (--root is not a directory that can be opened). Without --root, LOAD by path is refused. */
int dispatch_init(struct dispatch *d, uv_loop_t *loop, const struct config *cfg,
                  struct cache *cache, struct pool *pool, struct conn_set *conns);

/* Releases what dispatch_init took. */
void dispatch_close(struct dispatch *d);

/* The daemon's counters, named and ordered as PROTOCOL.md lists the STATS reply's: the one
 * source of the STATS reply and of GET /metrics. */
#define DISPATCH_PLAIN_COUNTERS 23 /* between the requests.* and the refusals.* ones */
/* requests.* by opcode, the plain ones, refusals.* by status but OK, then latency.* (the
 * buckets, then latency.sum_us, whose name is fixed) */
#define DISPATCH_NAMED_COUNTERS (SKP_OP_MAX - 1 + SKP_STATUS_COUNT - 1 + 16)
#define DISPATCH_COUNTERS (DISPATCH_NAMED_COUNTERS + DISPATCH_PLAIN_COUNTERS + 1)
struct dispatch_counters {
    struct skp_counter k[DISPATCH_COUNTERS];
    size_t n;
    char names[DISPATCH_NAMED_COUNTERS][32]; /* what k's requests.*, refusals.* and latency.*
                                              * names point to */
};
void dispatch_counters(const struct dispatch *d, struct dispatch_counters *out);

/* What a LOAD by path is refused with while the daemon has no --root. */
#define DISPATCH_NO_ROOT "LOAD by path is disabled: start skeld with --root DIR"

/* ---- the request machinery for other fronts (the HTTP front) ------------------------------ */

/* What a request came to, handed to its front once. The front may take body (then set it to
 * NULL); msg and id are valid during the call only. */
struct dispatch_result {
    uint16_t status; /* SKP_S_OK, or the wire status of the failure */
    const char *msg;
    uint8_t *body; /* POSE/MESH: JSON or wire body (as asked); RENDER: the wire reply body */
    size_t len;
    const uint8_t *id; /* LOAD: the armature id */
    /* An evaluation with a file (dispatch_eval): the file was no longer the version its
     * armature was read from, so nothing was evaluated (status OK, no body): load it again. */
    bool file_changed;
};
typedef void (*dispatch_done_fn)(void *ctx, struct dispatch_result *res);

/* A LOAD of bytes (taken) or of a path under --root, through the same pipeline as the binary
 * protocol's (hash, cache, one parse per content). done is called once, later, never from
 * within the call. NULL with *status and why when it could not start (no memory, a path out
 * of --root, the queue full): done is then never called. want (may be NULL) is the id the
 * bytes must have: others are refused (SKP_S_BAD_REQUEST, naming their id) before they are
 * parsed or cached. */
struct request *dispatch_load_bytes(struct dispatch *d, uint8_t *bytes, size_t len,
                                    const uint8_t *want, dispatch_done_fn done, void *ctx,
                                    uint16_t *status, char *why, size_t whylen);
struct request *dispatch_load_path(struct dispatch *d, const char *rel, size_t len,
                                   dispatch_done_fn done, void *ctx, uint16_t *status, char *why,
                                   size_t whylen);

/* A file under --root as the path memo knows it: the version its cached armature was read
 * from. */
struct dispatch_file {
    const char *path; /* the caller's: read within dispatch_eval only */
    struct confine_sig sig;
};

/* The cached armature that the file rel (under --root) was last read as, referenced, when the
 * memo knows the file's version (file is filled) and the armature is still cached; else NULL,
 * and the file must be LOADed. Whether the file is still that version only a worker can say:
 * pass file to dispatch_eval, which checks it before evaluating. */
struct cache_entry *dispatch_recall_file(struct dispatch *d, const char *rel,
                                         struct dispatch_file *file);

/* POSE, MESH (output: enum work_output) or RENDER (rm non-NULL) of the cached entry e (which
 * the caller holds a reference to for the call), judged by the same request model as the
 * binary protocol's. With file (from dispatch_recall_file; may be NULL), the worker first
 * checks that the file is still the version e was read from: if not, the result says
 * file_changed. done is called once, later. NULL with *status and why when the request is
 * refused (done is then never called). */
struct request *dispatch_eval(struct dispatch *d, struct cache_entry *e, uint8_t op, uint8_t output,
                              const struct skp_eval_req *m, const struct skp_render_req *rm,
                              const struct dispatch_file *file, dispatch_done_fn done, void *ctx,
                              uint16_t *status, char *why, size_t whylen);

/* A request a front answered itself, without a job (HTTP's info and DELETE), counted under
 * its opcode as STATS counts every other. */
void dispatch_count(struct dispatch *d, uint8_t opcode);

/* The limits every LOAD's work is held to (--max-skf-mb, --max-json-mb, --max-bones, and
 * the cache's budget: a bigger armature would be evicted at once), the preload's included. */
void dispatch_load_limits(const struct dispatch *d, struct work *w);

/* The front's client is gone: done will not be called, and work not yet started is dropped. */
void dispatch_forget(struct request *r);

#endif
