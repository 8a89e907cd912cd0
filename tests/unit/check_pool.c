/* Evaluation pool (daemon/pool.c) on a real uv_loop_t: jobs run on worker threads, done() runs
 * exactly once on the loop thread and never from inside pool_submit, UV_EBUSY past the queue
 * depth (and done() never called for the refused job), pool_shutdown runs every queued job and
 * delivers every completion before it returns, the loop then closes with uv_loop_close() == 0,
 * one worker completes jobs in submission order, and worker_pose() reuses its scratch pose per
 * cache serial. Staged jobs (pool_stage) run on the loop thread at the end of the iteration
 * when their batch is within the budget and a worker is free, else on the workers; they hold
 * room in the queue, may be cancelled, and are run by pool_shutdown.
 *
 * Jobs that must stay queued block on a gate (a mutex + condition variable) that the test opens
 * later, so the queue fills deterministically. Everything a worker records in a job is read by
 * the loop thread only after done(): the pool's mutex orders the two. Run under TSan too. */
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

#include "engine/load.h"
#include "pool.h"
#include "testhelp.h"

#define MAX_JOBS 256
#define MARK 42.25 /* a value no fresh pose holds */

struct ctx;

struct tjob {
    struct job job; /* first: the pool hands back &job */
    struct ctx *x;
    int id;
    bool block;                 /* wait at the gate in run */
    const struct armature *arm; /* if set, run calls worker_pose(w, arm, serial) */
    uint64_t serial;
    /* Written by the worker in run. */
    int runs, run_seq;
    pthread_t run_thread;
    struct worker *worker;
    struct pool *worker_pool; /* worker->pool, read while the worker exists */
    /* What worker_pose returned, its armature, and its ik_rot[0].rot on return. */
    struct pose *pose;
    const struct armature *pose_arm;
    double pose_mark;
    /* Written on the loop thread in done. */
    int dones;
    pthread_t done_thread;
};

struct ctx {
    uv_loop_t loop;
    struct pool pool;
    pthread_t loop_thread;
    /* The gate, and what workers report through it. */
    pthread_mutex_t m;
    pthread_cond_t cv;
    bool open;
    int started, finished, run_seq;
    /* Loop thread only. */
    int ndone;
    int done_order[MAX_JOBS];
    void (*on_done)(struct tjob *);
    struct tjob *chain; /* chain_next: job i's done() submits chain[i + 1] */
    int chain_len;
    struct tjob *extra; /* submit_extra: submitted from job 0's done() */
    int extra_rc;
    bool extra_tried;
};

static void run_job(struct job *j, struct worker *w)
{
    struct tjob *t = (struct tjob *)j;
    struct ctx *x = t->x;
    t->run_thread = pthread_self();
    t->runs++;
    t->worker = w;
    t->worker_pool = w->pool;
    if (t->arm) {
        t->pose = worker_pose(w, t->arm, t->serial);
        t->pose_arm = t->pose ? t->pose->arm : NULL;
        if (t->pose) { /* see worker_pose_reuses_per_serial for the ik_rot mark */
            t->pose_mark = t->pose->ik_rot[0].rot;
            t->pose->ik_rot[0].rot = MARK;
        }
    }
    pthread_mutex_lock(&x->m);
    t->run_seq = x->run_seq++;
    x->started++;
    pthread_cond_broadcast(&x->cv);
    while (t->block && !x->open)
        pthread_cond_wait(&x->cv, &x->m);
    x->finished++;
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->m);
}

static void done_job(struct job *j)
{
    struct tjob *t = (struct tjob *)j;
    struct ctx *x = t->x;
    t->done_thread = pthread_self();
    t->dones++;
    if (x->ndone < MAX_JOBS)
        x->done_order[x->ndone] = t->id;
    x->ndone++;
    if (x->on_done)
        x->on_done(t);
}

/* A pool whose staged batches may cost up to budget on the loop thread (0: never). */
static void ctx_init_budget(struct ctx *x, int threads, size_t depth, unsigned budget)
{
    memset(x, 0, sizeof *x);
    x->loop_thread = pthread_self();
    pthread_mutex_init(&x->m, NULL);
    pthread_cond_init(&x->cv, NULL);
    ck_assert_int_eq(uv_loop_init(&x->loop), 0);
    ck_assert_int_eq(pool_init(&x->pool, &x->loop, threads, depth, budget), 0);
    ck_assert_int_eq(x->pool.nworkers, threads);
}

static void ctx_init(struct ctx *x, int threads, size_t depth)
{
    ctx_init_budget(x, threads, depth, 0);
}

static void job_init(struct tjob *t, struct ctx *x, int id, bool block)
{
    memset(t, 0, sizeof *t);
    t->x = x;
    t->id = id;
    t->block = block;
    t->job.run = run_job;
    t->job.done = done_job;
}

static void gate_open(struct ctx *x)
{
    pthread_mutex_lock(&x->m);
    x->open = true;
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->m);
}

/* Waits (without running the loop) until *counter reaches n. */
static void wait_for(struct ctx *x, const int *counter, int n)
{
    pthread_mutex_lock(&x->m);
    while (*counter < n)
        pthread_cond_wait(&x->cv, &x->m);
    pthread_mutex_unlock(&x->m);
}

