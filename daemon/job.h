/* A job as the evaluation pool runs it, and the scratch each worker thread keeps: what
 * worker-side code (work.c) needs, without libuv or anything of the server. */
#ifndef SKELD_JOB_H
#define SKELD_JOB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/png.h"
#include "engine/pose.h"
#include "engine/render.h"
#include "engine/request.h"

struct pool;
struct worker;

struct job {
    struct job *next;
    void (*run)(struct job *, struct worker *); /* worker thread */
    void (*done)(struct job *);                 /* loop thread, exactly once */
    /* Set by the loop when nobody waits for the result any more (the client went away): a
     * job still queued is then not run, and done() sees dropped. */
    atomic_bool cancelled;
    bool dropped;
};

/* Per-thread scratch, reused from job to job so steady-state evaluation allocates nothing
 * but reply bodies. */
struct worker {
    struct pool *pool;
    pthread_t thread;
    uint64_t pose_serial; /* cache serial of the armature scratch_pose was made for */
    struct pose *scratch_pose;
    struct image image;
    struct byte_buf png_scratch;
    /* Each PNG is encoded here, then copied to its reply at its own size: the encoder reserves
     * its worst case (2 MiB for 512x512), which as the reply's own buffer crossed malloc's mmap
     * threshold, so every RENDER mapped and unmapped it, and the unmapping, on the loop thread,
     * interrupted the other workers to flush their TLBs. */
    struct byte_buf png_out;
    struct frame_memo framing; /* the last fit camera's bounds (request_frame_remember) */
};

/* The worker's scratch pose for arm, reset (made anew only when the armature changes; serial
 * tells armatures apart even if one is freed and another lands at the same address). */
struct pose *worker_pose(struct worker *w, const struct armature *arm, uint64_t serial);

#endif
