/* Conformance: every golden-vectors file in ../shared/conformance and its subfolders (0.5
 * and 0.7) runs through `skeld conform` and must pass; every real sample in ../shared/samples
 * and its subfolders loads, plays every animation to finite numbers and renders; the
 * project's own samples do the same. Skips with a visible message when shared/ is absent.
 * The project's robot-0.7.skf must evaluate and draw exactly as robot.skf, and lamp-0.7.skf
 * must carry the pivots and the mimic_target toggling it was made to show. */
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
    struct eng_error err = {0};
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
    struct eng_error err = {0};
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

/* ---- the same robot in both layouts ------------------------------------------------ */

/* Poses of robot.skf and robot-0.7.skf after the same steps must be equal to the last bit:
 * transforms and mesh vertices come from the same decimal text in both files through the same
 * arithmetic, and a 0.7 tint is the shortest decimal of the 0.5 value / 255, whose double
 * times 255 (the loader's scaling) is that integer again for every 0..255 (gen-samples checks
 * it). So the tolerance is 0 everywhere, tint included: any difference is a layout bug. */
static void assert_same_pose(const struct pose *a, const struct pose *b, const char *what)
{
    const struct armature *x = a->arm, *y = b->arm;
    for (uint32_t i = 0; i < x->bone_count; i++) {
        const struct bone_out *p = &a->out[i], *q = &b->out[i];
        ck_assert_msg(p->pos.x == q->pos.x && p->pos.y == q->pos.y,
                      "%s, bone %u: pos (%.17g, %.17g) vs (%.17g, %.17g)", what, i, p->pos.x,
                      p->pos.y, q->pos.x, q->pos.y);
        ck_assert_msg(p->rot == q->rot, "%s, bone %u: rot %.17g vs %.17g", what, i, p->rot, q->rot);
        ck_assert_msg(p->scale.x == q->scale.x && p->scale.y == q->scale.y,
                      "%s, bone %u: scale (%.17g, %.17g) vs (%.17g, %.17g)", what, i, p->scale.x,
                      p->scale.y, q->scale.x, q->scale.y);
        ck_assert_msg(p->hidden == q->hidden, "%s, bone %u: hidden differs", what, i);
        ck_assert_msg(p->zindex == q->zindex, "%s, bone %u: zindex %d vs %d", what, i, p->zindex,
                      q->zindex);
        ck_assert_msg(!strcmp(armature_tex_name(x, p->tex), armature_tex_name(y, q->tex)),
                      "%s, bone %u: tex \"%s\" vs \"%s\"", what, i, armature_tex_name(x, p->tex),
                      armature_tex_name(y, q->tex));
        for (int c = 0; c < 4; c++)
            ck_assert_msg(p->tint[c] == q->tint[c], "%s, bone %u: tint[%d] %.17g vs %.17g", what, i,
                          c, p->tint[c], q->tint[c]);
    }
    for (uint32_t v = 0; v < x->vert_count; v++)
        ck_assert_msg(a->verts[v].x == b->verts[v].x && a->verts[v].y == b->verts[v].y,
                      "%s, vertex %u: (%.17g, %.17g) vs (%.17g, %.17g)", what, v, a->verts[v].x,
                      a->verts[v].y, b->verts[v].x, b->verts[v].y);
}

/* The two instances compared step by step, and their renders' images (kept between steps so
 * rendering allocates once). */
struct twins {
    struct pose *a, *b;
    struct image ia, ib;
    struct render_opts o;
};

/* Both poses drawn with one fixed camera (the whole robot, every animation) give the same
 * RGBA bytes. */