/* Runs the loop until n completions have been delivered. */
static void run_until(struct ctx *x, int n)
{
    while (x->ndone < n)
        uv_run(&x->loop, UV_RUN_ONCE);
}

/* Shuts the pool down, lets the loop finish closing, and checks that it closes cleanly. */
static void finish(struct ctx *x)
{
    pool_shutdown(&x->pool);
    uv_run(&x->loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&x->loop), 0);
    pthread_mutex_destroy(&x->m);
    pthread_cond_destroy(&x->cv);
}

static void check_ran_once(struct ctx *x, const struct tjob *t)
{
    ck_assert_int_eq(t->runs, 1);
    ck_assert_int_eq(t->dones, 1);
    ck_assert(!pthread_equal(t->run_thread, x->loop_thread));
    ck_assert(pthread_equal(t->done_thread, x->loop_thread));
    ck_assert_ptr_nonnull(t->worker);
    ck_assert_ptr_eq(t->worker_pool, &x->pool);
}

/* t ran once on the loop thread, with the pool's own scratch. */
static void check_ran_here(struct ctx *x, const struct tjob *t)
{
    ck_assert_int_eq(t->runs, 1);
    ck_assert_int_eq(t->dones, 1);
    ck_assert(pthread_equal(t->run_thread, x->loop_thread));
    ck_assert(pthread_equal(t->done_thread, x->loop_thread));
    ck_assert_ptr_eq(t->worker, &x->pool.own);
    ck_assert_ptr_eq(t->worker_pool, &x->pool);
}

/* ====================================================================================== */
/* threads                                                                                 */

START_TEST(jobs_run_on_workers_done_on_loop_thread)
{
    enum { N = 64 };
    struct ctx x;
    ctx_init(&x, 4, N);
    struct tjob *jobs = calloc(N, sizeof *jobs);
    ck_assert_ptr_nonnull(jobs);
    for (int i = 0; i < N; i++) {
        job_init(&jobs[i], &x, i, false);
        ck_assert_int_eq(pool_submit(&x.pool, &jobs[i].job), 0);
    }
    run_until(&x, N);
    ck_assert_int_eq(x.ndone, N);
    for (int i = 0; i < N; i++) {
        check_ran_once(&x, &jobs[i]);
        /* The worker scratch handed to run is one of this pool's. */
        ck_assert(jobs[i].worker >= x.pool.workers && jobs[i].worker < x.pool.workers + 4);
        ck_assert(pthread_equal(jobs[i].run_thread, jobs[i].worker->thread));
    }
    ck_assert_uint_eq(pool_depth(&x.pool), 0);
    finish(&x);
    /* Shutting down delivers nothing twice. */
    ck_assert_int_eq(x.ndone, N);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(jobs[i].dones, 1);
    free(jobs);
}
END_TEST

START_TEST(done_is_never_called_from_submit)
{
    struct ctx x;
    ctx_init(&x, 1, 4);
    struct tjob t;
    job_init(&t, &x, 0, false);
    ck_assert_int_eq(pool_submit(&x.pool, &t.job), 0);
    ck_assert_int_eq(t.dones, 0);
    /* Even once the job has finished on its worker, done waits for the loop. */
    wait_for(&x, &x.finished, 1);
    ck_assert_int_eq(t.dones, 0);
    run_until(&x, 1);
    check_ran_once(&x, &t);
    finish(&x);
    ck_assert_int_eq(t.dones, 1);
}
END_TEST

/* A done() that submits follow-up work, as a stateful instance does with its next request. */
static void chain_next(struct tjob *t)
{
    struct ctx *x = t->x;
    if (t->id + 1 < x->chain_len)
        ck_assert_int_eq(pool_submit(&x->pool, &x->chain[t->id + 1].job), 0);
}

START_TEST(done_may_submit_more_work)
{
    enum { N = 20 };
    struct ctx x;
    ctx_init(&x, 2, 1);
    struct tjob jobs[N];
    for (int i = 0; i < N; i++)
        job_init(&jobs[i], &x, i, false);
    x.chain = jobs;
    x.chain_len = N;
    x.on_done = chain_next;
    ck_assert_int_eq(pool_submit(&x.pool, &jobs[0].job), 0);
    run_until(&x, N);
    for (int i = 0; i < N; i++) {
        check_ran_once(&x, &jobs[i]);
        ck_assert_int_eq(x.done_order[i], i);
    }
    finish(&x);
    ck_assert_int_eq(x.ndone, N);
}
END_TEST

/* ====================================================================================== */
/* queue bound                                                                             */

