/* skeld render: PNG pictures of an armature on the CPU, one frame, a frame range (one
 * instance stepping through the frames in order) or a spritesheet. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_args.h"
#include "engine/png.h"
#include "engine/render.h"
#include "engine/request.h"
#include "engine/sheet.h"
#include "skp_cli.h"
#include "skp_json.h"

static const char render_usage[] =
    "usage: skeld render FILE.skf [--anim A[,B..]] [--frame F[,G..] | --frames F0-F1]\n"
    "                    [--from F0] [--warmup N] [--smooth S[,..]] [--loop] [--reverse]\n"
    "                    [--size WxH] [--scale S[,SY] [--position X,Y] | --fit 0.9]\n"
    "                    [--style NAME,..] [--background RRGGBBAA] [--samples 1|4]\n"
    "                    [--sheet COLSxROWS] [--png-level fast|0-9] -o OUT.png\n"
    "  With --frames, OUT is a printf pattern such as 'out_%04d.png' (one file per frame)\n"
    "  unless --sheet packs the range into OUT plus OUT.json.\n";

/* Prints "skeld render: " and the message; returns the usage exit status. */
static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "skeld render: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 2;
}

static int resolve_styles(const struct armature *arm, char *list, struct render_opts *o)
{
    struct eng_error err;
    uint32_t n = 0;
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        if (n == RENDER_MAX_STYLES)
            return bad("--style: at most %d styles", RENDER_MAX_STYLES);
        if (request_find_style(arm, tok, &o->styles[n++], &err))
            return bad("--style: %s", err.msg);
    }
    if (!n)
        return bad("--style: expected style names or indices separated by commas");
    o->style_count = n;
    return 0;
}

/* A flag's value, NULL if absent. */
#define V(a, flag) ((a)->value[SKP_CLI_##flag])

/* The flags' syntax into the picture request; the request model judges the values. */
static int parse_canvas(const struct armature *arm, struct skp_cli_args *a,
                        struct picture_request *pr)
{
    struct render_opts *o = &pr->opts;
    long w, h;
    if (V(a, SIZE)) {
        if (skp_cli_pair(V(a, SIZE), 'x', &w, &h) || w < 0 || h < 0 || w > UINT32_MAX ||
            h > UINT32_MAX)
            return bad("--size: expected WxH, got \"%s\"", V(a, SIZE));
        o->width = (uint32_t)w;
        o->height = (uint32_t)h;
    }
    if (V(a, SAMPLES)) {
        char *end;
        long v = strtol(V(a, SAMPLES), &end, 10);
        if (end == V(a, SAMPLES) || *end || v < 0 || v > 255)
            return bad("--samples: expected 1 or 4, got \"%s\"", V(a, SAMPLES));
        o->samples = (uint32_t)v;
    }
    if (V(a, BACKGROUND) && skp_cli_color(V(a, BACKGROUND), o->background))
        return bad("--background: expected RRGGBBAA in hex, got \"%s\"", V(a, BACKGROUND));
    if (V(a, STYLE) && resolve_styles(arm, V(a, STYLE), o))
        return 2;
    return 0;
}

/* --scale S[,SY] [--position X,Y] (centred without --position), or --fit F (default 0.9). */
static int parse_camera(struct skp_cli_args *a, struct picture_request *pr)
{
    double v[2];
    if (V(a, SCALE) && V(a, FIT))
        return bad("--scale and --fit exclude each other");
    if (V(a, SCALE)) {
        pr->fit = false;
        if (skp_cli_vec2(V(a, SCALE), v))
            return bad("--scale: expected S or SX,SY");
        pr->opts.scale = (struct vec2){v[0], v[1]};
        pr->opts.position = (struct vec2){pr->opts.width / 2.0, -(pr->opts.height / 2.0)};
        if (V(a, POSITION) && skp_cli_vec2(V(a, POSITION), v))
            return bad("--position: expected X,Y");
        if (V(a, POSITION))
            pr->opts.position = (struct vec2){v[0], v[1]};
        return 0;
    }
    if (V(a, POSITION))
        return bad("--position needs --scale");
    if (V(a, FIT) && skp_cli_numbers(V(a, FIT), &pr->fraction, 1) != 1)
        return bad("--fit: expected a fraction of the canvas such as 0.9, got \"%s\"", V(a, FIT));
    return 0;
}

