/* Armature cache: content id (SHA-256 of the file) -> refcounted immutable armature, LRU under
 * a memory budget. Loop thread only: references are taken when a job is submitted and dropped
 * in its completion, so workers never touch the counts. An entry in use is never freed;
 * eviction and UNLOAD only unlink it, and the last unref frees it. */
#ifndef SKELD_CACHE_H
#define SKELD_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/armature.h"

struct cache_entry {
    uint8_t id[32];
    uint64_t serial; /* unique per entry for the daemon's life, never 0 */
    struct armature *arm;
    char *file; /* the file name it was first loaded from by path, or NULL (uploads) */
    size_t bytes;
    int refs;
    bool linked; /* in the index and the LRU list */
    struct cache_entry *prev, *next, *chain;
};

struct cache_stats {
    uint64_t hits, misses, evictions, loads;
};

struct cache {
    struct cache_entry **buckets;
    size_t bucket_count;
    struct cache_entry *head, *tail; /* most recently used first */
    size_t bytes, budget, count;
    uint64_t next_serial;
    struct cache_stats stats;
};

int cache_init(struct cache *c, size_t budget_bytes);

/* Frees every entry; entries still referenced must not exist any more. */
void cache_close(struct cache *c);

/* The entry for id with a reference taken, or NULL (counts a hit or a miss). */
struct cache_entry *cache_get(struct cache *c, const uint8_t id[32]);

/* Whether id is cached, without counting a hit or a miss or touching its place in the LRU. */
bool cache_contains(struct cache *c, const uint8_t id[32]);

/* Adds arm (taking ownership) under id and returns it with a reference taken. If id is
 * already present (a racing load), frees arm and returns the existing entry. Then evicts
 * unreferenced entries from the cold end while over budget. NULL on allocation failure
 * (arm is freed). */
struct cache_entry *cache_add(struct cache *c, const uint8_t id[32], struct armature *arm);

void cache_ref(struct cache_entry *e);

/* Names e by the file at path (its last component), unless it has a name already: the first
 * path wins, as the first copy of the content does. A name that cannot be copied is left out
 * (it only labels lists). */
void cache_name(struct cache_entry *e, const char *path);

/* Drops a reference; frees the entry if it was unlinked and this was the last one. */
void cache_unref(struct cache *c, struct cache_entry *e);

/* Unlinks id (UNLOAD); it is freed once unreferenced. Returns false if absent. */
bool cache_remove(struct cache *c, const uint8_t id[32]);

#endif
