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

/* Appends the len (<= 56) low bits of code. Without a branch: all eight bytes of acc are
 * stored each time and out advances by the whole bytes, so fewer than 8 bits wait in acc and
 * the output needs 8 bytes of room past the last one written. */
static inline void bits_put(struct bits *b, uint64_t code, unsigned len)
{
    b->acc |= code << b->n;
    b->n += len;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(b->out, &b->acc, 8); /* one store */
#else
    for (int k = 0; k < 8; k++)
        b->out[k] = (uint8_t)(b->acc >> (8 * k));
#endif
    unsigned whole = b->n >> 3; /* at most 7: n < 8 + 56 */
    b->out += whole;
    b->acc >>= 8 * whole;
    b->n &= 7;
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

/* Huffman codes go out most significant bit first: reversed for the LSB-first writer. The
 * code's len (1 to 16) bits reversed as 16 bits are, by swapping halves of ever smaller
 * size, then shifted down: a bit at a time took half of a block's plan. */
static inline uint32_t bits_reverse(uint32_t code, unsigned len)
{
    uint32_t r = code;
    r = (r & 0x5555u) << 1 | (r >> 1 & 0x5555u);
    r = (r & 0x3333u) << 2 | (r >> 2 & 0x3333u);
    r = (r & 0x0f0fu) << 4 | (r >> 4 & 0x0f0fu);
    r = (r & 0x00ffu) << 8 | (r >> 8 & 0x00ffu);
    return r >> (16 - len);
}

#endif
