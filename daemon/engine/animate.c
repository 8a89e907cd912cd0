/* Animate: keyframes -> local fields (SPEC.md section 2, conformance README "Keyframes").
 *
 * The reference runtime walks each playing animation's keyframe list up to the frame and lets
 * every keyframe act whose next keyframe does not lie strictly before the frame. Keyframes of
 * different bones and elements never touch the same field, so walking each (bone, element)
 * track on its own in file order gives the same result; the loader grouped the tracks, and a
 * binary search finds the first keyframe that can act. */
#include "animate.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static double bezier(double t, double p1, double p2)
{
    double u = 1.0 - t;
    return 3.0 * u * u * t * p1 + 3.0 * u * t * t * p2 + t * t * t;
}

static double bezier_slope(double t, double p1, double p2)
{
    double u = 1.0 - t;
    return 3.0 * u * u * p1 + 6.0 * u * t * (p2 - p1) + 3.0 * t * t * (1.0 - p2);
}

double anim_ease(double current, double max, struct vec2 h1, struct vec2 h2)
{
    /* Solve x(t) = current / max with the runtime's five Newton steps; the fixed step count
     * is part of the result (a linear key is only approximately linear). */
    double x0 = current / max;
    double t = x0;
    for (int i = 0; i < 5; i++) {
        double dx = bezier_slope(t, h1.x, h2.x);
        if (fabs(dx) < 1e-5)
            break;
        double next = t - (bezier(t, h1.x, h2.x) - x0) / dx;
        next = next < 0.0 ? 0.0 : (next > 1.0 ? 1.0 : next);
        /* A step that leaves t unchanged would repeat identically: the result is final. */
        if (next == t)
            break;
        t = next;
    }
    return bezier(t, h1.y, h2.y);
}

static bool is_snap(struct vec2 h1, struct vec2 h2)
{
    return h1.y == 999.0 && h2.y == 999.0;
}

double anim_interpolate(double current, double max, double a, double b, struct vec2 h1,
                        struct vec2 h2)
{
    if (is_snap(h1, h2))
        return a;
    if (max == 0.0 || current >= max)
        return b;
    return a + (b - a) * anim_ease(current, max, h1, h2);
}

int anim_plan_ease(struct armature *arm)
{
    uint64_t total = 0;
    for (uint32_t k = 0; k < arm->keyframe_count; k++)
        arm->keyframes[k].ease_off = NO_EASE;
    for (uint32_t t = 0; t < arm->track_count; t++) {
        struct arm_keyframe *kfs = arm->keyframes + arm->tracks[t].kf_off;
        for (uint32_t j = 0; j < arm->tracks[t].kf_len; j++) {
            const struct arm_keyframe *n = &kfs[kfs[j].next];
            double span = n->frame - kfs[j].frame;
            if (kfs[j].next == j || span <= 0 || span > EASE_MAX_SPAN || span != floor(span) ||
                kfs[j].frame != floor(kfs[j].frame) || total + span > EASE_MAX_TOTAL)
                continue;
            kfs[j].ease_off = (uint32_t)total;
            total += (uint64_t)span;
        }
    }
    arm->ease = malloc((total ? total : 1) * sizeof *arm->ease);
    if (!arm->ease)
        return -1;
    arm->ease_count = (uint32_t)total;
    for (uint32_t t = 0; t < arm->track_count; t++) {
        const struct arm_keyframe *kfs = arm->keyframes + arm->tracks[t].kf_off;
        for (uint32_t j = 0; j < arm->tracks[t].kf_len; j++) {
            if (kfs[j].ease_off == NO_EASE)
                continue;
            const struct arm_keyframe *n = &kfs[kfs[j].next];
            double span = n->frame - kfs[j].frame;
            for (uint32_t c = 0; c < (uint32_t)span; c++)
                arm->ease[kfs[j].ease_off + c] = anim_ease(c, span, n->h1, n->h2);
        }
    }
    return 0;
}

static const struct vec2 no_handle = {0.0, 0.0};

