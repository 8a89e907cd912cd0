/* Engine benchmark: load time and Animate+Construct time per step, single thread.
 *
 *   bench-engine [--steps N] [--loads N] FILE.skf [FILE.skf ...]
 *
 * For each file: loads it --loads times (unzip, JSON, atlas decode) and reports the median;
 * then plays every animation in turn, one step per frame round its loop, in batches of 1000
 * steps, and reports the median (and p10/p90) microseconds per step over the batches. Medians
 * because this machine is shared and noisy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "engine/animate.h"
#include "engine/construct.h"
#include "engine/load.h"

#define BATCH 1000

static int bench_load(const char *path, int loads, double *median_ms)
{
    double *t = calloc((size_t)loads, sizeof *t);
    if (!t)
        return -1;
    for (int i = 0; i < loads; i++) {
        struct armature *arm;
        struct eng_error err;
        double t0 = bench_now_us();
        if (armature_load_file(path, NULL, &arm, &err)) {
            fprintf(stderr, "bench-engine: %s\n", err.msg);
            free(t);
            return -1;
        }
        t[i] = (bench_now_us() - t0) / 1000.0;
        armature_free(arm);
    }
    *median_ms = bench_quantile(t, (size_t)loads, 0.5);
    free(t);
    return 0;
}

/* Plays every animation in turn, each round its loop once, then starts over. */
static void play_batch(struct pose *p, long *step)
{
    const struct armature *arm = p->arm;
    long cycle = 0;
    for (uint32_t a = 0; a < arm->anim_count; a++)
        cycle += (long)arm->anims[a].last_frame + 1;
    for (int i = 0; i < BATCH; i++, (*step)++) {
        struct anim_play play = {0, 0, 0};
        long s = cycle ? *step % cycle : 0;
        for (uint32_t a = 0; a < arm->anim_count; a++) {
            long span = (long)arm->anims[a].last_frame + 1;
            if (s < span) {
                play = (struct anim_play){(int)a, (double)s, 0};
                break;
            }
            s -= span;
        }
        animate(p, &play, arm->anim_count ? 1 : 0);
        construct(p, NULL);
    }
}

static int bench_steps(const char *path, long steps)
{
    struct armature *arm;
    struct eng_error err;
    if (armature_load_file(path, NULL, &arm, &err)) {
        fprintf(stderr, "bench-engine: %s\n", err.msg);
        return -1;
    }
    struct pose *p = pose_new(arm);
    int batches = (int)((steps + BATCH - 1) / BATCH);
    double *t = calloc((size_t)batches, sizeof *t);
    if (!p || !t) {
        fprintf(stderr, "bench-engine: out of memory\n");
        free(t);
        pose_free(p);
        armature_free(arm);
        return -1;
    }
    long total = 0, step = 0;
    play_batch(p, &step); /* warm the caches */
    for (int b = 0; b < batches; b++) {
        double t0 = bench_now_us();
        play_batch(p, &step);
        t[b] = (bench_now_us() - t0) / BATCH;
        total += BATCH;
    }
    printf("  animate+construct: median %.3f us/step (p10 %.3f, p90 %.3f) over %ld steps; "
           "%u bones, %u IK families, %u mesh vertices\n",
           bench_quantile(t, (size_t)batches, 0.5), bench_quantile(t, (size_t)batches, 0.1),
           bench_quantile(t, (size_t)batches, 0.9), total, arm->bone_count, arm->ik_root_count,
           arm->vert_count);
    free(t);
    pose_free(p);
    armature_free(arm);
    return 0;
}

int main(int argc, char **argv)
{
    long steps = 20000;
    int loads = 15, rc = 0, files = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--steps") && i + 1 < argc) {
            steps = atol(argv[++i]);
            continue;
        }
        if (!strcmp(argv[i], "--loads") && i + 1 < argc) {
            loads = atoi(argv[++i]);
            continue;
        }
        double load_ms;
        files++;
        printf("%s\n", argv[i]);
        if (bench_load(argv[i], loads > 0 ? loads : 1, &load_ms) ||
            bench_steps(argv[i], steps < BATCH ? BATCH : steps)) {
            rc = 1;
            continue;
        }
        printf("  load: median %.2f ms over %d loads\n", load_ms, loads);
    }
    if (!files) {
        fprintf(stderr, "usage: bench-engine [--steps N] [--loads N] FILE.skf...\n");
        return 2;
    }
    return rc;
}
