/* libskc's asynchronous handle with deep pipelines: does a reply cost the same however many
 * requests are in flight?
 *
 *   bench-async --uri URI [--depth N] [--runs R]
 *
 * On one connection to a running skeld, a burst of N PINGs (default 20000) is queued at once
 * and the loop (skc_uv.h) runs until every reply has come back; then a burst of 4N. Bursts
 * alternate, R of each (default 5), and each burst's time is divided by its requests. The
 * figures are the medians, and the baseline is the small burst's time a request, from the
 * same run: a ratio near 1.0 means a reply costs the same at 4N in flight as at N (a table
 * searched linearly made it grow with N: 80,000 took 14x the time of 20,000 a request). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "skc_uv.h"

struct burst {
    size_t left;
    int failed;
};

static void on_pong(skc_async *ac, int err, skc_reply *r, void *privdata)
{
    (void)ac;
    struct burst *b = privdata;
    b->failed |= err != 0;
    skc_reply_free(r);
    b->left--;
}

/* Microseconds a request for a burst of n PINGs, or a negative number on failure. */
static double burst(uv_loop_t *loop, skc_async *ac, size_t n)
{
    struct burst b = {n, 0};
    double t0 = bench_now_us();
    for (size_t i = 0; i < n; i++)
        if (skc_async_ping(ac, NULL, 0, on_pong, &b)) {
            fprintf(stderr, "bench-async: %s\n", skc_async_errmsg(ac));
            return -1;
        }
    while (b.left && uv_run(loop, UV_RUN_ONCE))
        ;
    return b.left || b.failed ? -1 : (bench_now_us() - t0) / (double)n;
}

static void on_connect(skc_async *ac, int err)
{
    if (err)
        fprintf(stderr, "bench-async: %s\n", skc_async_errmsg(ac));
    *(int *)skc_async_data(ac) = err ? -1 : 1;
}

int main(int argc, char **argv)
{
    const char *uri = NULL;
    long depth = 20000, runs = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--uri"))
            uri = argv[i + 1];
        else if (!strcmp(argv[i], "--depth"))
            depth = strtol(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--runs"))
            runs = strtol(argv[i + 1], NULL, 10);
    }
    if (!uri || depth < 1 || depth > 1000000 || runs < 1 || runs > 100) {
        fprintf(stderr, "usage: bench-async --uri URI [--depth 1..1000000] [--runs 1..100]\n");
        return 2;
    }
    uv_loop_t *loop = uv_default_loop();
    /* the whole burst is queued before the first reply: a long limit */
    skc_options opt = {.uri = uri, .io_timeout_ms = 600000};
    skc_async *ac;
    int up = 0;
    if (skc_async_connect(&ac, &opt) || skc_uv_attach(ac, loop)) {
        fprintf(stderr, "bench-async: %s\n", skc_async_errmsg(ac));
        skc_async_free(ac);
        return 1;
    }
    skc_async_set_data(ac, &up);
    skc_async_set_connect_cb(ac, on_connect);
    while (!up && uv_run(loop, UV_RUN_ONCE))
        ;
    double *small = calloc((size_t)runs, sizeof *small), *big = calloc((size_t)runs, sizeof *big);
    int rc = up == 1 && small && big ? 0 : 1;
    for (long k = 0; rc == 0 && k < runs; k++) {
        small[k] = burst(loop, ac, (size_t)depth);
        big[k] = burst(loop, ac, 4 * (size_t)depth);
        rc = small[k] < 0 || big[k] < 0;
    }
    if (rc == 0) {
        double s = bench_quantile(small, (size_t)runs, 0.5),
               b = bench_quantile(big, (size_t)runs, 0.5);
        printf("async PING bursts on one connection: %ld in flight %.3f us a request, %ld in "
               "flight %.3f us: %.2fx (median of %ld alternating bursts each)\n",
               depth, s, 4 * depth, b, b / s, runs);
    }
    free(small);
    free(big);
    skc_async_free(ac);
    uv_run(loop, UV_RUN_DEFAULT); /* the adapter's handles close */
    uv_loop_close(loop);
    return rc;
}
