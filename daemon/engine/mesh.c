/* Mesh vertices (SPEC.md section 2, step 7, and section 4): each vertex follows its bone,
 * weighted binds pull it toward another bone's transform, path binds lay it along the chain of
 * bind bones. A 0.6/0.7 mesh's pivot_rot and pivot_scale turn and scale its vertices about the
 * bone (and about a weighted bind's bone); path binds ignore them, and pivot_pos is a draw-time
 * offset (render.c). */
#include "construct.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Where a mesh's vertices land on a bone: rotation (cos, sin), scale, translation. For a
 * 0.6/0.7 mesh the rotation adds the mesh's pivot_rot and the scale its pivot_scale; composed
 * once per bone, so the per-vertex work is the same for both layouts. */
struct xform {
    double c, s, sx, sy, x, y;
};

static struct xform xform_of(const struct bone_out *b, const struct arm_bone *mesh)
{
    /* cos/sin cached by construct (PLAN_TRIG) */
    struct xform t = {b->cos_rot, b->sin_rot, b->scale.x, b->scale.y, b->pos.x, b->pos.y};
    if (mesh->pivot_xform) {
        t.c = b->cos_rot * mesh->pivot_cos - b->sin_rot * mesh->pivot_sin;
        t.s = b->sin_rot * mesh->pivot_cos + b->cos_rot * mesh->pivot_sin;
        t.sx *= mesh->pivot_scale.x;
        t.sy *= mesh->pivot_scale.y;
    }
    return t;
}

static struct vec2 place_vert(struct vec2 v, const struct xform *t)
{
    double x = v.x * t->sx, y = v.y * t->sy;
    return (struct vec2){x * t->c - y * t->s + t->x, x * t->s + y * t->c + t->y};
}

/* The same without pivots, straight from the bone (every 0.5 mesh): the hot path. */
static struct vec2 inherit_vert(struct vec2 v, const struct bone_out *b)
{
    double x = v.x * b->scale.x, y = v.y * b->scale.y;
    return (struct vec2){x * b->cos_rot - y * b->sin_rot + b->pos.x,
                         x * b->sin_rot + y * b->cos_rot + b->pos.y};
}

/* n vertices of init placed on bone b with mesh's pivots, into out. */
static void place_verts(const struct vec2 *init, struct vec2 *out, const struct bone_out *b,
                        const struct arm_bone *mesh, uint32_t n)
{
    if (!mesh->pivot_xform) {
        for (uint32_t v = 0; v < n; v++)
            out[v] = inherit_vert(init[v], b);
        return;
    }
    const struct xform t = xform_of(b, mesh);
    for (uint32_t v = 0; v < n; v++)
        out[v] = place_vert(init[v], &t);
}

static struct vec2 normal_of(struct vec2 from, struct vec2 to)
{
    struct vec2 n = {-(to.y - from.y), to.x - from.x};
    double m = sqrt(n.x * n.x + n.y * n.y);
    if (m == 0.0)
        return (struct vec2){0.0, 0.0};
    return (struct vec2){n.x / m, n.y / m};
}

/* Unit normal of the segment between the positions of two binds' bones; an unset bone (-1)
 * stands at the other end, giving a zero segment, where the reference would fail. */
static struct vec2 segment_normal(const struct pose *p, const struct arm_bind *from,
                                  const struct arm_bind *to)
{
    if (from->bone < 0 || to->bone < 0)
        return (struct vec2){0.0, 0.0};
    return normal_of(p->out[from->bone].pos, p->out[to->bone].pos);
}

/* Path binds lay their vertices around the bind bone, turned to the average normal of the
 * segments to the previous and next bind. The reference takes atan2 of that average and
 * rotates by the angle; its direction normalised is the same rotation (atan2(0, 0) is 0). */
static void path_bind(struct pose *p, const struct arm_bone *bone, uint32_t bi, struct vec2 n_prev,
                      struct vec2 n_next)
{
    const struct armature *arm = p->arm;
    const struct arm_bind *bind = &arm->binds[bone->bind_off + bi];
    struct vec2 at = p->out[bind->bone].pos;
    double x = n_prev.x + n_next.x, y = n_prev.y + n_next.y, m = sqrt(x * x + y * y);
    double c = m > 0.0 ? x / m : 1.0, s = m > 0.0 ? y / m : 0.0;
    const struct vec2 *init = arm->vert_init + bone->vert_off;
    struct vec2 *verts = p->verts + bone->vert_off;
    const struct arm_bind_vert *bv = arm->bind_verts + bind->vert_off;
    for (uint32_t i = 0; i < bind->vert_len; i++) {
        struct vec2 v = init[bv[i].vert];
        double w = bv[i].weight;
        verts[bv[i].vert] =
            (struct vec2){at.x + (v.x * c - v.y * s) * w, at.y + (v.x * s + v.y * c) * w};
    }
}

