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
#include "conn.h"
#include "pool.h"
#include "skp.h"

struct request;

struct dispatch {
    uv_loop_t *loop;
    const struct config *cfg;
    struct cache *cache;
    struct pool *pool;
    struct conn_set *conns; /* for STATS and the shutdown flag */
    int root_fd;            /* --root, opened: LOAD by path opens beneath it */
    uint64_t started_ms;
    struct request *parsing; /* LOADs whose content is being parsed, one per content id */
    bool big_parsing;        /* a big armature.json is being parsed: others wait in line */
    struct request *big_head, *big_tail;
    /* counters (STATS) */
    uint64_t requests[SKP_OP_MAX], busy, parses;
    uint64_t latency_us[16]; /* histogram: bucket i counts latencies below 2^i * 64 us */
};

/* The hooks that make dispatch the owner of a struct conn_set (owner: the struct dispatch). */
extern const struct conn_hooks dispatch_conn_hooks;

/* Sets d up over the daemon's cache, pool and connections. 0, or -1 with the problem logged
 * (--root is not a directory that can be opened). */
int dispatch_init(struct dispatch *d, uv_loop_t *loop, const struct config *cfg,
                  struct cache *cache, struct pool *pool, struct conn_set *conns);

/* Releases what dispatch_init took. */
void dispatch_close(struct dispatch *d);

/* Loads every .skf in dir into the cache on the calling thread. Startup only. */
int dispatch_preload(struct dispatch *d, const char *dir);

#endif
