/* Work that waits for the end of the loop iteration: connections with answers ready are
 * written once per iteration, so answers finished together (pipelined requests, a batch of
 * finished jobs) go out in one write each. Both fronts use it (conn.c, http.c).
 *
 * Loop thread only. */
#ifndef SKELD_FLUSH_H
#define SKELD_FLUSH_H

#include <stdbool.h>
#include <uv.h>

/* Embedded in what is flushed (a connection). */
struct flush_node {
    struct flush_node *prev, *next;
    bool queued;
};

struct flush_set {
    struct flush_node *ready;
    void (*flush)(struct flush_node *n); /* writes n's answers; n may end meanwhile */
    /* Before the loop polls (answers given by timers) and after (given by I/O and finished
     * jobs). */
    uv_prepare_t before_poll;
    uv_check_t after_poll;
    bool open; /* the handles exist; without them flush_schedule flushes at once */
};

void flush_set_init(struct flush_set *fs, uv_loop_t *loop, void (*flush)(struct flush_node *n));

/* Flushes what is queued and closes the handles. */
void flush_set_close(struct flush_set *fs);

/* n has answers ready: flushed at the end of this loop phase (at once if the set is closed). */
void flush_schedule(struct flush_set *fs, struct flush_node *n);

/* Takes n off the queue (n is ending). */
void flush_cancel(struct flush_set *fs, struct flush_node *n);

/* Writes at once what the socket takes of bufs[0..*n), without a write request: an answer
 * the socket buffer has room for (nearly all of them) then costs no allocation, no callback
 * and no change to the poll set. What is left is moved to the front of bufs and counted in
 * *n (0: all written), for the caller to queue with uv_write. 0, or a negative libuv error
 * other than UV_EAGAIN (the stream then cannot be written). */
int flush_write_now(uv_stream_t *st, uv_buf_t *bufs, unsigned *n);

#endif
