/* How the render benchmarks pose a file: like the player's reference renders (30 warm-up
 * constructs, animation 0 played from frame 0 to 10, framed with --fit 0.9). Header-only,
 * for the benches that link the engine. */
#ifndef SKELD_BENCH_POSE_H
#define SKELD_BENCH_POSE_H

#include <stdint.h>
#include <stdio.h>

#include "engine/eval.h"
#include "engine/load.h"
#include "engine/render.h"

static inline void bench_pose_like_player(const struct armature *arm, struct pose *p,
                                          struct render_opts *opts)
{
    struct eval_request r;
    eval_request_init(&r);
    r.warmup = 30;
    if (arm->anim_count) {
        r.count = 1;
        r.frames[0] = arm->anims[0].last_frame < 10 ? arm->anims[0].last_frame : 10;
        r.from = 0;
        r.has_from = true;
    }
    struct bounds b = {0, 0, 0, 0, true};
    render_anim_bounds(arm, p, &r, opts, &b);
    render_fit(&b, 0.9, opts);
    pose_reset(p);
    eval_run(p, &r, NULL);
}

/* The file at path loaded and posed like the player, with opts as the daemon draws a frame it
 * sends as a PNG (straight alpha, as its scanlines) at width x height (0 x 0: the default).
 * 0, or 1 with why on stderr under prog's name; the caller frees *arm and *p. */
static inline int bench_load_posed(const char *prog, const char *path, uint32_t width,
                                   uint32_t height, struct armature **arm, struct pose **p,
                                   struct render_opts *opts)
{
    struct eng_error err;
    if (armature_load_file(path, NULL, arm, &err)) {
        fprintf(stderr, "%s: %s\n", prog, err.msg);
        return 1;
    }
    if (!(*p = pose_new(*arm))) {
        fprintf(stderr, "%s: %s: out of memory\n", prog, path);
        armature_free(*arm);
        return 1;
    }
    render_opts_default(opts);
    if (width && height) {
        opts->width = width;
        opts->height = height;
    }
    opts->straight_alpha = true;
    opts->png_rows = true;
    bench_pose_like_player(*arm, *p, opts);
    return 0;
}

#endif
