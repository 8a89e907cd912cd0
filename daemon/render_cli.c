/* skeld render: PNG pictures of an armature on the CPU, one frame, a frame range (one
 * instance stepping through the frames in order) or a spritesheet. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
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
#include "outfile.h"
#include "skp_cli.h"
#include "skp_json.h"

static const struct cli_command render_cmd = {
    .name = "render",
    .args = "FILE.skf",
    .synopsis = "FILE.skf [flags] -o OUT.png",
    .about = "Draws the constructed pose as PNG, as the web player does (skelctl render writes\n"
             "the same files). With --frames, OUT is a pattern such as out_%04d.png (a file per\n"
             "frame) unless --sheet packs the range into OUT.png and its JSON, OUT.json.\n",
    .flags = SKP_CLI_RENDER_FLAGS,
    .nargs = 1,
    .camera = true};

/* Prints "skeld render: " and the message; returns the usage exit status (callers whose
 * problem is not the command line's return their own). */
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

/* The render flags' syntax (shared with skelctl) as the engine's picture request. */
static int to_picture(const struct armature *arm, const struct skp_cli_render *f,
                      struct picture_request *pr)
{
    struct eng_error err;
    picture_request_init(pr);
    pr->opts.width = f->width;
    pr->opts.height = f->height;
    memcpy(pr->opts.background, f->background, 4);
    pr->opts.samples = f->samples;
    for (unsigned i = 0; i < f->style_count; i++)
        if (request_find_style(arm, f->styles[i], &pr->opts.styles[i], &err)) {
            bad("--style: %s", err.msg);
            return SKP_EXIT_FAIL; /* judged against the file: not a usage error */
        }
    pr->opts.style_count = f->style_count;
    pr->fit = f->fit;
    pr->fraction = f->fraction;
    pr->opts.scale = (struct vec2){f->scale[0], f->scale[1]};
    pr->opts.position = (struct vec2){f->position[0], f->position[1]};
    pr->range = f->range;
    pr->first = f->first;
    pr->last = f->last;
    pr->cols = f->cols;
    pr->rows = f->rows;
    _Static_assert(SKP_CLI_PNG_DEFAULT == PNG_LEVEL_DEFAULT,
                   "--png-level parses to the engine's values");
    pr->png_level = f->png_level;
    return 0;
}

struct render_run {
    const struct armature *arm;
    struct picture_request pr;
    struct png_opts png;
    struct eval_request req;
    const char *output;
    long total, done; /* frames to write, for the progress bar */
    bool tty;         /* whether standard error is a terminal, for the progress bar */
    bool bar_open;    /* the bar's line is not ended: a message must start a line of its own */
    struct image img;
    struct sheet sheet;
    struct byte_buf buf, scratch;
};

/* The whole of b into path ("-": standard output), as outfile.h says: a failed write leaves
 * no part of a picture to pass for one, and an old file at path as it was. What failed is
 * said on a line of its own, not after the progress bar. */
static int write_file(struct render_run *j, const char *path, const struct byte_buf *b)
{
    return outfile_write(j->bar_open ? "\nskeld render" : "skeld render", path, b->data, b->len);
}

/* One more frame written (or put in its cell), on the bar a range shows on a terminal. */
static void progress(struct render_run *j)
{
    j->done++;
    if (j->total < 2 || !j->tty)
        return;
    char line[128];
    skp_cli_progress(line, sizeof line, j->done, j->total);
    fputs(line, stderr);
    j->bar_open = j->done < j->total; /* the last one ends the line */
}

/* Ends the bar's line, for a message. */
static void end_bar(struct render_run *j)
{
    if (j->bar_open)
        fputc('\n', stderr);
    j->bar_open = false;
}

/* img as a PNG in j->buf. */
static int encode(struct render_run *j, const struct image *img)
{
    j->buf.len = 0;
    j->png.live = img->live; /* a rendered frame's empty space; NULL for a sheet */
    j->png.scanlines = image_png_rows(img);
    j->png.cell_width = img->cell_width;
    if (png_encode(img->rgba, img->width, img->height, &j->png, &j->buf, &j->scratch)) {
        end_bar(j);
        fprintf(stderr, "skeld render: PNG encoding failed\n");
        return 1;
    }
    return 0;
}

static int encode_and_write(struct render_run *j, const char *path, const struct image *img)
{
    return encode(j, img) || write_file(j, path, &j->buf);
}

