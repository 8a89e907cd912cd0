/* The bodies of the evaluation messages (PROTOCOL.md "Evaluation request", "Render request")
 * as structs, with the one encoder and decoder the daemon, libskc and the load generator
 * share. Layout only: the codec checks counts against the protocol's limits; what the values
 * mean (finite, in range, names that resolve) is judged by the engine's request checks. No
 * I/O, no allocation, any thread. */
#ifndef SKP_MSG_H
#define SKP_MSG_H

#include <stdbool.h>

#include "skp.h"

/* Evaluation flags, bit values as on the wire. */
enum skp_eval_flag {
    SKP_EVAL_LOOP = 0x01,    /* frames wrap around the animation */
    SKP_EVAL_REVERSE = 0x02, /* frames count back from the end */
    SKP_EVAL_FROM = 0x04,    /* `from` is used */
    SKP_EVAL_MS = 0x08,      /* the animations' frames are times in ms (from stays a frame) */
    SKP_EVAL_Y_DOWN = 0x10,  /* y grows downwards */
    SKP_EVAL_RANGE = 0x20,   /* RENDER: every frame of `first`..`last` */
};
#define SKP_EVAL_KNOWN_FLAGS 0x3fu

enum skp_target { SKP_TARGET_ARMATURE = 0, SKP_TARGET_INSTANCE = 1 };
enum skp_camera { SKP_CAMERA_FIT = 0, SKP_CAMERA_EXPLICIT = 1 };
enum skp_format { SKP_FORMAT_PNG = 0, SKP_FORMAT_RGBA = 1 };
#define SKP_PNG_DEFAULT 255 /* png_level: the daemon's default encoder */
#define SKP_PNG_FAST 254    /* png_level: "fast", now the default too; else a zlib level 0-9 */
/* A RENDER body ends with the render request, which ends with its png_level byte then first
 * and last (u32) and cols and rows (u16): the level is this many bytes from the body's end. */
#define SKP_RENDER_PNG_FROM_END 13

/* A string on the wire: a view into the body when decoded (not terminated), the caller's
 * bytes when encoded. */
struct skp_str {
    const char *p;
    size_t len;
};

struct skp_anim_ref {
    struct skp_str name; /* a name, "#N" (index N, never a name), or a decimal index (a name
                          * wins) */
    double frame;        /* the frame to reach, or a time in ms with SKP_EVAL_MS */
    double smooth;
};

/* POSE, MESH and the first part of RENDER. from, range and sheet fields are always on the
 * wire; the flags say whether they apply. */
struct skp_eval_req {
    uint8_t target;                /* enum skp_target */
    uint8_t armature[SKP_ID_SIZE]; /* SKP_TARGET_ARMATURE */
    uint32_t instance;             /* SKP_TARGET_INSTANCE */
    uint16_t flags;                /* enum skp_eval_flag */
    uint8_t anim_count;            /* at most SKP_MAX_ANIMS */
    struct skp_anim_ref anims[SKP_MAX_ANIMS];
    double from;
    uint32_t warmup;
    double position[2], scale[2], velocity[2]; /* engine options (x, y) */
};

/* The second part of RENDER. */
struct skp_render_req {
    uint32_t width, height;
    uint8_t background[4]; /* straight RGBA */
    uint8_t camera;        /* enum skp_camera */
    double fit;            /* SKP_CAMERA_FIT: fraction of the canvas */
    double scale[2], position[2];
    uint8_t style_count; /* at most SKP_MAX_STYLES; 0: the default styles */
    struct skp_str styles[SKP_MAX_STYLES];
    uint8_t samples, format, png_level;
    uint32_t first, last; /* with SKP_EVAL_RANGE */
    uint16_t cols, rows;  /* spritesheet cells; 0 x 0 for separate pictures */
};

/* Defaults: an armature target, scale 1 x 1, everything else 0. */
void skp_eval_req_init(struct skp_eval_req *r);

/* 512 x 512, transparent, fit 0.9, scale 1, default styles, 4 samples, PNG, fast encoder. */
void skp_render_req_init(struct skp_render_req *r);

/* Upper bounds of the encoded sizes, for sizing the writer's buffer. */
size_t skp_eval_req_size(const struct skp_eval_req *r);
size_t skp_render_req_size(const struct skp_render_req *r);

/* Appends the body to w (w->err is set if it does not fit). */
void skp_encode_eval_req(struct skp_writer *w, const struct skp_eval_req *r);
void skp_encode_render_req(struct skp_writer *w, const struct skp_render_req *r);

/* Reads the body from rd into r; strings point into rd's buffer. Returns SKP_EOK, or
 * SKP_ECOUNT (more animations or styles than the protocol allows, or an unknown target),
 * SKP_ETRUNCATED or SKP_ETOOLONG. Does not check that rd is then at its end. */
int skp_decode_eval_req(struct skp_reader *rd, struct skp_eval_req *r);
int skp_decode_render_req(struct skp_reader *rd, struct skp_render_req *r);

/* ---- which daemon answered: the HELLO reply's server name ------------------------------- */

/* A node name (--node-name): 1 to 64 of A-Z a-z 0-9 . _ -, so that it needs no quoting in an
 * HTTP header, a Prometheus label or the server name. */
#define SKP_MAX_NODE_NAME 64
bool skp_node_name_valid(const char *s, size_t len);

/* The server name a daemon sends in its HELLO reply: "PACKAGE VERSION on NODE" (PROTOCOL.md),
 * from its PACKAGE_STRING and node name; the package alone when node is NULL or no valid node
 * name, so that strlen(package_string) + 4 + SKP_MAX_NODE_NAME + 1 bytes always hold it. Same
 * buffer contract as snprintf. */
size_t skp_hello_name(char *buf, size_t cap, const char *package_string, const char *node);

/* The daemon's version and node name in a HELLO reply's server name (views into name): false
 * when it is not "PACKAGE VERSION on NODE" (an older daemon's) or either is not a word a node
 * name could be. */
bool skp_hello_name_parse(const char *name, struct skp_str *version, struct skp_str *node);

#endif
