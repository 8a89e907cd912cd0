/* Result cache (daemon/rcache.c): hit and miss counting, LRU order, eviction under the budget
 * with exact byte accounting (items and bucket array), replacement, the budget / 8 cap, a
 * disabled cache, table growth over thousands of items, clear and close, and the key and ETag
 * helpers (with the incremental SHA-256 they are built on).
 *
 * Nothing here depends on time. Budgets are written in item costs (rcache_item_cost) plus the
 * bucket array, so every eviction is predicted exactly. Leaks and use-after-free are the other
 * half of these tests: run under valgrind with CK_FORK=no (make check-valgrind). */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rcache.h"
#include "sha256.h"

/* A synthetic key: n spread over several bytes, the rest a fixed pattern. */
static void mkkey(uint8_t key[32], unsigned n)
{
    memset(key, 0x5a, 32);
    key[0] = (uint8_t)n;
    key[9] = (uint8_t)(n >> 8);
    key[17] = (uint8_t)(n >> 16);
    key[31] = (uint8_t)(n >> 24);
}

/* len bytes that depend on n and the position, in a static buffer. */
static const uint8_t *body_of(unsigned n, size_t len)
{
    static uint8_t buf[1 << 16];
    ck_assert_uint_le(len, sizeof buf);
    for (size_t i = 0; i < len; i++)
        buf[i] = (uint8_t)(n * 31 + i * 7);
    return buf;
}

static void put_n(struct rcache *rc, unsigned n, size_t len)
{
    uint8_t key[32];
    mkkey(key, n);
    ck_assert_int_eq(rcache_put(rc, key, (uint8_t)n, body_of(n, len), len), 0);
}

/* Looks n up (counting a hit or a miss, and touching it) and checks its contents. */
static bool present(struct rcache *rc, unsigned n)
{
    uint8_t key[32];
    mkkey(key, n);
    const struct rcache_item *it = rcache_get(rc, key);
    if (!it)
        return false;
    ck_assert_uint_eq(it->kind, (uint8_t)n);
    ck_assert_mem_eq(it->body, body_of(n, it->len), it->len);
    return true;
}

static size_t table_bytes(const struct rcache *rc)
{
    return rc->bucket_count * sizeof *rc->buckets;
}

/* The LRU list, the buckets and the stats must agree: every item once in each, both list
 * directions consistent, bytes exactly the table plus the item costs. */
static void check_lists(const struct rcache *rc)
{
    size_t n = 0, bytes = table_bytes(rc);
    const struct rcache_item *prev = NULL;
    for (const struct rcache_item *it = rc->head; it; prev = it, it = it->next) {
        ck_assert_ptr_eq(it->prev, prev);
        ck_assert_ptr_eq(it->body, (const uint8_t *)(it + 1));
        n++;
        bytes += rcache_item_cost(it->len);
    }
    ck_assert_ptr_eq(rc->tail, prev);
    ck_assert_uint_eq(n, rc->stats.items);
    ck_assert_uint_eq(bytes, rc->stats.bytes);
    size_t chained = 0;
    for (size_t b = 0; b < rc->bucket_count; b++)
        for (const struct rcache_item *it = rc->buckets[b]; it; it = it->chain)
            chained++;
    ck_assert_uint_eq(chained, n);
}

/* The exact budget that holds `items` items of body length len and nothing more, with the
 * initial table (so keep items <= the initial bucket count). */
static size_t budget_for(size_t items, size_t len)
{
    struct rcache probe;
    ck_assert_int_eq(rcache_init(&probe, 1), 0);
    size_t table = probe.stats.bytes;
    rcache_close(&probe);
    return table + items * rcache_item_cost(len);
}

/* ====================================================================================== */
/* get and put                                                                             */

