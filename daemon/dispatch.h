/* Requests: decoding, the opcode table, and the jobs workers run (work.c). */
#ifndef SKELD_DISPATCH_H
#define SKELD_DISPATCH_H

#include "engine/request.h"
#include "server.h"

struct instance {
    uint32_t id;
    struct cache_entry *entry; /* referenced while the instance lives */
    struct pose *pose;
    bool busy;   /* a job is running on it: later requests wait in order */
    bool doomed; /* freed by its owner while busy: goes once its jobs are done */
    struct request *wait_head, *wait_tail;
};

/* One request between the loop and a worker. Inputs are copied out of the connection's
 * buffer at dispatch; outputs (status, message, body) are filled by the worker. */
struct request {
    struct job job;
    struct request *wait_next;  /* next on its instance's queue, or waiting on the same LOAD */
    struct request *parse_next; /* on srv->parsing */
    struct server *srv;
    struct conn *conn;
    uint32_t id;
    uint8_t opcode;
    uint64_t started_us;
    struct cache_entry *entry; /* referenced until done */
    struct instance *inst;
    struct eval_request eval;
    struct construct_opts opts;
    struct picture_request picture; /* RENDER */
    uint8_t format;                 /* RENDER: enum skp_format */
    uint8_t *input; /* LOAD: file bytes (owned) */
    size_t input_len;
    char *path; /* LOAD by path: the resolved file (PATH_MAX bytes, owned); else NULL */
    uint64_t max_skf;
    uint32_t max_bones;
    size_t max_arm_bytes; /* the cache budget: a bigger armature would be evicted at once */
    /* results */
    uint16_t status;
    char msg[256];
    uint8_t *body;
    size_t body_len;
    struct armature *loaded;
    uint8_t digest[32];
};

/* The wire status for an engine error. Any thread. */
uint16_t dispatch_status_of(int eng);

/* Worker-side job bodies (work.c). */
/* LOAD in two steps, so content already cached is never parsed again: read (by path) and
 * hash; then, if the id is not cached, parse. work_load does both (preload). */
void work_load_hash(struct job *job, struct worker *w);
void work_load_parse(struct job *job, struct worker *w);
void work_load(struct job *job, struct worker *w);
void work_pose(struct job *job, struct worker *w);
void work_mesh(struct job *job, struct worker *w);
void work_render(struct job *job, struct worker *w);

/* Encodes the reply of LOAD (id and summary) or, with bones, of INFO (summary and bone list).
 * NULL on allocation failure. */
uint8_t *work_summary(const struct armature *arm, const uint8_t *id, bool bones, size_t *len);

#endif
