/* armature.json -> struct armature. Every key is optional (exports omit defaults); a key
 * that is present with the wrong type, an id out of range or a cycle is an error whose
 * message names the JSON path. */
#include "load_json.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "animate.h"
#include "construct.h"

struct ctx {
    struct armature *arm;
    struct eng_error *err;
    const struct load_limits *lim;
    /* texture-name intern table (open addressing) */
    uint32_t *slots;
    uint32_t slot_cap;
    uint32_t name_cap;
    bool arrays; /* the 0.6/0.7 layout (struct armature.layout) */
    /* its three arrays (NULL when absent), each bone's family, each family's root bone */
    json_t *visuals, *families, *physics;
    size_t visual_count, family_count, physics_count;
    int *bone_family;  /* per bone: index into inverse_kinematics, -1 none */
    int *family_root;  /* per family: its first bone, -1 for an empty chain */
    double tint_scale; /* 1 for 0.5 (tint in 0..255), 255 for 0.6/0.7 (0..1) */
};

#define BAD(c, ...) eng_seterr((c)->err, ENG_EBADFILE, "armature.json: " __VA_ARGS__)
/* "." between a JSON path and a key, none at the top level. */
#define DOT(path) (*(path) ? "." : "")

/* ---- typed field access ------------------------------------------------------------ */

static int get_num(struct ctx *c, json_t *obj, const char *key, const char *path, double def,
                   double *out)
{
    json_t *v = json_object_get(obj, key);
    *out = def; /* defined on every path, errors included */
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_number(v))
        return BAD(c, "%s%s%s: expected a number", path, DOT(path), key);
    *out = json_number_value(v);
    if (!isfinite(*out))
        return BAD(c, "%s%s%s: not a finite number", path, DOT(path), key);
    return 0;
}

static int get_int(struct ctx *c, json_t *obj, const char *key, const char *path, long def,
                   long *out)
{
    double d;
    *out = def; /* defined on every path, errors included */
    int rc = get_num(c, obj, key, path, (double)def, &d);
    if (rc)
        return rc;
    if (d != floor(d))
        return BAD(c, "%s%s%s: expected an integer, got %g", path, DOT(path), key, d);
    if (d < -2147483648.0 || d > 2147483647.0)
        return BAD(c, "%s%s%s: %g is out of range", path, DOT(path), key, d);
    *out = (long)d;
    return 0;
}

static int get_bool(struct ctx *c, json_t *obj, const char *key, const char *path, bool def,
                    bool *out)
{
    json_t *v = json_object_get(obj, key);
    *out = def; /* defined on every path, errors included */
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_boolean(v))
        return BAD(c, "%s%s%s: expected true or false", path, DOT(path), key);
    *out = json_is_true(v);
    return 0;
}

static int get_str(struct ctx *c, json_t *obj, const char *key, const char *path, const char *def,
                   const char **out)
{
    json_t *v = json_object_get(obj, key);
    *out = def; /* defined on every path, errors included */
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return BAD(c, "%s%s%s: expected a string", path, DOT(path), key);
    *out = json_string_value(v);
    return 0;
}

/* Component name of the object at path.key, for get_vec2 and get_color. Its JSON path is for
 * an error message only, so it is read with an empty one first, and only a wrong component is
 * read again with its path (formatting them all up front was 2% of a load). */
static int get_component(struct ctx *c, json_t *v, const char *name, const char *path,
                         const char *key, double def, double *out)
{
    if (!get_num(c, v, name, "", def, out))
        return 0;
    char sub[160];
    snprintf(sub, sizeof sub, "%s%s%s", path, DOT(path), key);
    return get_num(c, v, name, sub, def, out);
}

static int get_vec2(struct ctx *c, json_t *obj, const char *key, const char *path, struct vec2 def,
                    struct vec2 *out)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        *out = def;
        return 0;
    }
    if (!json_is_object(v))
        return BAD(c, "%s%s%s: expected an object {\"x\", \"y\"}", path, DOT(path), key);
    int rc = get_component(c, v, "x", path, key, def.x, &out->x);
    return rc ? rc : get_component(c, v, "y", path, key, def.y, &out->y);
}

static int get_color(struct ctx *c, json_t *obj, const char *key, const char *path,
                     const double *def, double *out)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        memcpy(out, def, 4 * sizeof *out);
        return 0;
    }
    if (!json_is_object(v))
        return BAD(c, "%s%s%s: expected an object {\"r\", \"g\", \"b\", \"a\"}", path, DOT(path),
                   key);
    static const char *const names[4] = {"r", "g", "b", "a"};
    for (int i = 0; i < 4; i++) {
        int rc = get_component(c, v, names[i], path, key, def[i] / c->tint_scale, &out[i]);
        if (rc)
            return rc;
        out[i] *= c->tint_scale; /* the engine's tint is 0..255 in both layouts */
    }
    return 0;
}

/* An optional array; *n = 0 when absent. */
static int get_array(struct ctx *c, json_t *obj, const char *key, const char *path, json_t **out,
                     size_t *n)
{
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    *n = 0;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_array(v))
        return BAD(c, "%s%s%s: expected an array", path, DOT(path), key);
    *out = v;
    *n = json_array_size(v);
    return 0;
}

static int need_object(struct ctx *c, json_t *v, const char *path)
{
    return json_is_object(v) ? 0 : BAD(c, "%s: expected an object", path);
}

