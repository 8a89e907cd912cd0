#include "errors.h"

#include <stdarg.h>
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

const char *eng_quote_n(const char *s, char *buf, size_t cap)
{
    size_t i = 0;
    for (; s[i] && i < cap - 8; i++)
        buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    if (s[i]) {
        memcpy(buf + i, "...", 3);
        i += 3;
    }
    buf[i] = 0;
    return buf;
}
