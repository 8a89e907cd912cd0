/* One evaluation request on an instance: warm-up constructs at rest, then one
 * Animate+Construct step per frame from `from` through `frames`. These knobs mean the same in
 * `skeld eval`, `skeld render` and the protocol. */
#ifndef SKELD_ENGINE_EVAL_H
#define SKELD_ENGINE_EVAL_H

#include "animate.h"
#include "construct.h"
#include "errors.h"

#define EVAL_MAX_ANIMS 16
#define EVAL_MAX_STEPS 100000000L
/* The largest frame, either way, a request may name: past it a double's fraction is too
 * coarse for the frame's interpolation to mean anything. */
#define EVAL_MAX_FRAME 1e12

struct eval_request {
    int anims[EVAL_MAX_ANIMS];     /* animation indices, in play order (later ones win) */
    double frames[EVAL_MAX_ANIMS]; /* each animation's frame at the last step */
    double smooth[EVAL_MAX_ANIMS];
    unsigned count;
    double from; /* first frame of the first animation; ignored unless has_from */
    bool has_from;
    long warmup;        /* constructs at rest before the first step */
    bool loop, reverse; /* each step's frame goes through FormatFrame */
};

void eval_request_init(struct eval_request *r);

/* Validates r against arm (indices, counts, step range). 0 or ENG_EINVAL with err. */
int eval_check(const struct armature *arm, const struct eval_request *r, struct eng_error *err);

/* Number of Animate+Construct steps r asks for after the warm-up (>= 1). */
long eval_steps(const struct eval_request *r);

/* n constructs at rest (Animate with no animation, then Construct). */
void eval_warmup(struct pose *p, long n, const struct construct_opts *opts);

/* Runs step s (0 = the first after the warm-up) of r on p. */
void eval_step(struct pose *p, const struct eval_request *r, long s,
               const struct construct_opts *opts);

/* The first animation's frame at step s, before FormatFrame (what ranges are numbered by). */
double eval_step_frame(const struct eval_request *r, long s);

/* Runs the warm-up and the steps on p, leaving the last step's result in p->out.
 * r must have passed eval_check. Allocates nothing. */
void eval_run(struct pose *p, const struct eval_request *r, const struct construct_opts *opts);

#endif
