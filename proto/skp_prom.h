/* The daemon's counters in the Prometheus text exposition format (version 0.0.4), written in
 * one place so that `GET /metrics` and `skelctl stats --prometheus` use the same metric
 * names. The input is the STATS reply's counters by their PROTOCOL.md names; each maps to a
 * metric: requests.OP to skeld_requests_total{op="OP"}, the latency.* buckets and
 * latency.sum_us to the histogram skeld_job_seconds (_bucket, _sum, _count), the rest by a fixed
 * table (cache.hits to skeld_cache_hits_total, queue.depth to skeld_queue_depth, ...), and a name
 * the table does not know (a later daemon's) to skeld_NAME, '.' as '_', untyped. No I/O. */
#ifndef SKP_PROM_H
#define SKP_PROM_H

#include <stddef.h>
#include <stdint.h>

struct skp_counter {
    const char *name; /* as in STATS: "requests.POSE", "cache.hits", "latency.lt_64us" */
    uint64_t value;
};

/* Writes the n counters as exposition text into buf: a # HELP and # TYPE line before each
 * metric family, then its samples. Counters of one family (requests.*, latency.*) must be
 * adjacent, as STATS sends them. Same buffer contract as snprintf. */
size_t skp_prom_text(char *buf, size_t cap, const struct skp_counter *k, size_t n);

/* The family skeld_node_info: which node this is and its version, for dashboards over a
 * cluster; both must be valid node names (skp_node_name_valid). Same buffer contract as
 * snprintf. */
size_t skp_prom_node_info(char *buf, size_t cap, const char *node, size_t node_len,
                          const char *version, size_t version_len);

#endif
