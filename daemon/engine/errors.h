/* Engine error values. The engine never aborts on bad input: every fallible call returns
 * 0 or one of these (negative) and, where it takes a struct eng_error, fills a message that
 * names the place of the problem. dispatch.c maps these to wire status codes. */
#ifndef SKELD_ENGINE_ERRORS_H
#define SKELD_ENGINE_ERRORS_H

#include <stddef.h>

enum eng_err {
    ENG_OK = 0,
    ENG_ENOMEM = -1,       /* allocation failed */
    ENG_EBADFILE = -2,     /* the file or armature.json is malformed */
    ENG_ELIMIT = -3,       /* a configured limit was exceeded */
    ENG_EUNSUPPORTED = -4, /* well-formed, but a format version or feature we do not read */
    ENG_EINVAL = -5,       /* bad argument (unknown animation, style, frame out of range...) */
    ENG_EIO = -6,          /* reading a file failed */
    ENG_ENOTFOUND = -7,    /* a name (animation, style) the armature does not have */
};

#define ENG_ERRMSG_MAX 256

/* Which limit an ENG_ELIMIT broke, when it is one the caller chose (load_limits,
 * request_limits): a server then names the option that sets it. */
enum eng_limit {
    ENG_LIMIT_FIXED = 0,    /* the engine's own, or not a limit */
    ENG_LIMIT_UNCOMPRESSED, /* load_limits.max_uncompressed */
    ENG_LIMIT_JSON,         /* load_limits.max_json */
    ENG_LIMIT_BONES,        /* load_limits.max_bones */
    ENG_LIMIT_IMAGE_PIXELS, /* request_limits.max_image_pixels */
    ENG_LIMIT_REPLY_PIXELS, /* request_limits.max_reply_pixels */
    ENG_LIMIT_BONE_STEPS    /* request_limits.max_bone_steps, or a picture's share of it */
};

struct eng_error {
    int code;
    char msg[ENG_ERRMSG_MAX];
    enum eng_limit limit;
};

/* Fills err (if not NULL) with code and a printf-style message; returns code. Any thread. */
int eng_seterr(struct eng_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* As eng_seterr with ENG_ELIMIT, naming the limit broken; returns ENG_ELIMIT. */
int eng_setlimit(struct eng_error *err, enum eng_limit which, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A string from a file made safe to quote in a message: well-formed UTF-8 of characters that
 * show as themselves (a control character, a byte that is not UTF-8, or a mark that reorders
 * or hides text becomes '?'), cut short with "..." between characters. Returns buf. */
#define ENG_QUOTE_MAX 48
const char *eng_quote(const char *s, char buf[ENG_QUOTE_MAX]);
/* The same into buf of cap bytes (at least 8). */
const char *eng_quote_n(const char *s, char *buf, size_t cap);

/* Static name of an error code ("bad file", ...). Any thread. */
const char *eng_strerror(int code);

#endif
