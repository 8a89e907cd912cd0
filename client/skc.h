/* libskc: the skeld client library (proto/PROTOCOL.md, version 1).
 *
 * A blocking client: every call writes its request and waits for the reply, with a timeout.
 * The skc_send_* / skc_recv pair pipelines instead: send many requests without waiting, then
 * collect the replies by request id in any order (the daemon may answer out of order; replies
 * that arrive for other ids are kept until asked for).
 *
 * Threads: a handle is NOT thread-safe. Use one handle per thread, or serialise every call on
 * a handle (including skc_errmsg) with your own lock. Distinct handles share nothing.
 *
 * Errors: calls return 0 or a negative SKC_E* code. The handle keeps a message explaining the
 * last failure (skc_errmsg) and, for SKC_ESERVER, the wire status (skc_status). A socket
 * error, end of stream, bad framing from the server, a connection-level error reply, or a
 * timeout in the middle of writing a request close the connection: later calls fail with
 * SKC_EIO (skc_recv still hands out replies that had fully arrived). Error replies to single
 * requests (SKC_ESERVER), undecodable reply bodies (SKC_EPROTO) and timeouts while waiting
 * (SKC_ETIMEOUT) keep it open. There is no automatic reconnect: skc_reconnect() opens a new
 * connection with the same options (the daemon closes idle connections after its
 * --idle-timeout, and a restarted daemon has forgotten the old ones).
 *
 * Event loops: skc_set_nonblocking() makes the pipelined calls never wait, for a caller that
 * polls skc_fd() itself; the asynchronous API (skc_async, below) runs every request through
 * callbacks driven by the caller's event loop, through an adapter such as skc_uv.h (libuv).
 *
 * Ownership: the library copies everything it is given before the call returns. Replies
 * (skc_reply) belong to the caller, who frees each with skc_reply_free(); every pointer
 * reached through a reply (bones, vertices, names, image bytes) lives inside it and stays
 * valid until then. Strings are NUL-terminated and hold no other NUL; skeld sends UTF-8 (its
 * names come from JSON), which the library passes on as it came, unchecked.
 *
 * This header needs only C99 and includes no libuv or daemon header. */
#ifndef SKC_H
#define SKC_H

#include <stddef.h>
#include <stdint.h>

#ifndef SKC_API
#if defined(__GNUC__) || defined(__clang__)
#define SKC_API __attribute__((visibility("default")))
#else
#define SKC_API
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version ------------------------------------------------------------------------- */

/* The version of this header: the skeld release (configure.ac's AC_INIT) that shipped it. */
#define SKC_VERSION_MAJOR 0
#define SKC_VERSION_MINOR 2
#define SKC_VERSION_PATCH 0
/* One integer that sorts like the version (minor and patch stay below 100): 0.2.0 is 200. */
#define SKC_VERSION_NUMBER (SKC_VERSION_MAJOR * 10000 + SKC_VERSION_MINOR * 100 + SKC_VERSION_PATCH)

/* The version of the library actually running, as "MAJOR.MINOR.PATCH" (static) and as
 * SKC_VERSION_NUMBER computes it: compare them with the macros to catch a program built
 * against another header than the library it loaded. Any thread. */
SKC_API const char *skc_version(void);
SKC_API int skc_version_number(void);

#define SKC_ID_SIZE 32      /* an armature id: SHA-256 of the .skf bytes */
#define SKC_MAX_ANIMS 16    /* animations per evaluation request */
#define SKC_MAX_NAME 1024   /* bytes per string on the wire */
#define SKC_MAX_PING 1024   /* bytes of PING payload */
#define SKC_MAX_STYLES 64   /* styles per render request (PROTOCOL.md limits) */
#define SKC_PNG_DEFAULT 255 /* skc_render_opts.png_level: the daemon's default encoder */
#define SKC_PNG_FAST 254    /* once a faster encoder, now the default one; else zlib 0-9 */

/* ---- errors --------------------------------------------------------------------------- */

enum skc_error {
    SKC_OK = 0,
    SKC_EINVAL = -1,   /* bad argument (nothing was sent) */
    SKC_ENOMEM = -2,   /* out of memory */
    SKC_EIO = -3,      /* socket error, connection refused or closed */
    SKC_ETIMEOUT = -4, /* the connect or I/O timeout expired */
    SKC_EPROTO = -5,   /* the server sent something the protocol does not allow */
    SKC_ESERVER = -6,  /* the server answered with an error status: see skc_status() */
    SKC_EAGAIN = -7    /* non-blocking mode: not done yet, call again when skc_fd() is ready */
};

