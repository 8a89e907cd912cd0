/* In-process A/B of two builds of the default deflate (daemon/engine/deflate_dyn.c): A from a
 * git revision, B from the tree, linked into this program under the names A_* and B_* by
 * bench-deflate.sh, which builds and runs it (it is not built by make).
 *
 *   bench-deflate [--pairs N] FILE.skf...
 *
 * Each file's frame is drawn as bench-render draws it (512x512 scanlines, with the renderer's
 * spans of what it drew) and deflated as one block by A and by B in alternation, N times
 * (default 300): the median microseconds of each, the median of the pairs' B/A ratios with
 * its quartiles, and whether the two streams are the same bytes. In one process the pairs see
 * the same spells of a shared machine, so the ratio is steadier than between processes
 * (bench-rev.sh), and B runs second in every pair: an A/A run shows what that is worth. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_pose.h"
#include "engine/deflate_dyn.h"
#include "engine/load.h"

/* The two builds. Both keep struct deflate_dyn_stream as the tree's header has it; A's block
 * takes a sheet's cell distance from the revision that added it on (A_HAS_CELL). */
size_t A_bound(size_t n);
size_t A_scratch(size_t n);
void A_begin(struct deflate_dyn_stream *z, uint8_t *out);
#ifdef A_HAS_CELL
void A_block(struct deflate_dyn_stream *z, const uint8_t *in, size_t from, size_t to, size_t stride,
             size_t cell, const int32_t *live, bool last, void *scratch);
#define A_BLOCK(z, in, n, stride, live, s) A_block(z, in, 0, n, stride, 0, live, true, s)
#else
void A_block(struct deflate_dyn_stream *z, const uint8_t *in, size_t from, size_t to, size_t stride,
             const int32_t *live, bool last, void *scratch);
#define A_BLOCK(z, in, n, stride, live, s) A_block(z, in, 0, n, stride, live, true, s)
#endif
size_t A_end(struct deflate_dyn_stream *z, uint32_t adler);
size_t B_bound(size_t n);
size_t B_scratch(size_t n);
void B_begin(struct deflate_dyn_stream *z, uint8_t *out);
void B_block(struct deflate_dyn_stream *z, const uint8_t *in, size_t from, size_t to, size_t stride,
             size_t cell, const int32_t *live, bool last, void *scratch);
size_t B_end(struct deflate_dyn_stream *z, uint32_t adler);

/* The frame's scanlines (a filter byte before each row, as png_rows draws them) and spans. */
struct frame {
    struct image img;
    const uint8_t *lines;
    size_t n, stride;
};

static int draw(const char *path, struct frame *f)
{
    struct armature *arm;
    struct pose *p;
    struct render_opts opts;
    if (bench_load_posed("bench-deflate", path, 0, 0, &arm, &p, &opts))
        return 1;
    image_init(&f->img);
    int rc = render(arm, p, &opts, &f->img);
    pose_free(p);
    armature_free(arm);
    if (rc) {
        fprintf(stderr, "bench-deflate: %s: render failed\n", path);
        return 1;
    }
    f->stride = (size_t)f->img.width * 4 + 1;
    f->n = f->stride * f->img.height;
    f->lines = f->img.rgba - 1; /* the filter byte of row 0 */
    return 0;
}

static int bench_file(const char *path, int pairs)
{
    struct frame f;
    if (draw(path, &f))
        return 1;
    uint8_t *oa = malloc(A_bound(f.n) + 64), *ob = malloc(B_bound(f.n) + 64);
    void *sa = malloc(A_scratch(f.n)), *sb = malloc(B_scratch(f.n));
    double *ta = calloc((size_t)pairs, sizeof *ta), *tb = calloc((size_t)pairs, sizeof *tb),
           *r = calloc((size_t)pairs, sizeof *r);
    if (!oa || !ob || !sa || !sb || !ta || !tb || !r) {
        fprintf(stderr, "bench-deflate: out of memory\n");
        exit(1);
    }
    size_t la = 0, lb = 0;
    for (int k = 0; k < pairs; k++) {
        struct deflate_dyn_stream z;
        double t0 = bench_now_us();
        A_begin(&z, oa);
        A_BLOCK(&z, f.lines, f.n, f.stride, f.img.live, sa);
        la = A_end(&z, 1);
        double t1 = bench_now_us();
        B_begin(&z, ob);
        B_block(&z, f.lines, 0, f.n, f.stride, 0, f.img.live, true, sb);
        lb = B_end(&z, 1);
        ta[k] = t1 - t0;
        tb[k] = bench_now_us() - t1;
        r[k] = tb[k] / ta[k];
    }
    bool same = la == lb && !memcmp(oa, ob, la);
    printf("%s\n  A %.1f us, %zu bytes; B %.1f us, %zu bytes (%s); B/A %.3f (quartiles "
           "%.3f-%.3f, %d pairs)\n",
           path, bench_quantile(ta, (size_t)pairs, 0.5), la, bench_quantile(tb, (size_t)pairs, 0.5),
           lb, same ? "the same bytes" : "other bytes", bench_quantile(r, (size_t)pairs, 0.5),
           bench_quantile(r, (size_t)pairs, 0.25), bench_quantile(r, (size_t)pairs, 0.75), pairs);
    free(oa);
    free(ob);
    free(sa);
    free(sb);
    free(ta);
    free(tb);
    free(r);
    image_close(&f.img);
    return 0;
}

int main(int argc, char **argv)
{
    int pairs = 300, rc = 0, files = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--pairs") && i + 1 < argc) {
            pairs = atoi(argv[++i]);
            if (pairs < 1 || pairs > 100000) {
                fprintf(stderr, "bench-deflate: --pairs: 1 to 100000\n");
                return 2;
            }
        } else {
            rc |= bench_file(argv[i], pairs);
            files++;
        }
    }
    if (!files) {
        fprintf(stderr, "usage: bench-deflate [--pairs N] FILE.skf...\n");
        return 2;
    }
    return rc;
}
