/* Animate (SPEC.md section 2 "Animate", "Frames and time"; conformance README "Keyframes"):
 * the bezier interpolate() and its Newton solve, keyframe lookup edges, smoothing, unkeyed
 * fields returning to init_ values, several animations at once, the discrete elements,
 * next_kf derivation, FormatFrame/TimeFrame and eval requests.
 *
 * Expected numbers are worked out here from the SPEC's formulas: ref_ease() below is a small,
 * independent transcription of the SPEC's interpolate() (cubic bezier through 0, p1, p2, 1;
 * five Newton-Raphson steps from t = current/max, stop when |dx| < 1e-5, clamp t to [0, 1]),
 * and the arithmetic of each case is written out in the test. Nothing is copied from the
 * engine's output. Armatures are tiny JSON texts written with single quotes for readability
 * (load_q turns them into double quotes). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/animate.h"
#include "engine/eval.h"
#include "engine/load.h"
#include "testhelp.h"

#define TOL 1e-9 /* our arithmetic and the engine's differ only by rounding */
#define EXACT 1e-12

static const struct vec2 LIN = {0.0, 0.0};                       /* "linear" handles */
static const struct vec2 EIO1 = {0.42, 0.0}, EIO2 = {0.58, 1.0}; /* ease-in-out */
static const struct vec2 SNAP1 = {0.0, 999.0}, SNAP2 = {1.0, 999.0};
static const struct vec2 PHYS1 = {0.3, 0.3}, PHYS2 = {0.6, 0.6}; /* physics damping handles */

/* ---- the SPEC's interpolate(), written out independently ------------------------------ */

/* 1-D cubic bezier through 0, p1, p2, 1: 3(1-t)^2 t p1 + 3(1-t) t^2 p2 + t^3. */
static double ref_bezier(double t, double p1, double p2)
{
    double u = 1.0 - t;
    return 3.0 * u * u * t * p1 + 3.0 * u * t * t * p2 + t * t * t;
}

/* Its derivative, term by term: d/dt[3 p1 t (1-t)^2] + d/dt[3 p2 t^2 (1-t)] + d/dt[t^3]. */
static double ref_bezier_dt(double t, double p1, double p2)
{
    double u = 1.0 - t;
    return 3.0 * p1 * (u * u - 2.0 * t * u) + 3.0 * p2 * (2.0 * t * u - t * t) + 3.0 * t * t;
}

static double ref_ease(double current, double max, struct vec2 h1, struct vec2 h2)
{
    double x = current / max, t = x;
    for (int step = 0; step < 5; step++) {
        double dx = ref_bezier_dt(t, h1.x, h2.x);
        if (fabs(dx) < 1e-5)
            break;
        t -= (ref_bezier(t, h1.x, h2.x) - x) / dx;
        if (t < 0.0)
            t = 0.0;
        if (t > 1.0)
            t = 1.0;
    }
    return ref_bezier(t, h1.y, h2.y);
}

/* Linear-handle easing, the default of every keyframe in these armatures. */
static double E(double current, double max)
{
    return ref_ease(current, max, LIN, LIN);
}

/* ---- fixtures ----------------------------------------------------------------------- */

/* Loads a JSON text written with ' for " (no armature here needs a real apostrophe). */
static struct armature *load_q(const char *q)
{
    char *json = strdup(q);
    ck_assert_ptr_nonnull(json);
    th_dequote(json);
    struct armature *arm = NULL;
    struct eng_error err = {0};
    int rc = th_load(json, 0, &arm, &err);
    free(json);
    ck_assert_msg(rc == 0, "armature did not load: %s", err.msg);
    ck_assert_ptr_nonnull(arm);
    return arm;
}

static void play1(struct pose *p, int anim, double frame, double smooth)
{
    struct anim_play pl = {anim, frame, smooth};
    animate(p, &pl, 1);
}

static void play2(struct pose *p, int a0, double f0, double s0, int a1, double f1, double s1)
{
    struct anim_play pl[2] = {{a0, f0, s0}, {a1, f1, s1}};
    animate(p, pl, 2);
}

static const char *tex_of(const struct pose *p, uint32_t b)
{
    return armature_tex_name(p->arm, p->local[b].tex);
}

/* ====================================================================================== */
/* interpolate() and the bezier solve                                                      */

START_TEST(linear_handles_are_newton_approximated)
{
    /* Handles (0,0),(0,0) make x(t) = y(t) = t^3: interpolate solves t^3 = x by Newton,
     * t' = t - (t^3 - x) / (3 t^2), and returns t^3 after five steps. For x = 0.1:
     *   t0 = 0.1: t0 - (0.001 - 0.1) / 0.03 = 3.4, clamped to t1 = 1
     *   t2 = 1 - (1 - 0.1) / 3 = 0.7
     *   t3 = 0.7 - (0.343 - 0.1) / 1.47, then t4, t5 the same way. */
    double t = 1.0;
    t = t - (t * t * t - 0.1) / (3 * t * t); /* t2 */
    ck_assert_double_eq_tol(t, 0.7, EXACT);
    for (int i = 0; i < 3; i++) /* t3, t4, t5 */
        t = t - (t * t * t - 0.1) / (3 * t * t);
    double expect = t * t * t;
    double got = anim_interpolate(1, 10, 0.0, 1.0, LIN, LIN);
    ck_assert_double_eq_tol(got, expect, EXACT);
    ck_assert_double_eq_tol(got, ref_ease(1, 10, LIN, LIN), EXACT);
    /* Five steps do not reach the exact 0.1: "linear" is only approximately linear. */
    ck_assert_double_gt(fabs(got - 0.1), 5e-5);
    ck_assert_double_lt(fabs(got - 0.1), 1e-3);

    /* x = 0.5 converges closely: 100 + 100 * ~0.5. */
    got = anim_interpolate(5, 10, 100.0, 200.0, LIN, LIN);
    ck_assert_double_eq_tol(got, 100.0 + 100.0 * ref_ease(5, 10, LIN, LIN), EXACT);
    ck_assert_double_eq_tol(got, 150.0, 1e-4);
    /* a > b works the same way: 8 + (2 - 8) * ease. */
    got = anim_interpolate(3, 4, 8.0, 2.0, LIN, LIN);
    ck_assert_double_eq_tol(got, 8.0 - 6.0 * ref_ease(3, 4, LIN, LIN), EXACT);
}
END_TEST

START_TEST(ease_in_out_handles)
{
    /* h1 = (0.42, 0), h2 = (0.58, 1): at t = 0.5, x = 3*.25*.5*.42 + 3*.5*.25*.58 + .125
     * = .1575 + .2175 + .125 = 0.5 exactly, so Newton stays at t = 0.5, and
     * y = 0 + 3*.5*.25*1 + .125 = 0.5. */
    ck_assert_double_eq_tol(anim_interpolate(5, 10, 0.0, 10.0, EIO1, EIO2), 5.0, EXACT);
    ck_assert_double_eq_tol(anim_ease(5, 10, EIO1, EIO2), 0.5, EXACT);
    /* Slow start, fast middle: below the straight line early, above it late. */
    double early = anim_ease(2, 10, EIO1, EIO2), late = anim_ease(8, 10, EIO1, EIO2);
    ck_assert_double_eq_tol(early, ref_ease(2, 10, EIO1, EIO2), EXACT);
    ck_assert_double_eq_tol(late, ref_ease(8, 10, EIO1, EIO2), EXACT);
    ck_assert_double_lt(early, 0.2);
    ck_assert_double_gt(late, 0.8);
    /* p2 = 1 - p1 on both axes: the curve is point-symmetric about (0.5, 0.5). */
    ck_assert_double_eq_tol(early + late, 1.0, 1e-9);
    /* Fractional current. */
    ck_assert_double_eq_tol(anim_interpolate(2.5, 10, -4.0, 6.0, EIO1, EIO2),
                            -4.0 + 10.0 * ref_ease(2.5, 10, EIO1, EIO2), EXACT);
}
END_TEST

