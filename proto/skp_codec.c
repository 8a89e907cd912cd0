/* Byte order and field codec (PROTOCOL.md "Body encoding"). Explicit shifts, never struct
 * casts over wire bytes. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "skp.h"

const char *skp_opcode_name(int opcode)
{
    switch (opcode) {
#define SKP_X(name, value)                                                                         \
    case value: return #name;
        SKP_OPCODES(SKP_X)
#undef SKP_X
    default: return "?";
    }
}

const char *skp_status_name(int status)
{
    switch (status) {
#define SKP_X(name, value, msg)                                                                    \
    case value: return #name;
        SKP_STATUSES(SKP_X)
#undef SKP_X
    default: return "?";
    }
}

const char *skp_strerror(int status)
{
    switch (status) {
#define SKP_X(name, value, msg)                                                                    \
    case value: return msg;
        SKP_STATUSES(SKP_X)
#undef SKP_X
    default: return "unknown status";
    }
}

int skp_is_client_fault(int status)
{
    return status > 0 && status < 100;
}

void skp_hex(char *out, const uint8_t *b, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[2 * n] = 0;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int skp_unhex(uint8_t *out, size_t n, const char *s, size_t len)
{
    if (len != 2 * n)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

void skp_put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

void skp_put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void skp_put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

uint16_t skp_get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

uint32_t skp_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t skp_get_u64(const uint8_t *p)
{
    return (uint64_t)skp_get_u32(p) | (uint64_t)skp_get_u32(p + 4) << 32;
}

void skp_encode_header(const struct skp_header *h, uint8_t *out)
{
    skp_put_u32(out, SKP_MAGIC);
    out[4] = h->version;
    out[5] = h->opcode;
    skp_put_u16(out + 6, h->flags);
    skp_put_u16(out + 8, h->status);
    skp_put_u16(out + 10, 0);
    skp_put_u32(out + 12, h->id);
    skp_put_u32(out + 16, h->body_len);
}

/* ---- writer ----------------------------------------------------------------------------- */

void skp_writer_init(struct skp_writer *w, uint8_t *buf, size_t cap)
{
    *w = (struct skp_writer){buf, cap, 0, SKP_EOK};
}

static uint8_t empty[1];

static uint8_t *room(struct skp_writer *w, size_t n)
{
    if (w->err || n > w->cap - w->len) {
        w->err = w->err ? w->err : SKP_ENOSPACE;
        return NULL;
    }
    if (n == 0)
        return empty; /* never offset a NULL buffer */
    uint8_t *p = w->buf + w->len;
    w->len += n;
    return p;
}

void skp_write_u8(struct skp_writer *w, uint8_t v)
{
    uint8_t *p = room(w, 1);
    if (p)
        *p = v;
}

void skp_write_u16(struct skp_writer *w, uint16_t v)
{
    uint8_t *p = room(w, 2);
    if (p)
        skp_put_u16(p, v);
}

void skp_write_u32(struct skp_writer *w, uint32_t v)
{
    uint8_t *p = room(w, 4);
    if (p)
        skp_put_u32(p, v);
}

void skp_write_i32(struct skp_writer *w, int32_t v)
{
    skp_write_u32(w, (uint32_t)v);
}

void skp_write_f64(struct skp_writer *w, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint8_t *p = room(w, 8);
    if (p)
        skp_put_u64(p, bits);
}

/* n doubles at p in the wire's order (little-endian): one copy on hosts of that order. */
static uint8_t *put_f64s(uint8_t *p, const double *v, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n)
        memcpy(p, v, n * 8);
#else
    for (size_t i = 0; i < n; i++) {
        uint64_t bits;
        memcpy(&bits, &v[i], sizeof bits);
        skp_put_u64(p + 8 * i, bits);
    }
#endif
    return p + n * 8;
}

void skp_write_f64s(struct skp_writer *w, const double *v, size_t n)
{
    uint8_t *p = n <= SIZE_MAX / 8 ? room(w, n * 8) : room(w, SIZE_MAX);
    if (p)
        put_f64s(p, v, n);
}

void skp_write_u32s(struct skp_writer *w, const uint32_t *v, size_t n)
{
    uint8_t *p = n <= SIZE_MAX / 4 ? room(w, n * 4) : room(w, SIZE_MAX);
    if (!p || !n)
        return;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, v, n * 4);
#else
    for (size_t i = 0; i < n; i++)
        skp_put_u32(p + 4 * i, v[i]);
#endif
}

