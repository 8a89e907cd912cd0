/* Construct (SPEC.md section 2): inheritance, IK, inheritance with IK rotations, physics,
 * inheritance with physics, mesh vertices; then the per-request engine options.
 *
 * The reference runs inheritance three times over every bone. The second pass differs from
 * the first only for bones that get an IK rotation and their descendants (PLAN_IK), and the
 * third from the second only for physics bones and their descendants (PLAN_PHYS); those sets
 * are fixed per armature (construct_plan), so the later passes revisit only them, and the
 * first pass skips PLAN_IK bones whose first-pass position nothing reads; each pass walks a
 * list of its bones made at load. cos/sin of a world rotation are computed once, where
 * children, vertices or binds read them (PLAN_TRIG). The numbers are the reference's. */
#include "construct.h"

#include <math.h>
#include <stdlib.h>

enum pass { PASS_PLAIN, PASS_IK, PASS_PHYS };

void construct_opts_default(struct construct_opts *o)
{
    *o = (struct construct_opts){{0, 0}, {1, 1}, {0, 0}, false};
}

struct vec2 construct_opts_point(const struct construct_opts *o, struct vec2 v)
{
    if (!o)
        return v;
    double y = o->y_down ? -v.y : v.y;
    return (struct vec2){v.x * o->scale.x + o->position.x, y * o->scale.y + o->position.y};
}

static void rotate_onto(struct bone_out *child, const struct bone_out *parent, double orbit,
                        double c, double s)
{
    double x = child->pos.x * parent->scale.x, y = child->pos.y * parent->scale.y;
    child->rot += orbit;
    child->scale.x *= parent->scale.x;
    child->scale.y *= parent->scale.y;
    child->pos.x = x * c - y * s + parent->pos.x;
    child->pos.y = x * s + y * c + parent->pos.y;
}

void construct_inherit(struct bone_out *child, const struct bone_out *parent, double orbit)
{
    rotate_onto(child, parent, orbit, cos(orbit), sin(orbit));
}

static void set_trig(struct bone_out *o, double c, double s)
{
    o->cos_rot = c;
    o->sin_rot = s;
}

/* cos/sin of the bone's local rotation, recomputed only when the rotation changed. */
static const struct rot_trig *local_trig(struct pose *p, uint32_t b)
{
    struct rot_trig *t = &p->local_trig[b];
    if (t->rot != p->local[b].rot) {
        t->rot = p->local[b].rot;
        t->c = cos(t->rot);
        t->s = sin(t->rot);
    }
    return t;
}

/* Inherits o from its parent. Returns true if o's cos/sin are set: the world rotation is the
 * local one plus the parent's, so they compose from cached values without a sincos call. */
static bool inherit_parent(struct pose *p, uint32_t b, int pi, enum pass pass, struct bone_out *o)
{
    /* A parent listed after its child has not been inherited yet in this pass: the
     * reference then reads its raw local fields. */
    bool sway = pass == PASS_PHYS && p->arm->bones[b].phys.sway > 0.0;
    if ((uint32_t)pi > b) {
        struct bone_out raw = {
            .pos = p->local[pi].pos, .scale = p->local[pi].scale, .rot = p->local[pi].rot};
        construct_inherit(o, &raw, sway ? raw.rot - p->phys[b].orbit_diff : raw.rot);
        return false;
    }
    const struct bone_out *parent = &p->out[pi];
    if (sway) {
        construct_inherit(o, parent, parent->rot - p->phys[b].orbit_diff);
        return false;
    }
    rotate_onto(o, parent, parent->rot, parent->cos_rot, parent->sin_rot);
    if (!(p->arm->plan[b] & PLAN_TRIG))
        return false;
    const struct rot_trig *l = local_trig(p, b);
    set_trig(o, l->c * parent->cos_rot - l->s * parent->sin_rot,
             l->s * parent->cos_rot + l->c * parent->sin_rot);
    return true;
}

