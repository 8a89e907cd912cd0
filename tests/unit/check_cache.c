/* Armature cache (daemon/cache.c): dedup by content id, hit/miss counters, LRU eviction under
 * the memory budget, references that keep entries alive through eviction and UNLOAD, unique
 * serials, and cache_close freeing everything.
 *
 * The armatures are tiny JSON texts loaded through th_load; every one built from the same text
 * has the same mem_bytes, so budgets are written in units of one armature (ARM_BYTES). Content
 * ids are 32 bytes that differ in the first byte (the bucket hash reads the first word).
 * Leaks are the other half of these tests: run under valgrind with CK_FORK=no. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "engine/load.h"
#include "testhelp.h"

#define ONE_BONE "{\"bones\":[{\"id\":0,\"name\":\"b\",\"pos\":{\"x\":3,\"y\":4}}]}"

/* The JSON text of an armature with n bones (a chain), in a static buffer. */
static const char *bones_json(int n)
{
    static char buf[4096];
    char *p = buf;
    p += sprintf(p, "{\"bones\":[");
    for (int i = 0; i < n; i++)
        p += sprintf(p, "%s{\"id\":%d,\"name\":\"b%d\",\"parent_id\":%d}", i ? "," : "", i, i,
                     i - 1);
    sprintf(p, "]}");
    return buf;
}

static struct armature *load_json(const char *json)
{
    struct armature *arm = NULL;
    struct eng_error err = {0};
    int rc = th_load(json, 0, &arm, &err);
    ck_assert_msg(rc == 0, "armature did not load: %s", err.msg);
    ck_assert_ptr_nonnull(arm);
    ck_assert_uint_gt(arm->mem_bytes, 0);
    return arm;
}

static struct armature *new_arm(void)
{
    return load_json(ONE_BONE);
}

/* mem_bytes of every new_arm(). */
static size_t arm_bytes(void)
{
    struct armature *arm = new_arm();
    size_t n = arm->mem_bytes;
    armature_free(arm);
    return n;
}

static void mkid(uint8_t id[32], int n)
{
    memset(id, 0xa5, 32);
    id[0] = (uint8_t)n;
    id[31] = (uint8_t)(n >> 8);
}

/* Adds a fresh armature under id n and drops the reference cache_add took. */
static struct cache_entry *add_unref(struct cache *c, int n)
{
    uint8_t id[32];
    mkid(id, n);
    struct cache_entry *e = cache_add(c, id, new_arm());
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(e->refs, 1);
    cache_unref(c, e);
    return e;
}

/* True if cache_get(id n) hits; drops the reference it took. Counts a hit or a miss. */
static bool present(struct cache *c, int n)
{
    uint8_t id[32];
    mkid(id, n);
    struct cache_entry *e = cache_get(c, id);
    if (e)
        cache_unref(c, e);
    return e != NULL;
}

/* The LRU list must agree with count and bytes, both ways. */
static void check_lists(const struct cache *c)
{
    size_t n = 0, bytes = 0;
    const struct cache_entry *prev = NULL;
    for (const struct cache_entry *e = c->head; e; prev = e, e = e->next) {
        ck_assert_ptr_eq(e->prev, prev);
        ck_assert(e->linked);
        n++;
        bytes += e->bytes;
    }
    ck_assert_ptr_eq(c->tail, prev);
    ck_assert_uint_eq(n, c->count);
    ck_assert_uint_eq(bytes, c->bytes);
}

/* ====================================================================================== */
/* dedup                                                                                   */

START_TEST(add_same_id_twice_returns_same_entry)
{
    struct cache c;
    ck_assert_int_eq(cache_init(&c, 1 << 20), 0);
    uint8_t id[32];
    mkid(id, 1);
    struct armature *a = new_arm(), *b = new_arm();
    struct cache_entry *e1 = cache_add(&c, id, a);
    ck_assert_ptr_nonnull(e1);
    ck_assert_ptr_eq(e1->arm, a);
    ck_assert_mem_eq(e1->id, id, 32);
    ck_assert_uint_ne(e1->serial, 0);
    ck_assert_uint_eq(e1->bytes, a->mem_bytes);

    /* A racing load of the same content: b is freed (valgrind sees a leak if not), the first
     * armature stays, and the caller gets the existing entry with its own reference. */
    struct cache_entry *e2 = cache_add(&c, id, b);
    ck_assert_ptr_eq(e2, e1);
    ck_assert_ptr_eq(e2->arm, a);
    ck_assert_int_eq(e1->refs, 2);
    ck_assert_uint_eq(c.count, 1);
    ck_assert_uint_eq(c.bytes, a->mem_bytes);
    ck_assert_uint_eq(c.stats.loads, 1);
    ck_assert_uint_eq(c.stats.hits, 1); /* the second load was served by the first copy */
    check_lists(&c);

    cache_unref(&c, e2);
    cache_unref(&c, e1);
    ck_assert_int_eq(e1->refs, 0);
    ck_assert(e1->linked); /* unreferenced but cached */
    ck_assert(present(&c, 1));
    cache_close(&c);
}
END_TEST

