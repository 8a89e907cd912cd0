#include "notify.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <systemd/sd-daemon.h>

#include "log.h"

/* Sends state (newline-separated assignments) and, when status is not empty, a STATUS= line.
 * A failed notification is worth one warning (a wrong NOTIFY_SOCKET, a full queue): systemd
 * times out the start or the reload on its own, and the log then says why. */
static void notify_send(const char *state, const char *status)
{
    static bool warned;
    const char *where = getenv("NOTIFY_SOCKET");
    if (!where || !*where)
        return;
    int rc = sd_notifyf(0, "%s%s%s", state, *status ? "\nSTATUS=" : "", status);
    if (rc < 0 && !warned) {
        log_msg(LOG_WARN, "sd_notify to %s: %s", where, strerror(-rc));
        warned = true;
    }
}

/* STATUS= is one line: a newline in it would start an assignment of its own. */
static void notify_format(char *out, size_t size, const char *fmt, va_list ap)
{
    vsnprintf(out, size, fmt, ap);
    out[strcspn(out, "\n")] = 0;
}

void notify_ready(const char *fmt, ...)
{
    char status[256];
    va_list ap;
    va_start(ap, fmt);
    notify_format(status, sizeof status, fmt, ap);
    va_end(ap);
    notify_send("READY=1", status);
}

void notify_reloading(void)
{
    /* MONOTONIC_USEC: when the reload began. systemd 253's Type=notify-reload requires it;
     * older managers ignore it. */
    char state[64] = "RELOADING=1";
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) == 0)
        snprintf(state, sizeof state, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64,
                 (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u);
    notify_send(state, "reloading the configuration");
}

void notify_progress(uint64_t extend_usec, const char *fmt, ...)
{
    char status[256], state[64];
    va_list ap;
    va_start(ap, fmt);
    notify_format(status, sizeof status, fmt, ap);
    va_end(ap);
    snprintf(state, sizeof state, "EXTEND_TIMEOUT_USEC=%" PRIu64, extend_usec);
    notify_send(state, status);
}

void notify_stopping(const char *fmt, ...)
{
    char status[256];
    va_list ap;
    va_start(ap, fmt);
    notify_format(status, sizeof status, fmt, ap);
    va_end(ap);
    notify_send("STOPPING=1", status);
}