/* Wire status codes (PROTOCOL.md "Status codes"); below 100 the client is at fault. */
enum skc_status {
    SKC_S_OK = 0,
    SKC_S_BAD_REQUEST = 1,
    SKC_S_FRAMING = 2,
    SKC_S_VERSION = 3,
    SKC_S_TOO_BIG = 4,
    SKC_S_UNKNOWN_OPCODE = 5,
    SKC_S_AUTH = 6,
    SKC_S_NOT_FOUND = 7,
    SKC_S_BAD_FILE = 8,
    SKC_S_LIMIT = 9,
    SKC_S_FORBIDDEN_PATH = 10,
    SKC_S_BUSY = 100,
    SKC_S_SHUTDOWN = 101,
    SKC_S_INTERNAL = 102,
    SKC_S_NO_MEMORY = 103
};

/* Message operation codes, as on the wire; skc_reply_op() says which one a reply answers. */
enum skc_op {
    SKC_OP_HELLO = 1,
    SKC_OP_PING = 2,
    SKC_OP_LOAD_PATH = 3,
    SKC_OP_LOAD_BYTES = 4,
    SKC_OP_UNLOAD = 5,
    SKC_OP_INFO = 6,
    SKC_OP_INSTANCE_NEW = 7,
    SKC_OP_INSTANCE_FREE = 8,
    SKC_OP_POSE = 9,
    SKC_OP_MESH = 10,
    SKC_OP_RENDER = 11,
    SKC_OP_STATS = 12,
    SKC_OP_INFO_JSON = 13
};

/* A static English message for an SKC_E* code ("unknown error" for others). Any thread. */
SKC_API const char *skc_strerror(int err);

/* A static English message for a wire status ("not found"). Any thread. */
SKC_API const char *skc_status_str(int status);

/* ---- armature ids ----------------------------------------------------------------------- */
/* An armature id is the SHA-256 of the .skf file's bytes, so a client knows it before any
 * upload: to look in its own cache, to PUT /v1/armatures/{id} over HTTP, or to ask for a pose
 * at once and upload only when the daemon answers NOT_FOUND. In text (URLs, logs, JSON) it is
 * 64 lowercase hex digits. Any thread. */

#define SKC_ID_HEX_SIZE (2 * SKC_ID_SIZE + 1) /* the hex digits and a NUL */

/* Writes id as 64 lowercase hex digits and a NUL into out. Returns out, or NULL (writing
 * nothing) when out or id is NULL. */
SKC_API char *skc_id_to_hex(char out[SKC_ID_HEX_SIZE], const unsigned char id[SKC_ID_SIZE]);

/* Parses hex, which must be exactly 64 lowercase hex digits and its NUL. 0, or SKC_EINVAL
 * (another length, uppercase or any other character, NULL), leaving id untouched. */
SKC_API int skc_id_from_hex(unsigned char id[SKC_ID_SIZE], const char *hex);

/* The id the daemon gives the len bytes at skf (SHA-256, computed with libcrypto); the bytes
 * are not checked to be a .skf. 0, SKC_EINVAL (id NULL, or skf NULL with len > 0) or
 * SKC_ENOMEM (libcrypto could not set up the digest); on failure id is untouched. */
SKC_API int skc_id_of(const void *skf, size_t len, unsigned char id[SKC_ID_SIZE]);

/* ---- connection ----------------------------------------------------------------------- */

typedef struct skc_client skc_client;

typedef struct skc_options {
    /* "unix:/path/to/socket" or "tcp://host:port" (host a name, an IPv4 address, or an IPv6
     * address in brackets: "tcp://[::1]:7878"). Required; copied. */
    const char *uri;
    /* Sent in HELLO on connect; NULL or "" for none. Copied. */
    const char *auth_token;
    /* Limit for skc_connect as a whole (connecting plus HELLO). 0: 5000 ms; < 0: none.
     * Host name resolution (getaddrinfo) is not bounded by it: use addresses to be sure. */
    int connect_timeout_ms;
    /* Limit for each later call as a whole (send plus wait); for skc_async, from the call
     * that queued the request, HELLO included. 0: 60000 ms; < 0: none. */
    int io_timeout_ms;
    /* Largest reply body accepted, in bytes: 0 or more than the protocol's 64 MiB is 64 MiB
     * (the daemon answers LIMIT rather than send more). A larger reply is SKC_EPROTO, and the
     * connection ends: its bytes cannot be skipped (skc_async: that request's callback gets
     * SKC_EPROTO, the others still pending SKC_EIO). */
    uint32_t max_reply;
} skc_options;

/* Connects to opt->uri and sends HELLO (with opt->auth_token). On success returns 0 and
 * *out is a new handle. On failure returns a negative SKC_E* code and *out is still set to
 * a handle that can only explain the failure (skc_errmsg, skc_status), or NULL when memory
 * ran out first. Either way the caller frees *out with skc_free(). A refused HELLO (bad
 * token) is SKC_ESERVER with skc_status() == SKC_S_AUTH. */
SKC_API int skc_connect(skc_client **out, const skc_options *opt);

