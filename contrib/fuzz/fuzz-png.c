/* libFuzzer target: the atlas reader (daemon/engine/png_read.c) on arbitrary bytes. Random
 * mutations would almost always break a chunk's CRC and stop at the first check, so the
 * harness mends the CRCs of a copy first and the mutations reach the inflate and the row
 * filters. Whatever png_read_probe takes is decoded; nothing may crash, leak or trip a
 * sanitizer. Build and run: contrib/fuzz/run.sh png */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>

#include "engine/png_read.h"

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Rewrites every whole chunk's CRC after the 8-byte signature. */
static void mend_crcs(uint8_t *p, size_t len)
{
    for (size_t at = 8; len >= at + 12;) {
        uint32_t n = be32(p + at);
        if (n > len - at - 12)
            return;
        uint32_t crc = libdeflate_crc32(0, p + at + 4, (size_t)n + 4);
        for (int k = 0; k < 4; k++)
            p[at + 8 + n + k] = (uint8_t)(crc >> (24 - 8 * k));
        at += 12 + (size_t)n;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    uint8_t *png = malloc(len ? len : 1);
    if (!png)
        return 0;
    memcpy(png, data, len);
    mend_crcs(png, len);
    uint32_t w, h;
    if (png_read_probe(png, len, &w, &h) && (uint64_t)w * h <= 1u << 20) {
        uint8_t *out = malloc((size_t)w * h * 4 + h);
        if (out)
            png_read_rgba8(png, len, w, h, out);
        free(out);
    }
    free(png);
    return 0;
}