START_TEST(busy_when_queue_is_full)
{
    struct ctx x;
    ctx_init(&x, 1, 3);
    struct tjob jobs[5];
    for (int i = 0; i < 5; i++)
        job_init(&jobs[i], &x, i, true);
    ck_assert_int_eq(pool_submit(&x.pool, &jobs[0].job), 0);
    wait_for(&x, &x.started, 1); /* the only worker holds job 0 at the gate */
    for (int i = 1; i <= 3; i++)
        ck_assert_int_eq(pool_submit(&x.pool, &jobs[i].job), 0);
    ck_assert_uint_eq(pool_depth(&x.pool), 4); /* 1 running + 3 queued */

    /* The refused job belongs to the caller again at once: free it, and valgrind or ASan
     * reports any later touch by the pool. */
    struct tjob *refused = malloc(sizeof *refused);
    ck_assert_ptr_nonnull(refused);
    job_init(refused, &x, 99, false);
    ck_assert_int_eq(pool_submit(&x.pool, &refused->job), UV_EBUSY);
    ck_assert_int_eq(refused->runs, 0);
    ck_assert_int_eq(refused->dones, 0);
    free(refused);
    ck_assert_int_eq(pool_submit(&x.pool, &jobs[4].job), UV_EBUSY);
    ck_assert_uint_eq(pool_depth(&x.pool), 4);

    gate_open(&x);
    run_until(&x, 4);
    for (int i = 0; i < 4; i++) {
        check_ran_once(&x, &jobs[i]);
        ck_assert_int_eq(x.done_order[i], i);
    }
    ck_assert_int_eq(jobs[4].runs, 0);
    ck_assert_int_eq(jobs[4].dones, 0);
    ck_assert_uint_eq(pool_depth(&x.pool), 0);

    /* Room again: the job refused earlier is accepted now. */
    ck_assert_int_eq(pool_submit(&x.pool, &jobs[4].job), 0);
    run_until(&x, 5);
    check_ran_once(&x, &jobs[4]);
    finish(&x);
    ck_assert_int_eq(x.ndone, 5); /* nothing for the refused jobs, ever */
}
END_TEST

START_TEST(depth_bounds_queued_jobs_not_running_ones)
{
    struct ctx x;
    ctx_init(&x, 2, 2);
    struct tjob jobs[5];
    for (int i = 0; i < 5; i++)
        job_init(&jobs[i], &x, i, true);
    ck_assert_int_eq(pool_submit(&x.pool, &jobs[0].job), 0);
    ck_assert_int_eq(pool_submit(&x.pool, &jobs[1].job), 0);
    wait_for(&x, &x.started, 2); /* both workers at the gate, queue empty */
    ck_assert_int_eq(pool_submit(&x.pool, &jobs[2].job), 0);
    ck_assert_int_eq(pool_submit(&x.pool, &jobs[3].job), 0);
    ck_assert_int_eq(pool_submit(&x.pool, &jobs[4].job), UV_EBUSY);
    ck_assert_uint_eq(pool_depth(&x.pool), 4);
    gate_open(&x);
    run_until(&x, 4);
    for (int i = 0; i < 4; i++)
        check_ran_once(&x, &jobs[i]);
    finish(&x);
    ck_assert_int_eq(jobs[4].runs, 0);
    ck_assert_int_eq(jobs[4].dones, 0);
    ck_assert_int_eq(x.ndone, 4);
}
END_TEST

/* ====================================================================================== */
/* shutdown                                                                                */

/* Opens the gate once pool_shutdown has begun, so that every job but the running one is
 * still queued when the pool stops taking work. */
static void *open_when_stopping(void *arg)
{
    struct ctx *x = arg;
    for (;;) {
        pthread_mutex_lock(&x->pool.lock);
        bool stopping = x->pool.stopping;
        pthread_mutex_unlock(&x->pool.lock);
        if (stopping)
            break;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    gate_open(x);
    return NULL;
}

START_TEST(shutdown_runs_queued_jobs_and_delivers_every_done)
{
    enum { N = 10 };
    struct ctx x;
    ctx_init(&x, 1, 16);
    struct tjob jobs[N];
    for (int i = 0; i < N; i++)
        job_init(&jobs[i], &x, i, true);
    ck_assert_int_eq(pool_submit(&x.pool, &jobs[0].job), 0);
    wait_for(&x, &x.started, 1);
    for (int i = 1; i < N; i++)
        ck_assert_int_eq(pool_submit(&x.pool, &jobs[i].job), 0);
    ck_assert_uint_eq(pool_depth(&x.pool), N); /* 1 running, N - 1 queued */
    ck_assert_int_eq(x.ndone, 0);

    pthread_t opener;
    ck_assert_int_eq(pthread_create(&opener, NULL, open_when_stopping, &x), 0);
    pool_shutdown(&x.pool);
    ck_assert_int_eq(pthread_join(opener, NULL), 0);
    /* pool_shutdown returns with every queued job run and every done() delivered, on this
     * thread, oldest first. */
    ck_assert_int_eq(x.ndone, N);
    for (int i = 0; i < N; i++) {
        check_ran_once(&x, &jobs[i]);
        ck_assert_int_eq(x.done_order[i], i);
    }
    uv_run(&x.loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&x.loop), 0);
    ck_assert_int_eq(x.ndone, N);
    pthread_mutex_destroy(&x.m);
    pthread_cond_destroy(&x.cv);
}
END_TEST

