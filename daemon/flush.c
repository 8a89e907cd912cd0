#include "flush.h"

#include <stddef.h>
#include <string.h>

void flush_cancel(struct flush_set *fs, struct flush_node *n)
{
    if (!n->queued)
        return;
    if (n->prev)
        n->prev->next = n->next;
    else
        fs->ready = n->next;
    if (n->next)
        n->next->prev = n->prev;
    n->prev = n->next = NULL;
    n->queued = false;
}

static void flush_all(struct flush_set *fs)
{
    while (fs->ready) {
        struct flush_node *n = fs->ready;
        flush_cancel(fs, n);
        fs->flush(n);
    }
    uv_prepare_stop(&fs->before_poll);
    uv_check_stop(&fs->after_poll);
}

static void on_before_poll(uv_prepare_t *h)
{
    flush_all(h->data);
}

static void on_after_poll(uv_check_t *h)
{
    flush_all(h->data);
}

void flush_set_init(struct flush_set *fs, uv_loop_t *loop, void (*flush)(struct flush_node *n))
{
    fs->ready = NULL;
    fs->flush = flush;
    fs->open = uv_prepare_init(loop, &fs->before_poll) == 0;
    if (fs->open && uv_check_init(loop, &fs->after_poll) != 0) {
        uv_close((uv_handle_t *)&fs->before_poll, NULL);
        fs->open = false;
    }
    fs->before_poll.data = fs->after_poll.data = fs;
}

void flush_set_close(struct flush_set *fs)
{
    if (!fs->open)
        return;
    flush_all(fs); /* nothing is left unwritten */
    fs->open = false;
    uv_close((uv_handle_t *)&fs->before_poll, NULL);
    uv_close((uv_handle_t *)&fs->after_poll, NULL);
}

void flush_schedule(struct flush_set *fs, struct flush_node *n)
{
    if (!fs->open) {
        fs->flush(n);
        return;
    }
    if (n->queued)
        return;
    n->queued = true;
    n->prev = NULL;
    n->next = fs->ready;
    if (fs->ready)
        fs->ready->prev = n;
    fs->ready = n;
    uv_prepare_start(&fs->before_poll, on_before_poll);
    uv_check_start(&fs->after_poll, on_after_poll);
}

int flush_write_now(uv_stream_t *st, uv_buf_t *bufs, unsigned *n)
{
    int rc = uv_try_write(st, bufs, *n); /* UV_EAGAIN also while earlier writes are queued */
    if (rc == UV_EAGAIN)
        return 0;
    if (rc < 0)
        return rc;
    size_t done = (size_t)rc;
    unsigned i = 0;
    while (i < *n && done >= bufs[i].len)
        done -= bufs[i++].len;
    if (i < *n) {
        bufs[i].base += done;
        bufs[i].len -= done;
    }
    memmove(bufs, bufs + i, (*n - i) * sizeof *bufs);
    *n -= i;
    return 0;
}