START_TEST(miss_then_hit_counts)
{
    struct rcache rc;
    ck_assert_int_eq(rcache_init(&rc, 1 << 20), 0);
    ck_assert(!present(&rc, 1));
    ck_assert_uint_eq(rc.stats.misses, 1);
    ck_assert_uint_eq(rc.stats.hits, 0);

    uint8_t key[32], src[5] = {'h', 'e', 'l', 'l', 'o'};
    mkkey(key, 1);
    ck_assert_int_eq(rcache_put(&rc, key, 7, src, sizeof src), 0);
    src[0] = 'J'; /* the cache holds a copy */
    const struct rcache_item *it = rcache_get(&rc, key);
    ck_assert_ptr_nonnull(it);
    ck_assert_uint_eq(it->len, 5);
    ck_assert_uint_eq(it->kind, 7);
    ck_assert_mem_eq(it->body, "hello", 5);
    ck_assert_ptr_ne(it->body, src);
    ck_assert_ptr_nonnull(rcache_get(&rc, key));
    ck_assert(!present(&rc, 2));
    ck_assert_uint_eq(rc.stats.hits, 2);
    ck_assert_uint_eq(rc.stats.misses, 2);
    ck_assert_uint_eq(rc.stats.inserts, 1);
    ck_assert_uint_eq(rc.stats.items, 1);
    ck_assert_uint_eq(rc.stats.bytes, table_bytes(&rc) + rcache_item_cost(5));
    check_lists(&rc);
    rcache_close(&rc);
}
END_TEST

START_TEST(empty_body)
{
    struct rcache rc;
    ck_assert_int_eq(rcache_init(&rc, 1 << 20), 0);
    uint8_t key[32];
    mkkey(key, 3);
    ck_assert_int_eq(rcache_put(&rc, key, 1, NULL, 0), 0);
    const struct rcache_item *it = rcache_get(&rc, key);
    ck_assert_ptr_nonnull(it);
    ck_assert_uint_eq(it->len, 0);
    ck_assert_uint_eq(rc.stats.bytes, table_bytes(&rc) + rcache_item_cost(0));
    rcache_close(&rc);
}
END_TEST

START_TEST(replace_existing_key)
{
    struct rcache rc;
    ck_assert_int_eq(rcache_init(&rc, 1 << 20), 0);
    uint8_t key[32];
    mkkey(key, 4);
    ck_assert_int_eq(rcache_put(&rc, key, 1, "first body", 10), 0);
    put_n(&rc, 5, 100);
    ck_assert_int_eq(rcache_put(&rc, key, 2, "second", 6), 0);
    ck_assert_uint_eq(rc.stats.items, 2);
    ck_assert_uint_eq(rc.stats.inserts, 3);
    ck_assert_uint_eq(rc.stats.evictions, 0);
    ck_assert_uint_eq(rc.stats.bytes,
                      table_bytes(&rc) + rcache_item_cost(6) + rcache_item_cost(100));
    ck_assert_mem_eq(rc.head->key, key, 32); /* the replacement is at the hot end */
    const struct rcache_item *it = rcache_get(&rc, key);
    ck_assert_uint_eq(it->kind, 2);
    ck_assert_uint_eq(it->len, 6);
    ck_assert_mem_eq(it->body, "second", 6);
    check_lists(&rc);
    rcache_close(&rc);
}
END_TEST

/* The body may be the cached item's own bytes: it is copied before the old item is freed
 * (valgrind reports a read after free if not). */
START_TEST(replace_with_own_body)
{
    struct rcache rc;
    ck_assert_int_eq(rcache_init(&rc, 1 << 20), 0);
    put_n(&rc, 6, 300);
    uint8_t key[32];
    mkkey(key, 6);
    const struct rcache_item *it = rcache_get(&rc, key);
    ck_assert_int_eq(rcache_put(&rc, key, 6, it->body, it->len), 0);
    ck_assert(present(&rc, 6));
    ck_assert_uint_eq(rc.stats.items, 1);
    check_lists(&rc);
    rcache_close(&rc);
}
END_TEST

/* ====================================================================================== */
/* LRU and budget                                                                          */

START_TEST(evicts_cold_end_exact_bytes)
{
    const size_t len = 200;
    struct rcache rc;
    ck_assert_int_eq(rcache_init(&rc, budget_for(8, len)), 0);
    for (unsigned n = 1; n <= 8; n++)
        put_n(&rc, n, len);
    ck_assert_uint_eq(rc.stats.items, 8);
    ck_assert_uint_eq(rc.stats.bytes, rc.budget); /* exactly full, nothing evicted */
    ck_assert_uint_eq(rc.stats.evictions, 0);

    put_n(&rc, 9, len); /* one over: the oldest, 1, goes */
    ck_assert_uint_eq(rc.stats.evictions, 1);
    ck_assert_uint_eq(rc.stats.items, 8);
    ck_assert_uint_eq(rc.stats.bytes, rc.budget);
    check_lists(&rc);
    ck_assert(!present(&rc, 1));
    for (unsigned n = 2; n <= 9; n++)
        ck_assert(present(&rc, n));
    rcache_close(&rc);
}
END_TEST

