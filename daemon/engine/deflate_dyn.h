/* Internal to png.c: skeld's default zlib stream for rendered pictures. */
#ifndef SKELD_ENGINE_DEFLATE_DYN_H
#define SKELD_ENGINE_DEFLATE_DYN_H

#include <stddef.h>
#include <stdint.h>

/* Upper bound of the bytes deflate_dyn() writes for n input bytes. */
size_t deflate_dyn_bound(size_t n);

/* The bytes of scratch deflate_dyn() needs for n input bytes (about 3n); 0 if that
 * overflows. */
size_t deflate_dyn_scratch_size(size_t n);

/* Compresses in[0..n) into out (deflate_dyn_bound(n) bytes) as one zlib stream. The only
 * matches are repeats of the previous pixel (distance 4) and of the row above (distance
 * stride, the scanline length with its filter byte; 0 or over 32768: not used), which is
 * what flat colour, empty space and vertical edges are; the block's Huffman codes are built
 * for this picture's symbols. live (may be NULL) says, for each scanline y (a filter byte,
 * then 4-byte pixels), that only pixels [live[2y], live[2y+1]) may hold other bytes than 0:
 * the empty space is then passed over without being read, and the stream is the same.
 * adler is in's Adler-32 (RFC 1950), which the caller computes while the bytes are still in
 * cache from writing them. scratch holds deflate_dyn_scratch_size(n) bytes, aligned as
 * malloc aligns. Returns the bytes written. Pure: any thread. */
size_t deflate_dyn(const uint8_t *in, size_t n, size_t stride, const int32_t *live, uint32_t adler,
                   void *scratch, uint8_t *out);

#endif
