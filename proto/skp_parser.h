/* Incremental frame parser: feed it what has arrived, get back "need more", one whole frame
 * (a view into the caller's buffer) or a framing error. No I/O, no allocation, no hidden
 * state: the caller keeps unconsumed bytes and feeds them again with what follows. */
#ifndef SKP_PARSER_H
#define SKP_PARSER_H

#include "skp.h"

enum skp_parse {
    SKP_NEED_MORE = 1,
    SKP_FRAME = 2,
    SKP_EBADMAGIC = -10,   /* not a skeld frame: close after replying FRAMING */
    SKP_EBADVERSION = -11, /* reply VERSION and close */
    SKP_EOVERSIZE = -12,   /* body longer than the limit: reply TOO_BIG and close */
    SKP_ERESERVED = -13,   /* reserved bits set: reply FRAMING and close */
};

struct skp_frame {
    struct skp_header h;
    const uint8_t *body; /* h.body_len bytes inside the fed buffer */
};

/* Parses the first frame in buf[0..len). max_body caps body_len (at most SKP_MAX_FRAME).
 * Returns SKP_FRAME (with *frame and *consumed set), SKP_NEED_MORE, or a negative error as
 * soon as the bytes seen prove the stream bad (a wrong magic is caught in its first byte). */
int skp_parser_feed(const uint8_t *buf, size_t len, uint32_t max_body, struct skp_frame *frame,
                    size_t *consumed);

/* The wire status to answer a parse error with. */
int skp_parse_status(int err);

#endif
