/* The immutable armature: everything read from a .skf file, resolved to indices.
 *
 * After armature_load() returns, nothing here changes; every thread reads it through a
 * const pointer with no locks. Per-instance state (animated fields, smoothing history,
 * physics, constructed output) lives in struct pose (pose.h). Bones keep their file ids as
 * indices (ids are sequential from 0), because the reference runtime evaluates in id order. */
#ifndef SKELD_ENGINE_ARMATURE_H
#define SKELD_ENGINE_ARMATURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vec2 {
    double x, y;
};

/* Keyframe elements. The order is the bit order of the per-bone "keyed" masks. */
enum arm_element {
    EL_POS_X,
    EL_POS_Y,
    EL_ROT,
    EL_SCALE_X,
    EL_SCALE_Y,
    EL_HIDDEN,
    EL_TINT_R,
    EL_TINT_G,
    EL_TINT_B,
    EL_TINT_A,
    EL_ZINDEX,
    EL_TEXTURE,
    EL_IK_CONSTRAINT,
    EL_IK_MODE,
    EL_MIMIC_TARGET, /* 0.6/0.7: the family's mimic_target, 0/1 */
    EL_COUNT
};

enum arm_ik_mode { IK_FABRIK = 0, IK_ARC = 1 };
enum arm_ik_constraint { IKC_NONE = 0, IKC_CLOCKWISE = 1, IKC_COUNTER_CLOCKWISE = 2 };

/* The local (animatable) fields of a bone. The armature holds two sets per bone: the values
 * a fresh instance starts with (the file's pos/rot/...) and the init_* rest values that
 * unkeyed fields return to. */
struct bone_fields {
    struct vec2 pos, scale;
    double rot;
    double tint[4]; /* r, g, b, a in 0..255 (0.6/0.7 files store 0..1: scaled on load) */
    int zindex;
    int tex; /* index into armature.tex_names, -1 for none */
    bool hidden;
    /* IK family state, read on the family's root bone (0.6/0.7 keys on any chain bone are
     * loaded onto the root) */
    uint8_t ik_mode, ik_constraint;
    bool ik_mimic; /* the chain's last bone takes the target's rotation */
};

/* Physics parameters and the initial physics state stored in the file. */
struct bone_phys {
    double pos_damping, pos_ratio, scale_damping, scale_ratio, rot_damping, sway, rot_bounce;
    struct vec2 global_pos, global_scale;
    double global_rot, global_orbit, global_orbit_vel, global_orbit_diff;
};

struct arm_bone {
    char *name;
    int parent; /* bone index, -1 for a root */
    struct bone_fields start, init;
    struct bone_phys phys;
    bool has_phys;                 /* any damping or sway: physics runs for this bone */
    int ik_target;                 /* family root only: target bone, -1 if none */
    uint32_t ik_off, ik_len;       /* family root only: chain in armature.ik_chain */
    uint32_t vert_off, vert_len;   /* mesh vertices in armature.vert_* */
    uint32_t index_off, index_len; /* triangle vertex indices in armature.indices */
    uint32_t bind_off, bind_len;   /* binds in armature.binds */
    /* Visual pivots (0.6/0.7; identity in 0.5): pivot_pos is a fraction of the texture's
     * size, applied at draw time; pivot_rot and pivot_scale also turn and scale the mesh. */
    struct vec2 pivot_pos, pivot_scale;
    double pivot_rot, pivot_cos, pivot_sin;
    bool pivot_xform; /* pivot_rot or pivot_scale is not the identity */
    /* Every vertex is laid by a path bind before any weighted bind reads it, so placing
     * them on the bone first would be lost (mesh_plan). */
    bool verts_laid_by_paths;
    /* 0.6/0.7: visuals_id -1. No texture, zindex 0, never drawn (SPEC.md section 4), whatever
     * Texture or Zindex keys an animation has for the bone. */
    bool no_visuals;
};

struct arm_bind {
    int bone; /* -1 = unset */
    bool is_path;
    uint32_t vert_off, vert_len; /* in armature.bind_verts */
};

struct arm_bind_vert {
    uint32_t vert; /* index within the bone's vertices */
    double weight;
};

struct arm_keyframe {
    double frame;
    double value;       /* float elements; Hidden is 0/1; Zindex a whole number */
    int ivalue;         /* Texture: tex name index (-1 none); IkMode/IkConstraint enum */
    struct vec2 h1, h2; /* this keyframe's start and end handles */
    uint32_t next;      /* index within the track of the next keyframe, or its own index */
    uint32_t ease_off;  /* easing of frames kf.frame + 0.. in armature.ease, or NO_EASE */
};

#define NO_EASE UINT32_MAX
#define EASE_MAX_SPAN 4096u       /* longer gaps between keyframes are eased on the fly */
#define EASE_MAX_TOTAL (1u << 22) /* entries over the whole armature */

/* All keyframes of one animation for one bone and element, in file order. */
struct arm_track {
    int bone;
    int element;
    uint32_t kf_off, kf_len; /* in armature.keyframes */
    bool monotone;           /* "next" frames never decrease: binary search is exact */
};

/* The latest keyframe frame a file may have: 4.6 hours at 60 fps. Framing an animation plays
 * every frame up to its last, so a frame of 2^40 would be a request that never ends. */
#define ARM_MAX_FRAME 1000000

struct arm_anim {
    char *name;
    double fps;
    double last_frame; /* frame of the last keyframe in the file's list (0 if none) */
    uint32_t track_off, track_len;
};

struct arm_texture {
    char *name;
    int name_idx; /* index into armature.tex_names */
    struct vec2 offset, size;
    int atlas;
};

