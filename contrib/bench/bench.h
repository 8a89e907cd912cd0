/* Helpers every benchmark shares: a monotonic clock and order statistics. Header-only (each
 * bench is one program), static so that unused ones cost nothing. */
#ifndef SKELD_BENCH_H
#define SKELD_BENCH_H

#include <stdlib.h>
#include <time.h>

/* Monotonic time in microseconds. */
static inline double bench_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile (0..1, nearest rank) of v[0..n), sorting v. */
static inline double bench_quantile(double *v, size_t n, double q)
{
    qsort(v, n, sizeof *v, bench_cmp_double);
    return v[(size_t)(q * (double)(n - 1) + 0.5)];
}

#endif