/* Where each float element lives in struct bone_fields; 0 marks a discrete element. */
static const size_t float_offset[EL_COUNT] = {
    [EL_POS_X] = offsetof(struct bone_fields, pos.x),
    [EL_POS_Y] = offsetof(struct bone_fields, pos.y),
    [EL_ROT] = offsetof(struct bone_fields, rot),
    [EL_SCALE_X] = offsetof(struct bone_fields, scale.x),
    [EL_SCALE_Y] = offsetof(struct bone_fields, scale.y),
    [EL_TINT_R] = offsetof(struct bone_fields, tint[0]),
    [EL_TINT_G] = offsetof(struct bone_fields, tint[1]),
    [EL_TINT_B] = offsetof(struct bone_fields, tint[2]),
    [EL_TINT_A] = offsetof(struct bone_fields, tint[3]),
};

/* The elements float_offset has. */
#define FLOAT_ELEMENTS                                                                             \
    ((1u << EL_POS_X) | (1u << EL_POS_Y) | (1u << EL_ROT) | (1u << EL_SCALE_X) |                   \
     (1u << EL_SCALE_Y) | (1u << EL_TINT_R) | (1u << EL_TINT_G) | (1u << EL_TINT_B) |              \
     (1u << EL_TINT_A))

static double *float_field(struct bone_fields *f, int element)
{
    /* pos.x sits at offset 0, so the table cannot use 0 as "none" for it. */
    if (element != EL_POS_X && float_offset[element] == 0)
        return NULL;
    return (double *)((char *)f + float_offset[element]);
}

static void apply_discrete(struct bone_fields *f, int element, const struct arm_keyframe *kf)
{
    switch (element) {
    case EL_HIDDEN: f->hidden = kf->value == 1.0; break;
    case EL_ZINDEX: f->zindex = kf->ivalue; break;
    case EL_TEXTURE: f->tex = kf->ivalue; break;
    case EL_IK_CONSTRAINT: f->ik_constraint = (uint8_t)kf->ivalue; break;
    case EL_IK_MODE: f->ik_mode = (uint8_t)kf->ivalue; break;
    case EL_MIMIC_TARGET: f->ik_mimic = kf->value == 1.0; break;
    default: break;
    }
}

static void apply_keyframe(const double *ease, struct bone_fields *f, int element,
                           const struct arm_keyframe *kf, const struct arm_keyframe *next,
                           double frame, double smooth)
{
    double *field = float_field(f, element);
    if (!field) {
        apply_discrete(f, element, kf);
        return;
    }
    double current = frame - kf->frame, span = next->frame - kf->frame, result;
    if (kf->ease_off != NO_EASE && current >= 0 && current < span && current == floor(current) &&
        !is_snap(next->h1, next->h2))
        result = kf->value + (next->value - kf->value) * ease[kf->ease_off + (uint32_t)current];
    else
        result = anim_interpolate(current, span, kf->value, next->value, next->h1, next->h2);
    *field = anim_interpolate(current, smooth, *field, result, no_handle, no_handle);
}

/* A keyframe acts until the frame of its next keyframe; the last one acts for ever. */
static double reach(const struct arm_keyframe *kfs, uint32_t j)
{
    return kfs[j].next == j ? INFINITY : kfs[kfs[j].next].frame;
}

