/* What a worker runs for one request (work.c): load, evaluate, draw and encode. A struct work
 * holds everything a job reads and writes; it knows no connection, server or libuv, so
 * worker code cannot reach them. The loop side (dispatch.c) embeds it in its request. */
#ifndef SKELD_WORK_H
#define SKELD_WORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "confine.h"
#include "engine/request.h"
#include "job.h"

struct work {
    struct job job; /* first: the pool hands this back */
    /* inputs, set on the loop thread before submission */
    const struct armature *arm; /* evaluations: shared, immutable, referenced by the loop */
    uint64_t arm_serial;        /* tells armatures apart for the worker's scratch pose */
    struct pose *pose;          /* an instance's state, or NULL for a fresh (scratch) pose */
    struct eval_request eval;
    struct construct_opts opts;
    struct picture_request picture; /* RENDER */
    uint8_t format;                 /* RENDER: enum skp_format */
    uint8_t output;                 /* POSE, MESH: enum work_output */
    uint8_t *input;                 /* LOAD: file bytes (owned) */
    size_t input_len;
    char *path;  /* LOAD by path: the file to read (owned), relative to root_fd; else NULL */
    int root_fd; /* the --root directory LOAD by path is confined to; -1: not confined */
    /* LOAD by path: the version of the file read before and its digest (has_known), from the
     * loop's memo: if the file still has that signature it is not read or hashed again */
    bool has_known;
    struct confine_sig known;
    uint8_t known_digest[32];
    int64_t settle_ns; /* --file-settle-ms: when a signature may be remembered (-1: never) */
    /* An evaluation of the armature the file at path was read as (has_known: its version
     * then): work_checked runs check_run only if the file is still that version. */
    void (*check_run)(struct job *job, struct worker *w); /* then the file is not read */
    uint64_t max_skf;
    uint64_t max_json; /* armature.json's bytes */
    uint32_t max_bones;
    size_t max_arm_bytes; /* the cache budget: a bigger armature would be evicted at once */
    /* outputs, set by the worker */
    uint16_t status; /* a wire status, SKP_S_OK (0) on success */
    char msg[256];
    uint8_t *body; /* the reply body (owned) */
    size_t body_len;
    struct armature *loaded; /* LOAD: the parsed armature (owned) */
    uint8_t digest[32];      /* LOAD: SHA-256 of the bytes, the armature id */
    struct confine_sig sig;  /* LOAD by path: the file's signature as it was opened */
    bool unchanged;          /* ... and it was the known version: digest is known_digest */
    bool settled;            /* ... and it may be remembered (confine_sig_settled) */
    uint64_t json_size;      /* LOAD: armature.json's size (0 if unknown), after hashing */
};

/* An armature.json this big makes a parse that takes real memory (tens of bytes a value):
 * the daemon runs one such parse at a time. */
#define WORK_BIG_PARSE_BYTES (1u << 20)

/* What a job writes: the binary protocol's reply body, or for POSE and MESH the JSON that
 * `skeld eval` and `skelctl mesh` print (the HTTP front's), for POSE with each bone's
 * matrix and tint too as `skeld eval --matrix` prints them; for a RENDER of a sheet, its reply
 * body with no picture, only the sheet's JSON (HTTP's sheet.json: nothing drawn). */
enum work_output {
    WORK_OUT_WIRE = 0,
    WORK_OUT_JSON = 1,
    WORK_OUT_JSON_MATRIX = 2,
    WORK_OUT_SHEET_JSON = 3
};

/* Appends `skeld eval`'s JSON of p's constructed bones to out (matrix: each bone's world
 * matrix and tint too, as `skeld eval --matrix`). 0 or -1 (no memory). */
int work_pose_json(const struct pose *p, bool matrix, struct byte_buf *out);

/* Appends `skeld info`'s JSON of arm, whose id (SHA-256 of its file) is id, to b. 0 or -1
 * (no memory). Any thread. */
int work_info_json(const struct armature *arm, const uint8_t id[32], struct byte_buf *b);

/* Frees what w owns (not w itself). */
void work_release(struct work *w);

/* The wire status for an engine error. Any thread. */
uint16_t work_status_of(int eng);

/* " (--max-bones)" and the like: the option that sets the limit err broke, for its message
 * (the engine knows the limit, not the option); "" when none does. */
const char *work_limit_option(const struct eng_error *err);

/* Job bodies, worker thread. LOAD runs in two steps, so content already cached is never
 * parsed again: read (by path) and hash; then, if the id is not cached, parse. work_load
 * does both (preload). */
void work_load_hash(struct job *job, struct worker *w);
void work_load_parse(struct job *job, struct worker *w);
void work_load(struct job *job, struct worker *w);
void work_pose(struct job *job, struct worker *w);
void work_mesh(struct job *job, struct worker *w);
void work_render(struct job *job, struct worker *w);
/* An evaluation (check_run) of an armature made from a file under --root, run only if the
 * file still has the known signature (has_known). Else nothing is evaluated: unchanged stays
 * false with no status, and the front loads the file again; or the status says why the file
 * could not be opened (gone: NOT_FOUND), as a LOAD of it would. */
void work_checked(struct job *job, struct worker *w);

/* Encodes the reply of LOAD (id and summary) or, with bones, of INFO (summary and bone list).
 * NULL on allocation failure. Any thread. */
uint8_t *work_summary(const struct armature *arm, const uint8_t *id, bool bones, size_t *len);

#endif
