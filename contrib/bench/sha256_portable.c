/* The portable C SHA-256 (FIPS 180-4: 64 rounds over 512-bit blocks) skeld used before it
 * moved to libcrypto: kept as bench-hash's baseline, so the choice can be measured again. */
#include <stddef.h>
#include <stdint.h>

struct portable_ctx {
    uint32_t h[8];
    uint64_t len; /* bytes fed so far */
    uint8_t buf[64];
    size_t fill; /* bytes waiting in buf, always < 64 */
};

void portable_sha256(const void *data, size_t len, uint8_t out[32]);

#include <string.h>

static const uint32_t k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t rotr(uint32_t x, int n)
{
    return x >> n | x << (32 - n);
}

static void block(uint32_t h[8], const uint8_t *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 =
            hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        hh = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

static void portable_init(struct portable_ctx *ctx)
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(ctx->h, iv, sizeof iv);
    ctx->len = 0;
    ctx->fill = 0;
}

static void portable_update(struct portable_ctx *ctx, const void *data, size_t len)
{
    const uint8_t *p = data;
    if (len == 0)
        return; /* data may be NULL: no memcpy from it, even of zero bytes */
    ctx->len += len;
    if (ctx->fill) {
        size_t take = 64 - ctx->fill < len ? 64 - ctx->fill : len;
        memcpy(ctx->buf + ctx->fill, p, take);
        ctx->fill += take;
        p += take;
        len -= take;
        if (ctx->fill < 64)
            return;
        block(ctx->h, ctx->buf);
        ctx->fill = 0;
    }
    /* Whole blocks straight from the input: a large file is hashed without copying. */
    for (; len >= 64; p += 64, len -= 64)
        block(ctx->h, p);
    if (len)
        memcpy(ctx->buf, p, len);
    ctx->fill = len;
}

static void portable_final(struct portable_ctx *ctx, uint8_t out[32])
{
    uint8_t tail[128] = {0};
    size_t n = ctx->fill;
    memcpy(tail, ctx->buf, n);
    tail[n] = 0x80;
    size_t total = n < 56 ? 64 : 128;
    uint64_t bits = ctx->len * 8;
    for (int i = 0; i < 8; i++)
        tail[total - 1 - i] = (uint8_t)(bits >> (8 * i));
    block(ctx->h, tail);
    if (total == 128)
        block(ctx->h, tail + 64);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++)
            out[4 * i + j] = (uint8_t)(ctx->h[i] >> (24 - 8 * j));
}

void portable_sha256(const void *data, size_t len, uint8_t out[32])
{
    struct portable_ctx ctx;
    portable_init(&ctx);
    portable_update(&ctx, data, len);
    portable_final(&ctx, out);
}