START_TEST(shutdown_delivers_finished_but_undrained_jobs_once)
{
    enum { N = 8 };
    struct ctx x;
    ctx_init(&x, 3, N);
    struct tjob jobs[N];
    for (int i = 0; i < N; i++) {
        job_init(&jobs[i], &x, i, false);
        ck_assert_int_eq(pool_submit(&x.pool, &jobs[i].job), 0);
    }
    /* All finished and their async sends pending; the loop has not run. */
    wait_for(&x, &x.finished, N);
    ck_assert_int_eq(x.ndone, 0);
    pool_shutdown(&x.pool);
    ck_assert_int_eq(x.ndone, N);
    /* The pending async wakeup must not deliver anything again. */
    uv_run(&x.loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&x.loop), 0);
    ck_assert_int_eq(x.ndone, N);
    for (int i = 0; i < N; i++)
        check_ran_once(&x, &jobs[i]);
    pthread_mutex_destroy(&x.m);
    pthread_cond_destroy(&x.cv);
}
END_TEST

/* A done() delivered by pool_shutdown tries to queue more work, as an instance's next
 * request would: the stopping pool refuses it, and the refused job never completes. */
static void submit_extra(struct tjob *t)
{
    struct ctx *x = t->x;
    if (t->id != 0 || x->extra_tried)
        return;
    x->extra_tried = true;
    x->extra_rc = pool_submit(&x->pool, &x->extra->job);
}

START_TEST(submit_during_shutdown_is_refused)
{
    struct ctx x;
    ctx_init(&x, 1, 4);
    struct tjob jobs[3], extra;
    for (int i = 0; i < 3; i++)
        job_init(&jobs[i], &x, i, true);
    job_init(&extra, &x, 50, false);
    x.extra = &extra;
    x.on_done = submit_extra;
    ck_assert_int_eq(pool_submit(&x.pool, &jobs[0].job), 0);
    wait_for(&x, &x.started, 1);
    ck_assert_int_eq(pool_submit(&x.pool, &jobs[1].job), 0);
    ck_assert_int_eq(pool_submit(&x.pool, &jobs[2].job), 0);

    pthread_t opener;
    ck_assert_int_eq(pthread_create(&opener, NULL, open_when_stopping, &x), 0);
    pool_shutdown(&x.pool);
    ck_assert_int_eq(pthread_join(opener, NULL), 0);
    ck_assert(x.extra_tried);
    ck_assert_int_eq(x.extra_rc, UV_EBUSY);
    ck_assert_int_eq(x.ndone, 3);
    uv_run(&x.loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&x.loop), 0);
    ck_assert_int_eq(extra.runs, 0);
    ck_assert_int_eq(extra.dones, 0);
    for (int i = 0; i < 3; i++)
        check_ran_once(&x, &jobs[i]);
    pthread_mutex_destroy(&x.m);
    pthread_cond_destroy(&x.cv);
}
END_TEST

START_TEST(shutdown_of_idle_pool_closes_loop)
{
    struct ctx x;
    ctx_init(&x, 4, 8);
    finish(&x);
    ck_assert_int_eq(x.ndone, 0);
}
END_TEST

/* ====================================================================================== */
/* ordering                                                                                */

START_TEST(one_worker_completes_in_submission_order)
{
    enum { N = 100 };
    struct ctx x;
    ctx_init(&x, 1, N);
    struct tjob *jobs = calloc(N, sizeof *jobs);
    ck_assert_ptr_nonnull(jobs);
    for (int i = 0; i < N; i++) {
        job_init(&jobs[i], &x, i, false);
        ck_assert_int_eq(pool_submit(&x.pool, &jobs[i].job), 0);
        if (i % 7 == 0)
            uv_run(&x.loop, UV_RUN_NOWAIT); /* deliver some as we go, in varied batches */
    }
    run_until(&x, N);
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(jobs[i].run_seq, i);
        ck_assert_int_eq(x.done_order[i], i);
        check_ran_once(&x, &jobs[i]);
    }
    finish(&x);
    free(jobs);
}
END_TEST

START_TEST(one_coalesced_batch_is_delivered_oldest_first)
{
    enum { N = 50 };
    struct ctx x;
    ctx_init(&x, 1, N);
    struct tjob jobs[N];
    for (int i = 0; i < N; i++)
        job_init(&jobs[i], &x, i, true);
    ck_assert_int_eq(pool_submit(&x.pool, &jobs[0].job), 0);
    wait_for(&x, &x.started, 1);
    for (int i = 1; i < N; i++)
        ck_assert_int_eq(pool_submit(&x.pool, &jobs[i].job), 0);
    gate_open(&x);
    /* Every job finishes before the loop looks: one drain sees the whole done list. */
    wait_for(&x, &x.finished, N);
    run_until(&x, N);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(x.done_order[i], i);
    finish(&x);
}
END_TEST

/* ====================================================================================== */
/* worker_pose                                                                             */

