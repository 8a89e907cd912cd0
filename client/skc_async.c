/* The asynchronous handle (skc.h, "asynchronous API"): an skc_client whose requests wait in
 * its output queue and whose replies go to callbacks, with I/O only when the caller's event
 * loop says the socket is ready (the loop is reached through the skc_async_events hooks).
 *
 * Callbacks may call back into the handle, even free it. So every entry point raises `busy`
 * while it runs; ending the connection (end) only closes the socket and records why, and the
 * handle's life ends in one place (finish), once the outermost entry point is done. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skc_int.h"

struct skc_async {
    skc_client *c;
    int connecting; /* the socket's connect is still in progress */
    int draining;   /* skc_async_disconnect: no new requests, finish after the last reply */
    int failed;     /* skc_async_connect failed: the handle only explains why */
    skc_async_events ev;
    int attached;
    int reading, writing; /* what the loop was last asked to watch */
    int64_t timer_at;     /* when the loop's timer fires (monotonic ms), -1 if it is not armed */
    uint32_t hello_id;
    int connect_told; /* the connect callback has run */
    skc_async_connect_cb on_connect;
    skc_async_disconnect_cb on_disconnect;
    void *data;
    int busy;   /* entry points (and finish) running */
    int ending; /* the connection is over: finish once busy drops to 0 */
    int end_err, end_status;
    char end_msg[SKC__ERRMSG];
};

skc_client *skc__async_client(struct skc_async *ac)
{
    return ac->c;
}

/* ---- the event loop's side ------------------------------------------------------------- */

/* For good: the loop forgets the descriptor (cleanup) before it is closed. */
static void detach(skc_async *ac)
{
    if (!ac->attached)
        return;
    skc_async_events ev = ac->ev;
    ac->attached = ac->reading = ac->writing = 0;
    ac->timer_at = -1;
    memset(&ac->ev, 0, sizeof ac->ev);
    ev.cleanup(ev.data);
}

void skc__async_closing(struct skc_async *ac)
{
    detach(ac);
}

/* Turns one interest on or off, calling the hook only on a change. */
static void set_interest(skc_async *ac, int *on, int want, void (*add)(void *), void (*del)(void *))
{
    if (*on == want)
        return;
    *on = want;
    (want ? add : del)(ac->ev.data);
}

/* Reading always (an end of stream must be seen); writing while the connect is in progress
 * or requests wait in the queue. */
static void watch(skc_async *ac)
{
    skc_client *c = ac->c;
    if (!ac->attached || ac->ending || c->fd < 0)
        return;
    int want_write = ac->connecting || c->out_off < c->out_len;
    set_interest(ac, &ac->reading, 1, ac->ev.add_read, ac->ev.del_read);
    set_interest(ac, &ac->writing, want_write, ac->ev.add_write, ac->ev.del_write);
}

/* The timer fires at `at` (monotonic ms), or never for -1. */
static void arm_at(skc_async *ac, int64_t at)
{
    if (!ac->attached || !ac->ev.set_timer || at == ac->timer_at)
        return;
    ac->timer_at = at;
    int64_t ms = at < 0 ? -1 : at - skc__deadline(0);
    ac->ev.set_timer(ac->ev.data, at < 0 ? -1L : ms < 0 ? 0L : (long)ms);
}

/* A new request's deadline: the timer must fire by then. Requests share one timeout, so a
 * later request never moves it earlier except when it is the only one. */
static void arm_for(skc_async *ac, int64_t deadline)
{
    if (deadline >= 0 && (ac->timer_at < 0 || deadline < ac->timer_at))
        arm_at(ac, deadline);
}

static int64_t next_deadline(const skc_client *c)
{
    int64_t at = -1;
    for (size_t i = 0; i < c->npend; i++)
        if (c->pend[i].deadline >= 0 && (at < 0 || c->pend[i].deadline < at))
            at = c->pend[i].deadline;
    return at;
}

/* ---- the end ---------------------------------------------------------------------------- */

/* The connection is over, with err (0: the caller ended it) and why. The socket closes now;
 * the callbacks run in finish. */
static void end(skc_async *ac, int err, const char *why)
{
    if (ac->ending)
        return;
    ac->ending = 1;
    ac->end_err = err;
    ac->end_status = err == SKC_ESERVER ? ac->c->status : 0;
    snprintf(ac->end_msg, sizeof ac->end_msg, "%s", why); /* why may be c's own message */
    if (ac->c->fd >= 0)
        skc__close(ac->c, "%s", ac->end_msg);
    detach(ac);
}

/* skc_async_errmsg and skc_async_status describe the end, for the last callbacks. */
static void tell_end(skc_async *ac)
{
    skc__fail(ac->c, ac->end_err, "%s", ac->end_msg);
    ac->c->status = ac->end_status;
}