/* Closes the connection and frees the handle with everything it still holds (replies that
 * arrived but were never collected). NULL is a no-op. */
SKC_API void skc_free(skc_client *c);

/* Closes the connection if it is still open and connects again to the same URI with the same
 * options (auth token, timeouts, reply limit, non-blocking mode): for a handle whose daemon
 * restarted or whose connection failed, or to retry a failed skc_connect (any handle
 * skc_connect returned, except NULL). Requests still pending are forgotten: their replies can
 * no longer come. Returns as skc_connect; after a failure the handle stays closed and
 * skc_reconnect may be called again. */
SKC_API int skc_reconnect(skc_client *c);

/* Replaces the token HELLO sends on the next skc_reconnect (NULL or "" for none; copied): for
 * a handle whose token was refused (skc_connect's SKC_S_AUTH), or whose daemon now wants
 * another. Nothing is sent. 0, or SKC_ENOMEM with the old token kept. */
SKC_API int skc_set_auth_token(skc_client *c, const char *auth_token);

/* The connection's socket descriptor, or -1 while there is none: for poll()ing it in
 * non-blocking mode. It belongs to the handle: never read, write or close it. */
SKC_API int skc_fd(const skc_client *c);

/* on != 0: the pipelined calls never wait. skc_send_* write what the socket takes and keep
 * the rest queued in the handle (skc_flush writes more of it; every later call tries too);
 * skc_recv reads what has arrived and returns SKC_EAGAIN while the reply is not all there,
 * the request staying pending; io_timeout_ms no longer applies to them (the caller decides
 * how long to wait). Wait for POLLIN on skc_fd() before calling skc_recv again, and for
 * POLLOUT while skc_flush returns SKC_EAGAIN. The blocking calls (skc_ping, skc_pose, ...)
 * still wait as documented, after writing the whole queue. on == 0 returns to waiting.
 * 0, or SKC_EINVAL for a NULL handle. */
SKC_API int skc_set_nonblocking(skc_client *c, int on);

/* Writes queued request bytes: 0 once none are left; in non-blocking mode SKC_EAGAIN while
 * some are (wait for POLLOUT on skc_fd); in blocking mode it waits up to io_timeout_ms, and
 * SKC_ETIMEOUT leaves the bytes not yet written queued, the connection open and the requests
 * pending (a later skc_flush or call goes on sending them; skc_reconnect drops them). A
 * failed write closes the connection as it does in every call. */
SKC_API int skc_flush(skc_client *c);

/* What the last failing call on c went wrong with. Owned by c, valid until the next call on
 * c. Never NULL; a static message when c is NULL. */
SKC_API const char *skc_errmsg(const skc_client *c);

/* The wire status of the last SKC_ESERVER on c, else 0 (SKC_S_OK). Reset by every call. */
SKC_API int skc_status(const skc_client *c);

/* What the server said in its last HELLO reply: protocol version, name, and the largest
 * request body it accepts (larger requests fail with SKC_EINVAL before being sent). The
 * name is owned by c and valid until the next skc_hello or skc_free. */
SKC_API unsigned skc_server_version(const skc_client *c);
SKC_API const char *skc_server_name(const skc_client *c);
SKC_API uint32_t skc_server_max_frame(const skc_client *c);

/* ---- requests ------------------------------------------------------------------------- */

typedef struct skc_vec2 {
    double x, y;
} skc_vec2;

/* skc_eval.flags, the protocol's evaluation flags (bit values as on the wire). */
#define SKC_EVAL_LOOP 0x01u    /* frames wrap around the animation */
#define SKC_EVAL_REVERSE 0x02u /* frames count back from the end */
#define SKC_EVAL_MS 0x08u      /* skc_anim.frame is a time in ms (skc_eval.from stays a frame) */
#define SKC_EVAL_Y_DOWN 0x10u  /* y grows downwards */

enum skc_target {
    SKC_TARGET_ARMATURE = 0, /* stateless: a fresh instance of skc_eval.armature */
    SKC_TARGET_INSTANCE = 1  /* skc_eval.instance, whose state carries over between calls */
};

typedef struct skc_anim {
    const char *name; /* animation name, "#N" for index N (never a name), or a decimal index
                       * ("1": the animation named "1" if there is one) */
    double frame;     /* the frame to reach (a time in ms with SKC_EVAL_MS) */
    double smoothing; /* as `skeld eval --smooth` */
} skc_anim;

/* An evaluation request (POSE, MESH, RENDER): what `skeld eval` takes as flags. Initialise
 * with skc_eval_init(), then set what differs. The library only reads it. */
