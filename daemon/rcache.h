/* Result cache: a 32-byte key (see rcache_key) -> an encoded response body (PNG bytes, JSON
 * text, a binary-protocol reply body), least recently used out first, under a byte budget
 * (--result-cache-mb). Loop thread only: no locks, and workers never see it.
 *
 * Items are not refcounted. A pointer returned by rcache_get stays valid until the next
 * rcache_put, rcache_clear or rcache_close on the same cache, any of which may free it; the
 * caller copies the body into its write buffer at once. That copy is small beside the write
 * itself, and it is then counted by the connection's output caps. A reference held by a slow
 * reader would instead pin memory that neither the budget nor those caps see, and eviction
 * would have to step over pinned items, leaving the cache above its budget.
 *
 * Memory: each item is one allocation, header and body together, and is charged
 * rcache_item_cost(len); the bucket array is charged too. stats.bytes is the sum, and after
 * every rcache_put it is at most the budget (unless the bucket array alone exceeds it, which
 * only a budget of a few hundred bytes allows). malloc's own per-block overhead is not
 * counted: it belongs to the allocator, not to what we asked for. */
#ifndef SKELD_RCACHE_H
#define SKELD_RCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rcache_item {
    const uint8_t *body; /* len bytes, stored just after this header */
    size_t len;
    uint8_t kind; /* the caller's tag (e.g. content type), stored and never interpreted */
    /* The rest is the cache's own; callers only read the three fields above. */
    uint8_t key[32];
    struct rcache_item *prev, *next; /* LRU list, most recently used first */
    struct rcache_item *chain;       /* next item in the same bucket */
};

struct rcache_stats {
    uint64_t hits, misses;
    uint64_t inserts;   /* bodies stored by rcache_put, replacements included */
    uint64_t evictions; /* items dropped from the cold end to fit the budget */
    uint64_t oversize;  /* bodies not stored because they cost more than budget / 8 */
    size_t bytes;       /* charged now: items (header and body) plus the bucket array */
    size_t items;       /* stored now */
};

/* Callers read stats and budget; everything else is the cache's own. */
struct rcache {
    struct rcache_item **buckets; /* NULL when disabled */
    size_t bucket_count;          /* a power of two, 0 when disabled */
    struct rcache_item *head, *tail;
    size_t budget;
    struct rcache_stats stats;
};

/* Initialises rc (caller-allocated storage) with budget_bytes. A budget of 0 disables the
 * cache: it allocates nothing, every lookup misses and every insert is dropped. Returns 0, or
 * -1 if the bucket array cannot be allocated (rc is then as after rcache_close). Loop thread
 * only, like everything below. */
int rcache_init(struct rcache *rc, size_t budget_bytes);

/* Frees every item and the bucket array, and zeroes rc. Safe on a zeroed struct and after a
 * failed rcache_init; rc may be initialised again afterwards. */
void rcache_close(struct rcache *rc);

/* The item under key, or NULL. A hit moves the item to the hot end. Counts a hit or a miss.
 * The item belongs to the cache and is valid until the next rcache_put, rcache_clear or
 * rcache_close on rc: copy what you need before calling any of them. */
const struct rcache_item *rcache_get(struct rcache *rc, const uint8_t key[32]);

/* Whether key has an item, without counting a hit or a miss or touching the order. */
bool rcache_has(const struct rcache *rc, const uint8_t key[32]);

/* Stores a copy of body (len bytes; body may be NULL when len is 0, and may point into this
 * cache, e.g. at an item from rcache_get: it is copied before anything is freed) under key,
 * at the hot end, replacing any item with that key, then evicts from the cold end while
 * over budget. Afterwards the cache never serves an older body for key: if the new one is
 * not stored, key is absent. Returns 0 when stored, and also when deliberately not stored
 * (cache disabled, or the item would cost more than budget / 8, so one huge render cannot
 * flush everything); -1 if memory for the copy could not be allocated. Invalidates items
 * returned by rcache_get. */
int rcache_put(struct rcache *rc, const uint8_t key[32], uint8_t kind, const void *body,
               size_t len);

/* Drops every item; the bucket array is kept (the cache will likely refill to the same size)
 * and the hit, miss, insert, eviction and oversize counters go on counting. */
void rcache_clear(struct rcache *rc);

/* The bytes an item with a body of len bytes is charged: its header plus len (SIZE_MAX if
 * that overflows). Any thread. */
size_t rcache_item_cost(size_t len);

#endif
