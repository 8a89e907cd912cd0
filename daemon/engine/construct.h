/* Construct: local fields -> world transforms, with IK, physics and mesh deformation. */
#ifndef SKELD_ENGINE_CONSTRUCT_H
#define SKELD_ENGINE_CONSTRUCT_H

#include "pose.h"

/* Options applied after the generic construct, per request (the engine runtimes' options). */
struct construct_opts {
    struct vec2 position; /* added to positions after scaling */
    struct vec2 scale;    /* multiplies positions and scales; one negative axis flips rot */
    struct vec2 velocity; /* subtracted from the physics position state */
    bool y_down;          /* negate y and rotations (for y-down clients) */
};

/* Identity options: position 0, scale 1, velocity 0, y up. */
void construct_opts_default(struct construct_opts *o);

/* Where the options put a point of armature space (y flipped first, then scaled, then moved),
 * as Construct moves bones and vertices. o NULL is the identity. */
struct vec2 construct_opts_point(const struct construct_opts *o, struct vec2 v);

/* Constructs p->out and p->verts from p->local and advances the physics state.
 * opts may be NULL (identity). Allocates nothing. */
void construct(struct pose *p, const struct construct_opts *opts);

/* Inheritance of one bone onto its parent's constructed transform (exposed for tests). */
void construct_inherit(struct bone_out *child, const struct bone_out *parent, double orbit);

/* Computes arm->plan, any_phys, max_chain, the passes' bone lists, the start fields' array
 * and the mesh plan. Loader only. Returns 0 or -1 (no memory). */
int construct_plan(struct armature *arm);

/* The mesh part of the plan (mesh.c): the bones with vertices, and where path binds lay every
 * vertex. Returns 0 or -1 (no memory). */
int mesh_plan(struct armature *arm);

/* Internal parts of construct, one file each. */
void ik_solve(struct pose *p);
void physics_step(struct pose *p);
void mesh_construct(struct pose *p);
double shortest_angle_delta(double from, double to);
double ik_angle(double y, double x); /* atan2, faster (ik.c) */

#endif