START_TEST(touch_protects_from_eviction)
{
    const size_t len = 200;
    struct rcache rc;
    ck_assert_int_eq(rcache_init(&rc, budget_for(8, len)), 0);
    for (unsigned n = 1; n <= 8; n++)
        put_n(&rc, n, len);
    ck_assert(present(&rc, 1)); /* 1 becomes the most recent; 2 is now the coldest */
    put_n(&rc, 9, len);
    ck_assert(!present(&rc, 2));
    ck_assert(present(&rc, 1));
    put_n(&rc, 10, len); /* next coldest: 3 (1 was touched again just now) */
    ck_assert(!present(&rc, 3));
    ck_assert(present(&rc, 1));
    ck_assert_uint_eq(rc.stats.evictions, 2);
    check_lists(&rc);
    rcache_close(&rc);
}
END_TEST

/* One larger item evicts as many cold ones as it needs, and no more. */
START_TEST(big_item_evicts_several)
{
    const size_t small = 600; /* large enough that small + 150 bytes is under budget / 8 */
    struct rcache rc;
    ck_assert_int_eq(rcache_init(&rc, budget_for(10, small)), 0);
    for (unsigned n = 1; n <= 10; n++)
        put_n(&rc, n, small);
    ck_assert_uint_eq(rc.stats.bytes, rc.budget);
    /* Costs one small item plus 150 bytes: two small ones must go. */
    size_t big = rcache_item_cost(small) + 150 - rcache_item_cost(0);
    ck_assert_uint_le(rcache_item_cost(big), rc.budget / 8);
    put_n(&rc, 11, big);
    ck_assert_uint_eq(rc.stats.evictions, 2);
    ck_assert_uint_eq(rc.stats.items, 9);
    ck_assert_uint_eq(rc.stats.bytes, rc.budget - rcache_item_cost(small) + 150);
    ck_assert(!present(&rc, 1));
    ck_assert(!present(&rc, 2));
    for (unsigned n = 3; n <= 11; n++)
        ck_assert(present(&rc, n));
    check_lists(&rc);
    rcache_close(&rc);
}
END_TEST

/* A reference model of the cache (recency order, costs, table growth and eviction as the
 * header specifies) driven with the real one through a long deterministic mix of puts of
 * varied sizes, replacements and gets: contents, order and bytes must agree at every step. */
#define MODEL_MAX 4096
struct model {
    unsigned id[MODEL_MAX]; /* most recent first */
    size_t len[MODEL_MAX];
    size_t count, bytes, buckets, budget;
};

static long model_find(const struct model *m, unsigned id)
{
    for (size_t i = 0; i < m->count; i++)
        if (m->id[i] == id)
            return (long)i;
    return -1;
}

static void model_remove(struct model *m, size_t i)
{
    m->bytes -= rcache_item_cost(m->len[i]);
    memmove(m->id + i, m->id + i + 1, (m->count - i - 1) * sizeof *m->id);
    memmove(m->len + i, m->len + i + 1, (m->count - i - 1) * sizeof *m->len);
    m->count--;
}

static void model_touch(struct model *m, size_t i)
{
    unsigned id = m->id[i];
    size_t len = m->len[i];
    memmove(m->id + 1, m->id, i * sizeof *m->id);
    memmove(m->len + 1, m->len, i * sizeof *m->len);
    m->id[0] = id;
    m->len[0] = len;
}

static void model_put(struct model *m, unsigned id, size_t len)
{
    long i = model_find(m, id);
    if (i >= 0)
        model_remove(m, (size_t)i);
    if (rcache_item_cost(len) > m->budget / 8)
        return;
    ck_assert_uint_lt(m->count, MODEL_MAX);
    memmove(m->id + 1, m->id, m->count * sizeof *m->id);
    memmove(m->len + 1, m->len, m->count * sizeof *m->len);
    m->id[0] = id;
    m->len[0] = len;
    m->count++;
    m->bytes += rcache_item_cost(len);
    if (m->count > m->buckets) {
        m->bytes += m->buckets * sizeof(void *);
        m->buckets *= 2;
    }
    while (m->bytes > m->budget && m->count)
        model_remove(m, m->count - 1);
}