static struct armature *load_arm(int bones)
{
    char json[1024], *p = json;
    p += sprintf(p, "{\"bones\":[");
    for (int i = 0; i < bones; i++)
        p +=
            sprintf(p, "%s{\"id\":%d,\"name\":\"b%d\",\"parent_id\":%d,\"pos\":{\"x\":%d,\"y\":0}}",
                    i ? "," : "", i, i, i - 1, 10 + i);
    sprintf(p, "]}");
    struct armature *arm = NULL;
    struct eng_error err = {0};
    int rc = th_load(json, 0, &arm, &err);
    ck_assert_msg(rc == 0, "armature did not load: %s", err.msg);
    return arm;
}

START_TEST(worker_pose_reuses_per_serial)
{
    struct armature *a = load_arm(1), *b = load_arm(3);
    struct worker w;
    memset(&w, 0, sizeof w);

    struct pose *p1 = worker_pose(&w, a, 1);
    ck_assert_ptr_nonnull(p1);
    ck_assert_ptr_eq(p1->arm, a);
    ck_assert_uint_eq(w.pose_serial, 1);
    ck_assert_double_eq(p1->local[0].pos.x, a->bones[0].start.pos.x);

    /* Same serial: the same pose, reset to the file's values. Pointer equality alone would
     * not prove reuse (free + calloc can return the same block), so mark ik_rot: pose_new
     * callocs it and pose_reset leaves it alone (it is read only where ik_has is set). */
    p1->local[0].pos.x = 1234.5;
    p1->ik_rot[0].rot = MARK;
    struct pose *again = worker_pose(&w, a, 1);
    ck_assert_ptr_eq(again, p1);
    ck_assert_double_eq(again->local[0].pos.x, a->bones[0].start.pos.x);
    ck_assert_double_eq(again->ik_rot[0].rot, MARK);

    /* Another serial: a pose made for the other armature. */
    struct pose *p2 = worker_pose(&w, b, 2);
    ck_assert_ptr_nonnull(p2);
    ck_assert_ptr_eq(p2->arm, b);
    ck_assert_uint_eq(w.pose_serial, 2);
    ck_assert_double_eq(p2->local[2].pos.x, b->bones[2].start.pos.x);
    ck_assert_ptr_eq(worker_pose(&w, b, 2), p2);

    /* The same armature under a new serial (a reload at the same address): a new pose. */
    struct pose *p3 = worker_pose(&w, a, 3);
    ck_assert_ptr_nonnull(p3);
    ck_assert_ptr_eq(p3->arm, a);
    ck_assert_uint_eq(w.pose_serial, 3);
    p3->ik_rot[0].rot = MARK;
    p3 = worker_pose(&w, a, 5);
    ck_assert_ptr_eq(p3->arm, a);
    ck_assert_uint_eq(w.pose_serial, 5);
    ck_assert_double_eq(p3->ik_rot[0].rot, 0.0);

    /* An armature freed and another loaded, perhaps at the same address: the serial, not the
     * pointer, decides. */
    armature_free(b);
    struct armature *c = load_arm(3);
    struct pose *p4 = worker_pose(&w, c, 4);
    ck_assert_ptr_eq(p4->arm, c);
    ck_assert_uint_eq(p4->arm->bone_count, 3);
    ck_assert_double_eq(p4->local[2].pos.x, c->bones[2].start.pos.x);

    pose_free(w.scratch_pose);
    armature_free(a);
    armature_free(c);
}
END_TEST

START_TEST(worker_pose_in_pool_jobs)
{
    struct armature *a = load_arm(2), *b = load_arm(4);
    struct ctx x;
    ctx_init(&x, 1, 8);
    const struct armature *arms[5] = {a, a, b, b, a};
    const uint64_t serials[5] = {7, 7, 8, 8, 7};
    struct tjob jobs[5];
    for (int i = 0; i < 5; i++) {
        job_init(&jobs[i], &x, i, false);
        jobs[i].arm = arms[i];
        jobs[i].serial = serials[i];
        ck_assert_int_eq(pool_submit(&x.pool, &jobs[i].job), 0);
    }
    run_until(&x, 5);
    for (int i = 0; i < 5; i++) {
        check_ran_once(&x, &jobs[i]);
        ck_assert_ptr_eq(jobs[i].worker, &x.pool.workers[0]);
        ck_assert_ptr_nonnull(jobs[i].pose);
        ck_assert_ptr_eq(jobs[i].pose_arm, arms[i]);
    }
    ck_assert_ptr_eq(jobs[1].pose, jobs[0].pose);
    ck_assert_ptr_eq(jobs[3].pose, jobs[2].pose);
    /* Reused for the same serial, made anew (calloc'd) when the serial changes. */
    const double marks[5] = {0.0, MARK, 0.0, MARK, 0.0};
    for (int i = 0; i < 5; i++)
        ck_assert_double_eq(jobs[i].pose_mark, marks[i]);
    /* The worker's last pose is freed by pool_shutdown (valgrind checks). */
    finish(&x);
    armature_free(a);
    armature_free(b);
}
END_TEST

/* ====================================================================================== */
/* staged jobs                                                                             */