typedef struct skc_eval {
    int target;                          /* enum skc_target */
    unsigned char armature[SKC_ID_SIZE]; /* SKC_TARGET_ARMATURE */
    uint32_t instance;                   /* SKC_TARGET_INSTANCE (skc_instance_new) */
    unsigned flags;                      /* SKC_EVAL_* */
    unsigned anim_count;                 /* 0..SKC_MAX_ANIMS */
    skc_anim anims[SKC_MAX_ANIMS];       /* in play order: later ones win */
    int has_from;                        /* nonzero: start stepping at from */
    double from;                         /* first frame of the first animation (never ms) */
    uint32_t warmup;                     /* constructs at rest first */
    skc_vec2 position, scale, velocity;  /* engine options */
} skc_eval;

/* Zero everything, target an armature, scale 1 x 1 (the engine's identity options). */
SKC_API void skc_eval_init(skc_eval *ev);

enum skc_camera {
    SKC_CAMERA_FIT = 0,     /* frame the animation in fit x the canvas */
    SKC_CAMERA_EXPLICIT = 1 /* scale and position, the player's convention */
};

enum skc_format {
    SKC_FORMAT_PNG = 0,
    SKC_FORMAT_RGBA = 1 /* raw RGBA8, straight alpha, row-major */
};

/* A render request (RENDER), like `skeld render`'s flags. Initialise with
 * skc_render_opts_init(). The library only reads it, styles included. */
typedef struct skc_render_opts {
    uint32_t width, height;      /* canvas, pixels */
    unsigned char background[4]; /* straight RGBA */
    int camera;                  /* enum skc_camera */
    double fit;                  /* SKC_CAMERA_FIT: fraction of the canvas */
    skc_vec2 scale, position;    /* SKC_CAMERA_EXPLICIT: armature (X, Y) lands on pixel
                                  * (X sx + px, -(Y sy + py)); `skeld render --scale` centres
                                  * with position (width / 2, -height / 2) */
    unsigned style_count;        /* 0: the default styles; at most SKC_MAX_STYLES */
    const char *const *styles;   /* names or decimal indices, in priority order */
    unsigned samples;            /* 1 or 4 */
    int format;                  /* enum skc_format */
    unsigned png_level;          /* SKC_PNG_DEFAULT, SKC_PNG_FAST, or a zlib level 0-9 */
    int has_range;               /* nonzero: every frame first..last, one image each (as
                                  * `skeld render --frames first-last`) */
    uint32_t first, last;
    unsigned sheet_cols, sheet_rows; /* with a range: pack it in one sheet; 0 x 0: images */
} skc_render_opts;

/* 512 x 512, transparent, fit 0.9, scale 1, default styles, 4 samples, PNG with the
 * daemon's default encoder, one frame, no sheet. */
SKC_API void skc_render_opts_init(skc_render_opts *ro);

/* ---- replies -------------------------------------------------------------------------- */

typedef struct skc_reply skc_reply;

typedef struct skc_anim_info {
    const char *name;
    double fps;
    uint32_t frames; /* last keyframe + 1 */
} skc_anim_info;

/* An armature's summary (LOAD_PATH, LOAD_BYTES, INFO). */
typedef struct skc_summary {
    uint32_t bone_count;
    uint32_t anim_count;
    const skc_anim_info *anims;
    uint32_t style_count;
    const char *const *styles;
    uint32_t atlas_count;
} skc_summary;

/* One bone of INFO: its name and parent bone id (-1 for a root). */
typedef struct skc_bone_info {
    const char *name;
    int32_t parent;
} skc_bone_info;

/* One bone of a POSE reply, in bone id order: its world transform (pos, rot, scale after
 * Construct, as `skeld eval` prints them; matrix the same as a 2x3 matrix). Every number of
 * a bone or a draw is finite (a reply with another is SKC_EPROTO). */
typedef struct skc_bone {
    skc_vec2 pos;
    double rot;
    skc_vec2 scale;
    double matrix[6]; /* a b c d tx ty: x' = a x + c y + tx, y' = b x + d y + ty */
    int hidden;       /* 0 or 1 */
    int32_t zindex;
    const char *tex; /* texture name, "" for none */
    double tint[4];  /* r g b a, 0-255 */
    uint32_t vertex_count;
    const skc_vec2 *vertices;
} skc_bone;

typedef struct skc_vertex {
    double x, y; /* armature space, after the engine options */
    double u, v; /* atlas coordinates, 0-1 */
} skc_vertex;

/* One entry of a MESH draw list, in draw order. */
typedef struct skc_draw {
    uint32_t bone;
    uint32_t atlas;
    double tint[4];
    uint32_t vertex_count;
    const skc_vertex *vertices;
    uint32_t index_count; /* triangles: a multiple of 3, each index below vertex_count (a
                           * reply that breaks this is SKC_EPROTO) */
    const uint32_t *indices;
} skc_draw;

/* One picture of a RENDER reply: PNG file bytes whose header says width x height, or raw RGBA
 * of exactly width * height * 4 bytes, as the request asked (a reply that breaks this is
 * SKC_EPROTO). */