static int check_index(struct ctx *c, long v, long count, bool allow_unset, const char *path,
                       const char *key)
{
    if ((allow_unset && v == -1) || (v >= 0 && v < count))
        return 0;
    return BAD(c, "%s.%s: %ld is out of range", path, key, v);
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* ---- texture-name interning -------------------------------------------------------- */

static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static int grow_names(struct ctx *c)
{
    uint32_t cap = c->slot_cap ? c->slot_cap * 2 : 64;
    uint32_t *slots = malloc(cap * sizeof *slots);
    char **names = realloc(c->arm->tex_names, (cap / 2) * sizeof *names);
    if (!slots || !names) {
        free(slots);
        if (names)
            c->arm->tex_names = names;
        return eng_seterr(c->err, ENG_ENOMEM, "out of memory");
    }
    c->arm->tex_names = names;
    c->name_cap = cap / 2;
    memset(slots, 0xff, cap * sizeof *slots);
    for (uint32_t i = 0; i < c->arm->tex_name_count; i++) {
        uint32_t h = hash_str(names[i]) & (cap - 1);
        while (slots[h] != UINT32_MAX)
            h = (h + 1) & (cap - 1);
        slots[h] = i;
    }
    free(c->slots);
    c->slots = slots;
    c->slot_cap = cap;
    return 0;
}

/* Index of name in the armature's texture-name table, adding it; "" is -1. */
static int intern(struct ctx *c, const char *name, int *out)
{
    if (!*name) {
        *out = -1;
        return 0;
    }
    if (c->arm->tex_name_count >= c->name_cap) {
        int rc = grow_names(c);
        if (rc)
            return rc;
    }
    uint32_t h = hash_str(name) & (c->slot_cap - 1);
    while (c->slots[h] != UINT32_MAX) {
        if (!strcmp(c->arm->tex_names[c->slots[h]], name)) {
            *out = (int)c->slots[h];
            return 0;
        }
        h = (h + 1) & (c->slot_cap - 1);
    }
    char *d = dup_str(name);
    if (!d)
        return eng_seterr(c->err, ENG_ENOMEM, "out of memory");
    c->slots[h] = c->arm->tex_name_count;
    c->arm->tex_names[c->arm->tex_name_count] = d;
    size_t len = strlen(d);
    if (len > c->arm->tex_name_max)
        c->arm->tex_name_max = len;
    *out = (int)c->arm->tex_name_count++;
    return 0;
}

/* ---- enums ------------------------------------------------------------------------- */

static const char *const element_names[EL_COUNT] = {
    "PositionX", "PositionY", "Rotation",     "ScaleX", "ScaleY",
    "Hidden",    "TintR",     "TintG",        "TintB",  "TintA",
    "Zindex",    "Texture",   "IkConstraint", "IkMode", "MimicTarget"};

static int parse_element(const char *s)
{
    for (int i = 0; i < EL_COUNT; i++)
        if (!strcmp(s, element_names[i]))
            return i;
    return -1;
}

static int parse_ik_mode(const char *s)
{
    return !strcmp(s, "FABRIK") ? IK_FABRIK : !strcmp(s, "Arc") ? IK_ARC : -1;
}

static int parse_ik_constraint(const char *s)
{
    if (!strcmp(s, "None"))
        return IKC_NONE;
    if (!strcmp(s, "Clockwise"))
        return IKC_CLOCKWISE;
    return !strcmp(s, "CounterClockwise") ? IKC_COUNTER_CLOCKWISE : -1;
}

static int get_enum(struct ctx *c, json_t *obj, const char *key, const char *path,
                    int (*parse)(const char *), int def, uint8_t *out)
{
    const char *s;
    int rc = get_str(c, obj, key, path, NULL, &s);
    if (rc)
        return rc;
    char q[ENG_QUOTE_MAX];
    int v = s ? parse(s) : def;
    if (v < 0)
        return BAD(c, "%s.%s: unknown value \"%s\"", path, key, eng_quote(s, q));
    *out = (uint8_t)v;
    return 0;
}

/* ---- bones ------------------------------------------------------------------------- */

static const double white[4] = {255.0, 255.0, 255.0, 255.0};

/* Where one bone's visual, physics or IK data is read from: the bone object itself in 0.5,
 * an entry of visuals[] or physics[] in 0.6/0.7 (obj NULL: none, every field its default).
 * The 0.6/0.7 arrays drop the 0.5 keys' prefix ("phys_pos_damping" is "pos_damping"). */
struct src {
    json_t *obj;
    const char *path;
    const char *prefix;
};

/* The bone's own transform and visibility: on the bone in both layouts. */
static int read_transform(struct ctx *c, json_t *jb, const char *path, struct arm_bone *b)
{
    struct bone_fields *s = &b->start, *i = &b->init;
    int rc;
    if ((rc = get_vec2(c, jb, "pos", path, (struct vec2){0, 0}, &s->pos)) ||
        (rc = get_vec2(c, jb, "scale", path, (struct vec2){1, 1}, &s->scale)) ||
        (rc = get_num(c, jb, "rot", path, 0, &s->rot)) ||
        (rc = get_bool(c, jb, "hidden", path, false, &s->hidden)) ||
        (rc = get_vec2(c, jb, "init_pos", path, s->pos, &i->pos)) ||
        (rc = get_vec2(c, jb, "init_scale", path, s->scale, &i->scale)) ||
        (rc = get_num(c, jb, "init_rot", path, s->rot, &i->rot)) ||
        (rc = get_bool(c, jb, "init_hidden", path, s->hidden, &i->hidden)))
        return rc;
    return 0;
}

/* Texture, zindex and tint with their init_ values (which default to the field's own). */
static int read_looks(struct ctx *c, const struct src *v, struct arm_bone *b)
{
    struct bone_fields *s = &b->start, *i = &b->init;
    const char *tex, *init_tex;
    long z, iz;
    int rc;
    if ((rc = get_color(c, v->obj, "tint", v->path, white, s->tint)) ||
        (rc = get_int(c, v->obj, "zindex", v->path, 0, &z)) ||
        (rc = get_str(c, v->obj, "tex", v->path, "", &tex)) ||
        (rc = get_color(c, v->obj, "init_tint", v->path, s->tint, i->tint)) ||
        (rc = get_int(c, v->obj, "init_zindex", v->path, z, &iz)) ||
        (rc = get_str(c, v->obj, "init_tex", v->path, tex, &init_tex)))
        return rc;
    s->zindex = (int)z;
    i->zindex = (int)iz;
    if ((rc = intern(c, tex, &s->tex)))
        return rc;
    return intern(c, init_tex, &i->tex);
}

/* Pivots exist only in visuals[] entries; 0.5 bones keep the identity. */
static int read_pivots(struct ctx *c, const struct src *v, struct arm_bone *b)
{
    int rc;
    b->pivot_pos = (struct vec2){0, 0};
    b->pivot_scale = (struct vec2){1, 1};
    b->pivot_rot = 0;
    if (c->arrays &&
        ((rc = get_vec2(c, v->obj, "pivot_pos", v->path, (struct vec2){0, 0}, &b->pivot_pos)) ||
         (rc = get_num(c, v->obj, "pivot_rot", v->path, 0, &b->pivot_rot)) ||
         (rc = get_vec2(c, v->obj, "pivot_scale", v->path, (struct vec2){1, 1}, &b->pivot_scale))))
        return rc;
    b->pivot_cos = cos(b->pivot_rot);
    b->pivot_sin = sin(b->pivot_rot);
    b->pivot_xform = b->pivot_rot != 0 || b->pivot_scale.x != 1 || b->pivot_scale.y != 1;
    return 0;
}

static int read_phys(struct ctx *c, const struct src *ps, struct bone_phys *ph)
{
    static const struct {
        const char *name;
        size_t off;
        bool vec;
    } fields[] = {
        {"pos_damping", offsetof(struct bone_phys, pos_damping), false},
        {"pos_ratio", offsetof(struct bone_phys, pos_ratio), false},
        {"scale_damping", offsetof(struct bone_phys, scale_damping), false},
        {"scale_ratio", offsetof(struct bone_phys, scale_ratio), false},
        {"rot_damping", offsetof(struct bone_phys, rot_damping), false},
        {"sway", offsetof(struct bone_phys, sway), false},
        {"rot_bounce", offsetof(struct bone_phys, rot_bounce), false},
        {"global_pos", offsetof(struct bone_phys, global_pos), true},
        {"global_scale", offsetof(struct bone_phys, global_scale), true},
        {"global_rot", offsetof(struct bone_phys, global_rot), false},
        {"global_orbit", offsetof(struct bone_phys, global_orbit), false},
        {"global_orbit_vel", offsetof(struct bone_phys, global_orbit_vel), false},
        {"global_orbit_diff", offsetof(struct bone_phys, global_orbit_diff), false},
    };
    char key[48]; /* the prefix once, then each name after it */
    _Static_assert(sizeof "phys_" + sizeof "global_orbit_diff" <= sizeof key,
                   "the longest prefix (struct src) and name fit");
    size_t pre = strlen(ps->prefix);
    memcpy(key, ps->prefix, pre);
    for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++) {
        char *at = (char *)ph + fields[k].off;
        memcpy(key + pre, fields[k].name, strlen(fields[k].name) + 1);
        int rc = fields[k].vec ? get_vec2(c, ps->obj, key, ps->path, (struct vec2){0, 0},
                                          (struct vec2 *)(void *)at)
                               : get_num(c, ps->obj, key, ps->path, 0, (double *)(void *)at);
        if (rc)
            return rc;
    }
    return 0;
}

/* 0.5: a family lives on its root bone. */
static int read_ik(struct ctx *c, json_t *jb, const char *path, struct arm_bone *b,
                   uint32_t *chain_total)
{
    long target;
    json_t *ids;
    size_t n;
    int rc;
    struct bone_fields *s = &b->start, *i = &b->init;
    if ((rc = get_int(c, jb, "ik_target_id", path, -1, &target)) ||
        (rc = check_index(c, target, c->arm->bone_count, true, path, "ik_target_id")) ||
        (rc = get_array(c, jb, "ik_bone_ids", path, &ids, &n)) ||
        (rc = get_enum(c, jb, "ik_mode", path, parse_ik_mode, IK_FABRIK, &s->ik_mode)) ||
        (rc = get_enum(c, jb, "ik_constraint", path, parse_ik_constraint, IKC_NONE,
                       &s->ik_constraint)) ||
        (rc = get_enum(c, jb, "init_ik_mode", path, parse_ik_mode, s->ik_mode, &i->ik_mode)) ||
        (rc = get_enum(c, jb, "init_ik_constraint", path, parse_ik_constraint, s->ik_constraint,
                       &i->ik_constraint)))
        return rc;
    b->ik_target = (int)target;
    b->ik_len = (uint32_t)n;
    b->ik_off = *chain_total;
    for (size_t k = 0; k < n; k++) {
        json_t *v = json_array_get(ids, k);
        if (!json_is_integer(v))
            return BAD(c, "%s.ik_bone_ids[%zu]: expected an integer", path, k);
        long id = (long)json_integer_value(v);
        if (id < 0 || id >= (long)c->arm->bone_count)
            return BAD(c, "%s.ik_bone_ids[%zu]: %ld is out of range", path, k, id);
    }
    *chain_total += (uint32_t)n;
    return 0;
}

