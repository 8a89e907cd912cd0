/* Fill benchmark: checks the weights of the drawing budget (render_opts.max_fill) on this
 * machine.
 *
 *   bench-fill [--renders N] FILE.skf [FILE.skf ...]
 *
 * For each file, framed at 512x512 as bench-render frames it (fit 0.9, first animation, the
 * rest pose when it has none): the picture's fill (pixels its triangles cover, a pixel a row
 * they span, RENDER_SETUP_FILL a triangle), the median time of a render over batches, and so
 * the nanoseconds a pixel of fill takes. The weights are right when that figure is about the
 * same for a file of large layers and one of tiny triangles (`gen-samples --stress` writes
 * both). Real files cover a fraction of the picture, so their figure also holds what every
 * picture costs besides (clearing, resolving), which the budget counts apart. For files with
 * animations, also the nanoseconds of a bone-step (one bone's Animate + Construct), and at the end
 * how many pixels of fill a bone-step is worth, from the cheapest to the dearest over the
 * files: request.c counts 4 (FILL_PER_BONE_STEP), which must not exceed the cheapest. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "engine/eval.h"
#include "engine/load.h"
#include "engine/render.h"

#define BATCH 10
#define STEP_BATCH 200

/* Frames the first animation's bounds (or the rest pose's) into 0.9 of the picture, and
 * leaves p at its frame 10 or its last. */
static void frame_file(const struct armature *arm, struct pose *p, struct render_opts *opts,
                       struct eval_request *r)
{
    eval_request_init(r);
    if (arm->anim_count) {
        r->count = 1;
        r->frames[0] = arm->anims[0].last_frame < 10 ? arm->anims[0].last_frame : 10;
        r->from = 0;
        r->has_from = true;
    }
    struct bounds b = {0, 0, 0, 0, true};
    render_anim_bounds(arm, p, r, opts, &b);
    render_fit(&b, 0.9, opts);
    pose_reset(p);
    eval_run(p, r, NULL);
}

/* Median ns of one bone-step: the first animation played from frame 0 to its last, again
 * and again. */
static double bone_step_ns(const struct armature *arm, struct pose *p, int batches)
{
    struct eval_request r;
    eval_request_init(&r);
    r.count = 1;
    r.frames[0] = arm->anims[0].last_frame;
    r.from = 0;
    r.has_from = true;
    double steps = (double)eval_steps(&r) * STEP_BATCH, *t = calloc((size_t)batches, sizeof *t);
    if (!t)
        return 0;
    for (int b = 0; b < batches; b++) {
        double t0 = bench_now_us();
        for (int i = 0; i < STEP_BATCH; i++) {
            pose_reset(p);
            eval_run(p, &r, NULL);
        }
        t[b] = (bench_now_us() - t0) * 1000.0 / (steps * arm->bone_count);
    }
    double ns = bench_quantile(t, (size_t)batches, 0.5);
    free(t);
    return ns;
}

struct figures {
    double fill_ns, step_ns; /* 0: none measured */
    bool mostly_fill;        /* the fill is the picture's area or more: little else to time */
};

static int bench_file(const char *path, int renders, struct figures *f)
{
    struct armature *arm;
    struct eng_error err;
    if (armature_load_file(path, NULL, &arm, &err)) {
        fprintf(stderr, "bench-fill: %s\n", err.msg);
        return 1;
    }
    struct pose *p = pose_new(arm);
    struct render_opts opts;
    render_opts_default(&opts);
    struct eval_request r;
    frame_file(arm, p, &opts, &r);
    struct image img;
    image_init(&img);
    int batches = renders / BATCH > 0 ? renders / BATCH : 1, rc = 0;
    double *t = calloc((size_t)batches, sizeof *t);
    if (!p || !t || render(arm, p, &opts, &img)) { /* sizes the scratch */
        fprintf(stderr, "bench-fill: %s: cannot render\n", path);
        rc = 1;
    }
    for (int b = 0; !rc && b < batches; b++) {
        double t0 = bench_now_us();
        for (int i = 0; i < BATCH; i++)
            render(arm, p, &opts, &img);
        t[b] = (bench_now_us() - t0) / BATCH;
    }
    if (!rc) {
        double us = bench_quantile(t, (size_t)batches, 0.5);
        f->fill_ns = us * 1000.0 / (double)img.fill;
        f->mostly_fill = img.fill >= 512 * 512;
        printf("%s\n  fill %llu pixels (%.2f times the 512x512 picture), %.3f ms a render: "
               "%.1f ns a pixel of fill (medians of %d batches of %d)\n",
               path, (unsigned long long)img.fill, (double)img.fill / (512.0 * 512.0), us / 1000.0,
               f->fill_ns, batches, BATCH);
        f->step_ns = arm->anim_count && arm->bone_count ? bone_step_ns(arm, p, batches) : 0;
        if (f->step_ns > 0)
            printf("  a bone-step (Animate+Construct of one bone): %.1f ns\n", f->step_ns);
    }
    free(t);
    image_close(&img);
    pose_free(p);
    armature_free(arm);
    return rc;
}

int main(int argc, char **argv)
{
    int renders = 200, rc = 0, files = 0;
    double fill_ns[64], step_ns[64];
    int fills = 0, steps = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--renders") && i + 1 < argc) {
            renders = atoi(argv[++i]);
            if (renders < 1) {
                fprintf(stderr, "bench-fill: --renders must be at least 1\n");
                return 2;
            }
            continue;
        }
        struct figures f = {0, 0, false};
        files++;
        if (bench_file(argv[i], renders, &f)) {
            rc = 1;
            continue;
        }
        if (f.mostly_fill && fills < 64)
            fill_ns[fills++] = f.fill_ns;
        if (f.step_ns > 0 && steps < 64)
            step_ns[steps++] = f.step_ns;
    }
    if (!files) {
        fprintf(stderr, "usage: bench-fill [--renders N] FILE.skf...\n");
        return 2;
    }
    if (fills > 1) {
        double lo = fill_ns[0], hi = fill_ns[0];
        for (int i = 1; i < fills; i++) {
            lo = fill_ns[i] < lo ? fill_ns[i] : lo;
            hi = fill_ns[i] > hi ? fill_ns[i] : hi;
        }
        printf("a pixel of fill: %.1f to %.1f ns over the files that cover the picture once or "
               "more, %.2fx apart (1.0: the weight of a triangle, %u pixels, is right)\n",
               lo, hi, hi / lo, RENDER_SETUP_FILL);
    }
    if (fills && steps) {
        /* The budget holds for every armature, so the cheapest bone-step is what bounds it. */
        double fill = bench_quantile(fill_ns, (size_t)fills, 0.5), lo = step_ns[0], hi = lo;
        for (int i = 1; i < steps; i++) {
            lo = step_ns[i] < lo ? step_ns[i] : lo;
            hi = step_ns[i] > hi ? step_ns[i] : hi;
        }
        printf("a bone-step is worth %.1f to %.1f pixels of fill (%.1f to %.1f ns over the "
               "median pixel's %.1f; the request budget counts 4, at most the cheapest)\n",
               lo / fill, hi / fill, lo, hi, fill);
    }
    return rc;
}
