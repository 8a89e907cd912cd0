/* skeld conform FILE.skf VECTORS.json: runs every case of a golden-vectors file (format in
 * shared/conformance/README.md) on fresh instances and reports every differing field. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_args.h"
#include "engine/eval.h"
#include "engine/load.h"

struct tolerance {
    double pos, rot, scale, vert;
};

struct tally {
    int failures; /* differing fields in the current case */
};

static double num(json_t *v)
{
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static void report(const char *cname, size_t step, int bone, const char *field, double want,
                   double got, struct tally *t)
{
    if (t->failures++ < 20)
        printf("FAIL %s step %zu bone %d %s: expected %.9g, got %.9g (diff %.3g)\n", cname, step,
               bone, field, want, got, fabs(want - got));
}

static void check_num(const char *cname, size_t step, int bone, const char *field, double want,
                      double got, double tol, struct tally *t)
{
    if (!(fabs(want - got) <= tol))
        report(cname, step, bone, field, want, got, t);
}

static void check_vec(const char *cname, size_t step, int bone, const char *field, json_t *want,
                      struct vec2 got, double tol, struct tally *t)
{
    char name[48];
    snprintf(name, sizeof name, "%s.x", field);
    check_num(cname, step, bone, name, num(json_array_get(want, 0)), got.x, tol, t);
    snprintf(name, sizeof name, "%s.y", field);
    check_num(cname, step, bone, name, num(json_array_get(want, 1)), got.y, tol, t);
}

static void check_verts(const char *cname, size_t step, int b, json_t *want, const struct pose *p,
                        double tol, struct tally *t)
{
    const struct arm_bone *bone = &p->arm->bones[b];
    if (json_array_size(want) != bone->vert_len) {
        report(cname, step, b, "verts.count", (double)json_array_size(want), bone->vert_len, t);
        return;
    }
    for (uint32_t v = 0; v < bone->vert_len; v++) {
        char name[32];
        snprintf(name, sizeof name, "verts[%u]", v);
        check_vec(cname, step, b, name, json_array_get(want, v), p->verts[bone->vert_off + v], tol,
                  t);
    }
}

static void check_bone(const char *cname, size_t step, json_t *e, const struct pose *p,
                       const struct tolerance *tol, struct tally *t)
{
    json_int_t id = json_integer_value(json_object_get(e, "id"));
    if (id < 0 || id >= (json_int_t)p->arm->bone_count) {
        report(cname, step, (int)id, "id", (double)id, NAN, t);
        return;
    }
    int b = (int)id;
    const struct bone_out *o = &p->out[b];
    check_vec(cname, step, b, "pos", json_object_get(e, "pos"), o->pos, tol->pos, t);
    check_num(cname, step, b, "rot", num(json_object_get(e, "rot")), o->rot, tol->rot, t);
    check_vec(cname, step, b, "scale", json_object_get(e, "scale"), o->scale, tol->scale, t);
    json_t *h = json_object_get(e, "hidden");
    if (h && json_is_true(h) != o->hidden)
        report(cname, step, b, "hidden", json_is_true(h), o->hidden, t);
    json_t *z = json_object_get(e, "zindex");
    if (z && num(z) != o->zindex)
        report(cname, step, b, "zindex", num(z), o->zindex, t);
    json_t *tex = json_object_get(e, "tex");
    if (tex && strcmp(json_string_value(tex) ? json_string_value(tex) : "",
                      armature_tex_name(p->arm, o->tex)) != 0) {
        if (t->failures++ < 20)
            printf("FAIL %s step %zu bone %d tex: expected \"%s\", got \"%s\"\n", cname, step, b,
                   json_string_value(tex), armature_tex_name(p->arm, o->tex));
    }
    json_t *verts = json_object_get(e, "verts");
    if (verts)
        check_verts(cname, step, b, verts, p, tol->vert, t);
}

/* Reads a step's anims/frames/smooth into r; -1 if malformed. */
static int read_step(json_t *step, const struct armature *arm, struct eval_request *r)
{
    json_t *anims = json_object_get(step, "anims");
    json_t *frames = json_object_get(step, "frames");
    json_t *smooth = json_object_get(step, "smooth");
    size_t n = json_array_size(anims);
    eval_request_init(r);
    if (n > EVAL_MAX_ANIMS || json_array_size(frames) != n)
        return -1;
    for (size_t i = 0; i < n; i++) {
        r->anims[i] = (int)json_integer_value(json_array_get(anims, i));
        r->frames[i] = num(json_array_get(frames, i));
        r->smooth[i] = i < json_array_size(smooth) ? num(json_array_get(smooth, i)) : 0;
    }
    r->count = (unsigned)n;
    return eval_check(arm, r, NULL) ? -1 : 0;
}

static bool run_case(json_t *jc, struct pose *p, const struct tolerance *tol)
{
    const char *cname = json_string_value(json_object_get(jc, "name"));
    cname = cname ? cname : "?";
    struct tally t = {0};
    pose_reset(p);
    eval_warmup(p, (long)json_integer_value(json_object_get(jc, "warmup")), NULL);
    struct eval_request r;
    json_t *steps = json_object_get(jc, "steps");
    for (size_t s = 0; s < json_array_size(steps); s++) {
        json_t *step = json_array_get(steps, s);
        if (read_step(step, p->arm, &r)) {
            printf("FAIL %s step %zu: malformed step or animation out of range\n", cname, s);
            return false;
        }
        eval_run(p, &r, NULL);
        json_t *expect = json_object_get(step, "expect");
        for (size_t e = 0; e < json_array_size(expect); e++)
            check_bone(cname, s, json_array_get(expect, e), p, tol, &t);
    }
    if (t.failures)
        printf("case %s: %d differing fields\n", cname, t.failures);
    return t.failures == 0;
}

static int run_frame_case(json_t *fc, const struct armature *arm)
{
    json_int_t a = json_integer_value(json_object_get(fc, "anim"));
    if (a < 0 || a >= (json_int_t)arm->anim_count)
        return 0;
    bool rev = json_is_true(json_object_get(fc, "reverse"));
    bool loop = json_is_true(json_object_get(fc, "loop"));
    double want = num(json_object_get(fc, "expect")), got;
    json_t *ms = json_object_get(fc, "time_ms");
    if (ms)
        got = anim_time_frame(arm, (int)a, num(ms), rev, loop);
    else
        got = anim_format_frame(arm, (int)a, num(json_object_get(fc, "frame_in")), rev, loop);
    if (got == want)
        return 1;
    printf("FAIL frame case anim %d %s=%g reverse=%d loop=%d: expected %g, got %g\n", (int)a,
           ms ? "time_ms" : "frame_in", ms ? num(ms) : num(json_object_get(fc, "frame_in")), rev,
           loop, want, got);
    return 0;
}

static void read_tolerance(json_t *root, struct tolerance *tol)
{
    json_t *t = json_object_get(root, "tolerance");
    *tol = (struct tolerance){0.01, 0.0001, 0.0001, 0.01};
    if (json_is_number(json_object_get(t, "pos")))
        tol->pos = num(json_object_get(t, "pos"));
    if (json_is_number(json_object_get(t, "rot")))
        tol->rot = num(json_object_get(t, "rot"));
    if (json_is_number(json_object_get(t, "scale")))
        tol->scale = num(json_object_get(t, "scale"));
    if (json_is_number(json_object_get(t, "vert")))
        tol->vert = num(json_object_get(t, "vert"));
}

static int run_vectors(json_t *root, struct pose *p)
{
    struct tolerance tol;
    read_tolerance(root, &tol);
    int passed = 0, failed = 0, fpassed = 0, ffailed = 0;
    json_t *cases = json_object_get(root, "cases");
    for (size_t i = 0; i < json_array_size(cases); i++)
        run_case(json_array_get(cases, i), p, &tol) ? passed++ : failed++;
    json_t *fcs = json_object_get(root, "frame_cases");
    for (size_t i = 0; i < json_array_size(fcs); i++)
        run_frame_case(json_array_get(fcs, i), p->arm) ? fpassed++ : ffailed++;
    printf("cases: %d passed, %d failed; frame cases: %d passed, %d failed\n", passed, failed,
           fpassed, ffailed);
    printf("%d passed, %d failed\n", passed + fpassed, failed + ffailed);
    return failed + ffailed ? 1 : 0;
}

static const struct cli_command conform_cmd = {
    .name = "conform",
    .args = "FILE.skf VECTORS.json",
    .synopsis = "FILE.skf VECTORS.json",
    .about = "Runs every case of a golden-vectors file on fresh instances, prints every\n"
             "differing field and ends with \"N passed, M failed\"; exits 0 only if all pass.\n",
    .flags = SKP_CLI_COMMON_FLAGS,
    .nargs = 2};

int cli_conform(int argc, char **argv)
{
    struct skp_cli_args args;
    bool done;
    int rc = cli_parse_args(&conform_cmd, argc, argv, &args, &done);
    if (rc || done)
        return rc;
    const char *skf = args.arg[0], *vectors = args.arg[1];
    json_error_t jerr;
    json_t *root = json_load_file(vectors, 0, &jerr);
    if (!root || !json_is_array(json_object_get(root, "cases"))) {
        fprintf(stderr, "skeld conform: %s: %s\n", vectors,
                root ? "no \"cases\" array" : jerr.text);
        json_decref(root);
        return SKP_EXIT_FAIL;
    }
    struct armature *arm;
    if ((rc = cli_load("conform", skf, true, &arm, NULL))) {
        json_decref(root);
        return rc;
    }
    struct pose *p = pose_new(arm);
    rc = p ? run_vectors(root, p) : 1;
    pose_free(p);
    armature_free(arm);
    json_decref(root);
    return rc;
}