START_TEST(dedup_after_release_keeps_entry_and_serial)
{
    struct cache c;
    ck_assert_int_eq(cache_init(&c, 1 << 20), 0);
    struct cache_entry *e = add_unref(&c, 7);
    uint64_t serial = e->serial;
    uint8_t id[32];
    mkid(id, 7);
    add_unref(&c, 8); /* now 7 is the least recently used */
    struct cache_entry *again = cache_add(&c, id, new_arm());
    ck_assert_ptr_eq(again, e);
    ck_assert_ptr_eq(c.head, e); /* loading it again makes it the most recently used */
    ck_assert_uint_eq(again->serial, serial);
    ck_assert_int_eq(again->refs, 1);
    cache_unref(&c, again);
    ck_assert_uint_eq(c.count, 2);
    cache_close(&c);
}
END_TEST

START_TEST(distinct_ids_are_distinct_entries)
{
    struct cache c;
    ck_assert_int_eq(cache_init(&c, 1 << 20), 0);
    /* Ids equal in their first word land in one bucket: the chain must still tell them
     * apart by the whole id. */
    uint8_t a[32], b[32];
    mkid(a, 1);
    mkid(b, 1);
    b[31] ^= 0xff;
    struct cache_entry *ea = cache_add(&c, a, new_arm());
    struct cache_entry *eb = cache_add(&c, b, new_arm());
    ck_assert_ptr_ne(ea, eb);
    ck_assert_ptr_ne(ea->arm, eb->arm);
    ck_assert_uint_eq(c.count, 2);
    cache_unref(&c, ea);
    cache_unref(&c, eb);
    ck_assert_ptr_eq(cache_get(&c, a), ea);
    ck_assert_ptr_eq(cache_get(&c, b), eb);
    cache_unref(&c, ea);
    cache_unref(&c, eb);
    ck_assert(cache_remove(&c, a));
    ck_assert_ptr_null(cache_get(&c, a));
    ck_assert_ptr_eq(cache_get(&c, b), eb);
    cache_unref(&c, eb);
    check_lists(&c);
    cache_close(&c);
}
END_TEST

/* ====================================================================================== */
/* lookups                                                                                 */

START_TEST(get_counts_hits_and_misses)
{
    struct cache c;
    ck_assert_int_eq(cache_init(&c, 1 << 20), 0);
    uint8_t id[32];
    mkid(id, 3);
    ck_assert_ptr_null(cache_get(&c, id));
    ck_assert_uint_eq(c.stats.misses, 1);
    ck_assert_uint_eq(c.stats.hits, 0);

    struct cache_entry *e = cache_add(&c, id, new_arm());
    /* cache_add is a load, not a lookup. */
    ck_assert_uint_eq(c.stats.hits, 0);
    ck_assert_uint_eq(c.stats.misses, 1);
    ck_assert_uint_eq(c.stats.loads, 1);

    struct cache_entry *g = cache_get(&c, id);
    ck_assert_ptr_eq(g, e);
    ck_assert_int_eq(e->refs, 2); /* cache_get takes a reference */
    ck_assert_uint_eq(c.stats.hits, 1);
    g = cache_get(&c, id);
    ck_assert_int_eq(e->refs, 3);
    ck_assert_uint_eq(c.stats.hits, 2);

    uint8_t other[32];
    mkid(other, 4);
    ck_assert_ptr_null(cache_get(&c, other));
    ck_assert_uint_eq(c.stats.misses, 2);
    ck_assert_uint_eq(c.stats.hits, 2);
    ck_assert_uint_eq(c.stats.evictions, 0);

    cache_unref(&c, g);
    cache_unref(&c, g);
    cache_unref(&c, e);
    ck_assert_int_eq(e->refs, 0);
    cache_close(&c);
}
END_TEST