typedef struct skc_image {
    uint32_t frame, width, height;
    size_t size;
    const unsigned char *data;
} skc_image;

/* One STATS counter. */
typedef struct skc_counter {
    const char *name;
    uint64_t value;
} skc_counter;

/* Frees r and everything reached through it. NULL is a no-op. */
SKC_API void skc_reply_free(skc_reply *r);

/* The operation (enum skc_op) r answers, and the request id it echoes. */
SKC_API int skc_reply_op(const skc_reply *r);
SKC_API uint32_t skc_reply_id(const skc_reply *r);

/* Accessors: each returns NULL (and sets *count or *len to 0) when r holds no such part or
 * the part is empty. count and len may be NULL. Everything returned is owned by r. */

/* LOAD_PATH, LOAD_BYTES (and skc_async_ensure's INFO): the armature id, SKC_ID_SIZE bytes. */
SKC_API const unsigned char *skc_reply_armature_id(const skc_reply *r);
/* LOAD_PATH, LOAD_BYTES, INFO. */
SKC_API const skc_summary *skc_reply_summary(const skc_reply *r);
/* INFO: summary bone_count entries. */
SKC_API const skc_bone_info *skc_reply_bone_infos(const skc_reply *r, uint32_t *count);
/* INSTANCE_NEW: the instance id (0 for other replies). */
SKC_API uint32_t skc_reply_instance(const skc_reply *r);
/* POSE. */
SKC_API const skc_bone *skc_reply_bones(const skc_reply *r, uint32_t *count);
/* MESH. */
SKC_API const skc_draw *skc_reply_draws(const skc_reply *r, uint32_t *count);
/* RENDER: the pictures, then the sheet JSON ("" without a sheet; NULL for other replies). */
SKC_API const skc_image *skc_reply_images(const skc_reply *r, uint32_t *count);
SKC_API const char *skc_reply_sheet_json(const skc_reply *r, size_t *len);
/* STATS. */
SKC_API const skc_counter *skc_reply_counters(const skc_reply *r, uint32_t *count);
/* PING: the echoed payload (non-NULL even when empty). */
SKC_API const void *skc_reply_payload(const skc_reply *r, size_t *len);

/* ---- blocking calls -------------------------------------------------------------------- */
/* Each sends one request and waits for its reply (at most io_timeout_ms). They return 0 or
 * a negative SKC_E* code; on failure every out-parameter is left untouched. Replies
 * given through skc_reply **out belong to the caller (skc_reply_free); out may be NULL when
 * only success matters. A request that timed out is forgotten: its late reply is dropped. */

/* HELLO again, e.g. with another token; updates skc_server_*. skc_connect already did it.
 * A token the daemon accepts is kept for skc_reconnect (as skc_set_auth_token). */
SKC_API int skc_hello(skc_client *c, const char *auth_token);

/* PING with len (at most SKC_MAX_PING) bytes; fails with SKC_EPROTO if the echo differs. */
SKC_API int skc_ping(skc_client *c, const void *payload, size_t len);

/* Loads a .skf by path (relative to the daemon's --root) or by its bytes. id (may be NULL)
 * receives the armature id; *out (may be NULL) the reply with id and summary. */
SKC_API int skc_load_path(skc_client *c, const char *path, unsigned char id[SKC_ID_SIZE],
                          skc_reply **out);
SKC_API int skc_load_bytes(skc_client *c, const void *skf, size_t len,
                           unsigned char id[SKC_ID_SIZE], skc_reply **out);

/* Makes sure the daemon has the .skf at skf: its id is computed here (skc_id_of) and the bytes
 * are sent only if the daemon answers INFO with NOT_FOUND. For a client that keeps files
 * locally and talks to daemons that may restart or evict (or to a cluster, where the node
 * serving an id may change): call it before using id after any NOT_FOUND for the armature,
 * and the bytes travel only when needed. id receives the armature id. The INFO and the
 * LOAD_BYTES each wait up to io_timeout_ms, so an upload may take twice that in all. */
SKC_API int skc_ensure(skc_client *c, const void *skf, size_t len, unsigned char id[SKC_ID_SIZE]);

SKC_API int skc_unload(skc_client *c, const unsigned char id[SKC_ID_SIZE]);

/* Summary and bone list (skc_reply_summary, skc_reply_bone_infos). */
SKC_API int skc_info(skc_client *c, const unsigned char id[SKC_ID_SIZE], skc_reply **out);

/* `skeld info`'s JSON of the armature, byte for byte (INFO_JSON): skc_reply_payload gives the
 * text (not NUL-terminated) and its length. out is required (SKC_EINVAL without it): the
 * text is the point of the call. */
