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

static const uint64_t pow10_u64[] = {1u,
                                     10u,
                                     100u,
                                     1000u,
                                     10000u,
                                     100000u,
                                     1000000u,
                                     10000000u,
                                     100000000u,
                                     1000000000u,
                                     10000000000u,
                                     100000000000u,
                                     1000000000000u,
                                     10000000000000u,
                                     100000000000000u,
                                     1000000000000000u};

static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324"
                                     "25262728293031323334353637383940414243444546474849"
                                     "50515253545556575859606162636465666768697071727374"
                                     "75767778798081828384858687888990919293949596979899";

/* Writes u in decimal (at most 10 digits); returns the length. The length first, then two
 * digits at a time from the pairs table, from the right, in place. */
static size_t fmt_u32(char *buf, uint32_t u)
{
    size_t n = 1;
    while (n < 10 && u >= pow10_u64[n])
        n++;
    size_t at = n;
    for (; u >= 100; u /= 100) {
        at -= 2;
        memcpy(buf + at, digit_pairs + 2 * (u % 100), 2);
    }
    if (u >= 10)
        memcpy(buf, digit_pairs + 2 * u, 2);
    else
        buf[0] = (char)('0' + u);
    return n;
}

/* The 9 significant digits of a (1e-5 <= a < 1e15) rounded as printf rounds (to nearest, ties
 * to even), exactly: q in [10^8, 10^9) and x with a ~= q * 10^(x - 8). Exact integer
 * arithmetic on a = mant / 2^sh: for x <= 8, q = mant * 10^(8-x) / 2^sh (a product under 2^97,
 * divided by a shift); for x > 8, q = mant / (2^sh * 10^(x-8)) (both under 2^64). */
static uint32_t g9_digits(double a, int *xout)
{
    /* a = mant 2^(e2 - 53), mant the 53-bit significand: read from the bits (a is normal
     * here), which frexp and ldexp took as long as the rest */
    uint64_t bits;
    memcpy(&bits, &a, sizeof bits);
    int e2 = (int)(bits >> 52 & 0x7ff) - 1022; /* -16 <= e2 <= 50 here */
    uint64_t mant = (bits & ((UINT64_C(1) << 52) - 1)) | UINT64_C(1) << 52;
    int sh = 53 - e2; /* 3 <= sh <= 69 */
    /* floor(log10(a)) is floor((e2 - 1) log10(2)) or one more; 78913 / 2^18 ~ log10(2), and
     * the offset keeps the shifted value non-negative */
    int x = (((e2 - 1) * 78913 + (400 << 18)) >> 18) - 400;
    for (int tries = 0;; tries++) {
        int k = 8 - x;
        uint64_t q;
        bool up;
        if (k >= 0 && sh < 64) { /* a >= 2^-10: the remainder is in the low word */
            unsigned __int128 n = (unsigned __int128)mant * pow10_u64[k];
            uint64_t half = UINT64_C(1) << (sh - 1), r = (uint64_t)n & ((half << 1) - 1);
            q = (uint64_t)(n >> sh);
            up = r + (q & 1) > half; /* above half, or half and q odd (ties to even) */
        } else if (k >= 0) {
            unsigned __int128 n = (unsigned __int128)mant * pow10_u64[k];
            unsigned __int128 half = (unsigned __int128)1 << (sh - 1);
            unsigned __int128 r = n & ((half << 1) - 1);
            q = (uint64_t)(n >> sh);
            up = r > half || (r == half && (q & 1));
        } else {
            uint64_t d = pow10_u64[-k] << sh;
            q = mant / d;
            uint64_t r = mant % d;
            up = 2 * r > d || (2 * r == d && (q & 1));
        }
        if (q >= 1000000000u && tries < 2) {
            x++;
            continue;
        }
        if (q < 100000000u && tries < 2) {
            x--;
            continue;
        }
        q += up;
        if (q == 1000000000u) { /* 999999999.5 rounds into the next decade */
            q = 100000000u;
            x++;
        }
        *xout = x;
        return (uint32_t)q;
    }
}

/* %.9g of v, byte for byte as printf writes it, without printf's multi-precision path (most
 * of the cost of pose JSON). Answers for 1e-5 <= |v| < 1e15 (the caller falls back to printf
 * elsewhere): whole numbers under 10^9 directly, the rest through g9_digits. Returns the
 * length written to buf (at least 24 bytes), or 0 outside the fast range. */
