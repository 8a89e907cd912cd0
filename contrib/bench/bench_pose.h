/* How the render benchmarks pose a file: like the player's reference renders (30 warm-up
 * constructs, animation 0 played from frame 0 to 10, framed with --fit 0.9). Header-only,
 * for the benches that link the engine. */
#ifndef SKELD_BENCH_POSE_H
#define SKELD_BENCH_POSE_H

#include "engine/eval.h"
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

#endif
