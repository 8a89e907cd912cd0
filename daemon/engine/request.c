/* The one request model (request.h): checks with messages, the range rule, framing and the
 * frame player, shared by the command line, the daemon's workers and every protocol front. */
#include "request.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "png.h"
#include "sheet.h"

/* Coordinates and scales beyond this are typing errors or attacks, never armatures. */
#define MAX_COORD 1e12

void request_limits_default(struct request_limits *l)
{
    l->max_image_pixels = (uint64_t)RENDER_MAX_SIDE * RENDER_MAX_SIDE;
    l->max_reply_pixels = 16 * l->max_image_pixels;
    l->max_bone_steps = 100000000;
}

void picture_request_init(struct picture_request *pr)
{
    memset(pr, 0, sizeof *pr);
    render_opts_default(&pr->opts);
    pr->fit = true;
    pr->fraction = 0.9;
    pr->png_level = PNG_LEVEL_DEFAULT;
}

static const char *anim_name(const struct armature *arm, uint32_t i)
{
    return arm->anims[i].name;
}

static const char *style_name(const struct armature *arm, uint32_t i)
{
    return arm->styles[i].name;
}

/* Whether item i is found by its name: not "#N", no comma (lists split there), and the first
 * of that name. */
static bool found_by_name(const struct armature *arm,
                          const char *(*name_at)(const struct armature *, uint32_t), uint32_t i)
{
    const char *n = name_at(arm, i);
    if (!*n || strchr(n, ',') || armature_is_index_form(n))
        return false;
    for (uint32_t k = 0; k < i; k++)
        if (!strcmp(name_at(arm, k), n))
            return false;
    return true;
}

/* A name as the list below shows it: in quotes when a space begins or ends it, which would
 * otherwise be lost beside the list's ", " (eng_quote's '?' for control characters too). */
static const char *listed(const char *name, char q[ENG_QUOTE_MAX], char *out, size_t cap)
{
    size_t n = strlen(name);
    eng_quote(name, q);
    if (n && (name[0] == ' ' || name[n - 1] == ' ')) {
        snprintf(out, cap, "\"%s\"", q);
        return out;
    }
    return q;
}

/* "unknown animation "x" (valid: a, b, #2 (c,d))", the list cut with "...": a name that is not
 * there says which ones are, each as it can be asked for. */
static int not_found(const struct armature *arm, const char *what, const char *name,
                     const char *(*name_at)(const struct armature *, uint32_t), uint32_t count,
                     struct eng_error *err)
{
    char q[ENG_QUOTE_MAX], shown[ENG_QUOTE_MAX + 2], valid[160] = "";
    size_t len = 0;
    if (armature_is_index_form(name)) {
        if (count)
            snprintf(valid, sizeof valid, "valid: #0 to #%u", count - 1);
        return eng_seterr(err, ENG_ENOTFOUND, "%s %s is out of range (%s)", what,
                          eng_quote(name, q), count ? valid : "the armature has none");
    }
    for (uint32_t i = 0; i < count; i++) {
        const char *item = listed(name_at(arm, i), q, shown, sizeof shown);
        int w =
            found_by_name(arm, name_at, i)
                ? snprintf(valid + len, sizeof valid - len, "%s%s", i ? ", " : "", item)
                : snprintf(valid + len, sizeof valid - len, "%s#%u (%s)", i ? ", " : "", i, item);
        if (w < 0 || (size_t)w >= sizeof valid - len) {
            memcpy(valid + sizeof valid - 4, "...", 4);
            break;
        }
        len += (size_t)w;
    }
    return eng_seterr(err, ENG_ENOTFOUND, "unknown %s \"%s\" (%s%s)", what, eng_quote(name, q),
                      count ? "valid: " : "the armature has none", valid);
}

int request_find_anim(const struct armature *arm, const char *name, int *out, struct eng_error *err)
{
    *out = armature_find_anim(arm, name);
    return *out >= 0 ? 0 : not_found(arm, "animation", name, anim_name, arm->anim_count, err);
}

