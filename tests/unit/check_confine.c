/* LOAD by path's file access (daemon/confine.c): the signature a read reports, a read skipped
 * only for exactly the known signature (every field counts), confinement and the checks still
 * applied when a signature is known, and when a signature may be trusted at all
 * (confine_sig_settled: old enough, and on a filesystem the kernel keeps times for). Files are made
 * in a fresh temporary directory; nothing here waits. */
#define _GNU_SOURCE
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "confine.h"
#include "skp.h"
#include "testhelp.h"

static char dir[64];
static int root_fd = -1;

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/skeld-confine-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    root_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_ge(root_fd, 0);
}

static void teardown(void)
{
    char cmd[128];
    close(root_fd);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void put(const char *name, const char *bytes)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(bytes, 1, strlen(bytes), f), strlen(bytes));
    ck_assert_int_eq(fclose(f), 0);
}

/* confine_read's judgement of the last read_as: whether its signature may be remembered with
 * a margin of a second. */
static bool last_settled;

/* Reads name under the root with known (may be NULL): the status, the signature and, if read,
 * the bytes (caller frees). */
static uint16_t read_as(const char *name, const struct confine_sig *known, struct confine_sig *sig,
                        char **bytes, size_t *len)
{
    char why[256];
    void *buf = NULL;
    struct confine_version v = {.known = known, .settle_ns = 1000000000LL};
    uint16_t st = confine_read(root_fd, name, 1 << 20, &v, &buf, len, why, sizeof why);
    *bytes = buf;
    *sig = v.sig;
    last_settled = v.settled;
    ck_assert(v.unchanged == (st == SKP_S_OK && !buf)); /* unchanged: nothing was read */
    return st;
}

START_TEST(known_signature_skips_the_read)
{
    put("a.skf", "first version");
    struct confine_sig sig, again;
    char *bytes;
    size_t len;
    ck_assert_uint_eq(read_as("a.skf", NULL, &sig, &bytes, &len), SKP_S_OK);
    ck_assert_uint_eq(len, 13);
    ck_assert(!memcmp(bytes, "first version", 13));
    free(bytes);
    ck_assert_uint_eq(sig.size, 13);
    ck_assert_uint_ne(sig.ino, 0);

    /* the same file again, its signature known: opened, not read */
    ck_assert_uint_eq(read_as("a.skf", &sig, &again, &bytes, &len), SKP_S_OK);
    ck_assert_ptr_null(bytes);
    ck_assert_uint_eq(len, 0);
    ck_assert(confine_sig_equal(&sig, &again));

    /* any field that differs means another version: read */
    for (int field = 0; field < 5; field++) {
        struct confine_sig other = sig;
        switch (field) {
        case 0: other.dev++; break;
        case 1: other.ino++; break;
        case 2: other.size++; break;
        case 3: other.mtime_ns++; break;
        default: other.ctime_ns++; break;
        }
        ck_assert(!confine_sig_equal(&sig, &other));
        ck_assert_uint_eq(read_as("a.skf", &other, &again, &bytes, &len), SKP_S_OK);
        ck_assert_msg(bytes && len == 13 && !memcmp(bytes, "first version", 13),
                      "field %d: not read", field);
        free(bytes);
        /* check_only: told it differs, still not read */
        char why[256];
        void *buf = NULL;
        struct confine_version v = {.known = &other, .settle_ns = 0, .check_only = true};
        ck_assert_uint_eq(confine_read(root_fd, "a.skf", 1 << 20, &v, &buf, &len, why, sizeof why),
                          SKP_S_OK);
        ck_assert_msg(!buf && len == 0 && !v.unchanged, "field %d: check_only read", field);
        v.known = &sig; /* and told it is the same */
        ck_assert_uint_eq(confine_read(root_fd, "a.skf", 1 << 20, &v, &buf, &len, why, sizeof why),
                          SKP_S_OK);
        ck_assert(!buf && v.unchanged);
    }
}
END_TEST

/* A file rewritten with other bytes of the same size may keep its times if the clock has not
 * ticked in between: then its first signature must not have counted as settled, so no memo
 * would ever have held it. */
START_TEST(a_rewrite_is_never_mistaken_for_the_known_version)
{
    put("b.skf", "version one!");
    struct confine_sig sig, now_sig;
    char *bytes;
    size_t len;
    ck_assert_uint_eq(read_as("b.skf", NULL, &sig, &bytes, &len), SKP_S_OK);
    free(bytes);
    bool settled = last_settled;
    put("b.skf", "version two!");
    ck_assert_uint_eq(read_as("b.skf", &sig, &now_sig, &bytes, &len), SKP_S_OK);
    if (!bytes) /* taken for the known version: only possible for a signature never trusted */
        ck_assert_msg(!settled, "a settled signature survived a rewrite");
    else
        ck_assert(len == 12 && !memcmp(bytes, "version two!", 12));
    free(bytes);

    /* a replacement by rename is another inode */
    put("c.skf", "version 3!!!");
    char from[128], to[128];
    snprintf(from, sizeof from, "%s/c.skf", dir);
    snprintf(to, sizeof to, "%s/b.skf", dir);
    ck_assert_int_eq(rename(from, to), 0);
    ck_assert_uint_eq(read_as("b.skf", &now_sig, &sig, &bytes, &len), SKP_S_OK);
    ck_assert(bytes && len == 12 && !memcmp(bytes, "version 3!!!", 12));
    ck_assert_uint_ne(sig.ino, now_sig.ino);
    free(bytes);
}
END_TEST

/* A known signature changes none of the checks: the root's confinement, regular files only,
 * the size limit, a missing file. */
