/* SHA-256, for content-derived armature ids, result-cache keys and ETags: OpenSSL's libcrypto
 * (its SHA extensions / AVX2 code is 4-6x the portable C this replaced, as
 * contrib/bench/bench-hash measures). Any thread; each thread keeps one digest context for
 * reuse, so a digest on a hot path allocates nothing once warm. */
#ifndef SKELD_SHA256_H
#define SKELD_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256_ctx {
    void *evp; /* an EVP_MD_CTX */
};

/* One-shot digest of len bytes at data (data may be NULL when len is 0). 0, or -1 if
 * libcrypto failed (out of memory): out is then zeroed. */
int sha256(const void *data, size_t len, uint8_t out[32]);

/* Incremental form: init, any number of updates (data may be NULL when len is 0), final.
 * The digest equals sha256() over the concatenated updates. init and final each return 0 or
 * -1; after a failed init, update does nothing and final returns -1 with out zeroed. final
 * always ends the context (call it even after a failure). */
int sha256_init(struct sha256_ctx *ctx);
void sha256_update(struct sha256_ctx *ctx, const void *data, size_t len);
int sha256_final(struct sha256_ctx *ctx, uint8_t out[32]);

#endif
