/* Readiness and state for a service manager (systemd's sd_notify protocol, Type=notify):
 * the start's progress while preloading, ready once listening and preloaded, reloading around
 * SIGHUP, stopping when the drain begins, each with a human STATUS= line for `systemctl
 * status`. Without NOTIFY_SOCKET in the environment (not started by systemd) every call does
 * nothing. Loop thread only. */
#ifndef SKELD_NOTIFY_H
#define SKELD_NOTIFY_H

#include <stdint.h>

/* READY=1: serving (at start, and again when a reload is done). */
void notify_ready(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Progress of a long start (the preload): STATUS= and EXTEND_TIMEOUT_USEC=extend_usec, so
 * that systemd (236 or later) gives the start that much more time from now, past
 * TimeoutStartSec=, for as long as it advances. */
void notify_progress(uint64_t extend_usec, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* RELOADING=1: a SIGHUP reload has begun; notify_ready ends it, whatever its outcome. */
void notify_reloading(void);

/* STOPPING=1: the daemon has stopped accepting and is draining. */
void notify_stopping(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