int request_find_style(const struct armature *arm, const char *name, int *out,
                       struct eng_error *err)
{
    *out = armature_find_style(arm, name);
    return *out >= 0 ? 0 : not_found(arm, "style", name, style_name, arm->style_count, err);
}

static int check_vec(const char *what, struct vec2 v, struct eng_error *err)
{
    if (isfinite(v.x) && isfinite(v.y) && fabs(v.x) <= MAX_COORD && fabs(v.y) <= MAX_COORD)
        return 0;
    return eng_seterr(err, ENG_EINVAL, "%s (%g, %g) must be finite and within +-%g", what, v.x, v.y,
                      MAX_COORD);
}

static int check_opts(const struct construct_opts *o, struct eng_error *err)
{
    int rc;
    if (!o)
        return 0;
    if ((rc = check_vec("position", o->position, err)) ||
        (rc = check_vec("scale", o->scale, err)) || (rc = check_vec("velocity", o->velocity, err)))
        return rc;
    return 0;
}

/* The work of a request in bone-steps: its steps (warm-up, steps, extra_steps more) times
 * what a step costs (armature_step_weight: its bones, and its IK chains, mesh vertices and
 * keyframes searched one by one), plus extra_work already in bone-steps (pictures). Within
 * the limit, *left is what the limit leaves of it (UINT64_MAX: no limit). */
static int check_budget(const struct armature *arm, const struct eval_request *e,
                        uint64_t extra_steps, uint64_t extra_work, const struct request_limits *lim,
                        uint64_t *left, struct eng_error *err)
{
    uint64_t steps = (uint64_t)e->warmup + (uint64_t)eval_steps(e) + extra_steps;
    uint64_t weight = armature_step_weight(arm), bones = arm->bone_count ? arm->bone_count : 1;
    *left = UINT64_MAX;
    if (!lim || !lim->max_bone_steps)
        return 0;
    if (steps <= lim->max_bone_steps / weight &&
        extra_work <= lim->max_bone_steps - steps * weight) {
        *left = lim->max_bone_steps - steps * weight - extra_work;
        return 0;
    }
    char each[128];
    if (weight == bones)
        snprintf(each, sizeof each, "%llu bones", (unsigned long long)bones);
    else
        snprintf(each, sizeof each,
                 "%llu bone-steps each (%llu bones, with their IK chains, mesh vertices and "
                 "keyframes)",
                 (unsigned long long)weight, (unsigned long long)bones);
    return eng_setlimit(err, ENG_LIMIT_BONE_STEPS,
                        "%llu steps of %s%s exceed the limit of %llu bone-steps a request",
                        (unsigned long long)steps, each, extra_work ? " and their pictures" : "",
                        (unsigned long long)lim->max_bone_steps);
}

/* What zlib's levels cost over skeld's own encoder, in bone-steps a pixel: measured
 * (2026-11, `skeld render --size 2048x2048 --png-level N`, the samples and a flat background)
 * at 0.02-0.025 us a pixel for levels 1-3, 0.04 for 4-6 and 0.14-0.19 for 7-9, where skeld's
 * own takes under 0.01; a bone-step is about 0.1 us. A sheet of 268 million pixels at level
 * 9 took 35 s on a budget meant for 10. */
static uint64_t encode_work(int png_level, uint64_t pixels)
{
    if (png_level <= 0) /* skeld's own, or zlib's stored blocks: in the samples' share */
        return 0;
    return png_level <= 3 ? pixels / 4 : png_level <= 6 ? pixels / 2 : 2 * pixels;
}

/* What drawing and encoding one picture costs, in bone-steps (about 0.1 us each on the
 * development machines): a fixed part, the bones, the samples, and a zlib level's encoding. */
static uint64_t picture_work(const struct armature *arm, const struct picture_request *pr)
{
    uint64_t pixels = (uint64_t)pr->opts.width * pr->opts.height;
    uint64_t samples = pixels * pr->opts.samples;
    return 256 + 4 * (uint64_t)arm->bone_count + samples / 32 + encode_work(pr->png_level, pixels);
}

