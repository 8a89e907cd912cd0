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

struct eng_error {
    int code;
    char msg[ENG_ERRMSG_MAX];
};

/* Fills err (if not NULL) with code and a printf-style message; returns code. Any thread. */
int eng_seterr(struct eng_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A string from a file made safe to quote in a message: printable ASCII only (others become
 * '?'), cut short with "...". Returns buf. */
#define ENG_QUOTE_MAX 48
const char *eng_quote(const char *s, char buf[ENG_QUOTE_MAX]);
/* The same into buf of cap bytes (at least 8). */
const char *eng_quote_n(const char *s, char *buf, size_t cap);

/* Static name of an error code ("bad file", ...). Any thread. */
const char *eng_strerror(int code);

#endif
