/* libskc's table of pending requests (client/skc_pend.c) alone, against a plain list that
 * holds what it should: random ids, which collide in the index as a connection's consecutive
 * ids seldom do, added, found and removed in a random order through growth and back to
 * empty, where the table gives its memory back. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "skc_int.h"

enum { MOST = 20000, STEPS = 400000 };

/* xorshift32: the same sequence on every machine */
static uint32_t next_random(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* The model: the ids that should be pending, with the op each was added with. */
struct model {
    uint32_t id[MOST];
    uint8_t op[MOST];
    size_t n;
};

static int model_has(const struct model *m, uint32_t id)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->id[i] == id)
            return 1;
    return 0;
}

/* Every id of the model is found, with its op, and the table holds no more. */
static void same_as_model(const skc_client *c, const struct model *m)
{
    ck_assert_uint_eq(c->npend, m->n);
    for (size_t i = 0; i < m->n; i++) {
        const struct skc__pending *p = skc__pend_find(c, m->id[i]);
        ck_assert_msg(p != NULL, "id %u is pending but not found", (unsigned)m->id[i]);
        ck_assert_uint_eq(p->id, m->id[i]);
        ck_assert_uint_eq(p->op, m->op[i]);
    }
}

static void add(skc_client *c, struct model *m, uint32_t *rng)
{
    uint32_t id;
    do
        id = next_random(rng);
    while (!id || model_has(m, id));
    uint8_t op = (uint8_t)(id % 7);
    ck_assert_ptr_nonnull(skc__pend_add(c, id, op));
    m->id[m->n] = id;
    m->op[m->n++] = op;
}

static void remove_one(skc_client *c, struct model *m, uint32_t *rng)
{
    size_t k = next_random(rng) % m->n;
    struct skc__pending *p = skc__pend_find(c, m->id[k]);
    ck_assert_ptr_nonnull(p);
    skc__pend_remove(c, p);
    ck_assert_ptr_null(skc__pend_find(c, m->id[k]));
    m->id[k] = m->id[--m->n];
    m->op[k] = m->op[m->n];
}

START_TEST(random_ids_against_a_model)
{
    static struct model m;
    memset(&m, 0, sizeof m);
    skc_client *c = calloc(1, sizeof *c);
    ck_assert_ptr_nonnull(c);
    uint32_t rng = 2463534242u;
    /* grow to MOST, then shrink to empty, with adds and removals mixed all the way: the
     * odds of adding fall from 3 in 4 to 1 in 4 halfway */
    for (int step = 0; step < STEPS; step++) {
        unsigned adding = step < STEPS / 2 ? 3 : 1;
        if (m.n < MOST && (m.n == 0 || next_random(&rng) % 4 < adding))
            add(c, &m, &rng);
        else if (m.n > 0)
            remove_one(c, &m, &rng);
        if (step % 4999 == 0)
            same_as_model(c, &m);
        /* an id never added is not found */
        uint32_t other = next_random(&rng);
        if (other && !model_has(&m, other))
            ck_assert_ptr_null(skc__pend_find(c, other));
    }
    while (m.n < MOST)
        add(c, &m, &rng);
    same_as_model(c, &m);
    while (m.n > 0)
        remove_one(c, &m, &rng);
    same_as_model(c, &m);
    ck_assert_ptr_null(c->pend); /* a big table is given back once empty */
    ck_assert_ptr_null(c->ix);
    skc__pend_free(c);
    free(c);
}
END_TEST

/* Consecutive ids, as a connection gives them out, removed oldest first: the order that
 * moves the newest entry into each gap. */
START_TEST(consecutive_ids_oldest_first)
{
    skc_client *c = calloc(1, sizeof *c);
    ck_assert_ptr_nonnull(c);
    for (uint32_t id = 1; id <= 3000; id++)
        ck_assert_ptr_nonnull(skc__pend_add(c, id, 0));
    for (uint32_t id = 1; id <= 3000; id++) {
        struct skc__pending *p = skc__pend_find(c, id);
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_eq(p->seq, id - 1); /* seq counts adds */
        skc__pend_remove(c, p);
        if (id < 3000)
            ck_assert_ptr_nonnull(skc__pend_find(c, 3000));
    }
    ck_assert_uint_eq(c->npend, 0);
    ck_assert_ptr_null(skc__pend_find(c, 1));
    skc__pend_free(c);
    free(c);
}
END_TEST

static Suite *pend_suite(void)
{
    Suite *s = suite_create("pend");
    TCase *tc = tcase_create("table");
    tcase_add_test(tc, random_ids_against_a_model);
    tcase_add_test(tc, consecutive_ids_oldest_first);
    tcase_set_timeout(tc, 300);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(pend_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