static uint32_t first_candidate(const struct arm_track *t, const struct arm_keyframe *kfs,
                                double frame)
{
    if (!t->monotone)
        return 0;
    uint32_t lo = 0, hi = t->kf_len;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (reach(kfs, mid) < frame)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void play_track(struct pose *p, const struct arm_track *t, double frame, double smooth)
{
    const struct arm_keyframe *kfs = p->arm->keyframes + t->kf_off;
    struct bone_fields *f = &p->local[t->bone];
    for (uint32_t j = first_candidate(t, kfs, frame); j < t->kf_len; j++) {
        if (kfs[j].frame > frame)
            break;
        if (reach(kfs, j) < frame)
            continue;
        apply_keyframe(p->arm->ease, f, t->element, &kfs[j], &kfs[kfs[j].next], frame, smooth);
    }
}

#define DISCRETE_ELEMENTS                                                                          \
    ((1u << EL_HIDDEN) | (1u << EL_ZINDEX) | (1u << EL_TEXTURE) | (1u << EL_IK_CONSTRAINT) |       \
     (1u << EL_IK_MODE) | (1u << EL_MIMIC_TARGET))

static void reset_discrete(struct bone_fields *f, const struct bone_fields *init, unsigned keyed)
{
    if (!(keyed & DISCRETE_ELEMENTS)) { /* the usual case: no test per element */
        f->hidden = init->hidden;
        f->zindex = init->zindex;
        f->tex = init->tex;
        f->ik_constraint = init->ik_constraint;
        f->ik_mode = init->ik_mode;
        f->ik_mimic = init->ik_mimic;
        return;
    }
    if (!(keyed & (1u << EL_HIDDEN)))
        f->hidden = init->hidden;
    if (!(keyed & (1u << EL_ZINDEX)))
        f->zindex = init->zindex;
    if (!(keyed & (1u << EL_TEXTURE)))
        f->tex = init->tex;
    if (!(keyed & (1u << EL_IK_CONSTRAINT)))
        f->ik_constraint = init->ik_constraint;
    if (!(keyed & (1u << EL_IK_MODE)))
        f->ik_mode = init->ik_mode;
    if (!(keyed & (1u << EL_MIMIC_TARGET)))
        f->ik_mimic = init->ik_mimic;
}

/* Unkeyed fields go back to init_ values, smoothed with the first animation's frame. */
static void reset_unkeyed(struct pose *p, uint32_t b, double frame, double smooth, bool at_once)
{
    const struct bone_fields *init = &p->arm->bones[b].init;
    struct bone_fields *f = &p->local[b];
    unsigned keyed = p->keyed[b];
    if (!keyed && at_once) {
        *f = *init;
        return;
    }
    /* Only the unkeyed float elements, one set bit at a time. */
    for (unsigned todo = FLOAT_ELEMENTS & ~keyed; todo; todo &= todo - 1) {
        size_t at = float_offset[__builtin_ctz(todo)];
        double *field = (double *)(void *)((char *)f + at);
        double target = *(const double *)(const void *)((const char *)init + at);
        *field = at_once ? target
                         : anim_interpolate(frame, smooth, *field, target, no_handle, no_handle);
    }
    reset_discrete(f, init, keyed);
}

void animate(struct pose *p, const struct anim_play *plays, uint32_t count)
{
    const struct armature *arm = p->arm;
    memset(p->keyed, 0, arm->bone_count * sizeof *p->keyed);
    for (uint32_t a = 0; a < count; a++) {
        const struct arm_anim *anim = &arm->anims[plays[a].anim];
        for (uint32_t i = 0; i < anim->track_len; i++) {
            const struct arm_track *t = &arm->tracks[anim->track_off + i];
            p->keyed[t->bone] |= (uint16_t)(1u << t->element);
            play_track(p, t, plays[a].frame, plays[a].smooth);
        }
    }
    /* Unkeyed fields return to rest with the first animation's frame and smoothing. */
    double frame = count ? plays[0].frame : 0.0;
    double smooth = count ? plays[0].smooth : 0.0;
    /* interpolate() returns the target outright in this case; skip the call. */
    bool at_once = smooth == 0.0 || frame >= smooth;
    for (uint32_t b = 0; b < arm->bone_count; b++)
        reset_unkeyed(p, b, frame, smooth, at_once);
}

double anim_format_frame(const struct armature *arm, int anim, double frame, bool reverse,
                         bool loop)
{
    double last = arm->anims[anim].last_frame;
    if (loop)
        frame = fmod(frame, last + 1.0);
    if (reverse)
        frame = last - frame;
    return floor(frame + 0.5);
}

double anim_time_to_frame(const struct armature *arm, int anim, double ms)
{
    /* SPEC.md: "the fractional frame ms / 1000 * fps" (elapsed / (1 / fps) differs in the
     * last bit, which decides halves: 940 ms at 25 fps is frame 23.5, rounded up to 24) */
    return ms / 1000.0 * arm->anims[anim].fps;
}

double anim_time_frame(const struct armature *arm, int anim, double ms, bool reverse, bool loop)
{
    return anim_format_frame(arm, anim, anim_time_to_frame(arm, anim, ms), reverse, loop);
}