SKC_API int skc_info_json(skc_client *c, const unsigned char id[SKC_ID_SIZE], skc_reply **out);

/* A stateful instance of an armature, valid on this connection; *instance receives its id. */
SKC_API int skc_instance_new(skc_client *c, const unsigned char id[SKC_ID_SIZE],
                             uint32_t *instance);
SKC_API int skc_instance_free(skc_client *c, uint32_t instance);

/* Evaluation: bones (skc_reply_bones), draw list (skc_reply_draws), pictures
 * (skc_reply_images, skc_reply_sheet_json). */
SKC_API int skc_pose(skc_client *c, const skc_eval *ev, skc_reply **out);
SKC_API int skc_mesh(skc_client *c, const skc_eval *ev, skc_reply **out);
SKC_API int skc_render(skc_client *c, const skc_eval *ev, const skc_render_opts *ro,
                       skc_reply **out);

/* Server counters (skc_reply_counters). */
SKC_API int skc_stats(skc_client *c, skc_reply **out);

/* ---- pipelining ------------------------------------------------------------------------ */
/* skc_send_* writes one request without waiting for its reply and stores its request id in
 * *req_id (never 0). Arguments are as for the blocking call of the same name. While a send
 * waits for the socket it also reads replies that arrive, so a long batch cannot deadlock
 * against a server that stops reading until its replies are read. In non-blocking mode
 * (skc_set_nonblocking) a send never waits: what the socket does not take stays queued.
 * Returns 0, or an error after which *req_id is untouched and nothing is pending for it. */
SKC_API int skc_send_ping(skc_client *c, const void *payload, size_t len, uint32_t *req_id);
SKC_API int skc_send_load_path(skc_client *c, const char *path, uint32_t *req_id);
SKC_API int skc_send_load_bytes(skc_client *c, const void *skf, size_t len, uint32_t *req_id);
SKC_API int skc_send_unload(skc_client *c, const unsigned char id[SKC_ID_SIZE], uint32_t *req_id);
SKC_API int skc_send_info(skc_client *c, const unsigned char id[SKC_ID_SIZE], uint32_t *req_id);
SKC_API int skc_send_instance_new(skc_client *c, const unsigned char id[SKC_ID_SIZE],
                                  uint32_t *req_id);
SKC_API int skc_send_instance_free(skc_client *c, uint32_t instance, uint32_t *req_id);
SKC_API int skc_send_pose(skc_client *c, const skc_eval *ev, uint32_t *req_id);
SKC_API int skc_send_mesh(skc_client *c, const skc_eval *ev, uint32_t *req_id);
SKC_API int skc_send_render(skc_client *c, const skc_eval *ev, const skc_render_opts *ro,
                            uint32_t *req_id);
SKC_API int skc_send_stats(skc_client *c, uint32_t *req_id);

/* Waits (at most io_timeout_ms) for the reply to req_id, in any order relative to other
 * pending requests. On 0, *out (may be NULL) receives the reply and req_id is no longer
 * pending. On SKC_ESERVER (an error reply), SKC_EPROTO (a reply that does not decode) or
 * SKC_ENOMEM the request is done too. On SKC_ETIMEOUT it stays pending: call skc_recv
 * again, or skc_discard. SKC_EIO once the connection is gone and the reply never came.
 * SKC_EINVAL if req_id is not pending. In non-blocking mode it does not wait: it writes and
 * reads what the socket allows, then returns SKC_EAGAIN (still pending) if the reply is not
 * all there. */
SKC_API int skc_recv(skc_client *c, uint32_t req_id, skc_reply **out);

/* Forgets a pending request: its reply, arrived or not, is dropped. 0 or SKC_EINVAL. */
SKC_API int skc_discard(skc_client *c, uint32_t req_id);

/* Number of requests sent and not yet collected by skc_recv or skc_discard. */
SKC_API size_t skc_pending(const skc_client *c);