START_TEST(physics_handles)
{
    /* (0.3, 0.3), (0.6, 0.6): x(t) == y(t), so the result is x(t) after Newton, ~current/max.
     * At 2/4, x(0.5) = 3*.25*.5*.3 + 3*.5*.25*.6 + .125 = 0.4625: Newton has work to do. */
    ck_assert_double_eq_tol(ref_bezier(0.5, 0.3, 0.6), 0.4625, EXACT);
    ck_assert_double_eq_tol(anim_ease(2, 4, PHYS1, PHYS2), ref_ease(2, 4, PHYS1, PHYS2), EXACT);
    ck_assert_double_eq_tol(anim_ease(2, 4, PHYS1, PHYS2), 0.5, 1e-6);
    ck_assert_double_eq_tol(anim_ease(2, 8, PHYS1, PHYS2), 0.25, 1e-6);
}
END_TEST

START_TEST(snap_returns_start_value)
{
    /* Both handles y == 999: hold a, whatever current and max are. */
    ck_assert_double_eq(anim_interpolate(5, 10, 3.0, 7.0, SNAP1, SNAP2), 3.0);
    ck_assert_double_eq(anim_interpolate(0, 10, 3.0, 7.0, SNAP1, SNAP2), 3.0);
    /* The snap test comes before the "current >= max" one. */
    ck_assert_double_eq(anim_interpolate(10, 10, 3.0, 7.0, SNAP1, SNAP2), 3.0);
    ck_assert_double_eq(anim_interpolate(25, 10, 3.0, 7.0, SNAP1, SNAP2), 3.0);
    ck_assert_double_eq(anim_interpolate(4, 0, 3.0, 7.0, SNAP1, SNAP2), 3.0);
    /* One handle at 999 is not a snap: past the end that gives b. */
    ck_assert_double_eq(anim_interpolate(10, 10, 3.0, 7.0, SNAP1, LIN), 7.0);
    ck_assert_double_eq(anim_interpolate(10, 10, 3.0, 7.0, LIN, SNAP2), 7.0);
}
END_TEST

START_TEST(end_value_when_max_zero_or_past)
{
    ck_assert_double_eq(anim_interpolate(0, 0, 3.0, 7.0, LIN, LIN), 7.0); /* max == 0 */
    ck_assert_double_eq(anim_interpolate(5, 0, 3.0, 7.0, EIO1, EIO2), 7.0);
    ck_assert_double_eq(anim_interpolate(10, 10, 3.0, 7.0, LIN, LIN), 7.0); /* current == max */
    ck_assert_double_eq(anim_interpolate(11.5, 10, 3.0, 7.0, EIO1, EIO2), 7.0);
    /* current == 0 starts at a: t = 0 gives y = 0 for any handles. */
    ck_assert_double_eq_tol(anim_interpolate(0, 10, 3.0, 7.0, EIO1, EIO2), 3.0, EXACT);
    ck_assert_double_eq_tol(anim_interpolate(0, 10, 3.0, 7.0, PHYS1, PHYS2), 3.0, EXACT);
}
END_TEST

START_TEST(ease_matches_reference_on_a_grid)
{
    const struct vec2 hs[][2] = {
        {{0, 0}, {0, 0}}, {{0.42, 0}, {0.58, 1}},    {{0.3, 0.3}, {0.6, 0.6}}, {{0, 0}, {1, 1}},
        {{1, 0}, {0, 1}}, {{0.9, -0.5}, {0.1, 1.5}}, {{0.25, 0.1}, {0.25, 1}}, {{0.5, 0}, {0.5, 0}},
    };
    for (size_t h = 0; h < sizeof hs / sizeof hs[0]; h++)
        for (double max = 1; max <= 13; max += 4)
            for (double c = 0; c < max; c += 0.25) {
                double got = anim_ease(c, max, hs[h][0], hs[h][1]);
                double want = ref_ease(c, max, hs[h][0], hs[h][1]);
                ck_assert_msg(fabs(got - want) < EXACT, "handles %zu, %g/%g: got %.17g, want %.17g",
                              h, c, max, got, want);
            }
}
END_TEST

/* ====================================================================================== */
/* Keyframe lookup                                                                         */

/* One bone, start pos (5, 7), rot 0.2. Explicit next_kf everywhere (indices into the list):
 *   PositionX:  f10 100 -> f20 200 (ease-in-out handles on f20) -> f30 50
 *   PositionY:  f0 1 -> f10 2, f10 carries snap handles (y = 999)
 *   Rotation:   a single keyframe, f10 0.5
 *   ScaleX:     two keyframes on frame 20: 2 then 3 */
static const char *KF_ARM =
    "{'version':'0.5.0','bones':[{'id':0,'name':'b','pos':{'x':5,'y':7},'rot':0.2}],"
    " 'animations':[{'name':'move','fps':60,'keyframes':["
    "  {'frame':0, 'bone_id':0,'element':'PositionY','value':1,  'next_kf':3},"
    "  {'frame':10,'bone_id':0,'element':'PositionX','value':100,'next_kf':4},"
    "  {'frame':10,'bone_id':0,'element':'Rotation', 'value':0.5,'next_kf':-1},"
    "  {'frame':10,'bone_id':0,'element':'PositionY','value':2,  'next_kf':-1,"
    "   'start_handle':{'x':0,'y':999},'end_handle':{'x':1,'y':999}},"
    "  {'frame':20,'bone_id':0,'element':'PositionX','value':200,'next_kf':7,"
    "   'start_handle':{'x':0.42,'y':0},'end_handle':{'x':0.58,'y':1}},"
    "  {'frame':20,'bone_id':0,'element':'ScaleX',   'value':2,  'next_kf':-1},"
    "  {'frame':20,'bone_id':0,'element':'ScaleX',   'value':3,  'next_kf':-1},"
    "  {'frame':30,'bone_id':0,'element':'PositionX','value':50, 'next_kf':-1}]}]}";