static void model_compare(const struct model *m, const struct rcache *rc)
{
    ck_assert_uint_eq(rc->stats.items, m->count);
    ck_assert_uint_eq(rc->stats.bytes, m->bytes);
    ck_assert_uint_eq(rc->bucket_count, m->buckets);
    const struct rcache_item *it = rc->head;
    for (size_t i = 0; i < m->count; i++, it = it->next) {
        uint8_t key[32];
        mkkey(key, m->id[i]);
        ck_assert_mem_eq(it->key, key, 32);
        ck_assert_uint_eq(it->len, m->len[i]);
    }
    ck_assert_ptr_null(it);
}

START_TEST(matches_reference_model)
{
    struct model *m = calloc(1, sizeof *m);
    ck_assert_ptr_nonnull(m);
    struct rcache rc;
    ck_assert_int_eq(rcache_init(&rc, 96 * 1024), 0);
    m->budget = rc.budget;
    m->buckets = rc.bucket_count;
    m->bytes = rc.stats.bytes;
    uint32_t seed = 12345;
    for (int step = 0; step < 20000; step++) {
        seed = seed * 1103515245u + 12345u; /* a fixed LCG: the same run every time */
        unsigned r = seed >> 8;
        unsigned id = r % 400;
        if (r & 0x10000) { /* a get */
            long i = model_find(m, id);
            ck_assert_int_eq(present(&rc, id), i >= 0);
            if (i >= 0)
                model_touch(m, (size_t)i);
        } else { /* a put: mostly small, sometimes near or over budget / 8 */
            size_t len = (r >> 18) % 8 == 0 ? 11000 + (r >> 3) % 2000 : 10 + (r >> 3) % 1500;
            put_n(&rc, id, len);
            model_put(m, id, len);
            ck_assert_uint_le(rc.stats.bytes, rc.budget);
        }
        if (step % 97 == 0) {
            model_compare(m, &rc);
            check_lists(&rc);
        }
    }
    model_compare(m, &rc);
    ck_assert_uint_gt(rc.stats.evictions, 0);
    ck_assert_uint_gt(rc.stats.oversize, 0);
    ck_assert_uint_gt(rc.bucket_count, 16); /* the table grew along the way */
    rcache_close(&rc);
    free(m);
}
END_TEST

/* ====================================================================================== */
/* oversize and disabled                                                                   */

START_TEST(oversize_not_cached)
{
    const size_t len = 200;
    struct rcache rc;
    ck_assert_int_eq(rcache_init(&rc, budget_for(8, len)), 0);
    for (unsigned n = 1; n <= 7; n++)
        put_n(&rc, n, len);
    size_t bytes = rc.stats.bytes;

    size_t cap = rc.budget / 8; /* the largest cost that is still cached */
    size_t over = cap - rcache_item_cost(0) + 1;
    put_n(&rc, 100, over);
    ck_assert(!present(&rc, 100));
    ck_assert_uint_eq(rc.stats.oversize, 1);
    ck_assert_uint_eq(rc.stats.inserts, 7);
    ck_assert_uint_eq(rc.stats.bytes, bytes); /* nothing flushed for it */
    for (unsigned n = 1; n <= 7; n++)
        ck_assert(present(&rc, n));

    put_n(&rc, 101, over - 1); /* exactly budget / 8: cached */
    ck_assert(present(&rc, 101));
    ck_assert_uint_eq(rc.stats.oversize, 1);

    /* A length whose cost overflows is refused without reading the body. */
    uint8_t key[32];
    mkkey(key, 102);
    ck_assert_uint_eq(rcache_item_cost(SIZE_MAX), SIZE_MAX);
    ck_assert_int_eq(rcache_put(&rc, key, 0, "x", SIZE_MAX), 0);
    ck_assert_uint_eq(rc.stats.oversize, 2);
    check_lists(&rc);
    rcache_close(&rc);
}
END_TEST

/* An oversize replacement leaves the key absent: the old body is never served for it. */
START_TEST(oversize_replacement_drops_old)
{
    struct rcache rc;
    ck_assert_int_eq(rcache_init(&rc, budget_for(8, 200)), 0);
    put_n(&rc, 1, 200);
    put_n(&rc, 1, rc.budget);
    ck_assert(!present(&rc, 1));
    ck_assert_uint_eq(rc.stats.items, 0);
    ck_assert_uint_eq(rc.stats.bytes, table_bytes(&rc));
    check_lists(&rc);
    rcache_close(&rc);
}
END_TEST

