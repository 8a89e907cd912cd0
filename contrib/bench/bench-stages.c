/* Where the default PNG encoder's time goes, stage by stage, next to the raster time of the
 * same frame in the same run:
 *
 *   bench-stages [--runs N] FILE.skf...
 *
 * Each file's frame is drawn as bench-render draws it (512x512 scanlines with the renderer's
 * spans of what it drew). Then, N times (default 300), in one loop so that every figure sees
 * the same spells of a shared machine, the program times:
 * - the raster (render());
 * - the whole encode as the daemon runs it (png_encode), right after the raster;
 * - after the picture is drawn again, each stage of deflate_dyn_block on its own: the
 *   tokenizer (items), the counting of the symbols, the codes (plan), and the Huffman
 *   writing (header and items).
 * The encode less those stages is the rest: Adler-32, CRC-32, the size check and the chunks. The
 * program prints medians, the encode without counting and writing (a floor for any Huffman coder
 * that follows this tokenizer, however fast) and the encode without tokenizing (a floor for any
 * search for repeats that feeds this coder).
 *
 * The stages are deflate_dyn.c's own static functions: this file includes that source, with
 * its public names renamed so that they do not clash with the engine's copy. */
#define deflate_dyn_bound stages_dyn_bound
#define deflate_dyn_scratch_size stages_dyn_scratch_size
#define deflate_dyn_begin stages_dyn_begin
#define deflate_dyn_block stages_dyn_block
#define deflate_dyn_end stages_dyn_end
#include "engine/deflate_dyn.c"

#include <stdio.h>

#include "bench.h"
#include "bench_pose.h"
#include "engine/load.h"
#include "engine/png.h"

enum { T_RASTER, T_ENCODE, T_TOKENIZE, T_COUNT, T_PLAN, T_WRITE, T_KINDS };

struct stage_run {
    struct image img;
    uint8_t *out;
    uint16_t *items; /* in scratch, where png_encode's deflate puts them */
    struct byte_buf png, scratch;
    size_t count;
};

/* One run: each figure's microseconds into t[kind]. */
static void run_once(const struct armature *arm, struct pose *p, const struct render_opts *opts,
                     struct stage_run *s, double *t)
{
    double t0 = bench_now_us();
    render(arm, p, opts, &s->img);
    double t1 = bench_now_us();
    struct png_opts po = {.level = PNG_LEVEL_DEFAULT, .live = s->img.live, .scanlines = true};
    s->png.len = 0;
    png_encode(s->img.rgba, s->img.width, s->img.height, &po, &s->png, &s->scratch);
    t[T_ENCODE] = bench_now_us() - t1;
    /* The stages after a raster too, as the encode is: run straight after the encode, on the
     * same bytes, they would find caches and branch history ready and look cheaper. */
    render(arm, p, opts, &s->img);
    double t2 = bench_now_us();
    size_t stride = (size_t)s->img.width * 4 + 1, n = stride * s->img.height;
    const uint8_t *lines = s->img.rgba - 1; /* the filter byte of row 0 */
    s->items = (uint16_t *)(void *)s->scratch.data;
    struct dists ds = dists_of(stride, 0);
    s->count = tokenize(lines, 0, n, &ds, s->img.live, s->items);
    double t3 = bench_now_us();
    struct freqs f;
    memset(&f, 0, sizeof f);
    count_items(s->items, s->count, &f, &ds, true);
    double t4 = bench_now_us();
    every_symbol_coded(&f, &ds);
    struct block bk;
    plan_block(&bk, &f);
    double t5 = bench_now_us();
    struct bits b = {s->out, 0, 0};
    put_header(&b, &bk, true);
    put_items(&b, &bk, s->items, s->count, &ds);
    bits_end(&b);
    double t6 = bench_now_us();
    t[T_RASTER] = t1 - t0;
    t[T_TOKENIZE] = t3 - t2;
    t[T_COUNT] = t4 - t3;
    t[T_PLAN] = t5 - t4;
    t[T_WRITE] = t6 - t5;
}

