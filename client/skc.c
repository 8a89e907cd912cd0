/* libskc: the handle (connect, free, errors) and the small pieces every file shares. The
 * wire work lives in skc_io.c (stream), skc_req.c (requests), skc_reply.c (replies) and
 * skc_net.c (connecting). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "autoconfig.h"
#include "skc_int.h"

#define DEFAULT_CONNECT_MS 5000
#define DEFAULT_IO_MS 60000

/* The public enums repeat proto's numbers (skc.h may not include skp.h): keep them equal. */
#define SAME_OP(name, value) _Static_assert((int)SKC_OP_##name == (int)SKP_OP_##name, #name);
SKP_OPCODES(SAME_OP)
#define SAME_STATUS(name, value, msg) _Static_assert((int)SKC_S_##name == (int)SKP_S_##name, #name);
SKP_STATUSES(SAME_STATUS)
_Static_assert(SKC_ID_SIZE == SKP_ID_SIZE, "id size");
_Static_assert(SKC_MAX_ANIMS == SKP_MAX_ANIMS, "animations per request");
_Static_assert(SKC_MAX_NAME == SKP_MAX_NAME, "string limit");
/* skc.h names the release it ships with: configure.ac's AC_INIT version. */
_Static_assert(SKC_VERSION_MAJOR == SKELD_VERSION_MAJOR &&
                   SKC_VERSION_MINOR == SKELD_VERSION_MINOR &&
                   SKC_VERSION_PATCH == SKELD_VERSION_PATCH,
               "client/skc.h SKC_VERSION_* differ from the version in configure.ac's AC_INIT");

#define STR_(x) #x
#define STR(x) STR_(x)

int skc__fail(skc_client *c, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    return code;
}

const char *skc__errno_str(int e, char *buf, size_t len)
{
    if (strerror_r(e, buf, len) != 0)
        snprintf(buf, len, "error %d", e);
    return buf;
}

void skc__begin(skc_client *c)
{
    c->err[0] = '\0';
    c->status = SKC_S_OK;
}

int64_t skc__deadline(int timeout_ms)
{
    struct timespec ts;
    if (timeout_ms < 0)
        return -1;
    /* CLOCK_MONOTONIC cannot fail on the systems we run on; if it did, time would stand
     * still at 0 and only the poll() waits themselves would bound a call. */
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return timeout_ms;
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + timeout_ms;
}

int skc__remaining(int64_t deadline)
{
    if (deadline < 0)
        return -1;
    int64_t left = deadline - skc__deadline(0);
    if (left <= 0)
        return 0;
    return left > 1000000000 ? 1000000000 : (int)left;
}

const char *skc_version(void)
{
    return STR(SKC_VERSION_MAJOR) "." STR(SKC_VERSION_MINOR) "." STR(SKC_VERSION_PATCH);
}

int skc_version_number(void)
{
    return SKC_VERSION_NUMBER;
}

const char *skc_strerror(int err)
{
    switch (err) {
    case SKC_OK: return "success";
    case SKC_EINVAL: return "invalid argument";
    case SKC_ENOMEM: return "out of memory";
    case SKC_EIO: return "connection error";
    case SKC_ETIMEOUT: return "timed out";
    case SKC_EPROTO: return "protocol error";
    case SKC_ESERVER: return "error reply from the server";
    case SKC_EAGAIN: return "not ready yet (non-blocking)";
    default: return "unknown error";
    }
}

const char *skc_status_str(int status)
{
    return skp_strerror(status);
}

/* Copies s (NULL or "" give NULL) into *dst; 0 or -1 out of memory. */
static int keep_str(char **dst, const char *s)
{
    *dst = NULL;
    if (!s || !*s)
        return 0;
    size_t n = strlen(s) + 1;
    *dst = malloc(n);
    if (!*dst)
        return -1;
    memcpy(*dst, s, n);
    return 0;
}