START_TEST(ref_and_unref_balance)
{
    struct cache c;
    ck_assert_int_eq(cache_init(&c, 1 << 20), 0);
    uint8_t id[32];
    mkid(id, 9);
    struct cache_entry *e = cache_add(&c, id, new_arm());
    cache_ref(e);
    cache_ref(e);
    ck_assert_int_eq(e->refs, 3);
    cache_unref(&c, e);
    cache_unref(&c, e);
    cache_unref(&c, e);
    ck_assert_int_eq(e->refs, 0);
    ck_assert_uint_eq(c.count, 1);
    ck_assert(present(&c, 9));
    cache_close(&c);
}
END_TEST

/* ====================================================================================== */
/* LRU eviction                                                                            */

START_TEST(over_budget_evicts_least_recently_used)
{
    size_t sz = arm_bytes();
    struct cache c;
    /* Room for one armature, not two. */
    ck_assert_int_eq(cache_init(&c, 2 * sz - 1), 0);
    add_unref(&c, 1);
    ck_assert_uint_eq(c.count, 1);
    ck_assert_uint_eq(c.bytes, sz);

    uint8_t id2[32];
    mkid(id2, 2);
    struct cache_entry *e2 = cache_add(&c, id2, new_arm());
    /* Entry 1 was unreferenced and the coldest: gone. Entry 2 is held by cache_add's ref. */
    ck_assert_uint_eq(c.stats.evictions, 1);
    ck_assert_uint_eq(c.count, 1);
    ck_assert_uint_eq(c.bytes, sz);
    ck_assert_ptr_eq(c.head, e2);
    ck_assert_ptr_eq(c.tail, e2);
    check_lists(&c);
    cache_unref(&c, e2);
    ck_assert(!present(&c, 1));
    ck_assert(present(&c, 2));
    ck_assert_uint_eq(c.stats.evictions, 1);
    cache_close(&c);
}
END_TEST

START_TEST(add_order_is_lru_order)
{
    size_t sz = arm_bytes();
    struct cache c;
    ck_assert_int_eq(cache_init(&c, 3 * sz), 0); /* three fit, a fourth does not */
    struct cache_entry *e1 = add_unref(&c, 1);
    struct cache_entry *e2 = add_unref(&c, 2);
    struct cache_entry *e3 = add_unref(&c, 3);
    ck_assert_ptr_eq(c.head, e3);
    ck_assert_ptr_eq(c.head->next, e2);
    ck_assert_ptr_eq(c.tail, e1);
    ck_assert_uint_eq(c.stats.evictions, 0);
    ck_assert_uint_eq(c.bytes, 3 * sz);

    add_unref(&c, 4); /* evicts 1, the oldest */
    ck_assert_uint_eq(c.stats.evictions, 1);
    ck_assert_uint_eq(c.count, 3);
    ck_assert_ptr_eq(c.tail, e2);
    check_lists(&c);
    ck_assert(!present(&c, 1));
    ck_assert(present(&c, 2) && present(&c, 3) && present(&c, 4));
    cache_close(&c);
}
END_TEST

START_TEST(get_moves_entry_to_front)
{
    size_t sz = arm_bytes();
    struct cache c;
    ck_assert_int_eq(cache_init(&c, 2 * sz + sz / 2), 0); /* two fit, three do not */
    struct cache_entry *e1 = add_unref(&c, 1);
    struct cache_entry *e2 = add_unref(&c, 2);
    ck_assert_ptr_eq(c.tail, e1);

    /* Touch 1: now 2 is the least recently used and the one to go. */
    ck_assert(present(&c, 1));
    ck_assert_ptr_eq(c.head, e1);
    ck_assert_ptr_eq(c.tail, e2);
    check_lists(&c);

    struct cache_entry *e3 = add_unref(&c, 3);
    ck_assert_uint_eq(c.stats.evictions, 1);
    ck_assert_ptr_eq(c.head, e3);
    ck_assert_ptr_eq(c.tail, e1);
    check_lists(&c);
    ck_assert(!present(&c, 2));
    ck_assert(present(&c, 1));
    ck_assert(present(&c, 3));
    cache_close(&c);
}
END_TEST

