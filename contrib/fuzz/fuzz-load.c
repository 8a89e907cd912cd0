/* libFuzzer target: armature_load on arbitrary bytes, then one Animate+Construct step and a
 * small render of whatever loaded. Nothing may crash, leak or trip a sanitizer.
 * Build and run: contrib/fuzz/run.sh load */
#include <stddef.h>
#include <stdint.h>

#include "engine/eval.h"
#include "engine/load.h"
#include "engine/render.h"

int fuzz_load_one(const uint8_t *data, size_t len);

/* Shared with fuzz-json.c, which wraps its input in a .skf first. */
int fuzz_load_one(const uint8_t *data, size_t len)
{
    struct load_limits lim;
    load_limits_default(&lim);
    lim.max_atlas_pixels = 1u << 20; /* keep each run fast */
    struct armature *arm;
    struct eng_error err;
    if (armature_load(data, len, &lim, &arm, &err))
        return 0;
    struct pose *p = pose_new(arm);
    if (p) {
        struct eval_request r;
        eval_request_init(&r);
        if (arm->anim_count) {
            r.count = 1;
            r.anims[0] = (int)(len % arm->anim_count);
            r.loop = true;
            r.frames[0] = (double)(len % 97);
        }
        if (eval_check(arm, &r, &err) == 0)
            eval_run(p, &r, NULL);
        struct render_opts o;
        render_opts_default(&o);
        o.width = o.height = 32;
        struct image img;
        image_init(&img);
        render(arm, p, &o, &img);
        image_close(&img);
        pose_free(p);
    }
    armature_free(arm);
    return 0;
}

#ifndef FUZZ_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    return fuzz_load_one(data, len);
}
#endif