int skc__setup(skc_client *c, const skc_options *opt)
{
    c->fd = -1;
    c->server_max = SKP_MAX_FRAME;
    if (!opt)
        return skc__fail(c, SKC_EINVAL, "no options");
    c->connect_timeout_ms = opt->connect_timeout_ms ? opt->connect_timeout_ms : DEFAULT_CONNECT_MS;
    c->io_timeout_ms = opt->io_timeout_ms ? opt->io_timeout_ms : DEFAULT_IO_MS;
    c->max_reply =
        opt->max_reply && opt->max_reply < SKP_MAX_FRAME ? opt->max_reply : SKP_MAX_FRAME;
    if (opt->auth_token && strlen(opt->auth_token) > SKP_MAX_NAME) /* HELLO's str */
        return skc__fail(c, SKC_EINVAL, "the auth token is over %d bytes", SKP_MAX_NAME);
    if (keep_str(&c->uri, opt->uri) || keep_str(&c->token, opt->auth_token))
        return skc__fail(c, SKC_ENOMEM, "out of memory for the options");
    return 0;
}

/* Dials and says HELLO within the connect timeout; closes again on failure. */
static int open_connection(skc_client *c)
{
    int64_t deadline = skc__deadline(c->connect_timeout_ms);
    int rc = skc__dial(c, c->uri, deadline);
    if (rc == 0)
        rc = skc__hello(c, c->token, deadline);
    if (rc && c->fd >= 0)
        skc__close(c, "the connection failed to start");
    return rc;
}

int skc_connect(skc_client **out, const skc_options *opt)
{
    if (!out)
        return SKC_EINVAL;
    skc_client *c = calloc(1, sizeof *c);
    *out = c;
    if (!c)
        return SKC_ENOMEM;
    int rc = skc__setup(c, opt);
    return rc ? rc : open_connection(c);
}

int skc_set_auth_token(skc_client *c, const char *auth_token)
{
    if (!c)
        return SKC_EINVAL;
    skc__begin(c);
    char *kept;
    if (auth_token && strlen(auth_token) > SKP_MAX_NAME)
        return skc__fail(c, SKC_EINVAL, "the auth token is over %d bytes", SKP_MAX_NAME);
    if (keep_str(&kept, auth_token))
        return skc__fail(c, SKC_ENOMEM, "out of memory for the token");
    free(c->token);
    c->token = kept;
    return 0;
}

int skc_reconnect(skc_client *c)
{
    if (!c)
        return SKC_EINVAL;
    skc__begin(c);
    if (!c->uri)
        return skc__fail(c, SKC_EINVAL, "no URI to reconnect to");
    if (c->fd >= 0)
        skc__close(c, "closed to reconnect");
    skc__reset(c);
    c->server_max = SKP_MAX_FRAME;
    c->server_version = 0;
    c->server_name[0] = '\0';
    return open_connection(c);
}

void skc_free(skc_client *c)
{
    if (!c)
        return;
    if (c->fd >= 0)
        skc__close(c, "closed");
    skc__pend_free(c);
    free(c->in);
    free(c->out);
    free(c->uri);
    free(c->token);
    free(c);
}

int skc_fd(const skc_client *c)
{
    return c ? c->fd : -1;
}

int skc_set_nonblocking(skc_client *c, int on)
{
    if (!c)
        return SKC_EINVAL;
    skc__begin(c);
    c->nonblock = on != 0;
    return 0;
}

const char *skc_errmsg(const skc_client *c)
{
    if (!c)
        return "no client handle (out of memory)";
    return c->err[0] ? c->err : "no error";
}

int skc_status(const skc_client *c)
{
    return c ? c->status : SKC_S_OK;
}

unsigned skc_server_version(const skc_client *c)
{
    return c ? c->server_version : 0;
}

const char *skc_server_name(const skc_client *c)
{
    return c ? c->server_name : "";
}

uint32_t skc_server_max_frame(const skc_client *c)
{
    return c ? c->server_max : 0;
}

void skc_eval_init(skc_eval *ev)
{
    if (!ev)
        return;
    memset(ev, 0, sizeof *ev);
    ev->target = SKC_TARGET_ARMATURE;
    ev->scale = (skc_vec2){1.0, 1.0};
}

void skc_render_opts_init(skc_render_opts *ro)
{
    if (!ro)
        return;
    memset(ro, 0, sizeof *ro);
    ro->width = ro->height = 512;
    ro->camera = SKC_CAMERA_FIT;
    ro->fit = 0.9;
    ro->scale = (skc_vec2){1.0, 1.0};
    ro->samples = 4;
    ro->format = SKC_FORMAT_PNG;
    ro->png_level = SKC_PNG_DEFAULT;
}
