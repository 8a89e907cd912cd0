/* SHA-256 through libcrypto's EVP interface (sha256.h). The digest method is fetched once;
 * each thread keeps one spare EVP_MD_CTX (a thread-specific value, freed when the thread
 * ends), taken by init and given back by final, so steady use allocates nothing and nested
 * digests still work (the second one allocates its own). */
#include "sha256.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t spare_key;
static bool have_key;
static EVP_MD *fetched;
static const EVP_MD *md;

static void free_spare(void *p)
{
    EVP_MD_CTX_free(p);
}

static void setup(void)
{
    fetched = EVP_MD_fetch(NULL, "SHA256", NULL); /* no per-digest lookup in the provider */
    md = fetched ? fetched : EVP_sha256();
    have_key = pthread_key_create(&spare_key, free_spare) == 0;
}

static EVP_MD_CTX *take_ctx(void)
{
    pthread_once(&once, setup);
    EVP_MD_CTX *c = have_key ? pthread_getspecific(spare_key) : NULL;
    if (c)
        pthread_setspecific(spare_key, NULL);
    else
        c = EVP_MD_CTX_new();
    return c;
}

static void give_back(EVP_MD_CTX *c)
{
    if (have_key && !pthread_getspecific(spare_key) && pthread_setspecific(spare_key, c) == 0)
        return;
    EVP_MD_CTX_free(c);
}

int sha256_init(struct sha256_ctx *ctx)
{
    EVP_MD_CTX *c = take_ctx();
    if (c && EVP_DigestInit_ex2(c, md, NULL) != 1) {
        give_back(c);
        c = NULL;
    }
    ctx->evp = c;
    return c ? 0 : -1;
}

void sha256_update(struct sha256_ctx *ctx, const void *data, size_t len)
{
    if (!ctx->evp || !len)
        return;
    if (EVP_DigestUpdate(ctx->evp, data, len) != 1) {
        give_back(ctx->evp);
        ctx->evp = NULL; /* final reports it */
    }
}

int sha256_final(struct sha256_ctx *ctx, uint8_t out[32])
{
    EVP_MD_CTX *c = ctx->evp;
    unsigned n = 0;
    int ok = c && EVP_DigestFinal_ex(c, out, &n) == 1 && n == 32;
    if (c)
        give_back(c);
    ctx->evp = NULL;
    if (!ok)
        memset(out, 0, 32);
    return ok ? 0 : -1;
}

int sha256(const void *data, size_t len, uint8_t out[32])
{
    struct sha256_ctx ctx;
    if (sha256_init(&ctx)) {
        memset(out, 0, 32);
        return -1;
    }
    sha256_update(&ctx, data, len);
    return sha256_final(&ctx, out);
}