/* The object bone jb's visuals are read from: the bone itself in 0.5, its visuals[] entry in
 * 0.6/0.7 (NULL for visuals_id -1), with that entry's JSON path in vpath (32 bytes). One
 * function, so counting and reading agree. */
static int bone_visual(struct ctx *c, json_t *jb, const char *path, json_t **out, char *vpath)
{
    long vid;
    int rc;
    *out = jb;
    snprintf(vpath, 32, "%s", path);
    if (!c->arrays) {
        /* A bone that names a visuals[] entry in a file without that array was cut from a
         * 0.6/0.7 file: read as 0.5 it would draw nothing, and say nothing. */
        json_t *v = json_object_get(jb, "visuals_id");
        if (json_is_integer(v) && json_integer_value(v) >= 0)
            return BAD(c,
                       "%s.visuals_id: %lld names a visuals[] entry, but the file has no "
                       "visuals array (0.6/0.7 files keep visuals, inverse_kinematics and "
                       "physics there)",
                       path, (long long)json_integer_value(v));
        return 0;
    }
    *out = NULL;
    if ((rc = get_int(c, jb, "visuals_id", path, -1, &vid)) ||
        (rc = check_index(c, vid, (long)c->visual_count, true, path, "visuals_id")))
        return rc;
    snprintf(vpath, 32, "visuals[%ld]", vid);
    if (vid >= 0) { /* read as empty when it is no object, it would drop the bone's looks */
        *out = json_array_get(c->visuals, (size_t)vid);
        return need_object(c, *out, vpath);
    }
    return 0;
}

/* Counts mesh data first so the flat arrays are allocated once. */
static int count_mesh(struct ctx *c, json_t *bones, uint32_t *verts, uint32_t *indices,
                      uint32_t *binds, uint32_t *bind_verts, uint32_t *chain)
{
    uint64_t v = 0, ix = 0, bi = 0, bv = 0, ch = 0;
    for (size_t i = 0; i < json_array_size(bones); i++) {
        json_t *jb = json_array_get(bones, i), *vis, *a;
        char path[32], vpath[32];
        snprintf(path, sizeof path, "bones[%zu]", i);
        int rc = need_object(c, jb, path);
        if (rc || (rc = bone_visual(c, jb, path, &vis, vpath)))
            return rc;
        v += json_array_size(json_object_get(vis, "vertices"));
        ix += json_array_size(json_object_get(vis, "indices"));
        if (!c->arrays)
            ch += json_array_size(json_object_get(jb, "ik_bone_ids"));
        a = json_object_get(vis, "binds");
        bi += json_array_size(a);
        for (size_t k = 0; k < json_array_size(a); k++)
            bv += json_array_size(json_object_get(json_array_get(a, k), "verts"));
    }
    for (size_t f = 0; f < c->family_count; f++)
        ch += json_array_size(json_object_get(json_array_get(c->families, f), "bone_ids"));
    if (v > c->lim->max_vertices)
        return eng_seterr(c->err, ENG_ELIMIT,
                          "armature.json: %llu mesh vertices exceed the limit of %u",
                          (unsigned long long)v, c->lim->max_vertices);
    uint64_t cap = (uint64_t)c->lim->max_vertices * 16;
    if (ix > cap || bi > cap || bv > cap || ch > cap)
        return eng_seterr(c->err, ENG_ELIMIT, "armature.json: mesh or IK arrays too large");
    *verts = (uint32_t)v;
    *indices = (uint32_t)ix;
    *binds = (uint32_t)bi;
    *bind_verts = (uint32_t)bv;
    *chain = (uint32_t)ch;
    return 0;
}

static int read_vertices(struct ctx *c, const struct src *v, struct arm_bone *b, uint32_t *total)
{
    json_t *arr;
    size_t n;
    const char *path = v->path;
    int rc = get_array(c, v->obj, "vertices", path, &arr, &n);
    if (rc)
        return rc;
    b->vert_off = *total;
    b->vert_len = (uint32_t)n;
    for (size_t k = 0; k < n; k++) {
        char sub[128];
        snprintf(sub, sizeof sub, "%s.vertices[%zu]", path, k);
        json_t *jv = json_array_get(arr, k);
        struct vec2 pos, *init = &c->arm->vert_init[*total + k];
        if ((rc = need_object(c, jv, sub)) ||
            (rc = get_vec2(c, jv, "pos", sub, (struct vec2){0, 0}, &pos)) ||
            (rc = get_vec2(c, jv, "init_pos", sub, pos, init)) ||
            (rc = get_vec2(c, jv, "uv", sub, (struct vec2){0, 0}, &c->arm->vert_uv[*total + k])))
            return rc;
    }
    *total += (uint32_t)n;
    return 0;
}

static int read_indices(struct ctx *c, const struct src *v, struct arm_bone *b, uint32_t *total)
{
    json_t *arr;
    size_t n;
    const char *path = v->path;
    int rc = get_array(c, v->obj, "indices", path, &arr, &n);
    if (rc)
        return rc;
    if (n % 3)
        return BAD(c, "%s.indices: %zu entries is not a whole number of triangles", path, n);
    b->index_off = *total;
    b->index_len = (uint32_t)n;
    for (size_t k = 0; k < n; k++) {
        json_t *jix = json_array_get(arr, k);
        if (!json_is_integer(jix))
            return BAD(c, "%s.indices[%zu]: expected an integer", path, k);
        json_int_t ix = json_integer_value(jix);
        if (ix < 0 || ix >= (json_int_t)b->vert_len)
            return BAD(c, "%s.indices[%zu]: vertex %lld is out of range (%u vertices)", path, k,
                       (long long)ix, b->vert_len);
        c->arm->indices[*total + k] = (uint32_t)ix;
    }
    *total += (uint32_t)n;
    return 0;
}

static int read_bind(struct ctx *c, json_t *jbind, const char *path, const struct arm_bone *b,
                     struct arm_bind *bind, uint32_t *bv_total)
{
    long bone;
    json_t *arr;
    size_t n;
    int rc;
    if ((rc = need_object(c, jbind, path)) ||
        (rc = get_int(c, jbind, "bone_id", path, -1, &bone)) ||
        (rc = check_index(c, bone, c->arm->bone_count, true, path, "bone_id")) ||
        (rc = get_bool(c, jbind, "is_path", path, false, &bind->is_path)) ||
        (rc = get_array(c, jbind, "verts", path, &arr, &n)))
        return rc;
    bind->bone = (int)bone;
    bind->vert_off = *bv_total;
    bind->vert_len = (uint32_t)n;
    for (size_t k = 0; k < n; k++) {
        char sub[160];
        snprintf(sub, sizeof sub, "%s.verts[%zu]", path, k);
        json_t *jv = json_array_get(arr, k);
        struct arm_bind_vert *bv = &c->arm->bind_verts[*bv_total + k];
        long id;
        if ((rc = need_object(c, jv, sub)) || (rc = get_int(c, jv, "id", sub, 0, &id)) ||
            (rc = check_index(c, id, b->vert_len, false, sub, "id")) ||
            (rc = get_num(c, jv, "weight", sub, 0, &bv->weight)))
            return rc;
        bv->vert = (uint32_t)id;
    }
    *bv_total += (uint32_t)n;
    return 0;
}

