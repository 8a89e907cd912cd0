/* SHA-256 benchmark: the digest skeld uses (daemon/sha256.c, libcrypto) against the portable
 * C implementation it replaced (sha256_portable.c), on the two sizes skeld hashes: a request
 * (200 bytes: ETags and result-cache keys, on the loop thread) and a file (1 MiB: armature
 * ids). Medians of 15 batches; both digests are checked equal first.
 *
 *   bench-hash */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "sha256.h"
#include "bench.h"

#define BATCHES 15

void portable_sha256(const void *data, size_t len, uint8_t out[32]);

/* Median microseconds per digest of len bytes, over BATCHES batches of n. */
static double time_it(bool portable, const uint8_t *data, size_t len, int n)
{
    double t[BATCHES];
    uint8_t out[32];
    for (int b = 0; b < BATCHES; b++) {
        double t0 = bench_now_us();
        for (int i = 0; i < n; i++) {
            if (portable)
                portable_sha256(data, len, out);
            else
                sha256(data, len, out);
        }
        t[b] = (bench_now_us() - t0) / n;
    }
    return bench_quantile(t, BATCHES, 0.5);
}

int main(void)
{
    static uint8_t data[1 << 20];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 131 + 7);
    static const struct {
        const char *what;
        size_t len;
        int n;
    } sizes[] = {{"request, 200 B", 200, 20000}, {"file, 1 MiB", sizeof data, 10}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        uint8_t a[32], b[32];
        if (sha256(data, sizes[s].len, a)) {
            fprintf(stderr, "bench-hash: libcrypto failed\n");
            return 1;
        }
        portable_sha256(data, sizes[s].len, b);
        if (memcmp(a, b, 32)) {
            fprintf(stderr, "bench-hash: the two digests differ\n");
            return 1;
        }
        double lib = time_it(false, data, sizes[s].len, sizes[s].n);
        double own = time_it(true, data, sizes[s].len, sizes[s].n);
        printf("%-15s libcrypto %9.3f us  portable C %9.3f us  ratio %.2fx\n", sizes[s].what, lib,
               own, own / lib);
    }
    return 0;
}