START_TEST(get_of_head_and_middle_keeps_list_whole)
{
    struct cache c;
    ck_assert_int_eq(cache_init(&c, 1 << 20), 0);
    struct cache_entry *e[5];
    for (int i = 0; i < 5; i++)
        e[i] = add_unref(&c, i);
    /* head: e4 e3 e2 e1 e0 */
    ck_assert(present(&c, 4)); /* the head itself */
    ck_assert_ptr_eq(c.head, e[4]);
    ck_assert(present(&c, 2)); /* a middle one */
    ck_assert(present(&c, 0)); /* the tail */
    check_lists(&c);
    const struct cache_entry *want[5] = {e[0], e[2], e[4], e[3], e[1]};
    const struct cache_entry *it = c.head;
    for (int i = 0; i < 5; i++, it = it->next)
        ck_assert_ptr_eq(it, want[i]);
    ck_assert_ptr_null(it);
    cache_close(&c);
}
END_TEST

START_TEST(bigger_entry_evicts_several)
{
    size_t sz = arm_bytes();
    struct armature *big = load_json(bones_json(40));
    size_t bz = big->mem_bytes;
    ck_assert_uint_gt(bz, 2 * sz);
    struct cache c;
    ck_assert_int_eq(cache_init(&c, bz + sz), 0); /* the big one plus one small one */
    for (int i = 0; i < 4 && (i + 1) * sz <= bz + sz; i++)
        add_unref(&c, i);
    size_t before = c.count;
    ck_assert_uint_ge(before, 2);
    uint8_t id[32];
    mkid(id, 100);
    struct cache_entry *b = cache_add(&c, id, big);
    ck_assert_uint_le(c.bytes, c.budget);
    ck_assert_uint_eq(c.count, 2); /* big + the newest small one */
    ck_assert_uint_eq(c.stats.evictions, before - 1);
    ck_assert_ptr_eq(c.head, b);
    check_lists(&c);
    ck_assert(present(&c, (int)before - 1));
    cache_unref(&c, b);
    cache_close(&c);
}
END_TEST

/* ====================================================================================== */
/* references and eviction                                                                 */

START_TEST(referenced_entries_survive_eviction)
{
    size_t sz = arm_bytes();
    struct cache c;
    ck_assert_int_eq(cache_init(&c, sz + sz / 2), 0); /* one fits */
    uint8_t id1[32], id2[32];
    mkid(id1, 1);
    mkid(id2, 2);
    struct cache_entry *e1 = cache_add(&c, id1, new_arm());
    struct cache_entry *e2 = cache_add(&c, id2, new_arm());
    /* Both are in use: nothing can go, the cache stays over budget. */
    ck_assert_uint_eq(c.stats.evictions, 0);
    ck_assert_uint_eq(c.count, 2);
    ck_assert_uint_gt(c.bytes, c.budget);
    ck_assert(e1->linked && e2->linked);
    check_lists(&c);

    /* Releasing the cold one lets it be evicted at once (valgrind: freed, not leaked). */
    cache_unref(&c, e1);
    ck_assert_uint_eq(c.stats.evictions, 1);
    ck_assert_uint_eq(c.count, 1);
    ck_assert_uint_eq(c.bytes, sz);
    ck_assert_ptr_eq(c.head, e2);
    check_lists(&c);

    /* Back under budget: releasing the other one keeps it cached. */
    cache_unref(&c, e2);
    ck_assert_uint_eq(c.stats.evictions, 1);
    ck_assert(!present(&c, 1));
    ck_assert(present(&c, 2));
    cache_close(&c);
}
END_TEST

START_TEST(referenced_tail_is_skipped_for_next_cold_entry)
{
    size_t sz = arm_bytes();
    struct cache c;
    ck_assert_int_eq(cache_init(&c, 2 * sz + sz / 2), 0); /* two fit */
    uint8_t id1[32];
    mkid(id1, 1);
    struct cache_entry *e1 = cache_add(&c, id1, new_arm()); /* held */
    add_unref(&c, 2);
    add_unref(&c, 3); /* over budget: 1 is the tail but held, so 2 goes */
    ck_assert_uint_eq(c.stats.evictions, 1);
    ck_assert(e1->linked);
    ck_assert_ptr_eq(c.tail, e1);
    check_lists(&c);
    ck_assert(!present(&c, 2));
    ck_assert(present(&c, 3));
    cache_unref(&c, e1);
    ck_assert(present(&c, 1)); /* under budget: still cached */
    cache_close(&c);
}
END_TEST

