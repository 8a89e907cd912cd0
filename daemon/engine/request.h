/* One request model for every front (`skeld eval` and `skeld render`, the binary protocol,
 * HTTP): an evaluation (eval.h) with its engine options, and optionally a picture. Every front
 * turns its syntax into these structs and calls the same checks, which judge every number
 * with a message naming the parameter; the same range rule turns a frame range into steps;
 * and one frame player plays the request and hands each wanted frame to a callback.
 *
 * Pure engine: no I/O, no allocation except where noted. Any thread. */
#ifndef SKELD_ENGINE_REQUEST_H
#define SKELD_ENGINE_REQUEST_H

#include "eval.h"
#include "render.h"

/* What a request may cost. Zero means no limit. */
struct request_limits {
    uint64_t max_image_pixels; /* width x height of one picture */
    uint64_t max_reply_pixels; /* every picture of one request (a range, or a sheet) */
    uint64_t max_bone_steps;   /* (warm-up + steps + framing steps) x bones, plus each
                                * picture's drawing in bone-step equivalents */
};

/* The defaults the daemon starts with: 16384 x 16384 pixels a picture, 16 pictures' worth a
 * request, 100 million bone-steps (a few seconds of one worker). */
void request_limits_default(struct request_limits *l);

/* A picture request: what RENDER and `skeld render` ask for beyond the evaluation. */
struct picture_request {
    struct render_opts opts; /* canvas, background, explicit camera, styles, samples */
    bool fit;                /* frame the first animation (request_frame sets the camera) */
    double fraction;         /* with fit: of the canvas, in (0, 10] */
    bool range;              /* every frame of first..last, one instance stepping through */
    uint32_t first, last;
    uint32_t cols, rows; /* spritesheet cells; 0 x 0 for separate pictures */
    int png_level;       /* PNG_LEVEL_DEFAULT (-2), PNG_LEVEL_FAST (-1), or a zlib level 0..9 */
};

/* 512 x 512, transparent, fit 0.9, default styles, 4 samples, one frame, the fast encoder. */
void picture_request_init(struct picture_request *pr);

/* Resolves an animation or style given by name or index (armature_find_anim). 0 and *out,
 * or ENG_ENOTFOUND with a message listing the valid names. */
int request_find_anim(const struct armature *arm, const char *name, int *out,
                      struct eng_error *err);
int request_find_style(const struct armature *arm, const char *name, int *out,
                       struct eng_error *err);

/* The evaluation and its engine options are playable and within the limits: animations in
 * range, every number finite, the step range whole, the work under max_bone_steps. 0 or
 * ENG_EINVAL / ENG_ELIMIT with err. */
int request_check_eval(const struct armature *arm, const struct eval_request *e,
                       const struct construct_opts *o, const struct request_limits *lim,
                       struct eng_error *err);

/* Checks the picture (size, samples, camera, PNG level, sheet, reply size) and, for a range,
 * applies the range rule to e: every animation ends at `last`, stepping from e's `from` if it
 * comes earlier, else from `first`. Then checks e as request_check_eval does, counting the
 * framing of a fit camera or a sheet, and sets pr->opts.max_fill to each picture's equal share
 * of the bone-steps left (0 without a limit), which render() enforces: what drawing costs
 * depends on the pose, so it is known only then. 0 or ENG_EINVAL / ENG_ELIMIT with err. */
int request_check_picture(const struct armature *arm, struct eval_request *e,
                          const struct construct_opts *o, struct picture_request *pr,
                          const struct request_limits *lim, struct eng_error *err);

/* The message for a frame of pr that render() refused with ENG_ELIMIT (img->fill over
 * pr->opts.max_fill). Returns ENG_ELIMIT. */
int request_fill_error(const struct picture_request *pr, const struct image *img, uint32_t frame,
                       struct eng_error *err);

/* Whether the picture needs the animation's bounds (a fit camera, or a sheet's JSON). */
bool request_needs_bounds(const struct picture_request *pr);

/* Bounds of e's first animation over all its frames, played on scratch (reset first), and
 * for a fit camera the camera that frames them. */
void request_frame(const struct armature *arm, struct pose *scratch, const struct eval_request *e,
                   struct picture_request *pr, struct bounds *b);

/* What request_frame's bounds depend on besides the armature, packed so that equal keys
 * frame alike: the warm-up, the animations and their smoothing, and the styles (which
 * textures are drawn). Not the frame: the bounds cover every frame of the first animation. */
struct frame_key {
    long warmup;
    unsigned count;
    int anims[EVAL_MAX_ANIMS];
    double smooth[EVAL_MAX_ANIMS];
    uint32_t style_count;
    int styles[RENDER_MAX_STYLES];
};

/* The last bounds request_frame_remember computed, for one caller (a worker): a daemon asked for
 * the frames of one animation one request at a time plays the whole animation once, not once
 * a frame. Zero it to start; it owns nothing. */
struct frame_memo {
    bool valid;
    uint64_t arm_id; /* the caller's name for the armature (one never reused for another) */
    struct frame_key key;
    struct bounds bounds;
};

/* The bounds of an equal request on the armature the caller names arm_id, if memo holds
 * them: then *b is set, pr's camera fitted as request_frame would, and true returned. Needs
 * no pose, so a caller fetches one only on a miss. */
bool request_frame_recall(const struct frame_memo *memo, uint64_t arm_id,
                          const struct eval_request *e, struct picture_request *pr,
                          struct bounds *b);

/* request_frame on scratch (played on: the caller resets it if it is to be used again), and
 * its bounds kept in memo for request_frame_recall. */
void request_frame_remember(struct frame_memo *memo, uint64_t arm_id, const struct armature *arm,
                            struct pose *scratch, const struct eval_request *e,
                            struct picture_request *pr, struct bounds *b);

/* Called for each frame the request outputs: frame is the first animation's frame number
 * (0 when it would be negative), index its place in the range (0 for a single frame). A
 * nonzero return stops the play and is returned. */
typedef int (*request_frame_fn)(void *ctx, const struct pose *p, uint32_t frame, uint32_t index);

/* The frame player: e's warm-up, then every step; calls fn for each frame of pr's range, or
 * for the last step when pr is NULL or not a range. Plays on p as it is (reset it for a
 * stateless request). Returns 0 or fn's first nonzero result. Allocates nothing. */
int request_play(struct pose *p, const struct eval_request *e, const struct construct_opts *o,
                 const struct picture_request *pr, request_frame_fn fn, void *ctx);

#endif
