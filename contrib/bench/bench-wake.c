/* The machine's own floor under the daemon's latency: one byte sent back and forth between
 * two threads of one process through a pair of pipes, the least a request handed from the
 * loop thread to a worker and back can cost. No skeld code runs here.
 *
 *   bench-wake [--seconds S] [--rate R]
 *
 * With --rate (round trips per second) the sender sleeps until each is due, so both threads
 * go idle between them as the daemon's do under a paced load; without it they go back to
 * back. Prints the round trip's p50/p99/p99.9 and the CPU time and context switches of the
 * process per round trip. On a virtual machine that halts idle CPUs the CPU time per round
 * trip (two sleeps and two wake-ups) is what every hand-off between threads costs. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define MAX_TRIPS (1u << 22)

struct pipes {
    int to_echo[2], back[2];
};

static void *echo_main(void *arg)
{
    struct pipes *p = arg;
    char c;
    while (read(p->to_echo[0], &c, 1) == 1)
        if (write(p->back[1], &c, 1) != 1)
            break;
    return NULL;
}

struct usage {
    double cpu_us;
    long switches;
};

static struct usage usage_now(void)
{
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return (struct usage){(r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e6 + r.ru_utime.tv_usec +
                              r.ru_stime.tv_usec,
                          r.ru_nvcsw + r.ru_nivcsw};
}

static void sleep_until_us(double t_us)
{
    time_t sec = (time_t)(t_us / 1e6);
    struct timespec ts = {sec, (long)((t_us - (double)sec * 1e6) * 1e3)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

int main(int argc, char **argv)
{
    double seconds = 2, rate = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--seconds"))
            seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--rate"))
            rate = atof(argv[i + 1]);
        else
            break;
    }
    if ((argc - 1) % 2 || !(seconds > 0 && seconds <= 600) || !(rate >= 0 && rate <= 1e6)) {
        fprintf(stderr, "usage: bench-wake [--seconds S<=600] [--rate R<=1000000]\n");
        return 2;
    }
    struct pipes p;
    pthread_t echo;
    double *rtt = malloc(MAX_TRIPS * sizeof *rtt);
    if (!rtt || pipe(p.to_echo) || pipe(p.back) || pthread_create(&echo, NULL, echo_main, &p)) {
        fprintf(stderr, "bench-wake: cannot set up: %s\n", strerror(errno));
        return 1;
    }
    struct usage before = usage_now();
    double start = bench_now_us(), end = start + seconds * 1e6;
    size_t n = 0;
    for (double now = start; now < end && n < MAX_TRIPS; now = bench_now_us()) {
        if (rate > 0) {
            double due = start + (double)n * 1e6 / rate;
            if (due > now)
                sleep_until_us(due);
        }
        char c = 1;
        double t = bench_now_us();
        if (write(p.to_echo[1], &c, 1) != 1 || read(p.back[0], &c, 1) != 1) {
            fprintf(stderr, "bench-wake: pipe failed: %s\n", strerror(errno));
            return 1;
        }
        rtt[n++] = bench_now_us() - t;
    }
    struct usage after = usage_now();
    close(p.to_echo[1]); /* the echo thread reads EOF and ends */
    pthread_join(echo, NULL);
    if (!n)
        return 1;
    printf("thread round trips (%s): %zu; p50 %.3f ms p99 %.3f ms p99.9 %.3f ms; "
           "%.1f us CPU and %.2f context switches per round trip\n",
           rate > 0 ? "paced" : "back to back", n, bench_quantile(rtt, n, 0.5) / 1e3,
           bench_quantile(rtt, n, 0.99) / 1e3, bench_quantile(rtt, n, 0.999) / 1e3,
           (after.cpu_us - before.cpu_us) / (double)n,
           (double)(after.switches - before.switches) / (double)n);
    free(rtt);
    return 0;
}