static void assert_same_pixels(struct twins *t, const char *what)
{
    ck_assert_int_eq(render(t->a->arm, t->a, &t->o, &t->ia), 0);
    ck_assert_int_eq(render(t->b->arm, t->b, &t->o, &t->ib), 0);
    const uint8_t *x = t->ia.rgba, *y = t->ib.rgba;
    size_t n = (size_t)t->o.width * t->o.height, drawn = 0, i = 0;
    /* One assertion for the whole image: Check records every assertion it passes. */
    while (i < n && !memcmp(x + i * 4, y + i * 4, 4))
        drawn += x[i++ * 4 + 3] != 0;
    size_t k = i < n ? i : 0; /* the message's pixel, in range either way */
    ck_assert_msg(i == n, "%s: pixel (%zu, %zu) differs: %02x%02x%02x%02x vs %02x%02x%02x%02x",
                  what, k % t->o.width, k / t->o.width, x[k * 4], x[k * 4 + 1], x[k * 4 + 2],
                  x[k * 4 + 3], y[k * 4], y[k * 4 + 1], y[k * 4 + 2], y[k * 4 + 3]);
    ck_assert_msg(drawn > n / 20, "%s: the camera misses the robot (%zu pixels drawn)", what,
                  drawn);
}

/* Runs every step of r on both poses, which carry on from their previous steps (smoothing and
 * physics read them), comparing after each. */
static void play_both(struct twins *t, const struct eval_request *r, const char *what)
{
    ck_assert_int_eq(eval_check(t->a->arm, r, NULL), 0);
    long steps = eval_steps(r);
    for (long s = 0; s < steps; s++) {
        char at[160];
        snprintf(at, sizeof at, "%s, step %ld (frame %g)", what, s, eval_step_frame(r, s));
        eval_step(t->a, r, s, NULL);
        eval_step(t->b, r, s, NULL);
        assert_same_pose(t->a, t->b, at);
        assert_same_pixels(t, at);
    }
}

/* Both instances back to the file's state, then n constructs at rest. */
static void restart_both(struct twins *t, long warmup)
{
    pose_reset(t->a);
    pose_reset(t->b);
    eval_warmup(t->a, warmup, NULL);
    eval_warmup(t->b, warmup, NULL);
    assert_same_pose(t->a, t->b, "warm-up");
}

static void request_one(struct eval_request *r, int anim, double from, double to, double smooth)
{
    eval_request_init(r);
    r->count = 1;
    r->anims[0] = anim;
    r->frames[0] = to;
    r->smooth[0] = smooth;
    r->from = from;
    r->has_from = true;
    r->loop = true;
}

START_TEST(robot_07_evaluates_and_draws_as_robot)
{
    const char *samples = th_samples_dir();
    ck_assert_msg(samples != NULL, "SKELD_SAMPLES is not a directory (build the samples)");
    struct armature *old = th_load_path(samples, "robot.skf");
    struct armature *new = th_load_path(samples, "robot-0.7.skf");
    ck_assert_int_eq(old->layout, ARM_LAYOUT_BONES);
    ck_assert_int_eq(new->layout, ARM_LAYOUT_ARRAYS);
    ck_assert_uint_eq(old->bone_count, new->bone_count);
    ck_assert_uint_eq(old->anim_count, new->anim_count);
    ck_assert_uint_eq(old->vert_count, new->vert_count);
    ck_assert_uint_ge(old->anim_count, 2);
    struct twins t = {.a = pose_new(old), .b = pose_new(new)};
    ck_assert(t.a && t.b);
    image_init(&t.ia);
    image_init(&t.ib);
    render_opts_default(&t.o);
    t.o.width = t.o.height = 192;
    t.o.scale = (struct vec2){0.4, 0.4};
    t.o.position = (struct vec2){70, -182};
    struct eval_request r;
    char what[96];
    /* Every animation through its loop and a few frames past the wrap, after the warm-up. */
    for (uint32_t i = 0; i < old->anim_count; i++) {
        restart_both(&t, 30);
        request_one(&r, (int)i, 0, old->anims[i].last_frame + 3, 0);
        snprintf(what, sizeof what, "animation %u", i);
        play_both(&t, &r, what);
    }
    /* Smoothing: animation 0 for a while, then animation 1 eased in over 6 frames, so its
     * fields and the ones returning to rest (tint among them) interpolate from the last pose. */
    restart_both(&t, 0);
    request_one(&r, 0, 0, 11, 0);
    play_both(&t, &r, "before smoothing");
    request_one(&r, 1, 0, 15, 6);
    play_both(&t, &r, "smoothing");
    /* Two animations at once, the second with its own frames and smoothing. */
    restart_both(&t, 30);
    request_one(&r, 1, 0, 30, 0);
    r.count = 2;
    r.anims[1] = (int)old->anim_count - 2;
    r.frames[1] = 50;
    r.smooth[1] = 3;
    play_both(&t, &r, "blend");
    image_close(&t.ia);
    image_close(&t.ib);
    pose_free(t.a);
    pose_free(t.b);
    armature_free(old);
    armature_free(new);
}
END_TEST

