#include "pool.h"

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

int pool_init(struct pool *p, uv_loop_t *loop, int n, size_t depth)
{
    memset(p, 0, sizeof *p);
    p->depth = depth;
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

int pool_submit(struct pool *p, struct job *job)
{
    pthread_mutex_lock(&p->lock);
    if (p->stopping || p->queued >= p->depth) {
        pthread_mutex_unlock(&p->lock);
        return UV_EBUSY;
    }
    job->next = NULL;
    if (p->tail)
        p->tail->next = job;
    else
        p->head = job;
    p->tail = job;
    p->queued++;
    pthread_cond_signal(&p->wake);
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

bool pool_idle(struct pool *p)
{
    pthread_mutex_lock(&p->lock);
    bool idle = !p->head && p->running < (size_t)p->nworkers && !p->stopping;
    pthread_mutex_unlock(&p->lock);
    return idle;
}

void pool_run_inline(struct pool *p, struct job *job)
{
    job->next = NULL;
    job->dropped = false;
    p->inlined++;
    job->run(job, &p->own);
    job->done(job);
}

size_t pool_depth(struct pool *p)
{
    pthread_mutex_lock(&p->lock);
    size_t n = p->queued + p->running;
    pthread_mutex_unlock(&p->lock);
    return n;
}

static void free_worker(struct worker *w)
{
    pose_free(w->scratch_pose);
    image_close(&w->image);
    free(w->png_scratch.data);
}

void pool_shutdown(struct pool *p)
{
    if (!p->started)
        return;
    p->started = false;
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