/* --frames F0-F1 (the range rule is the request model's), --sheet and --png-level. */
static int parse_output(struct skp_cli_args *a, struct picture_request *pr)
{
    long x, y;
    if (V(a, FRAMES)) {
        if (V(a, FRAME))
            return bad("--frames and --frame exclude each other");
        if (skp_cli_pair(V(a, FRAMES), '-', &x, &y) || x < 0 || y < 0 || x > UINT32_MAX ||
            y > UINT32_MAX)
            return bad("--frames: expected F0-F1, got \"%s\"", V(a, FRAMES));
        pr->range = true;
        pr->first = (uint32_t)x;
        pr->last = (uint32_t)y;
    }
    if (V(a, SHEET)) {
        if (skp_cli_pair(V(a, SHEET), 'x', &x, &y) || x < 0 || y < 0 || x > UINT32_MAX ||
            y > UINT32_MAX)
            return bad("--sheet: expected COLSxROWS, got \"%s\"", V(a, SHEET));
        pr->cols = (uint32_t)x;
        pr->rows = (uint32_t)y;
    }
    if (V(a, PNG_LEVEL) && strcmp(V(a, PNG_LEVEL), "fast") != 0) {
        char *end;
        long v = strtol(V(a, PNG_LEVEL), &end, 10);
        if (end == V(a, PNG_LEVEL) || *end || v < INT32_MIN || v > INT32_MAX)
            return bad("--png-level: expected fast or 0..9, got \"%s\"", V(a, PNG_LEVEL));
        pr->png_level = (int)v;
    }
    return 0;
}

struct render_run {
    const struct armature *arm;
    struct picture_request pr;
    struct png_opts png;
    struct eval_request req;
    const char *output;
    long total, done; /* frames to write, for the progress bar */
    struct image img;
    struct sheet sheet;
    struct byte_buf buf, scratch;
};

static int write_file(const char *path, const struct byte_buf *b)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "wb") : stdout;
    if (!f) {
        fprintf(stderr, "skeld render: %s: %s\n", path, strerror(errno));
        return 1;
    }
    size_t put = fwrite(b->data, 1, b->len, f);
    int bad_close = f != stdout ? fclose(f) : fflush(f);
    if (put != b->len || bad_close) {
        fprintf(stderr, "skeld render: %s: write failed\n", path);
        return 1;
    }
    return 0;
}

static void progress(long done, long total)
{
    if (total < 2 || !isatty(STDERR_FILENO))
        return;
    char line[128];
    skp_cli_progress(line, sizeof line, done, total);
    fputs(line, stderr);
}

static int encode_and_write(struct render_run *j, const char *path, const struct image *img)
{
    j->buf.len = 0;
    if (png_encode(img->rgba, img->width, img->height, &j->png, &j->buf, &j->scratch)) {
        fprintf(stderr, "skeld render: PNG encoding failed\n");
        return 1;
    }
    return write_file(path, &j->buf);
}

/* request_play's callback: one finished frame, written alone or copied into its cell. */
static int emit(void *ctx, const struct pose *p, uint32_t frame, uint32_t index)
{
    struct render_run *j = ctx;
    if (render(j->arm, p, &j->pr.opts, &j->img)) {
        fprintf(stderr, "skeld render: out of memory\n");
        return 1;
    }
    progress(++j->done, j->total);
    if (j->pr.cols) {
        sheet_put(&j->sheet, &j->img, index);
        return 0;
    }
    if (!j->pr.range || !skp_cli_frame_pattern(j->output)) /* a one-frame range may name a file */
        return encode_and_write(j, j->output, &j->img);
    char path[4096];
    if (skp_cli_out_path(path, sizeof path, j->output, true, frame, ""))
        return bad("-o: the file name is too long");
    return encode_and_write(j, path, &j->img);
}

/* OUT.json beside the sheet: the JSON a RENDER reply carries, named after OUT. */
static int write_sheet_json(struct render_run *j, const struct bounds *b)
{
    size_t len = sheet_json(NULL, 0, &j->sheet, &j->pr.opts, b);
    char *json = malloc(len + 1);
    if (json)
        sheet_json(json, len + 1, &j->sheet, &j->pr.opts, b);
    size_t named_len = json ? skp_sheet_json_named(NULL, 0, json, len, j->output) : 0;
    struct byte_buf named = {malloc(named_len + 1), 0, named_len + 1};
    int rc = 1;
    if (json && named.data) {
        named.len = skp_sheet_json_named((char *)named.data, named.cap, json, len, j->output);
        char path[4096];
        rc = skp_cli_out_path(path, sizeof path, j->output, false, 0, ".json")
                 ? bad("-o: the file name is too long")
                 : write_file(path, &named);
    } else {
        fprintf(stderr, "skeld render: out of memory\n");
    }
    free(json);
    free(named.data);
    return rc;
}