size_t skp_fmt_g9(char *buf, double v)
{
    double a = fabs(v);
    if (!(a >= 1e-5 && a < 1e15))
        return 0;
    char *o = buf;
    if (v < 0)
        *o++ = '-';
    if (a < 1e9 && a == (double)(uint32_t)a) {
        o += fmt_u32(o, (uint32_t)a);
        *o = 0;
        return (size_t)(o - buf);
    }
    int x;
    uint32_t q = g9_digits(a, &x);
    /* The first digit, then four pairs from a table (five divisions, not nine), then zeros:
     * every copy below is of a fixed size, whole moves rather than calls, and o advances by
     * what counts (at most 19 bytes are written, in a buffer of at least 24). */
    char dig[17];
    uint32_t hi = q % 100000000u / 10000u, lo = q % 10000u;
    dig[0] = (char)('0' + q / 100000000u);
    memcpy(dig + 1, digit_pairs + 2 * (hi / 100u), 2);
    memcpy(dig + 3, digit_pairs + 2 * (hi % 100u), 2);
    memcpy(dig + 5, digit_pairs + 2 * (lo / 100u), 2);
    memcpy(dig + 7, digit_pairs + 2 * (lo % 100u), 2);
    memcpy(dig + 9, "00000000", 8);
    int nd = 9;
    while (nd > 1 && dig[nd - 1] == '0')
        nd--;               /* %g drops trailing zeros */
    if (x < -4 || x >= 9) { /* d.ddde+XX */
        *o++ = dig[0];
        if (nd > 1) {
            *o++ = '.';
            memcpy(o, dig + 1, 8);
            o += nd - 1;
        }
        *o++ = 'e';
        *o++ = x < 0 ? '-' : '+';
        int ax = x < 0 ? -x : x;
        *o++ = (char)('0' + ax / 10);
        *o++ = (char)('0' + ax % 10);
    } else if (x >= 0) { /* ddd.ddd: dig holds the zeros a short number needs */
        memcpy(o, dig, 9);
        o += x + 1;
        if (nd > x + 1) {
            *o++ = '.';
            memcpy(o, dig + x + 1, 8);
            o += nd - x - 1;
        }
    } else { /* 0.000ddd, at most four zeros after the point (x >= -5) */
        memcpy(o, "0.0000", 6);
        o += 2 + (-x - 1);
        memcpy(o, dig, 9);
        o += nd;
    }
    *o = 0;
    return (size_t)(o - buf);
}

static void raw(struct out *o, const char *s, size_t n);

static void num(struct out *o, double v)
{
    char b[32];
    if (v == 0.0) {
        raw(o, "0", 1); /* no "-0" */
        return;
    }
    /* Straight into the output where it has room, else through b (raw counts what is cut). */
    bool direct = o->len < o->cap && o->cap - o->len >= sizeof b;
    size_t n = skp_fmt_g9(direct ? o->buf + o->len : b, v);
    if (n && direct)
        o->len += n;
    else if (n)
        raw(o, b, n);
    else
        put(o, "%.9g", v); /* what skp_fmt_g9 leaves to printf */
}

static void string(struct out *o, const char *s)
{
    size_t room = o->len < o->cap ? o->cap - o->len : 0;
    o->len += skp_json_quote(room ? o->buf + o->len : NULL, room, s);
}

/* Appends n bytes; past cap only the length grows (the caller sizes and calls again). A
 * whole copy of a literal's constant n compiles to a few moves, not a call. */
static void raw(struct out *o, const char *s, size_t n)
{
    size_t room = o->len < o->cap ? o->cap - o->len : 0;
    if (room >= n)
        memcpy(o->buf + o->len, s, n);
    else if (room)
        memcpy(o->buf + o->len, s, room);
    o->len += n;
}

/* A string literal, without printf: most of pose JSON is punctuation between numbers. */
#define lit(o, s) raw((o), "" s, sizeof(s) - 1)

static void uint_(struct out *o, uint32_t u)
{
    char b[10];
    raw(o, b, fmt_u32(b, u));
}

/* key then n numbers as a JSON array. */
static void numbers(struct out *o, const char *key, const double *v, int n)
{
    raw(o, key, strlen(key));
    for (int i = 0; i < n; i++) {
        if (i)
            lit(o, ",");
        num(o, v[i]);
    }
    lit(o, "]");
}

