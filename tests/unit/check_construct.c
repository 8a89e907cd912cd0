/* Construct (SPEC.md section 2 "Construct", "Engine options"): inheritance, IK (FABRIK, Arc,
 * constraints, baked_ik), physics over several steps, weighted and path binds, the per-request
 * options, pose_bone_matrix, and independence of poses.
 *
 * Every expected number is worked out here by hand from the formulas (SPEC.md, the conformance
 * README, and for Arc IK, path binds and sway the official runtimes' published formulas the
 * SPEC refers to); the arithmetic is written out in each test, never copied from the engine's
 * output. Armatures are tiny JSON texts written with single quotes (load_q swaps them). */
#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/animate.h"
#include "engine/construct.h"
#include "engine/load.h"
#include "testhelp.h"

#define TOL 1e-9
#define PI 3.14159265358979323846
#define HALF_PI_JSON "1.5707963267948966" /* pi/2 as the JSON files spell it */

static const struct vec2 PHYS1 = {0.3, 0.3}, PHYS2 = {0.6, 0.6};

/* ---- fixtures ----------------------------------------------------------------------- */

/* Loads a JSON text written with ' for ", printf-style. */
static struct armature *load_q(const char *fmt, ...)
{
    char json[8192];
    va_list ap;
    va_start(ap, fmt);
    th_vformat_json(json, sizeof json, fmt, ap);
    va_end(ap);
    struct armature *arm = NULL;
    struct eng_error err = {0};
    int rc = th_load(json, 0, &arm, &err);
    ck_assert_msg(rc == 0, "armature did not load: %s", err.msg);
    ck_assert_ptr_nonnull(arm);
    return arm;
}

/* One step at rest: no animation, then Construct. */
static void rest_step(struct pose *p, const struct construct_opts *o)
{
    animate(p, NULL, 0);
    construct(p, o);
}

static void assert_pos(const struct pose *p, uint32_t b, double x, double y, double tol)
{
    ck_assert_msg(fabs(p->out[b].pos.x - x) < tol && fabs(p->out[b].pos.y - y) < tol,
                  "bone %u at (%.12g, %.12g), expected (%.12g, %.12g)", b, p->out[b].pos.x,
                  p->out[b].pos.y, x, y);
}

static void assert_vert(const struct pose *p, uint32_t v, double x, double y, double tol)
{
    ck_assert_msg(fabs(p->verts[v].x - x) < tol && fabs(p->verts[v].y - y) < tol,
                  "vertex %u at (%.12g, %.12g), expected (%.12g, %.12g)", v, p->verts[v].x,
                  p->verts[v].y, x, y);
}

static double dist(struct vec2 a, struct vec2 b)
{
    return hypot(a.x - b.x, a.y - b.y);
}

/* The damping step of physics: interp(2, d, a, b, (0.3,0.3), (0.6,0.6)) moves this fraction
 * of the way; d (after ratio and truncation) <= 2 reaches the target at once. Written from
 * the SPEC's interpolate (see check_animate.c for the Newton solve itself). */
static double ref_bezier(double t, double p1, double p2)
{
    double u = 1.0 - t;
    return 3.0 * u * u * t * p1 + 3.0 * u * t * t * p2 + t * t * t;
}

static double damp_fraction(double d)
{
    if (d <= 2.0)
        return 1.0;
    double x = 2.0 / d, t = x;
    for (int i = 0; i < 5; i++) {
        double u = 1.0 - t;
        double dx = 3.0 * PHYS1.x * (u * u - 2.0 * t * u) + 3.0 * PHYS2.x * (2.0 * t * u - t * t) +
                    3.0 * t * t;
        if (fabs(dx) < 1e-5)
            break;
        t -= (ref_bezier(t, PHYS1.x, PHYS2.x) - x) / dx;
        t = t < 0 ? 0 : (t > 1 ? 1 : t);
    }
    return ref_bezier(t, PHYS1.y, PHYS2.y);
}

/* ====================================================================================== */
/* Inheritance                                                                             */

START_TEST(inherit_function)
{
    /* Parent at (10, 20), rot pi/2, scale (2, 3); child local (1, 1), rot 0.25, scale
     * (0.5, 2). pos: (1*2, 1*3) = (2, 3) rotated by pi/2 -> (-3, 2), + (10, 20) = (7, 22). */
    struct bone_out parent = {.pos = {10, 20}, .scale = {2, 3}, .rot = PI / 2};
    struct bone_out child = {.pos = {1, 1}, .scale = {0.5, 2}, .rot = 0.25};
    construct_inherit(&child, &parent, parent.rot);
    ck_assert_double_eq_tol(child.pos.x, 7.0, TOL);
    ck_assert_double_eq_tol(child.pos.y, 22.0, TOL);
    ck_assert_double_eq_tol(child.rot, PI / 2 + 0.25, TOL);
    ck_assert_double_eq_tol(child.scale.x, 1.0, TOL);
    ck_assert_double_eq_tol(child.scale.y, 6.0, TOL);

    /* The orbit argument, not the parent's rotation, turns the child. */
    struct bone_out c2 = {.pos = {4, 0}, .scale = {1, 1}, .rot = 0};
    struct bone_out p2 = {.pos = {0, 0}, .scale = {1, 1}, .rot = 1.0};
    construct_inherit(&c2, &p2, PI);
    ck_assert_double_eq_tol(c2.pos.x, -4.0, TOL);
    ck_assert_double_eq_tol(c2.pos.y, 0.0, TOL);
    ck_assert_double_eq_tol(c2.rot, PI, TOL);
}
END_TEST

