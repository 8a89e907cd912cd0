/* Connections of the binary protocol: one per accepted stream. A connection reads bytes,
 * cuts them into frames with the I/O-free parser and hands each whole frame to its owner's
 * on_frame hook; it queues replies, pauses reading under backpressure, and ends without
 * resetting replies in flight (half-close, then read to the peer's end). It knows nothing of
 * what a frame means: the owner (dispatch.c) keeps its per-connection state in c->session.
 *
 * Loop thread only. */
#ifndef SKELD_CONN_H
#define SKELD_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "config.h"
#include "flush.h"
#include "skp_parser.h"

struct conn;

/* A libuv stream handle of either kind, stored in place. */
union conn_stream {
    uv_handle_t handle;
    uv_stream_t stream;
    uv_tcp_t tcp;
    uv_pipe_t pipe;
};

/* A front's open connections, linked through each one's struct conn_link, and what it has
 * accepted and refused. The binary and HTTP fronts keep theirs alike (conn_list_add,
 * conn_list_remove, conn_list_refusal), and --max-connections counts both. */
struct conn_link {
    struct conn_link *prev, *next;
};

struct conn_list {
    struct conn_link *head;
    uint32_t count;
    uint64_t total;                /* accepted since start */
    uint64_t refused;              /* over --max-connections or the descriptor limit, or stopping */
    const struct conn_list *other; /* the other front's, counted in the limits */
    uint64_t fd_logged_ms;         /* when the file-descriptor limit was last logged */
};

void conn_list_add(struct conn_list *l, struct conn_link *k);
void conn_list_remove(struct conn_list *l, struct conn_link *k);

/* Why a connection just added to l must be refused (stopping, or over --max-connections or
 * the descriptor limit with the other front's counted in), counting the refusal; NULL if it
 * may stay. Reaching the descriptor limit is logged at most once a second (now: ms). Over
 * --max-connections alone, the reason is conn_too_many itself (HTTP lets a few such in for
 * a health probe). */
const char *conn_list_refusal(struct conn_list *l, const struct config *cfg, bool stopping,
                              uint64_t now);
extern const char conn_too_many[];

/* What the owner of the connections is told. Every hook runs on the loop thread. */
struct conn_hooks {
    /* A new connection: set c->session. Nonzero refuses it (it is closed). */
    int (*on_open)(void *owner, struct conn *c);
    /* A whole frame; its body is valid only during the call. */
    void (*on_frame)(void *owner, struct conn *c, const struct skp_frame *f);
    /* c is closed: no more frames will come; release c->session's state. Jobs may still be
     * running for c (conn_job_done comes later), so c itself stays valid until they end. */
    void (*on_close)(void *owner, struct conn *c);
};

/* Every connection of the daemon. */
struct conn_set {
    uv_loop_t *loop;
    const struct config *cfg; /* max_frame, max_inflight, water marks, max_connections */
    const struct conn_hooks *hooks;
    void *owner;
    struct conn_list list;
    uint64_t error_replies; /* replies sent with a status other than OK */
    /* Answers by wire status other than OK, of both fronts (the HTTP front counts those it
     * gives for a wire status): STATS refusals.NAME, by what refused the request. */
    uint64_t refusals[SKP_STATUS_END];
    size_t in_bytes;        /* input buffers held over all connections (--max-input-mb) */
    bool stopping;          /* shutdown: every connection ends once its work is done */
    uint64_t stop_deadline; /* ms: at shutdown, connections with no job left are closed then */
    struct flush_set flush; /* connections with replies queued: written once per iteration */
};