struct arm_style {
    char *name;
    int id;
    uint32_t tex_off, tex_len; /* in armature.textures */
    int *by_name;              /* tex_name index -> texture index in armature.textures, -1 */
};

struct arm_atlas {
    char *filename;
    uint32_t width, height;
    uint8_t *rgba;  /* decoded once, premultiplied alpha, width*height*4 bytes; NULL if the
                     * loader was told to skip pixels */
    uint8_t *clear; /* 1 bit per 4x4 texel block, set where the block and its neighbours to
                     * the right, below and diagonally (those inside the atlas) have alpha 0
                     * everywhere, so every bilinear footprint starting in the block is
                     * empty; rows of clear_stride bytes: lets the renderer skip fetches of
                     * empty space with one look */
    uint32_t clear_stride;
};

/* Where a file keeps visuals, IK and physics: on the bones (0.5) or in the visuals[],
 * inverse_kinematics[] and physics[] arrays (0.6 and 0.7). Decided from the keys, never from
 * the version string. The layout also picks two rules: IK families solve independently from
 * the first inheritance (arrays), and within one zindex the lower bone id draws first
 * (arrays; 0.5's player draws the higher first). */
enum arm_layout { ARM_LAYOUT_BONES = 0, ARM_LAYOUT_ARRAYS = 1 };

struct armature {
    char *version;
    uint8_t layout; /* enum arm_layout */
    bool baked_ik;
    uint32_t bone_count;
    struct arm_bone *bones;
    uint32_t ik_root_count;
    int *ik_roots; /* family roots with a target, in file (or inverse_kinematics[]) order */
    int *ik_chain; /* concatenated chains */
    uint32_t vert_count;
    struct vec2 *vert_init; /* init_pos of every mesh vertex */
    struct vec2 *vert_uv;
    uint32_t *indices;
    uint32_t index_count;
    struct arm_bind *binds;
    uint32_t bind_count;
    struct arm_bind_vert *bind_verts;
    uint32_t anim_count;
    struct arm_anim *anims;
    struct arm_track *tracks;
    uint32_t track_count;
    struct arm_keyframe *keyframes;
    uint32_t keyframe_count;
    double *ease; /* precomputed easing progress for whole frames between keyframes */
    uint32_t ease_count;
    uint32_t tex_name_count;
    char **tex_names;    /* distinct texture names used by bones, keyframes and styles */
    size_t tex_name_max; /* the longest of them, in bytes: replies are sized without strlen */
    uint32_t style_count;
    struct arm_style *styles;
    int default_style; /* the first style named exactly "Default" (the renderer's default), or -1 */
    struct arm_texture *textures;
    uint32_t texture_count;
    uint32_t atlas_count;
    struct arm_atlas *atlases;
    /* Precomputed evaluation plan (see construct.c): PLAN_* bits per bone, and the bones
     * each inheritance pass visits, in order: pass_bones + pass_off[k], pass_len[k] of them
     * (k: the first pass, the one with IK rotations, the one with physics). */
    uint8_t *plan;
    uint32_t *pass_bones;
    uint32_t pass_off[3], pass_len[3];
    struct bone_fields *starts; /* every bone's start fields in one array, for pose_reset */
    uint32_t *mesh_bones;       /* the bones with vertices, in order */
    uint32_t mesh_bone_count;
    bool any_phys;
    bool may_mimic;       /* a family has mimic_target on, or a MimicTarget key */
    uint32_t max_chain;   /* longest IK chain */
    uint64_t step_weight; /* what one step costs, in bone-steps (construct_plan: step_weight) */
    size_t mem_bytes;     /* approximate heap footprint, for cache budgets */
};

/* One step's work in bone-steps: construct_plan's step_weight, or the bones of an armature
 * built without it. */
static inline uint64_t armature_step_weight(const struct armature *arm)
{
    return arm->step_weight ? arm->step_weight : arm->bone_count ? arm->bone_count : 1;
}

enum {
    PLAN_IK = 1,       /* the bone or an ancestor evaluated before it gets an IK rotation */
    PLAN_PHYS = 2,     /* the bone or such an ancestor has a physics override or sway */
    PLAN_IK_INPUT = 4, /* IK reads its first-pass position (chain, target, their ancestors) */
    PLAN_TRIG = 8,     /* children, vertices or weighted binds read its rotation's cos/sin */
};

/* Frees everything; NULL is fine. Loop thread or owner only: never while others read it. */
void armature_free(struct armature *arm);

/* Index of the bone named name, or -1. A tool API: linear, never on evaluation paths. */
int armature_find_bone(const struct armature *arm, const char *name);

/* How a request names an animation or a style: "#N" (a '#' and decimal digits) is index N and
 * never a name, so that any item can be named whatever the others are called; else the first
 * item of that name, else a decimal index ("1": a name wins, for requests written before
 * "#N"). The index of the item found, or -1 if none. */
int armature_find_anim(const struct armature *arm, const char *name_or_index);
int armature_find_style(const struct armature *arm, const char *name_or_index);

/* Whether s is of the "#N" form (an index, never a name), whatever N is. */
bool armature_is_index_form(const char *s);

/* The texture (index into arm->textures) that tex_name resolves to through the styles in
 * priority order, or -1. styles NULL means all styles in file order. Any thread. */
int armature_resolve_texture(const struct armature *arm, int tex_name, const int *styles,
                             uint32_t style_count);

/* Texture name for a name index, "" for -1. */
const char *armature_tex_name(const struct armature *arm, int tex_name);

/* "bones" (0.5) or "arrays" (0.6/0.7): the layout's name in skeld info. */
const char *armature_layout_name(const struct armature *arm);

#endif