/* ---- asynchronous API -------------------------------------------------------------------- */
/* An skc_async handle sends requests without waiting and hands each reply to a callback, all
 * driven by the caller's event loop: the library never blocks (but for resolving a host name
 * in skc_async_connect) and does I/O only inside skc_async_handle_read/_write/_timeout. The
 * loop is plugged in through skc_async_events, usually by an adapter: skc_uv.h attaches a
 * handle to a libuv loop (libskc itself does not link libuv).
 *
 * Many requests may be in flight (a reply finds its request in constant time, however many);
 * replies come in any order and are matched by request id.
 * Every request accepted (its call returned 0) gets its callback called exactly once, from
 * inside one of the skc_async_handle_* calls or skc_async_free, never from inside the call
 * that sent it:
 *   err == 0:    reply is the decoded reply; it belongs to the callback (skc_reply_free it,
 *                now or later).
 *   err < 0:     reply is NULL. SKC_ESERVER: an error reply (skc_async_status says which,
 *                skc_async_errmsg the server's message); SKC_EPROTO: a reply that does not
 *                decode; SKC_ENOMEM; SKC_ETIMEOUT: no reply within io_timeout_ms (only with
 *                a set_timer hook; a late reply is dropped; requests timing out together
 *                are told in the order they were sent, and one that had not begun to go out
 *                is never sent); SKC_EIO: the connection ended first (skc_async_errmsg says
 *                why).
 * skc_async_errmsg and skc_async_status describe err for the duration of the callback, until
 * it calls the handle's request functions (each resets them, as every skc_client call does):
 * read them first. A NULL callback drops the reply. Callbacks may send more requests and may
 * call skc_async_disconnect or skc_async_free.
 *
 * The handle frees itself when its connection ends: after an error, after
 * skc_async_disconnect once every reply came, or in skc_async_free. The disconnect callback,
 * the last one ever called, marks that moment; the handle is invalid once it returns.
 *
 * Threads: a handle is used by one thread at a time, like skc_client (its loop's thread). */

typedef struct skc_async skc_async;

/* A reply, or the error that stands for it (see above). */
typedef void (*skc_async_cb)(skc_async *ac, int err, skc_reply *reply, void *privdata);

/* Called once: err == 0 when the daemon has answered HELLO, or the error that ended the
 * connection before (SKC_ESERVER with skc_async_status SKC_S_AUTH for a refused token,
 * SKC_ETIMEOUT after connect_timeout_ms, SKC_EIO if refused or freed first). */
typedef void (*skc_async_connect_cb)(skc_async *ac, int err);

/* Called once, last, as the handle ends: err == 0 after skc_async_disconnect or
 * skc_async_free, else the error that closed the connection (skc_async_errmsg: why). */
typedef void (*skc_async_disconnect_cb)(skc_async *ac, int err);

/* How the library asks an event loop to watch its descriptor (skc_async_fd). Each hook gets
 * data. The library calls add_* only when the interest is off and del_* only when it is on.
 * When an event comes, the loop calls skc_async_handle_read or skc_async_handle_write (on
 * an error condition of the descriptor: either). set_timer is optional: without it there are
 * no timeouts. cleanup is called once, when the handle no longer needs the loop, before the
 * descriptor is closed: the adapter must stop watching it and drop its timer there (it may
 * free its own state, but must not call the library for this handle again). */
typedef struct skc_async_events {
    void *data;
    void (*add_read)(void *data);
    void (*del_read)(void *data);
    void (*add_write)(void *data);
    void (*del_write)(void *data);
    /* Call skc_async_handle_timeout once, ms milliseconds from now (replacing any earlier
     * request); ms < 0 cancels. */
    void (*set_timer)(void *data, long ms);
    void (*cleanup)(void *data);
} skc_async_events;

/* Starts connecting to opt->uri (as skc_connect reads the options) and queues HELLO; the
 * connection proceeds once an event loop is attached. Requests may be sent at once: they go
 * out after HELLO, checked against the protocol's 64 MiB request limit only, as the daemon's
 * own (skeld --max-frame) comes with HELLO's answer: one over that ends the connection (the
 * daemon answers TOO_BIG), so send large uploads from the connect callback, where they are
 * refused with SKC_EINVAL instead. connect_timeout_ms bounds connecting plus HELLO,
 * io_timeout_ms each request (both need a set_timer hook). Addresses are tried in turn while
 * a connect fails at once; once one is under way, its failure ends the handle. On success
 * returns 0 and *out is the new handle. On failure returns a negative SKC_E* code and *out
 * is a handle that can only explain it (skc_async_errmsg), or NULL if memory ran out first:
 * free it with skc_async_free (no callback is called). */
SKC_API int skc_async_connect(skc_async **out, const skc_options *opt);

/* The callbacks of the connection's start and end (NULL for none); set them before attaching
 * an event loop. 0, or SKC_EINVAL for a NULL handle. */
SKC_API int skc_async_set_connect_cb(skc_async *ac, skc_async_connect_cb cb);
SKC_API int skc_async_set_disconnect_cb(skc_async *ac, skc_async_disconnect_cb cb);

/* The caller's own pointer, kept for it. */
SKC_API void skc_async_set_data(skc_async *ac, void *data);
SKC_API void *skc_async_data(const skc_async *ac);

/* Attaches an event loop: copies *ev and at once asks for the events the handle waits for.
 * add_read, del_read, add_write, del_write and cleanup are required. 0, or SKC_EINVAL
 * (no connection, as after a failed skc_async_connect; missing hooks; already attached),
 * with the reason in skc_async_errmsg. */
SKC_API int skc_async_attach(skc_async *ac, const skc_async_events *ev);

/* The socket to watch, or -1 once the connection is gone. It belongs to the handle. */
SKC_API int skc_async_fd(const skc_async *ac);