START_TEST(staged_jobs_within_budget_run_on_the_loop_thread)
{
    struct ctx x;
    ctx_init_budget(&x, 2, 8, 10);
    struct tjob jobs[3];
    for (int i = 0; i < 3; i++) {
        job_init(&jobs[i], &x, i, false);
        ck_assert_int_eq(pool_stage(&x.pool, &jobs[i].job, 3), 0); /* 9 of 10 */
    }
    /* Nothing runs inside pool_stage: the batch waits for the end of the iteration. */
    ck_assert_int_eq(x.ndone, 0);
    ck_assert_int_eq(jobs[0].runs, 0);
    ck_assert_uint_eq(pool_depth(&x.pool), 3);
    run_until(&x, 3);
    for (int i = 0; i < 3; i++) {
        check_ran_here(&x, &jobs[i]);
        ck_assert_int_eq(x.done_order[i], i);
    }
    ck_assert_uint_eq(x.pool.inlined, 3);
    ck_assert_uint_eq(pool_depth(&x.pool), 0);
    finish(&x);
    ck_assert_int_eq(x.ndone, 3);
}
END_TEST

/* The job that passes the budget takes the batch staged before it to the workers, and so go
 * the jobs after it in the same iteration. The next iteration has a budget of its own. */
START_TEST(a_batch_past_the_budget_goes_to_the_workers)
{
    struct ctx x;
    ctx_init_budget(&x, 2, 8, 10);
    struct tjob jobs[5];
    for (int i = 0; i < 5; i++)
        job_init(&jobs[i], &x, i, false);
    ck_assert_int_eq(pool_stage(&x.pool, &jobs[0].job, 4), 0);
    ck_assert_int_eq(pool_stage(&x.pool, &jobs[1].job, 4), 0);
    ck_assert_int_eq(pool_stage(&x.pool, &jobs[2].job, 4), 0); /* 12 > 10 */
    ck_assert_int_eq(pool_stage(&x.pool, &jobs[3].job, 1), 0); /* would fit, but follows */
    ck_assert_int_eq(x.ndone, 0);
    run_until(&x, 4);
    for (int i = 0; i < 4; i++)
        check_ran_once(&x, &jobs[i]);
    ck_assert_uint_eq(x.pool.inlined, 0);
    ck_assert_int_eq(pool_stage(&x.pool, &jobs[4].job, 10), 0);
    run_until(&x, 5);
    check_ran_here(&x, &jobs[4]);
    finish(&x);
}
END_TEST

/* A job of more than the whole budget is never staged. */
START_TEST(a_job_past_the_budget_goes_to_the_workers)
{
    struct ctx x;
    ctx_init_budget(&x, 1, 8, 10);
    struct tjob t;
    job_init(&t, &x, 0, false);
    ck_assert_int_eq(pool_stage(&x.pool, &t.job, 11), 0);
    ck_assert_int_eq(t.dones, 0);
    run_until(&x, 1);
    check_ran_once(&x, &t);
    finish(&x);
}
END_TEST

/* With no worker free, the loop thread does not take a core from them: the staged jobs wait in
 * the queue. */
START_TEST(staged_jobs_queue_while_the_workers_are_busy)
{
    struct ctx x;
    ctx_init_budget(&x, 1, 8, 10);
    struct tjob jobs[3];
    job_init(&jobs[0], &x, 0, true);
    ck_assert_int_eq(pool_submit(&x.pool, &jobs[0].job), 0);
    wait_for(&x, &x.started, 1);
    for (int i = 1; i < 3; i++) {
        job_init(&jobs[i], &x, i, false);
        ck_assert_int_eq(pool_stage(&x.pool, &jobs[i].job, 1), 0);
    }
    uv_run(&x.loop, UV_RUN_NOWAIT); /* the iteration ends: the batch is queued */
    ck_assert_int_eq(x.ndone, 0);
    ck_assert_uint_eq(pool_depth(&x.pool), 3);
    gate_open(&x);
    run_until(&x, 3);
    for (int i = 0; i < 3; i++) {
        check_ran_once(&x, &jobs[i]);
        ck_assert_int_eq(x.done_order[i], i);
    }
    ck_assert_uint_eq(x.pool.inlined, 0);
    finish(&x);
}
END_TEST

START_TEST(a_staged_job_cancelled_is_dropped_and_done)
{
    struct ctx x;
    ctx_init_budget(&x, 1, 8, 10);
    struct tjob jobs[2];
    for (int i = 0; i < 2; i++) {
        job_init(&jobs[i], &x, i, false);
        ck_assert_int_eq(pool_stage(&x.pool, &jobs[i].job, 1), 0);
    }
    atomic_store(&jobs[0].job.cancelled, true);
    run_until(&x, 2);
    ck_assert_int_eq(jobs[0].runs, 0);
    ck_assert_int_eq(jobs[0].dones, 1);
    ck_assert(jobs[0].job.dropped);
    check_ran_here(&x, &jobs[1]);
    ck_assert(!jobs[1].job.dropped);
    ck_assert_uint_eq(pool_dropped(&x.pool), 1);
    ck_assert_uint_eq(x.pool.inlined, 1);
    finish(&x);
}
END_TEST

/* Staged jobs hold their room in the queue: past the depth, staging and submitting are both
 * refused, and done() never comes for the refused job. */