static int read_binds(struct ctx *c, const struct src *v, struct arm_bone *b, uint32_t *bind_total,
                      uint32_t *bv_total)
{
    json_t *arr;
    size_t n;
    const char *path = v->path;
    int rc = get_array(c, v->obj, "binds", path, &arr, &n);
    if (rc)
        return rc;
    b->bind_off = *bind_total;
    b->bind_len = (uint32_t)n;
    for (size_t k = 0; k < n; k++) {
        char sub[128];
        snprintf(sub, sizeof sub, "%s.binds[%zu]", path, k);
        rc =
            read_bind(c, json_array_get(arr, k), sub, b, &c->arm->binds[*bind_total + k], bv_total);
        if (rc)
            return rc;
    }
    *bind_total += (uint32_t)n;
    return 0;
}

struct mesh_cursor {
    uint32_t verts, indices, binds, bind_verts, chain;
};

/* 0.6/0.7: the bone's physics entry (path in ppath, 32 bytes) and IK family, which is kept
 * for loading the family's keyframes. */
static int bone_links(struct ctx *c, json_t *jb, const char *path, uint32_t i, struct src *phys,
                      char *ppath)
{
    long pid, fid;
    int rc;
    if ((rc = get_int(c, jb, "physics_id", path, -1, &pid)) ||
        (rc = check_index(c, pid, (long)c->physics_count, true, path, "physics_id")) ||
        (rc = get_int(c, jb, "ik_family_id", path, -1, &fid)) ||
        (rc = check_index(c, fid, (long)c->family_count, true, path, "ik_family_id")))
        return rc;
    c->bone_family[i] = (int)fid;
    snprintf(ppath, 32, "physics[%ld]", pid);
    *phys = (struct src){pid >= 0 ? json_array_get(c->physics, (size_t)pid) : NULL, ppath, ""};
    return pid >= 0 ? need_object(c, phys->obj, ppath) : 0;
}

/* Visuals, physics, IK and mesh, from wherever the layout keeps them. */
static int read_parts(struct ctx *c, json_t *jb, const char *path, uint32_t i,
                      struct mesh_cursor *cur)
{
    struct arm_bone *b = &c->arm->bones[i];
    char vpath[32], ppath[32];
    struct src vis = {NULL, vpath, ""}, phys = {jb, path, "phys_"};
    int rc = bone_visual(c, jb, path, &vis.obj, vpath);
    if (rc || (c->arrays && (rc = bone_links(c, jb, path, i, &phys, ppath))))
        return rc;
    b->no_visuals = c->arrays && !vis.obj;
    if ((rc = read_looks(c, &vis, b)) || (rc = read_pivots(c, &vis, b)) ||
        (rc = read_phys(c, &phys, &b->phys)) ||
        (!c->arrays && (rc = read_ik(c, jb, path, b, &cur->chain))) ||
        (rc = read_vertices(c, &vis, b, &cur->verts)) ||
        (rc = read_indices(c, &vis, b, &cur->indices)) ||
        (rc = read_binds(c, &vis, b, &cur->binds, &cur->bind_verts)))
        return rc;
    return 0;
}

static int read_bone(struct ctx *c, json_t *jb, uint32_t i, struct mesh_cursor *cur)
{
    char path[64];
    snprintf(path, sizeof path, "bones[%u]", i);
    struct arm_bone *b = &c->arm->bones[i];
    const char *name;
    long id, parent;
    int rc;
    if ((rc = need_object(c, jb, path)) || (rc = get_int(c, jb, "id", path, i, &id)))
        return rc;
    if (id != (long)i)
        return BAD(c, "%s.id: %ld, expected %u (ids are sequential from 0)", path, id, i);
    if ((rc = get_str(c, jb, "name", path, "", &name)))
        return rc;
    if (!(b->name = dup_str(name)))
        return eng_seterr(c->err, ENG_ENOMEM, "out of memory");
    if ((rc = get_int(c, jb, "parent_id", path, -1, &parent)) ||
        (rc = check_index(c, parent, c->arm->bone_count, true, path, "parent_id")))
        return rc;
    if (parent == (long)i)
        return BAD(c, "%s.parent_id: a bone cannot be its own parent", path);
    b->parent = (int)parent;
    b->ik_target = -1;
    if ((rc = read_transform(c, jb, path, b)) || (rc = read_parts(c, jb, path, i, cur)))
        return rc;
    const struct bone_phys *ph = &b->phys;
    b->has_phys =
        ph->pos_damping > 0 || ph->scale_damping > 0 || ph->rot_damping > 0 || ph->sway > 0;
    return 0;
}

static int fill_chains(struct ctx *c, json_t *bones)
{
    for (uint32_t i = 0; i < c->arm->bone_count; i++) {
        const struct arm_bone *b = &c->arm->bones[i];
        json_t *ids = json_object_get(json_array_get(bones, i), "ik_bone_ids");
        for (uint32_t k = 0; k < b->ik_len; k++)
            c->arm->ik_chain[b->ik_off + k] = (int)json_integer_value(json_array_get(ids, k));
    }
    return 0;
}

/* Parent links must end at a root: walk each chain once, marking what is known to be fine. */
static int check_cycles(struct ctx *c)
{
    uint32_t n = c->arm->bone_count;
    uint8_t *state = calloc(n ? n : 1, 1); /* 0 unknown, 1 on the current walk, 2 fine */
    if (!state)
        return eng_seterr(c->err, ENG_ENOMEM, "out of memory");
    int rc = 0;
    for (uint32_t i = 0; i < n && !rc; i++) {
        int b = (int)i;
        while (b >= 0 && state[b] == 0) {
            state[b] = 1;
            b = c->arm->bones[b].parent;
        }
        if (b >= 0 && state[b] == 1)
            rc = BAD(c, "bones[%d].parent_id: parent chain forms a cycle", b);
        for (b = (int)i; b >= 0 && state[b] == 1; b = c->arm->bones[b].parent)
            state[b] = 2;
    }
    free(state);
    return rc;
}

/* Animations, styles and atlases: at most this many of each. More than any editor makes, and
 * what a 16-bit count says (the daemon's LOAD reply lists each by count). */
#define MAX_LISTED 65535u

static int check_listed(struct ctx *c, size_t n, const char *what)
{
    if (n > MAX_LISTED)
        return eng_seterr(c->err, ENG_ELIMIT, "armature.json: %zu %s exceed the limit of %u", n,
                          what, MAX_LISTED);
    return 0;
}

static int alloc_bones(struct ctx *c, json_t *bones, struct mesh_cursor *sizes)
{
    struct armature *arm = c->arm;
    size_t n = json_array_size(bones);
    if (n > c->lim->max_bones)
        return eng_setlimit(c->err, ENG_LIMIT_BONES,
                            "armature.json: %zu bones exceed the limit of %u", n,
                            c->lim->max_bones);
    arm->bone_count = (uint32_t)n;
    int rc = count_mesh(c, bones, &sizes->verts, &sizes->indices, &sizes->binds, &sizes->bind_verts,
                        &sizes->chain);
    if (rc)
        return rc;
    arm->bones = calloc(n ? n : 1, sizeof *arm->bones);
    arm->vert_init = calloc(sizes->verts + 1, sizeof *arm->vert_init);
    arm->vert_uv = calloc(sizes->verts + 1, sizeof *arm->vert_uv);
    arm->indices = calloc(sizes->indices + 1, sizeof *arm->indices);
    arm->binds = calloc(sizes->binds + 1, sizeof *arm->binds);
    arm->bind_verts = calloc(sizes->bind_verts + 1, sizeof *arm->bind_verts);
    arm->ik_chain = calloc(sizes->chain + 1, sizeof *arm->ik_chain);
    if (!arm->bones || !arm->vert_init || !arm->vert_uv || !arm->indices || !arm->binds ||
        !arm->bind_verts || !arm->ik_chain)
        return eng_seterr(c->err, ENG_ENOMEM, "out of memory");
    arm->vert_count = sizes->verts;
    arm->index_count = sizes->indices;
    arm->bind_count = sizes->binds;
    arm->mem_bytes += n * sizeof *arm->bones + sizes->verts * 2 * sizeof(struct vec2) +
                      sizes->indices * 4 + sizes->binds * sizeof(struct arm_bind) +
                      sizes->bind_verts * sizeof(struct arm_bind_vert) + sizes->chain * 4;
    return 0;
}

