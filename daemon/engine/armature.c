/* Lookups on the immutable armature and its destructor. */
#include "armature.h"

#include <stdlib.h>
#include <string.h>

void armature_free(struct armature *arm)
{
    if (!arm)
        return;
    for (uint32_t i = 0; i < arm->bone_count && arm->bones; i++)
        free(arm->bones[i].name);
    for (uint32_t i = 0; i < arm->anim_count && arm->anims; i++)
        free(arm->anims[i].name);
    for (uint32_t i = 0; i < arm->tex_name_count; i++)
        free(arm->tex_names[i]);
    for (uint32_t i = 0; i < arm->style_count && arm->styles; i++) {
        free(arm->styles[i].name);
        free(arm->styles[i].by_name);
    }
    for (uint32_t i = 0; i < arm->texture_count && arm->textures; i++)
        free(arm->textures[i].name);
    for (uint32_t i = 0; i < arm->atlas_count && arm->atlases; i++) {
        free(arm->atlases[i].filename);
        free(arm->atlases[i].rgba);
        free(arm->atlases[i].clear);
    }
    free(arm->version);
    free(arm->bones);
    free(arm->ik_roots);
    free(arm->ik_chain);
    free(arm->vert_init);
    free(arm->vert_uv);
    free(arm->indices);
    free(arm->binds);
    free(arm->bind_verts);
    free(arm->anims);
    free(arm->tracks);
    free(arm->keyframes);
    free(arm->ease);
    free(arm->tex_names);
    free(arm->styles);
    free(arm->textures);
    free(arm->atlases);
    free(arm->plan);
    free(arm->pass_bones);
    free(arm->mesh_bones);
    free(arm->starts);
    free(arm);
}

int armature_find_bone(const struct armature *arm, const char *name)
{
    for (uint32_t i = 0; i < arm->bone_count; i++)
        if (!strcmp(arm->bones[i].name, name))
            return (int)i;
    return -1;
}

/* Decimal digits only (no sign or space), as a value below count; else -1. */
static int digits_below(const char *s, uint32_t count)
{
    uint64_t v = 0;
    if (!*s)
        return -1;
    for (; *s >= '0' && *s <= '9' && v < count; s++)
        v = v * 10 + (uint64_t)(*s - '0');
    return !*s && v < count ? (int)v : -1;
}

bool armature_is_index_form(const char *s)
{
    if (s[0] != '#' || !s[1])
        return false;
    for (s++; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

int armature_find_anim(const struct armature *arm, const char *name_or_index)
{
    if (armature_is_index_form(name_or_index))
        return digits_below(name_or_index + 1, arm->anim_count);
    for (uint32_t i = 0; i < arm->anim_count; i++)
        if (!strcmp(arm->anims[i].name, name_or_index))
            return (int)i;
    return digits_below(name_or_index, arm->anim_count); /* a name wins: "1" may be one */
}

int armature_find_style(const struct armature *arm, const char *name_or_index)
{
    if (armature_is_index_form(name_or_index))
        return digits_below(name_or_index + 1, arm->style_count);
    for (uint32_t i = 0; i < arm->style_count; i++)
        if (!strcmp(arm->styles[i].name, name_or_index))
            return (int)i;
    return digits_below(name_or_index, arm->style_count);
}

int armature_resolve_texture(const struct armature *arm, int tex_name, const int *styles,
                             uint32_t style_count)
{
    if (tex_name < 0)
        return -1;
    uint32_t n = styles ? style_count : arm->style_count;
    for (uint32_t i = 0; i < n; i++) {
        int s = styles ? styles[i] : (int)i;
        int t = arm->styles[s].by_name[tex_name];
        if (t >= 0)
            return t;
    }
    return -1;
}

const char *armature_tex_name(const struct armature *arm, int tex_name)
{
    return tex_name >= 0 ? arm->tex_names[tex_name] : "";
}

const char *armature_layout_name(const struct armature *arm)
{
    return arm->layout == ARM_LAYOUT_ARRAYS ? "arrays" : "bones";
}