/* What the output name must be for the request: a file for a sheet, a pattern for a range. */
static int check_output_name(struct skp_cli_args *a, struct render_run *j)
{
    if (!V(a, OUTPUT))
        return bad("-o OUT.png is required");
    j->output = V(a, OUTPUT);
    if (j->pr.cols && !strcmp(j->output, "-"))
        return bad("--sheet writes OUT and OUT.json: -o needs a file name");
    if (!j->pr.cols && j->pr.range && j->pr.last > j->pr.first &&
        !skp_cli_frame_pattern(j->output))
        return bad("-o: a frame range needs a pattern with one %%d, such as out_%%04d.png");
    return 0;
}

static int resolve(struct skp_cli_args *a, const struct skp_cli_eval *f, struct render_run *j)
{
    struct eng_error err;
    int rc;
    picture_request_init(&j->pr);
    if (cli_parse_eval(j->arm, f, &j->req, &err))
        return cli_fail("render", &err);
    if ((rc = parse_canvas(j->arm, a, &j->pr)) || (rc = parse_camera(a, &j->pr)) ||
        (rc = parse_output(a, &j->pr)))
        return rc;
    if (request_check_picture(j->arm, &j->req, NULL, &j->pr, NULL, &err))
        return cli_fail("render", &err);
    if ((rc = check_output_name(a, j)))
        return rc;
    png_opts_default(&j->png);
    if (j->pr.png_level != PNG_LEVEL_FAST) {
        j->png.level = j->pr.png_level;
        j->png.filter = PNG_FILTER_CHOICE_SUB;
    }
    j->pr.opts.straight_alpha = true; /* PNG files hold straight alpha */
    j->total = j->pr.range ? (long)j->pr.last - j->pr.first + 1 : 1;
    return 0;
}

static int make_sheet(struct render_run *j)
{
    struct eng_error err;
    int rc = sheet_init(&j->sheet, j->pr.cols, j->pr.rows, j->pr.opts.width, j->pr.opts.height,
                        j->pr.first, (uint32_t)j->total, &err);
    return rc ? cli_fail("render", &err) : 0;
}

static int run(struct skp_cli_args *a, const struct skp_cli_eval *f, struct render_run *j,
               struct pose *p)
{
    int rc;
    struct bounds b = {0, 0, 0, 0, true};
    if ((rc = resolve(a, f, j)))
        return rc;
    if (request_needs_bounds(&j->pr))
        request_frame(j->arm, p, &j->req, &j->pr, &b);
    if (j->pr.cols && (rc = make_sheet(j)))
        return rc;
    pose_reset(p);
    if ((rc = request_play(p, &j->req, NULL, &j->pr, emit, j)) || !j->pr.cols)
        return rc;
    struct image whole = {
        .width = j->sheet.width, .height = j->sheet.height, .rgba = j->sheet.rgba};
    if ((rc = encode_and_write(j, j->output, &whole)))
        return rc;
    return write_sheet_json(j, &b);
}

int cli_render(int argc, char **argv)
{
    struct skp_cli_args args;
    struct skp_cli_eval flags;
    bool done;
    char msg[256];
    int rc = cli_parse_args("render", argc, argv, SKP_CLI_RENDER_FLAGS, render_usage, &args, &done);
    if (rc || done)
        return rc;
    /* --scale and --position are the camera here: not engine options. */
    if (skp_cli_eval_parse(&args, false, &flags, msg, sizeof msg))
        return bad("%s", msg);
    struct render_run j;
    memset(&j, 0, sizeof j);
    struct armature *arm;
    if ((rc = cli_load("render", args.arg[0], true, &arm)))
        return rc;
    j.arm = arm;
    struct pose *p = pose_new(arm);
    rc = p ? run(&args, &flags, &j, p) : (fprintf(stderr, "skeld render: out of memory\n"), 1);
    image_close(&j.img);
    sheet_close(&j.sheet);
    free(j.buf.data);
    free(j.scratch.data);
    pose_free(p);
    armature_free(arm);
    return rc;
}