START_TEST(zero_budget_keeps_only_what_is_in_use)
{
    struct cache c;
    ck_assert_int_eq(cache_init(&c, 0), 0);
    uint8_t id[32];
    mkid(id, 1);
    struct cache_entry *e = cache_add(&c, id, new_arm());
    ck_assert_ptr_nonnull(e);
    ck_assert(e->linked);
    /* While held, lookups still find it. */
    struct cache_entry *g = cache_get(&c, id);
    ck_assert_ptr_eq(g, e);
    cache_unref(&c, g);
    ck_assert_uint_eq(c.count, 1);
    cache_unref(&c, e);
    ck_assert_uint_eq(c.count, 0);
    ck_assert_uint_eq(c.bytes, 0);
    ck_assert_uint_eq(c.stats.evictions, 1);
    ck_assert_ptr_null(c.head);
    ck_assert_ptr_null(c.tail);
    ck_assert(!present(&c, 1));
    cache_close(&c);
}
END_TEST

/* ====================================================================================== */
/* UNLOAD                                                                                  */

START_TEST(remove_referenced_unlinks_but_keeps_alive)
{
    struct cache c;
    ck_assert_int_eq(cache_init(&c, 1 << 20), 0);
    uint8_t id[32];
    mkid(id, 5);
    struct cache_entry *e = cache_add(&c, id, new_arm());
    cache_ref(e); /* a second user, e.g. a stateful instance */
    ck_assert(cache_remove(&c, id));
    ck_assert(!e->linked);
    ck_assert_uint_eq(c.count, 0);
    ck_assert_uint_eq(c.bytes, 0);
    ck_assert_ptr_null(c.head);
    check_lists(&c);
    uint64_t misses = c.stats.misses;
    ck_assert_ptr_null(cache_get(&c, id));
    ck_assert_uint_eq(c.stats.misses, misses + 1);
    ck_assert(!cache_remove(&c, id)); /* already gone */

    /* Still readable by its users. */
    ck_assert_uint_eq(e->arm->bone_count, 1);
    ck_assert_double_eq(e->arm->bones[0].start.pos.x, 3.0);
    cache_unref(&c, e);
    ck_assert_int_eq(e->refs, 1);
    ck_assert_uint_eq(e->arm->bone_count, 1);
    cache_unref(&c, e); /* the last one frees it: valgrind reports a leak otherwise */
    ck_assert_uint_eq(c.stats.evictions, 0);
    cache_close(&c);
}
END_TEST

START_TEST(remove_unreferenced_frees_at_once)
{
    struct cache c;
    ck_assert_int_eq(cache_init(&c, 1 << 20), 0);
    add_unref(&c, 1);
    add_unref(&c, 2);
    uint8_t id[32];
    mkid(id, 1);
    ck_assert(cache_remove(&c, id));
    ck_assert_uint_eq(c.count, 1);
    check_lists(&c);
    ck_assert(!present(&c, 1));
    ck_assert(present(&c, 2));
    mkid(id, 99);
    ck_assert(!cache_remove(&c, id));
    cache_close(&c);
}
END_TEST

START_TEST(reload_after_remove_is_a_new_entry)
{
    struct cache c;
    ck_assert_int_eq(cache_init(&c, 1 << 20), 0);
    uint8_t id[32];
    mkid(id, 8);
    struct cache_entry *old = cache_add(&c, id, new_arm());
    ck_assert(cache_remove(&c, id));
    /* The same content loaded again while the old entry is still in use: a new entry with
     * a new serial, so worker scratch poses made for the old one are not reused. */
    struct cache_entry *fresh = cache_add(&c, id, new_arm());
    ck_assert_ptr_ne(fresh, old);
    ck_assert_ptr_ne(fresh->arm, old->arm);
    ck_assert_uint_ne(fresh->serial, old->serial);
    ck_assert(fresh->linked);
    ck_assert(!old->linked);
    ck_assert_uint_eq(c.count, 1);
    ck_assert_ptr_eq(cache_get(&c, id), fresh);
    cache_unref(&c, fresh);
    cache_unref(&c, old); /* frees old only */
    ck_assert(fresh->linked);
    ck_assert(present(&c, 8));
    cache_unref(&c, fresh);
    cache_close(&c);
}
END_TEST

/* ====================================================================================== */
/* serials and close                                                                       */

