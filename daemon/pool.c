#include "pool.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static struct job *pop(struct pool *p)
{
    struct job *j = p->head;
    p->head = j->next;
    if (!p->head)
        p->tail = NULL;
    p->queued--;
    return j;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct pool *p = w->pool;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->head && !p->stopping)
            pthread_cond_wait(&p->wake, &p->lock);
        if (!p->head)
            break; /* stopping and drained */
        struct job *j = pop(p);
        j->dropped = atomic_load_explicit(&j->cancelled, memory_order_relaxed);
        p->dropped += j->dropped;
        p->running++;
        pthread_mutex_unlock(&p->lock);
        if (!j->dropped)
            j->run(j, w);
        pthread_mutex_lock(&p->lock);
        p->running--;
        j->next = p->done;
        p->done = j;
        /* One wake-up per batch: drain takes the whole list, so only the job that finds it
         * empty must send; the lock is then kept for the next pop (uv_async_send takes no
         * lock of ours and does not block). */
        if (!j->next)
            uv_async_send(&p->async);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* Sends coalesce: take the whole done list and complete every job on it, oldest first. */
static void drain(uv_async_t *a)
{
    struct pool *p = a->data;
    pthread_mutex_lock(&p->lock);
    struct job *list = p->done;
    p->done = NULL;
    pthread_mutex_unlock(&p->lock);
    struct job *ordered = NULL;
    while (list) {
        struct job *n = list->next;
        list->next = ordered;
        ordered = list;
        list = n;
    }
    while (ordered) {
        struct job *n = ordered->next;
        ordered->done(ordered);
        ordered = n;
    }
}

static void on_stage_end(uv_check_t *h);
static void on_stage_nowait(uv_idle_t *h);

int pool_init(struct pool *p, uv_loop_t *loop, int n, size_t depth, unsigned inline_budget)
{
    memset(p, 0, sizeof *p);
    p->depth = depth;
    p->inline_budget = inline_budget;
    p->workers = calloc((size_t)n, sizeof *p->workers);
    if (!p->workers)
        return UV_ENOMEM;
    int rc = uv_async_init(loop, &p->async, drain);
    if (rc) {
        free(p->workers);
        p->workers = NULL;
        return rc;
    }
    p->async.data = p;
    uv_check_init(loop, &p->stage_end); /* cannot fail on Unix */
    uv_idle_init(loop, &p->stage_nowait);
    p->stage_end.data = p->stage_nowait.data = p;
    p->started = true;
    p->own.pool = p;
    image_init(&p->own.image);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    for (int i = 0; i < n; i++) {
        p->workers[i].pool = p;
        image_init(&p->workers[i].image);
        if (pthread_create(&p->workers[i].thread, NULL, worker_main, &p->workers[i]))
            break;
        p->nworkers++;
    }
    return p->nworkers == n ? 0 : UV_EAGAIN;
}

/* Appends the linked jobs first..last (n of them) to the queue and wakes workers for them.
 * Lock held. */
static void enqueue_locked(struct pool *p, struct job *first, struct job *last, size_t n)
{
    last->next = NULL;
    if (p->tail)
        p->tail->next = first;
    else
        p->head = first;
    p->tail = last;
    p->queued += n;
    for (size_t i = 0; i < n && i < (size_t)p->nworkers; i++)
        pthread_cond_signal(&p->wake); /* no system call once no worker waits */
}

int pool_submit(struct pool *p, struct job *job)
{
    pthread_mutex_lock(&p->lock);
    if (p->stopping || p->queued + p->staged >= p->depth) {
        pthread_mutex_unlock(&p->lock);
        return UV_EBUSY;
    }
    enqueue_locked(p, job, job, 1);
    pthread_mutex_unlock(&p->lock);
    return 0;
}

uint64_t pool_dropped(struct pool *p)
{
    pthread_mutex_lock(&p->lock);
    uint64_t n = p->dropped;
    pthread_mutex_unlock(&p->lock);
    return n;
}

/* ---- staged jobs ---------------------------------------------------------------------------- */

/* The staged jobs go to the workers; their room in the queue was taken when they were staged. */
static void hand_over_staged(struct pool *p)
{
    if (!p->staged_head)
        return;
    pthread_mutex_lock(&p->lock);
    enqueue_locked(p, p->staged_head, p->staged_tail, p->staged);
    pthread_mutex_unlock(&p->lock);
    p->staged_head = p->staged_tail = NULL;
    p->staged = 0;
}

/* Keeps the loop from blocking for I/O until the iteration's staged jobs have been seen to. */
static void stage_until_iteration_end(struct pool *p)
{
    if (p->staging)
        return;
    p->staging = true;
    uv_check_start(&p->stage_end, on_stage_end);
    uv_idle_start(&p->stage_nowait, on_stage_nowait);
}

