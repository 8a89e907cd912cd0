/* Spritesheets: a frame range packed into one picture, row-major, plus a JSON description
 * (each frame's rectangle, the pivot, the animation bounds). Shared by `skeld render --sheet`
 * and the daemon's RENDER so that both write the same bytes. */
#ifndef SKELD_ENGINE_SHEET_H
#define SKELD_ENGINE_SHEET_H

#include <stddef.h>

#include "errors.h"
#include "render.h"

struct sheet {
    uint32_t cols, rows;     /* cells, row-major from the top left */
    uint32_t cell_w, cell_h; /* each cell is one render at the request's size */
    uint32_t first, count;   /* frames first .. first + count - 1, in cell order */
    uint32_t width, height;  /* cols * cell_w x rows * cell_h */
    /* The picture as PNG scanlines, zeroed (transparent) by sheet_init: row y at rgba + y *
     * pitch, after its filter byte (0), so that the encoder deflates it where it is rather
     * than copying it (png_opts.scanlines): a 4096x4096 sheet is 64 MiB. */
    uint8_t *rgba;
    size_t pitch; /* width * 4 + 1 */
};

/* 0 if a cols x rows sheet of cell_w x cell_h cells holds count frames and stays within
 * RENDER_MAX_SIDE a side; else ENG_EINVAL, with err saying why. */
int sheet_check(uint32_t cols, uint32_t rows, uint32_t cell_w, uint32_t cell_h, uint64_t count,
                struct eng_error *err);

/* sheet_check, then the sheet's geometry without its picture (rgba NULL): what sheet_json
 * needs to describe it. 0 or ENG_EINVAL. */
int sheet_plan(struct sheet *s, uint32_t cols, uint32_t rows, uint32_t cell_w, uint32_t cell_h,
               uint32_t first, uint32_t count, struct eng_error *err);

/* sheet_plan, then allocates the picture. 0, ENG_EINVAL or ENG_ENOMEM. */
int sheet_init(struct sheet *s, uint32_t cols, uint32_t rows, uint32_t cell_w, uint32_t cell_h,
               uint32_t first, uint32_t count, struct eng_error *err);
void sheet_close(struct sheet *s);

/* The whole sheet as a picture (scanlines, no spans), to encode; it owns nothing. */
struct image sheet_image(const struct sheet *s);

/* Copies a cell-sized picture into cell index (0 .. count-1). */
void sheet_put(struct sheet *s, const struct image *cell, uint32_t index);

/* Frame number frame plays in cell index: the first cell's names the sheet's first frame (a
 * range's first, or the one frame a sheet of one holds, as its picture was played), so that
 * every front describes a sheet alike. */
void sheet_frame_played(struct sheet *s, uint32_t frame, uint32_t index);

/* The sheet's JSON without the "image" key (the caller knows the file name, the engine does
 * not): {"cell":..,"cols":..,"rows":..,"scale":..,"pivot":..,"bounds":..,"frames":[..]},
 * no trailing newline. opts is the camera used for every cell; b the animation's bounds in
 * armature space. Writes at most cap bytes including the NUL and returns the full length,
 * like snprintf (call with cap 0 to size the buffer). */
size_t sheet_json(char *buf, size_t cap, const struct sheet *s, const struct render_opts *opts,
                  const struct bounds *b);

#endif