struct conn {
    union conn_stream h;
    struct conn_set *set;
    void *session; /* the owner's */
    char peer[64]; /* "ADDRESS:PORT", or "unix", for the access log */
    /* The request the next reply answers, for its access-log line (conn_note): when it
     * arrived and its armature's id (a copy; note_has_id false: none or not known). Reset
     * by each reply. */
    uint64_t note_started_us;
    uint8_t note_id[32];
    bool note_has_id;
    struct conn_link link; /* in set->list */
    uint8_t *in;
    size_t in_len, in_cap;
    uint32_t max_frame;   /* the largest frame this connection may send (conn_set_max_frame) */
    uint64_t frame_since; /* ms: when the frame in the buffer began arriving; 0: none */
    int inflight;         /* jobs, queued writes and the half-close: the conn lives while > 0 */
    int jobs;             /* of which the owner's jobs */
    bool reading, closing, closed, close_after_write;
    bool parsing; /* in parse_input: a reply given meanwhile must not parse again */
    /* At shutdown: a frame was part-way in when it began (begun_at_drain), so it is read
     * whole and, once parsed, runs as before the shutdown (frame_begun, while the owner's
     * on_frame runs); the frames after it are refused. An upload under way is not wasted. */
    bool begun_at_drain, frame_begun;
    bool lingering;         /* half-closed, reading only to see the peer's end (conn_finish) */
    uv_shutdown_t shutdown; /* the half-close */
    uint64_t last_active, linger_until;
    /* Replies queued since the last flush, oldest first; each holds the connection (inflight)
     * until it is written. */
    struct out_reply *out_head, *out_tail;
    struct flush_node ready; /* in set->flush while it has replies queued */
};

void conn_set_init(struct conn_set *set, uv_loop_t *loop, const struct config *cfg,
                   const struct conn_hooks *hooks, void *owner);

/* Writes what is queued and closes the set's handles (at the end of a shutdown, once no
 * connection is left). */
void conn_set_close(struct conn_set *set);

/* Accepts a connection from listener and starts reading it. Over --max-connections, or while
 * stopping, it is closed at once. */
void conn_accept(struct conn_set *set, uv_stream_t *listener);

/* The largest frame c may send from now on: the owner keeps it small until a client has
 * authenticated, so memory before authentication stays tiny. Starts at --max-frame. */
void conn_set_max_frame(struct conn *c, uint32_t max);

/* The peer of a connected stream as "ADDRESS:PORT" (IPv6 in brackets), or "unix". */
void conn_peer_name(const uv_stream_t *st, char *out, size_t cap);

/* Says what the next reply on c answers, for its access-log line: when the request arrived
 * (uv_hrtime microseconds) and its armature's id (NULL if none). Without a note the line
 * times the reply from the frame's dispatch. */
void conn_note(struct conn *c, uint64_t started_us, const uint8_t *armature);

/* Queues a reply (takes ownership of body, malloc'd or NULL) and writes its access-log line
 * at --log-level info. Replies queued in one loop iteration go out in one write. */
void conn_reply(struct conn *c, uint8_t opcode, uint32_t id, uint16_t status, uint8_t *body,
                size_t len);

/* Counts an answer with a wire status (OK is not counted) in set->refusals. */
void conn_count_refusal(struct conn_set *set, uint16_t status);

/* Queues an error reply whose body is the message. */
void conn_error(struct conn *c, uint8_t opcode, uint32_t id, uint16_t status, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Starts closing c; it is freed once closed and no job refers to it. */
void conn_close(struct conn *c);

/* The owner started a job for c / a job for c finished: c stays alive meanwhile; a finished
 * job may resume reading, end a connection that was ending, or free a closed one. */
void conn_job_started(struct conn *c);
void conn_job_done(struct conn *c);

/* Shutdown began (set->stopping): every connection keeps reading, so requests already sent
 * are answered rather than reset, and ends once nothing is in flight; idle ones end now,
 * unless a frame is part-way in (begun_at_drain): it is read whole first. */
void conn_set_drain(struct conn_set *set);

/* Periodic sweep at now (ms): ends connections idle past --idle-timeout, whose frame has not
 * arrived whole within --frame-timeout (a slow sender is not activity), lingering past their
 * time, or left at the shutdown deadline. */
void conn_set_sweep(struct conn_set *set, uint64_t now);

/* Closes every connection now (startup failure). */
void conn_set_close_all(struct conn_set *set);

/* How many connections (of both fronts) the file-descriptor limit leaves room for, keeping
 * some descriptors for everything else; read at each accept, as an operator may change the
 * limit at run time. Any thread. */
uint32_t conn_fd_room(void);

#endif
