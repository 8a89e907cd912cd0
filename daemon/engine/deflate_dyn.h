/* Internal to png.c: skeld's default zlib stream for rendered pictures. */
#ifndef SKELD_ENGINE_DEFLATE_DYN_H
#define SKELD_ENGINE_DEFLATE_DYN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "deflate_bits.h"

/* Upper bound of the bytes a stream writes for n input bytes in all, in blocks of 64 KiB or
 * more (the last may be smaller). */
size_t deflate_dyn_bound(size_t n);

/* The bytes of scratch a block of n input bytes needs (about 2n); 0 if that overflows. */
size_t deflate_dyn_scratch_size(size_t n);

/* A zlib stream written a block at a time (begin, the blocks in order, end), so that a large
 * picture needs the scratch of one block rather than of the whole. */
struct deflate_dyn_stream {
    struct bits bits;
    uint8_t *start;
};

/* Starts the stream at out, which has room for deflate_dyn_bound() of all its input. */
void deflate_dyn_begin(struct deflate_dyn_stream *z, uint8_t *out);

/* Compresses in[from..to) as one block (last: the final one); in[0..from) holds the bytes
 * before it in the stream, at least stride of them (and 4) unless from is 0, and from starts
 * a scanline when live is given. The only matches are repeats of the previous pixel
 * (distance 4), of the row above (distance stride, the scanline length with its filter byte;
 * 0 or over 32768: not used), which is what flat colour, empty space and vertical edges are,
 * and in a sheet of frames of the pixel one cell to the left (distance cell, a cell's width
 * in bytes, where the frame before drew the same; 0, or not between 4 and stride: not used);
 * the block's Huffman codes are built for its own symbols, and a block that would not pay
 * goes out stored. live (may be NULL) says, for
 * each scanline y of in (a filter byte, then 4-byte pixels), that only pixels
 * [live[2y], live[2y+1]) may hold other bytes than 0: the empty space is then passed over
 * without being read, and the stream is the same. scratch holds
 * deflate_dyn_scratch_size(to - from) bytes, aligned as malloc aligns. Pure: any thread. */
void deflate_dyn_block(struct deflate_dyn_stream *z, const uint8_t *in, size_t from, size_t to,
                       size_t stride, size_t cell, const int32_t *live, bool last, void *scratch);

/* Ends the stream with adler, the Adler-32 (RFC 1950) of all its input, which the caller
 * computes while the bytes are still in cache from writing them. Returns the bytes written
 * since begin. */
size_t deflate_dyn_end(struct deflate_dyn_stream *z, uint32_t adler);

#endif