START_TEST(budget_zero_disables)
{
    struct rcache rc;
    ck_assert_int_eq(rcache_init(&rc, 0), 0);
    ck_assert_ptr_null(rc.buckets);
    put_n(&rc, 1, 10);
    put_n(&rc, 2, 0);
    ck_assert(!present(&rc, 1));
    ck_assert(!present(&rc, 2));
    ck_assert_uint_eq(rc.stats.misses, 2);
    ck_assert_uint_eq(rc.stats.hits, 0);
    ck_assert_uint_eq(rc.stats.inserts, 0);
    ck_assert_uint_eq(rc.stats.oversize, 0);
    ck_assert_uint_eq(rc.stats.items, 0);
    ck_assert_uint_eq(rc.stats.bytes, 0);
    rcache_clear(&rc);
    rcache_close(&rc);
}
END_TEST

/* ====================================================================================== */
/* growth, clear, close                                                                    */

START_TEST(thousands_grow_the_table)
{
    const unsigned count = 5000;
    const size_t len = 100;
    struct rcache rc;
    ck_assert_int_eq(rcache_init(&rc, 64u << 20), 0);
    size_t before = rc.bucket_count;
    for (unsigned n = 0; n < count; n++) {
        put_n(&rc, n, len);
        ck_assert_uint_le(rc.stats.items, rc.bucket_count); /* load never above 1 */
    }
    ck_assert_uint_gt(rc.bucket_count, before);
    ck_assert_uint_eq(rc.bucket_count & (rc.bucket_count - 1), 0);
    ck_assert_uint_eq(rc.stats.items, count);
    ck_assert_uint_eq(rc.stats.evictions, 0);
    ck_assert_uint_eq(rc.stats.bytes, table_bytes(&rc) + count * rcache_item_cost(len));
    check_lists(&rc);
    for (unsigned n = 0; n < count; n++)
        ck_assert(present(&rc, n));
    ck_assert(!present(&rc, count));
    ck_assert_uint_eq(rc.stats.hits, count);

    size_t buckets = rc.bucket_count;
    rcache_clear(&rc);
    ck_assert_uint_eq(rc.stats.items, 0);
    ck_assert_uint_eq(rc.bucket_count, buckets); /* the table is kept */
    ck_assert_uint_eq(rc.stats.bytes, table_bytes(&rc));
    ck_assert_uint_eq(rc.stats.hits, count); /* and the counters go on */
    ck_assert_uint_eq(rc.stats.inserts, count);
    ck_assert(!present(&rc, 0));
    put_n(&rc, 0, len);
    ck_assert(present(&rc, 0));
    check_lists(&rc);
    rcache_close(&rc);
}
END_TEST

/* Many more items than fit: the budget holds throughout and every count adds up. */
START_TEST(thousands_under_small_budget)
{
    struct rcache rc;
    ck_assert_int_eq(rcache_init(&rc, 256 * 1024), 0);
    const unsigned count = 20000;
    for (unsigned n = 0; n < count; n++) {
        put_n(&rc, n, 64 + n % 900);
        ck_assert_uint_le(rc.stats.bytes, rc.budget);
    }
    ck_assert_uint_eq(rc.stats.inserts, count);
    ck_assert_uint_eq(rc.stats.evictions + rc.stats.items, count);
    check_lists(&rc);
    unsigned found = 0;
    for (unsigned n = 0; n < count; n++)
        found += present(&rc, n);
    ck_assert_uint_eq(found, rc.stats.items);
    ck_assert(present(&rc, count - 1)); /* the newest survive */
    rcache_close(&rc);
}
END_TEST

START_TEST(close_is_idempotent)
{
    struct rcache rc;
    memset(&rc, 0, sizeof rc);
    rcache_close(&rc); /* a zeroed struct */
    ck_assert_int_eq(rcache_init(&rc, 1 << 16), 0);
    put_n(&rc, 1, 10);
    rcache_close(&rc);
    ck_assert_ptr_null(rc.buckets);
    ck_assert_uint_eq(rc.stats.items, 0);
    rcache_close(&rc);
    ck_assert_int_eq(rcache_init(&rc, 1 << 16), 0);
    ck_assert(!present(&rc, 1));
    rcache_close(&rc);
}
END_TEST

/* ====================================================================================== */
/* key and ETag                                                                            */

