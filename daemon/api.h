/* The HTTP front's request layer (proto/HTTP.md): routes, queries read through the command
 * lines' flag table, ETags and caching headers, /metrics, /healthz and /readyz, and the work
 * itself through dispatch's request machinery, so HTTP has no validation of its own. It owns
 * the HTTP connection set's hooks. Loop thread only. */
#ifndef SKELD_API_H
#define SKELD_API_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch.h"
#include "http.h"

#define API_ROUTES 9
#define API_STATUSES 18

struct api {
    struct dispatch *d;
    const struct config *cfg;
    struct http_set *http;
    bool ready; /* preloading is done: /readyz answers 200 */
    /* requests by route and status, for /metrics */
    uint64_t counts[API_ROUTES][API_STATUSES];
};

/* The hooks that make api the owner of a struct http_set (owner: the struct api). */
extern const struct http_hooks api_http_hooks;

void api_init(struct api *a, struct dispatch *d, const struct config *cfg, struct http_set *http);

#endif