/* Pixels of fill (render_opts.max_fill) a bone-step pays for. bench-fill (2026-11): a pixel
 * takes 9-11 ns, a bone-step 53 (skellington) to 114 (robot), 4.9 to 12 pixels; the budget
 * must hold for every armature, so 4 errs on the strict side of the cheapest bone-step. */
#define FILL_PER_BONE_STEP 4

/* Whatever the bone-steps leave, a picture may cover itself this many times over, so that a
 * request that passed the check is not refused for an ordinary picture after its steps ran:
 * the samples' pictures cover themselves at most 0.6 times framed (fit 0.9) and 5.4 times
 * zoomed in tenfold (fit 10), at any frame. What it allows is bounded by max_reply_pixels. */
#define FILL_FLOOR_LAYERS 4

/* The fill each of the pictures of w x h may cost: an equal share of what the bone-step
 * limit left after the rest of the request (left), at least FILL_FLOOR_LAYERS times the
 * picture, so that a request whose triangles would cover the picture thousands of times over
 * is stopped as one that asks for too many steps is. 0 (no limit) only without a limit. */
static uint64_t fill_share(uint64_t left, uint64_t pictures, uint32_t w, uint32_t h)
{
    if (left == UINT64_MAX)
        return 0;
    uint64_t share = left / pictures, floor = (uint64_t)FILL_FLOOR_LAYERS * w * h;
    share = share < UINT64_MAX / FILL_PER_BONE_STEP ? share * FILL_PER_BONE_STEP : UINT64_MAX;
    return share > floor ? share : floor;
}

static int check_eval_budget(const struct armature *arm, const struct eval_request *e,
                             const struct construct_opts *o, uint64_t extra_steps,
                             uint64_t extra_work, const struct request_limits *lim, uint64_t *left,
                             struct eng_error *err)
{
    int rc = eval_check(arm, e, err);
    if (rc || (rc = check_opts(o, err)))
        return rc;
    return check_budget(arm, e, extra_steps, extra_work, lim, left, err);
}

int request_check_eval(const struct armature *arm, const struct eval_request *e,
                       const struct construct_opts *o, const struct request_limits *lim,
                       struct eng_error *err)
{
    uint64_t left;
    return check_eval_budget(arm, e, o, 0, 0, lim, &left, err);
}

static int check_canvas(const struct armature *arm, const struct picture_request *pr,
                        const struct request_limits *lim, struct eng_error *err)
{
    const struct render_opts *o = &pr->opts;
    uint64_t px = (uint64_t)o->width * o->height;
    if (!o->width || !o->height || o->width > RENDER_MAX_SIDE || o->height > RENDER_MAX_SIDE)
        return eng_seterr(err, ENG_EINVAL, "size %ux%u is out of range (1..%d a side)", o->width,
                          o->height, RENDER_MAX_SIDE);
    /* a well-formed size over what this server was configured to draw: its limit, not a
     * malformed request (skeld render, with no such limit, draws it) */
    if (lim && lim->max_image_pixels && px > lim->max_image_pixels)
        return eng_setlimit(err, ENG_LIMIT_IMAGE_PIXELS,
                            "size %ux%u is over the limit of %llu pixels a picture", o->width,
                            o->height, (unsigned long long)lim->max_image_pixels);
    if (o->samples != 1 && o->samples != 4)
        return eng_seterr(err, ENG_EINVAL, "samples %u: must be 1 or 4", o->samples);
    if (o->style_count > RENDER_MAX_STYLES)
        return eng_seterr(err, ENG_EINVAL, "%u styles: at most %d", o->style_count,
                          RENDER_MAX_STYLES);
    for (uint32_t i = 0; i < o->style_count; i++)
        if (o->styles[i] < 0 || (uint32_t)o->styles[i] >= arm->style_count)
            return eng_seterr(err, ENG_EINVAL, "style %d is out of range (%u styles)", o->styles[i],
                              arm->style_count);
    if (pr->png_level < PNG_LEVEL_DEFAULT || pr->png_level > 9)
        return eng_seterr(err, ENG_EINVAL, "PNG level %d: must be default, fast or 0..9",
                          pr->png_level);
    return 0;
}

