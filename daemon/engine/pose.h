/* Per-instance evaluation state: one struct pose per stateful instance (or per worker for
 * stateless requests). Arrays are flat and index-parallel to armature->bones; they are
 * allocated once by pose_new() and evaluation allocates nothing afterwards.
 *
 * A pose is owned by one thread at a time; the armature it points to must outlive it. */
#ifndef SKELD_ENGINE_POSE_H
#define SKELD_ENGINE_POSE_H

#include "armature.h"
#include "errors.h"

/* A constructed bone: world transform plus the fields a drawer needs. */
struct bone_out {
    struct vec2 pos, scale;
    double rot;
    double cos_rot, sin_rot; /* of rot where PLAN_TRIG (construct keeps them with it) */
    double tint[4];
    int zindex;
    int tex; /* tex name index, -1 none */
    bool hidden;
};

/* A rotation with its cosine and sine, so they are computed once. */
struct rot_trig {
    double rot, c, s;
};

/* Per-bone physics state that persists between steps. */
struct phys_state {
    struct vec2 pos, scale;
    double rot, orbit, orbit_vel, orbit_diff;
};

struct pose {
    const struct armature *arm;
    struct bone_fields *local; /* animated local fields (smoothing reads them next step) */
    struct phys_state *phys;
    struct bone_out *out;        /* constructed bones, by bone index */
    struct vec2 *verts;          /* constructed mesh vertices, parallel to arm->vert_init */
    struct rot_trig *ik_rot;     /* IK rotation override per bone (valid where ik_has) */
    struct rot_trig *local_trig; /* cos/sin of local rotations, recomputed when they change */
    uint8_t *ik_has;             /* 1 where ik_rot holds an override this step */
    uint16_t *keyed;             /* per bone: mask of elements keyed by the playing animations */
    struct vec2 *chain;          /* scratch: every bone's position while IK runs */
    double *chain_dist;          /* scratch for Arc IK, one per chain bone */
    struct rot_trig *chain_rot;  /* scratch for IK rotations, one per chain bone */
    struct vec2 *chain_before;   /* scratch for FABRIK, one per chain bone */
};

/* The 2x3 world matrix of bone b of a constructed pose, what a GPU client uploads:
 * x' = m[0]*x + m[2]*y + m[4], y' = m[1]*x + m[3]*y + m[5] maps a point of the bone's own
 * space (a texture corner, a vertex init_pos) to armature space. */
void pose_bone_matrix(const struct pose *p, uint32_t b, double m[6]);

/* Allocates a pose for arm and resets it. Returns NULL on allocation failure. Any thread. */
struct pose *pose_new(const struct armature *arm);

/* Frees p; NULL is fine. */
void pose_free(struct pose *p);

/* The bytes pose_new takes for an instance of arm (its one allocation): what a daemon counts
 * against its budget for instances. */
size_t pose_bytes(const struct armature *arm);

/* Whether every constructed number of p (each bone's transform and tint, every vertex) is
 * finite: a file's extreme but valid numbers (a sway of 1e308, handles of 1e300) can overflow
 * in Animate or Construct, and a NaN must never leave as an answer. 0, or ENG_EBADFILE with
 * err naming the first bone and field that is not. Allocates nothing. */
int pose_check_finite(const struct pose *p, struct eng_error *err);

/* Returns p to the state of a freshly loaded file: locals from the file, physics state from
 * the file, no history. Allocates nothing. */
void pose_reset(struct pose *p);

#endif
