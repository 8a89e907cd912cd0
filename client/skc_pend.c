/* The table of pending requests: an array in no particular order (a removal moves the last
 * entry into the gap) and an index from request id to array slot, so that a reply finds its
 * request in constant time however deep the pipeline. A linear search cost O(n) a reply, and
 * since each removal moves the newest entry to the front, replies that come in order were
 * found ever further in: 80,000 requests in flight took 3.4 s against 0.24 s for 20,000.
 *
 * The index is open addressing with linear probing, at most half full. The hash is Fibonacci
 * hashing (the id times 2^32 over the golden ratio, its top bits): consecutive ids land far
 * apart, so runs of filled slots stay short. The id itself, masked, would fill one long run
 * with the ids in flight, and a removal must look through the run after it.
 *
 * The table knows nothing of connections or messages: tests/unit/check_pend.c drives it
 * alone, with ids that collide. */
#include <stdbool.h>
#include <stdlib.h>

#include "skc_int.h"

/* Tables above this many entries are given back once empty. */
#define KEEP_ENTRIES 4096u

/* The slot id hashes to. */
static size_t home(const skc_client *c, uint32_t id)
{
    return (uint32_t)(id * 2654435769u) >> c->ix_shift;
}

/* Where id is in the index, or where it would go: the first free slot probing from home. */
static size_t probe(const skc_client *c, uint32_t id)
{
    size_t i = home(c, id);
    while (c->ix[i].id && c->ix[i].id != id)
        i = (i + 1) & (c->ix_cap - 1);
    return i;
}

/* Builds the index again, of cap slots (a power of two), from the array. */
static int reindex(skc_client *c, size_t cap)
{
    struct skc__pend_ix *ix = calloc(cap, sizeof *ix);
    if (!ix)
        return SKC_ENOMEM;
    free(c->ix);
    c->ix = ix;
    c->ix_cap = cap;
    c->ix_shift = 32;
    for (size_t k = cap; k > 1; k >>= 1)
        c->ix_shift--;
    for (size_t at = 0; at < c->npend; at++) {
        size_t i = probe(c, c->pend[at].id);
        c->ix[i] = (struct skc__pend_ix){c->pend[at].id, (uint32_t)at};
    }
    return 0;
}

/* Room for one more entry in the array and in the index. */
static int make_room(skc_client *c)
{
    if (c->npend == c->pend_cap) {
        size_t n = c->pend_cap ? c->pend_cap * 2 : 16;
        struct skc__pending *p = n <= UINT32_MAX / 2 ? realloc(c->pend, n * sizeof *p) : NULL;
        if (!p)
            return SKC_ENOMEM;
        c->pend = p;
        c->pend_cap = n;
    }
    if (2 * (c->npend + 1) > c->ix_cap)
        return reindex(c, c->ix_cap ? 2 * c->ix_cap : 32);
    return 0;
}

struct skc__pending *skc__pend_add(skc_client *c, uint32_t id, uint8_t op)
{
    if (make_room(c))
        return NULL;
    size_t at = c->npend++;
    c->pend[at] = (struct skc__pending){.id = id, .op = op, .seq = c->next_seq++, .deadline = -1};
    c->ix[probe(c, id)] = (struct skc__pend_ix){id, (uint32_t)at};
    return &c->pend[at];
}

struct skc__pending *skc__pend_find(const skc_client *c, uint32_t id)
{
    if (!c->ix_cap || !id)
        return NULL;
    const struct skc__pend_ix *e = &c->ix[probe(c, id)];
    /* the entry is checked too: an index that could not be rebuilt misses, never misleads */
    return e->id == id && e->at < c->npend && c->pend[e->at].id == id ? &c->pend[e->at] : NULL;
}

/* Takes slot i out of the index, moving up the entries after it that probing would no
 * longer reach (the gap must not end their probe early): no tombstones, so lookups stay
 * short however many requests come and go. */
static void unindex(skc_client *c, size_t i)
{
    size_t mask = c->ix_cap - 1;
    for (size_t j = i;;) {
        j = (j + 1) & mask;
        if (!c->ix[j].id)
            break;
        size_t k = home(c, c->ix[j].id);
        /* the entry at j stays if its home lies cyclically in (i, j] */
        bool stays = i <= j ? i < k && k <= j : i < k || k <= j;
        if (!stays) {
            c->ix[i] = c->ix[j];
            i = j;
        }
    }
    c->ix[i] = (struct skc__pend_ix){0, 0};
}

void skc__pend_remove(skc_client *c, struct skc__pending *p)
{
    size_t at = (size_t)(p - c->pend), last = c->npend - 1;
    unindex(c, probe(c, p->id));
    if (at != last) {
        c->pend[at] = c->pend[last];
        c->ix[probe(c, c->pend[at].id)].at = (uint32_t)at;
    }
    if (--c->npend == 0 && c->pend_cap > KEEP_ENTRIES) /* a burst is over: give it back */
        skc__pend_free(c);
}

int skc__pend_rebuild(skc_client *c)
{
    return c->ix_cap ? reindex(c, c->ix_cap) : 0;
}

void skc__pend_free(skc_client *c)
{
    for (size_t i = 0; i < c->npend; i++)
        free(c->pend[i].f.body);
    free(c->pend);
    free(c->ix);
    c->pend = NULL;
    c->ix = NULL;
    c->npend = c->pend_cap = c->ix_cap = 0;
}
