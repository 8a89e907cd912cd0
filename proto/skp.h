/* skeld wire protocol (PROTOCOL.md): constants, frame header, status codes, and an I/O-free
 * codec shared by the daemon and libskc. Nothing here allocates or touches a socket; callers
 * supply every buffer. Any thread. */
#ifndef SKP_H
#define SKP_H

#include <stddef.h>
#include <stdint.h>

#define SKP_MAGIC 0x444C4B53u /* "SKLD" read as a little-endian u32 */
#define SKP_VERSION 1
#define SKP_HEADER_SIZE 20
#define SKP_MAX_FRAME (64u << 20)
#define SKP_MAX_NAME 1024
#define SKP_MAX_ANIMS 16
#define SKP_MAX_STYLES 64
#define SKP_ID_SIZE 32
#define SKP_F_REPLY 0x0001u

/* Opcodes: X(name, value). */
#define SKP_OPCODES(X)                                                                             \
    X(HELLO, 1)                                                                                    \
    X(PING, 2)                                                                                     \
    X(LOAD_PATH, 3)                                                                                \
    X(LOAD_BYTES, 4)                                                                               \
    X(UNLOAD, 5)                                                                                   \
    X(INFO, 6)                                                                                     \
    X(INSTANCE_NEW, 7)                                                                             \
    X(INSTANCE_FREE, 8)                                                                            \
    X(POSE, 9)                                                                                     \
    X(MESH, 10)                                                                                    \
    X(RENDER, 11)                                                                                  \
    X(STATS, 12)                                                                                   \
    X(INFO_JSON, 13)

enum skp_opcode {
#define SKP_X(name, value) SKP_OP_##name = value,
    SKP_OPCODES(SKP_X)
#undef SKP_X
        SKP_OP_MAX = 14
};

/* Status codes: X(name, value, message). Below 100 the client is at fault. */
#define SKP_STATUSES(X)                                                                            \
    X(OK, 0, "ok")                                                                                 \
    X(BAD_REQUEST, 1, "malformed request")                                                         \
    X(FRAMING, 2, "framing error")                                                                 \
    X(VERSION, 3, "unsupported protocol version")                                                  \
    X(TOO_BIG, 4, "frame too large")                                                               \
    X(UNKNOWN_OPCODE, 5, "unknown opcode")                                                         \
    X(AUTH, 6, "authentication required")                                                          \
    X(NOT_FOUND, 7, "not found")                                                                   \
    X(BAD_FILE, 8, "bad armature file")                                                            \
    X(LIMIT, 9, "limit exceeded")                                                                  \
    X(FORBIDDEN_PATH, 10, "path not allowed")                                                      \
    X(BUSY, 100, "server busy")                                                                    \
    X(SHUTDOWN, 101, "server shutting down")                                                       \
    X(INTERNAL, 102, "internal error")                                                             \
    X(NO_MEMORY, 103, "out of memory")

enum skp_status {
#define SKP_X(name, value, msg) SKP_S_##name = value,
    SKP_STATUSES(SKP_X)
#undef SKP_X
};

/* How many statuses there are, and one past the largest value: for tables by status. */
enum {
#define SKP_X(name, value, msg) +1
    SKP_STATUS_COUNT = 0 SKP_STATUSES(SKP_X),
#undef SKP_X
    SKP_STATUS_END = SKP_S_NO_MEMORY + 1
};

/* Codec errors (negative), distinct from wire statuses. */
enum skp_err {
    SKP_EOK = 0,
    SKP_ETRUNCATED = -1, /* a field runs past the end of the body */
    SKP_ETOOLONG = -2,   /* a string or blob longer than allowed */
    SKP_ENOSPACE = -3,   /* the output buffer is full */
    SKP_ETRAILING = -4,  /* bytes left after the last field */
    SKP_ECOUNT = -5,     /* a count or enum field beyond what the protocol allows */
    SKP_ENUL = -6,       /* a string holds a NUL byte (strings are UTF-8 without NUL) */
};

struct skp_header {
    uint8_t version;
    uint8_t opcode;
    uint16_t flags;
    uint16_t status;
    uint32_t id;
    uint32_t body_len;
};

