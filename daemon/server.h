/* The daemon: loop ownership, listeners, connections, shutdown. Loop thread only, except
 * where a comment says otherwise. */
#ifndef SKELD_SERVER_H
#define SKELD_SERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "cache.h"
#include "config.h"
#include "engine/eval.h"
#include "engine/render.h"
#include "pool.h"
#include "skp_parser.h"

struct instance;
struct request;

struct conn {
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
    } h;
    struct server *srv;
    struct conn *prev, *next;
    uint8_t *in;
    size_t in_len, in_cap;
    int inflight; /* jobs, queued writes and the half-close: the conn lives while > 0 */
    int jobs;     /* of which pool jobs (LOAD, POSE, MESH, RENDER) */
    bool reading, closing, closed, authed, close_after_write;
    bool lingering;         /* half-closed, reading only to see the peer's end (conn_finish) */
    uv_shutdown_t shutdown; /* the half-close */
    uint64_t last_active, linger_until;
    struct instance **instances; /* index = instance id - 1 */
    uint32_t instance_cap;
};

struct listener {
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
    } h;
    struct server *srv;
    char uri[256];
};

enum { STAT_OPS = 16 };

struct server {
    uv_loop_t *loop;
    struct config *cfg;
    struct cache cache;
    struct pool pool;
    struct listener listeners[CONFIG_MAX_LISTEN];
    int listener_count;
    struct conn *conns;
    uint32_t conn_count;
    uv_signal_t sigint, sigterm;
    uv_timer_t sweep;
    bool stopping;
    uint64_t stop_deadline; /* ms: at shutdown, connections with no job left are closed then */
    char root[4096];        /* realpath of --root */
    uint64_t started_ms;
    uint64_t requests[STAT_OPS], errors, busy, connections_total, parses;
    struct request *parsing; /* LOADs whose content is being parsed, one per content id */
    uint64_t latency_us[16]; /* histogram: bucket i counts latencies below 2^i * 64 us */
};

/* Runs the daemon until SIGINT/SIGTERM. Returns the process exit status. */
int server_run(struct config *cfg);

/* Queues a reply (takes ownership of body, malloc'd or NULL). */
void conn_reply(struct conn *c, uint8_t opcode, uint32_t id, uint16_t status, uint8_t *body,
                size_t len);

/* Queues an error reply whose body is the message. */
void conn_error(struct conn *c, uint8_t opcode, uint32_t id, uint16_t status, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Starts closing c; it is freed once closed and no job refers to it. */
void conn_close(struct conn *c);

/* A job for c finished (loop thread): may resume reading or free a closed connection. */
void conn_job_done(struct conn *c);

/* Called when a request for c is submitted. */
void conn_job_started(struct conn *c);

/* Dispatches one whole frame (dispatch.c). The body is only valid during the call. */
void dispatch_frame(struct conn *c, const struct skp_frame *f);

/* Frees c's instances (dispatch.c). */
void dispatch_conn_closed(struct conn *c);

/* Loads every .skf in dir into the cache (dispatch.c). Startup only. */
int dispatch_preload(struct server *s, const char *dir);

uint64_t server_now_ms(struct server *s);

#endif
