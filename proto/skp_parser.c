#include "skp_parser.h"

static const uint8_t magic[4] = {0x53, 0x4B, 0x4C, 0x44};

int skp_parser_feed(const uint8_t *buf, size_t len, uint32_t max_body, struct skp_frame *frame,
                    size_t *consumed)
{
    *consumed = 0;
    for (size_t i = 0; i < len && i < 4; i++)
        if (buf[i] != magic[i])
            return SKP_EBADMAGIC;
    if (len > 4 && buf[4] != SKP_VERSION)
        return SKP_EBADVERSION;
    if (len >= 8 && (skp_get_u16(buf + 6) & ~SKP_F_REPLY))
        return SKP_ERESERVED;
    if (len >= 12 && skp_get_u16(buf + 10) != 0)
        return SKP_ERESERVED;
    if (len < SKP_HEADER_SIZE)
        return SKP_NEED_MORE;
    struct skp_header h = {
        .version = buf[4],
        .opcode = buf[5],
        .flags = skp_get_u16(buf + 6),
        .status = skp_get_u16(buf + 8),
        .id = skp_get_u32(buf + 12),
        .body_len = skp_get_u32(buf + 16),
    };
    if (skp_get_u16(buf + 10) != 0 || (h.flags & ~SKP_F_REPLY))
        return SKP_ERESERVED;
    if (max_body > SKP_MAX_FRAME)
        max_body = SKP_MAX_FRAME;
    if (h.body_len > max_body)
        return SKP_EOVERSIZE;
    if (len - SKP_HEADER_SIZE < h.body_len)
        return SKP_NEED_MORE;
    frame->h = h;
    frame->body = buf + SKP_HEADER_SIZE;
    *consumed = SKP_HEADER_SIZE + (size_t)h.body_len;
    return SKP_FRAME;
}

int skp_parse_status(int err)
{
    switch (err) {
    case SKP_EBADVERSION: return SKP_S_VERSION;
    case SKP_EOVERSIZE: return SKP_S_TOO_BIG;
    default: return SKP_S_FRAMING;
    }
}
