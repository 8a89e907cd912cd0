/* SHA-256 (FIPS 180-4), for content-derived armature ids and result-cache keys. Any thread:
 * no globals, all state in the caller's struct sha256_ctx. */
#ifndef SKELD_SHA256_H
#define SKELD_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256_ctx {
    uint32_t h[8];
    uint64_t len; /* bytes fed so far */
    uint8_t buf[64];
    size_t fill; /* bytes waiting in buf, always < 64 */
};

/* One-shot digest of len bytes at data (data may be NULL when len is 0). */
void sha256(const void *data, size_t len, uint8_t out[32]);

/* Incremental form: init, any number of updates (data may be NULL when len is 0), final.
 * The digest equals sha256() over the concatenated updates; after final the context must be
 * initialised again before reuse. */
void sha256_init(struct sha256_ctx *ctx);
void sha256_update(struct sha256_ctx *ctx, const void *data, size_t len);
void sha256_final(struct sha256_ctx *ctx, uint8_t out[32]);

#endif