START_TEST(checks_hold_with_a_known_signature)
{
    char outside[128], link[128], why[256];
    snprintf(outside, sizeof outside, "%s-outside.skf", dir);
    FILE *f = fopen(outside, "wb");
    ck_assert_ptr_nonnull(f);
    fputs("outside", f);
    fclose(f);
    snprintf(link, sizeof link, "%s/out.skf", dir);
    ck_assert_int_eq(symlink(outside, link), 0);
    struct stat st;
    ck_assert_int_eq(stat(outside, &st), 0);
    struct confine_sig known = {(uint64_t)st.st_dev,
                                (uint64_t)st.st_ino,
                                (uint64_t)st.st_size,
                                (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec,
                                (int64_t)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec,
                                true};
    struct confine_sig sig;
    char *bytes;
    size_t len;
    ck_assert_uint_eq(read_as("out.skf", &known, &sig, &bytes, &len), SKP_S_FORBIDDEN_PATH);
    ck_assert_ptr_null(bytes);
    unlink(outside);

    ck_assert_uint_eq(read_as("missing.skf", &known, &sig, &bytes, &len), SKP_S_NOT_FOUND);

    /* A loop of links inside the root is refused as a loop, not as leading out of it. */
    char loop1[128], loop2[128];
    snprintf(loop1, sizeof loop1, "%s/loop1.skf", dir);
    snprintf(loop2, sizeof loop2, "%s/loop2.skf", dir);
    ck_assert_int_eq(symlink("loop2.skf", loop1), 0);
    ck_assert_int_eq(symlink("loop1.skf", loop2), 0);
    void *none = NULL;
    ck_assert_uint_eq(confine_read(root_fd, "loop1.skf", 64, NULL, &none, &len, why, sizeof why),
                      SKP_S_FORBIDDEN_PATH);
    ck_assert_msg(strstr(why, "loop1.skf: too many symbolic links (a loop?)") ||
                      strstr(why, "cannot follow safely (no openat2)"),
                  "%s", why);
    ck_assert_ptr_null(none);

    char sub[128];
    snprintf(sub, sizeof sub, "%s/dir.skf", dir);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    ck_assert_uint_eq(read_as("dir.skf", NULL, &sig, &bytes, &len), SKP_S_BAD_REQUEST);
    struct confine_sig dir_sig = sig;
    ck_assert_uint_eq(read_as("dir.skf", &dir_sig, &sig, &bytes, &len), SKP_S_BAD_REQUEST);

    put("big.skf", "0123456789");
    ck_assert_uint_eq(read_as("big.skf", NULL, &sig, &bytes, &len), SKP_S_OK);
    free(bytes);
    void *buf = NULL;
    struct confine_version v = {.known = &sig};
    ck_assert_uint_eq(confine_read(root_fd, "big.skf", 5, &v, &buf, &len, why, sizeof why),
                      SKP_S_LIMIT);
    ck_assert_ptr_null(buf);
    ck_assert(!v.unchanged);
    /* without a version at all, as the operator's --preload reads */
    ck_assert_uint_eq(confine_read(root_fd, "big.skf", 64, NULL, &buf, &len, why, sizeof why),
                      SKP_S_OK);
    ck_assert(buf && len == 10 && !memcmp(buf, "0123456789", 10));
    free(buf);
}
END_TEST

START_TEST(settled_means_old_enough_and_local)
{
    const int64_t now = 1700000000LL * 1000000000LL, margin = 3000000000LL;
    struct confine_sig s = {1, 2, 3, now - 5000000000LL, now - margin, true};
    ck_assert(confine_sig_settled(&s, now, margin));
    ck_assert(!confine_sig_settled(&s, now, -1)); /* --file-settle-ms -1: never */
    s.ctime_ns = now - margin + 1;
    ck_assert(!confine_sig_settled(&s, now, margin));
    ck_assert(confine_sig_settled(&s, now, 0));
    s.ctime_ns = now - 3 * margin;
    s.mtime_ns = now + 1; /* contents dated in the future (touch -d): the clock cannot vouch */
    ck_assert(!confine_sig_settled(&s, now, margin));
    s.mtime_ns = now - margin;
    s.local = false; /* a network or FUSE filesystem keeps its own times */
    ck_assert(!confine_sig_settled(&s, now, margin));
    ck_assert(!confine_sig_settled(&s, now, 0));
}
END_TEST

/* The temporary directory's filesystem is told as statfs tells it (tmpfs or ext4 here, both
 * trusted); /proc is never trusted. */
START_TEST(local_filesystems_are_told_apart)
{
    put("d.skf", "local");
    struct confine_sig sig;
    char *bytes;
    size_t len;
    ck_assert_uint_eq(read_as("d.skf", NULL, &sig, &bytes, &len), SKP_S_OK);
    free(bytes);
    ck_assert_msg(sig.local == th_local_fs(dir), "%s: local %d", dir, sig.local);
    char why[256];
    void *buf = NULL;
    struct confine_version v = {.known = NULL};
    ck_assert_uint_eq(confine_read(-1, "/proc/self/stat", 1 << 20, &v, &buf, &len, why, sizeof why),
                      SKP_S_OK);
    free(buf);
    ck_assert(!v.sig.local);
}
END_TEST

static Suite *confine_suite(void)
{
    Suite *s = suite_create("confine");
    TCase *tc = tcase_create("signatures");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, known_signature_skips_the_read);
    tcase_add_test(tc, a_rewrite_is_never_mistaken_for_the_known_version);
    tcase_add_test(tc, checks_hold_with_a_known_signature);
    tcase_add_test(tc, settled_means_old_enough_and_local);
    tcase_add_test(tc, local_filesystems_are_told_apart);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(confine_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
