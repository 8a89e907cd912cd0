/* --preload DIR: the operator's armatures loaded into the cache while the daemon already
 * serves. The directory is read at start (its .skf names, sorted); then the files are loaded
 * one at a time as pool jobs (work_load), so a worker stays free for clients and one parse at
 * a time bounds the memory. Each completion caches the armature, named by its file. A full
 * queue is tried again shortly; no file is dropped. A stop starts no further file. Loop
 * thread only. */
#ifndef SKELD_PRELOAD_H
#define SKELD_PRELOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "dispatch.h"
#include "work.h"

/* Every file was tried: rc 0, or -1 when the preload could not go on (out of memory; the
 * log says so). */
typedef void (*preload_done_fn)(void *ctx, int rc);

struct dirent;

struct preload {
    struct work work; /* the file in flight */
    struct dispatch *d;
    const char *dir;
    struct dirent **names; /* the .skf files in dir, sorted */
    int count, next, loaded;
    uint64_t evictions; /* the cache's count when the preload began */
    bool running;       /* started, not yet finished */
    bool stopping, in_flight;
    uv_timer_t retry; /* the next file, once the pool takes jobs again */
    preload_done_fn done;
    void *ctx;
};

/* Reads dir's .skf names and starts loading them into d's cache through d's pool. done is
 * called once every file has been tried, later, never from within this call, and not after
 * preload_stop. 0, or -1 with the problem logged (dir cannot be opened, no memory): done is
 * then never called. p must stay put until the loop has closed its handle. */
int preload_start(struct preload *p, struct dispatch *d, const char *dir, preload_done_fn done,
                  void *ctx);

/* Whether a preload is under way (started, not finished nor stopped). False on a zeroed p. */
bool preload_running(const struct preload *p);

/* No further file is started; the one in flight is still cached when the pool delivers it
 * (pool_shutdown does). done is not called. Safe on a zeroed p and more than once. */
void preload_stop(struct preload *p);

#endif