START_TEST(staged_jobs_count_toward_the_depth)
{
    struct ctx x;
    ctx_init_budget(&x, 1, 2, 100);
    struct tjob jobs[4];
    for (int i = 0; i < 4; i++)
        job_init(&jobs[i], &x, i, false);
    ck_assert_int_eq(pool_stage(&x.pool, &jobs[0].job, 1), 0);
    ck_assert_int_eq(pool_stage(&x.pool, &jobs[1].job, 1), 0);
    ck_assert_int_eq(pool_stage(&x.pool, &jobs[2].job, 1), UV_EBUSY);
    ck_assert_int_eq(pool_submit(&x.pool, &jobs[3].job), UV_EBUSY);
    run_until(&x, 2);
    ck_assert_int_eq(jobs[2].dones + jobs[3].dones, 0);
    ck_assert_int_eq(pool_stage(&x.pool, &jobs[2].job, 1), 0);
    run_until(&x, 3);
    check_ran_here(&x, &jobs[2]);
    finish(&x);
    ck_assert_int_eq(x.ndone, 3);
}
END_TEST

/* A done() of a job run on the loop thread stages another: a new batch, run in turn without
 * waiting for I/O. (No done() of the daemon's does this today; the pool must not hang or drop
 * it if one does.) */
static void stage_next(struct tjob *t)
{
    struct ctx *x = t->x;
    if (t->id + 1 < x->chain_len)
        ck_assert_int_eq(pool_stage(&x->pool, &x->chain[t->id + 1].job, 5), 0);
}

START_TEST(a_done_may_stage_more)
{
    enum { N = 10 };
    struct ctx x;
    ctx_init_budget(&x, 1, 1, 5);
    struct tjob jobs[N];
    for (int i = 0; i < N; i++)
        job_init(&jobs[i], &x, i, false);
    x.chain = jobs;
    x.chain_len = N;
    x.on_done = stage_next;
    ck_assert_int_eq(pool_stage(&x.pool, &jobs[0].job, 5), 0);
    run_until(&x, N);
    for (int i = 0; i < N; i++) {
        check_ran_here(&x, &jobs[i]);
        ck_assert_int_eq(x.done_order[i], i);
    }
    finish(&x);
}
END_TEST

/* pool_shutdown runs what is staged and delivers it before it returns. */
START_TEST(shutdown_runs_staged_jobs)
{
    struct ctx x;
    ctx_init_budget(&x, 2, 8, 10);
    struct tjob jobs[2];
    for (int i = 0; i < 2; i++) {
        job_init(&jobs[i], &x, i, false);
        ck_assert_int_eq(pool_stage(&x.pool, &jobs[i].job, 1), 0);
    }
    pool_shutdown(&x.pool);
    ck_assert_int_eq(x.ndone, 2);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(jobs[i].runs, 1);
    uv_run(&x.loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&x.loop), 0);
    pthread_mutex_destroy(&x.m);
    pthread_cond_destroy(&x.cv);
}
END_TEST

/* Without a budget nothing runs on the loop thread. */
START_TEST(no_budget_no_job_on_the_loop_thread)
{
    struct ctx x;
    ctx_init(&x, 1, 8);
    struct tjob t;
    job_init(&t, &x, 0, false);
    ck_assert_int_eq(pool_stage(&x.pool, &t.job, 1), 0);
    ck_assert_int_eq(t.dones, 0);
    run_until(&x, 1);
    check_ran_once(&x, &t);
    finish(&x);
}
END_TEST

/* Jobs staged outside the poll phase: from a prepare callback (as a timer's would be, before the
 * loop polls) and from a check callback that runs after the pool's. The loop must not block
 * for I/O that never comes (Check's timeout fails the test if it does), and each job runs here. */
struct phase_stager {
    struct ctx *x;
    struct tjob *jobs;
    int n, staged;
    unsigned cost;
};

static void stage_one(struct phase_stager *ps)
{
    if (ps->staged < ps->n) {
        ck_assert_int_eq(pool_stage(&ps->x->pool, &ps->jobs[ps->staged].job, ps->cost), 0);
        ps->staged++;
    }
}

static void stage_in_prepare(uv_prepare_t *h)
{
    stage_one(h->data);
}

static void stage_in_check(uv_check_t *h)
{
    stage_one(h->data);
}

START_TEST(jobs_staged_before_the_poll_do_not_wait_for_io)
{
    struct ctx x;
    ctx_init_budget(&x, 1, 8, 10);
    struct tjob jobs[2];
    for (int i = 0; i < 2; i++)
        job_init(&jobs[i], &x, i, false);
    struct phase_stager ps = {&x, jobs, 2, 0, 1};
    uv_prepare_t prep;
    ck_assert_int_eq(uv_prepare_init(&x.loop, &prep), 0);
    prep.data = &ps;
    uv_prepare_start(&prep, stage_in_prepare);
    run_until(&x, 2);
    for (int i = 0; i < 2; i++)
        check_ran_here(&x, &jobs[i]);
    uv_close((uv_handle_t *)&prep, NULL);
    finish(&x);
}
END_TEST

