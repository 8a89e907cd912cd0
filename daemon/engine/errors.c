#include "errors.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int set_error(struct eng_error *err, int code, enum eng_limit which, const char *fmt,
                     va_list ap)
{
    if (err) {
        err->code = code;
        err->limit = which;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    }
    return code;
}

int eng_seterr(struct eng_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_error(err, code, ENG_LIMIT_FIXED, fmt, ap);
    va_end(ap);
    return code;
}

int eng_setlimit(struct eng_error *err, enum eng_limit which, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_error(err, ENG_ELIMIT, which, fmt, ap);
    va_end(ap);
    return ENG_ELIMIT;
}

const char *eng_strerror(int code)
{
    switch (code) {
    case ENG_OK: return "ok";
    case ENG_ENOMEM: return "out of memory";
    case ENG_EBADFILE: return "bad file";
    case ENG_ELIMIT: return "limit exceeded";
    case ENG_EUNSUPPORTED: return "unsupported";
    case ENG_EINVAL: return "invalid argument";
    case ENG_EIO: return "i/o error";
    case ENG_ENOTFOUND: return "not found";
    default: return "unknown error";
    }
}

const char *eng_quote(const char *s, char buf[ENG_QUOTE_MAX])
{
    return eng_quote_n(s, buf, ENG_QUOTE_MAX);
}

/* Whether code point c may be shown: not a control character (C0, DEL, C1), nor one that
 * reorders or hides text on a terminal or in a log (zero-width and bidirectional marks,
 * embeddings, overrides and isolates, the byte order mark). */
static bool shown_code_point(uint32_t c)
{
    return c >= 0x20 && !(c >= 0x7f && c < 0xa0) && !(c >= 0x200b && c <= 0x200f) &&
           !(c >= 0x202a && c <= 0x202e) && !(c >= 0x2066 && c <= 0x2069) && c != 0xfeff;
}

/* The length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF) with its code point in *c, or 0 if none starts there. */
static size_t utf8_at(const unsigned char *s, uint32_t *c)
{
    size_t n = s[0] < 0x80                    ? 1
               : s[0] >= 0xc2 && s[0] <= 0xdf ? 2
               : (s[0] & 0xf0) == 0xe0        ? 3
               : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4
                                              : 0;
    uint32_t v = n == 1 ? s[0] : s[0] & (0x7f >> n);
    for (size_t k = 1; k < n; k++) {
        if ((s[k] & 0xc0) != 0x80) /* also the terminating NUL */
            return 0;
        v = v << 6 | (s[k] & 0x3f);
    }
    if ((n == 3 && (v < 0x800 || (v >= 0xd800 && v <= 0xdfff))) ||
        (n == 4 && (v < 0x10000 || v > 0x10ffff)))
        return 0;
    *c = v;
    return n;
}

const char *eng_quote_n(const char *s, char *buf, size_t cap)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, o = 0;
    while (u[i]) {
        uint32_t c = 0;
        size_t n = utf8_at(u + i, &c);
        bool shown = n && shown_code_point(c);
        if (o + (shown ? n : 1) > cap - 8) /* room kept for "..." */
            break;
        if (shown)
            memcpy(buf + o, s + i, n);
        else
            buf[o] = '?';
        o += shown ? n : 1;
        i += n ? n : 1;
    }
    if (u[i]) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = 0;
    return buf;
}
