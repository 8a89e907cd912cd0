#include "sheet.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sheet_check(uint32_t cols, uint32_t rows, uint32_t cell_w, uint32_t cell_h, uint64_t count,
                struct eng_error *err)
{
    if (!cols || !rows)
        return eng_seterr(err, ENG_EINVAL, "sheet %ux%u: columns and rows are 1 or more", cols,
                          rows);
    if ((uint64_t)cols * rows < count)
        return eng_seterr(err, ENG_EINVAL, "sheet %ux%u has no room for %llu frames", cols, rows,
                          (unsigned long long)count);
    uint64_t w = (uint64_t)cols * cell_w, h = (uint64_t)rows * cell_h;
    if (!w || !h || w > RENDER_MAX_SIDE || h > RENDER_MAX_SIDE)
        return eng_seterr(err, ENG_EINVAL, "sheet of %llux%llu pixels: at most %d a side",
                          (unsigned long long)w, (unsigned long long)h, RENDER_MAX_SIDE);
    return 0;
}

int sheet_plan(struct sheet *s, uint32_t cols, uint32_t rows, uint32_t cell_w, uint32_t cell_h,
               uint32_t first, uint32_t count, struct eng_error *err)
{
    memset(s, 0, sizeof *s);
    int rc = sheet_check(cols, rows, cell_w, cell_h, count, err);
    if (rc)
        return rc;
    uint32_t w = cols * cell_w, h = rows * cell_h; /* within RENDER_MAX_SIDE: sheet_check */
    *s = (struct sheet){cols, rows, cell_w, cell_h, first, count, w, h, NULL, (size_t)w * 4 + 1};
    return 0;
}

int sheet_init(struct sheet *s, uint32_t cols, uint32_t rows, uint32_t cell_w, uint32_t cell_h,
               uint32_t first, uint32_t count, struct eng_error *err)
{
    int rc = sheet_plan(s, cols, rows, cell_w, cell_h, first, count, err);
    if (rc)
        return rc;
    uint8_t *mem = calloc(s->height, s->pitch); /* the filter bytes are 0: none */
    if (!mem)
        return eng_seterr(err, ENG_ENOMEM, "out of memory for a %ux%u sheet", s->width, s->height);
    s->rgba = mem + 1;
    return 0;
}

void sheet_close(struct sheet *s)
{
    if (s->rgba)
        free(s->rgba - 1);
    s->rgba = NULL;
}

struct image sheet_image(const struct sheet *s)
{
    return (struct image){.width = s->width,
                          .height = s->height,
                          .rgba = s->rgba,
                          .pitch = s->pitch,
                          .cell_width = s->cols > 1 ? s->cell_w : 0};
}

void sheet_put(struct sheet *s, const struct image *cell, uint32_t index)
{
    size_t x0 = (size_t)(index % s->cols) * s->cell_w, y0 = (size_t)(index / s->cols) * s->cell_h;
    size_t row = (size_t)s->cell_w * 4;
    for (uint32_t y = 0; y < s->cell_h; y++)
        memcpy(s->rgba + (y0 + y) * s->pitch + x0 * 4, cell->rgba + y * cell->pitch, row);
}

void sheet_frame_played(struct sheet *s, uint32_t frame, uint32_t index)
{
    if (index == 0)
        s->first = frame;
}

/* snprintf into what is left of buf; counts the full length either way. */
#define APPEND(...)                                                                                \
    do {                                                                                           \
        size_t room_ = len < cap ? cap - len : 0;                                                  \
        int n_ = snprintf(room_ ? buf + len : NULL, room_, __VA_ARGS__);                           \
        len += n_ > 0 ? (size_t)n_ : 0;                                                            \
    } while (0)

/* v as JSON can say it: never "-0", and for a pose so extreme that the camera's arithmetic
 * overflows, the largest double rather than "inf" or "nan", which JSON has no words for. */
static double nz(double v)
{
    if (isnan(v))
        return 0.0;
    if (isinf(v))
        return copysign(DBL_MAX, v);
    return v == 0.0 ? 0.0 : v;
}

size_t sheet_json(char *buf, size_t cap, const struct sheet *s, const struct render_opts *o,
                  const struct bounds *b)
{
    size_t len = 0;
    /* The bounds in cell pixels (y down), where the camera puts them. */
    double x0 = b->min_x * o->scale.x + o->position.x, x1 = b->max_x * o->scale.x + o->position.x;
    double y0 = -(b->max_y * o->scale.y + o->position.y);
    double y1 = -(b->min_y * o->scale.y + o->position.y);
    double bx = b->empty ? 0 : fmin(x0, x1), by = b->empty ? 0 : fmin(y0, y1);
    double bw = b->empty ? 0 : fabs(x1 - x0), bh = b->empty ? 0 : fabs(y1 - y0);
    APPEND("{\"cell\":{\"w\":%u,\"h\":%u},\"cols\":%u,\"rows\":%u,", s->cell_w, s->cell_h, s->cols,
           s->rows);
    APPEND("\"scale\":[%.9g,%.9g],\"pivot\":{\"x\":%.9g,\"y\":%.9g},", nz(o->scale.x),
           nz(o->scale.y), nz(o->position.x), nz(-o->position.y));
    APPEND("\"bounds\":{\"x\":%.9g,\"y\":%.9g,\"w\":%.9g,\"h\":%.9g},\"frames\":[", nz(bx), nz(by),
           nz(bw), nz(bh));
    for (uint32_t i = 0; i < s->count; i++)
        APPEND("%s{\"frame\":%u,\"x\":%u,\"y\":%u,\"w\":%u,\"h\":%u}", i ? "," : "", s->first + i,
               (i % s->cols) * s->cell_w, (i / s->cols) * s->cell_h, s->cell_w, s->cell_h);
    APPEND("]}");
    if (cap)
        buf[len < cap ? len : cap - 1] = 0;
    return len;
}