START_TEST(serials_are_unique_and_nonzero)
{
    size_t sz = arm_bytes();
    struct cache c;
    ck_assert_int_eq(cache_init(&c, 2 * sz), 0);
    enum { N = 20 };
    uint64_t serials[2 * N];
    int ns = 0;
    for (int i = 0; i < N; i++)
        serials[ns++] = add_unref(&c, i)->serial; /* most are evicted as they go */
    /* Reloading evicted content makes new entries with new serials. */
    for (int i = 0; i < N; i++) {
        uint8_t id[32];
        mkid(id, i);
        struct cache_entry *e = cache_add(&c, id, new_arm());
        serials[ns++] = e->serial;
        cache_unref(&c, e);
    }
    /* Round two found nothing of round one: the budget holds two and round two evicted
     * N-2 and N-1 before reaching them. Every addition was a load. */
    ck_assert_uint_eq(c.stats.loads, 2 * N);
    for (int i = 0; i < ns; i++) {
        ck_assert_uint_ne(serials[i], 0);
        for (int j = 0; j < i; j++)
            ck_assert_msg(serials[j] != serials[i], "serial %llu shared by additions %d and %d",
                          (unsigned long long)serials[i], j, i);
    }
    cache_close(&c);
}
END_TEST

START_TEST(close_frees_everything)
{
    struct cache c;
    ck_assert_int_eq(cache_init(&c, 1 << 20), 0);
    for (int i = 0; i < 50; i++)
        add_unref(&c, i);
    ck_assert_uint_eq(c.count, 50);
    ck_assert(present(&c, 10));
    uint8_t id[32];
    mkid(id, 20);
    ck_assert(cache_remove(&c, id));
    /* valgrind --leak-check=full reports any entry or armature left behind. */
    cache_close(&c);
    ck_assert_ptr_null(c.buckets);
    ck_assert_ptr_null(c.head);
    ck_assert_uint_eq(c.count, 0);
    ck_assert_uint_eq(c.bytes, 0);
}
END_TEST

START_TEST(close_empty_and_init_close_init)
{
    struct cache c;
    ck_assert_int_eq(cache_init(&c, 0), 0);
    cache_close(&c);
    ck_assert_int_eq(cache_init(&c, 1 << 20), 0);
    ck_assert_ptr_null(c.head);
    ck_assert_uint_eq(c.stats.loads, 0);
    add_unref(&c, 1);
    cache_close(&c);
}
END_TEST

static Suite *cache_suite(void)
{
    Suite *s = suite_create("cache");
    TCase *tc = tcase_create("dedup");
    tcase_add_test(tc, add_same_id_twice_returns_same_entry);
    tcase_add_test(tc, dedup_after_release_keeps_entry_and_serial);
    tcase_add_test(tc, distinct_ids_are_distinct_entries);
    suite_add_tcase(s, tc);

    tc = tcase_create("lookups");
    tcase_add_test(tc, get_counts_hits_and_misses);
    tcase_add_test(tc, ref_and_unref_balance);
    suite_add_tcase(s, tc);

    tc = tcase_create("LRU eviction");
    tcase_add_test(tc, over_budget_evicts_least_recently_used);
    tcase_add_test(tc, add_order_is_lru_order);
    tcase_add_test(tc, get_moves_entry_to_front);
    tcase_add_test(tc, get_of_head_and_middle_keeps_list_whole);
    tcase_add_test(tc, bigger_entry_evicts_several);
    suite_add_tcase(s, tc);

    tc = tcase_create("references and eviction");
    tcase_add_test(tc, referenced_entries_survive_eviction);
    tcase_add_test(tc, referenced_tail_is_skipped_for_next_cold_entry);
    tcase_add_test(tc, zero_budget_keeps_only_what_is_in_use);
    suite_add_tcase(s, tc);

    tc = tcase_create("UNLOAD");
    tcase_add_test(tc, remove_referenced_unlinks_but_keeps_alive);
    tcase_add_test(tc, remove_unreferenced_frees_at_once);
    tcase_add_test(tc, reload_after_remove_is_a_new_entry);
    suite_add_tcase(s, tc);

    tc = tcase_create("serials and close");
    tcase_add_test(tc, serials_are_unique_and_nonzero);
    tcase_add_test(tc, close_frees_everything);
    tcase_add_test(tc, close_empty_and_init_close_init);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(cache_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
