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

struct render_flags {
    struct eval_flags eval;
    char *size, *scale, *fit, *position, *styles, *background, *frames, *sheet, *samples;
    char *level, *output;
};

static int take_render_flag(struct render_flags *f, int argc, char **argv, int *i)
{
    static const struct {
        const char *name;
        size_t off;
    } table[] = {
        {"--size", offsetof(struct render_flags, size)},
        {"--scale", offsetof(struct render_flags, scale)},
        {"--fit", offsetof(struct render_flags, fit)},
        {"--position", offsetof(struct render_flags, position)},
        {"--style", offsetof(struct render_flags, styles)},
        {"--background", offsetof(struct render_flags, background)},
        {"--frames", offsetof(struct render_flags, frames)},
        {"--sheet", offsetof(struct render_flags, sheet)},
        {"--samples", offsetof(struct render_flags, samples)},
        {"--png-level", offsetof(struct render_flags, level)},
        {"--output", offsetof(struct render_flags, output)},
        {"-o", offsetof(struct render_flags, output)},
    };
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
        char *v = cli_flag_value(table[k].name, argc, argv, i);
        if (v) {
            *(char **)((char *)f + table[k].off) = v;
            return 1;
        }
    }
    return 0;
}

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
    char *items[RENDER_MAX_STYLES];
    struct eng_error err;
    int n = cli_split_list(list, items, RENDER_MAX_STYLES);
    if (n <= 0)
        return bad("--style: expected at most %d style names or indices separated by commas",
                   RENDER_MAX_STYLES);
    for (int i = 0; i < n; i++)
        if (request_find_style(arm, items[i], &o->styles[i], &err))
            return bad("--style: %s", err.msg);
    o->style_count = (uint32_t)n;
    return 0;
}

/* The flags' syntax into the picture request; the request model judges the values. */
static int parse_canvas(const struct armature *arm, struct render_flags *f,
                        struct picture_request *pr)
{
    struct render_opts *o = &pr->opts;
    long w, h;
    if (f->size) {
        if (skp_cli_pair(f->size, 'x', &w, &h) || w < 0 || h < 0 || w > UINT32_MAX ||
            h > UINT32_MAX)
            return bad("--size: expected WxH, got \"%s\"", f->size);
        o->width = (uint32_t)w;
        o->height = (uint32_t)h;
    }
    if (f->samples) {
        char *end;
        long v = strtol(f->samples, &end, 10);
        if (end == f->samples || *end || v < 0 || v > 255)
            return bad("--samples: expected 1 or 4, got \"%s\"", f->samples);
        o->samples = (uint32_t)v;
    }
    if (f->background && skp_cli_color(f->background, o->background))
        return bad("--background: expected RRGGBBAA in hex, got \"%s\"", f->background);
    if (f->styles && resolve_styles(arm, f->styles, o))
        return 2;
    return 0;
}

/* --scale S[,SY] [--position X,Y] (centred without --position), or --fit F (default 0.9). */
static int parse_camera(struct render_flags *f, struct picture_request *pr)
{
    struct eng_error err;
    if (f->scale && f->fit)
        return bad("--scale and --fit exclude each other");
    if (f->scale) {
        pr->fit = false;
        if (cli_parse_vec2("--scale", f->scale, &pr->opts.scale, &err))
            return cli_fail("render", &err);
        pr->opts.position = (struct vec2){pr->opts.width / 2.0, -(pr->opts.height / 2.0)};
        if (f->position && cli_parse_vec2("--position", f->position, &pr->opts.position, &err))
            return cli_fail("render", &err);
        return 0;
    }
    if (f->position)
        return bad("--position needs --scale");
    if (f->fit) {
        char *end;
        pr->fraction = strtod(f->fit, &end);
        if (end == f->fit || *end)
            return bad("--fit: expected a fraction of the canvas such as 0.9, got \"%s\"", f->fit);
    }
    return 0;
}

