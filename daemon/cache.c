#include "cache.h"

#include <stdlib.h>
#include <string.h>

int cache_init(struct cache *c, size_t budget)
{
    memset(c, 0, sizeof *c);
    c->bucket_count = 1024;
    c->buckets = calloc(c->bucket_count, sizeof *c->buckets);
    c->budget = budget;
    return c->buckets ? 0 : -1;
}

static size_t bucket(const struct cache *c, const uint8_t id[32])
{
    size_t h;
    memcpy(&h, id, sizeof h); /* a SHA-256 is already uniform */
    return h % c->bucket_count;
}

static void free_entry(struct cache_entry *e)
{
    armature_free(e->arm);
    free(e->file);
    free(e);
}

static void lru_unlink(struct cache *c, struct cache_entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        c->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        c->tail = e->prev;
    e->prev = e->next = NULL;
}

static void lru_push_front(struct cache *c, struct cache_entry *e)
{
    e->prev = NULL;
    e->next = c->head;
    if (c->head)
        c->head->prev = e;
    c->head = e;
    if (!c->tail)
        c->tail = e;
}

static void unlink_entry(struct cache *c, struct cache_entry *e)
{
    struct cache_entry **pp = &c->buckets[bucket(c, e->id)];
    while (*pp != e)
        pp = &(*pp)->chain;
    *pp = e->chain;
    lru_unlink(c, e);
    e->linked = false;
    c->bytes -= e->bytes;
    c->count--;
}

void cache_close(struct cache *c)
{
    while (c->head) {
        struct cache_entry *e = c->head;
        unlink_entry(c, e);
        free_entry(e);
    }
    free(c->buckets);
    memset(c, 0, sizeof *c);
}

static struct cache_entry *find(struct cache *c, const uint8_t id[32])
{
    struct cache_entry *e = c->buckets[bucket(c, id)];
    while (e && memcmp(e->id, id, 32))
        e = e->chain;
    return e;
}

struct cache_entry *cache_get(struct cache *c, const uint8_t id[32])
{
    struct cache_entry *e = find(c, id);
    if (!e) {
        c->stats.misses++;
        return NULL;
    }
    c->stats.hits++;
    lru_unlink(c, e);
    lru_push_front(c, e);
    e->refs++;
    return e;
}

bool cache_contains(struct cache *c, const uint8_t id[32])
{
    return find(c, id) != NULL;
}

static void evict(struct cache *c)
{
    struct cache_entry *e = c->tail;
    while (c->bytes > c->budget && e) {
        struct cache_entry *prev = e->prev;
        if (e->refs == 0) {
            unlink_entry(c, e);
            free_entry(e);
            c->stats.evictions++;
        }
        e = prev;
    }
}

void cache_name(struct cache_entry *e, const char *path)
{
    if (e->file || !path)
        return;
    const char *slash = strrchr(path, '/');
    e->file = strdup(slash ? slash + 1 : path);
}

struct cache_entry *cache_add(struct cache *c, const uint8_t id[32], struct armature *arm)
{
    struct cache_entry *e = find(c, id);
    if (e) { /* loaded twice at once, or again by path: the first copy serves */
        armature_free(arm);
        c->stats.hits++;
        lru_unlink(c, e);
        lru_push_front(c, e);
        e->refs++;
        return e;
    }
    e = calloc(1, sizeof *e);
    if (!e) {
        armature_free(arm);
        return NULL;
    }
    memcpy(e->id, id, 32);
    e->serial = ++c->next_serial;
    e->arm = arm;
    e->bytes = arm->mem_bytes;
    e->refs = 1;
    e->linked = true;
    size_t b = bucket(c, id);
    e->chain = c->buckets[b];
    c->buckets[b] = e;
    lru_push_front(c, e);
    c->bytes += e->bytes;
    c->count++;
    c->stats.loads++;
    evict(c);
    return e;
}

void cache_ref(struct cache_entry *e)
{
    e->refs++;
}

void cache_unref(struct cache *c, struct cache_entry *e)
{
    if (--e->refs > 0)
        return;
    if (!e->linked)
        free_entry(e);
    else
        evict(c); /* it may have been kept over budget while in use */
}

bool cache_remove(struct cache *c, const uint8_t id[32])
{
    struct cache_entry *e = find(c, id);
    if (!e)
        return false;
    unlink_entry(c, e);
    if (e->refs == 0)
        free_entry(e);
    return true;
}