void skp_write_pose_bone(struct skp_writer *w, const struct skp_pose_bone *b)
{
    if (b->tex_len > SKP_MAX_NAME || b->vert_count > SKP_MAX_FRAME / 16) {
        w->err = w->err ? w->err : SKP_ETOOLONG;
        return;
    }
    uint8_t *p = room(w, 11 * 8 + 1 + 4 + 2 + b->tex_len + 4 * 8 + 4 + (size_t)b->vert_count * 16);
    if (!p)
        return;
    p = put_f64s(p, b->fields, 11);
    *p++ = b->hidden;
    skp_put_u32(p, (uint32_t)b->zindex);
    skp_put_u16(p + 4, (uint16_t)b->tex_len);
    p += 6;
    if (b->tex_len)
        memcpy(p, b->tex, b->tex_len);
    p = put_f64s(p + b->tex_len, b->tint, 4);
    skp_put_u32(p, b->vert_count);
    put_f64s(p + 4, b->verts, 2 * (size_t)b->vert_count);
}

void skp_write_raw(struct skp_writer *w, const void *src, size_t len)
{
    uint8_t *p = room(w, len);
    if (p && len)
        memcpy(p, src, len);
}

/* A length-prefixed field goes in whole or not at all. */
static bool fits(struct skp_writer *w, size_t n)
{
    if (!w->err && n > w->cap - w->len)
        w->err = SKP_ENOSPACE;
    return !w->err;
}

void skp_write_str(struct skp_writer *w, const char *s, size_t len)
{
    if (len > SKP_MAX_NAME) {
        w->err = w->err ? w->err : SKP_ETOOLONG;
        return;
    }
    if (!fits(w, 2 + len))
        return;
    skp_write_u16(w, (uint16_t)len);
    skp_write_raw(w, s, len);
}

void skp_write_bytes(struct skp_writer *w, const void *src, size_t len)
{
    if (len > SKP_MAX_FRAME) {
        w->err = w->err ? w->err : SKP_ETOOLONG;
        return;
    }
    if (!fits(w, 4 + len))
        return;
    skp_write_u32(w, (uint32_t)len);
    skp_write_raw(w, src, len);
}

/* ---- reader ----------------------------------------------------------------------------- */

void skp_reader_init(struct skp_reader *r, const uint8_t *buf, size_t len)
{
    *r = (struct skp_reader){buf, len, 0, SKP_EOK};
}

const void *skp_read_raw(struct skp_reader *r, size_t n)
{
    if (r->err || n > r->len - r->pos) {
        r->err = r->err ? r->err : SKP_ETRUNCATED;
        return NULL;
    }
    if (n == 0)
        return empty;
    const uint8_t *p = r->buf + r->pos;
    r->pos += n;
    return p;
}

uint8_t skp_read_u8(struct skp_reader *r)
{
    const uint8_t *p = skp_read_raw(r, 1);
    return p ? *p : 0;
}

uint16_t skp_read_u16(struct skp_reader *r)
{
    const uint8_t *p = skp_read_raw(r, 2);
    return p ? skp_get_u16(p) : 0;
}

uint32_t skp_read_u32(struct skp_reader *r)
{
    const uint8_t *p = skp_read_raw(r, 4);
    return p ? skp_get_u32(p) : 0;
}

int32_t skp_read_i32(struct skp_reader *r)
{
    return (int32_t)skp_read_u32(r);
}

double skp_read_f64(struct skp_reader *r)
{
    const uint8_t *p = skp_read_raw(r, 8);
    uint64_t bits = p ? skp_get_u64(p) : 0;
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

const char *skp_read_str(struct skp_reader *r, size_t *len)
{
    size_t n = skp_read_u16(r);
    if (n > SKP_MAX_NAME) {
        r->err = r->err ? r->err : SKP_ETOOLONG;
        *len = 0;
        return NULL;
    }
    const char *p = skp_read_raw(r, n);
    if (p && memchr(p, 0, n)) { /* would read as a shorter name than the one sent */
        r->err = r->err ? r->err : SKP_ENUL;
        p = NULL;
    }
    *len = p ? n : 0;
    return p;
}

const void *skp_read_bytes(struct skp_reader *r, size_t *len, size_t max)
{
    size_t n = skp_read_u32(r);
    if (n > max) {
        r->err = r->err ? r->err : SKP_ETOOLONG;
        *len = 0;
        return NULL;
    }
    const void *p = skp_read_raw(r, n);
    *len = p ? n : 0;
    return p;
}

int skp_reader_finish(const struct skp_reader *r)
{
    if (r->err)
        return r->err;
    return r->pos == r->len ? SKP_EOK : SKP_ETRAILING;
}