static void hex32(char out[65], const uint8_t d[32])
{
    for (int i = 0; i < 32; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

/* ====================================================================================== */
/* SHA-256, incremental form                                                               */

static void digest_hex(char out[65], const void *data, size_t len)
{
    uint8_t d[32];
    sha256(data, len, d);
    hex32(out, d);
}

/* FIPS 180-4 examples: empty, one block, two blocks, a million 'a's fed in pieces. */
START_TEST(sha256_vectors)
{
    char hex[65];
    digest_hex(hex, NULL, 0);
    ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    digest_hex(hex, "abc", 3);
    ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    digest_hex(hex, two, strlen(two));
    ck_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

    /* Pieces of 1, 333 and 999 bytes, so updates start and end everywhere in a block. */
    static const size_t sizes[3] = {1, 333, 999};
    char piece[999];
    memset(piece, 'a', sizeof piece);
    struct sha256_ctx ctx;
    sha256_init(&ctx);
    for (size_t fed = 0, i = 0; fed < 1000000; i++) {
        size_t n = 1000000 - fed < sizes[i % 3] ? 1000000 - fed : sizes[i % 3];
        sha256_update(&ctx, piece, n);
        fed += n;
    }
    uint8_t d[32];
    sha256_final(&ctx, d);
    hex32(hex, d);
    ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
END_TEST

/* Every split of a message into three updates (and empty ones) gives the one-shot digest. */
START_TEST(sha256_splits)
{
    uint8_t msg[200], one[32], inc[32];
    for (size_t i = 0; i < sizeof msg; i++)
        msg[i] = (uint8_t)(i * 13 + 1);
    for (size_t len = 0; len <= sizeof msg; len += 7) {
        sha256(msg, len, one);
        for (size_t s1 = 0; s1 <= len; s1 += 5)
            for (size_t s2 = s1; s2 <= len; s2 += 11) {
                struct sha256_ctx ctx;
                sha256_init(&ctx);
                sha256_update(&ctx, msg, s1);
                sha256_update(&ctx, NULL, 0);
                sha256_update(&ctx, msg + s1, s2 - s1);
                sha256_update(&ctx, msg + s2, len - s2);
                sha256_final(&ctx, inc);
                ck_assert_mem_eq(inc, one, 32);
            }
    }
}
END_TEST

/* Two digests open at once on one thread (the second cannot take the thread's spare context)
 * both come out right, and every call reports success. */
START_TEST(sha256_nested)
{
    struct sha256_ctx a, b;
    uint8_t da[32], db[32];
    char hex[65];
    ck_assert_int_eq(sha256_init(&a), 0);
    ck_assert_int_eq(sha256_init(&b), 0);
    sha256_update(&a, "ab", 2);
    sha256_update(&b, "abc", 3);
    sha256_update(&a, "c", 1);
    ck_assert_int_eq(sha256_final(&b, db), 0);
    ck_assert_int_eq(sha256_final(&a, da), 0);
    ck_assert_mem_eq(da, db, 32);
    hex32(hex, da);
    ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    ck_assert_int_eq(sha256("abc", 3, db), 0);
    ck_assert_mem_eq(da, db, 32);
}
END_TEST

static Suite *rcache_suite(void)
{
    Suite *s = suite_create("rcache");
    TCase *tc = tcase_create("get and put");
    tcase_add_test(tc, miss_then_hit_counts);
    tcase_add_test(tc, empty_body);
    tcase_add_test(tc, replace_existing_key);
    tcase_add_test(tc, replace_with_own_body);
    suite_add_tcase(s, tc);

    tc = tcase_create("LRU and budget");
    tcase_add_test(tc, evicts_cold_end_exact_bytes);
    tcase_add_test(tc, touch_protects_from_eviction);
    tcase_add_test(tc, big_item_evicts_several);
    tcase_add_test(tc, matches_reference_model);
    suite_add_tcase(s, tc);

    tc = tcase_create("oversize and disabled");
    tcase_add_test(tc, oversize_not_cached);
    tcase_add_test(tc, oversize_replacement_drops_old);
    tcase_add_test(tc, budget_zero_disables);
    suite_add_tcase(s, tc);

    tc = tcase_create("growth, clear, close");
    tcase_add_test(tc, thousands_grow_the_table);
    tcase_add_test(tc, thousands_under_small_budget);
    tcase_add_test(tc, close_is_idempotent);
    suite_add_tcase(s, tc);

    tc = tcase_create("sha256 incremental");
    tcase_add_test(tc, sha256_vectors);
    tcase_add_test(tc, sha256_splits);
    tcase_add_test(tc, sha256_nested);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(rcache_suite());
    srunner_run_all(sr, CK_ENV);
    int nfailed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nfailed ? EXIT_FAILURE : EXIT_SUCCESS;
}