static bool solves_ik(const struct armature *arm)
{
    return !arm->baked_ik && arm->ik_root_count > 0;
}

static void inherit_bone(struct pose *p, uint32_t b, enum pass pass)
{
    const struct arm_bone *bone = &p->arm->bones[b];
    const struct bone_fields *lf = &p->local[b];
    struct bone_out *o = &p->out[b];
    o->pos = lf->pos;
    o->scale = lf->scale;
    o->rot = lf->rot;
    bool trig = false;
    if (bone->parent >= 0) {
        trig = inherit_parent(p, b, bone->parent, pass, o);
    } else if (p->arm->plan[b] & PLAN_TRIG) {
        const struct rot_trig *l = local_trig(p, b);
        set_trig(o, l->c, l->s);
        trig = true;
    }
    if (pass != PASS_PLAIN && p->ik_has[b]) {
        const struct rot_trig *ik = &p->ik_rot[b];
        o->rot = ik->rot;
        set_trig(o, ik->c, ik->s);
        trig = true;
    }
    if (pass == PASS_PHYS) {
        const struct bone_phys *ph = &bone->phys;
        if (ph->rot_damping > 0.0) {
            o->rot = p->phys[b].rot;
            trig = false;
        }
        if (ph->pos_damping > 0.0)
            o->pos = p->phys[b].pos;
        if (ph->scale_damping > 0.0)
            o->scale = p->phys[b].scale;
    }
    if (!trig && (p->arm->plan[b] & PLAN_TRIG))
        set_trig(o, cos(o->rot), sin(o->rot));
}

/* Runs one pass over the bones the plan lists for it (list_passes). */
static void inherit_pass(struct pose *p, enum pass pass)
{
    const uint32_t *b = p->arm->pass_bones + p->arm->pass_off[pass];
    for (uint32_t i = 0, n = p->arm->pass_len[pass]; i < n; i++)
        inherit_bone(p, b[i], pass);
}

static void finish_bone(struct pose *p, uint32_t b, const struct construct_opts *opts)
{
    const struct bone_fields *lf = &p->local[b];
    struct bone_out *o = &p->out[b];
    o->hidden = lf->hidden;
    o->zindex = lf->zindex;
    o->tex = lf->tex;
    if (p->arm->bones[b].no_visuals) { /* keys have nowhere to put a texture or a zindex */
        o->zindex = 0;
        o->tex = -1;
    }
    for (int i = 0; i < 4; i++)
        o->tint[i] = lf->tint[i];
    if (!opts)
        return;
    if (opts->y_down) {
        o->pos.y = -o->pos.y;
        o->rot = -o->rot;
        o->sin_rot = -o->sin_rot; /* cos/sin stay those of rot (pose_bone_matrix) */
    }
    o->scale.x *= opts->scale.x;
    o->scale.y *= opts->scale.y;
    o->pos.x = o->pos.x * opts->scale.x + opts->position.x;
    o->pos.y = o->pos.y * opts->scale.y + opts->position.y;
    /* CheckBoneFlip: a mirror on exactly one axis reverses rotations. */
    if ((opts->scale.x < 0.0) != (opts->scale.y < 0.0)) {
        o->rot = -o->rot;
        o->sin_rot = -o->sin_rot;
    }
}

static bool is_identity(const struct construct_opts *o)
{
    return !o || (!o->y_down && o->position.x == 0.0 && o->position.y == 0.0 && o->scale.x == 1.0 &&
                  o->scale.y == 1.0 && o->velocity.x == 0.0 && o->velocity.y == 0.0);
}

static void apply_vertex_opts(struct pose *p, const struct construct_opts *opts)
{
    for (uint32_t v = 0; v < p->arm->vert_count; v++)
        p->verts[v] = construct_opts_point(opts, p->verts[v]);
    for (uint32_t b = 0; b < p->arm->bone_count; b++) {
        if (p->arm->bones[b].has_phys) {
            p->phys[b].pos.x -= opts->velocity.x;
            p->phys[b].pos.y -= opts->velocity.y;
        }
    }
}