START_TEST(inherit_rotated_scaled_parent)
{
    struct armature *arm =
        load_q("{'bones':["
               " {'id':0,'name':'parent','pos':{'x':10,'y':20},'rot':" HALF_PI_JSON
               ",'scale':{'x':2,'y':3}},"
               " {'id':1,'name':'child','parent_id':0,'pos':{'x':1,'y':1},'rot':0.25,"
               "  'scale':{'x':0.5,'y':2}},"
               " {'id':2,'name':'grandchild','parent_id':1,'pos':{'x':2,'y':0}}]}");
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    assert_pos(p, 0, 10, 20, TOL);
    /* child: as in inherit_function. */
    assert_pos(p, 1, 7, 22, TOL);
    ck_assert_double_eq_tol(p->out[1].rot, PI / 2 + 0.25, TOL);
    ck_assert_double_eq_tol(p->out[1].scale.x, 1.0, TOL);
    ck_assert_double_eq_tol(p->out[1].scale.y, 6.0, TOL);
    /* grandchild: (2*1, 0*6) rotated by th = pi/2 + 0.25: (2 cos th, 2 sin th)
     * = (-2 sin 0.25, 2 cos 0.25), + (7, 22). */
    assert_pos(p, 2, 7 - 2 * sin(0.25), 22 + 2 * cos(0.25), TOL);
    ck_assert_double_eq_tol(p->out[2].rot, PI / 2 + 0.25, TOL);
    ck_assert_double_eq_tol(p->out[2].scale.x, 1.0, TOL);
    ck_assert_double_eq_tol(p->out[2].scale.y, 6.0, TOL);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(parent_listed_after_child)
{
    /* Bones are inherited in id order; a parent with a higher id has not been inherited
     * yet, so its child reads the parent's raw local values (the runtime's behaviour). */
    struct armature *arm =
        load_q("{'bones':["
               " {'id':0,'name':'child','parent_id':1,'pos':{'x':1,'y':0},'rot':0.1},"
               " {'id':1,'name':'parent','parent_id':2,'pos':{'x':5,'y':5},'rot':" HALF_PI_JSON
               ",'scale':{'x':2,'y':2}},"
               " {'id':2,'name':'grand','pos':{'x':100,'y':100}}]}");
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    /* child: (1*2, 0) rotated by pi/2 = (0, 2), + the parent's local (5, 5) = (5, 7);
     * not (105, 107), which is where the fully inherited parent would put it. */
    assert_pos(p, 0, 5, 7, TOL);
    ck_assert_double_eq_tol(p->out[0].rot, 0.1 + PI / 2, TOL);
    ck_assert_double_eq_tol(p->out[0].scale.x, 2.0, TOL);
    /* parent: its own parent (id 2) is also later: (5, 5) + (100, 100) unrotated. */
    assert_pos(p, 1, 105, 105, TOL);
    ck_assert_double_eq_tol(p->out[1].rot, PI / 2, TOL);
    assert_pos(p, 2, 100, 100, TOL);
    pose_free(p);
    armature_free(arm);
}
END_TEST

/* Valid but extreme numbers overflow: a parent's scale of 1e300 times its child's is inf,
 * and pose_check_finite names the first bone and field, so no NaN leaves as an answer. */
START_TEST(overflow_is_named_not_answered)
{
    struct armature *arm =
        load_q("{'bones':["
               " {'id':0,'name':'big','scale':{'x':1e300,'y':1}},"
               " {'id':1,'name':'bigger','parent_id':0,'scale':{'x':1e300,'y':1}}]}");
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    struct eng_error err = {0};
    ck_assert_int_eq(pose_check_finite(p, &err), ENG_EBADFILE);
    ck_assert_str_eq(err.msg, "bone 1 \"bigger\": its scale is not a finite number at this "
                              "frame (the file's numbers overflow)");
    pose_free(p);
    armature_free(arm);
    arm = load_q("{'bones':[{'id':0,'name':'fine','scale':{'x':1e300,'y':1}}]}");
    p = pose_new(arm);
    rest_step(p, NULL);
    ck_assert_int_eq(pose_check_finite(p, &err), 0);
    pose_free(p);
    armature_free(arm);
}
END_TEST

/* ====================================================================================== */
/* IK                                                                                      */

static struct armature *two_bone(const char *tx, const char *ty)
{
    return load_q("{'ik_root_ids':[0],'bones':["
                  " {'id':0,'name':'a','ik_target_id':2,'ik_bone_ids':[0,1]},"
                  " {'id':1,'name':'b','parent_id':0,'pos':{'x':10,'y':0},'rot':0.3},"
                  " {'id':2,'name':'target','pos':{'x':%s,'y':%s}}]}",
                  tx, ty);
}

START_TEST(fabrik_two_bone_chain)
{
    /* Chain [a, b], b 10 along a; target at (6, 8), exactly 10 away: b lands on it and a
     * points at it, rot atan2(8, 6). b is the tip: it keeps its own 0.3 on top. */
    struct armature *arm = two_bone("6", "8");
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    ck_assert_double_eq_tol(p->out[0].rot, atan2(8, 6), TOL);
    assert_pos(p, 0, 0, 0, TOL);
    assert_pos(p, 1, 6, 8, TOL);
    ck_assert_double_eq_tol(p->out[1].rot, atan2(8, 6) + 0.3, TOL);
    pose_free(p);
    armature_free(arm);

    /* Out of reach, (30, 40): the chain points straight at it, b at 10 * (0.6, 0.8). */
    arm = two_bone("30", "40");
    p = pose_new(arm);
    rest_step(p, NULL);
    assert_pos(p, 1, 6, 8, TOL);
    ck_assert_double_eq_tol(p->out[0].rot, atan2(40, 30), TOL);
    pose_free(p);
    armature_free(arm);
}
END_TEST

/* Chain [a, b, c] of two 10-long segments, target (0, 15). a_rot/b_rot set the starting
 * bend: a_rot 0, b_rot pi/2 puts the elbow right of the root->target line at (10, 0), tip
 * (10, 10); a_rot pi, b_rot -pi/2 puts it left at (-10, 0), tip (-10, 10). */
static struct armature *three_bone(const char *mode, const char *constraint, const char *a_rot,
                                   const char *b_rot, bool baked)
{
    return load_q("{'baked_ik':%s,'ik_root_ids':[0],'bones':["
                  " {'id':0,'name':'a','rot':%s,'ik_target_id':3,'ik_bone_ids':[0,1,2],"
                  "  'ik_mode':'%s','ik_constraint':'%s'},"
                  " {'id':1,'name':'b','parent_id':0,'pos':{'x':10,'y':0},'rot':%s},"
                  " {'id':2,'name':'c','parent_id':1,'pos':{'x':10,'y':0},'rot':0.2},"
                  " {'id':3,'name':'target','pos':{'x':0,'y':15}}]}",
                  baked ? "true" : "false", a_rot, mode, constraint, b_rot);
}

#define RIGHT "0", "1.5707963267948966"
#define LEFT "3.141592653589793", "-1.5707963267948966"

/* The two-link solution for target (0, 15): the elbow is 10 from the root and 10 from the
 * target: (+-r, 7.5) with r = sqrt(100 - 7.5^2) = sqrt(43.75). side = +1 right, -1 left. */
static void assert_two_link(const struct pose *p, double side, double tol)
{
    double r = sqrt(100.0 - 7.5 * 7.5);
    assert_pos(p, 0, 0, 0, tol);
    assert_pos(p, 1, side * r, 7.5, tol);
    assert_pos(p, 2, 0, 15, tol);
    ck_assert_double_eq_tol(p->out[0].rot, atan2(7.5, side * r), tol);
    ck_assert_double_eq_tol(p->out[1].rot, atan2(7.5, -side * r), tol);
    ck_assert_double_eq_tol(p->out[2].rot, atan2(7.5, -side * r) + 0.2, tol);
    /* bone lengths preserved */
    ck_assert_double_eq_tol(dist(p->out[0].pos, p->out[1].pos), 10.0, 1e-9);
    ck_assert_double_eq_tol(dist(p->out[1].pos, p->out[2].pos), 10.0, 1e-9);
}

START_TEST(fabrik_three_bone_chain)
{
    struct armature *arm = three_bone("FABRIK", "None", RIGHT, false);
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    assert_two_link(p, +1, 1e-6);
    /* Repeating the construct finds the same answer (IK starts from the FK pose). */
    rest_step(p, NULL);
    assert_two_link(p, +1, 1e-6);
    pose_free(p);
    armature_free(arm);

    arm = three_bone("FABRIK", "None", LEFT, false);
    p = pose_new(arm);
    rest_step(p, NULL);
    assert_two_link(p, -1, 1e-6);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(fabrik_four_bone_chain)
{
    /* Three 10-long segments bent into a U: a (0,0) -> b (10,0) -> c (10,10) -> d (0,10);
     * target (0, 12) is within reach (30). After ten FABRIK iterations the tip is on it and
     * every segment still 10 long. */
    struct armature *arm =
        load_q("{'ik_root_ids':[0],'bones':["
               " {'id':0,'name':'a','ik_target_id':4,'ik_bone_ids':[0,1,2,3]},"
               " {'id':1,'name':'b','parent_id':0,'pos':{'x':10,'y':0},'rot':" HALF_PI_JSON "},"
               " {'id':2,'name':'c','parent_id':1,'pos':{'x':10,'y':0},'rot':" HALF_PI_JSON "},"
               " {'id':3,'name':'d','parent_id':2,'pos':{'x':10,'y':0}},"
               " {'id':4,'name':'target','pos':{'x':0,'y':12}}]}");
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    assert_pos(p, 0, 0, 0, TOL);
    ck_assert_double_lt(dist(p->out[3].pos, (struct vec2){0, 12}), 1e-3);
    for (int b = 0; b < 3; b++)
        ck_assert_double_eq_tol(dist(p->out[b].pos, p->out[b + 1].pos), 10.0, 1e-9);
    /* each chain bone points at the next */
    for (int b = 0; b < 3; b++) {
        struct vec2 d = {p->out[b + 1].pos.x - p->out[b].pos.x,
                         p->out[b + 1].pos.y - p->out[b].pos.y};
        ck_assert_double_eq_tol(p->out[b].rot, atan2(d.y, d.x), 1e-9);
    }
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(ik_zero_rotation_still_overrides)
{
    /* a starts turned by 0.5; the target (10, 0) pulls b onto the x axis: a's IK rotation is
     * exactly 0 and must replace the 0.5. */
    struct armature *arm =
        load_q("{'ik_root_ids':[0],'bones':["
               " {'id':0,'name':'a','rot':0.5,'ik_target_id':2,'ik_bone_ids':[0,1]},"
               " {'id':1,'name':'b','parent_id':0,'pos':{'x':10,'y':0}},"
               " {'id':2,'name':'target','pos':{'x':10,'y':0}}]}");
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    ck_assert_double_eq_tol(p->out[0].rot, 0.0, TOL);
    assert_pos(p, 1, 10, 0, TOL);
    pose_free(p);
    armature_free(arm);
}
END_TEST

/* Arc on a straight chain a (0,0) -> b (10,0) -> c (20,0), target (0, 16), by the official
 * runtimes' arc_ik: max_len = |c - a| = 20; dist = 10/20, 20/20; base = (0, 16),
 * base_mag = min(16, 20) = 16; peak = 20/16 = 1.25; valley = 16/20 = 0.8. Each bone goes to
 * (x * valley, (1 - peak) sin(dist * 3.14) base_mag) rotated by the base angle pi/2, i.e.
 * (x, y) -> (-y, x):
 *   b: (8, -4 sin(1.57))  -> (4 sin(1.57), 8)
 *   c: (16, -4 sin(3.14)) -> (4 sin(3.14), 16)
 * Then a points at b and b at c; the constructed chain keeps the bone lengths (10). */
struct arc_expect {
    double rot_a, rot_b;
};

static struct arc_expect arc_expected(void)
{
    struct vec2 b = {4 * sin(0.5 * 3.14), 8}, c = {4 * sin(1.0 * 3.14), 16};
    return (struct arc_expect){atan2(b.y, b.x), atan2(c.y - b.y, c.x - b.x)};
}

static void assert_chain_rots(const struct pose *p, double rot_a, double rot_b, double tol)
{
    ck_assert_double_eq_tol(p->out[0].rot, rot_a, tol);
    ck_assert_double_eq_tol(p->out[1].rot, rot_b, tol);
    ck_assert_double_eq_tol(p->out[2].rot, rot_b, tol); /* the tip (local rot 0) */
    double bx = 10 * cos(rot_a), by = 10 * sin(rot_a);
    assert_pos(p, 1, bx, by, tol * 10);
    assert_pos(p, 2, bx + 10 * cos(rot_b), by + 10 * sin(rot_b), tol * 20);
}

static struct armature *straight_chain(const char *mode, const char *constraint, const char *anims)
{
    return load_q("{'ik_root_ids':[0],'bones':["
                  " {'id':0,'name':'a','ik_target_id':3,'ik_bone_ids':[0,1,2],"
                  "  'ik_mode':'%s','ik_constraint':'%s'},"
                  " {'id':1,'name':'b','parent_id':0,'pos':{'x':10,'y':0}},"
                  " {'id':2,'name':'c','parent_id':1,'pos':{'x':10,'y':0}},"
                  " {'id':3,'name':'target','pos':{'x':0,'y':16}}],"
                  " 'animations':[%s]}",
                  mode, constraint, anims);
}

START_TEST(arc_ik)
{
    struct armature *arm = straight_chain("Arc", "None", "");
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    struct arc_expect e = arc_expected();
    assert_chain_rots(p, e.rot_a, e.rot_b, TOL);
    /* Sanity of the hand numbers: the elbow bends right of the line, about atan2(8, 4). */
    ck_assert_double_lt(fabs(e.rot_a - atan2(8, 4)), 1e-3);
    pose_free(p);
    armature_free(arm);
}
END_TEST

/* The straight chain a -> b -> c solved by Arc toward a target at (tx, ty), with a's scale s
 * (0 collapses the chain onto a). */
static struct armature *arc_chain_to(double tx, double ty, double s)
{
    return load_q("{'ik_root_ids':[0],'bones':["
                  " {'id':0,'name':'a','ik_target_id':3,'ik_bone_ids':[0,1,2],'ik_mode':'Arc',"
                  "  'scale':{'x':%.17g,'y':%.17g}},"
                  " {'id':1,'name':'b','parent_id':0,'pos':{'x':10,'y':0}},"
                  " {'id':2,'name':'c','parent_id':1,'pos':{'x':10,'y':0}},"
                  " {'id':3,'name':'target','pos':{'x':%.17g,'y':%.17g}}]}",
                  s, s, tx, ty);
}

START_TEST(arc_ik_target_on_root)
{
    /* The reference's arc divides by the root-to-target distance, so a target exactly on the
     * root gives NaN. skeld bends the chain as the arc does when the target is a hair away
     * (the limit; the direction of a zero vector is angle 0, as atan2 has it), so an
     * animation passing the target over the root does not fail that frame. */
    struct armature *on = arc_chain_to(0, 0, 1), *near = arc_chain_to(1e-9, 0, 1);
    struct pose *p = pose_new(on), *q = pose_new(near);
    rest_step(p, NULL);
    rest_step(q, NULL);
    struct eng_error err = {0};
    ck_assert_int_eq(pose_check_finite(p, &err), 0);
    for (int b = 0; b < 3; b++) {
        ck_assert_double_eq_tol(p->out[b].rot, q->out[b].rot, 1e-6);
        assert_pos(p, (uint32_t)b, q->out[b].pos.x, q->out[b].pos.y, 1e-6);
    }
    /* Folded back on itself: a points down at b, b up at c. */
    ck_assert_double_eq_tol(p->out[0].rot, -PI / 2, 1e-9);
    ck_assert_double_eq_tol(p->out[1].rot, PI / 2, 1e-9);
    pose_free(p);
    pose_free(q);
    armature_free(on);
    armature_free(near);
}
END_TEST

START_TEST(arc_ik_collapsed_chain)
{
    /* a scaled to 0 (a common way to hide a limb) puts b and c on a: the chain has no length
     * to bend, and the reference's 0/0 gives NaN. skeld leaves the positions where they are,
     * as FABRIK would, so the frame is finite and a and b point along angle 0. */
    struct armature *arm = arc_chain_to(0, 16, 0);
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    struct eng_error err = {0};
    ck_assert_int_eq(pose_check_finite(p, &err), 0);
    for (int b = 0; b < 3; b++)
        assert_pos(p, (uint32_t)b, 0, 0, 1e-12);
    ck_assert_double_eq_tol(p->out[0].rot, 0.0, 1e-12);
    ck_assert_double_eq_tol(p->out[1].rot, 0.0, 1e-12);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(ik_mode_keyframe_switches_solver)
{
    /* The same straight chain solved by FABRIK: two 10-long links to (0, 16) put the elbow
     * at (6, 8) (10 from both ends, on the side the chain starts: right). An IkMode
     * keyframe "Arc" switches the family to Arc. */
    struct armature *arm =
        straight_chain("FABRIK", "None",
                       "{'name':'arc','keyframes':[{'frame':0,'bone_id':0,'element':'IkMode',"
                       "'value_str':'Arc'}]}");
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    assert_chain_rots(p, atan2(8, 6), atan2(8, -6), 1e-6);
    ck_assert_double_lt(dist(p->out[2].pos, (struct vec2){0, 16}), 1e-6);

    struct anim_play play = {0, 0, 0};
    animate(p, &play, 1);
    construct(p, NULL);
    struct arc_expect e = arc_expected();
    assert_chain_rots(p, e.rot_a, e.rot_b, TOL);

    rest_step(p, NULL); /* back to FABRIK when the animation stops */
    assert_chain_rots(p, atan2(8, 6), atan2(8, -6), 1e-6);
    pose_free(p);
    armature_free(arm);
}
END_TEST

/* Mirror about the root->target line (angle pi/2): rot' = 2 * pi/2 - rot = pi - rot. The
 * mirrored right-elbow solution is the left-elbow one and vice versa. */
START_TEST(constraint_clockwise)
{
    /* Right elbow: joint x base = joint.x * 1 - 0 * joint.y > 0: Clockwise mirrors it. */
    struct armature *arm = three_bone("FABRIK", "Clockwise", RIGHT, false);
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    assert_two_link(p, -1, 1e-6);
    pose_free(p);
    armature_free(arm);
    /* Left elbow (cross < 0): Clockwise leaves it. */
    arm = three_bone("FABRIK", "Clockwise", LEFT, false);
    p = pose_new(arm);
    rest_step(p, NULL);
    assert_two_link(p, -1, 1e-6);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(constraint_counter_clockwise)
{
    struct armature *arm = three_bone("FABRIK", "CounterClockwise", LEFT, false);
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    assert_two_link(p, +1, 1e-6); /* left elbow mirrored to the right */
    pose_free(p);
    armature_free(arm);
    arm = three_bone("FABRIK", "CounterClockwise", RIGHT, false);
    p = pose_new(arm);
    rest_step(p, NULL);
    assert_two_link(p, +1, 1e-6); /* right elbow kept */
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(constraint_none_keeps_either_bend)
{
    /* None never mirrors: the elbow stays on the side it started, right (cross > 0, what
     * Clockwise mirrors) or left (cross < 0, what CounterClockwise mirrors). */
    struct armature *arm = three_bone("FABRIK", "None", RIGHT, false);
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    assert_two_link(p, +1, 1e-6);
    pose_free(p);
    armature_free(arm);
    arm = three_bone("FABRIK", "None", LEFT, false);
    p = pose_new(arm);
    rest_step(p, NULL);
    assert_two_link(p, -1, 1e-6);
    pose_free(p);
    armature_free(arm);
    /* Arc bends right; None keeps it (see constraint_on_arc for Clockwise). */
    arm = straight_chain("Arc", "None", "");
    p = pose_new(arm);
    rest_step(p, NULL);
    ck_assert_double_gt(p->out[1].pos.x, 0.0);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(constraint_on_arc)
{
    /* Arc bends the elbow right of the line (cross > 0): Clockwise mirrors the rotations,
     * pi - rot; CounterClockwise keeps them. */
    struct arc_expect e = arc_expected();
    struct armature *arm = straight_chain("Arc", "Clockwise", "");
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    assert_chain_rots(p, PI - e.rot_a, PI - e.rot_b, TOL);
    ck_assert_double_lt(p->out[1].pos.x, 0.0); /* elbow now left */
    pose_free(p);
    armature_free(arm);

    arm = straight_chain("Arc", "CounterClockwise", "");
    p = pose_new(arm);
    rest_step(p, NULL);
    assert_chain_rots(p, e.rot_a, e.rot_b, TOL);
    ck_assert_double_gt(p->out[1].pos.x, 0.0);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(baked_ik_skips_ik)
{
    /* With baked_ik the chain stays where forward kinematics puts it: b (10, 0), c (10, 10). */
    struct armature *arm = three_bone("FABRIK", "Clockwise", RIGHT, true);
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    assert_pos(p, 1, 10, 0, TOL);
    assert_pos(p, 2, 10, 10, TOL);
    ck_assert_double_eq_tol(p->out[0].rot, 0.0, TOL);
    ck_assert_double_eq_tol(p->out[1].rot, PI / 2, TOL);
    ck_assert_double_eq_tol(p->out[2].rot, PI / 2 + 0.2, TOL);
    pose_free(p);
    armature_free(arm);
}
END_TEST

/* ====================================================================================== */
/* Physics                                                                                 */

/* bob: local (10, -6) under a root at the origin, position damping; tip: 1 along bob. The
 * physics state starts at (0, 0) (absent from the file). */
static struct armature *damped(const char *damping, const char *ratio)
{
    return load_q("{'bones':[{'id':0,'name':'root'},"
                  " {'id':1,'name':'bob','parent_id':0,'pos':{'x':10,'y':-6},"
                  "  'phys_pos_damping':%s,'phys_pos_ratio':%s},"
                  " {'id':2,'name':'tip','parent_id':1,'pos':{'x':1,'y':0}}]}",
                  damping, ratio);
}

/* After n steps from 0 toward t with fraction f per step: t (1 - (1 - f)^n). */
static double approach(double target, double f, int n)
{
    return target * (1.0 - pow(1.0 - f, n));
}

START_TEST(position_damping_follows_and_converges)
{
    struct armature *arm = damped("4", "0");
    struct pose *p = pose_new(arm);
    double f = damp_fraction(4); /* ~0.5 */
    ck_assert_double_eq_tol(f, 0.5, 1e-6);
    for (int n = 1; n <= 40; n++) {
        rest_step(p, NULL);
        double x = approach(10, f, n), y = approach(-6, f, n);
        assert_pos(p, 1, x, y, TOL);
        assert_pos(p, 2, x + 1, y, TOL); /* the child follows the damped bone */
        ck_assert_double_eq_tol(p->out[1].rot, 0.0, TOL);
    }
    /* Converged: (1/2)^40 is nothing. */
    assert_pos(p, 1, 10, -6, 1e-9);
    /* After the first step it is behind: 5 of 10. */
    pose_reset(p);
    rest_step(p, NULL);
    ck_assert_double_lt(p->out[1].pos.x, 6.0);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(position_damping_is_truncated)
{
    /* 4.7 is truncated to 4 whole frames (SPEC section 3, correction 6). */
    struct armature *arm = damped("4.7", "0");
    struct pose *p = pose_new(arm);
    double f = damp_fraction(4);
    for (int n = 1; n <= 3; n++) {
        rest_step(p, NULL);
        assert_pos(p, 1, approach(10, f, n), approach(-6, f, n), TOL);
    }
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(position_ratio)
{
    /* ratio 1: x damping 4 * (1 - 1) = 0, x follows at once; y keeps 4. */
    struct armature *arm = damped("4", "1");
    struct pose *p = pose_new(arm);
    double f4 = damp_fraction(4), f8 = damp_fraction(8);
    for (int n = 1; n <= 3; n++) {
        rest_step(p, NULL);
        assert_pos(p, 1, 10, approach(-6, f4, n), TOL);
    }
    pose_free(p);
    armature_free(arm);

    /* ratio 0.5, damping 8: x 8 * 0.5 = 4, y 8. */
    arm = damped("8", "0.5");
    p = pose_new(arm);
    for (int n = 1; n <= 3; n++) {
        rest_step(p, NULL);
        assert_pos(p, 1, approach(10, f4, n), approach(-6, f8, n), TOL);
    }
    pose_free(p);
    armature_free(arm);

    /* ratio -0.5, damping 8: y 8 * (1 - 0.5) = 4, x 8. */
    arm = damped("8", "-0.5");
    p = pose_new(arm);
    for (int n = 1; n <= 3; n++) {
        rest_step(p, NULL);
        assert_pos(p, 1, approach(10, f8, n), approach(-6, f4, n), TOL);
    }
    ck_assert_double_eq_tol(f8, 0.25, 1e-6);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(scale_damping)
{
    /* Scale (2, 3) damped 4 from a stored state (1, 1); child at local (1, 1). */
    static const char *fmt =
        "{'bones':[{'id':0,'name':'root'},"
        " {'id':1,'name':'grow','parent_id':0,'scale':{'x':2,'y':3},'phys_scale_damping':4,"
        "  'phys_scale_ratio':%s,'phys_global_scale':{'x':1,'y':1}},"
        " {'id':2,'name':'kid','parent_id':1,'pos':{'x':1,'y':1}}]}";
    double f = damp_fraction(4);
    struct armature *arm = load_q(fmt, "0");
    struct pose *p = pose_new(arm);
    for (int n = 1; n <= 4; n++) {
        rest_step(p, NULL);
        double sx = 1 + approach(1, f, n), sy = 1 + approach(2, f, n);
        ck_assert_double_eq_tol(p->out[1].scale.x, sx, TOL);
        ck_assert_double_eq_tol(p->out[1].scale.y, sy, TOL);
        assert_pos(p, 2, sx, sy, TOL); /* (1, 1) scaled by the damped scale */
        ck_assert_double_eq_tol(p->out[2].scale.x, sx, TOL);
    }
    pose_free(p);
    armature_free(arm);

    /* ratio -1: y damping 4 * 0 = 0, y at once; ratio 1: x at once. */
    arm = load_q(fmt, "-1");
    p = pose_new(arm);
    rest_step(p, NULL);
    ck_assert_double_eq_tol(p->out[1].scale.x, 1 + f, TOL);
    ck_assert_double_eq_tol(p->out[1].scale.y, 3.0, TOL);
    pose_free(p);
    armature_free(arm);
    arm = load_q(fmt, "1");
    p = pose_new(arm);
    rest_step(p, NULL);
    ck_assert_double_eq_tol(p->out[1].scale.x, 2.0, TOL);
    ck_assert_double_eq_tol(p->out[1].scale.y, 1 + 2 * f, TOL);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(rotation_damping)
{
    /* World rotation 0.5 + 0.5 = 1; state from 0, damping 4: each step adds 1/4 of the
     * remaining angle: 0.25, 0.4375, 0.578125. */
    struct armature *arm =
        load_q("{'bones':[{'id':0,'name':'root','rot':0.5},"
               " {'id':1,'name':'arm','parent_id':0,'rot':0.5,'pos':{'x':10,'y':0},"
               "  'phys_rot_damping':4},"
               " {'id':2,'name':'hand','parent_id':1,'pos':{'x':2,'y':0}}]}");
    struct pose *p = pose_new(arm);
    const double expect[] = {0.25, 0.4375, 0.578125};
    for (int n = 0; n < 3; n++) {
        rest_step(p, NULL);
        ck_assert_double_eq_tol(p->out[1].rot, expect[n], TOL);
        /* position unaffected: (10, 0) rotated by the root's 0.5 */
        assert_pos(p, 1, 10 * cos(0.5), 10 * sin(0.5), TOL);
        /* the child turns with the damped rotation */
        assert_pos(p, 2, 10 * cos(0.5) + 2 * cos(expect[n]), 10 * sin(0.5) + 2 * sin(expect[n]),
                   TOL);
        ck_assert_double_eq_tol(p->out[2].rot, expect[n], TOL);
    }
    pose_free(p);
    armature_free(arm);

    /* The shortest way round: from -3 toward 3 is 6 - 2 pi (about -0.28), not +6. */
    arm = load_q("{'bones':[{'id':0,'name':'spin','rot':3,'phys_rot_damping':4,"
                 "'phys_global_rot':-3}]}");
    p = pose_new(arm);
    rest_step(p, NULL);
    ck_assert_double_eq_tol(p->out[0].rot, -3 + (6 - 2 * PI) / 4, TOL);
    pose_free(p);
    armature_free(arm);
}
END_TEST

/* ear: local (6, 8) under a root at the origin, sway 1, bounce b; state all 0. By the
 * runtimes' physics (SkelForm runtimes, sway): with phi = atan2(8, 6) the angle of the ear
 * around its parent,
 *   buffer = shortest(orbit, phi) [+ orbit_vel / (2 - b), and orbit_vel = buffer, if b > 0]
 *   orbit += buffer / 10
 *   orbit += shortest(orbit, atan2(-vel.y, -vel.x)) * |vel| / 1000 * sway
 *   diff = phi - orbit
 * and the final pass turns the ear by parent.rot - diff: it sits at angle orbit, rot -diff.
 * No position damping: the position state jumps to (6, 8) in step 1 (vel (6, 8), |vel| 10)
 * and stays (vel 0 afterwards). */
static void assert_ear(const struct pose *p, double diff)
{
    double phi = atan2(8, 6);
    ck_assert_double_eq_tol(p->out[1].rot, -diff, TOL);
    assert_pos(p, 1, 10 * cos(phi - diff), 10 * sin(phi - diff), TOL);
}

START_TEST(sway_and_bounce_move_the_orbit)
{
    static const char *fmt = "{'bones':[{'id':0,'name':'root'},"
                             " {'id':1,'name':'ear','parent_id':0,'pos':{'x':6,'y':8},"
                             "  'phys_sway':1,'phys_rot_bounce':%s}]}";
    double phi = atan2(8, 6);
    /* Step 1 (same with or without bounce, orbit_vel starts 0):
     * orbit = phi/10; the swing angle atan2(-8, -6) = phi - pi; shortest(phi/10, phi - pi)
     * = 0.9 phi - pi (inside (-pi, pi]); orbit += (0.9 phi - pi) * 10/1000. */
    double orbit1 = phi / 10 + (0.9 * phi - PI) * 0.01;
    double diff1 = phi - orbit1;

    /* No bounce: afterwards orbit += (phi - orbit)/10, so diff shrinks by 0.9 a step. */
    struct armature *arm = load_q(fmt, "0");
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    assert_ear(p, diff1);
    ck_assert_double_gt(fabs(diff1), 0.5); /* the ear visibly lags */
    double diff = diff1;
    for (int n = 2; n <= 30; n++) {
        rest_step(p, NULL);
        diff *= 0.9;
        assert_ear(p, diff);
    }
    pose_free(p);
    armature_free(arm);

    /* Bounce 0.5: step 2 buffer = diff1 + phi / 1.5 (orbit_vel was phi), step 3 buffer =
     * diff2 + buffer2 / 1.5. */
    arm = load_q(fmt, "0.5");
    p = pose_new(arm);
    rest_step(p, NULL);
    assert_ear(p, diff1);
    double buf2 = diff1 + phi / 1.5;
    double orbit2 = orbit1 + buf2 / 10;
    rest_step(p, NULL);
    assert_ear(p, phi - orbit2);
    double buf3 = (phi - orbit2) + buf2 / 1.5;
    double orbit3 = orbit2 + buf3 / 10;
    rest_step(p, NULL);
    assert_ear(p, phi - orbit3);
    /* The bounce carries the orbit past the rest angle: diff changes sign at some point,
     * which plain sway (above, diff * 0.9^n) never does. */
    bool overshot = false;
    for (int n = 4; n <= 30; n++) {
        rest_step(p, NULL);
        if (p->out[1].rot > 0) /* rot = -diff > 0: past phi */
            overshot = true;
        ck_assert_double_eq_tol(dist(p->out[1].pos, p->out[0].pos), 10.0, TOL);
    }
    ck_assert(overshot);
    pose_free(p);
    armature_free(arm);
}
END_TEST

/* A pendulum (sway 1, bounce 0.5) hanging 40 below a holder that the animation moves +200 in
 * x and turns by 1 over 10 frames. back: the pendulum is bone 0 and its parent, the holder,
 * bone 1. Otherwise the ids are swapped, so the parent comes first. */
static struct armature *sway_rig(bool back)
{
    static const char *pendulum = "{'id':%d,'name':'pendulum','parent_id':%d,"
                                  "'pos':{'x':0,'y':-40},'phys_sway':1,'phys_rot_bounce':0.5}";
    static const char *holder = "{'id':%d,'name':'holder'}";
    char pend[256], hold[64];
    snprintf(pend, sizeof pend, pendulum, back ? 0 : 1, back ? 1 : 0);
    snprintf(hold, sizeof hold, holder, back ? 1 : 0);
    int h = back ? 1 : 0;
    return load_q("{'bones':[%s,%s],'animations':[{'name':'swing','keyframes':["
                  " {'frame':0,'bone_id':%d,'element':'PositionX','value':0},"
                  " {'frame':0,'bone_id':%d,'element':'Rotation','value':0},"
                  " {'frame':10,'bone_id':%d,'element':'PositionX','value':200},"
                  " {'frame':10,'bone_id':%d,'element':'Rotation','value':1}]}]}",
                  back ? pend : hold, back ? hold : pend, h, h, h, h);
}

START_TEST(sway_with_parent_listed_after_child)
{
    /* The SPEC's sway rule has no exception for the order of ids: the raw parent a child
     * reads when its parent comes later is turned by -orbit_diff all the same. So the
     * pendulum swings exactly as in the parent-first rig, step by step. */
    struct armature *back = sway_rig(true), *front = sway_rig(false);
    struct pose *pb = pose_new(back), *pf = pose_new(front);
    for (int f = 0; f <= 8; f++) {
        struct anim_play pl = {0, f, 0};
        animate(pb, &pl, 1);
        construct(pb, NULL);
        animate(pf, &pl, 1);
        construct(pf, NULL);
        assert_pos(pb, 0, pf->out[1].pos.x, pf->out[1].pos.y, 1e-9);
        ck_assert_double_eq_tol(pb->out[0].rot, pf->out[1].rot, 1e-9);
        assert_pos(pb, 1, pf->out[0].pos.x, pf->out[0].pos.y, 1e-9);
    }
    /* And it does swing: a rigid pendulum would turn with the holder (rot 0.8 at frame 8)
     * and hang at holder + R(0.8)(0, -40). */
    const struct bone_out *hold = &pb->out[1], *pend = &pb->out[0];
    ck_assert_double_eq_tol(hold->rot, 0.8, 1e-6);
    ck_assert_double_gt(fabs(pend->rot - hold->rot), 0.1);
    struct vec2 rigid = {hold->pos.x + 40 * sin(hold->rot), hold->pos.y - 40 * cos(hold->rot)};
    ck_assert_double_gt(dist(pend->pos, rigid), 1.0);
    /* Still 40 from the holder: sway only turns it. */
    ck_assert_double_eq_tol(dist(pend->pos, hold->pos), 40.0, 1e-9);
    pose_free(pb);
    pose_free(pf);
    armature_free(back);
    armature_free(front);
}
END_TEST

/* ====================================================================================== */
/* Mesh binds                                                                              */

START_TEST(weighted_binds)
{
    /* mesh at (5, 0), scale (2, 1): its own transform takes v to (2 v.x + 5, v.y).
     * handle at (100, 0), rot pi/2: v -> (100 - v.y, v.x).
     *   v0 (10, 0)  weight 0:   own (25, 0)
     *   v1 (0, 10)  weight 1:   handle's (90, 0)
     *   v2 (10, 10) weight 0.5: halfway between own (25, 10) and handle's (90, 10): (57.5, 10)
     * An unset bind (bone -1) is skipped. */
    struct armature *arm =
        load_q("{'bones':["
               " {'id':0,'name':'mesh','pos':{'x':5,'y':0},'scale':{'x':2,'y':1},"
               "  'vertices':[{'id':0,'pos':{'x':10,'y':0}},{'id':1,'pos':{'x':0,'y':10}},"
               "              {'id':2,'pos':{'x':10,'y':10}}],"
               "  'indices':[0,1,2],"
               "  'binds':[{'bone_id':1,'is_path':false,'verts':[{'id':0,'weight':0},"
               "             {'id':1,'weight':1},{'id':2,'weight':0.5}]},"
               "           {'bone_id':-1,'verts':[{'id':0,'weight':1}]}]},"
               " {'id':1,'name':'handle','pos':{'x':100,'y':0},'rot':" HALF_PI_JSON "}]}");
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    assert_vert(p, 0, 25, 0, TOL);
    assert_vert(p, 1, 90, 0, TOL);
    assert_vert(p, 2, 57.5, 10, TOL);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(path_binds)
{
    /* Three path binds on bones at P1 (0,0), P2 (10,0), P3 (10,10). Segment normals
     * (-dy, dx) normalised: P1->P2 (0, 1), P2->P3 (-1, 0); the first bind has no previous
     * and the last no next segment (zero normal). Each vertex: bind bone position +
     * init_pos rotated by the angle of (prev normal + next normal), times the weight.
     *   v0 (2,0) w 1 on P1: angle of (0,1) = 90 deg:    (0,0) + (0, 2)            = (0, 2)
     *   v1 (2,0) w 1 on P2: angle of (-1,1) = 135 deg:  (10,0) + 2 (-1/r2, 1/r2)  = (10 - r2, r2)
     *   v2 (2,1) w .5 on P3: angle of (-1,0) = 180 deg: (10,10) + .5 (-2, -1)     = (9, 9.5) */
    struct armature *arm =
        load_q("{'bones':["
               " {'id':0,'name':'mesh','vertices':[{'id':0,'pos':{'x':2,'y':0}},"
               "   {'id':1,'pos':{'x':2,'y':0}},{'id':2,'pos':{'x':2,'y':1}}],"
               "  'binds':[{'bone_id':1,'is_path':true,'verts':[{'id':0,'weight':1}]},"
               "           {'bone_id':2,'is_path':true,'verts':[{'id':1,'weight':1}]},"
               "           {'bone_id':3,'is_path':true,'verts':[{'id':2,'weight':0.5}]}]},"
               " {'id':1,'name':'p1'},"
               " {'id':2,'name':'p2','pos':{'x':10,'y':0}},"
               " {'id':3,'name':'p3','pos':{'x':10,'y':10}}]}");
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    double r2 = sqrt(2.0);
    assert_vert(p, 0, 0, 2, TOL);
    assert_vert(p, 1, 10 - r2, r2, TOL);
    assert_vert(p, 2, 9, 9.5, TOL);
    pose_free(p);
    armature_free(arm);
}
END_TEST

/* The plan skips placing a mesh's vertices on its bone only where path binds lay all of them
 * before any weighted bind reads one: there the vertices are the same, to the bit, as when
 * they are placed first; a vertex no path bind reaches, or a weighted bind first, keeps the
 * placement. */
static void assert_laid(const char *json, bool laid)
{
    struct armature *arm = load_q(json);
    struct arm_bone *mesh = &arm->bones[0];
    ck_assert_int_eq(mesh->verts_laid_by_paths, laid);
    struct pose *a = pose_new(arm), *b = pose_new(arm);
    rest_step(a, NULL);
    mesh->verts_laid_by_paths = false; /* place them first, as the reference does */
    rest_step(b, NULL);
    for (uint32_t v = 0; v < arm->vert_count; v++)
        ck_assert_msg(a->verts[v].x == b->verts[v].x && a->verts[v].y == b->verts[v].y,
                      "vertex %u: (%.17g, %.17g) against (%.17g, %.17g)", v, a->verts[v].x,
                      a->verts[v].y, b->verts[v].x, b->verts[v].y);
    pose_free(a);
    pose_free(b);
    armature_free(arm);
}

START_TEST(path_binds_laying_every_vertex)
{
    static const char *const tail = " {'id':1,'name':'p1'},"
                                    " {'id':2,'name':'p2','pos':{'x':10,'y':0}}]}";
    char json[1024];
    /* both vertices laid by paths, one twice */
    snprintf(
        json, sizeof json,
        "{'bones':[{'id':0,'name':'mesh','pos':{'x':5,'y':3},'rot':0.4,"
        "'vertices':[{'id':0,'pos':{'x':2,'y':0}},{'id':1,'pos':{'x':1,'y':1}}],"
        "'binds':[{'bone_id':1,'is_path':true,'verts':[{'id':0,'weight':1},"
        "{'id':1,'weight':0.5}]},{'bone_id':2,'is_path':true,'verts':[{'id':1,'weight':1}]}]},%s",
        tail);
    assert_laid(json, true);
    /* vertex 1 is not reached: it keeps its placement */
    snprintf(json, sizeof json,
             "{'bones':[{'id':0,'name':'mesh','pos':{'x':5,'y':3},'rot':0.4,"
             "'vertices':[{'id':0,'pos':{'x':2,'y':0}},{'id':1,'pos':{'x':1,'y':1}}],"
             "'binds':[{'bone_id':1,'is_path':true,'verts':[{'id':0,'weight':1}]}]},%s",
             tail);
    assert_laid(json, false);
    /* a weighted bind pulls vertex 0 from its placement before a path lays it */
    snprintf(json, sizeof json,
             "{'bones':[{'id':0,'name':'mesh','pos':{'x':5,'y':3},'rot':0.4,"
             "'vertices':[{'id':0,'pos':{'x':2,'y':0}},{'id':1,'pos':{'x':1,'y':1}}],"
             "'binds':[{'bone_id':2,'is_path':false,'verts':[{'id':0,'weight':0.5}]},"
             "{'bone_id':1,'is_path':true,'verts':[{'id':0,'weight':1},{'id':1,'weight':1}]}]},%s",
             tail);
    assert_laid(json, false);
}
END_TEST

/* ====================================================================================== */
/* Engine options                                                                          */

/* One bone at (10, 5), rot 0.5, with a vertex at local (1, 0): world vertex
 * (10 + cos 0.5, 5 + sin 0.5). */
static const char *OPTS_ARM = "{'bones':[{'id':0,'name':'b','pos':{'x':10,'y':5},'rot':0.5,"
                              " 'vertices':[{'id':0,'pos':{'x':1,'y':0}}]}]}";

static void run_opts(struct armature *arm, struct construct_opts *o, struct pose **out)
{
    *out = pose_new(arm);
    rest_step(*out, o);
}

START_TEST(options_position_and_scale)
{
    struct armature *arm = load_q(OPTS_ARM);
    struct construct_opts o;
    construct_opts_default(&o);
    struct pose *p;
    run_opts(arm, &o, &p); /* identity */
    assert_pos(p, 0, 10, 5, TOL);
    assert_vert(p, 0, 10 + cos(0.5), 5 + sin(0.5), TOL);
    pose_free(p);

    o.position = (struct vec2){100, 50};
    o.scale = (struct vec2){2, 3};
    run_opts(arm, &o, &p);
    /* positions scaled, then moved: (10*2 + 100, 5*3 + 50) */
    assert_pos(p, 0, 120, 65, TOL);
    ck_assert_double_eq_tol(p->out[0].scale.x, 2, TOL);
    ck_assert_double_eq_tol(p->out[0].scale.y, 3, TOL);
    ck_assert_double_eq_tol(p->out[0].rot, 0.5, TOL);
    assert_vert(p, 0, (10 + cos(0.5)) * 2 + 100, (5 + sin(0.5)) * 3 + 50, TOL);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(options_y_down)
{
    struct armature *arm = load_q(OPTS_ARM);
    struct construct_opts o;
    construct_opts_default(&o);
    o.y_down = true;
    struct pose *p;
    run_opts(arm, &o, &p);
    assert_pos(p, 0, 10, -5, TOL);
    ck_assert_double_eq_tol(p->out[0].rot, -0.5, TOL);
    ck_assert_double_eq_tol(p->out[0].scale.y, 1, TOL);
    assert_vert(p, 0, 10 + cos(0.5), -(5 + sin(0.5)), TOL);
    pose_free(p);

    /* y-down with a position: y negated, then moved. */
    o.position = (struct vec2){0, 100};
    run_opts(arm, &o, &p);
    assert_pos(p, 0, 10, 95, TOL);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(options_one_negative_axis_flips_rotation)
{
    struct armature *arm = load_q(OPTS_ARM);
    struct construct_opts o;
    construct_opts_default(&o);
    struct pose *p;
    o.scale = (struct vec2){-1, 1};
    run_opts(arm, &o, &p);
    assert_pos(p, 0, -10, 5, TOL);
    ck_assert_double_eq_tol(p->out[0].rot, -0.5, TOL);
    ck_assert_double_eq_tol(p->out[0].scale.x, -1, TOL);
    pose_free(p);

    o.scale = (struct vec2){1, -2};
    run_opts(arm, &o, &p);
    assert_pos(p, 0, 10, -10, TOL);
    ck_assert_double_eq_tol(p->out[0].rot, -0.5, TOL);
    pose_free(p);

    o.scale = (struct vec2){-1, -1}; /* both axes: a half turn, no flip */
    run_opts(arm, &o, &p);
    assert_pos(p, 0, -10, -5, TOL);
    ck_assert_double_eq_tol(p->out[0].rot, 0.5, TOL);
    pose_free(p);

    o.scale = (struct vec2){-1, 1}; /* y-down negates, the flip negates again */
    o.y_down = true;
    run_opts(arm, &o, &p);
    assert_pos(p, 0, -10, -5, TOL);
    ck_assert_double_eq_tol(p->out[0].rot, 0.5, TOL);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(options_velocity_moves_physics_state)
{
    /* bob damped 4 from 0 toward (10, -6), fraction f a step. With velocity (3, -1) the
     * step itself shows the usual 10 f, then the state is moved by -velocity; the next step
     * (no options) continues from there. */
    struct armature *arm = damped("4", "0");
    struct pose *p = pose_new(arm);
    struct pose *q = pose_new(arm);
    double f = damp_fraction(4);
    struct construct_opts o;
    construct_opts_default(&o);
    o.velocity = (struct vec2){3, -1};
    rest_step(p, &o);
    rest_step(q, NULL);
    assert_pos(p, 1, 10 * f, -6 * f, TOL);
    double sx = 10 * f - 3, sy = -6 * f + 1;
    rest_step(p, NULL);
    assert_pos(p, 1, sx + (10 - sx) * f, sy + (-6 - sy) * f, TOL);
    /* without velocity: the plain approach */
    rest_step(q, NULL);
    assert_pos(q, 1, approach(10, f, 2), approach(-6, f, 2), TOL);
    pose_free(p);
    pose_free(q);
    armature_free(arm);
}
END_TEST

/* ====================================================================================== */
/* pose_bone_matrix                                                                        */

START_TEST(bone_matrix_maps_points)
{
    /* child of a turned parent: parent (1, 2) rot 0.3; child local (3, 4) rot 0.4, scale
     * (2, 0.5). World: rot 0.7, pos (1, 2) + rot0.3(3, 4), scale (2, 0.5). A point (1, 1)
     * of the child's space: (2, 0.5) rotated by 0.7, + pos. The mesh vertex at (1, 1) must
     * land on the same point. */
    struct armature *arm =
        load_q("{'bones':[{'id':0,'name':'parent','pos':{'x':1,'y':2},'rot':0.3},"
               " {'id':1,'name':'b','parent_id':0,'pos':{'x':3,'y':4},'rot':0.4,"
               "  'scale':{'x':2,'y':0.5},'vertices':[{'id':0,'pos':{'x':1,'y':1}}]}]}");
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    double px = 1 + 3 * cos(0.3) - 4 * sin(0.3), py = 2 + 3 * sin(0.3) + 4 * cos(0.3);
    double ex = px + 2 * cos(0.7) - 0.5 * sin(0.7), ey = py + 2 * sin(0.7) + 0.5 * cos(0.7);
    double m[6];
    pose_bone_matrix(p, 1, m);
    ck_assert_double_eq_tol(m[0] * 1 + m[2] * 1 + m[4], ex, TOL);
    ck_assert_double_eq_tol(m[1] * 1 + m[3] * 1 + m[5], ey, TOL);
    ck_assert_double_eq_tol(m[4], px, TOL); /* the origin goes to the bone */
    ck_assert_double_eq_tol(m[5], py, TOL);
    ck_assert_double_eq_tol(m[0], 2 * cos(0.7), TOL); /* (1, 0) -> scale.x along rot */
    ck_assert_double_eq_tol(m[1], 2 * sin(0.7), TOL);
    ck_assert_double_eq_tol(m[2], -0.5 * sin(0.7), TOL);
    ck_assert_double_eq_tol(m[3], 0.5 * cos(0.7), TOL);
    assert_vert(p, 0, ex, ey, TOL);
    pose_free(p);
    armature_free(arm);
}
END_TEST

/* ====================================================================================== */
/* Poses are independent                                                                   */

/* IK, physics (damping and sway), a weighted mesh and a smoothed animation together. */
static const char *BUSY_ARM =
    "{'ik_root_ids':[1],'bones':["
    " {'id':0,'name':'root'},"
    " {'id':1,'name':'a','parent_id':0,'ik_target_id':4,'ik_bone_ids':[1,2,3]},"
    " {'id':2,'name':'b','parent_id':1,'pos':{'x':10,'y':0},'rot':0.8},"
    " {'id':3,'name':'c','parent_id':2,'pos':{'x':10,'y':0}},"
    " {'id':4,'name':'target','parent_id':0,'pos':{'x':5,'y':12}},"
    " {'id':5,'name':'bob','parent_id':0,'pos':{'x':-5,'y':0},'phys_pos_damping':6},"
    " {'id':6,'name':'ear','parent_id':5,'pos':{'x':0,'y':4},'phys_sway':2,"
    "  'phys_rot_bounce':0.4},"
    " {'id':7,'name':'mesh','parent_id':0,'vertices':[{'id':0,'pos':{'x':1,'y':1}},"
    "   {'id':1,'pos':{'x':-1,'y':2}}],"
    "  'binds':[{'bone_id':6,'verts':[{'id':0,'weight':0.7}]}]}],"
    " 'animations':[{'name':'go','keyframes':["
    "  {'frame':0,'bone_id':0,'element':'PositionX','value':0},"
    "  {'frame':0,'bone_id':4,'element':'PositionY','value':12},"
    "  {'frame':20,'bone_id':0,'element':'PositionX','value':30},"
    "  {'frame':20,'bone_id':4,'element':'PositionY','value':4}]}]}";

static void busy_step(struct pose *p, double frame, const struct construct_opts *o)
{
    struct anim_play play = {0, frame, 3};
    animate(p, &play, 1);
    construct(p, o);
}

static bool same_output(const struct pose *a, const struct pose *b)
{
    const struct armature *arm = a->arm;
    for (uint32_t i = 0; i < arm->bone_count; i++) {
        const struct bone_out *x = &a->out[i], *y = &b->out[i];
        if (x->pos.x != y->pos.x || x->pos.y != y->pos.y || x->rot != y->rot ||
            x->scale.x != y->scale.x || x->scale.y != y->scale.y)
            return false;
    }
    for (uint32_t v = 0; v < arm->vert_count; v++)
        if (a->verts[v].x != b->verts[v].x || a->verts[v].y != b->verts[v].y)
            return false;
    return true;
}

START_TEST(two_poses_give_identical_results)
{
    struct armature *arm = load_q(BUSY_ARM);
    struct pose *p1 = pose_new(arm), *p2 = pose_new(arm), *other = pose_new(arm);
    struct construct_opts flip;
    construct_opts_default(&flip);
    flip.y_down = true;
    flip.velocity = (struct vec2){4, 1};
    bool ever_differs = false;
    for (int f = 0; f <= 25; f++) {
        busy_step(p1, f, NULL);
        /* something else entirely on a third pose in between */
        busy_step(other, 25 - f, &flip);
        busy_step(p2, f, NULL);
        ck_assert_msg(same_output(p1, p2), "poses differ at frame %d", f);
        if (!same_output(p1, other))
            ever_differs = true;
    }
    ck_assert(ever_differs); /* the third pose really did something else */
    /* The motion is real: the root moved and the damped bob lags behind it. */
    ck_assert_double_gt(p1->out[0].pos.x, 29.0);
    ck_assert_double_gt(fabs(p1->out[5].pos.x - (p1->out[0].pos.x - 5)), 1e-3);

    /* pose_reset starts over: replaying gives the same as a fresh pose. */
    pose_reset(p1);
    struct pose *fresh = pose_new(arm);
    for (int f = 0; f <= 25; f++) {
        busy_step(p1, f, NULL);
        busy_step(fresh, f, NULL);
        ck_assert_msg(same_output(p1, fresh), "reset pose differs at frame %d", f);
    }
    ck_assert(same_output(p1, p2));
    pose_free(fresh);
    pose_free(p1);
    pose_free(p2);
    pose_free(other);
    armature_free(arm);
}
END_TEST

/* ====================================================================================== */
/* 0.6/0.7: mimic_target (SPEC.md section 4)                                               */

/* The chain of three_bone (two 10-long links a, b, c, the elbow starting right or left) in
 * the 0.7 layout, family 0 with the given constraint and mimic_target. The target is turned
 * by its parent: holder at (0, 15) rot 0.5, target on it with rot 0.3, so its world rotation
 * from the first inheritance is 0.8 (its local rotation alone would be 0.3). d hangs 3 along
 * c with rot 0.1. physics[] and the physics_id of c and of the target are parameters. */
static struct armature *mimic_arm(const char *constraint, const char *mimic, const char *a_rot,
                                  const char *b_rot, const char *physics, int c_phys,
                                  int target_phys, const char *anims)
{
    return load_q("{'version':'0.7.0','physics':[%s],"
                  " 'inverse_kinematics':[{'target_id':4,'bone_ids':[0,1,2],"
                  "   'constraint':'%s','mimic_target':%s}],"
                  " 'bones':["
                  "  {'id':0,'name':'a','rot':%s,'ik_family_id':0},"
                  "  {'id':1,'name':'b','parent_id':0,'pos':{'x':10,'y':0},'rot':%s,"
                  "   'ik_family_id':0},"
                  "  {'id':2,'name':'c','parent_id':1,'pos':{'x':10,'y':0},'rot':0.2,"
                  "   'ik_family_id':0,'physics_id':%d},"
                  "  {'id':3,'name':'holder','pos':{'x':0,'y':15},'rot':0.5},"
                  "  {'id':4,'name':'target','parent_id':3,'rot':0.3,'physics_id':%d},"
                  "  {'id':5,'name':'d','parent_id':2,'pos':{'x':3,'y':0},'rot':0.1}],"
                  " 'animations':[%s]}",
                  physics, constraint, mimic, a_rot, b_rot, c_phys, target_phys, anims);
}

/* a and b as the two-link solution with the elbow on side (+1 right, -1 left); c on the
 * target (0, 15) with world rotation c_rot, and d, its child, carried along. */
static void assert_mimic_chain(const struct pose *p, double side, double c_rot, double tol)
{
    double r = sqrt(100.0 - 7.5 * 7.5);
    assert_pos(p, 1, side * r, 7.5, tol);
    ck_assert_double_eq_tol(p->out[0].rot, atan2(7.5, side * r), tol);
    ck_assert_double_eq_tol(p->out[1].rot, atan2(7.5, -side * r), tol);
    assert_pos(p, 2, 0, 15, tol);
    ck_assert_double_eq_tol(p->out[2].rot, c_rot, tol);
    assert_pos(p, 5, 3 * cos(c_rot), 15 + 3 * sin(c_rot), tol);
    ck_assert_double_eq_tol(p->out[5].rot, c_rot + 0.1, tol);
}

START_TEST(mimic_target_on)
{
    /* With the elbow starting right, Clockwise mirrors the chain to the left (see
     * constraint_clockwise), None and CounterClockwise keep it right. In every case c takes
     * the target's world rotation 0.8: not its own b.rot + 0.2, not the target's local 0.3,
     * and not the mirrored 2 * (pi/2) - 0.8 = pi - 0.8 the constraint would make of it. c's
     * position still follows b (on the target), and d inherits 0.8: d at (0, 15) +
     * 3 (cos 0.8, sin 0.8), rot 0.9. */
    static const struct {
        const char *constraint;
        double side;
    } cases[] = {{"Clockwise", -1}, {"None", +1}, {"CounterClockwise", +1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct armature *arm = mimic_arm(cases[i].constraint, "true", RIGHT, "", -1, -1, "");
        struct pose *p = pose_new(arm);
        rest_step(p, NULL);
        assert_mimic_chain(p, cases[i].side, 0.8, 1e-6);
        ck_assert_double_gt(fabs(p->out[2].rot - (PI - 0.8)), 0.5);
        rest_step(p, NULL); /* the same again on the next step */
        assert_mimic_chain(p, cases[i].side, 0.8, 1e-6);
        pose_free(p);
        armature_free(arm);
    }
}
END_TEST

START_TEST(mimic_target_off)
{
    /* Without mimic c keeps its own rotation on top of b's IK rotation: b.rot + 0.2, with b
     * as in assert_two_link (Clockwise: left elbow, b.rot = atan2(7.5, r)). */
    double r = sqrt(100.0 - 7.5 * 7.5);
    struct armature *arm = mimic_arm("Clockwise", "false", RIGHT, "", -1, -1, "");
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    assert_mimic_chain(p, -1, atan2(7.5, r) + 0.2, 1e-6);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(mimic_target_toggles_over_steps)
{
    /* mimic_target false in the file; "m" keys MimicTarget on c (a non-root chain bone): on
     * at frame 0, off at frame 10. Each step uses the state of that step only. */
    double r = sqrt(100.0 - 7.5 * 7.5), own = atan2(7.5, r) + 0.2;
    struct armature *arm = mimic_arm(
        "Clockwise", "false", RIGHT, "", -1, -1,
        "{'name':'m','keyframes':[{'frame':0,'bone_id':2,'element':'MimicTarget','value':1},"
        " {'frame':10,'bone_id':2,'element':'MimicTarget','value':0}]}");
    struct pose *p = pose_new(arm);
    struct anim_play on = {0, 0, 0}, off = {0, 10, 0};
    rest_step(p, NULL);
    assert_mimic_chain(p, -1, own, 1e-6);
    animate(p, &on, 1);
    construct(p, NULL);
    assert_mimic_chain(p, -1, 0.8, 1e-6);
    animate(p, &off, 1);
    construct(p, NULL);
    assert_mimic_chain(p, -1, own, 1e-6);
    animate(p, &on, 1);
    construct(p, NULL);
    assert_mimic_chain(p, -1, 0.8, 1e-6);
    rest_step(p, NULL);
    assert_mimic_chain(p, -1, own, 1e-6);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(mimic_target_first_inheritance_and_physics)
{
    /* The target has rotation damping 4 (physics[0]); its state starts at 0, so after the
     * first step its final rotation is 0 + (0.8 - 0) / 4 = 0.2. c mimics the rotation of
     * the first inheritance, 0.8, not the final 0.2. c itself has position damping 1
     * (physics[1]: at most 2 frames reaches the target at once), so the physics pass
     * re-inherits c and d: the override must survive it, and c stays on (0, 15). */
    struct armature *arm =
        mimic_arm("Clockwise", "true", RIGHT, "{'rot_damping':4},{'pos_damping':1}", 1, 0, "");
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    ck_assert_double_eq_tol(p->out[4].rot, 0.2, TOL);
    assert_mimic_chain(p, -1, 0.8, 1e-6);
    /* Second step: the target's damped rotation is 0.2 + 0.6 / 4 = 0.35; c still 0.8. */
    rest_step(p, NULL);
    ck_assert_double_eq_tol(p->out[4].rot, 0.35, TOL);
    assert_mimic_chain(p, -1, 0.8, 1e-6);
    pose_free(p);
    armature_free(arm);
}
END_TEST

/* ====================================================================================== */
/* 0.6/0.7: independent IK families (SPEC.md section 4)                                    */

/* Family A: a (origin) -> a2 (10 along), target ta at (6, 8): exactly in reach, so a2 is
 * solved onto (6, 8). Family B: b (20, 10) -> b2 (5 along), its target is a2, A's chain tip,
 * whose first-inheritance position is (10, 0). */
#define FAMILY_BONES                                                                               \
    " {'id':0,'name':'a'%s},"                                                                      \
    " {'id':1,'name':'a2','parent_id':0,'pos':{'x':10,'y':0}%s},"                                  \
    " {'id':2,'name':'ta','pos':{'x':6,'y':8}},"                                                   \
    " {'id':3,'name':'b','pos':{'x':20,'y':10}%s},"                                                \
    " {'id':4,'name':'b2','parent_id':3,'pos':{'x':5,'y':0}%s}"

/* B's root points at its target t from (20, 10) (out of reach: 5 < |t - b|), b2 5 along. */
static void assert_family_b(const struct pose *p, double tx, double ty)
{
    double dx = tx - 20, dy = ty - 10, d = hypot(dx, dy);
    ck_assert_double_gt(d, 5.0);
    ck_assert_double_eq_tol(p->out[3].rot, atan2(dy, dx), 1e-9);
    assert_pos(p, 4, 20 + 5 * dx / d, 10 + 5 * dy / d, 1e-9);
}

START_TEST(arrays_families_solve_independently)
{
    /* 0.7 layout: B aims at a2's first-inheritance position (10, 0): direction (-10, -10),
     * b rot -3pi/4, b2 at (20, 10) + 5 (-1, -1)/sqrt(2). */
    struct armature *arm =
        load_q("{'version':'0.7.0','inverse_kinematics':[{'target_id':2,'bone_ids':[0,1]},"
               "  {'target_id':1,'bone_ids':[3,4]}],"
               " 'bones':[" FAMILY_BONES "]}",
               ",'ik_family_id':0", ",'ik_family_id':0", ",'ik_family_id':1", ",'ik_family_id':1");
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    assert_pos(p, 1, 6, 8, 1e-9); /* A itself is solved as usual */
    assert_family_b(p, 10, 0);
    ck_assert_double_eq_tol(p->out[3].rot, -3 * PI / 4, 1e-9);
    struct vec2 arrays_b2 = p->out[4].pos;
    pose_free(p);
    armature_free(arm);

    /* The same with A's family removed: B is unchanged. */
    arm = load_q("{'version':'0.7.0','inverse_kinematics':[{'target_id':1,'bone_ids':[3,4]}],"
                 " 'bones':[" FAMILY_BONES "]}",
                 "", "", ",'ik_family_id':0", ",'ik_family_id':0");
    p = pose_new(arm);
    rest_step(p, NULL);
    assert_pos(p, 1, 10, 0, TOL); /* no IK on A now */
    ck_assert_double_eq_tol(p->out[4].pos.x, arrays_b2.x, 1e-12);
    ck_assert_double_eq_tol(p->out[4].pos.y, arrays_b2.y, 1e-12);
    pose_free(p);
    armature_free(arm);

    /* 0.5 layout, the same armature with ik_root_ids: B, solved after A, sees a2 where A
     * moved it, (6, 8): direction (-14, -2), b2 at (20, 10) + 5 (-14, -2)/sqrt(200). */
    arm = load_q("{'ik_root_ids':[0,3],'bones':[" FAMILY_BONES "]}",
                 ",'ik_target_id':2,'ik_bone_ids':[0,1]", "",
                 ",'ik_target_id':1,'ik_bone_ids':[3,4]", "");
    p = pose_new(arm);
    rest_step(p, NULL);
    assert_pos(p, 1, 6, 8, 1e-9);
    assert_family_b(p, 6, 8);
    ck_assert_double_gt(dist(p->out[4].pos, arrays_b2), 1.0); /* the layouts really differ */
    pose_free(p);
    armature_free(arm);
}
END_TEST

/* ====================================================================================== */
/* 0.6/0.7: mesh vertices with pivot_rot and pivot_scale (SPEC.md section 4)               */

START_TEST(mesh_pivot_unbound_vertex)
{
    /* Bone at (5, 1), rot 0.3, scale (2, 3); its visuals: pivot_rot 0.4, pivot_scale
     * (0.5, 2), and a pivot_pos that must not matter. A vertex goes to
     * pos + R(0.3 + 0.4)(init * scale * pivot_scale):
     *   v0 (4, 1):  (4 * 2 * 0.5, 1 * 3 * 2) = (4, 6)   -> (4c - 6s + 5, 4s + 6c + 1)
     *   v1 (-2, 3): (-2 * 2 * 0.5, 3 * 3 * 2) = (-2, 18) -> (-2c - 18s + 5, -2s + 18c + 1)
     * with c, s = cos 0.7, sin 0.7. */
    struct armature *arm =
        load_q("{'version':'0.7.0','visuals':[{'pivot_rot':0.4,'pivot_scale':{'x':0.5,'y':2},"
               "  'pivot_pos':{'x':0.25,'y':-0.5},"
               "  'vertices':[{'id':0,'pos':{'x':4,'y':1}},{'id':1,'pos':{'x':-2,'y':3}}]}],"
               " 'bones':[{'id':0,'name':'mesh','pos':{'x':5,'y':1},'rot':0.3,"
               "  'scale':{'x':2,'y':3},'visuals_id':0}]}");
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    double c = cos(0.7), s = sin(0.7);
    assert_vert(p, 0, 4 * c - 6 * s + 5, 4 * s + 6 * c + 1, TOL);
    assert_vert(p, 1, -2 * c - 18 * s + 5, -2 * s + 18 * c + 1, TOL);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(mesh_pivot_weighted_bind)
{
    /* As weighted_binds, with the mesh's pivot_rot pi/2 and pivot_scale (0.5, 2). mesh at
     * (5, 0) scale (2, 1): own v -> (5, 0) + R(pi/2)(v.x, 2 v.y) = (5 - 2 v.y, v.x).
     * handle at (100, 0), rot pi/2, scale (3, 1): v -> (100, 0) + R(pi)(1.5 v.x, 2 v.y) =
     * (100 - 1.5 v.x, -2 v.y); the handle's own pivots (visuals[1]) do not enter.
     *   v0 (10, 0)  weight 0:   own (5, 10)
     *   v1 (0, 10)  weight 1:   handle's (100, -20)
     *   v2 (10, 10) weight 0.5: own (-15, 10), handle's (85, -20): halfway (35, -5) */
    struct armature *arm =
        load_q("{'version':'0.7.0','visuals':["
               "  {'pivot_rot':" HALF_PI_JSON ",'pivot_scale':{'x':0.5,'y':2},"
               "   'vertices':[{'id':0,'pos':{'x':10,'y':0}},{'id':1,'pos':{'x':0,'y':10}},"
               "               {'id':2,'pos':{'x':10,'y':10}}],"
               "   'indices':[0,1,2],"
               "   'binds':[{'bone_id':1,'is_path':false,'verts':[{'id':0,'weight':0},"
               "             {'id':1,'weight':1},{'id':2,'weight':0.5}]}]},"
               "  {'pivot_rot':1,'pivot_scale':{'x':7,'y':7}}],"
               " 'bones':["
               "  {'id':0,'name':'mesh','pos':{'x':5,'y':0},'scale':{'x':2,'y':1},'visuals_id':0},"
               "  {'id':1,'name':'handle','pos':{'x':100,'y':0},'rot':" HALF_PI_JSON ","
               "   'scale':{'x':3,'y':1},'visuals_id':1}]}");
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    assert_vert(p, 0, 5, 10, TOL);
    assert_vert(p, 1, 100, -20, TOL);
    assert_vert(p, 2, 35, -5, TOL);
    pose_free(p);
    armature_free(arm);
}
END_TEST

START_TEST(mesh_pivot_path_bind_ignores_pivots)
{
    /* path_binds in the 0.7 layout, the mesh turned, scaled and with every pivot set: the
     * path-bound vertices are exactly those of path_binds, (0, 2), (10 - r2, r2), (9, 9.5). */
    struct armature *arm =
        load_q("{'version':'0.7.0','visuals':[{'pivot_rot':1,'pivot_scale':{'x':3,'y':3},"
               "  'pivot_pos':{'x':0.5,'y':0.5},"
               "  'vertices':[{'id':0,'pos':{'x':2,'y':0}},{'id':1,'pos':{'x':2,'y':0}},"
               "              {'id':2,'pos':{'x':2,'y':1}}],"
               "  'binds':[{'bone_id':1,'is_path':true,'verts':[{'id':0,'weight':1}]},"
               "           {'bone_id':2,'is_path':true,'verts':[{'id':1,'weight':1}]},"
               "           {'bone_id':3,'is_path':true,'verts':[{'id':2,'weight':0.5}]}]}],"
               " 'bones':["
               "  {'id':0,'name':'mesh','pos':{'x':7,'y':-3},'rot':0.4,'scale':{'x':2,'y':2},"
               "   'visuals_id':0},"
               "  {'id':1,'name':'p1'},"
               "  {'id':2,'name':'p2','pos':{'x':10,'y':0}},"
               "  {'id':3,'name':'p3','pos':{'x':10,'y':10}}]}");
    struct pose *p = pose_new(arm);
    rest_step(p, NULL);
    double r2 = sqrt(2.0);
    assert_vert(p, 0, 0, 2, TOL);
    assert_vert(p, 1, 10 - r2, r2, TOL);
    assert_vert(p, 2, 9, 9.5, TOL);
    pose_free(p);
    armature_free(arm);
}
END_TEST

/* A turned child mesh with a weighted bind, pivot_rot and pivot_scale, and the given
 * pivot_pos. */
static struct armature *pivot_pos_mesh(const char *pivot_pos)
{
    return load_q("{'version':'0.7.0','visuals':[{'pivot_pos':%s,'pivot_rot':0.6,"
                  "  'pivot_scale':{'x':1.5,'y':0.5},"
                  "  'vertices':[{'id':0,'pos':{'x':3,'y':1}},{'id':1,'pos':{'x':-2,'y':4}},"
                  "              {'id':2,'pos':{'x':0,'y':-5}}],"
                  "  'indices':[0,1,2],"
                  "  'binds':[{'bone_id':0,'verts':[{'id':1,'weight':0.25}]}]}],"
                  " 'bones':[{'id':0,'name':'root','pos':{'x':2,'y':3},'rot':0.2},"
                  "  {'id':1,'name':'mesh','parent_id':0,'pos':{'x':4,'y':0},'rot':0.5,"
                  "   'scale':{'x':2,'y':1},'visuals_id':0}]}",
                  pivot_pos);
}

START_TEST(mesh_pivot_pos_never_moves_vertices)
{
    /* pivot_pos is a draw-time offset only: the constructed vertices (and bones) of a mesh
     * with pivot_pos (0.25, -0.5) or (3, 7) are exactly those with (0, 0). */
    struct armature *ref = pivot_pos_mesh("{'x':0,'y':0}");
    struct pose *pr = pose_new(ref);
    rest_step(pr, NULL);
    static const char *const pivots[] = {"{'x':0.25,'y':-0.5}", "{'x':3,'y':7}"};
    for (size_t i = 0; i < sizeof pivots / sizeof pivots[0]; i++) {
        struct armature *arm = pivot_pos_mesh(pivots[i]);
        struct pose *p = pose_new(arm);
        rest_step(p, NULL);
        ck_assert_msg(same_output(p, pr), "pivot_pos %s moved the construct", pivots[i]);
        pose_free(p);
        armature_free(arm);
    }
    /* and the vertices are not where the 0.5 rule would put them: the pivots did apply */
    double m[6];
    pose_bone_matrix(pr, 1, m);
    ck_assert_double_gt(fabs(pr->verts[0].x - (m[0] * 3 + m[2] * 1 + m[4])) +
                            fabs(pr->verts[0].y - (m[1] * 3 + m[3] * 1 + m[5])),
                        0.1);
    pose_free(pr);
    armature_free(ref);
}
END_TEST

/* ====================================================================================== */
/* 0.6/0.7: bones without visuals (SPEC.md section 4)                                      */

START_TEST(no_visuals_ignores_texture_and_zindex_keys)
{
    /* A bone without visuals has no texture and zindex 0, and is never drawn. Texture and
     * Zindex keys for it have nowhere to go, so they change neither. The bone with visuals
     * takes the same keys. The bone without visuals is written once with no visuals_id and
     * once with visuals_id -1. */
    static const char *const novis[] = {"", ",'visuals_id':-1"};
    for (size_t i = 0; i < sizeof novis / sizeof novis[0]; i++) {
        struct armature *arm =
            load_q("{'version':'0.7.0','visuals':[{'tex':'red','zindex':2}],"
                   " 'bones':[{'id':0,'name':'root','visuals_id':0},"
                   "  {'id':1,'name':'novis','parent_id':0,'pos':{'x':40,'y':0}%s}],"
                   " 'animations':[{'name':'t','keyframes':["
                   "  {'frame':0,'bone_id':1,'element':'Texture','value_str':'blue'},"
                   "  {'frame':0,'bone_id':1,'element':'Zindex','value':5},"
                   "  {'frame':0,'bone_id':0,'element':'Texture','value_str':'blue'},"
                   "  {'frame':0,'bone_id':0,'element':'Zindex','value':3}]}]}",
                   novis[i]);
        struct pose *p = pose_new(arm);
        rest_step(p, NULL);
        ck_assert_int_eq(p->out[1].tex, -1);
        ck_assert_int_eq(p->out[1].zindex, 0);
        struct anim_play pl = {0, 0, 0};
        animate(p, &pl, 1);
        construct(p, NULL);
        ck_assert_str_eq(armature_tex_name(arm, p->out[0].tex), "blue");
        ck_assert_int_eq(p->out[0].zindex, 3);
        ck_assert_msg(p->out[1].tex == -1, "bone without visuals has tex \"%s\"",
                      armature_tex_name(arm, p->out[1].tex));
        ck_assert_int_eq(p->out[1].zindex, 0);
        pose_free(p);
        armature_free(arm);
    }
}
END_TEST

/* ====================================================================================== */

/* IK's atan2 against libm's on vectors of every quadrant and scale, on the axes and the
 * diagonals, with signed zeros, infinities and NaN: within 2^-51 (about an ulp of pi). */
START_TEST(ik_angle_is_atan2)
{
    static const double edge[] = {0.0,   -0.0,   1.0,      -1.0,      1e-300, -1e-300,
                                  1e300, -1e300, INFINITY, -INFINITY, 3.0,    -7.5};
    size_t n = sizeof edge / sizeof edge[0];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double y = edge[i], x = edge[j], a = ik_angle(y, x), b = atan2(y, x);
            ck_assert_msg(a == b || fabs(a - b) <= 0x1p-51, "(%g, %g): %.17g, atan2 %.17g", y, x, a,
                          b);
            ck_assert_msg(signbit(a) == signbit(b), "(%g, %g): sign of %g, atan2 %g", y, x, a, b);
        }
    ck_assert(isnan(ik_angle(NAN, 1.0)) && isnan(ik_angle(1.0, NAN)));
    uint64_t s = 88172645463325252u;
    for (int k = 0; k < 200000; k++) {
        double v[2];
        for (int c = 0; c < 2; c++) { /* xorshift: mantissa and a decimal exponent in -4..4 */
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            v[c] = ((double)(s >> 11) / 0x1p53 - 0.5) * pow(10.0, (double)(s % 9) - 4.0);
        }
        double a = ik_angle(v[0], v[1]), b = atan2(v[0], v[1]);
        ck_assert_msg(fabs(a - b) <= 0x1p-51, "(%.17g, %.17g): %.17g, atan2 %.17g", v[0], v[1], a,
                      b);
    }
}
END_TEST

static Suite *construct_suite(void)
{
    Suite *s = suite_create("construct");
    TCase *tc = tcase_create("inheritance");
    tcase_add_test(tc, overflow_is_named_not_answered);
    tcase_add_test(tc, inherit_function);
    tcase_add_test(tc, inherit_rotated_scaled_parent);
    tcase_add_test(tc, parent_listed_after_child);
    suite_add_tcase(s, tc);

    tc = tcase_create("ik");
    tcase_add_test(tc, fabrik_two_bone_chain);
    tcase_add_test(tc, fabrik_three_bone_chain);
    tcase_add_test(tc, fabrik_four_bone_chain);
    tcase_add_test(tc, ik_zero_rotation_still_overrides);
    tcase_add_test(tc, arc_ik);
    tcase_add_test(tc, arc_ik_target_on_root);
    tcase_add_test(tc, arc_ik_collapsed_chain);
    tcase_add_test(tc, ik_mode_keyframe_switches_solver);
    tcase_add_test(tc, baked_ik_skips_ik);
    suite_add_tcase(s, tc);

    tc = tcase_create("ik constraints");
    tcase_add_test(tc, constraint_clockwise);
    tcase_add_test(tc, constraint_counter_clockwise);
    tcase_add_test(tc, constraint_none_keeps_either_bend);
    tcase_add_test(tc, constraint_on_arc);
    suite_add_tcase(s, tc);

    tc = tcase_create("physics");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, position_damping_follows_and_converges);
    tcase_add_test(tc, position_damping_is_truncated);
    tcase_add_test(tc, position_ratio);
    tcase_add_test(tc, scale_damping);
    tcase_add_test(tc, rotation_damping);
    tcase_add_test(tc, sway_and_bounce_move_the_orbit);
    tcase_add_test(tc, sway_with_parent_listed_after_child);
    suite_add_tcase(s, tc);

    tc = tcase_create("mesh binds");
    tcase_add_test(tc, weighted_binds);
    tcase_add_test(tc, path_binds);
    suite_add_tcase(s, tc);

    tc = tcase_create("0.6/0.7 mimic_target and families");
    tcase_add_test(tc, mimic_target_on);
    tcase_add_test(tc, mimic_target_off);
    tcase_add_test(tc, mimic_target_toggles_over_steps);
    tcase_add_test(tc, mimic_target_first_inheritance_and_physics);
    tcase_add_test(tc, arrays_families_solve_independently);
    suite_add_tcase(s, tc);

    tc = tcase_create("0.6/0.7 mesh pivots");
    tcase_add_test(tc, mesh_pivot_unbound_vertex);
    tcase_add_test(tc, mesh_pivot_weighted_bind);
    tcase_add_test(tc, mesh_pivot_path_bind_ignores_pivots);
    tcase_add_test(tc, mesh_pivot_pos_never_moves_vertices);
    suite_add_tcase(s, tc);

    tc = tcase_create("0.6/0.7 bones without visuals");
    tcase_add_test(tc, no_visuals_ignores_texture_and_zindex_keys);
    suite_add_tcase(s, tc);

    tc = tcase_create("options");
    tcase_add_test(tc, options_position_and_scale);
    tcase_add_test(tc, options_y_down);
    tcase_add_test(tc, options_one_negative_axis_flips_rotation);
    tcase_add_test(tc, options_velocity_moves_physics_state);
    tcase_add_test(tc, bone_matrix_maps_points);
    suite_add_tcase(s, tc);

    tc = tcase_create("mesh plan");
    tcase_add_test(tc, path_binds_laying_every_vertex);
    suite_add_tcase(s, tc);

    tc = tcase_create("ik_angle");
    tcase_add_test(tc, ik_angle_is_atan2);
    suite_add_tcase(s, tc);

    tc = tcase_create("state");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, two_poses_give_identical_results);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(construct_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