/* Name of an opcode ("POSE"), or "?" for an unknown one. */
const char *skp_opcode_name(int opcode);

/* Name of a wire status ("BUSY"), or "?". */
const char *skp_status_name(int status);

/* Message of a wire status ("server busy"), or "unknown status". */
const char *skp_strerror(int status);

/* 1 if status is a client fault (below 100 and not OK). */
int skp_is_client_fault(int status);

/* Lowercase hex of n bytes into out (2n characters and a NUL): how armature ids are written
 * in URLs, logs and JSON. */
void skp_hex(char *out, const uint8_t *b, size_t n);

/* Parses exactly 2n lowercase hex digits (len must be 2n) into out; 0, or -1 if the text is
 * not that (out is then unspecified). */
int skp_unhex(uint8_t *out, size_t n, const char *s, size_t len);

void skp_put_u16(uint8_t *p, uint16_t v);
void skp_put_u32(uint8_t *p, uint32_t v);
void skp_put_u64(uint8_t *p, uint64_t v);
uint16_t skp_get_u16(const uint8_t *p);
uint32_t skp_get_u32(const uint8_t *p);
uint64_t skp_get_u64(const uint8_t *p);

/* Writes h (with magic) into out[SKP_HEADER_SIZE]. */
void skp_encode_header(const struct skp_header *h, uint8_t *out);

/* A body being written into a caller's buffer. Writes past cap set err and write nothing. */
struct skp_writer {
    uint8_t *buf;
    size_t cap, len;
    int err;
};

void skp_writer_init(struct skp_writer *w, uint8_t *buf, size_t cap);
void skp_write_u8(struct skp_writer *w, uint8_t v);
void skp_write_u16(struct skp_writer *w, uint16_t v);
void skp_write_u32(struct skp_writer *w, uint32_t v);
void skp_write_i32(struct skp_writer *w, int32_t v);
void skp_write_f64(struct skp_writer *w, double v);
/* n doubles in a row: one bounds check, and one copy on little-endian hosts (the wire's
 * order), for the long runs of POSE and MESH replies. */
void skp_write_f64s(struct skp_writer *w, const double *v, size_t n);
/* n u32s in a row, likewise (MESH's triangle indices). */
void skp_write_u32s(struct skp_writer *w, const uint32_t *v, size_t n);
void skp_write_str(struct skp_writer *w, const char *s, size_t len);
void skp_write_bytes(struct skp_writer *w, const void *p, size_t len);
void skp_write_raw(struct skp_writer *w, const void *p, size_t len);

/* One bone of a POSE reply (PROTOCOL.md, "bones"), written by one call with one bounds check:
 * a reply holds a record for every bone, and a call per field was a third of its cost. */
struct skp_pose_bone {
    double fields[11]; /* pos.x, pos.y, rot, scale.x, scale.y, then the matrix a b c d tx ty */
    uint8_t hidden;
    int32_t zindex;
    const char *tex; /* texture name, tex_len bytes (at most SKP_MAX_NAME) */
    size_t tex_len;
    const double *tint; /* r g b a */
    uint32_t vert_count;
    const double *verts; /* x, y pairs */
};
void skp_write_pose_bone(struct skp_writer *w, const struct skp_pose_bone *b);

/* A body being read; a read past the end sets err and yields zeros. */
struct skp_reader {
    const uint8_t *buf;
    size_t len, pos;
    int err;
};

void skp_reader_init(struct skp_reader *r, const uint8_t *buf, size_t len);
uint8_t skp_read_u8(struct skp_reader *r);
uint16_t skp_read_u16(struct skp_reader *r);
uint32_t skp_read_u32(struct skp_reader *r);
int32_t skp_read_i32(struct skp_reader *r);
double skp_read_f64(struct skp_reader *r);
/* Strings and blobs are views into the body (not terminated). */
const char *skp_read_str(struct skp_reader *r, size_t *len);
const void *skp_read_bytes(struct skp_reader *r, size_t *len, size_t max);
const void *skp_read_raw(struct skp_reader *r, size_t len);
/* SKP_EOK if every byte was read and nothing failed, else the error. */
int skp_reader_finish(const struct skp_reader *r);

#endif
