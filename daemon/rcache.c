#include "rcache.h"

#include <stdlib.h>
#include <string.h>

/* Small, because a cache that stays nearly empty should cost nearly nothing; the table
 * doubles as items arrive. */
#define INITIAL_BUCKETS 16

int rcache_init(struct rcache *rc, size_t budget_bytes)
{
    memset(rc, 0, sizeof *rc);
    if (budget_bytes == 0)
        return 0;
    rc->buckets = calloc(INITIAL_BUCKETS, sizeof *rc->buckets);
    if (!rc->buckets)
        return -1;
    rc->bucket_count = INITIAL_BUCKETS;
    rc->budget = budget_bytes;
    rc->stats.bytes = INITIAL_BUCKETS * sizeof *rc->buckets;
    return 0;
}

size_t rcache_item_cost(size_t len)
{
    if (len > SIZE_MAX - sizeof(struct rcache_item))
        return SIZE_MAX;
    return sizeof(struct rcache_item) + len;
}

/* Keys are normally SHA-256 digests and already uniform, but folding all four words costs
 * nothing and keeps any other key (a test's, a future caller's) from piling into one chain. */
static size_t slot(const struct rcache *rc, const uint8_t key[32])
{
    uint64_t w[4];
    memcpy(w, key, sizeof w);
    uint64_t h = (w[0] ^ w[1] ^ w[2] ^ w[3]) * UINT64_C(0x9e3779b97f4a7c15);
    h ^= h >> 32;
    return (size_t)h & (rc->bucket_count - 1);
}

static struct rcache_item *find(const struct rcache *rc, const uint8_t key[32])
{
    struct rcache_item *it = rc->buckets[slot(rc, key)];
    while (it && memcmp(it->key, key, 32))
        it = it->chain;
    return it;
}

static void lru_unlink(struct rcache *rc, struct rcache_item *it)
{
    if (it->prev)
        it->prev->next = it->next;
    else
        rc->head = it->next;
    if (it->next)
        it->next->prev = it->prev;
    else
        rc->tail = it->prev;
    it->prev = it->next = NULL;
}

static void lru_push_front(struct rcache *rc, struct rcache_item *it)
{
    it->prev = NULL;
    it->next = rc->head;
    if (rc->head)
        rc->head->prev = it;
    rc->head = it;
    if (!rc->tail)
        rc->tail = it;
}

static void link_item(struct rcache *rc, struct rcache_item *it)
{
    size_t b = slot(rc, it->key);
    it->chain = rc->buckets[b];
    rc->buckets[b] = it;
    lru_push_front(rc, it);
    rc->stats.bytes += rcache_item_cost(it->len);
    rc->stats.items++;
}

/* Unlinks and frees it. */
static void drop(struct rcache *rc, struct rcache_item *it)
{
    struct rcache_item **pp = &rc->buckets[slot(rc, it->key)];
    while (*pp != it)
        pp = &(*pp)->chain;
    *pp = it->chain;
    lru_unlink(rc, it);
    rc->stats.bytes -= rcache_item_cost(it->len);
    rc->stats.items--;
    free(it);
}

/* Doubles the table. On allocation failure the old table stays: chains grow longer, lookups
 * stay correct, so that is no reason to fail the insert. */
static void grow(struct rcache *rc)
{
    size_t n = rc->bucket_count * 2;
    struct rcache_item **nb = calloc(n, sizeof *nb);
    if (!nb)
        return;
    free(rc->buckets);
    rc->buckets = nb;
    rc->stats.bytes += (n - rc->bucket_count) * sizeof *nb;
    rc->bucket_count = n;
    for (struct rcache_item *it = rc->head; it; it = it->next) {
        size_t b = slot(rc, it->key);
        it->chain = nb[b];
        nb[b] = it;
    }
}

const struct rcache_item *rcache_get(struct rcache *rc, const uint8_t key[32])
{
    struct rcache_item *it = rc->buckets ? find(rc, key) : NULL;
    if (!it) {
        rc->stats.misses++;
        return NULL;
    }
    rc->stats.hits++;
    lru_unlink(rc, it);
    lru_push_front(rc, it);
    return it;
}

bool rcache_has(const struct rcache *rc, const uint8_t key[32])
{
    return rc->buckets && find(rc, key);
}

int rcache_put(struct rcache *rc, const uint8_t key[32], uint8_t kind, const void *body, size_t len)
{
    if (!rc->buckets)
        return 0;
    struct rcache_item *old = find(rc, key);
    size_t cost = rcache_item_cost(len);
    if (cost > rc->budget / 8) {
        /* The new body is the truth for key: the old one must not be served instead. */
        if (old)
            drop(rc, old);
        rc->stats.oversize++;
        return 0;
    }
    /* Copy before dropping anything: body may be the old item's own bytes. */
    struct rcache_item *it = malloc(cost);
    if (!it) {
        if (old)
            drop(rc, old);
        return -1;
    }
    memset(it, 0, sizeof *it);
    memcpy(it->key, key, 32);
    it->kind = kind;
    it->len = len;
    it->body = (const uint8_t *)(it + 1);
    if (len)
        memcpy(it + 1, body, len);
    if (old)
        drop(rc, old);
    link_item(rc, it);
    rc->stats.inserts++;
    if (rc->stats.items > rc->bucket_count)
        grow(rc);
    while (rc->stats.bytes > rc->budget && rc->tail) {
        drop(rc, rc->tail);
        rc->stats.evictions++;
    }
    return 0;
}

void rcache_clear(struct rcache *rc)
{
    while (rc->head)
        drop(rc, rc->head);
}

void rcache_close(struct rcache *rc)
{
    rcache_clear(rc);
    free(rc->buckets);
    memset(rc, 0, sizeof *rc);
}