void construct(struct pose *p, const struct construct_opts *opts)
{
    const struct armature *arm = p->arm;
    inherit_pass(p, PASS_PLAIN);
    if (solves_ik(arm)) {
        ik_solve(p);
        inherit_pass(p, PASS_IK);
    }
    if (arm->any_phys) {
        physics_step(p);
        inherit_pass(p, PASS_PHYS);
    }
    mesh_construct(p);
    if (is_identity(opts))
        opts = NULL;
    for (uint32_t b = 0; b < arm->bone_count; b++)
        finish_bone(p, b, opts);
    if (opts)
        apply_vertex_opts(p, opts);
}

/* Only parents evaluated before their child pass a change on within a pass. */
static void mark_descendants(const struct armature *arm, uint8_t bit)
{
    for (uint32_t b = 0; b < arm->bone_count; b++) {
        int pi = arm->bones[b].parent;
        if (pi >= 0 && (uint32_t)pi < b && (arm->plan[pi] & bit))
            arm->plan[b] |= bit;
    }
}

/* Whether any family can ever mimic its target (then its last bone may be overridden). */
static bool may_mimic(const struct armature *arm)
{
    for (uint32_t r = 0; r < arm->ik_root_count; r++) {
        const struct arm_bone *root = &arm->bones[arm->ik_roots[r]];
        if (root->start.ik_mimic || root->init.ik_mimic)
            return true;
    }
    for (uint32_t t = 0; t < arm->track_count; t++)
        if (arm->tracks[t].element == EL_MIMIC_TARGET)
            return true;
    return false;
}

static void mark_ik(struct armature *arm)
{
    arm->may_mimic = may_mimic(arm);
    for (uint32_t r = 0; r < arm->ik_root_count; r++) {
        const struct arm_bone *root = &arm->bones[arm->ik_roots[r]];
        if (root->ik_len > arm->max_chain)
            arm->max_chain = root->ik_len;
        for (uint32_t i = 0; i < root->ik_len; i++) {
            int id = arm->ik_chain[root->ik_off + i];
            /* The last bone too where mimic_target can override its rotation. */
            bool ik = i + 1 < root->ik_len || arm->may_mimic;
            arm->plan[id] |= PLAN_IK_INPUT | (ik ? PLAN_IK : 0);
        }
        arm->plan[arm->ik_roots[r]] |= PLAN_IK_INPUT;
        arm->plan[root->ik_target] |= PLAN_IK_INPUT;
    }
    mark_descendants(arm, PLAN_IK);
    /* IK reads first-pass positions, which need the ancestors' first-pass values. */
    for (uint32_t b = arm->bone_count; b-- > 0;) {
        int pi = arm->bones[b].parent;
        if (pi >= 0 && (arm->plan[b] & PLAN_IK_INPUT))
            arm->plan[pi] |= PLAN_IK_INPUT;
    }
}

static void mark_trig(struct armature *arm)
{
    for (uint32_t b = 0; b < arm->bone_count; b++) {
        const struct arm_bone *bone = &arm->bones[b];
        if (bone->parent >= 0)
            arm->plan[bone->parent] |= PLAN_TRIG;
        if (bone->vert_len)
            arm->plan[b] |= PLAN_TRIG;
        for (uint32_t i = 0; i < bone->bind_len; i++) {
            const struct arm_bind *bind = &arm->binds[bone->bind_off + i];
            if (bind->bone >= 0 && !bind->is_path)
                arm->plan[bind->bone] |= PLAN_TRIG;
        }
    }
}

/* Whether a pass visits bone b: the first pass every bone, but with IK only those whose
 * first-pass values IK reads or that IK does not turn; the later ones their own sets. */
