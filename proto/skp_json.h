/* The JSON that both command lines print, formatted in one place so that `skeld eval` and
 * `skelctl pose`, `skeld info` and `skelctl info` print the same bytes. A pose is an array of
 * objects with the keys of the conformance vectors' expect entries (id, pos, rot, scale,
 * hidden, zindex, tex, and verts for mesh bones), with --matrix also matrix and tint. */
#ifndef SKP_JSON_H
#define SKP_JSON_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

struct skp_bone_view {
    double pos[2], rot, scale[2];
    int hidden;
    int32_t zindex;
    const char *tex;      /* "" for none */
    uint32_t vert_count;  /* 0: not a mesh bone (no "verts" key) */
    const double *verts;  /* x, y pairs */
    int mesh;             /* nonzero: print "verts" even when empty */
    const double *matrix; /* a b c d tx ty (the POSE reply's), or NULL: no "matrix" key */
    const double *tint;   /* r g b a, 0-255, or NULL: no "tint" key */
};

/* Writes the JSON (with a trailing newline) into buf, truncating at cap (always terminated
 * when cap > 0). Returns the full length it needs, excluding the terminator. */
size_t skp_pose_json(char *buf, size_t cap, const struct skp_bone_view *bones, uint32_t count);

/* An armature as `skeld info` and `skelctl info` print it. What only the file holds (the
 * binary INFO reply does not carry it) is in the view when file is set: the format version
 * and layout, each style's id and texture count, the atlases, and the IK, vertex and keyframe
 * counts; without it those keys are left out and the rest is the same bytes. */
struct skp_info_bone {
    const char *name;
    int32_t parent; /* -1 for a root */
};
struct skp_info_anim {
    const char *name;
    double fps;
    uint32_t frames; /* last keyframe + 1 */
};
struct skp_info_style {
    const char *name;
    int id;            /* file only */
    uint32_t textures; /* file only */
};
struct skp_info_atlas {
    const char *filename;
    uint32_t width, height;
};
struct skp_info_view {
    const char *id; /* 64 hex digits */
    uint32_t bone_count, anim_count, style_count;
    const struct skp_info_bone *bones;
    const struct skp_info_anim *anims;
    const struct skp_info_style *styles;
    int file; /* nonzero: the keys below are known */
    const char *version, *layout;
    uint32_t atlas_count;
    const struct skp_info_atlas *atlases;
    uint32_t ik_families, mesh_vertices, keyframes;
};

/* Same buffer contract as skp_pose_json. */
size_t skp_info_json(char *buf, size_t cap, const struct skp_info_view *v);

/* A spritesheet's JSON file, as `skeld render --sheet` and `skelctl render --sheet` write it:
 * the sheet JSON a RENDER reply carries (an object without the file name) with
 * "image":NAME put first (image's file name, without its directory) and a newline after. Same
 * buffer contract as skp_pose_json. */
size_t skp_sheet_json_named(char *buf, size_t cap, const char *sheet_json, size_t sheet_len,
                            const char *image);

/* %.9g of v exactly as printf writes it, for 1e-5 <= |v| < 1e15 (the numbers of poses): the
 * length written to buf (24 bytes at least, terminated), or 0 outside that range (then use
 * printf). Exact: 128-bit integer arithmetic, ties to even. */
size_t skp_fmt_g9(char *buf, double v);

/* The JSON of a MESH reply's body (the binary draw list): [{"bone","atlas","tint",
 * "vertices":[[x,y,u,v],..],"indices":[..]},..] in draw order, as `skelctl mesh` prints it
 * and the HTTP front serves it. Same buffer contract as skp_pose_json; 0 if the body is not a
 * whole draw list. */
size_t skp_mesh_json_wire(char *buf, size_t cap, const uint8_t *body, size_t len);

#endif