/* --frames F0-F1 (the range rule is the request model's), --sheet and --png-level. */
static int parse_output(struct render_flags *f, struct picture_request *pr)
{
    long a, b;
    if (f->frames) {
        if (f->eval.frame_list)
            return bad("--frames and --frame exclude each other");
        if (skp_cli_pair(f->frames, '-', &a, &b) || a < 0 || b < 0 || a > UINT32_MAX ||
            b > UINT32_MAX)
            return bad("--frames: expected F0-F1, got \"%s\"", f->frames);
        pr->range = true;
        pr->first = (uint32_t)a;
        pr->last = (uint32_t)b;
    }
    if (f->sheet) {
        if (skp_cli_pair(f->sheet, 'x', &a, &b) || a < 0 || b < 0 || a > UINT32_MAX ||
            b > UINT32_MAX)
            return bad("--sheet: expected COLSxROWS, got \"%s\"", f->sheet);
        pr->cols = (uint32_t)a;
        pr->rows = (uint32_t)b;
    }
    if (f->level && strcmp(f->level, "fast") != 0) {
        char *end;
        long v = strtol(f->level, &end, 10);
        if (end == f->level || *end || v < INT32_MIN || v > INT32_MAX)
            return bad("--png-level: expected fast or 0..9, got \"%s\"", f->level);
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
static int check_output_name(struct render_flags *f, struct render_run *j)
{
    if (!f->output)
        return bad("-o OUT.png is required");
    j->output = f->output;
    if (j->pr.cols && !strcmp(j->output, "-"))
        return bad("--sheet writes OUT and OUT.json: -o needs a file name");
    if (!j->pr.cols && j->pr.range && j->pr.last > j->pr.first &&
        !skp_cli_frame_pattern(j->output))
        return bad("-o: a frame range needs a pattern with one %%d, such as out_%%04d.png");
    return 0;
}

static int resolve(struct render_flags *f, struct render_run *j)
{
    struct eng_error err;
    int rc;
    picture_request_init(&j->pr);
    if (cli_parse_eval(j->arm, &f->eval, &j->req, &err))
        return cli_fail("render", &err);
    if ((rc = parse_canvas(j->arm, f, &j->pr)) || (rc = parse_camera(f, &j->pr)) ||
        (rc = parse_output(f, &j->pr)))
        return rc;
    if (request_check_picture(j->arm, &j->req, NULL, &j->pr, NULL, &err))
        return cli_fail("render", &err);
    if ((rc = check_output_name(f, j)))
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

static int run(struct render_flags *f, struct render_run *j, struct pose *p)
{
    int rc;
    struct bounds b = {0, 0, 0, 0, true};
    if ((rc = resolve(f, j)))
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
    struct render_flags flags;
    memset(&flags, 0, sizeof flags);
    const char *file = NULL;
    for (int i = 1; i < argc; i++) {
        if (take_render_flag(&flags, argc, argv, &i) ||
            cli_take_eval_flag(&flags.eval, argc, argv, &i))
            continue;
        if (argv[i][0] == '-' || file) {
            fprintf(stderr, "skeld render: unexpected argument \"%s\"\n%s", argv[i], render_usage);
            return 2;
        }
        file = argv[i];
    }
    if (!file) {
        fputs(render_usage, stderr);
        return 2;
    }
    struct render_run j;
    memset(&j, 0, sizeof j);
    struct armature *arm;
    int rc = cli_load("render", file, true, &arm);
    if (rc)
        return rc;
    j.arm = arm;
    struct pose *p = pose_new(arm);
    rc = p ? run(&flags, &j, p) : (fprintf(stderr, "skeld render: out of memory\n"), 1);
    image_close(&j.img);
    sheet_close(&j.sheet);
    free(j.buf.data);
    free(j.scratch.data);
    pose_free(p);
    armature_free(arm);
    return rc;
}