/* What the loop calls when the descriptor is readable, writable, or the timer fired. Each
 * may run callbacks and may end (and free) the handle: do not use ac after them unless the
 * disconnect callback has not run. NULL is a no-op, and so is a call from inside a callback
 * of the same handle (the loop calls again while the descriptor stays ready). */
SKC_API void skc_async_handle_read(skc_async *ac);
SKC_API void skc_async_handle_write(skc_async *ac);
SKC_API void skc_async_handle_timeout(skc_async *ac);

/* Refuses new requests (SKC_EIO), waits for the replies to those in flight, then closes and
 * frees the handle (disconnect callback with 0). 0, or SKC_EINVAL for a NULL handle or one
 * whose skc_async_connect failed (free that one with skc_async_free). Called outside the
 * handle's callbacks with no reply pending, it ends the handle at once: the disconnect
 * callback runs inside this call, and ac is freed when it returns. */
SKC_API int skc_async_disconnect(skc_async *ac);

/* Closes the connection now: the connect callback (if it has not run), then every pending
 * request's with SKC_EIO in the order they were sent, then the disconnect callback; then the
 * handle is freed. Inside a callback it takes effect when the callback returns. NULL is a
 * no-op. */
SKC_API void skc_async_free(skc_async *ac);

/* As skc_errmsg and skc_status, for the handle's last error (see the callbacks). */
SKC_API const char *skc_async_errmsg(const skc_async *ac);
SKC_API int skc_async_status(const skc_async *ac);

/* Requests sent whose callback has not been called yet (HELLO included until answered). */
SKC_API size_t skc_async_pending(const skc_async *ac);

/* The requests: arguments as for the blocking call of the same name, then the callback and
 * its privdata. Each checks its arguments, queues the request (everything is copied) and
 * returns 0; or an error, with no callback to come: SKC_EINVAL (bad argument), SKC_ENOMEM,
 * SKC_EIO (the connection is gone or skc_async_disconnect was called). A PING's reply holds
 * the echo (skc_reply_payload); LOAD_* the id (skc_reply_armature_id); INSTANCE_NEW the
 * instance (skc_reply_instance). */
SKC_API int skc_async_ping(skc_async *ac, const void *payload, size_t len, skc_async_cb cb,
                           void *privdata);
SKC_API int skc_async_load_path(skc_async *ac, const char *path, skc_async_cb cb, void *privdata);
SKC_API int skc_async_load_bytes(skc_async *ac, const void *skf, size_t len, skc_async_cb cb,
                                 void *privdata);
SKC_API int skc_async_unload(skc_async *ac, const unsigned char id[SKC_ID_SIZE], skc_async_cb cb,
                             void *privdata);
SKC_API int skc_async_info(skc_async *ac, const unsigned char id[SKC_ID_SIZE], skc_async_cb cb,
                           void *privdata);
SKC_API int skc_async_instance_new(skc_async *ac, const unsigned char id[SKC_ID_SIZE],
                                   skc_async_cb cb, void *privdata);
SKC_API int skc_async_instance_free(skc_async *ac, uint32_t instance, skc_async_cb cb,
                                    void *privdata);
SKC_API int skc_async_pose(skc_async *ac, const skc_eval *ev, skc_async_cb cb, void *privdata);
SKC_API int skc_async_mesh(skc_async *ac, const skc_eval *ev, skc_async_cb cb, void *privdata);
SKC_API int skc_async_render(skc_async *ac, const skc_eval *ev, const skc_render_opts *ro,
                             skc_async_cb cb, void *privdata);
SKC_API int skc_async_stats(skc_async *ac, skc_async_cb cb, void *privdata);

/* skc_ensure without waiting: INFO of the id computed here (skc_id_of), then LOAD_BYTES only
 * if the daemon answers NOT_FOUND; the bytes are copied now. The callback is called once, with
 * the INFO reply when the daemon had the armature or the LOAD_BYTES reply when it did not;
 * skc_reply_armature_id gives the id in both. An error is INFO's, or LOAD_BYTES's once sent
 * (SKC_ESERVER with skc_async_status SKC_S_BAD_FILE for bytes that are no .skf), or SKC_EIO
 * or SKC_ENOMEM when the upload could not be queued (the connection ended), SKC_EINVAL when
 * the bytes are over the daemon's request limit (skc_server_max_frame). Each request has
 * its own io_timeout_ms; a skc_async_disconnect called meanwhile waits for the upload too.
 * Requests that use the id must be sent from the callback (err == 0): sent earlier, they
 * reach a daemon that lacks the armature before the upload does, and get NOT_FOUND. */
SKC_API int skc_async_ensure(skc_async *ac, const void *skf, size_t len, skc_async_cb cb,
                             void *privdata);

#ifdef __cplusplus
}
#endif

#endif
