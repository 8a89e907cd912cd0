/* Leveled logging to stderr. The level is set once at startup (before threads start). */
#ifndef SKELD_LOG_H
#define SKELD_LOG_H

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log_set_level(enum log_level level);

/* Parses "error", "warn", "info" or "debug"; -1 if none. */
int log_parse_level(const char *s);

/* Any thread. */
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
