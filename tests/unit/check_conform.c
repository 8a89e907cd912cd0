/* Conformance: every golden-vectors file in ../shared/conformance and its subfolders (0.5
 * and 0.7) runs through `skeld conform` and must pass; every real sample in ../shared/samples
 * and its subfolders loads, plays every animation to finite numbers and renders; the
 * project's own samples do the same. Skips with a visible message when shared/ is absent. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "engine/eval.h"
#include "engine/load.h"
#include "engine/render.h"
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
    char cmd[20000];
    snprintf(cmd, sizeof cmd, "'%s' conform '%s' '%s'", bin, skf, vectors);
    int st = system(cmd);
    ck_assert_msg(WIFEXITED(st), "skeld conform did not exit normally");
    return WEXITSTATUS(st);
}

/* The .skf a vectors file names (its "skf" key), next to the vectors file. Returns false for
 * a JSON file that is not a vectors file (no "cases" key, like the render sidecar). */
static bool vectors_skf(const char *dir, const char *vectors, char *out, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, vectors);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    static char text[1 << 22];
    size_t got = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[got] = 0;
    if (!strstr(text, "\"cases\""))
        return false;
    const char *k = strstr(text, "\"skf\"");
    ck_assert_msg(k != NULL, "%s names no skf", path);
    const char *q1 = strchr(k + 5, '"');
    const char *q2 = q1 ? strchr(q1 + 1, '"') : NULL;
    ck_assert_msg(q1 && q2, "%s: malformed skf key", path);
    ck_assert_msg(snprintf(out, len, "%s/%.*s", dir, (int)(q2 - q1 - 1), q1 + 1) < (int)len,
                  "path too long");
    return true;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Calls fn(dir, name) for every file of dir and its subfolders whose name ends with suffix;
 * returns how many calls. */
static int walk(const char *dir, const char *suffix, void (*fn)(const char *, const char *))
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    int files = 0;
    for (struct dirent *e; (e = readdir(d));) {
        char path[8192];
        if (e->d_name[0] == '.')
            continue;
        ck_assert_msg(snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path,
                      "path too long");
        if (is_dir(path)) {
            files += walk(path, suffix, fn);
        } else if (ends_with(e->d_name, suffix)) {
            fn(dir, e->d_name);
            files++;
        }
    }
    closedir(d);
    return files;
}

static int vectors_layouts; /* bit 0: a 0.5 file passed, bit 1: a 0.6/0.7 file */

static void conform_one(const char *dir, const char *name)
{
    char skf[8192], vectors[8192];
    if (!vectors_skf(dir, name, skf, sizeof skf))
        return;
    snprintf(vectors, sizeof vectors, "%s/%s", dir, name);
    ck_assert_msg(run_conform(skf, vectors) == 0, "conformance failed: %s", vectors);
    struct armature *arm = NULL;
    struct eng_error err = {0, ""};
    ck_assert_msg(armature_load_file(skf, NULL, &arm, &err) == 0, "%s: %s", skf, err.msg);
    vectors_layouts |= 1 << arm->layout;
    armature_free(arm);
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
    ck_assert_msg(walk(dir, ".json", conform_one) > 0, "no vectors files in %s", dir);
    ck_assert_msg(vectors_layouts == 3, "vectors of both layouts expected, got mask %d",
                  vectors_layouts);
}
END_TEST

/* Renders p framed on its bounds: the render succeeds and covers some pixels. */
static void draws_something(const struct armature *arm, const struct pose *p, const char *name,
                            uint32_t a)
{
    struct render_opts o;
    render_opts_default(&o);
    o.width = o.height = 96;
    struct bounds bd = {0, 0, 0, 0, true};
    render_bounds(arm, p, &o, &bd);
    render_fit(&bd, 0.9, &o);
    struct image img;
    image_init(&img);
    ck_assert_msg(render(arm, p, &o, &img) == 0, "%s anim %u: render failed", name, a);
    size_t covered = 0;
    for (size_t i = 0; i < (size_t)img.width * img.height; i++)
        covered += img.rgba[i * 4 + 3] != 0;
    ck_assert_msg(covered > 96 * 96 / 50, "%s anim %u: only %zu pixels drawn", name, a, covered);
    image_close(&img);
}

/* Loads, plays every animation through its loop after the player's warm-up, and checks that
 * every constructed number is finite and that the pose draws. */
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
        draws_something(arm, p, name, a);
    }
    pose_free(p);
}

static void exercise_file(const char *dir, const char *name)
{
    char path[8192];
    ck_assert_msg(snprintf(path, sizeof path, "%s/%s", dir, name) < (int)sizeof path,
                  "path too long");
    struct armature *arm = NULL;
    struct eng_error err = {0, ""};
    int rc = armature_load_file(path, NULL, &arm, &err);
    ck_assert_msg(rc == 0, "%s: %s", path, err.msg);
    exercise(arm, name);
    armature_free(arm);
}

static int exercise_dir(const char *dir)
{
    return walk(dir, ".skf", exercise_file);
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
