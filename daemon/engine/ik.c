/* Inverse kinematics (SPEC.md section 2, step 3, and section 4): FABRIK or Arc on each
 * family's chain, then point each bone at the next, then the Clockwise/CounterClockwise
 * constraint; with mimic_target on, the chain's last bone takes the target's rotation. The
 * solvers move scratch copies of the constructed positions (p->chain, one per bone): in 0.5
 * files a later family sees the positions an earlier one moved, as in the reference runtime;
 * in 0.6/0.7 files each family starts again from the first inheritance. */
#include "construct.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#define PI 3.14159265358979323846

static double magnitude(struct vec2 v)
{
    return sqrt(v.x * v.x + v.y * v.y);
}

/* atan2(y, x) within an ulp of libm's (check_construct compares them), through atan of the
 * smaller coordinate over the larger: IK takes one angle per chain bone, and libm's atan2
 * with its errno wrapper cost twice as much. Zeros, infinities and NaN go to atan2 itself. */
double ik_angle(double y, double x)
{
    double ax = fabs(x), ay = fabs(y);
    if (!(ax < INFINITY && ay < INFINITY) || (ax == 0.0 && ay == 0.0))
        return atan2(y, x);
    if (ay <= ax) {
        double a = atan(y / x);
        return x > 0.0 ? a : (signbit(y) ? a - PI : a + PI);
    }
    return (y > 0.0 ? PI / 2 : -PI / 2) - atan(x / y);
}

static struct vec2 sub(struct vec2 a, struct vec2 b)
{
    return (struct vec2){a.x - b.x, a.y - b.y};
}

/* v scaled to length len (0 for a zero vector): normalize(v) * len with one division. */
static struct vec2 with_length(struct vec2 v, double len)
{
    if (len == 0.0) /* each pass starts with length 0: skip the square root */
        return (struct vec2){0.0, 0.0};
    double m = magnitude(v);
    if (m == 0.0)
        return (struct vec2){0.0, 0.0};
    double k = len / m;
    return (struct vec2){v.x * k, v.y * k};
}

static struct vec2 normalize(struct vec2 v)
{
    double m = magnitude(v);
    if (m == 0.0)
        return (struct vec2){0.0, 0.0};
    return (struct vec2){v.x / m, v.y / m};
}

/* One FABRIK iteration; returns whether any position changed (bit for bit, against before,
 * scratch for len positions). */
static bool fabrik(struct vec2 *pos, const int *chain, uint32_t len, struct vec2 root,
                   struct vec2 target, struct vec2 *before)
{
    for (uint32_t i = 0; i < len; i++)
        before[i] = pos[chain[i]];
    struct vec2 next = target;
    double next_len = 0.0;
    for (uint32_t i = len; i-- > 0;) {
        struct vec2 *b = &pos[chain[i]];
        struct vec2 d = with_length(sub(next, *b), next_len);
        if (i != 0)
            next_len = magnitude(sub(*b, pos[chain[i - 1]]));
        b->x = next.x - d.x;
        b->y = next.y - d.y;
        next = *b;
    }
    struct vec2 prev = root;
    double prev_len = 0.0;
    for (uint32_t i = 0; i < len; i++) {
        struct vec2 *b = &pos[chain[i]];
        struct vec2 d = with_length(sub(prev, *b), prev_len);
        if (i != len - 1)
            prev_len = magnitude(sub(*b, pos[chain[i + 1]]));
        b->x = prev.x - d.x;
        b->y = prev.y - d.y;
        prev = *b;
    }
    for (uint32_t i = 0; i < len; i++)
        if (memcmp(&before[i], &pos[chain[i]], sizeof before[i]))
            return true;
    return false;
}

/* The reference divides by the chain's reach and by the distance to the target, so two valid
 * poses give it NaN, and skeld a failed frame. A chain whose tip is on its root (a bone
 * scaled to 0, to hide a limb) has nothing to bend: it stays as it is, as FABRIK leaves it. A
 * target on the root bends the chain as a target a hair away does: (1 - peak) * base_mag,
 * with peak = max_len / base_mag, tends to base_mag - max_len. */
static void arc(struct vec2 *pos, const int *chain, uint32_t len, struct vec2 root,
                struct vec2 target, double *dist)
{
    double max_len = magnitude(sub(pos[chain[len - 1]], root));
    if (!(max_len > 0.0))
        return;
    double curr = 0.0;
    dist[0] = 0.0;
    for (uint32_t i = 1; i < len; i++) {
        curr += magnitude(sub(pos[chain[i]], pos[chain[i - 1]]));
        dist[i] = curr / max_len;
    }
    struct vec2 base = sub(target, root);
    double dist_to_target = magnitude(base);
    double base_mag = fmin(dist_to_target, max_len);
    double peak = max_len / base_mag, valley = base_mag / max_len;
    /* cos/sin of atan2(base) straight from the vector (atan2(0, 0) is 0). */
    double c = dist_to_target > 0.0 ? base.x / dist_to_target : 1.0;
    double s = dist_to_target > 0.0 ? base.y / dist_to_target : 0.0;
    for (uint32_t i = 1; i < len; i++) {
        struct vec2 *b = &pos[chain[i]];
        /* The editor bends with 3.14, not pi; artists saw that, so we keep it. The x term
         * scales the absolute x, as the reference does. */
        double bend = isfinite(peak) ? (1.0 - peak) * sin(dist[i] * 3.14) * base_mag
                                     : (base_mag - max_len) * sin(dist[i] * 3.14);
        struct vec2 q = {b->x * valley, root.y + bend};
        q = sub(q, root);
        b->x = q.x * c - q.y * s + root.x;
        b->y = q.x * s + q.y * c + root.y;
    }
}

