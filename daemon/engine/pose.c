/* Per-instance state: one allocation, carved into index-parallel arrays. */
#include "pose.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN16(n) (((n) + 15u) & ~(size_t)15u)

struct layout {
    size_t local, phys, out, verts, ik_rot, local_trig, ik_has, keyed, chain, chain_dist, chain_rot,
        chain_before, total;
};

static size_t take(size_t *total, size_t bytes)
{
    size_t at = *total;
    *total += ALIGN16(bytes);
    return at;
}

static void plan(const struct armature *arm, struct layout *l)
{
    size_t n = arm->bone_count ? arm->bone_count : 1;
    size_t chain = arm->max_chain ? arm->max_chain : 1;
    l->total = ALIGN16(sizeof(struct pose));
    l->local = take(&l->total, n * sizeof(struct bone_fields));
    l->phys = take(&l->total, n * sizeof(struct phys_state));
    l->out = take(&l->total, n * sizeof(struct bone_out));
    l->verts = take(&l->total, (arm->vert_count + 1) * sizeof(struct vec2));
    l->ik_rot = take(&l->total, n * sizeof(struct rot_trig));
    l->local_trig = take(&l->total, n * sizeof(struct rot_trig));
    l->ik_has = take(&l->total, n);
    l->keyed = take(&l->total, n * sizeof(uint16_t));
    l->chain = take(&l->total, n * sizeof(struct vec2));
    l->chain_dist = take(&l->total, chain * sizeof(double));
    l->chain_rot = take(&l->total, chain * sizeof(struct rot_trig));
    l->chain_before = take(&l->total, chain * sizeof(struct vec2));
}

struct pose *pose_new(const struct armature *arm)
{
    struct layout l;
    plan(arm, &l);
    char *mem = calloc(1, l.total);
    if (!mem)
        return NULL;
    struct pose *p = (struct pose *)mem;
    p->arm = arm;
    p->local = (struct bone_fields *)(mem + l.local);
    p->phys = (struct phys_state *)(mem + l.phys);
    p->out = (struct bone_out *)(mem + l.out);
    p->verts = (struct vec2 *)(mem + l.verts);
    p->ik_rot = (struct rot_trig *)(mem + l.ik_rot);
    p->local_trig = (struct rot_trig *)(mem + l.local_trig);
    p->ik_has = (uint8_t *)(mem + l.ik_has);
    p->keyed = (uint16_t *)(mem + l.keyed);
    p->chain = (struct vec2 *)(mem + l.chain);
    p->chain_dist = (double *)(mem + l.chain_dist);
    p->chain_rot = (struct rot_trig *)(mem + l.chain_rot);
    p->chain_before = (struct vec2 *)(mem + l.chain_before);
    for (uint32_t b = 0; b < arm->bone_count; b++)
        p->local_trig[b] = (struct rot_trig){NAN, 1.0, 0.0}; /* NAN: never matches */
    pose_reset(p);
    return p;
}

void pose_free(struct pose *p)
{
    free(p);
}

size_t pose_bytes(const struct armature *arm)
{
    struct layout l;
    plan(arm, &l);
    return l.total;
}

void pose_reset(struct pose *p)
{
    const struct armature *arm = p->arm;
    uint32_t n = arm->bone_count;
    /* The start fields lie in one array (construct_plan): one copy. The rotation cache
     * (local_trig) stays: it holds cos and sin of the rotation it names, whatever the
     * pose, and bones the next request does not turn need no new ones. */
    memcpy(p->local, arm->starts, n * sizeof *p->local);
    for (uint32_t b = 0; b < n; b++) {
        const struct bone_phys *ph = &arm->bones[b].phys;
        p->phys[b] =
            (struct phys_state){ph->global_pos,   ph->global_scale,     ph->global_rot,
                                ph->global_orbit, ph->global_orbit_vel, ph->global_orbit_diff};
    }
    memset(p->ik_has, 0, n);
    memset(p->keyed, 0, n * sizeof *p->keyed);
    memset(p->out, 0, n * sizeof *p->out);
}

void pose_bone_matrix(const struct pose *p, uint32_t b, double m[6])
{
    const struct bone_out *o = &p->out[b];
    /* Where construct keeps cos/sin of the rotation they are there already (equal to cos and
     * sin of rot to an ulp or so: composed from the parent's and the local ones). */
    bool kept = p->arm->plan[b] & PLAN_TRIG;
    double c = kept ? o->cos_rot : cos(o->rot), s = kept ? o->sin_rot : sin(o->rot);
    m[0] = c * o->scale.x;
    m[1] = s * o->scale.x;
    m[2] = -s * o->scale.y;
    m[3] = c * o->scale.y;
    m[4] = o->pos.x;
    m[5] = o->pos.y;
}

/* The name of the first of bone b's constructed numbers that is not finite, or NULL. */
static const char *unfinite_field(const struct pose *p, uint32_t b)
{
    const struct bone_out *o = &p->out[b];
    const struct arm_bone *bone = &p->arm->bones[b];
    if (!isfinite(o->pos.x) || !isfinite(o->pos.y))
        return "position";
    if (!isfinite(o->rot))
        return "rotation";
    if (!isfinite(o->scale.x) || !isfinite(o->scale.y))
        return "scale";
    for (int c = 0; c < 4; c++)
        if (!isfinite(o->tint[c]))
            return "tint";
    for (uint32_t v = bone->vert_off; v < bone->vert_off + bone->vert_len; v++)
        if (!isfinite(p->verts[v].x) || !isfinite(p->verts[v].y))
            return "mesh vertices";
    return NULL;
}

/* Whether all of p's constructed numbers are finite, in one pass without a branch a number:
 * x * 0 is 0 for a finite x and NaN for an infinite or NaN one, and a NaN stays in a sum. */
static bool all_finite(const struct pose *p)
{
    double z0 = 0, z1 = 0;
    for (uint32_t b = 0; b < p->arm->bone_count; b++) {
        const struct bone_out *o = &p->out[b];
        z0 += o->pos.x * 0 + o->pos.y * 0 + o->rot * 0 + o->scale.x * 0 + o->scale.y * 0;
        z1 += o->tint[0] * 0 + o->tint[1] * 0 + o->tint[2] * 0 + o->tint[3] * 0;
    }
    for (uint32_t v = 0; v < p->arm->vert_count; v++) {
        z0 += p->verts[v].x * 0;
        z1 += p->verts[v].y * 0;
    }
    return z0 + z1 == 0;
}

int pose_check_finite(const struct pose *p, struct eng_error *err)
{
    if (all_finite(p)) /* the rule; the scan below only names the exception */
        return 0;
    for (uint32_t b = 0; b < p->arm->bone_count; b++) {
        const char *field = unfinite_field(p, b);
        if (field) {
            char q[ENG_QUOTE_MAX];
            return eng_seterr(
                err, ENG_EBADFILE,
                "bone %u \"%s\": its %s is not a finite number at this frame (the file's "
                "numbers overflow)",
                b, eng_quote(p->arm->bones[b].name, q), field);
        }
    }
    return 0;
}
