/* Evaluation pool: worker threads, a bounded job queue, and completions handed back to the
 * loop thread through one uv_async_t. Workers run jobs with no lock held, touching only the
 * job and read-only data (armatures); each has its own scratch (struct worker). */
#ifndef SKELD_POOL_H
#define SKELD_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <uv.h>

#include "job.h"

struct pool {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    struct job *head, *tail; /* queued */
    struct job *done;        /* finished, in reverse order */
    size_t queued, depth, running;
    uint64_t dropped; /* cancelled jobs not run (STATS) */
    bool stopping;
    bool started; /* pool_init succeeded up to the async handle: shutdown has work to do */
    int nworkers;
    struct worker *workers;
    struct worker own; /* scratch for jobs run on the loop thread (pool_run_inline) */
    uint64_t inlined;  /* jobs run there (STATS) */
    uv_async_t async;
};

/* Starts n workers on loop. 0 or a negative uv error. Loop thread. */
int pool_init(struct pool *p, uv_loop_t *loop, int n, size_t depth);

/* Queues job; UV_EBUSY when the queue is full or the pool is stopping (done() is then never
 * called). Loop thread. */
int pool_submit(struct pool *p, struct job *job);

/* Jobs queued plus running. */
size_t pool_depth(struct pool *p);

/* Nothing queued and a worker waiting. Loop thread. */
bool pool_idle(struct pool *p);

/* Runs job on the calling loop thread with the pool's own scratch, then calls its done(). For
 * jobs of a few microseconds when the workers are idle: waking one and handing the result
 * back costs more than the job, in CPU and in latency. The job's code is the workers' (work.c);
 * the loop only chooses where it runs. Loop thread. */
void pool_run_inline(struct pool *p, struct job *job);

/* Cancelled jobs that were dropped instead of run. Loop thread. */
uint64_t pool_dropped(struct pool *p);

/* Stops intake, lets queued jobs finish, joins the workers, delivers the last completions
 * and closes the async handle. Safe on a pool whose pool_init failed or never ran (zeroed).
 * Loop thread; run the loop afterwards to finish closing. */
void pool_shutdown(struct pool *p);

#endif