static int check_camera(const struct picture_request *pr, struct eng_error *err)
{
    if (pr->fit)
        return pr->fraction > 0 && pr->fraction <= 10
                   ? 0
                   : eng_seterr(err, ENG_EINVAL, "fit %g: must be a fraction in (0, 10]",
                                pr->fraction);
    int rc = check_vec("camera scale", pr->opts.scale, err);
    if (!rc && (pr->opts.scale.x == 0 || pr->opts.scale.y == 0)) /* a negative one flips */
        return eng_seterr(err, ENG_EINVAL, "camera scale %g,%g: 0 draws nothing", pr->opts.scale.x,
                          pr->opts.scale.y);
    return rc ? rc : check_vec("camera position", pr->opts.position, err);
}

/* A range plays every frame from `from` (or `first`) to `last` on one instance. A `from`
 * after `first` is refused: the frames before it could not be drawn (they were left out, and
 * a sheet's cells for them left empty). */
static int apply_range(struct eval_request *e, const struct picture_request *pr,
                       struct eng_error *err)
{
    if (!e->count)
        return eng_seterr(err, ENG_EINVAL, "a frame range needs an animation to play");
    if (pr->first > pr->last)
        return eng_seterr(err, ENG_EINVAL, "frames %u-%u: the first frame is after the last",
                          pr->first, pr->last);
    if (e->has_from && e->from > pr->first)
        return eng_seterr(err, ENG_EINVAL,
                          "from %g is after the range's first frame %u: a range is drawn from "
                          "its first frame, and from may only start the play earlier",
                          e->from, pr->first);
    /* Said of the range's first frame, not of the last step's: skelctl, which sends a range
     * in pieces, then says what skeld render says. */
    if (e->has_from && (double)pr->first - e->from != floor((double)pr->first - e->from))
        return eng_seterr(err, ENG_EINVAL,
                          "from %g must be a whole number of frames before the range's first "
                          "frame %u",
                          e->from, pr->first);
    for (unsigned i = 0; i < e->count; i++)
        e->frames[i] = pr->last;
    if (!e->has_from) {
        e->from = pr->first;
        e->has_from = true;
    }
    return 0;
}

/* One reply holds every picture of a range, or one sheet: bound its pixels. */
static int check_output(const struct picture_request *pr, const struct request_limits *lim,
                        struct eng_error *err)
{
    uint64_t frames = pr->range ? (uint64_t)pr->last - pr->first + 1 : 1;
    int rc;
    if ((pr->cols || pr->rows) &&
        (rc = sheet_check(pr->cols, pr->rows, pr->opts.width, pr->opts.height, frames, err)))
        return rc;
    uint64_t pictures = pr->cols || pr->rows ? (uint64_t)pr->cols * pr->rows : frames;
    uint64_t px = (uint64_t)pr->opts.width * pr->opts.height;
    if (lim && lim->max_reply_pixels && pictures > lim->max_reply_pixels / px)
        return eng_setlimit(err, ENG_LIMIT_REPLY_PIXELS,
                            "%llu pictures of %ux%u exceed the limit of %llu pixels a request",
                            (unsigned long long)pictures, pr->opts.width, pr->opts.height,
                            (unsigned long long)lim->max_reply_pixels);
    return 0;
}

bool request_needs_bounds(const struct picture_request *pr)
{
    return pr->fit || pr->cols || pr->rows;
}

