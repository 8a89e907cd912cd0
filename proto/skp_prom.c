#include "skp_prom.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct text {
    char *buf;
    size_t cap, len;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = t->len < t->cap ? t->cap - t->len : 0;
    int n = vsnprintf(room ? t->buf + t->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->len += (size_t)n;
}

/* The counters that are one metric each: STATS name, metric name (after "skeld_"), type,
 * help. */
static const struct {
    const char *stat, *metric, *type, *help;
} plain[] = {
    {"errors", "errors_total", "counter", "Error replies of the binary protocol."},
    {"busy", "busy_total", "counter", "Requests refused: the queue was full."},
    {"jobs.dropped", "jobs_dropped_total", "counter", "Jobs dropped: their client had gone."},
    {"jobs.inline", "jobs_inline_total", "counter",
     "Small evaluations run on the loop thread, where a worker was free."},
    {"results.hits", "results_hits_total", "counter", "Answers served from the result cache."},
    {"results.misses", "results_misses_total", "counter", "Result cache misses."},
    {"results.evictions", "results_evictions_total", "counter",
     "Answers evicted from the result cache."},
    {"results.bytes", "results_bytes", "gauge", "Result cache size."},
    {"loads.parsed", "loads_parsed_total", "counter", "Armature files parsed."},
    {"loads.unchanged", "loads_unchanged_total", "counter",
     "Loads by path (and evaluations of files) that found the file unchanged: not read again."},
    {"cache.hits", "cache_hits_total", "counter", "Armature cache hits."},
    {"cache.misses", "cache_misses_total", "counter", "Armature cache misses."},
    {"cache.evictions", "cache_evictions_total", "counter", "Armatures evicted."},
    {"cache.loads", "cache_loads_total", "counter", "Armatures put in the cache."},
    {"cache.bytes", "cache_bytes", "gauge", "Armature cache size."},
    {"cache.entries", "cache_entries", "gauge", "Armatures cached."},
    {"queue.depth", "queue_depth", "gauge", "Jobs staged, queued or running."},
    {"connections", "connections", "gauge", "Open connections."},
    {"connections.total", "connections_accepted_total", "counter", "Connections accepted."},
    {"connections.refused", "connections_refused_total", "counter",
     "Connections refused at the limits."},
    {"input.bytes", "input_buffer_bytes", "gauge",
     "Bytes held for requests still arriving, both protocols (--max-input-mb)."},
    {"instances.bytes", "instance_bytes", "gauge",
     "Bytes held by instances, all connections (--max-instance-mb)."},
    {"uptime.ms", "uptime_seconds", "gauge", "Time since the daemon started."},
};

#define REQUESTS "requests."
#define REFUSALS "refusals."
#define LATENCY "latency."

