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
    int n = cli_split_list(list, items, RENDER_MAX_STYLES);
    if (n <= 0)
        return bad("--style: expected style names or indices separated by commas");
    for (int i = 0; i < n; i++) {
        o->styles[i] = armature_find_style(arm, items[i]);
        if (o->styles[i] < 0)
            return bad("--style: no style named or numbered \"%s\"", items[i]);
    }
    o->style_count = (uint32_t)n;
    return 0;
}

/* Size, samples, background and styles (the camera comes later: fit needs the request). */
static int resolve_canvas(const struct armature *arm, struct render_flags *f, struct render_opts *o)
{
    render_opts_default(o);
    long w, h;
    if (f->size) {
        if (skp_cli_pair(f->size, 'x', &w, &h) || w < 1 || h < 1 || w > RENDER_MAX_SIDE ||
            h > RENDER_MAX_SIDE)
            return bad("--size: expected WxH, each 1..16384, got \"%s\"", f->size);
        o->width = (uint32_t)w;
        o->height = (uint32_t)h;
    }
    if (f->samples) {
        if (strcmp(f->samples, "1") && strcmp(f->samples, "4"))
            return bad("--samples: expected 1 or 4, got \"%s\"", f->samples);
        o->samples = (uint32_t)atoi(f->samples);
    }
    if (f->background && skp_cli_color(f->background, o->background))
        return bad("--background: expected RRGGBBAA in hex, got \"%s\"", f->background);
    if (f->styles && resolve_styles(arm, f->styles, o))
        return 2;
    o->straight_alpha = true; /* PNG files hold straight alpha */
    return 0;
}

static int resolve_camera(const struct armature *arm, struct render_flags *f,
                          const struct eval_request *req, struct pose *scratch,
                          struct render_opts *o)
{
    struct eng_error err;
    if (f->scale && f->fit)
        return bad("--scale and --fit exclude each other");
    if (f->scale) {
        if (cli_parse_vec2("--scale", f->scale, &o->scale, &err))
            return cli_fail("render", &err);
        o->position = (struct vec2){o->width / 2.0, -(o->height / 2.0)};
        if (f->position && cli_parse_vec2("--position", f->position, &o->position, &err))
            return cli_fail("render", &err);
        return 0;
    }
    double fraction = 0.9;
    if (f->fit) {
        char *end;
        fraction = strtod(f->fit, &end);
        if (end == f->fit || *end || !(fraction > 0 && fraction <= 10))
            return bad("--fit: expected a fraction of the canvas such as 0.9, got \"%s\"", f->fit);
    }
    if (f->position)
        return bad("--position needs --scale");
    struct bounds b = {0, 0, 0, 0, true};
    render_anim_bounds(arm, scratch, req, o, &b);
    render_fit(&b, fraction, o);
    return 0;
}