/* request_play's callback: one finished frame, written alone or copied into its cell. */
static int emit(void *ctx, const struct pose *p, uint32_t frame, uint32_t index)
{
    struct render_run *j = ctx;
    struct eng_error err;
    if (pose_check_finite(p, &err)) {
        end_bar(j);
        fprintf(stderr, "skeld render: frame %u: %s\n", frame, err.msg);
        return 1;
    }
    int rc = render(j->arm, p, &j->pr.opts, &j->img);
    if (rc) { /* no fill limit here (max_fill 0): the file is the user's own */
        end_bar(j);
        fprintf(stderr, "skeld render: %s\n", eng_strerror(rc));
        return 1;
    }
    if (j->pr.cols) {
        sheet_frame_played(&j->sheet, frame, index);
        sheet_put(&j->sheet, &j->img, index);
        progress(j);
        return 0;
    }
    char path[SKP_CLI_PATH_MAX];
    if (!j->pr.range || !skp_cli_frame_pattern(j->output)) { /* a one-frame range may name a file */
        rc = encode_and_write(j, j->output, &j->img);
    } else if (skp_cli_out_path(path, sizeof path, j->output, true, frame, "")) {
        end_bar(j);
        return bad("-o: the file name is too long");
    } else {
        rc = encode_and_write(j, path, &j->img);
    }
    if (!rc) /* counted once written */
        progress(j);
    return rc;
}

/* The sheet, encoded in j->buf, as OUT.png and OUT.json beside it (the JSON a RENDER reply
 * carries, naming the picture): both or neither. */
static int write_sheet(struct render_run *j, const struct bounds *b)
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
        char path[SKP_CLI_PATH_MAX];
        rc = skp_cli_sheet_json_path(path, sizeof path, j->output)
                 ? bad("-o: the file name is too long")
                 : outfile_write_pair("skeld render", j->output, j->buf.data, j->buf.len, path,
                                      named.data, named.len);
    } else {
        fprintf(stderr, "skeld render: out of memory\n");
    }
    free(json);
    free(named.data);
    return rc;
}

static int resolve(const struct skp_cli_render *r, const struct skp_cli_eval *f,
                   struct render_run *j)
{
    struct eng_error err;
    int rc;
    if (cli_parse_eval(j->arm, f, &j->req, &err))
        return cli_fail("render", &err);
    if ((rc = to_picture(j->arm, r, &j->pr)))
        return rc;
    if (request_check_picture(j->arm, &j->req, NULL, &j->pr, NULL, &err))
        return cli_fail("render", &err);
    j->output = r->output;
    png_opts_for_level(&j->png, j->pr.png_level);
    j->pr.opts.straight_alpha = true;  /* PNG files hold straight alpha */
    j->pr.opts.png_rows = !j->pr.cols; /* frames are encoded as they are drawn */
    j->total = j->pr.range ? (long)j->pr.last - j->pr.first + 1 : 1;
    j->tty = isatty(STDERR_FILENO);
    return 0;
}

static int make_sheet(struct render_run *j)
{
    struct eng_error err;
    int rc = sheet_init(&j->sheet, j->pr.cols, j->pr.rows, j->pr.opts.width, j->pr.opts.height,
                        j->pr.first, (uint32_t)j->total, &err);
    return rc ? cli_fail("render", &err) : 0;
}

static int run(const struct skp_cli_render *r, const struct skp_cli_eval *f, struct render_run *j,
               struct pose *p)
{
    int rc;
    struct bounds b = {0, 0, 0, 0, true};
    if ((rc = resolve(r, f, j)))
        return rc;
    if (request_needs_bounds(&j->pr))
        request_frame(j->arm, p, &j->req, &j->pr, &b);
    if (j->pr.cols && (rc = make_sheet(j)))
        return rc;
    pose_reset(p);
    if ((rc = request_play(p, &j->req, NULL, &j->pr, emit, j)) || !j->pr.cols)
        return rc;
    struct image whole = sheet_image(&j->sheet);
    return encode(j, &whole) || write_sheet(j, &b);
}

int cli_render(int argc, char **argv, bool stdout_closed)
{
    struct skp_cli_args args;
    struct skp_cli_eval flags;
    struct skp_cli_render rflags;
    bool done;
    char msg[256];
    int rc = cli_parse_args(&render_cmd, argc, argv, &args, &done);
    if (rc || done)
        return rc;
    /* --scale and --position are the camera here: not engine options. */
    if (skp_cli_eval_parse(&args, false, &flags, msg, sizeof msg) ||
        skp_cli_render_parse(&args, &rflags, msg, sizeof msg) ||
        skp_cli_render_output(&rflags, msg, sizeof msg))
        return bad("%s", msg);
    /* -o - would put the picture in /dev/null, which took the closed descriptor */
    if (stdout_closed && !strcmp(rflags.output, "-")) {
        fprintf(stderr, "skeld render: standard output is closed\n");
        return SKP_EXIT_FAIL;
    }
    struct render_run j;
    memset(&j, 0, sizeof j);
    struct armature *arm;
    if ((rc = cli_load("render", args.arg[0], true, &arm, NULL)))
        return rc;
    j.arm = arm;
    struct pose *p = pose_new(arm);
    rc = p ? run(&rflags, &flags, &j, p) : (fprintf(stderr, "skeld render: out of memory\n"), 1);
    image_close(&j.img);
    sheet_close(&j.sheet);
    free(j.buf.data);
    free(j.scratch.data);
    pose_free(p);
    armature_free(arm);
    return rc;
}