/* Points each chain bone but the tip at the next one. The angle's cos/sin come from the
 * direction itself (atan2 of a zero vector is 0). */
static void point_bones(const struct vec2 *pos, const int *chain, uint32_t len,
                        struct rot_trig *rot)
{
    struct vec2 tip = pos[chain[len - 1]];
    rot[len - 1] = (struct rot_trig){0.0, 1.0, 0.0}; /* the tip keeps its own; never saved */
    for (uint32_t i = len - 1; i-- > 0;) {
        struct vec2 dir = sub(tip, pos[chain[i]]);
        struct vec2 n = normalize(dir);
        bool zero = n.x == 0.0 && n.y == 0.0;
        rot[i] = (struct rot_trig){ik_angle(dir.y, dir.x), zero ? 1.0 : n.x, n.y};
        tip = pos[chain[i]];
    }
}

/* Mirrors the chain about the root->target line when it bends the forbidden way:
 * rot' = 2 * base - rot. */
static void constrain(const struct vec2 *pos, const int *chain, uint32_t len, int constraint,
                      struct vec2 root, struct vec2 target, struct rot_trig *rot)
{
    struct vec2 joint = normalize(sub(pos[chain[1]], root));
    struct vec2 base = normalize(sub(target, root));
    double dir = joint.x * base.y - base.x * joint.y;
    bool cw = constraint == IKC_CLOCKWISE && dir > 0.0;
    bool ccw = constraint == IKC_COUNTER_CLOCKWISE && dir < 0.0;
    if (!cw && !ccw)
        return;
    double base_angle = ik_angle(base.y, base.x);
    double bc = base.x != 0.0 || base.y != 0.0 ? base.x : 1.0, bs = base.y;
    double c2 = bc * bc - bs * bs, s2 = 2.0 * bc * bs; /* cos, sin of 2 * base */
    for (uint32_t i = 0; i < len; i++) {
        struct rot_trig r = rot[i];
        rot[i] =
            (struct rot_trig){-r.rot + base_angle * 2.0, c2 * r.c + s2 * r.s, s2 * r.c - c2 * r.s};
    }
}

/* The chain's last bone takes the target's world rotation from the first inheritance, after
 * the constraint (so it is not mirrored). */
static void mimic_target(struct pose *p, int last, int target)
{
    double r = p->out[target].rot;
    p->ik_rot[last] = (struct rot_trig){r, cos(r), sin(r)};
    p->ik_has[last] = 1;
}

static void solve_family(struct pose *p, int root_id)
{
    const struct armature *arm = p->arm;
    const struct arm_bone *fam = &arm->bones[root_id];
    const int *chain = arm->ik_chain + fam->ik_off;
    uint32_t len = fam->ik_len;
    const struct bone_fields *lf = &p->local[root_id];
    if (arm->layout == ARM_LAYOUT_ARRAYS) /* families do not see each other's solutions */
        for (uint32_t i = 0; i < len; i++)
            p->chain[chain[i]] = p->out[chain[i]].pos;
    struct vec2 root = p->chain[root_id];
    struct vec2 target =
        arm->layout == ARM_LAYOUT_ARRAYS ? p->out[fam->ik_target].pos : p->chain[fam->ik_target];
    struct rot_trig *rot = p->chain_rot;
    /* The reference runs ten iterations; once one changes nothing, every later one is the
     * same function of the same positions and changes nothing either (a stretched or
     * reached chain settles in two). */
    if (lf->ik_mode == IK_FABRIK) {
        for (int i = 0; i < 10; i++)
            if (!fabrik(p->chain, chain, len, root, target, p->chain_before))
                break;
    } else {
        arc(p->chain, chain, len, root, target, p->chain_dist);
    }
    point_bones(p->chain, chain, len, rot);
    constrain(p->chain, chain, len, lf->ik_constraint, root, target, rot);
    for (uint32_t i = 0; i + 1 < len; i++) {
        p->ik_rot[chain[i]] = rot[i];
        p->ik_has[chain[i]] = 1;
    }
    if (lf->ik_mimic)
        mimic_target(p, chain[len - 1], fam->ik_target);
}

void ik_solve(struct pose *p)
{
    const struct armature *arm = p->arm;
    for (uint32_t b = 0; b < arm->bone_count; b++)
        p->chain[b] = p->out[b].pos;
    /* A chain's last bone is overridden only while its family mimics: clear them all first,
     * so a bone that is also inside another chain keeps that family's rotation. */
    for (uint32_t r = 0; arm->may_mimic && r < arm->ik_root_count; r++) {
        const struct arm_bone *fam = &arm->bones[arm->ik_roots[r]];
        p->ik_has[arm->ik_chain[fam->ik_off + fam->ik_len - 1]] = 0;
    }
    for (uint32_t r = 0; r < arm->ik_root_count; r++)
        solve_family(p, arm->ik_roots[r]);
}