/* Weighted binds pull each vertex toward where the bind bone would put it. */
static void weight_bind(struct pose *p, const struct arm_bone *bone, const struct arm_bind *bind)
{
    const struct armature *arm = p->arm;
    const struct bone_out *bb = &p->out[bind->bone];
    const struct xform t = xform_of(bb, bone);
    const struct vec2 *init = arm->vert_init + bone->vert_off;
    struct vec2 *verts = p->verts + bone->vert_off;
    const struct arm_bind_vert *bv = arm->bind_verts + bind->vert_off;
    for (uint32_t i = 0; i < bind->vert_len; i++) {
        uint32_t v = bv[i].vert;
        struct vec2 end = bone->pivot_xform ? place_vert(init[v], &t) : inherit_vert(init[v], bb);
        verts[v].x += (end.x - verts[v].x) * bv[i].weight;
        verts[v].y += (end.y - verts[v].y) * bv[i].weight;
    }
}

static void bone_binds(struct pose *p, const struct arm_bone *bone)
{
    const struct arm_bind *binds = p->arm->binds + bone->bind_off;
    uint32_t n = bone->bind_len;
    /* Normal of the segment before bind bi; the first bind's "previous" is itself. */
    struct vec2 n_prev = {0.0, 0.0};
    for (uint32_t bi = 0; bi < n; bi++) {
        struct vec2 n_next =
            bi + 1 < n ? segment_normal(p, &binds[bi], &binds[bi + 1]) : (struct vec2){0.0, 0.0};
        if (binds[bi].bone >= 0) {
            if (binds[bi].is_path)
                path_bind(p, bone, bi, n_prev, n_next);
            else
                weight_bind(p, bone, &binds[bi]);
        }
        n_prev = n_next;
    }
}

/* Whether every vertex of the bone is written by a path bind (which overwrites) before any
 * weighted bind (which pulls from the current place) reads it. seen is scratch, one byte a
 * vertex. */
static bool laid_by_paths(const struct armature *arm, const struct arm_bone *bone, uint8_t *seen)
{
    memset(seen, 0, bone->vert_len);
    for (uint32_t bi = 0; bi < bone->bind_len; bi++) {
        const struct arm_bind *bind = &arm->binds[bone->bind_off + bi];
        if (bind->bone < 0)
            continue;
        const struct arm_bind_vert *bv = arm->bind_verts + bind->vert_off;
        for (uint32_t i = 0; i < bind->vert_len; i++) {
            if (!bind->is_path && !seen[bv[i].vert])
                return false; /* a weighted bind reads the placement */
            seen[bv[i].vert] = 1;
        }
    }
    for (uint32_t v = 0; v < bone->vert_len; v++)
        if (!seen[v])
            return false; /* this one keeps its placement */
    return true;
}

int mesh_plan(struct armature *arm)
{
    uint32_t n = 0, most = 0;
    for (uint32_t b = 0; b < arm->bone_count; b++)
        if (arm->bones[b].vert_len) {
            n++;
            most = arm->bones[b].vert_len > most ? arm->bones[b].vert_len : most;
        }
    arm->mesh_bones = malloc((n ? n : 1) * sizeof *arm->mesh_bones);
    uint8_t *seen = malloc(most ? most : 1);
    if (!arm->mesh_bones || !seen) {
        free(seen);
        return -1;
    }
    arm->mesh_bone_count = 0;
    for (uint32_t b = 0; b < arm->bone_count; b++) {
        struct arm_bone *bone = &arm->bones[b];
        if (!bone->vert_len)
            continue;
        arm->mesh_bones[arm->mesh_bone_count++] = b;
        bone->verts_laid_by_paths = laid_by_paths(arm, bone, seen);
    }
    free(seen);
    arm->mem_bytes += n * sizeof *arm->mesh_bones;
    return 0;
}

void mesh_construct(struct pose *p)
{
    const struct armature *arm = p->arm;
    for (uint32_t i = 0; i < arm->mesh_bone_count; i++) {
        uint32_t b = arm->mesh_bones[i];
        const struct arm_bone *bone = &arm->bones[b];
        if (!bone->verts_laid_by_paths) /* else the path binds below lay every vertex */
            place_verts(arm->vert_init + bone->vert_off, p->verts + bone->vert_off, &p->out[b],
                        bone, bone->vert_len);
        bone_binds(p, bone);
    }
}
