/* Internal to png.c: a fast zlib stream for flat-coloured pictures. */
#ifndef SKELD_ENGINE_DEFLATE_FAST_H
#define SKELD_ENGINE_DEFLATE_FAST_H

#include <stddef.h>
#include <stdint.h>

/* Upper bound of the bytes deflate_fast() writes for n input bytes. */
size_t deflate_fast_bound(size_t n);

/* Compresses in[0..n) into out (deflate_fast_bound(n) bytes) as one zlib stream: a single
 * fixed-Huffman block whose only matches repeat the previous pixel (distance 4), which is
 * what flat colour and empty space are. Returns the bytes written. Pure. */
size_t deflate_fast(const uint8_t *in, size_t n, uint8_t *out);

#endif
