#include "preload.h"

#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "log.h"
#include "notify.h"
#include "pool.h"
#include "skp.h"

/* How soon a full queue is tried again: clients' jobs are short, and a preload that waits a
 * little for them is what keeps it from taking their place. */
#define RETRY_MS 20
/* What each file's progress gives systemd's start timeout: one file, however big. */
#define EXTEND_USEC (60 * 1000000ull)

static int is_skf(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return n >= 4 && !strcmp(e->d_name + n - 4, ".skf");
}

/* Byte order, not alphasort's strcoll: the same directory loads in the same order whatever
 * the locale. */
static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

/* The names, sorted, into p->names; -1 with the problem logged. */
static int read_names(struct preload *p)
{
    int n = scandir(p->dir, &p->names, is_skf, by_name);
    if (n < 0) {
        log_msg(LOG_ERROR, "--preload %s: cannot open: %s", p->dir, strerror(errno));
        return -1;
    }
    p->count = n;
    return 0;
}

static void free_names(struct preload *p)
{
    for (int i = 0; i < p->count; i++)
        free(p->names[i]);
    free(p->names);
    p->names = NULL;
}

/* The end, complete or stopped: the summary, and what the cache let go meanwhile. */
static void finish(struct preload *p, int rc)
{
    bool stopped = p->stopping;
    uint64_t evicted = p->d->cache->stats.evictions - p->evictions;
    log_msg(LOG_INFO, "preloaded %d armatures from %s", p->loaded, p->dir);
    if (stopped && p->next < p->count)
        log_msg(LOG_INFO, "preload %s: stopped, %d of %d files not loaded", p->dir,
                p->count - p->next, p->count);
    if (evicted)
        log_msg(LOG_WARN,
                "preload %s: the cache evicted %llu armatures meanwhile: --cache-mb %zu is too "
                "small to hold the preload",
                p->dir, (unsigned long long)evicted, p->d->cache->budget >> 20);
    free_names(p);
    p->running = false;
    uv_close((uv_handle_t *)&p->retry, NULL);
    if (!stopped)
        p->done(p->ctx, rc);
}

static void on_loaded(struct job *job);
static void on_retry(uv_timer_t *t);

/* The next file's job, ready for the pool; -1 when out of memory. */
static int prepare(struct preload *p)
{
    struct work *w = &p->work;
    size_t len = strlen(p->dir) + 1 + strlen(p->names[p->next]->d_name) + 1;
    memset(w, 0, sizeof *w);
    w->root_fd = -1; /* the operator's directory, not a client's path */
    if (!(w->path = malloc(len))) {
        log_msg(LOG_ERROR, "--preload %s: out of memory", p->dir);
        return -1;
    }
    snprintf(w->path, len, "%s/%s", p->dir, p->names[p->next]->d_name);
    dispatch_load_limits(p->d, w);
    w->job.run = work_load;
    w->job.done = on_loaded;
    return 0;
}

/* Starts the next file, or finishes; a full queue is tried again shortly. */
static void submit_next(struct preload *p)
{
    if (p->next == p->count) {
        finish(p, 0);
        return;
    }
    if (prepare(p)) {
        finish(p, -1);
        return;
    }
    if (pool_submit(p->d->pool, &p->work.job)) {
        work_release(&p->work);
        uv_timer_start(&p->retry, on_retry, RETRY_MS, 0);
        return;
    }
    p->in_flight = true;
}

/* Caches what the worker made, and logs it as the synchronous preload did; -1 when the cache
 * has no memory for the entry. */
static int cache_loaded(struct preload *p)
{
    struct work *w = &p->work;
    p->d->parses++;
    if (w->status) {
        log_msg(LOG_WARN, "preload %s: %s", w->path, w->msg);
        return 0;
    }
    struct cache_entry *ce = cache_add(p->d->cache, w->digest, w->loaded);
    w->loaded = NULL; /* the cache's now, or freed by it */
    if (!ce) {
        log_msg(LOG_ERROR, "preload %s: out of memory caching it", w->path);
        return -1;
    }
    cache_name(ce, w->path);
    char hex[65];
    skp_hex(hex, ce->id, 32);
    log_msg(LOG_INFO, "preloaded %s as %s", w->path, hex);
    cache_unref(p->d->cache, ce);
    p->loaded++;
    return 0;
}

static void on_loaded(struct job *job)
{
    struct preload *p = (struct preload *)((char *)job - offsetof(struct preload, work.job));
    int rc = cache_loaded(p);
    work_release(&p->work);
    p->in_flight = false;
    p->next++;
    if (rc || p->stopping) {
        finish(p, rc);
        return;
    }
    notify_progress(EXTEND_USEC, "preloading %d of %d", p->next, p->count);
    submit_next(p);
}

static void on_retry(uv_timer_t *t)
{
    submit_next(t->data);
}

int preload_start(struct preload *p, struct dispatch *d, const char *dir, preload_done_fn done,
                  void *ctx)
{
    memset(p, 0, sizeof *p);
    p->d = d;
    p->dir = dir;
    p->done = done;
    p->ctx = ctx;
    if (read_names(p))
        return -1;
    uv_timer_init(d->loop, &p->retry); /* cannot fail on Unix */
    p->retry.data = p;
    p->running = true;
    p->evictions = d->cache->stats.evictions;
    notify_progress(EXTEND_USEC, "preloading 0 of %d", p->count);
    /* The first file at the loop's first turn: done is never called from within this call. */
    uv_timer_start(&p->retry, on_retry, 0, 0);
    return 0;
}

bool preload_running(const struct preload *p)
{
    return p->running && !p->stopping;
}

void preload_stop(struct preload *p)
{
    if (!p->running || p->stopping)
        return;
    p->stopping = true;
    uv_timer_stop(&p->retry);
    if (!p->in_flight) /* else its completion finishes */
        finish(p, 0);
}