static void deliver(skc_async *ac, const struct skc__pending *p, int err, skc_reply *r)
{
    if (p->cb)
        p->cb(ac, err, r, p->privdata);
    else
        skc_reply_free(r);
}

static void free_handle(skc_async *ac)
{
    ac->c->async = NULL;
    skc_free(ac->c);
    free(ac);
}

/* Newest first, so that the oldest is taken from the end first. */
static int newest_first(const void *a, const void *b)
{
    uint64_t x = ((const struct skc__pending *)a)->seq, y = ((const struct skc__pending *)b)->seq;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Every callback still owed: the connect callback if it has not run, each request's in the
 * order they were sent, the disconnect callback; then the handle goes. busy stays raised, so
 * nothing they call ends it again. */
static void finish(skc_async *ac)
{
    skc_client *c = ac->c;
    ac->busy++;
    if (!ac->connect_told) {
        ac->connect_told = 1;
        tell_end(ac);
        if (ac->on_connect)
            ac->on_connect(ac, ac->end_err ? ac->end_err : SKC_EIO);
    }
    if (c->npend > 1) {
        qsort(c->pend, c->npend, sizeof *c->pend, newest_first);
        skc__pend_rebuild(c); /* on failure lookups miss: nothing is sent any more */
    }
    while (c->npend) {
        struct skc__pending p = c->pend[c->npend - 1];
        skc__pend_remove(c, &c->pend[c->npend - 1]);
        free(p.f.body);
        /* the request whose reply was too big for max_reply is told so (skc_options) */
        int too_big = c->has_too_big && p.id == c->too_big_id;
        if (too_big)
            skc__fail(c, SKC_EPROTO, "%s", ac->end_msg);
        else
            skc__fail(c, SKC_EIO, "connection closed: %s", ac->end_msg);
        c->status = 0;
        deliver(ac, &p, too_big ? SKC_EPROTO : SKC_EIO, NULL);
    }
    tell_end(ac);
    if (ac->on_disconnect)
        ac->on_disconnect(ac, ac->end_err);
    free_handle(ac);
}

/* ---- entry points --------------------------------------------------------------------- */

static void enter(skc_async *ac)
{
    ac->busy++;
}

/* Last step of every entry point: a socket the I/O closed ends the connection, a disconnect
 * with nothing left in flight ends it cleanly; then either the end or fresh interests. */
static void leave(skc_async *ac)
{
    skc_client *c = ac->c;
    if (!ac->ending && c->fd < 0)
        end(ac, SKC_EIO, c->gone[0] ? c->gone : "connection closed");
    if (!ac->ending && ac->draining && c->npend == 0)
        end(ac, 0, "disconnected by the caller");
    if (--ac->busy == 0 && ac->ending) {
        finish(ac);
        return;
    }
    watch(ac);
    if (c->npend == 0)
        arm_at(ac, -1);
}

/* An I/O step failed and closed the socket: end with its error and the reason it closed. */
static void check_io(skc_async *ac, int rc)
{
    if (rc && rc != SKC_EAGAIN && ac->c->fd < 0 && !ac->ending)
        end(ac, rc, ac->c->gone);
}

/* 1 once the socket is connected; while connecting, asks the socket how its connect went. */
static int connected(skc_async *ac)
{
    if (!ac->connecting)
        return 1;
    int rc = skc__dial_done(ac->c);
    if (rc == 0)
        ac->connecting = 0;
    check_io(ac, rc < 0 ? rc : 0);
    return rc == 0;
}

/* Each handler does nothing when called from inside a callback (busy): a read there would
 * parse the input buffer under the feet of the read that called the callback. The loop calls
 * again, as the descriptor is still ready. */
void skc_async_handle_read(skc_async *ac)
{
    if (!ac || ac->ending || ac->busy)
        return;
    enter(ac);
    skc__begin(ac->c);
    if (connected(ac))
        check_io(ac, skc__read(ac->c));
    leave(ac);
}

void skc_async_handle_write(skc_async *ac)
{
    if (!ac || ac->ending || ac->busy)
        return;
    enter(ac);
    skc__begin(ac->c);
    if (connected(ac))
        check_io(ac, skc__flush(ac->c));
    leave(ac);
}

/* A request past its deadline, as expire found it: the callbacks it calls may change the
 * table, so entries are found again by id (and seq: the id may have been given out again). */
struct overdue {
    uint32_t id;
    uint64_t seq;
};

static int oldest_first(const void *a, const void *b)
{
    uint64_t x = ((const struct overdue *)a)->seq, y = ((const struct overdue *)b)->seq;
    return x < y ? -1 : x > y;
}

static int is_overdue(const struct skc__pending *p, int64_t now)
{
    return p->deadline >= 0 && p->deadline <= now;
}

/* Request p gets SKC_ETIMEOUT and is forgotten (a late reply is dropped). */
static void time_out(skc_async *ac, struct skc__pending *p)
{
    skc_client *c = ac->c;
    struct skc__pending got = *p;
    skc__forget(c, got.id);
    if (got.id == ac->hello_id)
        skc__fail(c, SKC_ETIMEOUT, "connecting to %s: no answer within %d ms", c->uri,
                  c->connect_timeout_ms);
    else
        skc__fail(c, SKC_ETIMEOUT, "no reply to request %u within %d ms", (unsigned)got.id,
                  c->io_timeout_ms);
    c->status = 0;
    deliver(ac, &got, SKC_ETIMEOUT, NULL);
}

/* Without memory for the list: the oldest overdue request a time, a scan of the table each. */
static void expire_one_by_one(skc_async *ac, int64_t now)
{
    skc_client *c = ac->c;
    while (!ac->ending) {
        struct skc__pending *oldest = NULL;
        for (size_t i = 0; i < c->npend; i++)
            if (is_overdue(&c->pend[i], now) && (!oldest || c->pend[i].seq < oldest->seq))
                oldest = &c->pend[i];
        if (!oldest)
            return;
        time_out(ac, oldest);
    }
}

/* Every request past its deadline gets SKC_ETIMEOUT, in the order they were sent; those not
 * yet begun to go out never will (the server would work for nobody). */
static void expire(skc_async *ac)
{
    skc_client *c = ac->c;
    int64_t now = skc__deadline(0);
    size_t n = 0;
    for (size_t i = 0; i < c->npend; i++)
        n += (size_t)is_overdue(&c->pend[i], now);
    if (!n)
        return;
    skc__unsend_overdue(c, now);
    struct overdue *list = malloc(n * sizeof *list);
    if (!list) {
        expire_one_by_one(ac, now);
        return;
    }
    for (size_t i = 0, k = 0; i < c->npend; i++)
        if (is_overdue(&c->pend[i], now))
            list[k++] = (struct overdue){c->pend[i].id, c->pend[i].seq};
    qsort(list, n, sizeof *list, oldest_first);
    for (size_t k = 0; k < n && !ac->ending; k++) {
        struct skc__pending *p = skc__pend_find(c, list[k].id);
        if (p && p->seq == list[k].seq)
            time_out(ac, p);
    }
    free(list);
}

void skc_async_handle_timeout(skc_async *ac)
{
    if (!ac || ac->ending || ac->busy)
        return;
    enter(ac);
    ac->timer_at = -1; /* it just fired */
    expire(ac);
    arm_at(ac, next_deadline(ac->c));
    leave(ac);
}

/* ---- replies ---------------------------------------------------------------------------- */

void skc__async_reply(struct skc_async *ac, struct skc__pending *p)
{
    skc_client *c = ac->c;
    skc_reply *r = NULL;
    int rc;
    skc__begin(c);
    if (p->done < 0)
        rc = skc__fail(c, p->done, "out of memory for the reply to request %u", (unsigned)p->id);
    else
        rc = skc__decode(c, p->op, &p->f, &r); /* takes the body */
    deliver(ac, p, rc, r);
}

/* HELLO's callback: the connection is up, or it ends with the error. */
static void hello_done(skc_async *ac, int err, skc_reply *r, void *privdata)
{
    (void)privdata;
    if (ac->ending)
        return; /* finish reports the end */
    if (err) {
        char why[SKC__ERRMSG];
        snprintf(why, sizeof why, "HELLO: %s", skc_errmsg(ac->c));
        end(ac, err, why);
        return;
    }
    skc__hello_reply(ac->c, r);
    skc_reply_free(r);
    ac->connect_told = 1;
    if (ac->on_connect)
        ac->on_connect(ac, 0);
}

/* The callback, data and deadline go on the entry skc__queue just added: the table's last. */
static void own_last(skc_async *ac, skc_async_cb cb, void *privdata, int timeout_ms)
{
    skc_client *c = ac->c;
    struct skc__pending *p = &c->pend[c->npend - 1];
    p->cb = cb;
    p->privdata = privdata;
    p->deadline = skc__deadline(timeout_ms);
    arm_for(ac, p->deadline);
}

/* follow: the next step of a request already accepted, which a disconnect under way lets
 * through (it waits for the replies of what was accepted). */
static int queue(struct skc_async *ac, uint8_t op, skc__encoder enc, const void *arg,
                 size_t size_hint, skc_async_cb cb, void *privdata, int follow)
{
    skc_client *c = ac->c;
    uint32_t id;
    if (ac->ending || (ac->draining && !follow))
        return skc__fail(c, SKC_EIO, "the connection is %s",
                         ac->ending ? "closed" : "being disconnected");
    int rc = skc__queue(c, op, enc, arg, size_hint, &id);
    if (rc)
        return rc;
    own_last(ac, cb, privdata, c->io_timeout_ms);
    watch(ac);
    return 0;
}

int skc__async_queue(struct skc_async *ac, uint8_t op, skc__encoder enc, const void *arg,
                     size_t size_hint, skc_async_cb cb, void *privdata)
{
    return queue(ac, op, enc, arg, size_hint, cb, privdata, 0);
}

int skc__async_follow(struct skc_async *ac, uint8_t op, skc__encoder enc, const void *arg,
                      size_t size_hint, skc_async_cb cb, void *privdata)
{
    return queue(ac, op, enc, arg, size_hint, cb, privdata, 1);
}

/* ---- the handle ------------------------------------------------------------------------- */

/* Connecting and HELLO queued; the rest happens in the loop. */
static int start(skc_async *ac, const skc_options *opt)
{
    skc_client *c = ac->c;
    int rc = skc__setup(c, opt);
    if (rc == 0)
        rc = skc__dial_start(c, c->uri);
    if (rc < 0)
        return rc;
    ac->connecting = rc == 1;
    if ((rc = skc__queue_hello(c, c->token, &ac->hello_id))) {
        skc__close(c, "could not queue HELLO");
        return rc;
    }
    own_last(ac, hello_done, NULL, c->connect_timeout_ms);
    return 0;
}

int skc_async_connect(skc_async **out, const skc_options *opt)
{
    if (!out)
        return SKC_EINVAL;
    skc_async *ac = calloc(1, sizeof *ac);
    skc_client *c = ac ? calloc(1, sizeof *c) : NULL;
    *out = c ? ac : NULL;
    if (!c) {
        free(ac);
        return SKC_ENOMEM;
    }
    ac->c = c;
    ac->timer_at = -1;
    c->async = ac;
    int rc = start(ac, opt);
    if (rc)
        ac->failed = ac->ending = 1;
    return rc;
}

int skc_async_set_connect_cb(skc_async *ac, skc_async_connect_cb cb)
{
    if (!ac)
        return SKC_EINVAL;
    ac->on_connect = cb;
    return 0;
}

int skc_async_set_disconnect_cb(skc_async *ac, skc_async_disconnect_cb cb)
{
    if (!ac)
        return SKC_EINVAL;
    ac->on_disconnect = cb;
    return 0;
}

void skc_async_set_data(skc_async *ac, void *data)
{
    if (ac)
        ac->data = data;
}

void *skc_async_data(const skc_async *ac)
{
    return ac ? ac->data : NULL;
}

int skc_async_attach(skc_async *ac, const skc_async_events *ev)
{
    if (!ac)
        return SKC_EINVAL;
    skc_client *c = ac->c;
    if (c->fd < 0) { /* why there is none: what the last call said, kept in the message */
        char why[SKC__ERRMSG];
        snprintf(why, sizeof why, "%s", c->gone[0] ? c->gone : skc_errmsg(c));
        skc__begin(c);
        return skc__fail(c, SKC_EINVAL, "no connection to attach: %s",
                         why[0] ? why : "skc_async_connect failed");
    }
    skc__begin(c);
    if (!ev || !ev->add_read || !ev->del_read || !ev->add_write || !ev->del_write || !ev->cleanup)
        return skc__fail(c, SKC_EINVAL,
                         "events need add_read, del_read, add_write, del_write "
                         "and cleanup");
    if (ac->attached || ac->ending)
        return skc__fail(c, SKC_EINVAL, "%s",
                         ac->ending ? "the connection is closed"
                                    : "an event loop is already attached");
    ac->ev = *ev;
    ac->attached = 1;
    watch(ac);
    arm_at(ac, next_deadline(c));
    return 0;
}

int skc_async_fd(const skc_async *ac)
{
    return ac ? ac->c->fd : -1;
}

int skc_async_disconnect(skc_async *ac)
{
    if (!ac)
        return SKC_EINVAL;
    if (ac->failed)
        return skc__fail(ac->c, SKC_EINVAL, "the connection never started: free the handle");
    ac->draining = 1;
    if (ac->ending || ac->c->npend)
        return 0; /* the last reply (or the end already under way) finishes it */
    end(ac, 0, "disconnected by the caller");
    if (ac->busy == 0)
        finish(ac);
    return 0;
}

void skc_async_free(skc_async *ac)
{
    if (!ac)
        return;
    if (ac->failed) {
        free_handle(ac);
        return;
    }
    end(ac, 0, "freed by the caller");
    if (ac->busy == 0)
        finish(ac);
}

const char *skc_async_errmsg(const skc_async *ac)
{
    return ac ? skc_errmsg(ac->c) : "no asynchronous handle (out of memory)";
}

int skc_async_status(const skc_async *ac)
{
    return ac ? ac->c->status : SKC_S_OK;
}

size_t skc_async_pending(const skc_async *ac)
{
    return ac ? ac->c->npend : 0;
}