static int read_bones(struct ctx *c, json_t *root)
{
    json_t *bones;
    size_t n;
    struct mesh_cursor sizes = {0, 0, 0, 0, 0}, cur = {0, 0, 0, 0, 0};
    int rc = get_array(c, root, "bones", "", &bones, &n);
    if (rc || (rc = alloc_bones(c, bones, &sizes)))
        return rc;
    c->bone_family = malloc((n ? n : 1) * sizeof *c->bone_family);
    if (!c->bone_family)
        return eng_seterr(c->err, ENG_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < c->arm->bone_count; i++) {
        c->bone_family[i] = -1;
        if ((rc = read_bone(c, json_array_get(bones, i), i, &cur)))
            return rc;
    }
    if (!c->arrays)
        fill_chains(c, bones);
    return check_cycles(c);
}

/* A family without a target, or with fewer than two bones, has nothing to solve (the
 * reference skips the first and would fail on the second). */
static void add_ik_root(struct ctx *c, int bone)
{
    const struct arm_bone *b = &c->arm->bones[bone];
    if (b->ik_target >= 0 && b->ik_len >= 2)
        c->arm->ik_roots[c->arm->ik_root_count++] = bone;
}

/* 0.5: ik_root_ids lists the bones that hold a family. */
static int read_ik_roots(struct ctx *c, json_t *root)
{
    json_t *arr;
    size_t n;
    int rc = get_array(c, root, "ik_root_ids", "", &arr, &n);
    if (rc)
        return rc;
    c->arm->ik_roots = calloc(n ? n : 1, sizeof *c->arm->ik_roots);
    if (!c->arm->ik_roots)
        return eng_seterr(c->err, ENG_ENOMEM, "out of memory");
    for (size_t k = 0; k < n; k++) {
        json_t *v = json_array_get(arr, k);
        if (!json_is_integer(v))
            return BAD(c, "ik_root_ids[%zu]: expected an integer", k);
        json_int_t id = json_integer_value(v);
        if (id < 0 || id >= (json_int_t)c->arm->bone_count)
            return BAD(c, "ik_root_ids[%zu]: %lld is out of range", k, (long long)id);
        add_ik_root(c, (int)id);
    }
    return 0;
}

/* 0.6/0.7: one family's chain, checked into armature.ik_chain at *chain_total. */
static int read_family_chain(struct ctx *c, json_t *jf, const char *path, uint32_t *chain_total,
                             uint32_t *len)
{
    json_t *ids;
    size_t n;
    *len = 0;
    int rc = get_array(c, jf, "bone_ids", path, &ids, &n);
    if (rc)
        return rc;
    for (size_t k = 0; k < n; k++) {
        json_t *v = json_array_get(ids, k);
        if (!json_is_integer(v))
            return BAD(c, "%s.bone_ids[%zu]: expected an integer", path, k);
        json_int_t id = json_integer_value(v);
        if (id < 0 || id >= (json_int_t)c->arm->bone_count)
            return BAD(c, "%s.bone_ids[%zu]: %lld is out of range", path, k, (long long)id);
        c->arm->ik_chain[*chain_total + k] = (int)id;
    }
    *len = (uint32_t)n;
    return 0;
}

/* 0.6/0.7: the family's state (mode, constraint, mimic_target and their init_ values) goes on
 * its root bone, the first of bone_ids, where Animate and the solver read it. */
static int read_family(struct ctx *c, json_t *jf, uint32_t f, uint32_t *chain_total)
{
    char path[48];
    snprintf(path, sizeof path, "inverse_kinematics[%u]", f);
    struct bone_fields s = {0}, i = {0};
    long target;
    uint32_t len;
    int rc;
    if ((rc = need_object(c, jf, path)) || (rc = get_int(c, jf, "target_id", path, -1, &target)) ||
        (rc = check_index(c, target, c->arm->bone_count, true, path, "target_id")) ||
        (rc = get_enum(c, jf, "mode", path, parse_ik_mode, IK_FABRIK, &s.ik_mode)) ||
        (rc = get_enum(c, jf, "constraint", path, parse_ik_constraint, IKC_NONE,
                       &s.ik_constraint)) ||
        (rc = get_bool(c, jf, "mimic_target", path, false, &s.ik_mimic)) ||
        (rc = get_enum(c, jf, "init_mode", path, parse_ik_mode, s.ik_mode, &i.ik_mode)) ||
        (rc = get_enum(c, jf, "init_constraint", path, parse_ik_constraint, s.ik_constraint,
                       &i.ik_constraint)) ||
        (rc = get_bool(c, jf, "init_mimic_target", path, s.ik_mimic, &i.ik_mimic)) ||
        (rc = read_family_chain(c, jf, path, chain_total, &len)))
        return rc;
    c->family_root[f] = -1;
    if (!len)
        return 0;
    int root = c->arm->ik_chain[*chain_total];
    struct arm_bone *b = &c->arm->bones[root];
    if (b->ik_len)
        return BAD(c, "%s.bone_ids[0]: bone %d already starts another family", path, root);
    c->family_root[f] = root;
    b->ik_target = (int)target;
    b->ik_off = *chain_total;
    b->ik_len = len;
    *chain_total += len;
    b->start.ik_mode = s.ik_mode;
    b->start.ik_constraint = s.ik_constraint;
    b->start.ik_mimic = s.ik_mimic;
    b->init.ik_mode = i.ik_mode;
    b->init.ik_constraint = i.ik_constraint;
    b->init.ik_mimic = i.ik_mimic;
    add_ik_root(c, root);
    return 0;
}