/* ---- the lamp: what only 0.7 can say ----------------------------------------------- */

START_TEST(lamp_07_has_pivots_and_mimic_target)
{
    const char *samples = th_samples_dir();
    ck_assert_msg(samples != NULL, "SKELD_SAMPLES is not a directory (build the samples)");
    struct armature *arm = th_load_path(samples, "lamp-0.7.skf");
    ck_assert_int_eq(arm->layout, ARM_LAYOUT_ARRAYS);
    /* A textured quad and a mesh, each with all three pivots off the identity. */
    bool quad = false, mesh = false;
    for (uint32_t i = 0; i < arm->bone_count; i++) {
        const struct arm_bone *b = &arm->bones[i];
        bool all = b->pivot_rot != 0 && (b->pivot_scale.x != 1 || b->pivot_scale.y != 1) &&
                   (b->pivot_pos.x != 0 || b->pivot_pos.y != 0);
        if (!all || b->start.tex < 0)
            continue;
        if (b->vert_len)
            mesh = true;
        else
            quad = true;
    }
    ck_assert_msg(quad && mesh, "no quad (%d) or no mesh (%d) with pivot_pos, _rot and _scale",
                  quad, mesh);
    /* The family whose mimic_target is keyed, and the animation that keys it (the loader puts
     * a family's keys on its root, whichever chain bone the file keys). */
    int root = -1, anim = -1;
    for (uint32_t a = 0; a < arm->anim_count && anim < 0; a++) {
        const struct arm_anim *an = &arm->anims[a];
        for (uint32_t t = an->track_off; t < an->track_off + an->track_len; t++)
            if (arm->tracks[t].element == EL_MIMIC_TARGET) {
                root = arm->tracks[t].bone;
                anim = (int)a;
            }
    }
    ck_assert_msg(anim >= 0, "no animation keys MimicTarget");
    const struct arm_bone *fam = &arm->bones[root];
    ck_assert_int_ge(fam->ik_target, 0);
    ck_assert_uint_ge(fam->ik_len, 2);
    int last = arm->ik_chain[fam->ik_off + fam->ik_len - 1], target = fam->ik_target;
    int parent = arm->bones[last].parent;
    /* Step through the animation. With mimic_target on, the last bone has the target's
     * rotation; off, its parent's plus its own, as inheritance gives it. Both states must
     * occur, and somewhere the two rotations must be far apart, so the toggle shows. */
    struct pose *p = pose_new(arm);
    ck_assert_ptr_nonnull(p);
    struct eval_request r;
    request_one(&r, anim, 0, arm->anims[anim].last_frame, 0);
    eval_warmup(p, 30, NULL);
    int on = 0, off = 0;
    double apart = 0;
    for (long s = 0; s < eval_steps(&r); s++) {
        eval_step(p, &r, s, NULL);
        double own = p->local[last].rot + p->out[parent].rot;
        if (p->local[root].ik_mimic) {
            on++;
            ck_assert_msg(p->out[last].rot == p->out[target].rot,
                          "step %ld: mimic_target on, last bone at %.17g, target at %.17g", s,
                          p->out[last].rot, p->out[target].rot);
            apart = fmax(apart, fabs(p->out[target].rot - own));
        } else {
            off++;
            ck_assert_msg(p->out[last].rot == own,
                          "step %ld: mimic_target off, last bone at %.17g, inherited %.17g", s,
                          p->out[last].rot, own);
        }
    }
    ck_assert_msg(on > 0 && off > 0, "mimic_target on for %d steps, off for %d", on, off);
    ck_assert_msg(apart > 0.1, "mimic_target on moves the last bone by at most %g rad", apart);
    pose_free(p);
    armature_free(arm);
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
    tcase_add_test(tc, robot_07_evaluates_and_draws_as_robot);
    tcase_add_test(tc, lamp_07_has_pivots_and_mimic_target);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(conform_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return th_exit_status(failed, true);
}
