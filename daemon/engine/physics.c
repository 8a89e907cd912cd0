/* Physics (SPEC.md section 2, step 5, with corrections 4-6): damped position, scale and
 * rotation toward the constructed values, and the sway/bounce orbit around the parent. The
 * state lives in p->phys and carries over between steps. */
#include "animate.h"
#include "construct.h"

#include <math.h>

#define PI_D 3.141592653589793
#define TAU_D (2.0 * PI_D)

double shortest_angle_delta(double from, double to)
{
    double delta = to - from;
    if (!isfinite(delta))
        return 0.0;
    /* The reference subtracts whole turns one at a time; fold huge values first so a
     * hostile state cannot spin here. Small ones take the same steps as the reference. */
    if (fabs(delta) > 64.0 * TAU_D)
        delta = fmod(delta, TAU_D);
    while (delta > PI_D)
        delta -= TAU_D;
    while (delta < -PI_D)
        delta += TAU_D;
    return delta;
}

static const struct vec2 ease_in = {0.3, 0.3}, ease_out = {0.6, 0.6};

/* Damping with a ratio: r < 0 shortens y, r > 0 shortens x; whole frames only. */
static void damp_vec(struct vec2 *state, struct vec2 target, double damping, double ratio)
{
    double dx = damping, dy = damping;
    if (ratio < 0.0)
        dy *= 1.0 - fabs(ratio);
    else if (ratio > 0.0)
        dx *= 1.0 - ratio;
    dx = dx > 0.0 ? trunc(dx) : 0.0;
    dy = dy > 0.0 ? trunc(dy) : 0.0;
    state->x = anim_interpolate(2.0, dx, state->x, target.x, ease_in, ease_out);
    state->y = anim_interpolate(2.0, dy, state->y, target.y, ease_in, ease_out);
}

static double vec_len(struct vec2 v)
{
    return sqrt(v.x * v.x + v.y * v.y);
}

static void sway(struct phys_state *st, const struct bone_phys *ph, const struct bone_out *cb,
                 const struct bone_out *parent, struct vec2 prev_pos)
{
    struct vec2 diff = {cb->pos.x - parent->pos.x, cb->pos.y - parent->pos.y};
    double m = vec_len(diff);
    if (m != 0.0)
        diff = (struct vec2){diff.x / m, diff.y / m};
    else
        diff = (struct vec2){0.0, 0.0};
    double diff_angle = atan2(diff.y, diff.x);
    double buffer = shortest_angle_delta(st->orbit, diff_angle);
    if (ph->rot_bounce > 0.0 && ph->rot_bounce <= 1.0) {
        buffer += st->orbit_vel / (2.0 - ph->rot_bounce);
        st->orbit_vel = buffer;
    }
    st->orbit += buffer / 10.0;
    /* Swing the orbit against the direction the damped position moved. */
    struct vec2 vel = {st->pos.x - prev_pos.x, st->pos.y - prev_pos.y};
    double speed = vec_len(vel);
    struct vec2 dir =
        speed != 0.0 ? (struct vec2){vel.x / speed, vel.y / speed} : (struct vec2){0.0, 0.0};
    double angle = atan2(-dir.y, -dir.x);
    double vel_rot = shortest_angle_delta(st->orbit, angle);
    st->orbit += vel_rot * (speed / 1000.0) * ph->sway;
    st->orbit_diff = diff_angle - st->orbit;
}

void physics_step(struct pose *p)
{
    const struct armature *arm = p->arm;
    for (uint32_t b = 0; b < arm->bone_count; b++) {
        const struct arm_bone *bone = &arm->bones[b];
        if (!bone->has_phys)
            continue;
        const struct bone_phys *ph = &bone->phys;
        const struct bone_out *cb = &p->out[b];
        struct phys_state *st = &p->phys[b];
        struct vec2 prev_pos = st->pos;
        if (ph->pos_damping > 0.0 || ph->sway > 0.0)
            damp_vec(&st->pos, cb->pos, ph->pos_damping, ph->pos_ratio);
        if (ph->scale_damping > 0.0)
            damp_vec(&st->scale, cb->scale, ph->scale_damping, ph->scale_ratio);
        if (ph->rot_damping > 0.0)
            st->rot += shortest_angle_delta(st->rot, cb->rot) / ph->rot_damping;
        if (ph->sway > 0.0 && bone->parent >= 0)
            sway(st, ph, cb, &p->out[bone->parent], prev_pos);
    }
}
