/* The preview page compiled in (daemon/www.c, written by contrib/embed at build time): each
 * URL path finds its file with the exact bytes of contrib/www in the source tree and a NUL
 * after them, a query is ignored, anything else finds nothing. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "www.h"

/* The bytes of contrib/www/NAME in the source tree ($SKELD_SRCDIR, set by make check). */
static unsigned char *read_source(const char *name, size_t *len)
{
    const char *src = getenv("SKELD_SRCDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/contrib/www/%s", src ? src : ".", name);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            buf = realloc(buf, cap *= 2);
            ck_assert_ptr_nonnull(buf);
        }
    }
    ck_assert_msg(!ferror(f), "cannot read %s", path);
    fclose(f);
    *len = n;
    return buf;
}

static void check_file(const char *url, const char *name, const char *type_prefix)
{
    const struct www_file *w = www_find(url);
    ck_assert_msg(w != NULL, "www_find(\"%s\") found nothing", url);
    size_t len;
    unsigned char *want = read_source(name, &len);
    ck_assert_uint_gt(len, 0);
    ck_assert_uint_eq(w->length, len);
    ck_assert_msg(!memcmp(w->bytes, want, len), "%s: bytes differ from contrib/www/%s", url, name);
    ck_assert_uint_eq(w->bytes[len], 0);
    ck_assert_msg(!strncmp(w->content_type, type_prefix, strlen(type_prefix)),
                  "%s: content type %s", url, w->content_type);
    ck_assert_str_eq(w->path, url);
    free(want);
}

START_TEST(files_have_their_bytes)
{
    check_file("/", "index.html", "text/html;");
    check_file("/app.js", "app.js", "text/javascript;");
    check_file("/style.css", "style.css", "text/css;");
    ck_assert_uint_eq(www_files_count, 3);
}
END_TEST

START_TEST(query_ignored_rest_exact)
{
    ck_assert_ptr_eq(www_find("/?file=robot.skf&anim=Walk"), www_find("/"));
    ck_assert_ptr_eq(www_find("/app.js?v=2"), www_find("/app.js"));
    const char *none[] = {"",   "/index.html", "/app.j",        "/app.jsx", "app.js",
                          "//", "/style.css/", "/v1/armatures", "?/"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        ck_assert_msg(www_find(none[i]) == NULL, "www_find(\"%s\") found a file", none[i]);
}
END_TEST

static Suite *www_suite(void)
{
    Suite *s = suite_create("www");
    TCase *tc = tcase_create("find");
    tcase_add_test(tc, files_have_their_bytes);
    tcase_add_test(tc, query_ignored_rest_exact);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(www_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
