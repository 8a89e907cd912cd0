#include "skp_json.h"

#include "skp.h"
#include "skp_cli.h"

#include <limits.h>
#include <math.h>
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

/* %.9g of v, byte for byte as printf writes it, without printf's multi-precision path (most
 * of the cost of pose JSON): exact integer arithmetic for 1e-5 <= |v| < 1e15, where the
 * scaled value fits 128 bits; the caller falls back to printf elsewhere. Returns the length
 * written to buf (at least 24 bytes), or 0 outside the fast range. */
size_t skp_fmt_g9(char *buf, double v)
{
    double a = fabs(v);
    if (!(a >= 1e-5 && a < 1e15))
        return 0;
    int e2;
    double m = frexp(a, &e2); /* a = m 2^e2, m in [0.5, 1) */
    uint64_t mant = (uint64_t)ldexp(m, 53);
    int sh = 53 - e2; /* a = mant / 2^sh, 0 < sh <= 70 here */
    int x = (int)floor(log10(a)), tries = 0;
    unsigned __int128 q, r, d;
    for (;;) { /* q = a * 10^(8 - x), which must have 9 digits; x may be off by one */
        int k = 8 - x;
        unsigned __int128 n = mant, p10 = 1;
        for (int i = 0; i < (k < 0 ? -k : k); i++)
            p10 *= 10;
        d = (unsigned __int128)1 << sh;
        if (k >= 0)
            n *= p10;
        else
            d *= p10;
        q = n / d;
        r = n % d;
        if (q < 100000000u && tries++ < 2)
            x--;
        else if (q >= 1000000000u && tries++ < 2)
            x++;
        else
            break;
    }
    if (q < 100000000u || q >= 1000000000u)
        return 0;
    /* round to nearest, ties to even, as printf in the default rounding mode */
    if (2 * r > d || (2 * r == d && (q & 1)))
        q++;
    if (q == 1000000000u) {
        q = 100000000u;
        x++;
    }
    char dig[10];
    for (int i = 8; i >= 0; i--, q /= 10)
        dig[i] = (char)('0' + (int)(q % 10));
    int nd = 9;
    while (nd > 1 && dig[nd - 1] == '0')
        nd--; /* %g drops trailing zeros */
    char *o = buf;
    if (v < 0)
        *o++ = '-';
    if (x < -4 || x >= 9) { /* d.ddde+XX */
        *o++ = dig[0];
        if (nd > 1) {
            *o++ = '.';
            for (int i = 1; i < nd; i++)
                *o++ = dig[i];
        }
        o += sprintf(o, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
    } else if (x >= 0) { /* ddd.ddd */
        for (int i = 0; i <= x; i++)
            *o++ = i < nd ? dig[i] : '0';
        if (nd > x + 1) {
            *o++ = '.';
            for (int i = x + 1; i < nd; i++)
                *o++ = dig[i];
        }
    } else { /* 0.000ddd */
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -x - 1; i++)
            *o++ = '0';
        for (int i = 0; i < nd; i++)
            *o++ = dig[i];
    }
    *o = 0;
    return (size_t)(o - buf);
}

static void num(struct out *o, double v)
{
    char b[32];
    size_t n = v == 0.0 ? 0 : skp_fmt_g9(b, v);
    if (!n) {
        put(o, "%.9g", v == 0.0 ? 0.0 : v); /* no "-0" */
        return;
    }
    size_t room = o->len < o->cap ? o->cap - o->len : 0;
    if (room > n)
        memcpy(o->buf + o->len, b, n + 1);
    else if (room)
        memcpy(o->buf + o->len, b, room); /* truncated: the caller sizes and calls again */
    o->len += n;
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
    put(o, "%s\n{\"bone\":%u,\"atlas\":%u,\"tint\":[", i ? "," : "", bone, atlas);
    for (int k = 0; k < 4; k++) {
        put(o, k ? "," : "");
        num(o, tint[k]);
    }
    put(o, "],\"vertices\":[");
    uint32_t nv = skp_read_u32(rd);
    for (uint32_t v = 0; v < nv && !rd->err; v++) {
        put(o, v ? ",[" : "[");
        for (int k = 0; k < 4; k++) {
            put(o, k ? "," : "");
            num(o, skp_read_f64(rd));
        }
        put(o, "]");
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