int pool_stage(struct pool *p, struct job *job, unsigned cost)
{
    if (!p->started || !p->inline_budget)
        return pool_submit(p, job);
    if (p->staging_over || cost > p->inline_budget - p->staged_cost) {
        if (!p->staging_over) {
            p->staging_over = true; /* until the iteration ends */
            hand_over_staged(p);
            stage_until_iteration_end(p);
        }
        return pool_submit(p, job);
    }
    pthread_mutex_lock(&p->lock);
    bool refused = p->stopping || p->queued + p->staged >= p->depth;
    pthread_mutex_unlock(&p->lock);
    if (refused)
        return UV_EBUSY;
    job->next = NULL;
    if (p->staged_tail)
        p->staged_tail->next = job;
    else
        p->staged_head = job;
    p->staged_tail = job;
    p->staged++;
    p->staged_cost += cost;
    stage_until_iteration_end(p);
    return 0;
}

/* Nothing queued and a worker waiting: the loop thread would not take a core from a job. */
static bool workers_idle(struct pool *p)
{
    pthread_mutex_lock(&p->lock);
    bool idle = !p->head && p->running < (size_t)p->nworkers && !p->stopping;
    pthread_mutex_unlock(&p->lock);
    return idle;
}

/* Runs job on the loop thread, with the pool's own scratch, and completes it; a job cancelled
 * meanwhile is dropped as a worker would drop it. */
static void run_here(struct pool *p, struct job *job)
{
    job->next = NULL;
    job->dropped = atomic_load_explicit(&job->cancelled, memory_order_relaxed);
    if (job->dropped) {
        pthread_mutex_lock(&p->lock);
        p->dropped++;
        pthread_mutex_unlock(&p->lock);
    } else {
        p->inlined++;
        job->run(job, &p->own);
    }
    job->done(job);
}

/* Sees to the staged jobs: they run here if they are few enough for the budget (they are:
 * staging stops at it) and the workers are idle, else on the workers. A done() may stage
 * more: those are a new batch, seen to at once. */
static void end_staging(struct pool *p)
{
    for (;;) {
        p->staging_over = false;
        p->staged_cost = 0;
        if (!p->staged_head)
            break;
        if (!workers_idle(p)) {
            hand_over_staged(p);
            continue;
        }
        struct job *list = p->staged_head;
        p->staged_head = p->staged_tail = NULL;
        p->staged = 0;
        while (list) {
            struct job *next = list->next;
            run_here(p, list);
            list = next;
        }
    }
    p->staging = false;
    uv_check_stop(&p->stage_end);
    uv_idle_stop(&p->stage_nowait);
}

/* After the iteration's I/O callbacks: the reads that staged jobs have all been seen. */
static void on_stage_end(uv_check_t *h)
{
    end_staging(h->data);
}

/* An active idle handle makes the loop poll without blocking, so the check phase comes. It
 * runs at the start of an iteration: a budget passed after the last check (by a job staged
 * from a later check handle) is over, and this iteration's reads start a batch of their own.
 * Jobs staged by timers, already, are this iteration's. */
static void on_stage_nowait(uv_idle_t *h)
{
    struct pool *p = h->data;
    if (!p->staged_head) {
        p->staging_over = false;
        p->staged_cost = 0;
    }
}

size_t pool_depth(struct pool *p)
{
    pthread_mutex_lock(&p->lock);
    size_t n = p->queued + p->running;
    pthread_mutex_unlock(&p->lock);
    return n + p->staged;
}

static void free_worker(struct worker *w)
{
    pose_free(w->scratch_pose);
    image_close(&w->image);
    free(w->png_scratch.data);
    free(w->png_out.data);
}

void pool_shutdown(struct pool *p)
{
    if (!p->started)
        return;
    p->started = false;
    end_staging(p); /* staged jobs run or go to the workers */
    uv_close((uv_handle_t *)&p->stage_end, NULL);
    uv_close((uv_handle_t *)&p->stage_nowait, NULL);
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->nworkers; i++) {
        pthread_join(p->workers[i].thread, NULL);
        free_worker(&p->workers[i]);
    }
    drain(&p->async);
    free_worker(&p->own);
    uv_close((uv_handle_t *)&p->async, NULL);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->wake);
    free(p->workers);
    p->workers = NULL;
    p->nworkers = 0;
}

struct pose *worker_pose(struct worker *w, const struct armature *arm, uint64_t serial)
{
    if (w->pose_serial != serial || !w->scratch_pose) {
        pose_free(w->scratch_pose);
        w->scratch_pose = pose_new(arm);
        w->pose_serial = w->scratch_pose ? serial : 0;
    } else {
        pose_reset(w->scratch_pose);
    }
    return w->scratch_pose;
}