START_TEST(jobs_staged_after_the_pools_check_do_not_wait_for_io)
{
    struct ctx x;
    ctx_init_budget(&x, 1, 8, 10);
    struct tjob first, jobs[2];
    job_init(&first, &x, 100, false);
    for (int i = 0; i < 2; i++)
        job_init(&jobs[i], &x, i, false);
    /* libuv runs the check handle started last first: this one, started before the pool's
     * (staged below), runs after it. */
    struct phase_stager ps = {&x, jobs, 2, 0, 1};
    uv_check_t late;
    ck_assert_int_eq(uv_check_init(&x.loop, &late), 0);
    late.data = &ps;
    uv_check_start(&late, stage_in_check);
    ck_assert_int_eq(pool_stage(&x.pool, &first.job, 1), 0);
    run_until(&x, 3);
    check_ran_here(&x, &first);
    for (int i = 0; i < 2; i++)
        check_ran_here(&x, &jobs[i]);
    uv_close((uv_handle_t *)&late, NULL);
    finish(&x);
}
END_TEST

/* A budget passed after the pool's check (by a job staged from a later check handle) ends with
 * its iteration: a small job staged by the next iteration's I/O (here the pool's own
 * completion of the big job, in the poll phase) runs here again. */
static struct tjob *next_small;

static void stage_small_after_big(struct tjob *t)
{
    if (t->id == 1)
        ck_assert_int_eq(pool_stage(&t->x->pool, &next_small->job, 1), 0);
}

START_TEST(a_budget_passed_after_the_check_ends_with_its_iteration)
{
    struct ctx x;
    ctx_init_budget(&x, 1, 8, 10);
    struct tjob first, big, small;
    job_init(&first, &x, 0, false);
    job_init(&big, &x, 1, false);
    job_init(&small, &x, 2, false);
    next_small = &small;
    x.on_done = stage_small_after_big;
    struct phase_stager ps = {&x, &big, 1, 0, 11}; /* more than the whole budget */
    uv_check_t late;
    ck_assert_int_eq(uv_check_init(&x.loop, &late), 0);
    late.data = &ps;
    uv_check_start(&late, stage_in_check);
    ck_assert_int_eq(pool_stage(&x.pool, &first.job, 1), 0);
    run_until(&x, 1); /* first ran here; then big passed the budget and went to the worker */
    ck_assert_int_eq(ps.staged, 1);
    uv_check_stop(&late);
    /* Once the worker has handed big back (its completion is posted under the pool's lock, as
     * pool_depth reads it), the next iteration sees it in its poll phase. */
    wait_for(&x, &x.finished, 1);
    while (pool_depth(&x.pool) > 0)
        sched_yield();
    run_until(&x, 3);
    check_ran_once(&x, &big);
    check_ran_here(&x, &small);
    uv_close((uv_handle_t *)&late, NULL);
    finish(&x);
}
END_TEST

static Suite *pool_suite(void)
{
    Suite *s = suite_create("pool");
    TCase *tc = tcase_create("threads");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, jobs_run_on_workers_done_on_loop_thread);
    tcase_add_test(tc, done_is_never_called_from_submit);
    tcase_add_test(tc, done_may_submit_more_work);
    suite_add_tcase(s, tc);

    tc = tcase_create("queue bound");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, busy_when_queue_is_full);
    tcase_add_test(tc, depth_bounds_queued_jobs_not_running_ones);
    suite_add_tcase(s, tc);

    tc = tcase_create("shutdown");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, shutdown_runs_queued_jobs_and_delivers_every_done);
    tcase_add_test(tc, shutdown_delivers_finished_but_undrained_jobs_once);
    tcase_add_test(tc, submit_during_shutdown_is_refused);
    tcase_add_test(tc, shutdown_of_idle_pool_closes_loop);
    suite_add_tcase(s, tc);

    tc = tcase_create("ordering");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, one_worker_completes_in_submission_order);
    tcase_add_test(tc, one_coalesced_batch_is_delivered_oldest_first);
    suite_add_tcase(s, tc);

    tc = tcase_create("staged");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, staged_jobs_within_budget_run_on_the_loop_thread);
    tcase_add_test(tc, a_batch_past_the_budget_goes_to_the_workers);
    tcase_add_test(tc, a_job_past_the_budget_goes_to_the_workers);
    tcase_add_test(tc, staged_jobs_queue_while_the_workers_are_busy);
    tcase_add_test(tc, a_staged_job_cancelled_is_dropped_and_done);
    tcase_add_test(tc, staged_jobs_count_toward_the_depth);
    tcase_add_test(tc, a_done_may_stage_more);
    tcase_add_test(tc, shutdown_runs_staged_jobs);
    tcase_add_test(tc, no_budget_no_job_on_the_loop_thread);
    tcase_add_test(tc, jobs_staged_before_the_poll_do_not_wait_for_io);
    tcase_add_test(tc, jobs_staged_after_the_pools_check_do_not_wait_for_io);
    tcase_add_test(tc, a_budget_passed_after_the_check_ends_with_its_iteration);
    suite_add_tcase(s, tc);

    tc = tcase_create("worker_pose");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, worker_pose_reuses_per_serial);
    tcase_add_test(tc, worker_pose_in_pool_jobs);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(pool_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
