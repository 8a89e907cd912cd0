/* Renderer benchmark: 512x512 PNG renders of each armature given, single thread, split into
 * raster time and PNG-encode time.
 *
 *   bench-render [--renders N] [--size WxH] FILE.skf [FILE.skf ...]
 *
 * Each file is posed like the player's reference renders (30 warm-up constructs, animation 0
 * played from frame 0 to 10, framed with --fit 0.9) and rendered N times (default 2000) in
 * batches of 50; medians over the batches, because this machine is shared and noisy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "engine/eval.h"
#include "engine/load.h"
#include "engine/png.h"
#include "engine/render.h"

#define BATCH 50

static void pose_like_player(const struct armature *arm, struct pose *p, struct render_opts *opts)
{
    struct eval_request r;
    eval_request_init(&r);
    r.warmup = 30;
    if (arm->anim_count) {
        r.count = 1;
        r.frames[0] = arm->anims[0].last_frame < 10 ? arm->anims[0].last_frame : 10;
        r.from = 0;
        r.has_from = true;
    }
    struct bounds b = {0, 0, 0, 0, true};
    render_anim_bounds(arm, p, &r, opts, &b);
    render_fit(&b, 0.9, opts);
    pose_reset(p);
    eval_run(p, &r, NULL);
}

static int bench_file(const char *path, int renders, uint32_t w, uint32_t h)
{
    struct armature *arm;
    struct eng_error err;
    if (armature_load_file(path, NULL, &arm, &err)) {
        fprintf(stderr, "bench-render: %s\n", err.msg);
        return 1;
    }
    struct pose *p = pose_new(arm);
    struct render_opts opts;
    render_opts_default(&opts);
    opts.width = w;
    opts.height = h;
    opts.straight_alpha = true;
    pose_like_player(arm, p, &opts);
    struct image img;
    image_init(&img);
    struct byte_buf png = {0}, scratch = {0};
    int batches = renders / BATCH > 0 ? renders / BATCH : 1;
    double *raster = calloc((size_t)batches, sizeof *raster);
    double *encode = calloc((size_t)batches, sizeof *encode);
    render(arm, p, &opts, &img); /* sizes the scratch */
    for (int b = 0; b < batches; b++) {
        double t0 = bench_now_us(), t_raster = 0;
        for (int i = 0; i < BATCH; i++) {
            double t1 = bench_now_us();
            render(arm, p, &opts, &img);
            t_raster += bench_now_us() - t1;
            png.len = 0;
            png_encode(img.rgba, img.width, img.height, NULL, &png, &scratch);
        }
        raster[b] = t_raster / BATCH / 1000.0;
        encode[b] = ((bench_now_us() - t0) - t_raster) / BATCH / 1000.0;
    }
    double r = bench_quantile(raster, (size_t)batches, 0.5),
           e = bench_quantile(encode, (size_t)batches, 0.5);
    printf("%s\n  %ux%u: raster %.3f ms, png %.3f ms (%zu bytes), total %.3f ms = %.0f PNG "
           "renders/s (medians of %d batches of %d)\n",
           path, w, h, r, e, png.len, r + e, 1000.0 / (r + e), batches, BATCH);
    free(raster);
    free(encode);
    free(png.data);
    free(scratch.data);
    image_close(&img);
    pose_free(p);
    armature_free(arm);
    return 0;
}

int main(int argc, char **argv)
{
    int renders = 2000, rc = 0, files = 0;
    unsigned w = 512, h = 512;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--renders") && i + 1 < argc) {
            renders = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
            if (sscanf(argv[++i], "%ux%u", &w, &h) != 2 || !w || !h) {
                fprintf(stderr, "bench-render: --size WxH\n");
                return 2;
            }
        } else {
            files++;
            rc |= bench_file(argv[i], renders, w, h);
        }
    }
    if (!files) {
        fprintf(stderr, "usage: bench-render [--renders N] [--size WxH] FILE.skf...\n");
        return 2;
    }
    return rc;
}
