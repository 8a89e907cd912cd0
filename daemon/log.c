#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static _Atomic int current = LOG_INFO;
static const char *const names[] = {"error", "warn", "info", "debug"};
static int log_fd = 2; /* stderr until log_open names a file */
static char *log_path; /* loop thread only */

void log_set_level(enum log_level level)
{
    atomic_store_explicit(&current, (int)level, memory_order_relaxed);
}

bool log_enabled(enum log_level level)
{
    return (int)level <= atomic_load_explicit(&current, memory_order_relaxed);
}

int log_parse_level(const char *s)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

static int open_log(const char *path)
{
    return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
}

int log_open(const char *path)
{
    if (!path || !*path) {
        free(log_path);
        log_path = NULL;
        return 0;
    }
    char *copy = strdup(path);
    if (!copy)
        return -1;
    free(log_path);
    log_path = copy;
    return log_reopen();
}

int log_reopen(void)
{
    if (!log_path)
        return 0;
    int fd = open_log(log_path);
    if (fd < 0)
        return -1;
    if (log_fd == 2) { /* the first file: other threads start writing to it from now */
        log_fd = fd;
        return 0;
    }
    /* dup2 swaps the file under the same descriptor at once: a thread writing meanwhile
     * writes whole lines to the old file or to the new one. */
    int rc = dup2(fd, log_fd) < 0 ? -1 : 0;
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}

/* The length of the UTF-8 character at p if it is a well-formed one that shows as text
 * (U+00A0 on: not a C1 control, which a terminal may take as an escape), else 0. */
static size_t shown_utf8(const unsigned char *p)
{
    size_t len = p[0] >= 0xf5 ? 0 : p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 ? 2 : 0;
    uint32_t cp = len ? p[0] & (0x7f >> len) : 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80) /* a NUL ends the loop here too */
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    static const uint32_t least[5] = {0, 0, 0xa0, 0x800, 0x10000};
    if (!len || cp < least[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

/* s into out as a logfmt value: bare if it can be (printable ASCII), else in quotes with
 * quotes and backslashes escaped, newlines as \n, and other control characters, DEL and bytes
 * that are not UTF-8 text as '?': what a client sent cannot forge a line or steer a
 * terminal. */
static const char *quote(char *out, size_t cap, const char *s, bool always)
{
    bool bare = !always && *s != 0;
    for (const char *p = s; *p && bare; p++)
        bare = (unsigned char)*p > ' ' && (unsigned char)*p < 0x7f && *p != '"' && *p != '=' &&
               *p != '\\';
    if (bare) {
        snprintf(out, cap, "%s", s);
        return out;
    }
    size_t k = 0;
    if (cap < 3) {
        if (cap)
            out[0] = 0;
        return out;
    }
    out[k++] = '"';
    for (const char *p = s; *p && k + 4 < cap; p++) {
        unsigned char ch = (unsigned char)*p;
        size_t u = ch >= 0x80 ? shown_utf8((const unsigned char *)p) : 0;
        if (ch == '"' || ch == '\\' || ch == '\n') {
            out[k++] = '\\';
            out[k++] = ch == '\n' ? 'n' : (char)ch;
        } else if (u && k + u + 1 < cap) { /* a whole character, or none of it */
            memcpy(out + k, p, u);
            k += u;
            p += u - 1;
        } else {
            out[k++] = ch < ' ' || ch >= 0x7f ? '?' : (char)ch;
        }
    }
    out[k++] = '"';
    out[k] = 0;
    return out;
}

const char *log_value(char *out, size_t cap, const char *s)
{
    return quote(out, cap, s, false);
}

/* "ts=... level=L " then body, a newline, in one write. */
static void emit(enum log_level level, const char *body)
{
    char stamp[32], line[2200];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    int n = snprintf(line, sizeof line, "ts=%s.%03ldZ level=%s %s\n", stamp, ts.tv_nsec / 1000000,
                     names[level], body);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof line) { /* cut: the line still ends */
        n = sizeof line - 1;
        line[n - 1] = '\n';
    }
    size_t off = 0;
    while (off < (size_t)n) {
        ssize_t w = write(log_fd, line + off, (size_t)n - off);
        if (w > 0)
            off += (size_t)w;
        else if (w < 0 && errno == EINTR)
            continue;
        else
            return; /* nowhere to say that logging failed */
    }
}

void log_msg(enum log_level level, const char *fmt, ...)
{
    if (!log_enabled(level))
        return;
    char msg[1024], body[2100];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char value[2090];
    snprintf(body, sizeof body, "msg=%s", quote(value, sizeof value, msg, true));
    emit(level, body);
}

void log_access(enum log_level level, const char *fmt, ...)
{
    if (!log_enabled(level))
        return;
    char fields[1900], body[2000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fields, sizeof fields, fmt, ap);
    va_end(ap);
    snprintf(body, sizeof body, "event=access %s", fields);
    emit(level, body);
}
