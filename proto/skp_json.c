#include "skp_json.h"

#include "skp.h"
#include "skp_cli.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct out {
    char *buf;
    size_t cap, len;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = o->len < o->cap ? o->cap - o->len : 0;
    int n = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->len += (size_t)n;
}

static void num(struct out *o, double v)
{
    put(o, "%.9g", v == 0.0 ? 0.0 : v); /* no "-0" */
}

static void string(struct out *o, const char *s)
{
    size_t room = o->len < o->cap ? o->cap - o->len : 0;
    o->len += skp_json_quote(room ? o->buf + o->len : NULL, room, s);
}

static void bone(struct out *o, const struct skp_bone_view *b, uint32_t id)
{
    put(o, "{\"id\":%u,\"pos\":[", id);
    num(o, b->pos[0]);
    put(o, ",");
    num(o, b->pos[1]);
    put(o, "],\"rot\":");
    num(o, b->rot);
    put(o, ",\"scale\":[");
    num(o, b->scale[0]);
    put(o, ",");
    num(o, b->scale[1]);
    put(o, "],\"hidden\":%s,\"zindex\":%d,\"tex\":", b->hidden ? "true" : "false", (int)b->zindex);
    string(o, b->tex ? b->tex : "");
    if (b->mesh || b->vert_count) {
        put(o, ",\"verts\":[");
        for (uint32_t v = 0; v < b->vert_count; v++) {
            put(o, v ? ",[" : "[");
            num(o, b->verts[2 * v]);
            put(o, ",");
            num(o, b->verts[2 * v + 1]);
            put(o, "]");
        }
        put(o, "]");
    }
    put(o, "}");
}

size_t skp_pose_json(char *buf, size_t cap, const struct skp_bone_view *bones, uint32_t count)
{
    struct out o = {buf, cap, 0};
    put(&o, "[");
    for (uint32_t i = 0; i < count; i++) {
        put(&o, "%s\n", i ? "," : "");
        bone(&o, &bones[i], i);
    }
    put(&o, "\n]\n");
    if (cap)
        buf[o.len < cap ? o.len : cap - 1] = 0;
    return o.len;
}

size_t skp_sheet_json_named(char *buf, size_t cap, const char *sheet_json, size_t sheet_len,
                            const char *image)
{
    struct out o = {buf, cap, 0};
    put(&o, "{\"image\":");
    string(&o, image);
    /* The sheet object is "{" then its keys: splice the name in as the first key. */
    if (sheet_len > 2 && sheet_len < INT_MAX && sheet_json[0] == '{')
        put(&o, ",%.*s\n", (int)(sheet_len - 1), sheet_json + 1);
    else
        put(&o, "}\n");
    if (cap)
        buf[o.len < cap ? o.len : cap - 1] = 0;
    return o.len;
}

/* One draw item of a MESH reply body (PROTOCOL.md "draw list"), as JSON. False if the body
 * ends early. */
static bool draw_item(struct out *o, struct skp_reader *rd, uint32_t i)
{
    uint32_t bone = skp_read_u32(rd), atlas = skp_read_u32(rd);
    double tint[4];
    for (int k = 0; k < 4; k++)
        tint[k] = skp_read_f64(rd);
    put(o, "%s\n{\"bone\":%u,\"atlas\":%u,\"tint\":[%.9g,%.9g,%.9g,%.9g],\"vertices\":[",
        i ? "," : "", bone, atlas, tint[0], tint[1], tint[2], tint[3]);
    uint32_t nv = skp_read_u32(rd);
    for (uint32_t v = 0; v < nv && !rd->err; v++) {
        double x = skp_read_f64(rd), y = skp_read_f64(rd), u = skp_read_f64(rd),
               w = skp_read_f64(rd);
        put(o, "%s[%.9g,%.9g,%.9g,%.9g]", v ? "," : "", x, y, u, w);
    }
    put(o, "],\"indices\":[");
    uint32_t ni = skp_read_u32(rd);
    for (uint32_t k = 0; k < ni && !rd->err; k++)
        put(o, "%s%u", k ? "," : "", skp_read_u32(rd));
    put(o, "]}");
    return !rd->err;
}

size_t skp_mesh_json_wire(char *buf, size_t cap, const uint8_t *body, size_t len)
{
    struct out o = {buf, cap, 0};
    struct skp_reader rd;
    skp_reader_init(&rd, body, len);
    uint32_t n = skp_read_u32(&rd);
    put(&o, "[");
    for (uint32_t i = 0; i < n && draw_item(&o, &rd, i); i++)
        ;
    put(&o, "\n]\n");
    if (cap)
        buf[o.len < cap ? o.len : cap - 1] = 0;
    return rd.err ? 0 : o.len;
}