struct job {
    const struct armature *arm;
    struct render_opts opts;
    struct png_opts png;
    struct eval_request req;
    long first, last; /* frames to write (inclusive), on the first animation's count */
    bool range;
    long cols, rows; /* spritesheet, 0 for none */
    const char *output;
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

static int encode_and_write(struct job *j, const char *path, const struct image *img)
{
    j->buf.len = 0;
    if (png_encode(img->rgba, img->width, img->height, &j->png, &j->buf, &j->scratch)) {
        fprintf(stderr, "skeld render: PNG encoding failed\n");
        return 1;
    }
    return write_file(path, &j->buf);
}

/* One finished frame: written alone, or copied into its sheet cell. */
static int emit(struct job *j, const struct pose *p, long frame, long index)
{
    if (render(j->arm, p, &j->opts, &j->img)) {
        fprintf(stderr, "skeld render: out of memory\n");
        return 1;
    }
    if (j->cols) {
        sheet_put(&j->sheet, &j->img, (uint32_t)index);
        return 0;
    }
    if (!j->range || !skp_cli_frame_pattern(j->output)) /* a one-frame range may name a file */
        return encode_and_write(j, j->output, &j->img);
    char path[4096];
    if (skp_cli_out_path(path, sizeof path, j->output, true, frame, ""))
        return bad("-o: the file name is too long");
    return encode_and_write(j, path, &j->img);
}

/* OUT.json beside the sheet: the JSON a RENDER reply carries, named after OUT. */
static int write_sheet_json(struct job *j, const struct bounds *b)
{
    size_t len = sheet_json(NULL, 0, &j->sheet, &j->opts, b);
    char *json = malloc(len + 1);
    if (json)
        sheet_json(json, len + 1, &j->sheet, &j->opts, b);
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

static int play(struct job *j, struct pose *p)
{
    pose_reset(p);
    eval_warmup(p, j->req.warmup, NULL);
    long steps = eval_steps(&j->req), total = j->last - j->first + 1, done = 0;
    for (long s = 0; s < steps; s++) {
        eval_step(p, &j->req, s, NULL);
        long frame = (long)eval_step_frame(&j->req, s);
        if (frame < j->first || frame > j->last)
            continue;
        int rc = emit(j, p, frame, frame - j->first);
        if (rc)
            return rc;
        progress(++done, total);
    }
    return 0;
}

/* Frames: --frames F0-F1 plays from --from (default F0) to F1; else the single --frame. */
static int resolve_range(struct render_flags *f, struct job *j)
{
    struct eng_error err;
    if (!f->frames) {
        if (eval_check(j->arm, &j->req, &err))
            return cli_fail("render", &err);
        j->first = j->last = (long)eval_step_frame(&j->req, eval_steps(&j->req) - 1);
        return 0;
    }
    if (f->eval.frame_list)
        return bad("--frames and --frame exclude each other");
    if (skp_cli_pair(f->frames, '-', &j->first, &j->last) || j->first < 0 || j->last < j->first)
        return bad("--frames: expected F0-F1 with 0 <= F0 <= F1, got \"%s\"", f->frames);
    if (!j->req.count)
        return bad("--frames needs --anim");
    for (unsigned i = 0; i < j->req.count; i++)
        j->req.frames[i] = (double)j->last;
    if (!j->req.has_from || j->req.from > j->first) {
        j->req.from = j->req.has_from ? j->req.from : (double)j->first;
        j->req.has_from = true;
    }
    j->range = true;
    if (eval_check(j->arm, &j->req, &err))
        return cli_fail("render", &err);
    return 0;
}

static int resolve_output(struct render_flags *f, struct job *j)
{
    if (!f->output)
        return bad("-o OUT.png is required");
    j->output = f->output;
    png_opts_default(&j->png);
    if (f->level && strcmp(f->level, "fast") != 0) {
        char *end;
        long v = strtol(f->level, &end, 10);
        if (end == f->level || *end || v < 0 || v > 9)
            return bad("--png-level: expected fast or 0..9, got \"%s\"", f->level);
        j->png.level = (int)v;
        j->png.filter = PNG_FILTER_CHOICE_SUB;
    }
    if (f->sheet && !strcmp(j->output, "-"))
        return bad("--sheet writes OUT and OUT.json: -o needs a file name");
    if (f->sheet) {
        if (skp_cli_pair(f->sheet, 'x', &j->cols, &j->rows) || j->cols < 1 || j->rows < 1 ||
            j->cols * j->rows < j->last - j->first + 1)
            return bad("--sheet: expected COLSxROWS with room for every frame, got \"%s\"",
                       f->sheet);
        return 0;
    }
    if (j->range && j->last > j->first && !skp_cli_frame_pattern(j->output))
        return bad("-o: a frame range needs a pattern with one %%d, such as out_%%04d.png");
    return 0;
}

static int make_sheet(struct job *j)
{
    struct eng_error err;
    int rc =
        sheet_init(&j->sheet, (uint32_t)j->cols, (uint32_t)j->rows, j->opts.width, j->opts.height,
                   (uint32_t)j->first, (uint32_t)(j->last - j->first + 1), &err);
    return rc ? cli_fail("render", &err) : 0;
}

static int run(struct render_flags *f, struct job *j, struct pose *p)
{
    struct eng_error err;
    int rc;
    if (cli_parse_eval(j->arm, &f->eval, &j->req, &err))
        return cli_fail("render", &err);
    if ((rc = resolve_range(f, j)) || (rc = resolve_output(f, j)) ||
        (rc = resolve_canvas(j->arm, f, &j->opts)) ||
        (rc = resolve_camera(j->arm, f, &j->req, p, &j->opts)))
        return rc;
    if (j->cols && (rc = make_sheet(j)))
        return rc;
    if ((rc = play(j, p)))
        return rc;
    if (!j->cols)
        return 0;
    struct bounds b = {0, 0, 0, 0, true};
    render_anim_bounds(j->arm, p, &j->req, &j->opts, &b);
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
    struct job j;
    memset(&j, 0, sizeof j);
    struct armature *arm;
    int rc = cli_load(file, true, &arm);
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