static void bone(struct out *o, const struct skp_bone_view *b, uint32_t id)
{
    lit(o, "{\"id\":");
    uint_(o, id);
    lit(o, ",\"pos\":[");
    num(o, b->pos[0]);
    lit(o, ",");
    num(o, b->pos[1]);
    lit(o, "],\"rot\":");
    num(o, b->rot);
    lit(o, ",\"scale\":[");
    num(o, b->scale[0]);
    lit(o, ",");
    num(o, b->scale[1]);
    if (b->hidden)
        lit(o, "],\"hidden\":true,\"zindex\":");
    else
        lit(o, "],\"hidden\":false,\"zindex\":");
    if (b->zindex < 0)
        lit(o, "-");
    uint_(o, b->zindex < 0 ? 0u - (uint32_t)b->zindex : (uint32_t)b->zindex);
    lit(o, ",\"tex\":");
    string(o, b->tex ? b->tex : "");
    if (b->matrix)
        numbers(o, ",\"matrix\":[", b->matrix, 6);
    if (b->tint)
        numbers(o, ",\"tint\":[", b->tint, 4);
    if (b->mesh || b->vert_count) {
        lit(o, ",\"verts\":[");
        for (uint32_t v = 0; v < b->vert_count; v++) {
            if (v)
                lit(o, ",[");
            else
                lit(o, "[");
            num(o, b->verts[2 * v]);
            lit(o, ",");
            num(o, b->verts[2 * v + 1]);
            lit(o, "]");
        }
        lit(o, "]");
    }
    lit(o, "}");
}

size_t skp_pose_json(char *buf, size_t cap, const struct skp_bone_view *bones, uint32_t count)
{
    struct out o = {buf, cap, 0};
    lit(&o, "[");
    for (uint32_t i = 0; i < count; i++) {
        if (i)
            lit(&o, ",\n");
        else
            lit(&o, "\n");
        bone(&o, &bones[i], i);
    }
    lit(&o, "\n]\n");
    if (cap)
        buf[o.len < cap ? o.len : cap - 1] = 0;
    return o.len;
}

/* The "bones", "animations" and "styles" arrays, one element a line. */
static void info_lists(struct out *o, const struct skp_info_view *v)
{
    lit(o, "\"bones\":[");
    for (uint32_t i = 0; i < v->bone_count; i++) {
        put(o, "%s\n{\"id\":%u,\"name\":", i ? "," : "", i);
        string(o, v->bones[i].name);
        put(o, ",\"parent\":%d}", (int)v->bones[i].parent);
    }
    lit(o, "],\"animations\":[");
    for (uint32_t a = 0; a < v->anim_count; a++) {
        put(o, "%s\n{\"id\":%u,\"name\":", a ? "," : "", a);
        string(o, v->anims[a].name);
        lit(o, ",\"fps\":");
        num(o, v->anims[a].fps);
        put(o, ",\"frames\":%u}", v->anims[a].frames);
    }
    lit(o, "],\"styles\":[");
    for (uint32_t s = 0; s < v->style_count; s++) {
        put(o, "%s\n{", s ? "," : "");
        if (v->file)
            put(o, "\"id\":%d,", v->styles[s].id);
        lit(o, "\"name\":");
        string(o, v->styles[s].name);
        if (v->file)
            put(o, ",\"textures\":%u", v->styles[s].textures);
        lit(o, "}");
    }
    lit(o, "]");
}

size_t skp_info_json(char *buf, size_t cap, const struct skp_info_view *v)
{
    struct out o = {buf, cap, 0};
    lit(&o, "{\"id\":");
    string(&o, v->id ? v->id : "");
    if (v->file) {
        lit(&o, ",\"version\":");
        string(&o, v->version ? v->version : "");
        lit(&o, ",\"layout\":");
        string(&o, v->layout ? v->layout : "");
    }
    lit(&o, ",");
    info_lists(&o, v);
    if (v->file) {
        lit(&o, ",\"atlases\":[");
        for (uint32_t a = 0; a < v->atlas_count; a++) {
            put(&o, "%s\n{\"filename\":", a ? "," : "");
            string(&o, v->atlases[a].filename);
            put(&o, ",\"width\":%u,\"height\":%u}", v->atlases[a].width, v->atlases[a].height);
        }
        put(&o, "],\"ik_families\":%u,\"mesh_vertices\":%u,\"keyframes\":%u", v->ik_families,
            v->mesh_vertices, v->keyframes);
    }
    lit(&o, "}\n");
    if (cap)
        buf[o.len < cap ? o.len : cap - 1] = 0;
    return o.len;
}

size_t skp_sheet_json_named(char *buf, size_t cap, const char *sheet_json, size_t sheet_len,
                            const char *image)
{
    struct out o = {buf, cap, 0};
    /* The JSON is written beside its picture: the file name alone, so the two move together. */
    const char *slash = strrchr(image, '/');
    put(&o, "{\"image\":");
    string(&o, slash ? slash + 1 : image);
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