static int read_families(struct ctx *c)
{
    size_t n = c->family_count;
    uint32_t chain_total = 0;
    c->arm->ik_roots = calloc(n ? n : 1, sizeof *c->arm->ik_roots);
    c->family_root = calloc(n ? n : 1, sizeof *c->family_root);
    if (!c->arm->ik_roots || !c->family_root)
        return eng_seterr(c->err, ENG_ENOMEM, "out of memory");
    for (uint32_t f = 0; f < n; f++) {
        int rc = read_family(c, json_array_get(c->families, f), f, &chain_total);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- animations -------------------------------------------------------------------- */

#define NEXT_ABSENT (-2L) /* no next_kf in the file: derive it */

static int read_keyframe(struct ctx *c, json_t *jk, const char *path, struct arm_keyframe *kf,
                         int *bone, int *element, long *next)
{
    long b;
    const char *el, *str;
    char q[ENG_QUOTE_MAX];
    int rc;
    if ((rc = need_object(c, jk, path)) || (rc = get_num(c, jk, "frame", path, 0, &kf->frame)))
        return rc;
    if (kf->frame < 0)
        return BAD(c, "%s.frame: %g is negative", path, kf->frame);
    if (kf->frame > ARM_MAX_FRAME) /* framing plays every frame up to the last */
        return BAD(c, "%s.frame: %.15g is past the last frame skeld reads (%d)", path, kf->frame,
                   ARM_MAX_FRAME);
    if (json_object_get(jk, "next_kf") && !json_is_null(json_object_get(jk, "next_kf")) &&
        json_is_number(json_object_get(jk, "next_kf")) &&
        json_number_value(json_object_get(jk, "next_kf")) == NEXT_ABSENT)
        return BAD(c, "%s.next_kf: %ld is out of range", path, (long)NEXT_ABSENT);
    if ((rc = get_int(c, jk, "bone_id", path, 0, &b)))
        return rc;
    if (b < 0 || b >= (long)c->arm->bone_count)
        return BAD(c, "%s.bone_id: %ld is not a bone (%u bones)", path, b, c->arm->bone_count);
    if ((rc = get_str(c, jk, "element", path, "PositionX", &el)))
        return rc;
    if ((*element = parse_element(el)) < 0)
        return BAD(c, "%s.element: unknown element \"%s\"", path, eng_quote(el, q));
    *bone = (int)b;
    if ((rc = get_num(c, jk, "value", path, 0, &kf->value)) ||
        (rc = get_str(c, jk, "value_str", path, "", &str)) ||
        (rc = get_int(c, jk, "next_kf", path, NEXT_ABSENT, next)) ||
        (rc = get_vec2(c, jk, "start_handle", path, (struct vec2){0, 0}, &kf->h1)) ||
        (rc = get_vec2(c, jk, "end_handle", path, (struct vec2){0, 0}, &kf->h2)))
        return rc;
    kf->ivalue = 0;
    if (*element >= EL_TINT_R && *element <= EL_TINT_A)
        kf->value *= c->tint_scale;
    /* 0.6/0.7: IK keys on any chain bone set the family's state, which its root holds. */
    bool family_el =
        *element == EL_IK_CONSTRAINT || *element == EL_IK_MODE || *element == EL_MIMIC_TARGET;
    if (c->arrays && family_el && c->bone_family[b] >= 0 && c->family_root[c->bone_family[b]] >= 0)
        *bone = c->family_root[c->bone_family[b]];
    if (*element == EL_ZINDEX) {
        if (kf->value != floor(kf->value) || kf->value < -2147483648.0 || kf->value > 2147483647.0)
            return BAD(c, "%s.value: %g is not a valid zindex", path, kf->value);
        kf->ivalue = (int)kf->value;
    }
    if (*element == EL_TEXTURE)
        return intern(c, str, &kf->ivalue);
    if (*element == EL_IK_MODE || *element == EL_IK_CONSTRAINT) {
        kf->ivalue = *element == EL_IK_MODE ? parse_ik_mode(str) : parse_ik_constraint(str);
        if (kf->ivalue < 0)
            return BAD(c, "%s.value_str: unknown value \"%s\"", path, eng_quote(str, q));
    }
    return 0;
}

/* Scratch for grouping one animation's keyframes into tracks. */
struct kf_key {
    int bone, element;
    uint32_t index; /* in the animation's list */
    long next;      /* file next_kf: index in the list, -1 none, NEXT_ABSENT */
};

static int cmp_key(const void *pa, const void *pb)
{
    const struct kf_key *a = pa, *b = pb;
    if (a->bone != b->bone)
        return a->bone < b->bone ? -1 : 1;
    if (a->element != b->element)
        return a->element < b->element ? -1 : 1;
    return a->index < b->index ? -1 : (a->index > b->index);
}

/* Derives next_kf where the file has none, for the track keys[start..end): for each keyframe
 * the first later one of the same bone and element with a greater frame (what the web player
 * does for older exports), into derived[j - start] (-1: none). One pass from the end with a
 * stack of the keyframes not yet outdone, each pushed and popped once: a scan forward from
 * each took minutes for 480,000 keyframes of one frame. stack holds end - start entries. */
static void derive_next(const struct kf_key *keys, const struct arm_keyframe *kfs, size_t start,
                        size_t end, long *derived, size_t *stack)
{
    size_t top = 0;
    for (size_t j = end; j-- > start;) {
        double f = kfs[keys[j].index].frame;
        while (top && kfs[keys[stack[top - 1]].index].frame <= f)
            top--;
        derived[j - start] = top ? (long)keys[stack[top - 1]].index : -1;
        stack[top++] = j;
    }
}

/* Position of list index want among keys[start..end) (sorted by index), or end. */
static size_t find_index(const struct kf_key *keys, size_t start, size_t end, long want)
{
    size_t lo = start, hi = end;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((long)keys[mid].index < want)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < end && (long)keys[lo].index == want ? lo : end;
}

/* The track's keyframes copied into place at pos with their links: the file's next_kf, else
 * the derived one. */
static int link_track(struct ctx *c, const char *apath, const struct kf_key *keys, size_t start,
                      size_t end, const struct arm_keyframe *raw, const long *derived, uint32_t pos)
{
    struct armature *arm = c->arm;
    for (size_t j = start; j < end; j++) {
        struct arm_keyframe *kf = &arm->keyframes[pos + (j - start)];
        *kf = raw[keys[j].index];
        long next = keys[j].next == NEXT_ABSENT ? derived[j - start] : keys[j].next;
        kf->next = (uint32_t)(j - start);
        if (next == -1)
            continue;
        /* The file's keyframes are sorted by frame, so a later one is one further on: a link
         * to itself or back would make a keyframe act until a frame it is already past. */
        if (next <= (long)keys[j].index)
            return BAD(c, "%s.keyframes[%u].next_kf: %ld is not a later keyframe", apath,
                       keys[j].index, next);
        size_t k = find_index(keys, start, end, next);
        if (k == end)
            return BAD(c,
                       "%s.keyframes[%u].next_kf: %ld is not a keyframe of the same bone "
                       "and element",
                       apath, keys[j].index, next);
        kf->next = (uint32_t)(k - start);
    }
    return 0;
}

/* Scratch for one animation's keyframes at a time, sized for the longest (read_anims): the
 * keys grouped into tracks, the keyframes as read, and derive_next's links and stack. */
struct kf_scratch {
    struct kf_key *keys;
    struct arm_keyframe *raw;
    long *derived;
    size_t *stack;
};

static int build_track(struct ctx *c, const char *apath, const struct kf_scratch *sc, size_t start,
                       size_t end, uint32_t *pos)
{
    const struct kf_key *keys = sc->keys;
    struct armature *arm = c->arm;
    struct arm_track *t = &arm->tracks[arm->track_count++];
    t->bone = keys[start].bone;
    t->element = keys[start].element;
    t->kf_off = *pos;
    t->kf_len = (uint32_t)(end - start);
    t->monotone = true;
    derive_next(keys, sc->raw, start, end, sc->derived, sc->stack);
    int rc = link_track(c, apath, keys, start, end, sc->raw, sc->derived, *pos);
    if (rc)
        return rc;
    /* Binary search needs the frame each keyframe acts until to never decrease. */
    const struct arm_keyframe *kfs = arm->keyframes + t->kf_off;
    double prev = -INFINITY;
    for (uint32_t j = 0; j < t->kf_len; j++) {
        double r = kfs[j].next == j ? INFINITY : kfs[kfs[j].next].frame;
        if (r < prev)
            t->monotone = false;
        prev = r;
    }
    *pos += t->kf_len;
    return 0;
}

static int read_anim_keyframes(struct ctx *c, json_t *arr, const char *apath, struct arm_anim *anim,
                               const struct kf_scratch *sc, uint32_t *pos)
{
    struct kf_key *keys = sc->keys;
    struct arm_keyframe *raw = sc->raw;
    size_t n = json_array_size(arr);
    int rc;
    for (size_t k = 0; k < n; k++) {
        char path[96];
        snprintf(path, sizeof path, "%s.keyframes[%zu]", apath, k);
        keys[k].index = (uint32_t)k;
        if ((rc = read_keyframe(c, json_array_get(arr, k), path, &raw[k], &keys[k].bone,
                                &keys[k].element, &keys[k].next)))
            return rc;
        if (keys[k].next != NEXT_ABSENT && keys[k].next != -1 &&
            (keys[k].next < 0 || keys[k].next >= (long)n))
            return BAD(c, "%s.next_kf: %ld is out of range", path, keys[k].next);
        if (k > 0 && raw[k].frame < raw[k - 1].frame)
            return BAD(c, "%s.frame: %g comes after frame %g (keyframes must be sorted)", path,
                       raw[k].frame, raw[k - 1].frame);
    }
    anim->last_frame = n ? raw[n - 1].frame : 0.0;
    qsort(keys, n, sizeof *keys, cmp_key);
    anim->track_off = c->arm->track_count;
    for (size_t s = 0, e; s < n; s = e) {
        for (e = s + 1;
             e < n && keys[e].bone == keys[s].bone && keys[e].element == keys[s].element;)
            e++;
        if ((rc = build_track(c, apath, sc, s, e, pos)))
            return rc;
    }
    anim->track_len = c->arm->track_count - anim->track_off;
    return 0;
}

static int count_keyframes(struct ctx *c, json_t *anims, size_t *total, size_t *biggest)
{
    *total = *biggest = 0;
    for (size_t a = 0; a < json_array_size(anims); a++) {
        json_t *ja = json_array_get(anims, a);
        if (!json_is_object(ja))
            return BAD(c, "animations[%zu]: expected an object", a);
        json_t *kfs = json_object_get(ja, "keyframes");
        if (kfs && !json_is_array(kfs) && !json_is_null(kfs))
            return BAD(c, "animations[%zu].keyframes: expected an array", a);
        size_t n = json_array_size(kfs);
        *total += n;
        if (n > *biggest)
            *biggest = n;
    }
    if (*total > c->lim->max_keyframes)
        return eng_seterr(c->err, ENG_ELIMIT, "armature.json: %zu keyframes exceed the limit of %u",
                          *total, c->lim->max_keyframes);
    return 0;
}

static int read_anim(struct ctx *c, json_t *ja, uint32_t a, const struct kf_scratch *sc,
                     uint32_t *pos)
{
    char path[48];
    snprintf(path, sizeof path, "animations[%u]", a);
    struct arm_anim *anim = &c->arm->anims[a];
    const char *name;
    int rc;
    if ((rc = get_str(c, ja, "name", path, "", &name)) ||
        (rc = get_num(c, ja, "fps", path, 60, &anim->fps)))
        return rc;
    if (anim->fps <= 0)
        return BAD(c, "%s.fps: %g is not positive", path, anim->fps);
    if (!(anim->name = dup_str(name)))
        return eng_seterr(c->err, ENG_ENOMEM, "out of memory");
    return read_anim_keyframes(c, json_object_get(ja, "keyframes"), path, anim, sc, pos);
}

static int read_anims(struct ctx *c, json_t *root)
{
    struct armature *arm = c->arm;
    json_t *anims;
    size_t n, total, biggest;
    int rc = get_array(c, root, "animations", "", &anims, &n);
    if (rc || (rc = check_listed(c, n, "animations")) ||
        (rc = count_keyframes(c, anims, &total, &biggest)))
        return rc;
    arm->anims = calloc(n ? n : 1, sizeof *arm->anims);
    arm->keyframes = calloc(total ? total : 1, sizeof *arm->keyframes);
    arm->tracks = calloc(total ? total : 1, sizeof *arm->tracks);
    size_t most = biggest ? biggest : 1;
    struct kf_scratch sc = {calloc(most, sizeof *sc.keys), calloc(most, sizeof *sc.raw),
                            calloc(most, sizeof *sc.derived), calloc(most, sizeof *sc.stack)};
    if (!arm->anims || !arm->keyframes || !arm->tracks || !sc.keys || !sc.raw || !sc.derived ||
        !sc.stack)
        rc = eng_seterr(c->err, ENG_ENOMEM, "out of memory");
    if (!rc) {
        arm->anim_count = (uint32_t)n;
        arm->keyframe_count = (uint32_t)total;
        arm->mem_bytes += total * (sizeof *arm->keyframes + sizeof *arm->tracks);
    }
    uint32_t pos = 0;
    for (uint32_t a = 0; a < n && !rc; a++)
        rc = read_anim(c, json_array_get(anims, a), a, &sc, &pos);
    free(sc.keys);
    free(sc.raw);
    free(sc.derived);
    free(sc.stack);
    return rc;
}

/* ---- styles and atlases ------------------------------------------------------------ */

static int read_texture(struct ctx *c, json_t *jt, const char *path, struct arm_texture *t)
{
    const char *name;
    long atlas;
    int rc;
    if ((rc = need_object(c, jt, path)) || (rc = get_str(c, jt, "name", path, "", &name)) ||
        (rc = get_vec2(c, jt, "offset", path, (struct vec2){0, 0}, &t->offset)) ||
        (rc = get_vec2(c, jt, "size", path, (struct vec2){0, 0}, &t->size)) ||
        (rc = get_int(c, jt, "atlas_idx", path, 0, &atlas)) ||
        (rc = check_index(c, atlas, c->arm->atlas_count, false, path, "atlas_idx")))
        return rc;
    if (t->offset.x < 0 || t->offset.y < 0 || t->size.x < 0 || t->size.y < 0)
        return BAD(c, "%s: negative offset or size", path);
    t->atlas = (int)atlas;
    if (!(t->name = dup_str(name)))
        return eng_seterr(c->err, ENG_ENOMEM, "out of memory");
    return intern(c, name, &t->name_idx);
}

static int count_textures(struct ctx *c, json_t *styles, size_t *total)
{
    *total = 0;
    for (size_t s = 0; s < json_array_size(styles); s++) {
        json_t *js = json_array_get(styles, s);
        if (!json_is_object(js))
            return BAD(c, "styles[%zu]: expected an object", s);
        json_t *t = json_object_get(js, "textures");
        if (t && !json_is_array(t) && !json_is_null(t))
            return BAD(c, "styles[%zu].textures: expected an array", s);
        *total += json_array_size(t);
    }
    return 0;
}

static int read_styles(struct ctx *c, json_t *root)
{
    struct armature *arm = c->arm;
    json_t *styles;
    size_t n, total;
    int rc = get_array(c, root, "styles", "", &styles, &n);
    if (rc || (rc = check_listed(c, n, "styles")) || (rc = count_textures(c, styles, &total)))
        return rc;
    arm->styles = calloc(n ? n : 1, sizeof *arm->styles);
    arm->textures = calloc(total ? total : 1, sizeof *arm->textures);
    if (!arm->styles || !arm->textures)
        return eng_seterr(c->err, ENG_ENOMEM, "out of memory");
    arm->style_count = (uint32_t)n;
    arm->default_style = -1;
    for (uint32_t s = 0; s < n; s++) {
        char path[48];
        snprintf(path, sizeof path, "styles[%u]", s);
        json_t *js = json_array_get(styles, s);
        struct arm_style *st = &arm->styles[s];
        const char *name;
        long id;
        if ((rc = get_str(c, js, "name", path, "", &name)) ||
            (rc = get_int(c, js, "id", path, s, &id)))
            return rc;
        st->id = (int)id;
        if (!(st->name = dup_str(name)))
            return eng_seterr(c->err, ENG_ENOMEM, "out of memory");
        if (arm->default_style < 0 && !strcmp(name, "Default"))
            arm->default_style = (int)s;
        json_t *texs = json_object_get(js, "textures");
        st->tex_off = arm->texture_count;
        st->tex_len = (uint32_t)json_array_size(texs);
        for (uint32_t t = 0; t < st->tex_len; t++) {
            char tpath[80];
            snprintf(tpath, sizeof tpath, "%s.textures[%u]", path, t);
            if ((rc = read_texture(c, json_array_get(texs, t), tpath,
                                   &arm->textures[arm->texture_count++])))
                return rc;
        }
    }
    return 0;
}

/* Per style: texture-name index -> first texture of that name in the style, or -1. */
/* Each style indexes every texture name (a lookup a bone's texture needs per frame): styles x
 * names entries, bounded, since a 700 KB file could ask for 240,000 of each. */
#define MAX_STYLE_INDEX (16u << 20)

static int index_styles(struct ctx *c)
{
    struct armature *arm = c->arm;
    uint64_t entries = (uint64_t)arm->style_count * (arm->tex_name_count + 1);
    if (entries > MAX_STYLE_INDEX)
        return eng_seterr(c->err, ENG_ELIMIT,
                          "armature.json: %u styles x %u texture names exceed the limit of %u",
                          arm->style_count, arm->tex_name_count, MAX_STYLE_INDEX);
    for (uint32_t s = 0; s < arm->style_count; s++) {
        struct arm_style *st = &arm->styles[s];
        st->by_name = malloc((arm->tex_name_count + 1) * sizeof *st->by_name);
        if (!st->by_name)
            return eng_seterr(c->err, ENG_ENOMEM, "out of memory");
        for (uint32_t i = 0; i < arm->tex_name_count; i++)
            st->by_name[i] = -1;
        for (uint32_t t = st->tex_len; t-- > 0;) {
            int ni = arm->textures[st->tex_off + t].name_idx;
            if (ni >= 0)
                st->by_name[ni] = (int)(st->tex_off + t);
        }
        arm->mem_bytes += (arm->tex_name_count + 1) * sizeof(int);
    }
    return 0;
}

static int read_atlases(struct ctx *c, json_t *root)
{
    struct armature *arm = c->arm;
    json_t *arr;
    size_t n;
    int rc = get_array(c, root, "atlases", "", &arr, &n);
    if (rc || (rc = check_listed(c, n, "atlases")))
        return rc;
    arm->atlases = calloc(n ? n : 1, sizeof *arm->atlases);
    if (!arm->atlases)
        return eng_seterr(c->err, ENG_ENOMEM, "out of memory");
    arm->atlas_count = (uint32_t)n;
    for (uint32_t a = 0; a < n; a++) {
        char path[48];
        snprintf(path, sizeof path, "atlases[%u]", a);
        json_t *ja = json_array_get(arr, a);
        const char *file;
        if ((rc = need_object(c, ja, path)) || (rc = get_str(c, ja, "filename", path, "", &file)))
            return rc;
        if (!*file)
            return BAD(c, "%s.filename: missing", path);
        if (!(arm->atlases[a].filename = dup_str(file)))
            return eng_seterr(c->err, ENG_ENOMEM, "out of memory");
    }
    return 0;
}

int load_check_textures(const struct armature *arm, struct eng_error *err)
{
    for (uint32_t s = 0; s < arm->style_count; s++) {
        const struct arm_style *st = &arm->styles[s];
        for (uint32_t t = 0; t < st->tex_len; t++) {
            const struct arm_texture *tx = &arm->textures[st->tex_off + t];
            const struct arm_atlas *at = &arm->atlases[tx->atlas];
            char q[ENG_QUOTE_MAX];
            if (tx->offset.x + tx->size.x > at->width || tx->offset.y + tx->size.y > at->height)
                return eng_seterr(err, ENG_EBADFILE,
                                  "armature.json: styles[%u].textures[%u]: rectangle %gx%g at "
                                  "(%g,%g) exceeds %s (%ux%u)",
                                  s, t, tx->size.x, tx->size.y, tx->offset.x, tx->offset.y,
                                  eng_quote(at->filename, q), at->width, at->height);
        }
    }
    return 0;
}

/* ---- top level --------------------------------------------------------------------- */

static int check_version(struct ctx *c, json_t *root)
{
    const char *version, *fmt;
    char q[ENG_QUOTE_MAX];
    int rc = get_str(c, root, "version", "", "", &version);
    if (rc || (rc = get_str(c, root, "img_format", "", "PNG", &fmt)))
        return rc;
    if (strcmp(fmt, "PNG") != 0)
        return eng_seterr(c->err, ENG_EUNSUPPORTED,
                          "armature.json: img_format: unsupported atlas format %s",
                          eng_quote(fmt, q));
    if (!(c->arm->version = dup_str(version)))
        return eng_seterr(c->err, ENG_ENOMEM, "out of memory");
    return 0;
}

/* The layout comes from the keys (SPEC.md section 4): any of the three arrays means 0.6/0.7. */
static int detect_layout(struct ctx *c, json_t *root)
{
    int rc;
    if ((rc = get_array(c, root, "visuals", "", &c->visuals, &c->visual_count)) ||
        (rc = get_array(c, root, "inverse_kinematics", "", &c->families, &c->family_count)) ||
        (rc = get_array(c, root, "physics", "", &c->physics, &c->physics_count)))
        return rc;
    c->arrays = c->visuals || c->families || c->physics;
    c->arm->layout = c->arrays ? ARM_LAYOUT_ARRAYS : ARM_LAYOUT_BONES;
    c->tint_scale = c->arrays ? 255.0 : 1.0;
    return 0;
}

/* Versions whose layouts skeld knows; a later one is read if its keys are understood. */
static bool known_version(const char *v)
{
    return !*v || !strcmp(v, "0.5") || !strcmp(v, "0.6") || !strcmp(v, "0.7") ||
           !strncmp(v, "0.5.", 4) || !strncmp(v, "0.6.", 4) || !strncmp(v, "0.7.", 4);
}

/* A file of an unknown version that does not read is refused by its version. */
static int name_version(struct ctx *c, int rc)
{
    const char *v = c->arm->version;
    if (rc != ENG_EBADFILE || !v || known_version(v))
        return rc;
    static const char prefix[] = "armature.json: ";
    char q[ENG_QUOTE_MAX], why[sizeof c->err->msg];
    const char *m = c->err->msg;
    snprintf(why, sizeof why, "%s",
             strncmp(m, prefix, sizeof prefix - 1) ? m : m + sizeof prefix - 1);
    return eng_seterr(c->err, ENG_EUNSUPPORTED,
                      "%sunsupported format version %s (skeld reads 0.5 to 0.7): %s", prefix,
                      eng_quote(v, q), why);
}

static int read_root(struct ctx *c, json_t *root)
{
    int rc;
    if (!json_is_object(root))
        return BAD(c, "the top level is not an object");
    if ((rc = check_version(c, root)) || (rc = detect_layout(c, root)) ||
        (rc = get_bool(c, root, "baked_ik", "", false, &c->arm->baked_ik)) ||
        (rc = read_atlases(c, root)) || (rc = read_bones(c, root)) ||
        (rc = c->arrays ? read_families(c) : read_ik_roots(c, root)) ||
        (rc = read_anims(c, root)) || (rc = read_styles(c, root)) || (rc = index_styles(c)))
        return name_version(c, rc);
    if (construct_plan(c->arm) || anim_plan_ease(c->arm))
        return eng_seterr(c->err, ENG_ENOMEM, "out of memory");
    return 0;
}

/* An upper bound on the JSON values in text, without building them: every value but the
 * first in a container follows a comma, and each container is a value. Strings are skipped
 * (their commas and brackets do not count). Stops counting past max. */
static uint64_t count_values(const char *text, size_t len, uint64_t max)
{
    uint64_t n = 1;
    bool in_str = false;
    for (size_t i = 0; i < len && n <= max; i++) {
        char ch = text[i];
        if (in_str) {
            if (ch == '\\')
                i++;
            else if (ch == '"')
                in_str = false;
        } else if (ch == '"') {
            in_str = true;
        } else if (ch == ',' || ch == '{' || ch == '[') {
            n++;
        }
    }
    return n;
}

int load_json(const char *text, size_t len, const struct load_limits *lim, struct armature **out,
              struct eng_error *err)
{
    *out = NULL;
    if (count_values(text, len, lim->max_json_values) > lim->max_json_values)
        return eng_seterr(err, ENG_ELIMIT,
                          "armature.json: more than %u JSON values (counted before parsing)",
                          lim->max_json_values);
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return eng_seterr(err, ENG_EBADFILE, "armature.json: invalid JSON at line %d column %d: %s",
                          jerr.line, jerr.column, jerr.text);
    struct ctx c = {
        .arm = calloc(1, sizeof(struct armature)), .err = err, .lim = lim, .tint_scale = 1.0};
    int rc = c.arm ? read_root(&c, root) : eng_seterr(err, ENG_ENOMEM, "out of memory");
    free(c.slots);
    free(c.bone_family);
    free(c.family_root);
    json_decref(root);
    if (rc) {
        armature_free(c.arm);
        return rc;
    }
    c.arm->mem_bytes += sizeof *c.arm;
    *out = c.arm;
    return 0;
}
