/* Encoder and decoder of the evaluation and render request bodies (skp_msg.h). The field
 * order here is the protocol's: PROTOCOL.md and this file change together. */
#include "skp_msg.h"

#include <stdio.h>
#include <string.h>

void skp_eval_req_init(struct skp_eval_req *r)
{
    memset(r, 0, sizeof *r);
    r->target = SKP_TARGET_ARMATURE;
    r->scale[0] = r->scale[1] = 1.0;
}

void skp_render_req_init(struct skp_render_req *r)
{
    memset(r, 0, sizeof *r);
    r->width = r->height = 512;
    r->camera = SKP_CAMERA_FIT;
    r->fit = 0.9;
    r->scale[0] = r->scale[1] = 1.0;
    r->samples = 4;
    r->format = SKP_FORMAT_PNG;
    r->png_level = SKP_PNG_DEFAULT;
}

size_t skp_eval_req_size(const struct skp_eval_req *r)
{
    size_t n = 1 + SKP_ID_SIZE + 2 + 1 + 8 + 4 + 6 * 8;
    for (unsigned i = 0; i < r->anim_count && i < SKP_MAX_ANIMS; i++)
        n += 2 + r->anims[i].name.len + 16;
    return n;
}

size_t skp_render_req_size(const struct skp_render_req *r)
{
    size_t n = 8 + 4 + 1 + 8 + 4 * 8 + 1 + 3 + 8 + 4;
    for (unsigned i = 0; i < r->style_count && i < SKP_MAX_STYLES; i++)
        n += 2 + r->styles[i].len;
    return n;
}

static void put_str(struct skp_writer *w, struct skp_str s)
{
    skp_write_str(w, s.p ? s.p : "", s.p ? s.len : 0);
}

void skp_encode_eval_req(struct skp_writer *w, const struct skp_eval_req *r)
{
    skp_write_u8(w, r->target);
    if (r->target == SKP_TARGET_ARMATURE)
        skp_write_raw(w, r->armature, SKP_ID_SIZE);
    else
        skp_write_u32(w, r->instance);
    skp_write_u16(w, r->flags);
    skp_write_u8(w, r->anim_count);
    for (unsigned i = 0; i < r->anim_count; i++) {
        put_str(w, r->anims[i].name);
        skp_write_f64(w, r->anims[i].frame);
        skp_write_f64(w, r->anims[i].smooth);
    }
    skp_write_f64(w, r->from);
    skp_write_u32(w, r->warmup);
    skp_write_f64s(w, r->position, 2);
    skp_write_f64s(w, r->scale, 2);
    skp_write_f64s(w, r->velocity, 2);
}

void skp_encode_render_req(struct skp_writer *w, const struct skp_render_req *r)
{
    skp_write_u32(w, r->width);
    skp_write_u32(w, r->height);
    skp_write_raw(w, r->background, 4);
    skp_write_u8(w, r->camera);
    skp_write_f64(w, r->fit);
    skp_write_f64s(w, r->scale, 2);
    skp_write_f64s(w, r->position, 2);
    skp_write_u8(w, r->style_count);
    for (unsigned i = 0; i < r->style_count; i++)
        put_str(w, r->styles[i]);
    skp_write_u8(w, r->samples);
    skp_write_u8(w, r->format);
    skp_write_u8(w, r->png_level);
    skp_write_u32(w, r->first);
    skp_write_u32(w, r->last);
    skp_write_u16(w, r->cols);
    skp_write_u16(w, r->rows);
}

static struct skp_str read_str(struct skp_reader *rd)
{
    struct skp_str s;
    s.p = skp_read_str(rd, &s.len);
    return s;
}

static void read_f64s(struct skp_reader *rd, double *v, int n)
{
    for (int i = 0; i < n; i++)
        v[i] = skp_read_f64(rd);
}

static int count_error(struct skp_reader *rd)
{
    rd->err = rd->err ? rd->err : SKP_ECOUNT;
    return rd->err;
}

int skp_decode_eval_req(struct skp_reader *rd, struct skp_eval_req *r)
{
    skp_eval_req_init(r);
    r->target = skp_read_u8(rd);
    if (r->target == SKP_TARGET_ARMATURE) {
        const void *id = skp_read_raw(rd, SKP_ID_SIZE);
        if (id)
            memcpy(r->armature, id, SKP_ID_SIZE);
    } else if (r->target == SKP_TARGET_INSTANCE) {
        r->instance = skp_read_u32(rd);
    } else {
        return count_error(rd);
    }
    r->flags = skp_read_u16(rd);
    r->anim_count = skp_read_u8(rd);
    if (r->anim_count > SKP_MAX_ANIMS)
        return count_error(rd);
    for (unsigned i = 0; i < r->anim_count; i++) {
        r->anims[i].name = read_str(rd);
        r->anims[i].frame = skp_read_f64(rd);
        r->anims[i].smooth = skp_read_f64(rd);
    }
    r->from = skp_read_f64(rd);
    r->warmup = skp_read_u32(rd);
    read_f64s(rd, r->position, 2);
    read_f64s(rd, r->scale, 2);
    read_f64s(rd, r->velocity, 2);
    return rd->err;
}

int skp_decode_render_req(struct skp_reader *rd, struct skp_render_req *r)
{
    skp_render_req_init(r);
    r->width = skp_read_u32(rd);
    r->height = skp_read_u32(rd);
    const void *bg = skp_read_raw(rd, 4);
    if (bg)
        memcpy(r->background, bg, 4);
    r->camera = skp_read_u8(rd);
    r->fit = skp_read_f64(rd);
    read_f64s(rd, r->scale, 2);
    read_f64s(rd, r->position, 2);
    r->style_count = skp_read_u8(rd);
    if (r->style_count > SKP_MAX_STYLES)
        return count_error(rd);
    for (unsigned i = 0; i < r->style_count; i++)
        r->styles[i] = read_str(rd);
    r->samples = skp_read_u8(rd);
    r->format = skp_read_u8(rd);
    r->png_level = skp_read_u8(rd);
    if (r->png_level == SKP_PNG_FAST) /* the same encoder: one request, one cached answer */
        r->png_level = SKP_PNG_DEFAULT;
    r->first = skp_read_u32(rd);
    r->last = skp_read_u32(rd);
    r->cols = skp_read_u16(rd);
    r->rows = skp_read_u16(rd);
    return rd->err;
}

bool skp_node_name_valid(const char *s, size_t len)
{
    static const char ok[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-";
    if (len < 1 || len > SKP_MAX_NODE_NAME)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!s[i] || !strchr(ok, s[i]))
            return false;
    return true;
}

size_t skp_hello_name(char *buf, size_t cap, const char *package_string, const char *node)
{
    int n = node && skp_node_name_valid(node, strlen(node))
                ? snprintf(buf, cap, "%s on %s", package_string, node)
                : snprintf(buf, cap, "%s", package_string);
    return n > 0 ? (size_t)n : 0;
}

bool skp_hello_name_parse(const char *name, struct skp_str *version, struct skp_str *node)
{
    const char *sp = strchr(name, ' '), *on = strstr(name, " on ");
    if (!sp || !on || on <= sp + 1 || memchr(sp + 1, ' ', (size_t)(on - sp - 1)))
        return false;
    *version = (struct skp_str){sp + 1, (size_t)(on - sp - 1)};
    *node = (struct skp_str){on + 4, strlen(on + 4)};
    /* both go into Prometheus labels: the version must be as plain a word as a node name */
    return skp_node_name_valid(node->p, node->len) && skp_node_name_valid(version->p, version->len);
}
