/* Leveled logging, one logfmt line per event (ts=... level=... msg="..."), to stderr or to
 * --log-file. Any thread: the level may change at run time (SIGHUP), and each line is one
 * write(2), so lines from different threads never interleave. */
#ifndef SKELD_LOG_H
#define SKELD_LOG_H

#include <stdbool.h>
#include <stddef.h>

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log_set_level(enum log_level level);

/* Whether a line at level would be written: callers skip building costly ones. */
bool log_enabled(enum log_level level);

/* Parses "error", "warn", "info" or "debug"; -1 if none. */
int log_parse_level(const char *s);

/* Logs to path (appending; created 0640) instead of stderr; NULL or "" for stderr. The
 * same path is opened again by log_reopen (SIGHUP, after logrotate moved the file). 0, or
 * -1 with errno (the previous destination stays). Loop thread. */
int log_open(const char *path);
int log_reopen(void);

/* A message: msg="..." with quotes, backslashes and control characters escaped. */
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An access line at level (info, or debug for what would drown the log): "event=access" and
 * the caller's key=value fields, which must already be logfmt (values with spaces or quotes
 * through log_value). */
void log_access(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* s as a logfmt value into out (quoted and escaped when it has to be, cut to fit cap);
 * returns out. */
const char *log_value(char *out, size_t cap, const char *s);

#endif
