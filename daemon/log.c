#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static enum log_level current = LOG_INFO;
static const char *const names[] = {"error", "warn", "info", "debug"};

void log_set_level(enum log_level level)
{
    current = level;
}

int log_parse_level(const char *s)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
    if (level > current)
        return;
    char stamp[32];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* One fprintf per line keeps lines from different threads whole. */
    fprintf(stderr, "%s.%03ldZ skeld %s: %s\n", stamp, ts.tv_nsec / 1000000, names[level], line);
}