START_TEST(before_first_keyframe_keeps_field)
{
    struct armature *arm = load_q(KF_ARM);
    struct pose *p = pose_new(arm);
    /* Frame 5: PositionX, Rotation and ScaleX are keyed but no keyframe acts yet. */
    play1(p, 0, 5, 0);
    ck_assert_double_eq(p->local[0].pos.x, 5.0); /* the file's start value */
    ck_assert_double_eq(p->local[0].rot, 0.2);
    ck_assert_double_eq(p->local[0].scale.x, 1.0);
    /* PositionY: f0 -> f10 snaps, so it holds the start keyframe's 1. */
    ck_assert_double_eq(p->local[0].pos.y, 1.0);

    /* After the track moved the field, going back before its first keyframe leaves the
     * previous value (it is keyed, so it does not return to init_ either). */
    play1(p, 0, 30, 0);
    ck_assert_double_eq(p->local[0].pos.x, 50.0);
    play1(p, 0, 5, 0);
    ck_assert_double_eq(p->local[0].pos.x, 50.0);
    ck_assert_double_eq(p->local[0].rot, 0.5);
    ck_assert_double_eq(p->local[0].scale.x, 3.0);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(between_keyframes_uses_next_handles)
{
    struct armature *arm = load_q(KF_ARM);
    struct pose *p = pose_new(arm);
    /* f10 -> f20 eases with f20's handles (ease-in-out): the middle is exactly halfway. */
    play1(p, 0, 15, 0);
    ck_assert_double_eq_tol(p->local[0].pos.x, 150.0, EXACT);
    play1(p, 0, 12, 0);
    ck_assert_double_eq_tol(p->local[0].pos.x, 100.0 + 100.0 * ref_ease(2, 10, EIO1, EIO2), TOL);
    ck_assert_double_lt(p->local[0].pos.x, 120.0); /* slower than linear at the start */
    /* Fractional frame (not a whole frame: eased on the fly). */
    play1(p, 0, 12.5, 0);
    ck_assert_double_eq_tol(p->local[0].pos.x, 100.0 + 100.0 * ref_ease(2.5, 10, EIO1, EIO2), TOL);
    /* f20 -> f30 uses f30's default handles: 200 + (50 - 200) * E(5/10). */
    play1(p, 0, 25, 0);
    ck_assert_double_eq_tol(p->local[0].pos.x, 200.0 - 150.0 * E(5, 10), TOL);
    play1(p, 0, 27.25, 0);
    ck_assert_double_eq_tol(p->local[0].pos.x, 200.0 - 150.0 * E(7.25, 10), TOL);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(after_last_keyframe_holds)
{
    struct armature *arm = load_q(KF_ARM);
    struct pose *p = pose_new(arm);
    play1(p, 0, 30, 0);
    ck_assert_double_eq(p->local[0].pos.x, 50.0);
    play1(p, 0, 1000, 0);
    ck_assert_double_eq(p->local[0].pos.x, 50.0);
    ck_assert_double_eq(p->local[0].pos.y, 2.0);
    ck_assert_double_eq(p->local[0].rot, 0.5);
    ck_assert_double_eq(p->local[0].scale.x, 3.0);
    play1(p, 0, 30.5, 0);
    ck_assert_double_eq(p->local[0].pos.x, 50.0);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(single_keyframe)
{
    struct armature *arm = load_q(KF_ARM);
    struct pose *p = pose_new(arm);
    play1(p, 0, 9.9, 0);
    ck_assert_double_eq(p->local[0].rot, 0.2); /* before it: untouched */
    play1(p, 0, 10, 0);
    ck_assert_double_eq(p->local[0].rot, 0.5);
    play1(p, 0, 10.4, 0);
    ck_assert_double_eq(p->local[0].rot, 0.5);
    play1(p, 0, 44, 0);
    ck_assert_double_eq(p->local[0].rot, 0.5);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(equal_frames_later_in_list_wins)
{
    struct armature *arm = load_q(KF_ARM);
    struct pose *p = pose_new(arm);
    play1(p, 0, 19, 0);
    ck_assert_double_eq(p->local[0].scale.x, 1.0);
    play1(p, 0, 20, 0); /* both act, in list order: 2 then 3 */
    ck_assert_double_eq(p->local[0].scale.x, 3.0);
    play1(p, 0, 26, 0);
    ck_assert_double_eq(p->local[0].scale.x, 3.0);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(snap_keyframes_hold)
{
    struct armature *arm = load_q(KF_ARM);
    struct pose *p = pose_new(arm);
    play1(p, 0, 0, 0);
    ck_assert_double_eq(p->local[0].pos.y, 1.0);
    play1(p, 0, 9.9, 0);
    ck_assert_double_eq(p->local[0].pos.y, 1.0);
    play1(p, 0, 10, 0); /* f0 snaps (1), then f10 acts with itself as next (2) */
    ck_assert_double_eq(p->local[0].pos.y, 2.0);
    play1(p, 0, 12, 0);
    ck_assert_double_eq(p->local[0].pos.y, 2.0);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(keyframe_own_frame_two_act)
{
    struct armature *arm = load_q(KF_ARM);
    struct pose *p = pose_new(arm);
    /* Without smoothing both give 200 at frame 20 (f10 ends there, f20 starts there). */
    play1(p, 0, 20, 0);
    ck_assert_double_eq(p->local[0].pos.x, 200.0);
    pose_free(p);

    /* With smoothing 40 on a fresh pose (x = 5) the two differ:
     *   f10 acts with current 10: result 200; x = interp(10, 40, 5, 200) = 5 + 195 E(10/40)
     *   f20 acts with current 0:  x = interp(0, 40, x, 200) = x (t = 0 gives 0)
     * Had only f20 acted, x would still be 5. */
    p = pose_new(arm);
    play1(p, 0, 20, 40);
    ck_assert_double_eq_tol(p->local[0].pos.x, 5.0 + 195.0 * E(10, 40), TOL);
    ck_assert_double_gt(p->local[0].pos.x, 40.0);
    pose_free(p);
    armature_free(arm);
}
END_TEST

/* ====================================================================================== */
/* Smoothing                                                                               */

/* PositionX f0 50 -> f10 100 (next_kf derived on load); start x = 0. */
static const char *SMOOTH_ARM =
    "{'bones':[{'id':0,'name':'b'}],'animations':[{'name':'slide','keyframes':["
    " {'frame':0, 'bone_id':0,'element':'PositionX','value':50},"
    " {'frame':10,'bone_id':0,'element':'PositionX','value':100}]}]}";

START_TEST(smoothing_moves_part_way)
{
    struct armature *arm = load_q(SMOOTH_ARM);
    struct pose *p = pose_new(arm);
    /* result r = 50 + 50 E(5/10); field = interp(5, 10, 0, r) = r E(5/10). */
    play1(p, 0, 5, 10);
    double r = 50.0 + 50.0 * E(5, 10);
    ck_assert_double_eq_tol(p->local[0].pos.x, r * E(5, 10), TOL);
    ck_assert_double_lt(p->local[0].pos.x, r - 30.0); /* about half of r ~ 75 */
    pose_free(p);

    /* smooth <= frame - keyframe: the smoothing interpolate returns the result. */
    p = pose_new(arm);
    play1(p, 0, 5, 5);
    ck_assert_double_eq_tol(p->local[0].pos.x, 50.0 + 50.0 * E(5, 10), TOL);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(smoothing_on_first_keyframe_frame_does_not_move)
{
    struct armature *arm = load_q(SMOOTH_ARM);
    struct pose *p = pose_new(arm);
    play1(p, 0, 0, 5); /* interp(0, 5, 0, 50) = 0: the counter is 0 */
    ck_assert_double_eq(p->local[0].pos.x, 0.0);
    play1(p, 0, 0, 5);
    ck_assert_double_eq(p->local[0].pos.x, 0.0);
    play1(p, 0, 0, 0); /* unsmoothed, the keyframe value at once */
    ck_assert_double_eq(p->local[0].pos.x, 50.0);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(smoothing_carries_over_steps)
{
    struct armature *arm = load_q(SMOOTH_ARM);
    struct pose *p = pose_new(arm);
    double x = 0.0; /* the file's start */
    play1(p, 0, 0, 4);
    ck_assert_double_eq(p->local[0].pos.x, x);
    for (int f = 1; f <= 3; f++) {
        double r = 50.0 + 50.0 * E(f, 10);
        x = x + (r - x) * E(f, 4); /* interp(f, 4, previous x, r) */
        play1(p, 0, f, 4);
        ck_assert_double_eq_tol(p->local[0].pos.x, x, TOL);
    }
    play1(p, 0, 4, 4); /* current 4 >= smooth 4: exactly the keyframe result */
    ck_assert_double_eq_tol(p->local[0].pos.x, 50.0 + 50.0 * E(4, 10), TOL);
    pose_free(p);
    armature_free(arm);
}
END_TEST

/* ====================================================================================== */
/* Unkeyed fields return to init_                                                          */

/* Every field's start value differs from its init_ value. "spin" keys Rotation (f0 1 ->
 * f10 2); "late" keys PositionX only at frame 10. */
static const char *RESET_ARM =
    "{'bones':[{'id':0,'name':'b','pos':{'x':1,'y':2},'init_pos':{'x':10,'y':20},"
    "  'rot':0.3,'init_rot':0.1,'scale':{'x':2,'y':2},'init_scale':{'x':1,'y':1},"
    "  'tint':{'r':0,'g':0,'b':0,'a':0},'init_tint':{'r':255,'g':255,'b':255,'a':255},"
    "  'hidden':true,'init_hidden':false,'zindex':3,'init_zindex':7,"
    "  'tex':'x','init_tex':'y'}],"
    " 'animations':["
    "  {'name':'spin','keyframes':[{'frame':0,'bone_id':0,'element':'Rotation','value':1},"
    "                              {'frame':10,'bone_id':0,'element':'Rotation','value':2}]},"
    "  {'name':'late','keyframes':[{'frame':10,'bone_id':0,'element':'PositionX','value':50}]}]}";

static void assert_discrete_init(const struct pose *p)
{
    ck_assert(!p->local[0].hidden);
    ck_assert_int_eq(p->local[0].zindex, 7);
    ck_assert_str_eq(tex_of(p, 0), "y");
}

START_TEST(unkeyed_return_at_once)
{
    struct armature *arm = load_q(RESET_ARM);
    struct pose *p = pose_new(arm);
    play1(p, 0, 5, 0);
    ck_assert_double_eq_tol(p->local[0].rot, 1.0 + 1.0 * E(5, 10), TOL); /* keyed */
    ck_assert_double_eq(p->local[0].pos.x, 10.0);
    ck_assert_double_eq(p->local[0].pos.y, 20.0);
    ck_assert_double_eq(p->local[0].scale.x, 1.0);
    ck_assert_double_eq(p->local[0].scale.y, 1.0);
    for (int i = 0; i < 4; i++)
        ck_assert_double_eq(p->local[0].tint[i], 255.0);
    assert_discrete_init(p);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(unkeyed_return_with_first_animation_smoothing)
{
    struct armature *arm = load_q(RESET_ARM);
    struct pose *p = pose_new(arm);
    /* frame 2, smooth 4: field = interp(2, 4, field, init) = field + (init - field) E(2/4). */
    play1(p, 0, 2, 4);
    double e = E(2, 4);
    double x = 1.0 + (10.0 - 1.0) * e;
    ck_assert_double_eq_tol(p->local[0].pos.x, x, TOL);
    ck_assert_double_eq_tol(p->local[0].pos.y, 2.0 + 18.0 * e, TOL);
    ck_assert_double_eq_tol(p->local[0].scale.x, 2.0 - 1.0 * e, TOL);
    ck_assert_double_eq_tol(p->local[0].tint[0], 255.0 * e, TOL);
    ck_assert_double_eq_tol(p->local[0].tint[3], 255.0 * e, TOL);
    /* The keyed rotation is smoothed toward its keyframe result 1 + E(2/10). */
    double rot = 0.3 + (1.0 + E(2, 10) - 0.3) * e;
    ck_assert_double_eq_tol(p->local[0].rot, rot, TOL);
    /* Discrete fields return at once. */
    assert_discrete_init(p);

    /* Next step, frame 3: from where the last one left. */
    play1(p, 0, 3, 4);
    x = x + (10.0 - x) * E(3, 4);
    ck_assert_double_eq_tol(p->local[0].pos.x, x, TOL);
    /* frame 4 >= smooth 4: init exactly. */
    play1(p, 0, 4, 4);
    ck_assert_double_eq(p->local[0].pos.x, 10.0);
    ck_assert_double_eq(p->local[0].pos.y, 20.0);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(unkeyed_smoothing_comes_from_animation_0)
{
    struct armature *arm = load_q(RESET_ARM);
    struct pose *p = pose_new(arm);
    /* spin first (frame 2, smooth 4), late second (frame 3, smooth 0). PositionX is keyed
     * by late (at frame 10 only): it counts as keyed and holds its start value 1. PositionY
     * is unkeyed and uses spin's frame and smoothing. */
    play2(p, 0, 2, 4, 1, 3, 0);
    ck_assert_double_eq(p->local[0].pos.x, 1.0);
    ck_assert_double_eq_tol(p->local[0].pos.y, 2.0 + 18.0 * E(2, 4), TOL);
    pose_free(p);

    /* The other order: late is animation 0, smoothing 0, so unkeyed fields snap to init;
     * spin keeps its own smoothing for the rotation it keys. */
    p = pose_new(arm);
    play2(p, 1, 3, 0, 0, 2, 4);
    ck_assert_double_eq(p->local[0].pos.x, 1.0);
    ck_assert_double_eq(p->local[0].pos.y, 20.0);
    ck_assert_double_eq(p->local[0].scale.y, 1.0);
    ck_assert_double_eq_tol(p->local[0].rot, 0.3 + (1.0 + E(2, 10) - 0.3) * E(2, 4), TOL);
    /* late reaches its keyframe. */
    play2(p, 1, 10, 0, 0, 2, 4);
    ck_assert_double_eq(p->local[0].pos.x, 50.0);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(no_animation_resets_everything)
{
    struct armature *arm = load_q(RESET_ARM);
    struct pose *p = pose_new(arm);
    ck_assert_double_eq(p->local[0].pos.x, 1.0); /* fresh pose: the file's values */
    animate(p, NULL, 0);
    ck_assert_double_eq(p->local[0].pos.x, 10.0);
    ck_assert_double_eq(p->local[0].pos.y, 20.0);
    ck_assert_double_eq(p->local[0].rot, 0.1);
    ck_assert_double_eq(p->local[0].scale.x, 1.0);
    ck_assert_double_eq(p->local[0].tint[1], 255.0);
    assert_discrete_init(p);
    pose_free(p);
    armature_free(arm);
}
END_TEST

/* ====================================================================================== */
/* Several animations                                                                      */

static const char *BLEND_ARM =
    "{'bones':[{'id':0,'name':'b'}],'animations':["
    " {'name':'a','keyframes':[{'frame':0,'bone_id':0,'element':'PositionX','value':10},"
    "                          {'frame':0,'bone_id':0,'element':'PositionY','value':-1},"
    "                          {'frame':30,'bone_id':0,'element':'PositionX','value':40}]},"
    " {'name':'b','keyframes':[{'frame':0,'bone_id':0,'element':'PositionX','value':20},"
    "                          {'frame':4,'bone_id':0,'element':'PositionX','value':24}]}]}";

START_TEST(later_animation_wins)
{
    struct armature *arm = load_q(BLEND_ARM);
    struct pose *p = pose_new(arm);
    play2(p, 0, 15, 0, 1, 2, 0); /* a then b: b's x = 20 + 4 E(2/4) */
    ck_assert_double_eq_tol(p->local[0].pos.x, 20.0 + 4.0 * E(2, 4), TOL);
    ck_assert_double_eq(p->local[0].pos.y, -1.0); /* only a keys y: kept */
    play2(p, 1, 2, 0, 0, 15, 0);                  /* b then a: a's x = 10 + 30 E(15/30) */
    ck_assert_double_eq_tol(p->local[0].pos.x, 10.0 + 30.0 * E(15, 30), TOL);
    ck_assert_double_eq(p->local[0].pos.y, -1.0);
    /* Each animation walks its own keyframes: b at frame 9 is past its last (24) even
     * though a has keyframes up to 30. */
    play2(p, 0, 15, 0, 1, 9, 0);
    ck_assert_double_eq(p->local[0].pos.x, 24.0);
    pose_free(p);
    armature_free(arm);
}
END_TEST

/* ====================================================================================== */
/* Discrete elements and tint                                                              */

static const char *DISCRETE_ARM =
    "{'bones':[{'id':0,'name':'b','tex':'a'}],'animations':[{'name':'d','keyframes':["
    " {'frame':0,'bone_id':0,'element':'Hidden','value':0},"
    " {'frame':0,'bone_id':0,'element':'Zindex','value':1},"
    " {'frame':0,'bone_id':0,'element':'Texture','value_str':'a'},"
    " {'frame':0,'bone_id':0,'element':'TintR','value':0},"
    " {'frame':0,'bone_id':0,'element':'TintG','value':10},"
    " {'frame':0,'bone_id':0,'element':'TintB','value':20},"
    " {'frame':0,'bone_id':0,'element':'TintA','value':100},"
    " {'frame':0,'bone_id':0,'element':'IkMode','value_str':'FABRIK'},"
    " {'frame':0,'bone_id':0,'element':'IkConstraint','value_str':'None'},"
    " {'frame':10,'bone_id':0,'element':'Hidden','value':1},"
    " {'frame':10,'bone_id':0,'element':'Zindex','value':5},"
    " {'frame':10,'bone_id':0,'element':'Texture','value_str':'b'},"
    " {'frame':10,'bone_id':0,'element':'TintR','value':255},"
    " {'frame':10,'bone_id':0,'element':'TintG','value':110},"
    " {'frame':10,'bone_id':0,'element':'TintB','value':220},"
    " {'frame':10,'bone_id':0,'element':'TintA','value':200},"
    " {'frame':10,'bone_id':0,'element':'IkMode','value_str':'Arc'},"
    " {'frame':10,'bone_id':0,'element':'IkConstraint','value_str':'Clockwise'},"
    " {'frame':20,'bone_id':0,'element':'Zindex','value':-2},"
    " {'frame':20,'bone_id':0,'element':'IkConstraint','value_str':'CounterClockwise'}]}]}";

START_TEST(discrete_elements_take_previous_keyframe)
{
    struct armature *arm = load_q(DISCRETE_ARM);
    struct pose *p = pose_new(arm);
    const double frames[] = {5, 9.9};
    for (int i = 0; i < 2; i++) {
        play1(p, 0, frames[i], 0);
        ck_assert(!p->local[0].hidden);
        ck_assert_int_eq(p->local[0].zindex, 1);
        ck_assert_str_eq(tex_of(p, 0), "a");
        ck_assert_int_eq(p->local[0].ik_mode, IK_FABRIK);
        ck_assert_int_eq(p->local[0].ik_constraint, IKC_NONE);
    }
    play1(p, 0, 10, 0);
    ck_assert(p->local[0].hidden);
    ck_assert_int_eq(p->local[0].zindex, 5);
    ck_assert_str_eq(tex_of(p, 0), "b");
    ck_assert_int_eq(p->local[0].ik_mode, IK_ARC);
    ck_assert_int_eq(p->local[0].ik_constraint, IKC_CLOCKWISE);
    /* Between 10 and 20: still the frame-10 values, not something in between 5 and -2. */
    play1(p, 0, 15, 0);
    ck_assert_int_eq(p->local[0].zindex, 5);
    ck_assert_int_eq(p->local[0].ik_constraint, IKC_CLOCKWISE);
    play1(p, 0, 20, 0);
    ck_assert_int_eq(p->local[0].zindex, -2);
    ck_assert_int_eq(p->local[0].ik_constraint, IKC_COUNTER_CLOCKWISE);
    play1(p, 0, 99, 0);
    ck_assert(p->local[0].hidden);
    ck_assert_int_eq(p->local[0].zindex, -2);
    ck_assert_str_eq(tex_of(p, 0), "b");
    ck_assert_int_eq(p->local[0].ik_mode, IK_ARC);
    pose_free(p);

    /* Smoothing does not apply to them: on frame 10 with smoothing 5 they switch at once. */
    p = pose_new(arm);
    play1(p, 0, 10, 5);
    ck_assert(p->local[0].hidden);
    ck_assert_int_eq(p->local[0].zindex, 5);
    ck_assert_str_eq(tex_of(p, 0), "b");
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(tint_interpolates)
{
    struct armature *arm = load_q(DISCRETE_ARM);
    struct pose *p = pose_new(arm);
    play1(p, 0, 5, 0);
    double e = E(5, 10);
    ck_assert_double_eq_tol(p->local[0].tint[0], 255.0 * e, TOL);
    ck_assert_double_eq_tol(p->local[0].tint[1], 10.0 + 100.0 * e, TOL);
    ck_assert_double_eq_tol(p->local[0].tint[2], 20.0 + 200.0 * e, TOL);
    ck_assert_double_eq_tol(p->local[0].tint[3], 100.0 + 100.0 * e, TOL);
    play1(p, 0, 30, 0);
    ck_assert_double_eq(p->local[0].tint[0], 255.0);
    ck_assert_double_eq(p->local[0].tint[3], 200.0);
    pose_free(p);
    armature_free(arm);
}
END_TEST

/* ====================================================================================== */
/* 0.6/0.7: family state keyed on any chain bone, tint in 0..1 (SPEC.md section 4)       */

/* Chain [a, b, c] of family 0, every bone naming it. The family starts (start values) at
 * CounterClockwise, Arc, mimic on; its init_ values are None, FABRIK, mimic off. "keys"
 * keys the family state on the non-root bones only: at frame 0 Clockwise (on b), mimic on
 * (c), Arc (c); at frame 10 CounterClockwise (c), mimic off (b), FABRIK (b). After the
 * loader's redirect each element is one track on the root, a, holding keys from both bones.
 * "other" keys only a position. */
static const char *FAMILY_ARM =
    "{'version':'0.7.0',"
    " 'inverse_kinematics':[{'target_id':3,'bone_ids':[0,1,2],'constraint':'CounterClockwise',"
    "   'init_constraint':'None','mode':'Arc','init_mode':'FABRIK','mimic_target':true,"
    "   'init_mimic_target':false}],"
    " 'bones':[{'id':0,'name':'a','ik_family_id':0},"
    "  {'id':1,'name':'b','parent_id':0,'pos':{'x':10,'y':0},'ik_family_id':0},"
    "  {'id':2,'name':'c','parent_id':1,'pos':{'x':10,'y':0},'ik_family_id':0},"
    "  {'id':3,'name':'target','pos':{'x':0,'y':15}}],"
    " 'animations':["
    "  {'name':'keys','keyframes':["
    "   {'frame':0,'bone_id':1,'element':'IkConstraint','value_str':'Clockwise'},"
    "   {'frame':0,'bone_id':2,'element':'MimicTarget','value':1},"
    "   {'frame':0,'bone_id':2,'element':'IkMode','value_str':'Arc'},"
    "   {'frame':10,'bone_id':2,'element':'IkConstraint','value_str':'CounterClockwise'},"
    "   {'frame':10,'bone_id':1,'element':'MimicTarget','value':0},"
    "   {'frame':10,'bone_id':1,'element':'IkMode','value_str':'FABRIK'}]},"
    "  {'name':'other','keyframes':[{'frame':0,'bone_id':3,'element':'PositionX','value':1}]}]}";

/* The non-root chain bones keep their own (unused) IK fields: the keys never land there. */
static void assert_chain_bones_untouched(const struct pose *p)
{
    for (uint32_t b = 1; b <= 2; b++) {
        ck_assert_int_eq(p->local[b].ik_constraint, IKC_NONE);
        ck_assert_int_eq(p->local[b].ik_mode, IK_FABRIK);
        ck_assert(!p->local[b].ik_mimic);
    }
}

START_TEST(ik_constraint_key_on_chain_bone_sets_family)
{
    struct armature *arm = load_q(FAMILY_ARM);
    struct pose *p = pose_new(arm);
    ck_assert_int_eq(p->local[0].ik_constraint, IKC_COUNTER_CLOCKWISE); /* start value */
    play1(p, 0, 5, 0);                                                  /* b's frame-0 key */
    ck_assert_int_eq(p->local[0].ik_constraint, IKC_CLOCKWISE);
    assert_chain_bones_untouched(p);
    play1(p, 0, 10, 0); /* c's frame-10 key, the later one of the merged track */
    ck_assert_int_eq(p->local[0].ik_constraint, IKC_COUNTER_CLOCKWISE);
    assert_chain_bones_untouched(p);
    /* Unkeyed: back to init_constraint None, both with another animation playing and with
     * none, and keyed again afterwards. */
    play1(p, 1, 0, 0);
    ck_assert_int_eq(p->local[0].ik_constraint, IKC_NONE);
    play1(p, 0, 3, 0);
    ck_assert_int_eq(p->local[0].ik_constraint, IKC_CLOCKWISE);
    animate(p, NULL, 0);
    ck_assert_int_eq(p->local[0].ik_constraint, IKC_NONE);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(mimic_target_key_on_chain_bone_sets_family)
{
    struct armature *arm = load_q(FAMILY_ARM);
    struct pose *p = pose_new(arm);
    ck_assert(p->local[0].ik_mimic); /* start value */
    animate(p, NULL, 0);
    ck_assert(!p->local[0].ik_mimic); /* init_mimic_target */
    play1(p, 0, 0, 0);                /* c's frame-0 key: on */
    ck_assert(p->local[0].ik_mimic);
    assert_chain_bones_untouched(p);
    play1(p, 0, 9.5, 0); /* a step element: still the frame-0 value */
    ck_assert(p->local[0].ik_mimic);
    play1(p, 0, 10, 0); /* b's frame-10 key: off */
    ck_assert(!p->local[0].ik_mimic);
    play1(p, 0, 0, 5); /* smoothing does not apply to it: on at once */
    ck_assert(p->local[0].ik_mimic);
    play1(p, 1, 0, 0);
    ck_assert(!p->local[0].ik_mimic);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(ik_mode_key_on_chain_bone_sets_family)
{
    struct armature *arm = load_q(FAMILY_ARM);
    struct pose *p = pose_new(arm);
    ck_assert_int_eq(p->local[0].ik_mode, IK_ARC); /* start value */
    animate(p, NULL, 0);
    ck_assert_int_eq(p->local[0].ik_mode, IK_FABRIK); /* init_mode */
    play1(p, 0, 4, 0);
    ck_assert_int_eq(p->local[0].ik_mode, IK_ARC);
    assert_chain_bones_untouched(p);
    play1(p, 0, 12, 0);
    ck_assert_int_eq(p->local[0].ik_mode, IK_FABRIK);
    play1(p, 0, 4, 0);
    ck_assert_int_eq(p->local[0].ik_mode, IK_ARC);
    play1(p, 1, 0, 0);
    ck_assert_int_eq(p->local[0].ik_mode, IK_FABRIK);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(tint_keys_0_1_land_0_255)
{
    /* visuals tint white (1,1,1,1 -> 255), init_tint g 0.4 (-> 102; the others default to
     * the tint: 255). TintR runs 0.2 -> 1 over frames 0..10, TintA holds 0.5. At frame 5:
     * r = 255 (0.2 + 0.8 E(5/10)) = 51 + 204 E, a = 127.5, g (unkeyed) = init 102, b = 255. */
    struct armature *arm = load_q(
        "{'version':'0.7.0','visuals':[{'tint':{'r':1,'g':1,'b':1,'a':1},'init_tint':{'g':0.4}}],"
        " 'bones':[{'id':0,'name':'b','visuals_id':0}],"
        " 'animations':[{'name':'fade','keyframes':["
        "  {'frame':0,'bone_id':0,'element':'TintR','value':0.2},"
        "  {'frame':0,'bone_id':0,'element':'TintA','value':0.5},"
        "  {'frame':10,'bone_id':0,'element':'TintR','value':1}]}]}");
    struct pose *p = pose_new(arm);
    play1(p, 0, 5, 0);
    ck_assert_double_eq_tol(p->local[0].tint[0], 51.0 + 204.0 * E(5, 10), TOL);
    ck_assert_double_eq_tol(p->local[0].tint[1], 102.0, TOL);
    ck_assert_double_eq_tol(p->local[0].tint[2], 255.0, TOL);
    ck_assert_double_eq_tol(p->local[0].tint[3], 127.5, TOL);
    play1(p, 0, 10, 0);
    ck_assert_double_eq_tol(p->local[0].tint[0], 255.0, TOL);
    /* Unkeyed, every channel returns to its init_ value in 0..255. */
    animate(p, NULL, 0);
    ck_assert_double_eq_tol(p->local[0].tint[0], 255.0, TOL);
    ck_assert_double_eq_tol(p->local[0].tint[1], 102.0, TOL);
    ck_assert_double_eq_tol(p->local[0].tint[3], 255.0, TOL);
    pose_free(p);
    armature_free(arm);
}
END_TEST

/* ====================================================================================== */
/* next_kf                                                                                 */

/* No next_kf anywhere: derived as the first later keyframe of the same bone and element
 * with a greater frame. PositionX: [0]=0 @0, [2]=40 @0, [3]=100 @10 -> 0->3, 2->3.
 * PositionY: [1]=5 @0, [4]=6 @10, [5]=8 @10 -> 1->4 (not 5), 4 and 5 none. */
static const char *DERIVE_ARM =
    "{'bones':[{'id':0,'name':'b'}],'animations':[{'name':'old','keyframes':["
    " {'frame':0, 'bone_id':0,'element':'PositionX','value':0},"
    " {'frame':0, 'bone_id':0,'element':'PositionY','value':5},"
    " {'frame':0, 'bone_id':0,'element':'PositionX','value':40},"
    " {'frame':10,'bone_id':0,'element':'PositionX','value':100},"
    " {'frame':10,'bone_id':0,'element':'PositionY','value':6},"
    " {'frame':10,'bone_id':0,'element':'PositionY','value':8}]}]}";

START_TEST(missing_next_kf_is_derived)
{
    struct armature *arm = load_q(DERIVE_ARM);
    struct pose *p = pose_new(arm);
    play1(p, 0, 5, 0);
    /* x: [0] gives 0 + 100 E, then [2] gives 40 + 60 E; the later wins. Had next_kf been
     * left at "none", x would hold 40. */
    ck_assert_double_eq_tol(p->local[0].pos.x, 40.0 + 60.0 * E(5, 10), TOL);
    /* y: [1] runs toward [4] (6), the first later keyframe, not [5] (8). */
    ck_assert_double_eq_tol(p->local[0].pos.y, 5.0 + 1.0 * E(5, 10), TOL);
    play1(p, 0, 10, 0);
    ck_assert_double_eq(p->local[0].pos.x, 100.0);
    ck_assert_double_eq(p->local[0].pos.y, 8.0);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(explicit_next_kf_none_holds)
{
    struct armature *arm =
        load_q("{'bones':[{'id':0,'name':'b'}],'animations':[{'name':'held','keyframes':["
               " {'frame':0, 'bone_id':0,'element':'PositionX','value':3,  'next_kf':-1},"
               " {'frame':10,'bone_id':0,'element':'PositionX','value':100,'next_kf':-1}]}]}");
    struct pose *p = pose_new(arm);
    play1(p, 0, 5, 0);
    ck_assert_double_eq(p->local[0].pos.x, 3.0);
    play1(p, 0, 10, 0);
    ck_assert_double_eq(p->local[0].pos.x, 100.0);
    play1(p, 0, 12, 0);
    ck_assert_double_eq(p->local[0].pos.x, 100.0);
    pose_free(p);
    armature_free(arm);
}
END_TEST

/* ====================================================================================== */
/* FormatFrame / TimeFrame                                                                 */

static const char *FRAMES_ARM = "{'bones':[{'id':0,'name':'b'}],'animations':["
                                " {'name':'stand','fps':60,'keyframes':["
                                "   {'frame':0,'bone_id':0,'element':'PositionX','value':0},"
                                "   {'frame':49,'bone_id':0,'element':'PositionX','value':98}]},"
                                " {'name':'slow','fps':30,'keyframes':["
                                "   {'frame':0,'bone_id':0,'element':'PositionX','value':0},"
                                "   {'frame':20,'bone_id':0,'element':'PositionX','value':1}]},"
                                " {'name':'empty','fps':60}]}";

START_TEST(format_frame_loop)
{
    struct armature *arm = load_q(FRAMES_ARM);
    /* last = 49: loop takes frame % 50 (fractional remainder), then rounds half up. */
    ck_assert_double_eq(anim_format_frame(arm, 0, 105, false, true), 5);
    ck_assert_double_eq(anim_format_frame(arm, 0, 49.6, false, true), 50); /* 49.6 -> 50 */
    ck_assert_double_eq(anim_format_frame(arm, 0, 49.4, false, true), 49);
    ck_assert_double_eq(anim_format_frame(arm, 0, 74.5, false, true), 25); /* 24.5 up */
    ck_assert_double_eq(anim_format_frame(arm, 0, 100.4, false, true), 0); /* 0.4 */
    ck_assert_double_eq(anim_format_frame(arm, 0, 50, false, true), 0);
    ck_assert_double_eq(anim_format_frame(arm, 0, 48, false, true), 48);
    /* last = 20: % 21. */
    ck_assert_double_eq(anim_format_frame(arm, 1, 44, false, true), 2);
    /* No keyframes: last = 0, % 1 leaves the fraction. */
    ck_assert_double_eq(anim_format_frame(arm, 2, 7.3, false, true), 0);
    ck_assert_double_eq(anim_format_frame(arm, 2, 7.6, false, true), 1);
    /* No loop: only the rounding. */
    ck_assert_double_eq(anim_format_frame(arm, 0, 120, false, false), 120);
    ck_assert_double_eq(anim_format_frame(arm, 0, 2.5, false, false), 3);
    ck_assert_double_eq(anim_format_frame(arm, 0, 2.49, false, false), 2);
    armature_free(arm);
}
END_TEST

START_TEST(format_frame_reverse)
{
    struct armature *arm = load_q(FRAMES_ARM);
    ck_assert_double_eq(anim_format_frame(arm, 0, 10, true, true), 39); /* 49 - 10 */
    ck_assert_double_eq(anim_format_frame(arm, 0, 60, true, true), 39); /* 49 - 60 % 50 */
    ck_assert_double_eq(anim_format_frame(arm, 0, 0, true, false), 49);
    /* Without loop, reverse can go negative. */
    ck_assert_double_eq(anim_format_frame(arm, 0, 60, true, false), -11);
    ck_assert_double_eq(anim_format_frame(arm, 0, 52.2, true, false), -3); /* -3.2 */
    /* Halves go up, also below zero: -0.5 -> 0, -1.5 -> -1. */
    ck_assert_double_eq(anim_format_frame(arm, 0, 49.5, true, false), 0);
    ck_assert_double_eq(anim_format_frame(arm, 0, 50.5, true, false), -1);
    /* 49 - 10.5 = 38.5 -> 39. */
    ck_assert_double_eq(anim_format_frame(arm, 0, 10.5, true, false), 39);
    armature_free(arm);
}
END_TEST

START_TEST(time_frame)
{
    struct armature *arm = load_q(FRAMES_ARM);
    /* 411.667 ms at 60 fps = 24.70002 frames -> 25. */
    ck_assert_double_eq(anim_time_frame(arm, 0, 411.667, false, true), 25);
    ck_assert_double_eq(anim_time_frame(arm, 0, 411.667, false, false), 25);
    /* 1000 ms at 60 fps = 60 frames; loop % 50 -> 10; reverse -> 49 - 10 = 39. */
    ck_assert_double_eq(anim_time_frame(arm, 0, 1000, false, true), 10);
    ck_assert_double_eq(anim_time_frame(arm, 0, 1000, true, true), 39);
    ck_assert_double_eq(anim_time_frame(arm, 0, 1000, false, false), 60);
    /* 30 fps: 500 ms = 15 frames; 900 ms = 27 -> % 21 = 6. */
    ck_assert_double_eq(anim_time_frame(arm, 1, 500, false, true), 15);
    ck_assert_double_eq(anim_time_frame(arm, 1, 900, false, true), 6);
    /* 8 ms at 60 fps = 0.48 -> 0; 9 ms = 0.54 -> 1. */
    ck_assert_double_eq(anim_time_frame(arm, 0, 8, false, true), 0);
    ck_assert_double_eq(anim_time_frame(arm, 0, 9, false, true), 1);
    armature_free(arm);
}
END_TEST

START_TEST(time_frame_is_ms_times_fps)
{
    /* The SPEC's fractional frame is ms / 1000 * fps. At 25 and 50 fps some times land on
     * an exact half: 940 / 1000 * 25 = 23.5 and 470 / 1000 * 50 = 23.5 in binary too. The
     * runtime's (ms / 1000) / (1 / fps) gives 23.499999999999996 there, which rounds down. */
    struct armature *arm =
        load_q("{'bones':[{'id':0,'name':'b'}],'animations':["
               " {'name':'pal','fps':25,'keyframes':["
               "   {'frame':0,'bone_id':0,'element':'PositionX','value':0},"
               "   {'frame':49,'bone_id':0,'element':'PositionX','value':98}]},"
               " {'name':'pal2','fps':50,'keyframes':["
               "   {'frame':0,'bone_id':0,'element':'PositionX','value':0},"
               "   {'frame':49,'bone_id':0,'element':'PositionX','value':98}]}]}");
    /* Halves round up, with or without loop (last frame 49: nothing wraps). */
    ck_assert_double_eq(anim_time_frame(arm, 0, 940, false, false), 24);
    ck_assert_double_eq(anim_time_frame(arm, 0, 940, false, true), 24);
    ck_assert_double_eq(anim_time_frame(arm, 0, 1180, false, false), 30);
    ck_assert_double_eq(anim_time_frame(arm, 1, 470, false, true), 24);
    ck_assert_double_eq(anim_time_frame(arm, 1, 590, false, true), 30);
    /* The fractional frame itself is the exact half. */
    ck_assert_double_eq(anim_time_to_frame(arm, 0, 940), 23.5);
    ck_assert_double_eq(anim_time_to_frame(arm, 0, 1180), 29.5);
    ck_assert_double_eq(anim_time_to_frame(arm, 1, 470), 23.5);
    armature_free(arm);
}
END_TEST

/* ====================================================================================== */
/* eval requests                                                                           */

/* root: PositionX 0 @0 -> 98 @49; tail follows with position damping 4 (state from 0). */
static const char *EVAL_ARM =
    "{'bones':[{'id':0,'name':'root'},"
    "  {'id':1,'name':'tail','parent_id':0,'pos':{'x':10,'y':0},'phys_pos_damping':4}],"
    " 'animations':[{'name':'stand','fps':60,'keyframes':["
    "   {'frame':0,'bone_id':0,'element':'PositionX','value':0},"
    "   {'frame':49,'bone_id':0,'element':'PositionX','value':98}]}]}";

static void one_anim(struct eval_request *r, double frame, double smooth)
{
    eval_request_init(r);
    r->count = 1;
    r->anims[0] = 0;
    r->frames[0] = frame;
    r->smooth[0] = smooth;
}

START_TEST(eval_check_rejects_bad_requests)
{
    struct armature *arm = load_q(EVAL_ARM);
    struct eval_request r;
    struct eng_error err;

#define REJECT(setup)                                                                              \
    do {                                                                                           \
        one_anim(&r, 10, 0);                                                                       \
        setup;                                                                                     \
        err = (struct eng_error){0};                                                               \
        ck_assert_int_eq(eval_check(arm, &r, &err), ENG_EINVAL);                                   \
        ck_assert_int_eq(err.code, ENG_EINVAL);                                                    \
        ck_assert_msg(err.msg[0] != 0, "no message for: %s", #setup);                              \
    } while (0)

    REJECT(r.anims[0] = 1); /* one animation only */
    REJECT(r.anims[0] = -1);
    REJECT(r.count = EVAL_MAX_ANIMS + 1);
    REJECT(r.frames[0] = NAN);
    REJECT(r.frames[0] = INFINITY);
    REJECT(r.frames[0] = 1e13);
    ck_assert_str_eq(err.msg, "frame 1e+13 is out of range (-1e+12..1e+12)"); /* says which */
    REJECT(r.smooth[0] = -1);
    REJECT(r.smooth[0] = NAN);
    REJECT(r.warmup = -1);
    REJECT(r.warmup = EVAL_MAX_STEPS + 1);
    REJECT((r.has_from = true, r.from = 11));  /* from after frame */
    REJECT((r.has_from = true, r.from = 2.5)); /* not a whole number of frames before */
    REJECT((r.has_from = true, r.from = NAN));
    REJECT((r.has_from = true, r.frames[0] = 2e8, r.from = 0)); /* too many steps */
#undef REJECT

    /* A second animation that is out of range is caught too. */
    one_anim(&r, 10, 0);
    r.count = 2;
    r.anims[1] = 7;
    ck_assert_int_eq(eval_check(arm, &r, NULL), ENG_EINVAL);

    /* Good requests pass. */
    one_anim(&r, 10, 0);
    ck_assert_int_eq(eval_check(arm, &r, NULL), 0);
    r.has_from = true;
    r.from = 3;
    r.warmup = 30;
    r.loop = true;
    ck_assert_int_eq(eval_check(arm, &r, NULL), 0);
    ck_assert_int_eq(eval_steps(&r), 8); /* frames 3..10 */
    r.has_from = false;
    ck_assert_int_eq(eval_steps(&r), 1);
    eval_request_init(&r); /* no animation at all: construct at rest */
    ck_assert_int_eq(eval_check(arm, &r, NULL), 0);
    ck_assert_int_eq(eval_steps(&r), 1);
    armature_free(arm);
}
END_TEST

/* from and frame as a client writes them in decimal: a whole number of frames apart in
 * decimal is accepted even when the binary difference is not whole. */
START_TEST(eval_from_decimal_whole_frames_apart)
{
    struct armature *arm = load_q(EVAL_ARM);
    struct eval_request r;
    /* Frame 2.3 from 0.3 is frames 0.3, 1.3 and 2.3: three steps. In binary 2.3 - 0.3 is
     * 1.9999999999999998, so a plain floor test refuses it and truncation loses a step. */
    ck_assert_double_ne(2.3 - 0.3, 2.0);
    one_anim(&r, 2.3, 0);
    r.has_from = true;
    r.from = 0.3;
    ck_assert_int_eq(eval_check(arm, &r, NULL), 0);
    ck_assert_int_eq(eval_steps(&r), 3);
    /* 20.6 - 10.6 is 10.000000000000002: eleven steps. */
    one_anim(&r, 20.6, 0);
    r.has_from = true;
    r.from = 10.6;
    r.loop = true;
    ck_assert_int_eq(eval_check(arm, &r, NULL), 0);
    ck_assert_int_eq(eval_steps(&r), 11);
    /* Negative frames the same way: -3.3, -2.3, -1.3. */
    one_anim(&r, -1.3, 0);
    r.has_from = true;
    r.from = -3.3;
    ck_assert_int_eq(eval_check(arm, &r, NULL), 0);
    ck_assert_int_eq(eval_steps(&r), 3);
    /* 0.7 - 0.1 is 0.6 frames, not a whole number: still refused. */
    struct eng_error err = {0};
    one_anim(&r, 0.7, 0);
    r.has_from = true;
    r.from = 0.1;
    ck_assert_int_eq(eval_check(arm, &r, &err), ENG_EINVAL);
    ck_assert_int_eq(err.code, ENG_EINVAL);
    armature_free(arm);
}
END_TEST

START_TEST(eval_warmup_runs_rest_constructs)
{
    struct armature *arm = load_q(EVAL_ARM);
    /* Damping 4: each construct moves the tail's state (from 0) by E4 = interp easing at
     * 2/4 with handles (0.3,0.3),(0.6,0.6) toward its target (10, 0):
     * after n constructs x = 10 (1 - (1 - E4)^n). */
    double e4 = ref_ease(2, 4, PHYS1, PHYS2);
    struct eval_request r;
    struct pose *p = pose_new(arm);
    one_anim(&r, 0, 0);
    ck_assert_int_eq(eval_check(arm, &r, NULL), 0);
    eval_run(p, &r, NULL);
    ck_assert_double_eq_tol(p->out[1].pos.x, 10.0 * e4, TOL);
    pose_free(p);

    p = pose_new(arm);
    r.warmup = 3; /* three rest constructs, then the step: four in all */
    ck_assert_int_eq(eval_check(arm, &r, NULL), 0);
    eval_run(p, &r, NULL);
    ck_assert_double_eq_tol(p->out[1].pos.x, 10.0 * (1.0 - pow(1.0 - e4, 4)), TOL);
    ck_assert_double_eq_tol(p->out[1].pos.y, 0.0, TOL);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(eval_steps_from_to_frame)
{
    struct armature *arm = load_q(EVAL_ARM);
    struct eval_request r;
    /* from 0 to 3 with smoothing 4: one Animate+Construct per frame.
     * x0 = interp(0, 4, 0, 0) = 0; then x_f = x_{f-1} + (r_f - x_{f-1}) E(f/4), with the
     * keyframe result r_f = 98 E(f/49). */
    one_anim(&r, 3, 4);
    r.has_from = true;
    r.from = 0;
    ck_assert_int_eq(eval_check(arm, &r, NULL), 0);
    struct pose *p = pose_new(arm);
    eval_run(p, &r, NULL);
    double x = 0.0;
    for (int f = 1; f <= 3; f++)
        x = x + (98.0 * E(f, 49) - x) * E(f, 4);
    ck_assert_double_eq_tol(p->local[0].pos.x, x, TOL);
    ck_assert_double_eq_tol(p->out[0].pos.x, x, TOL);
    pose_free(p);

    /* Jumping straight to frame 3 is one smoothed step from 0: 98 E(3/49) E(3/4). */
    one_anim(&r, 3, 4);
    p = pose_new(arm);
    eval_run(p, &r, NULL);
    ck_assert_double_eq_tol(p->local[0].pos.x, 98.0 * E(3, 49) * E(3, 4), TOL);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(eval_loop_formats_every_step)
{
    struct armature *arm = load_q(EVAL_ARM);
    struct eval_request r;
    /* from 48 to 52 with loop and smoothing 3: the steps play frames 48, 49, 0, 1, 2.
     *   48: current 48 >= 3: x = 98 E(48/49)
     *   49: f0 ends (98), f49 starts (98): x = 98
     *   0:  the first keyframe's frame: a smoothed field does not move: x = 98
     *   1:  x = 98 + (98 E(1/49) - 98) E(1/3)
     *   2:  x = x1 + (98 E(2/49) - x1) E(2/3)
     * Unformatted frames 50..52 would have given 98. */
    one_anim(&r, 52, 3);
    r.has_from = true;
    r.from = 48;
    r.loop = true;
    ck_assert_int_eq(eval_check(arm, &r, NULL), 0);
    struct pose *p = pose_new(arm);
    eval_run(p, &r, NULL);
    double x1 = 98.0 + (98.0 * E(1, 49) - 98.0) * E(1, 3);
    double x2 = x1 + (98.0 * E(2, 49) - x1) * E(2, 3);
    ck_assert_double_eq_tol(p->local[0].pos.x, x2, TOL);
    pose_free(p);

    /* Reverse without loop: frame 10 plays 49 - 10 = 39. */
    one_anim(&r, 10, 0);
    r.reverse = true;
    ck_assert_int_eq(eval_check(arm, &r, NULL), 0);
    p = pose_new(arm);
    eval_run(p, &r, NULL);
    ck_assert_double_eq_tol(p->local[0].pos.x, 98.0 * E(39, 49), TOL);
    pose_free(p);
    armature_free(arm);
}
END_TEST

/* ====================================================================================== */

static Suite *animate_suite(void)
{
    Suite *s = suite_create("animate");
    TCase *tc = tcase_create("interpolate");
    tcase_add_test(tc, linear_handles_are_newton_approximated);
    tcase_add_test(tc, ease_in_out_handles);
    tcase_add_test(tc, physics_handles);
    tcase_add_test(tc, snap_returns_start_value);
    tcase_add_test(tc, end_value_when_max_zero_or_past);
    tcase_add_test(tc, ease_matches_reference_on_a_grid);
    suite_add_tcase(s, tc);

    tc = tcase_create("keyframes");
    tcase_add_test(tc, before_first_keyframe_keeps_field);
    tcase_add_test(tc, between_keyframes_uses_next_handles);
    tcase_add_test(tc, after_last_keyframe_holds);
    tcase_add_test(tc, single_keyframe);
    tcase_add_test(tc, equal_frames_later_in_list_wins);
    tcase_add_test(tc, snap_keyframes_hold);
    tcase_add_test(tc, keyframe_own_frame_two_act);
    suite_add_tcase(s, tc);

    tc = tcase_create("smoothing");
    tcase_add_test(tc, smoothing_moves_part_way);
    tcase_add_test(tc, smoothing_on_first_keyframe_frame_does_not_move);
    tcase_add_test(tc, smoothing_carries_over_steps);
    suite_add_tcase(s, tc);

    tc = tcase_create("unkeyed reset");
    tcase_add_test(tc, unkeyed_return_at_once);
    tcase_add_test(tc, unkeyed_return_with_first_animation_smoothing);
    tcase_add_test(tc, unkeyed_smoothing_comes_from_animation_0);
    tcase_add_test(tc, no_animation_resets_everything);
    suite_add_tcase(s, tc);

    tc = tcase_create("several animations");
    tcase_add_test(tc, later_animation_wins);
    suite_add_tcase(s, tc);

    tc = tcase_create("discrete and tint");
    tcase_add_test(tc, discrete_elements_take_previous_keyframe);
    tcase_add_test(tc, tint_interpolates);
    suite_add_tcase(s, tc);

    tc = tcase_create("0.6/0.7 family state and tint");
    tcase_add_test(tc, ik_constraint_key_on_chain_bone_sets_family);
    tcase_add_test(tc, mimic_target_key_on_chain_bone_sets_family);
    tcase_add_test(tc, ik_mode_key_on_chain_bone_sets_family);
    tcase_add_test(tc, tint_keys_0_1_land_0_255);
    suite_add_tcase(s, tc);

    tc = tcase_create("next_kf");
    tcase_add_test(tc, missing_next_kf_is_derived);
    tcase_add_test(tc, explicit_next_kf_none_holds);
    suite_add_tcase(s, tc);

    tc = tcase_create("frames");
    tcase_add_test(tc, format_frame_loop);
    tcase_add_test(tc, format_frame_reverse);
    tcase_add_test(tc, time_frame);
    tcase_add_test(tc, time_frame_is_ms_times_fps);
    suite_add_tcase(s, tc);

    tc = tcase_create("eval");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, eval_check_rejects_bad_requests);
    tcase_add_test(tc, eval_from_decimal_whole_frames_apart);
    tcase_add_test(tc, eval_warmup_runs_rest_constructs);
    tcase_add_test(tc, eval_steps_from_to_frame);
    tcase_add_test(tc, eval_loop_formats_every_step);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(animate_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
