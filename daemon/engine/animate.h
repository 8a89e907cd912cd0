/* Animate: keyframes -> local bone fields of a pose (SPEC.md section 2). */
#ifndef SKELD_ENGINE_ANIMATE_H
#define SKELD_ENGINE_ANIMATE_H

#include "pose.h"

/* One playing animation: which, at what (already formatted) frame, with what smoothing. */
struct anim_play {
    int anim;
    double frame;
    double smooth;
};

/* The runtime's interpolate(): bezier easing from a to b with handles h1, h2 (x and y in
 * 0..1), Newton-solved; snaps to a when both handles have y == 999. Pure. */
double anim_interpolate(double current, double max, double a, double b, struct vec2 h1,
                        struct vec2 h2);

/* The easing progress (0..1) at current/max of a keyframe gap with handles h1, h2: the
 * bezier solved by the runtime's five Newton steps. max > 0 and 0 <= current < max. Pure. */
double anim_ease(double current, double max, struct vec2 h1, struct vec2 h2);

/* Fills arm->ease for every keyframe gap of whole frames (an exact cache of anim_ease, so
 * evaluation skips the Newton steps). Loader only. Returns 0 or -1 (no memory). */
int anim_plan_ease(struct armature *arm);

/* Applies the playing animations (in order; later ones win) to p->local, then returns every
 * field no playing animation keys to its init_ value. Animation indices must be valid
 * (callers validate requests). Allocates nothing. */
void animate(struct pose *p, const struct anim_play *plays, uint32_t count);

/* FormatFrame: loop (fractional remainder), reverse, then round half up. */
double anim_format_frame(const struct armature *arm, int anim, double frame, bool reverse,
                         bool loop);

/* The fractional frame ms milliseconds into the animation, at its fps (TimeFrame's first half). */
double anim_time_to_frame(const struct armature *arm, int anim, double ms);

/* TimeFrame: anim_time_to_frame, then FormatFrame. */
double anim_time_frame(const struct armature *arm, int anim, double ms, bool reverse, bool loop);

#endif
