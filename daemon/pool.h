/* Evaluation pool: worker threads, a bounded job queue, and completions handed back to the
 * loop thread through one uv_async_t. Workers run jobs with no lock held, touching only the
 * job and read-only data (armatures); each has its own scratch (struct worker). Jobs of a few
 * microseconds may be staged instead, to run on the loop thread at the end of its iteration
 * when that is cheaper than waking a worker (pool_stage). */
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
    uv_async_t async;
    /* Staged jobs (pool_stage), loop thread only: this loop iteration's small jobs, run at
     * its end, on the loop thread or by the workers. */
    struct job *staged_head, *staged_tail;
    size_t staged;          /* count, within depth as queued ones are */
    unsigned staged_cost;   /* their total, in the caller's unit */
    unsigned inline_budget; /* the most a batch may cost to run on the loop thread */
    bool staging_over;      /* this iteration passed the budget: the rest go to the workers */
    bool staging;           /* the handles below are started */
    uv_check_t stage_end;   /* after the iteration's I/O: runs or hands over what is staged */
    uv_idle_t stage_nowait; /* while anything is staged, the loop does not block before that */
    struct worker own;      /* scratch for jobs run on the loop thread */
    uint64_t inlined;       /* jobs run there (STATS) */
};

/* Starts n workers on loop. A batch of staged jobs whose cost is at most inline_budget may run
 * on the loop thread (0: never). 0 or a negative uv error. Loop thread. */
int pool_init(struct pool *p, uv_loop_t *loop, int n, size_t depth, unsigned inline_budget);

/* Queues job; UV_EBUSY when the queue is full or the pool is stopping (done() is then never
 * called). Loop thread. */
int pool_submit(struct pool *p, struct job *job);

/* Takes a job of a few microseconds, costing cost (in inline_budget's unit), to run at the
 * end of this loop iteration. Jobs staged in one iteration (one read, a pipelined batch, a
 * batch of completions) that cost at most inline_budget together run then on the loop
 * thread, one after another with the pool's own scratch, if nothing is queued and a worker
 * is free: waking a worker and handing the result back would cost more than the work, in CPU
 * and in latency. Past the budget, what is staged and what follows in the iteration go to the
 * workers at once, so that a batch still uses every core. The job's code is the workers'
 * (work.c); the pool only chooses where it runs. done() is called as for pool_submit, never
 * from inside this call; UV_EBUSY as pool_submit. Loop thread. */
int pool_stage(struct pool *p, struct job *job, unsigned cost);

/* Jobs staged, queued and running. */
size_t pool_depth(struct pool *p);

/* Cancelled jobs that were dropped instead of run. Loop thread. */
uint64_t pool_dropped(struct pool *p);

/* Stops intake, runs staged jobs, lets queued jobs finish, joins the workers, delivers the last
 * completions and closes its handles. Safe on a pool whose pool_init failed or never ran
 * (zeroed). Loop thread; run the loop afterwards to finish closing. */
void pool_shutdown(struct pool *p);

#endif