static bool pass_visits(const struct armature *arm, enum pass pass, uint32_t b)
{
    uint8_t plan = arm->plan[b];
    switch (pass) {
    case PASS_PLAIN: return !solves_ik(arm) || !(plan & PLAN_IK) || (plan & PLAN_IK_INPUT);
    case PASS_IK: return plan & PLAN_IK;
    default: return plan & PLAN_PHYS;
    }
}

/* The passes' bone lists, so that a step walks them instead of testing every bone's plan
 * bits three times. */
static int list_passes(struct armature *arm)
{
    uint32_t n = arm->bone_count, at = 0;
    arm->pass_bones = malloc(3 * (size_t)(n ? n : 1) * sizeof *arm->pass_bones);
    if (!arm->pass_bones)
        return -1;
    for (int k = PASS_PLAIN; k <= PASS_PHYS; k++) {
        arm->pass_off[k] = at;
        for (uint32_t b = 0; b < n; b++)
            if (pass_visits(arm, (enum pass)k, b))
                arm->pass_bones[at++] = b;
        arm->pass_len[k] = at - arm->pass_off[k];
    }
    arm->mem_bytes += at * sizeof *arm->pass_bones;
    return 0;
}

/* Every bone's start fields in one array: pose_reset copies them at once. */
static int list_starts(struct armature *arm)
{
    uint32_t n = arm->bone_count;
    arm->starts = malloc((n ? n : 1) * sizeof *arm->starts);
    if (!arm->starts)
        return -1;
    for (uint32_t b = 0; b < n; b++)
        arm->starts[b] = arm->bones[b].start;
    arm->mem_bytes += n * sizeof *arm->starts;
    return 0;
}

/* What one Animate + Construct step costs, in bone-steps (one bone's work, 50-110 ns on the
 * development machines), for the work budget (request.c) and the choice to run a request on
 * the loop thread (dispatch.c): every bone, and what a file can make cost far more than its
 * bones: each IK chain entry (ten solver iterations of a few ns: 2), each mesh vertex and
 * bound vertex (a few ns: 1/8), each keyframe of a track searched one by one, not by bisection
 * (1/32). A 3-bone file with a chain of 490,000 entries once passed as 3 bone-steps a step
 * and pinned a worker for half an hour. */
static uint64_t step_weight(const struct armature *arm)
{
    uint64_t w = arm->bone_count ? arm->bone_count : 1, chain = 0, bound = 0, scanned = 0;
    for (uint32_t r = 0; r < arm->ik_root_count; r++)
        chain += arm->bones[arm->ik_roots[r]].ik_len;
    for (uint32_t b = 0; b < arm->bind_count; b++)
        bound += arm->binds[b].vert_len;
    for (uint32_t t = 0; t < arm->track_count; t++)
        if (!arm->tracks[t].monotone)
            scanned += arm->tracks[t].kf_len;
    return w + 2 * chain + (arm->vert_count + bound) / 8 + scanned / 32;
}

int construct_plan(struct armature *arm)
{
    uint32_t n = arm->bone_count;
    arm->plan = calloc(n ? n : 1, 1);
    if (!arm->plan)
        return -1;
    arm->max_chain = 0;
    mark_ik(arm);
    mark_trig(arm);
    arm->any_phys = false;
    for (uint32_t b = 0; b < n; b++) {
        const struct bone_phys *ph = &arm->bones[b].phys;
        arm->any_phys |= arm->bones[b].has_phys;
        if (ph->rot_damping > 0.0 || ph->pos_damping > 0.0 || ph->scale_damping > 0.0 ||
            ph->sway > 0.0)
            arm->plan[b] |= PLAN_PHYS;
    }
    mark_descendants(arm, PLAN_PHYS);
    arm->step_weight = step_weight(arm);
    return list_passes(arm) || list_starts(arm) || mesh_plan(arm) ? -1 : 0;
}
