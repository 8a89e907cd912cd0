/* Conformance: every golden-vectors file in ../shared/conformance runs through `skeld
 * conform` and must pass; every real sample in ../shared/samples loads, evaluates and
 * constructs finite numbers (or, for 0.7 files, fails with the unsupported-version error);
 * the project's own samples do the same. Skips with a visible message when shared/ is absent. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "engine/eval.h"
#include "engine/load.h"
#include "testhelp.h"

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

/* Runs `skeld conform SKF VECTORS` and returns its exit status; output goes to the log. */
static int run_conform(const char *skf, const char *vectors)
{
    const char *bin = getenv("SKELD_BIN");
    ck_assert_msg(bin != NULL, "SKELD_BIN is not set");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' conform '%s' '%s'", bin, skf, vectors);
    int st = system(cmd);
    ck_assert_msg(WIFEXITED(st), "skeld conform did not exit normally");
    return WEXITSTATUS(st);
}

/* The .skf a vectors file names (its "skf" key), next to the vectors file. */
static void vectors_skf(const char *dir, const char *vectors, char *out, size_t len)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, vectors);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    char head[4096] = {0};
    size_t got = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    head[got] = 0;
    const char *k = strstr(head, "\"skf\"");
    ck_assert_msg(k != NULL, "%s names no skf", path);
    const char *q1 = strchr(k + 5, '"');
    const char *q2 = q1 ? strchr(q1 + 1, '"') : NULL;
    ck_assert_msg(q1 && q2, "%s: malformed skf key", path);
    snprintf(out, len, "%s/%.*s", dir, (int)(q2 - q1 - 1), q1 + 1);
}

START_TEST(every_vectors_file_passes)
{
    const char *shared = th_shared_dir();
    if (!shared) {
        fprintf(stderr, "SKIP conformance: ../shared is absent (SKELD_SHARED unset)\n");
        return;
    }
    char dir[2048];
    snprintf(dir, sizeof dir, "%s/conformance", shared);
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    int files = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!ends_with(e->d_name, ".json"))
            continue;
        char skf[4096], vectors[4096];
        vectors_skf(dir, e->d_name, skf, sizeof skf);
        snprintf(vectors, sizeof vectors, "%s/%s", dir, e->d_name);
        ck_assert_msg(run_conform(skf, vectors) == 0, "conformance failed: %s", vectors);
        files++;
    }
    closedir(d);
    ck_assert_msg(files > 0, "no vectors files in %s", dir);
}
END_TEST

/* Loads, plays every animation through its loop after the player's warm-up, and checks that
 * every constructed number is finite. */
static void exercise(struct armature *arm, const char *name)
{
    struct pose *p = pose_new(arm);
    ck_assert_ptr_nonnull(p);
    for (uint32_t a = 0; a < arm->anim_count; a++) {
        pose_reset(p);
        struct eval_request r;
        eval_request_init(&r);
        r.count = 1;
        r.anims[0] = (int)a;
        r.frames[0] = arm->anims[a].last_frame + 5;
        r.from = 0;
        r.has_from = true;
        r.warmup = 30;
        r.loop = true;
        ck_assert_int_eq(eval_check(arm, &r, NULL), 0);
        eval_run(p, &r, NULL);
        for (uint32_t b = 0; b < arm->bone_count; b++) {
            const struct bone_out *o = &p->out[b];
            ck_assert_msg(isfinite(o->pos.x) && isfinite(o->pos.y) && isfinite(o->rot) &&
                              isfinite(o->scale.x) && isfinite(o->scale.y),
                          "%s anim %u bone %u: non-finite output", name, a, b);
        }
        for (uint32_t v = 0; v < arm->vert_count; v++)
            ck_assert_msg(isfinite(p->verts[v].x) && isfinite(p->verts[v].y),
                          "%s anim %u vertex %u: non-finite", name, a, v);
    }
    pose_free(p);
}

static int exercise_dir(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    int files = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!ends_with(e->d_name, ".skf"))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct armature *arm = NULL;
        struct eng_error err = {0, ""};
        int rc = armature_load_file(path, NULL, &arm, &err);
        if (strstr(e->d_name, "0.7")) {
            ck_assert_int_eq(rc, ENG_EUNSUPPORTED);
            ck_assert_msg(strstr(err.msg, "unsupported format version 0.7.0"), "%s", err.msg);
            continue;
        }
        ck_assert_msg(rc == 0, "%s: %s", path, err.msg);
        exercise(arm, e->d_name);
        armature_free(arm);
        files++;
    }
    closedir(d);
    return files;
}

START_TEST(real_samples_load_and_evaluate)
{
    const char *shared = th_shared_dir();
    if (!shared) {
        fprintf(stderr, "SKIP real samples: ../shared is absent\n");
        return;
    }
    char dir[2048];
    snprintf(dir, sizeof dir, "%s/samples", shared);
    ck_assert_int_gt(exercise_dir(dir), 0);
}
END_TEST

START_TEST(own_samples_load_and_evaluate)
{
    const char *samples = th_samples_dir();
    ck_assert_msg(samples != NULL, "SKELD_SAMPLES is not a directory (build the samples)");
    ck_assert_int_ge(exercise_dir(samples), 2);
}
END_TEST

static Suite *conform_suite(void)
{
    Suite *s = suite_create("conform");
    TCase *tc = tcase_create("golden vectors");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, every_vectors_file_passes);
    suite_add_tcase(s, tc);
    tc = tcase_create("samples");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, real_samples_load_and_evaluate);
    tcase_add_test(tc, own_samples_load_and_evaluate);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(conform_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