static bool prefixed(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

/* A label value or an unknown counter's name as Prometheus takes it: label values escape
 * '\\', '"' and newlines; metric names keep [a-zA-Z0-9_] and turn the rest into '_'. */
static void escaped(struct text *t, const char *s, bool name)
{
    for (; *s; s++) {
        char c = *s;
        bool word =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        if (name)
            put(t, "%c", word ? c : '_');
        else if (c == '\\' || c == '"')
            put(t, "\\%c", c);
        else if (c == '\n')
            put(t, "\\n");
        else
            put(t, "%c", c);
    }
}

static void family(struct text *t, const char *metric, const char *type, const char *help)
{
    put(t, "# HELP skeld_%s %s\n# TYPE skeld_%s %s\n", metric, help, metric, type);
}

/* latency.lt_Nus is the bucket of jobs under N microseconds, latency.ge_Nus the rest: as
 * cumulative buckets of skeld_job_seconds; latency.sum_us, their microseconds added up, as
 * its _sum (a daemon that does not send it gets none). Returns how many counters it took. */
static size_t histogram(struct text *t, const struct skp_counter *k, size_t n)
{
    uint64_t cum = 0;
    size_t i = 0;
    bool inf = false;
    const struct skp_counter *sum = NULL;
    family(t, "job_seconds", "histogram", "Pool jobs from arrival to answer.");
    for (; i < n && prefixed(k[i].name, LATENCY); i++) {
        const char *b = k[i].name + strlen(LATENCY);
        char *end;
        if (!strcmp(b, "sum_us")) {
            sum = &k[i];
            continue;
        }
        unsigned long long us = strtoull(b + 3, &end, 10);
        cum += k[i].value;
        if (!strncmp(b, "lt_", 3) && end != b + 3 && !strcmp(end, "us")) {
            put(t, "skeld_job_seconds_bucket{le=\"%.6f\"} %llu\n", (double)us / 1e6,
                (unsigned long long)cum);
        } else {
            put(t, "skeld_job_seconds_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)cum);
            inf = true;
        }
    }
    if (!inf)
        put(t, "skeld_job_seconds_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)cum);
    if (sum)
        put(t, "skeld_job_seconds_sum %llu.%06u\n", (unsigned long long)(sum->value / 1000000),
            (unsigned)(sum->value % 1000000));
    put(t, "skeld_job_seconds_count %llu\n", (unsigned long long)cum);
    return i;
}

/* The run of counters named PREFIX.LABEL from k as one family, a sample per counter with
 * label="LABEL". Returns how many counters it took. */
static size_t labelled(struct text *t, const struct skp_counter *k, size_t n, const char *prefix,
                       const char *metric, const char *label, const char *help)
{
    size_t i = 0;
    family(t, metric, "counter", help);
    for (; i < n && prefixed(k[i].name, prefix); i++) {
        put(t, "skeld_%s{%s=\"", metric, label);
        escaped(t, k[i].name + strlen(prefix), false);
        put(t, "\"} %llu\n", (unsigned long long)k[i].value);
    }
    return i;
}

static void single(struct text *t, const struct skp_counter *c)
{
    for (size_t p = 0; p < sizeof plain / sizeof plain[0]; p++) {
        if (strcmp(c->name, plain[p].stat))
            continue;
        family(t, plain[p].metric, plain[p].type, plain[p].help);
        if (!strcmp(c->name, "uptime.ms")) /* Prometheus measures time in seconds */
            put(t, "skeld_%s %llu.%03u\n", plain[p].metric, (unsigned long long)(c->value / 1000),
                (unsigned)(c->value % 1000));
        else
            put(t, "skeld_%s %llu\n", plain[p].metric, (unsigned long long)c->value);
        return;
    }
    put(t, "# TYPE skeld_");
    escaped(t, c->name, true);
    put(t, " untyped\nskeld_");
    escaped(t, c->name, true);
    put(t, " %llu\n", (unsigned long long)c->value);
}

size_t skp_prom_text(char *buf, size_t cap, const struct skp_counter *k, size_t n)
{
    struct text t = {buf, cap, 0};
    for (size_t i = 0; i < n;) {
        if (prefixed(k[i].name, REQUESTS))
            i += labelled(&t, k + i, n - i, REQUESTS, "requests_total", "op",
                          "Requests by operation, both protocols.");
        else if (prefixed(k[i].name, REFUSALS))
            i += labelled(&t, k + i, n - i, REFUSALS, "refusals_total", "status",
                          "Answers with an error status, both protocols, by status.");
        else if (prefixed(k[i].name, LATENCY))
            i += histogram(&t, k + i, n - i);
        else
            single(&t, &k[i++]);
    }
    if (cap)
        buf[t.len < cap ? t.len : cap - 1] = 0;
    return t.len;
}

size_t skp_prom_node_info(char *buf, size_t cap, const char *node, size_t node_len,
                          const char *version, size_t version_len)
{
    struct text t = {buf, cap, 0};
    put(&t,
        "# HELP skeld_node_info This node: its --node-name and version.\n"
        "# TYPE skeld_node_info gauge\n"
        "skeld_node_info{node=\"%.*s\",version=\"%.*s\"} 1\n",
        (int)node_len, node, (int)version_len, version);
    return t.len;
}
