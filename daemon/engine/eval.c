#include "eval.h"

#include <float.h>
#include <math.h>

void eval_request_init(struct eval_request *r)
{
    *r = (struct eval_request){.count = 0};
}

/* frames[0] - from, taken as the whole number it is meant to be when the decimal numbers the
 * client wrote differ by one but not in binary (2.3 - 0.3 is 1.9999999999999998). */
static double from_span(const struct eval_request *r)
{
    double span = r->frames[0] - r->from, whole = nearbyint(span);
    double slack = 4 * DBL_EPSILON * fmax(1.0, fmax(fabs(r->frames[0]), fabs(r->from)));
    return fabs(span - whole) <= slack ? whole : span;
}

long eval_steps(const struct eval_request *r)
{
    if (!r->count || !r->has_from)
        return 1;
    return (long)from_span(r) + 1;
}

int eval_check(const struct armature *arm, const struct eval_request *r, struct eng_error *err)
{
    if (r->count > EVAL_MAX_ANIMS)
        return eng_seterr(err, ENG_EINVAL, "at most %d animations at once", EVAL_MAX_ANIMS);
    for (unsigned i = 0; i < r->count; i++) {
        if (r->anims[i] < 0 || (uint32_t)r->anims[i] >= arm->anim_count)
            return eng_seterr(err, ENG_EINVAL, "animation %d is out of range (%u animations)",
                              r->anims[i], arm->anim_count);
        if (!isfinite(r->frames[i]) || fabs(r->frames[i]) > EVAL_MAX_FRAME)
            return eng_seterr(err, ENG_EINVAL, "frame %g is out of range (-%g..%g)", r->frames[i],
                              EVAL_MAX_FRAME, EVAL_MAX_FRAME);
        if (!isfinite(r->smooth[i]) || r->smooth[i] < 0)
            return eng_seterr(err, ENG_EINVAL, "smoothing %g must be 0 or more", r->smooth[i]);
    }
    if (r->warmup < 0 || r->warmup > EVAL_MAX_STEPS)
        return eng_seterr(err, ENG_EINVAL, "warmup %ld is out of range (0..%ld)", r->warmup,
                          EVAL_MAX_STEPS);
    if (r->has_from && r->count) {
        double span = from_span(r);
        if (!isfinite(r->from) || span < 0 || span != floor(span) || span >= EVAL_MAX_STEPS)
            return eng_seterr(err, ENG_EINVAL,
                              "from %g must be at most frame %g, a whole number of frames "
                              "before it, and fewer than %ld steps",
                              r->from, r->frames[0], EVAL_MAX_STEPS);
    }
    return 0;
}

void eval_warmup(struct pose *p, long n, const struct construct_opts *opts)
{
    for (long i = 0; i < n; i++) {
        animate(p, NULL, 0);
        construct(p, opts);
    }
}

void eval_step(struct pose *p, const struct eval_request *r, long s,
               const struct construct_opts *opts)
{
    struct anim_play plays[EVAL_MAX_ANIMS];
    /* Every animation advances one frame per step and ends at its requested frame. */
    double back = (double)(eval_steps(r) - 1 - s);
    for (unsigned i = 0; i < r->count; i++) {
        double f = r->frames[i] - back;
        if (r->loop || r->reverse)
            f = anim_format_frame(p->arm, r->anims[i], f, r->reverse, r->loop);
        plays[i] = (struct anim_play){r->anims[i], f, r->smooth[i]};
    }
    animate(p, plays, r->count);
    construct(p, opts);
}

double eval_step_frame(const struct eval_request *r, long s)
{
    return r->count ? r->frames[0] - (double)(eval_steps(r) - 1 - s) : 0.0;
}

void eval_run(struct pose *p, const struct eval_request *r, const struct construct_opts *opts)
{
    eval_warmup(p, r->warmup, opts);
    long steps = eval_steps(r);
    for (long s = 0; s < steps; s++)
        eval_step(p, r, s, opts);
}
