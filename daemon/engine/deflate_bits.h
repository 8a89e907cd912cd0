/* Internal to the deflate encoders: an LSB-first bit writer (RFC 1951 3.1.1). */
#ifndef SKELD_ENGINE_DEFLATE_BITS_H
#define SKELD_ENGINE_DEFLATE_BITS_H

#include <stdint.h>
#include <string.h>

struct bits {
    uint8_t *out;
    uint64_t acc;
    unsigned n;
};

/* Appends the len (<= 32) low bits of code; whole 32-bit words go out at once (fewer than
 * 32 bits wait in acc). */
static inline void bits_put(struct bits *b, uint32_t code, unsigned len)
{
    b->acc |= (uint64_t)code << b->n;
    b->n += len;
    if (b->n >= 32) {
        const uint8_t w[4] = {(uint8_t)b->acc, (uint8_t)(b->acc >> 8), (uint8_t)(b->acc >> 16),
                              (uint8_t)(b->acc >> 24)};
        memcpy(b->out, w, 4); /* one store: the compiler merges the bytes */
        b->out += 4;
        b->acc >>= 32;
        b->n -= 32;
    }
}

/* Writes the bits still waiting, the last byte padded; returns the end of the output. */
static inline uint8_t *bits_end(struct bits *b)
{
    for (; b->n > 0; b->n = b->n > 8 ? b->n - 8 : 0) {
        *b->out++ = (uint8_t)b->acc;
        b->acc >>= 8;
    }
    b->acc = 0;
    return b->out;
}

/* Huffman codes go out most significant bit first: reversed for the LSB-first writer. */
static inline uint32_t bits_reverse(uint32_t code, unsigned len)
{
    uint32_t r = 0;
    for (unsigned i = 0; i < len; i++)
        r |= ((code >> i) & 1u) << (len - 1 - i);
    return r;
}

#endif
