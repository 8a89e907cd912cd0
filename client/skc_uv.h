/* libskc on a libuv loop: skc_uv_attach(ac, loop) drives an skc_async handle from loop, with a
 * uv_poll_t on its socket and a uv_timer_t for its timeouts.
 *
 * Header-only, so libskc itself never links libuv: a program that includes this header links
 * both (pkg-config libskc libuv). Everything here is static inline. uv.h needs the POSIX
 * names: the compiler's default dialect, or -std=c11 -D_POSIX_C_SOURCE=200809L.
 *
 *     skc_async *ac;
 *     if (skc_async_connect(&ac, &opt) != 0) { report skc_async_errmsg(ac); skc_async_free(ac); }
 *     else if (skc_uv_attach(ac, loop) != 0) { report skc_async_errmsg(ac); skc_async_free(ac); }
 *     else { skc_async_pose(ac, &ev, on_pose, NULL); ... uv_run(loop, UV_RUN_DEFAULT); }
 *
 * The adapter's state is freed through the loop (uv_close) after the handle lets go of it, so
 * run the loop once more after the handle ended before closing the loop. Callbacks run on the
 * loop's thread. */
#ifndef SKC_UV_H
#define SKC_UV_H

#include <stdlib.h>
#include <uv.h>

#include "skc.h"

typedef struct skc_uv {
    skc_async *ac; /* NULL once the handle has let go */
    uv_poll_t poll;
    uv_timer_t timer;
    int events;  /* UV_READABLE | UV_WRITABLE wanted */
    int handles; /* libuv handles not yet closed: the struct goes with the last */
} skc_uv;

static inline void skc_uv__on_poll(uv_poll_t *h, int status, int events)
{
    skc_uv *u = (skc_uv *)h->data;
    /* An error on the socket (status < 0) is reported by reading or writing it. */
    int ev = status < 0 ? u->events : events;
    if (u->ac && (ev & UV_READABLE))
        skc_async_handle_read(u->ac);
    /* The read may have ended the handle: u->ac is NULL then. */
    if (u->ac && (ev & UV_WRITABLE))
        skc_async_handle_write(u->ac);
    /* libuv stops a poll handle that reports an error. Replies that came before it are read
     * first, a chunk a call, and the read that meets the error (and ends the handle) may be
     * a later one: watch on, or the handle waits for ever with its requests unanswered. */
    if (status < 0 && u->ac && u->events)
        uv_poll_start(&u->poll, u->events, skc_uv__on_poll);
}

static inline void skc_uv__on_timer(uv_timer_t *t)
{
    skc_uv *u = (skc_uv *)t->data;
    if (u->ac)
        skc_async_handle_timeout(u->ac);
}

static inline void skc_uv__update(skc_uv *u, int events)
{
    if (events == u->events)
        return;
    u->events = events;
    /* uv_poll_start fails only for a descriptor libuv cannot poll, which uv_poll_init
     * already refused in skc_uv_attach. */
    if (events)
        uv_poll_start(&u->poll, events, skc_uv__on_poll);
    else
        uv_poll_stop(&u->poll);
}

static inline void skc_uv__add_read(void *data)
{
    skc_uv *u = (skc_uv *)data;
    skc_uv__update(u, u->events | UV_READABLE);
}

static inline void skc_uv__del_read(void *data)
{
    skc_uv *u = (skc_uv *)data;
    skc_uv__update(u, u->events & ~UV_READABLE);
}

static inline void skc_uv__add_write(void *data)
{
    skc_uv *u = (skc_uv *)data;
    skc_uv__update(u, u->events | UV_WRITABLE);
}

static inline void skc_uv__del_write(void *data)
{
    skc_uv *u = (skc_uv *)data;
    skc_uv__update(u, u->events & ~UV_WRITABLE);
}

static inline void skc_uv__set_timer(void *data, long ms)
{
    skc_uv *u = (skc_uv *)data;
    if (ms < 0)
        uv_timer_stop(&u->timer);
    else
        uv_timer_start(&u->timer, skc_uv__on_timer, (uint64_t)ms, 0);
}

static inline void skc_uv__closed(uv_handle_t *h)
{
    skc_uv *u = (skc_uv *)h->data;
    if (--u->handles == 0)
        free(u);
}

/* The handle is done with the loop: stop watching (before its socket closes) and let libuv
 * close our handles; the struct is freed by the last close callback. */
static inline void skc_uv__cleanup(void *data)
{
    skc_uv *u = (skc_uv *)data;
    u->ac = NULL;
    uv_close((uv_handle_t *)&u->poll, skc_uv__closed);
    uv_close((uv_handle_t *)&u->timer, skc_uv__closed);
}

/* Attaches ac to loop. 0; SKC_EINVAL (NULL argument, no socket, or ac already attached: see
 * skc_async_errmsg), SKC_ENOMEM, or SKC_EIO when libuv refuses the socket. On failure ac is
 * left as it was, without a loop (what the adapter allocated goes on the loop's next run). */
static inline int skc_uv_attach(skc_async *ac, uv_loop_t *loop)
{
    if (!ac || !loop)
        return SKC_EINVAL;
    if (skc_async_fd(ac) < 0)
        return skc_async_attach(ac, NULL); /* refused, saying why in skc_async_errmsg */
    skc_uv *u = (skc_uv *)calloc(1, sizeof *u);
    if (!u)
        return SKC_ENOMEM;
    u->ac = ac;
    u->poll.data = u->timer.data = u;
    if (uv_poll_init(loop, &u->poll, skc_async_fd(ac)) != 0) {
        free(u);
        return SKC_EIO;
    }
    uv_timer_init(loop, &u->timer); /* cannot fail on Unix */
    u->handles = 2;
    skc_async_events ev = {u,
                           skc_uv__add_read,
                           skc_uv__del_read,
                           skc_uv__add_write,
                           skc_uv__del_write,
                           skc_uv__set_timer,
                           skc_uv__cleanup};
    int rc = skc_async_attach(ac, &ev);
    if (rc != 0)
        skc_uv__cleanup(u);
    return rc;
}

#endif