static void report(const char *path, const struct stage_run *s, double *t[T_KINDS], int runs)
{
    double m[T_KINDS];
    for (int k = 0; k < T_KINDS; k++)
        m[k] = bench_quantile(t[k], (size_t)runs, 0.5) / 1000;
    size_t lits = 0, repeats = 0;
    for (size_t i = 0; i < s->count; i++) {
        lits += s->items[i] < 256;
        repeats += s->items[i] >= LENGTH && s->items[i] < DIST_4;
    }
    double r = m[T_RASTER],
           rest = m[T_ENCODE] - m[T_TOKENIZE] - m[T_COUNT] - m[T_PLAN] - m[T_WRITE];
    double no_coder = m[T_ENCODE] - m[T_COUNT] - m[T_WRITE],
           no_tokenizer = m[T_ENCODE] - m[T_TOKENIZE];
    printf("%s\n  %zu literals, %zu repeats; %zu PNG bytes\n", path, lits, repeats, s->png.len);
    printf("  raster %.3f ms; encode %.3f ms = %.2f of the raster\n", r, m[T_ENCODE],
           m[T_ENCODE] / r);
    printf("  tokenize %.3f ms (%.2f), count %.3f (%.2f), plan %.3f (%.2f), write %.3f (%.2f), "
           "the rest (Adler-32, CRC-32, size check, chunks) %.3f (%.2f)\n",
           m[T_TOKENIZE], m[T_TOKENIZE] / r, m[T_COUNT], m[T_COUNT] / r, m[T_PLAN], m[T_PLAN] / r,
           m[T_WRITE], m[T_WRITE] / r, rest, rest / r);
    printf("  encode without counting and writing: %.3f ms = %.2f of the raster; without "
           "tokenizing: %.3f ms = %.2f (medians of %d runs)\n",
           no_coder, no_coder / r, no_tokenizer, no_tokenizer / r, runs);
}

/* A first raster and encode size the run's buffers (the items go in the encoder's scratch, as
 * the stages need them), and the figures' arrays: 0, or -1 if one fails. */
static int prepare(const struct armature *arm, struct pose *p, const struct render_opts *opts,
                   struct stage_run *s, double *t[T_KINDS], int runs)
{
    if (render(arm, p, opts, &s->img))
        return -1;
    size_t n = ((size_t)s->img.width * 4 + 1) * s->img.height;
    struct png_opts po = {.level = PNG_LEVEL_DEFAULT, .live = s->img.live, .scanlines = true};
    if (png_encode(s->img.rgba, s->img.width, s->img.height, &po, &s->png, &s->scratch) ||
        s->scratch.cap < stages_dyn_scratch_size(n) || !(s->out = malloc(stages_dyn_bound(n) + 64)))
        return -1;
    for (int k = 0; k < T_KINDS; k++)
        if (!(t[k] = calloc((size_t)runs, sizeof *t[k])))
            return -1;
    return 0;
}

static int bench_file(const char *path, int runs)
{
    struct armature *arm;
    struct pose *p;
    struct render_opts opts;
    if (bench_load_posed("bench-stages", path, 0, 0, &arm, &p, &opts))
        return 1;
    struct stage_run s = {0};
    image_init(&s.img);
    double *t[T_KINDS] = {0};
    int rc = prepare(arm, p, &opts, &s, t, runs) ? 1 : 0;
    if (rc) {
        fprintf(stderr, "bench-stages: %s: render, encode or memory failed\n", path);
    } else {
        double one[T_KINDS];
        for (int i = 0; i < runs; i++) {
            run_once(arm, p, &opts, &s, one);
            for (int k = 0; k < T_KINDS; k++)
                t[k][i] = one[k];
        }
        report(path, &s, t, runs);
    }
    for (int k = 0; k < T_KINDS; k++)
        free(t[k]);
    free(s.out);
    free(s.png.data);
    free(s.scratch.data);
    image_close(&s.img);
    pose_free(p);
    armature_free(arm);
    return rc;
}

int main(int argc, char **argv)
{
    int runs = 300, rc = 0, files = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
            runs = atoi(argv[++i]);
            if (runs < 1 || runs > 100000) {
                fprintf(stderr, "bench-stages: --runs: 1 to 100000\n");
                return 2;
            }
        } else {
            rc |= bench_file(argv[i], runs);
            files++;
        }
    }
    if (!files) {
        fprintf(stderr, "usage: bench-stages [--runs N] FILE.skf...\n");
        return 2;
    }
    return rc;
}