int request_check_picture(const struct armature *arm, struct eval_request *e,
                          const struct construct_opts *o, struct picture_request *pr,
                          const struct request_limits *lim, struct eng_error *err)
{
    int rc;
    if ((rc = check_canvas(arm, pr, lim, err)) || (rc = check_camera(pr, err)) ||
        (pr->range && (rc = apply_range(e, pr, err))) || (rc = check_output(pr, lim, err)))
        return rc;
    /* Framing plays the warm-up and then every frame of the first animation. */
    uint64_t framing = 0;
    if (request_needs_bounds(pr))
        framing =
            (uint64_t)e->warmup + (e->count ? (uint64_t)arm->anims[e->anims[0]].last_frame + 1 : 1);
    uint64_t pictures = pr->range ? (uint64_t)pr->last - pr->first + 1 : 1, left;
    rc = check_eval_budget(arm, e, o, framing, pictures * picture_work(arm, pr), lim, &left, err);
    pr->opts.max_fill = rc ? 0 : fill_share(left, pictures, pr->opts.width, pr->opts.height);
    return rc;
}

int request_fill_error(const struct picture_request *pr, const struct image *img, uint32_t frame,
                       struct eng_error *err)
{
    double area = (double)pr->opts.width * pr->opts.height;
    return eng_setlimit(err, ENG_LIMIT_BONE_STEPS,
                        "frame %u: its triangles would take at least %llu pixels of fill, %.3g "
                        "times the %ux%u picture; the request's limit of bone-steps allows %llu a "
                        "picture",
                        frame, (unsigned long long)img->fill, (double)img->fill / area,
                        pr->opts.width, pr->opts.height, (unsigned long long)pr->opts.max_fill);
}

void request_frame(const struct armature *arm, struct pose *scratch, const struct eval_request *e,
                   struct picture_request *pr, struct bounds *b)
{
    *b = (struct bounds){0, 0, 0, 0, true};
    render_anim_bounds(arm, scratch, e, &pr->opts, b);
    if (pr->fit)
        render_fit(b, pr->fraction, &pr->opts);
}

static void frame_key_of(const struct eval_request *e, const struct picture_request *pr,
                         struct frame_key *k)
{
    memset(k, 0, sizeof *k); /* padding and unused slots too: keys are compared whole */
    k->warmup = e->warmup;
    k->count = e->count;
    for (unsigned i = 0; i < e->count && i < EVAL_MAX_ANIMS; i++) {
        k->anims[i] = e->anims[i];
        k->smooth[i] = e->smooth[i];
    }
    k->style_count = pr->opts.style_count;
    for (uint32_t i = 0; i < pr->opts.style_count && i < RENDER_MAX_STYLES; i++)
        k->styles[i] = pr->opts.styles[i];
}

bool request_frame_recall(const struct frame_memo *memo, uint64_t arm_id,
                          const struct eval_request *e, struct picture_request *pr,
                          struct bounds *b)
{
    struct frame_key k;
    frame_key_of(e, pr, &k);
    if (!memo->valid || memo->arm_id != arm_id || memcmp(&memo->key, &k, sizeof k))
        return false;
    *b = memo->bounds;
    if (pr->fit)
        render_fit(b, pr->fraction, &pr->opts);
    return true;
}

void request_frame_remember(struct frame_memo *memo, uint64_t arm_id, const struct armature *arm,
                            struct pose *scratch, const struct eval_request *e,
                            struct picture_request *pr, struct bounds *b)
{
    request_frame(arm, scratch, e, pr, b);
    memo->valid = true;
    memo->arm_id = arm_id;
    frame_key_of(e, pr, &memo->key); /* zeroed whole first: keys are compared with memcmp */
    memo->bounds = *b;
}

int request_play(struct pose *p, const struct eval_request *e, const struct construct_opts *o,
                 const struct picture_request *pr, request_frame_fn fn, void *ctx)
{
    bool range = pr && pr->range;
    eval_warmup(p, e->warmup, o);
    long steps = eval_steps(e);
    for (long s = 0; s < steps; s++) {
        eval_step(p, e, s, o);
        double f = eval_step_frame(e, s);
        bool want = range ? f >= pr->first && f <= pr->last : s == steps - 1;
        if (!want)
            continue;
        uint32_t frame = f < 0 ? 0 : f > UINT32_MAX ? UINT32_MAX : (uint32_t)f;
        int rc = fn(ctx, p, frame, range ? frame - pr->first : 0);
        if (rc)
            return rc;
    }
    return 0;
}
