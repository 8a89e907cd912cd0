/* Placeholder replaced by the proto test suite being written. */
#include <check.h>
#include <stdlib.h>

#include "skp_parser.h"

START_TEST(header_round_trip)
{
    struct skp_header h = {SKP_VERSION, SKP_OP_POSE, 0, 0, 42, 3};
    uint8_t buf[SKP_HEADER_SIZE + 3] = {0};
    skp_encode_header(&h, buf);
    struct skp_frame f;
    size_t used;
    ck_assert_int_eq(skp_parser_feed(buf, sizeof buf, 1024, &f, &used), SKP_FRAME);
    ck_assert_uint_eq(f.h.id, 42);
    ck_assert_uint_eq(used, sizeof buf);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("proto");
    TCase *tc = tcase_create("header");
    tcase_add_test(tc, header_round_trip);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
