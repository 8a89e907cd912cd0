/* Pose JSON benchmark: what the HTTP front's POSE spends formatting, single thread.
 *
 *   bench-json [--poses N] FILE.skf [FILE.skf ...]
 *
 * Each file is posed at frame 10 of animation 0 (after 30 warm-up constructs). Its JSON
 * with matrices (the HTTP POSE body with matrix=1, work_pose_json) is written N times
 * (default 20000) in batches of 100: median microseconds and bytes per pose. Then the
 * numbers of that pose (positions, rotations, scales, matrices, tints, vertices) are
 * formatted by skp_fmt_g9 and by printf's "%.9g", which it must equal byte for byte, in
 * alternating batches: median nanoseconds per number each way and their ratio. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "engine/eval.h"
#include "engine/load.h"
#include "engine/pose.h"
#include "skp_json.h"
#include "work.h"

#define BATCH 100
#define FORMAT_BATCHES 40

static void pose_frame_10(const struct armature *arm, struct pose *p)
{
    struct eval_request r;
    eval_request_init(&r);
    r.warmup = 30;
    if (arm->anim_count) {
        r.count = 1;
        r.frames[0] = 10;
    }
    eval_run(p, &r, NULL);
}

/* The doubles the pose's JSON with matrices holds, into v (cap of them); returns the count. */
static size_t pose_numbers(const struct pose *p, double *v, size_t cap)
{
    size_t n = 0;
    for (uint32_t b = 0; b < p->arm->bone_count; b++) {
        const struct bone_out *o = &p->out[b];
        double m[6];
        pose_bone_matrix(p, b, m);
        const double fields[] = {o->pos.x, o->pos.y,   o->rot,     o->scale.x, o->scale.y,
                                 m[0],     m[1],       m[2],       m[3],       m[4],
                                 m[5],     o->tint[0], o->tint[1], o->tint[2], o->tint[3]};
        for (size_t i = 0; i < sizeof fields / sizeof fields[0] && n < cap; i++)
            v[n++] = fields[i];
        const struct arm_bone *bone = &p->arm->bones[b];
        for (uint32_t k = 0; k < bone->vert_len && n + 2 <= cap; k++) {
            v[n++] = p->verts[bone->vert_off + k].x;
            v[n++] = p->verts[bone->vert_off + k].y;
        }
    }
    return n;
}

/* skp_fmt_g9 against printf on the numbers, alternating batches; 1 if they differ. */
static int bench_format(const double *v, size_t n)
{
    double own[FORMAT_BATCHES], libc[FORMAT_BATCHES], ratio[FORMAT_BATCHES];
    char a[32], b[32];
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = skp_fmt_g9(a, v[i]);
        snprintf(b, sizeof b, "%.9g", v[i]);
        if (len && strcmp(a, b)) {
            fprintf(stderr, "bench-json: %.17g: skp_fmt_g9 %s, printf %s\n", v[i], a, b);
            return 1;
        }
    }
    for (int k = 0; k < FORMAT_BATCHES; k++) {
        double t0 = bench_now_us();
        for (int rep = 0; rep < BATCH; rep++)
            for (size_t i = 0; i < n; i++)
                bytes += skp_fmt_g9(a, v[i]);
        double t1 = bench_now_us();
        for (int rep = 0; rep < BATCH / 10; rep++) /* printf is the slower by far */
            for (size_t i = 0; i < n; i++)
                bytes += (size_t)snprintf(b, sizeof b, "%.9g", v[i]);
        double t2 = bench_now_us();
        own[k] = (t1 - t0) * 1000.0 / (double)(BATCH * n);
        libc[k] = (t2 - t1) * 1000.0 / (double)(BATCH / 10 * n);
        ratio[k] = own[k] / libc[k];
    }
    printf("  %zu numbers: skp_fmt_g9 %.1f ns a number, printf %%.9g %.1f ns: %.2fx its time "
           "(medians of %d alternating batches; %zu bytes)\n",
           n, bench_quantile(own, FORMAT_BATCHES, 0.5), bench_quantile(libc, FORMAT_BATCHES, 0.5),
           bench_quantile(ratio, FORMAT_BATCHES, 0.5), FORMAT_BATCHES, bytes / FORMAT_BATCHES);
    return 0;
}

static int bench_file(const char *path, int poses)
{
    struct armature *arm;
    struct eng_error err;
    if (armature_load_file(path, NULL, &arm, &err)) {
        fprintf(stderr, "bench-json: %s\n", err.msg);
        return 1;
    }
    struct pose *p = pose_new(arm);
    int batches = poses / BATCH > 0 ? poses / BATCH : 1;
    double *t = calloc((size_t)batches, sizeof *t);
    size_t cap = 16 * (size_t)arm->bone_count + 2 * (size_t)arm->vert_count;
    double *v = malloc((cap ? cap : 1) * sizeof *v);
    struct byte_buf out = {0};
    int rc = !p || !t || !v;
    if (!rc) {
        pose_frame_10(arm, p);
        for (int b = 0; b < batches && !rc; b++) {
            double t0 = bench_now_us();
            for (int i = 0; i < BATCH && !rc; i++) {
                out.len = 0;
                rc = work_pose_json(p, true, &out) != 0;
            }
            t[b] = (bench_now_us() - t0) / BATCH;
        }
    }
    if (!rc) {
        printf("%s\n  pose JSON with matrices: %.2f us a pose, %zu bytes (median of %d batches "
               "of %d)\n",
               path, bench_quantile(t, (size_t)batches, 0.5), out.len, batches, BATCH);
        rc = bench_format(v, pose_numbers(p, v, cap));
    }
    free(out.data);
    free(v);
    free(t);
    pose_free(p);
    armature_free(arm);
    return rc;
}

int main(int argc, char **argv)
{
    int poses = 20000, rc = 0, files = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--poses") && i + 1 < argc) {
            poses = atoi(argv[++i]);
        } else {
            files++;
            rc |= bench_file(argv[i], poses);
        }
    }
    if (!files) {
        fprintf(stderr, "usage: bench-json [--poses N] FILE.skf...\n");
        return 2;
    }
    return rc;
}
