/* skelctl: the command line on libskc, for scripted pipelines.
 *
 *   skelctl [--uri URI] [--token T] COMMAND ...
 *   URI: unix:/path or tcp://host:port (default $SKELD_URI, else tcp://127.0.0.1:7878)
 *
 * Commands: ping, stats, load FILE, info ARM, pose ARM [flags], mesh ARM [flags],
 * render ARM [flags] -o OUT. ARM is an armature id (64 hex digits), a local .skf file (uploaded)
 * or a path under the daemon's --root. The evaluation and render flags are those of
 * `skeld eval` and `skeld render`, and `skelctl pose` prints what `skeld eval` prints.
 * Exit status: 0 ok, 1 failure (message on stderr), 2 usage. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "skc.h"
#include "skp.h"
#include "skp_cli.h"
#include "skp_json.h"

static int usage(void)
{
    fputs("usage: skelctl [--uri URI] [--token T] COMMAND ...\n"
          "  ping | stats | load FILE | info ARM\n"
          "  pose ARM [--anim A[,B..]] [--frame F[,G..]] [--smooth S[,..]] [--from F0]\n"
          "           [--warmup N] [--loop] [--reverse] [--position X,Y] [--scale X,Y]\n"
          "           [--velocity X,Y] [--y-down]\n"
          "  mesh ARM [the flags of pose]\n"
          "  render ARM [the flags of pose, without the engine options] [--frames F0-F1]\n"
          "           [--size WxH] [--scale S[,SY] [--position X,Y] | --fit 0.9]\n"
          "           [--style NAME,..] [--background RRGGBBAA] [--samples 1|4]\n"
          "           [--png-level fast|0-9] -o OUT.png\n"
          "ARM: an armature id, a local .skf file (uploaded), or a path under the daemon's root\n"
          "URI: unix:/path or tcp://host:port (default $SKELD_URI or tcp://127.0.0.1:7878)\n",
          stderr);
    return 2;
}

static int fail(skc_client *c, const char *what)
{
    fprintf(stderr, "skelctl: %s: %s\n", what, c ? skc_errmsg(c) : "out of memory");
    return 1;
}

/* ---- flags ------------------------------------------------------------------------------- */
/* The flags are proto/skp_cli's, shared with skeld: one table, one meaning. */

/* The evaluation request from the flags' syntax; the daemon judges the values. */
static int make_eval(struct skp_cli_args *a, skc_eval *ev, bool engine_opts)
{
    struct skp_cli_eval e;
    char msg[256];
    if (skp_cli_eval_parse(a, engine_opts, &e, msg, sizeof msg)) {
        fprintf(stderr, "skelctl: %s\n", msg);
        return -1;
    }
    if (e.warmup < 0 || e.warmup > UINT32_MAX) {
        fprintf(stderr, "skelctl: --warmup: expected a whole number\n");
        return -1;
    }
    ev->anim_count = e.count;
    for (unsigned i = 0; i < e.count; i++)
        ev->anims[i] = (skc_anim){e.anims[i], e.frames[i], e.smooth[i]};
    ev->has_from = e.has_from;
    ev->from = e.from;
    ev->warmup = (uint32_t)e.warmup;
    ev->flags = (e.loop ? SKC_EVAL_LOOP : 0) | (e.reverse ? SKC_EVAL_REVERSE : 0) |
                (e.y_down ? SKC_EVAL_Y_DOWN : 0);
    ev->position = (skc_vec2){e.position[0], e.position[1]};
    ev->scale = (skc_vec2){e.scale[0], e.scale[1]};
    ev->velocity = (skc_vec2){e.velocity[0], e.velocity[1]};
    return 0;
}

/* ---- armatures --------------------------------------------------------------------------- */

static bool parse_id(const char *s, unsigned char id[SKC_ID_SIZE])
{
    return skp_unhex(id, SKC_ID_SIZE, s, strlen(s)) == 0;
}

static void print_id(FILE *out, const unsigned char id[SKC_ID_SIZE])
{
    char hex[2 * SKC_ID_SIZE + 1];
    skp_hex(hex, id, SKC_ID_SIZE);
    fputs(hex, out);
}

static unsigned char *read_local(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 20;
    unsigned char *buf = malloc(cap);
    *len = 0;
    for (size_t got = 1; buf && got;) {
        if (*len == cap) {
            unsigned char *n = cap < (256u << 20) ? realloc(buf, cap * 2) : NULL;
            if (!n) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = n;
            cap *= 2;
        }
        got = fread(buf + *len, 1, cap - *len, f);
        *len += got;
    }
    fclose(f);
    return buf;
}

/* ARM -> id: an id as given, a local file uploaded, else a path under the daemon's root. */
static int resolve_arm(skc_client *c, const char *arm, unsigned char id[SKC_ID_SIZE])
{
    if (parse_id(arm, id))
        return 0;
    struct stat st;
    if (stat(arm, &st) == 0 && S_ISREG(st.st_mode)) {
        size_t len;
        unsigned char *bytes = read_local(arm, &len);
        if (!bytes) {
            fprintf(stderr, "skelctl: %s: %s\n", arm, strerror(errno));
            return 1;
        }
        int rc = skc_load_bytes(c, bytes, len, id, NULL);
        free(bytes);
        return rc ? fail(c, arm) : 0;
    }
    return skc_load_path(c, arm, id, NULL) ? fail(c, arm) : 0;
}

/* ---- commands ---------------------------------------------------------------------------- */

static void json_str(FILE *out, const char *s)
{
    char small[256], *q = skp_json_quoted(s, small, sizeof small);
    fputs(q ? q : "\"\"", out);
    if (q != small)
        free(q);
}

static void print_summary(FILE *out, const skc_summary *s)
{
    fprintf(out, "\"bones\":%u,\"animations\":[", s->bone_count);
    for (uint32_t a = 0; a < s->anim_count; a++) {
        fprintf(out, "%s{\"id\":%u,\"name\":", a ? "," : "", a);
        json_str(out, s->anims[a].name);
        fprintf(out, ",\"fps\":%.9g,\"frames\":%u}", s->anims[a].fps, s->anims[a].frames);
    }
    fputs("],\"styles\":[", out);
    for (uint32_t i = 0; i < s->style_count; i++) {
        fputs(i ? "," : "", out);
        json_str(out, s->styles[i]);
    }
    fprintf(out, "],\"atlases\":%u", s->atlas_count);
}

static int cmd_load(skc_client *c, const char *file)
{
    unsigned char id[SKC_ID_SIZE];
    skc_reply *r = NULL;
    struct stat st;
    int rc;
    if (stat(file, &st) == 0 && S_ISREG(st.st_mode)) {
        size_t len;
        unsigned char *bytes = read_local(file, &len);
        if (!bytes) {
            fprintf(stderr, "skelctl: %s: %s\n", file, strerror(errno));
            return 1;
        }
        rc = skc_load_bytes(c, bytes, len, id, &r);
        free(bytes);
    } else {
        rc = skc_load_path(c, file, id, &r);
    }
    if (rc)
        return fail(c, file);
    fputs("{\"id\":\"", stdout);
    print_id(stdout, id);
    fputs("\",", stdout);
    print_summary(stdout, skc_reply_summary(r));
    fputs("}\n", stdout);
    skc_reply_free(r);
    return 0;
}

static int cmd_info(skc_client *c, const char *arm)
{
    unsigned char id[SKC_ID_SIZE];
    skc_reply *r = NULL;
    int rc = resolve_arm(c, arm, id);
    if (rc)
        return rc;
    if (skc_info(c, id, &r))
        return fail(c, "info");
    fputs("{\"id\":\"", stdout);
    print_id(stdout, id);
    fputs("\",", stdout);
    print_summary(stdout, skc_reply_summary(r));
    uint32_t n;
    const skc_bone_info *b = skc_reply_bone_infos(r, &n);
    fputs(",\"bone_list\":[", stdout);
    for (uint32_t i = 0; i < n; i++) {
        fprintf(stdout, "%s{\"id\":%u,\"name\":", i ? "," : "", i);
        json_str(stdout, b[i].name);
        fprintf(stdout, ",\"parent\":%d}", (int)b[i].parent);
    }
    fputs("]}\n", stdout);
    skc_reply_free(r);
    return 0;
}

/* Prints the bones exactly as `skeld eval` does (proto/skp_json.c). */
static int print_pose(const skc_reply *r)
{
    uint32_t n;
    const skc_bone *b = skc_reply_bones(r, &n);
    struct skp_bone_view *views = calloc(n ? n : 1, sizeof *views);
    if (!views)
        return -1;
    for (uint32_t i = 0; i < n; i++)
        views[i] = (struct skp_bone_view){{b[i].pos.x, b[i].pos.y},
                                          b[i].rot,
                                          {b[i].scale.x, b[i].scale.y},
                                          b[i].hidden,
                                          b[i].zindex,
                                          b[i].tex,
                                          b[i].vertex_count,
                                          (const double *)b[i].vertices,
                                          b[i].vertex_count > 0};
    size_t len = skp_pose_json(NULL, 0, views, n);
    char *buf = malloc(len + 1);
    if (buf) {
        skp_pose_json(buf, len + 1, views, n);
        fwrite(buf, 1, len, stdout);
    }
    free(buf);
    free(views);
    return buf ? 0 : -1;
}

static void print_draws(const skc_reply *r)
{
    uint32_t n;
    const skc_draw *d = skc_reply_draws(r, &n);
    fputs("[", stdout);
    for (uint32_t i = 0; i < n; i++) {
        printf("%s\n{\"bone\":%u,\"atlas\":%u,\"tint\":[%.9g,%.9g,%.9g,%.9g],\"vertices\":[",
               i ? "," : "", d[i].bone, d[i].atlas, d[i].tint[0], d[i].tint[1], d[i].tint[2],
               d[i].tint[3]);
        for (uint32_t v = 0; v < d[i].vertex_count; v++)
            printf("%s[%.9g,%.9g,%.9g,%.9g]", v ? "," : "", d[i].vertices[v].x, d[i].vertices[v].y,
                   d[i].vertices[v].u, d[i].vertices[v].v);
        fputs("],\"indices\":[", stdout);
        for (uint32_t k = 0; k < d[i].index_count; k++)
            printf("%s%u", k ? "," : "", d[i].indices[k]);
        fputs("]}", stdout);
    }
    fputs("\n]\n", stdout);
}

static int cmd_eval(skc_client *c, int op, const char *arm, struct skp_cli_args *f)
{
    skc_eval ev;
    skc_eval_init(&ev);
    if (make_eval(f, &ev, true))
        return 2;
    int rc = resolve_arm(c, arm, ev.armature);
    if (rc)
        return rc;
    skc_reply *r = NULL;
    if ((op == 0 ? skc_pose(c, &ev, &r) : skc_mesh(c, &ev, &r)))
        return fail(c, op == 0 ? "pose" : "mesh");
    if (op == 0)
        rc = print_pose(r) ? fail(NULL, "pose") : 0;
    else
        print_draws(r);
    skc_reply_free(r);
    return rc;
}

static int bad(const char *msg, const char *arg)
{
    fprintf(stderr, "skelctl render: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    return 2;
}

/* The render flags' syntax (proto/skp_cli, as skeld render reads them) as the client's
 * options. skelctl checks only what fits the wire; what the values mean (sizes, samples,
 * levels, room in a sheet) is the daemon's one validator's to judge, and its message is shown
 * as it comes. */
static int make_render(struct skp_cli_args *f, skc_render_opts *ro, const char **styles,
                       const char **output)
{
    struct skp_cli_render r;
    char msg[256];
    if (skp_cli_render_parse(f, &r, msg, sizeof msg) || skp_cli_render_output(&r, msg, sizeof msg))
        return bad(msg, NULL);
    if (r.cols > 65535 || r.rows > 65535 || r.samples > 255)
        return bad("--sheet or --samples: out of range for the protocol", NULL);
    ro->width = r.width;
    ro->height = r.height;
    memcpy(ro->background, r.background, 4);
    ro->camera = r.fit ? SKC_CAMERA_FIT : SKC_CAMERA_EXPLICIT;
    ro->fit = r.fraction;
    ro->scale = (skc_vec2){r.scale[0], r.scale[1]};
    ro->position = (skc_vec2){r.position[0], r.position[1]};
    for (unsigned i = 0; i < r.style_count; i++)
        styles[i] = r.styles[i];
    ro->style_count = r.style_count;
    ro->styles = styles;
    ro->samples = r.samples;
    ro->png_level = r.png_level < 0 ? SKC_PNG_FAST : (unsigned)r.png_level;
    /* The range is cut into requests here, so it must be one. */
    if (r.range && r.last < r.first)
        return bad("--frames: expected F0-F1 with F0 <= F1", NULL);
    ro->has_range = r.range;
    ro->first = r.first;
    ro->last = r.last;
    ro->sheet_cols = r.cols;
    ro->sheet_rows = r.rows;
    *output = r.output;
    return 0;
}

static int write_bytes(const char *path, const void *data, size_t len)
{
    FILE *out = strcmp(path, "-") ? fopen(path, "wb") : stdout;
    if (!out || fwrite(data, 1, len, out) != len || (out != stdout ? fclose(out) : fflush(out))) {
        fprintf(stderr, "skelctl: %s: %s\n", path, strerror(errno));
        return 1;
    }
    return 0;
}

/* The sheet picture as OUT and its JSON as OUT.json, as `skeld render --sheet` writes them. */
static int write_sheet(const char *output, const skc_reply *r)
{
    uint32_t n;
    size_t len;
    const skc_image *img = skc_reply_images(r, &n);
    const char *json = skc_reply_sheet_json(r, &len);
    if (n != 1 || !json || !len) {
        fprintf(stderr, "skelctl: render: the daemon sent no sheet\n");
        return 1;
    }
    size_t named_len = skp_sheet_json_named(NULL, 0, json, len, output);
    char *named = malloc(named_len + 1), path[4096];
    if (!named)
        return fail(NULL, "render");
    skp_sheet_json_named(named, named_len + 1, json, len, output);
    int rc =
        skp_cli_out_path(path, sizeof path, output, false, 0, ".json")
            ? bad("-o: the file name is too long", NULL)
            : write_bytes(output, img[0].data, img[0].size) || write_bytes(path, named, named_len);
    free(named);
    return rc;
}

/* Every picture of a reply, to OUT or to the frame pattern. */
static int write_images(const char *output, bool pattern, const skc_reply *r)
{
    uint32_t n;
    const skc_image *img = skc_reply_images(r, &n);
    for (uint32_t i = 0; i < n; i++) {
        char path[4096];
        if (skp_cli_out_path(path, sizeof path, output, pattern, img[i].frame, ""))
            return bad("-o: the file name is too long", NULL);
        if (write_bytes(path, img[i].data, img[i].size))
            return 1;
    }
    return 0;
}

static void progress(uint32_t done, uint32_t total)
{
    if (total < 2 || !isatty(STDERR_FILENO))
        return;
    char line[128];
    skp_cli_progress(line, sizeof line, done, total);
    fputs(line, stderr);
}

/* A frame range goes out as chunks of frames, pipelined a few at a time so the daemon's
 * workers draw them in parallel and the progress bar moves. Each chunk is stateless and
 * replays from the same first step, so the pictures are those of one long request (and of
 * `skeld render --frames`): evaluation steps are cheap next to drawing. */
#define CHUNK_PIXELS (4u << 20) /* per reply, well under the daemon's default bound */
#define WINDOW 4                /* chunks in flight */

struct chunked {
    skc_client *c;
    skc_eval ev;
    skc_render_opts ro;
    uint32_t first, last, per_chunk, next, done;
    uint32_t ids[WINDOW], starts[WINDOW];
    unsigned head, count; /* ring of requests in flight, oldest first */
};

static int send_chunk(struct chunked *k, uint32_t start)
{
    k->ro.first = start;
    k->ro.last = start + k->per_chunk - 1 < k->last ? start + k->per_chunk - 1 : k->last;
    for (unsigned i = 0; i < k->ev.anim_count; i++)
        k->ev.anims[i].frame = k->ro.last; /* a range ends every animation at its last frame */
    unsigned slot = (k->head + k->count) % WINDOW;
    if (skc_send_render(k->c, &k->ev, &k->ro, &k->ids[slot]))
        return fail(k->c, "render");
    k->starts[slot] = start;
    k->count++;
    return 0;
}

/* Collects the oldest chunk; one the daemon was too busy for goes out again. */
static int collect_chunk(struct chunked *k, const char *output, int *busy_retries)
{
    skc_reply *r = NULL;
    uint32_t start = k->starts[k->head];
    int rc = skc_recv(k->c, k->ids[k->head], &r);
    k->head = (k->head + 1) % WINDOW;
    k->count--;
    if (rc == SKC_ESERVER && skc_status(k->c) == SKC_S_BUSY && ++*busy_retries < 500) {
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
        return send_chunk(k, start);
    }
    if (rc)
        return fail(k->c, "render");
    *busy_retries = 0; /* the bound is on consecutive refusals */
    uint32_t n;
    skc_reply_images(r, &n);
    rc = write_images(output, skp_cli_frame_pattern(output), r);
    skc_reply_free(r);
    progress(k->done += n, k->last - k->first + 1);
    return rc;
}

static int render_chunked(skc_client *c, const skc_eval *ev, const skc_render_opts *ro,
                          const char *output)
{
    struct chunked k = {.c = c, .ev = *ev, .ro = *ro, .first = ro->first, .last = ro->last};
    uint64_t px = (uint64_t)ro->width * ro->height;
    k.per_chunk = px >= CHUNK_PIXELS ? 1 : (uint32_t)(CHUNK_PIXELS / px);
    if (k.per_chunk > 16)
        k.per_chunk = 16;
    if (!k.ev.has_from) {
        k.ev.from = ro->first; /* where one request for the whole range would start */
        k.ev.has_from = 1;
    } else if (k.ev.from > ro->first && k.ev.from <= ro->last) {
        k.first = (uint32_t)ceil(k.ev.from); /* frames before --from are never reached */
    } else if (k.ev.from > ro->last) {
        k.per_chunk = ro->last - ro->first + 1; /* one request: the daemon says what is wrong */
    }
    int rc = 0, busy_retries = 0;
    for (k.next = k.first; !rc && (k.next <= k.last || k.count);) {
        if (k.next <= k.last && k.count < WINDOW) {
            rc = send_chunk(&k, k.next);
            k.next = k.last - k.next < k.per_chunk ? k.last + 1 : k.next + k.per_chunk;
        } else {
            rc = collect_chunk(&k, output, &busy_retries);
        }
    }
    while (k.count) { /* after a failure: drop what is still in flight */
        skc_discard(c, k.ids[k.head]);
        k.head = (k.head + 1) % WINDOW;
        k.count--;
    }
    return rc;
}

static int cmd_render(skc_client *c, const char *arm, struct skp_cli_args *f)
{
    skc_eval ev;
    skc_render_opts ro;
    const char *styles[SKC_MAX_STYLES];
    skc_eval_init(&ev);
    skc_render_opts_init(&ro);
    /* --position and --scale are the camera here, as in skeld render. */
    const char *output;
    int rc = make_eval(f, &ev, false);
    if (rc || (rc = make_render(f, &ro, styles, &output)))
        return 2;
    if ((rc = resolve_arm(c, arm, ev.armature)))
        return rc;
    if (ro.has_range && !ro.sheet_cols)
        return render_chunked(c, &ev, &ro, output);
    skc_reply *r = NULL;
    if (skc_render(c, &ev, &ro, &r))
        return fail(c, "render");
    rc = ro.sheet_cols ? write_sheet(output, r) : write_images(output, false, r);
    skc_reply_free(r);
    return rc;
}

static int run(skc_client *c, int argc, char **argv)
{
    const char *cmd = argv[0];
    if (!strcmp(cmd, "ping"))
        return skc_ping(c, "skelctl", 7) ? fail(c, "ping") : (puts("pong"), 0);
    if (!strcmp(cmd, "stats")) {
        skc_reply *r = NULL;
        if (skc_stats(c, &r))
            return fail(c, "stats");
        uint32_t n;
        const skc_counter *k = skc_reply_counters(r, &n);
        for (uint32_t i = 0; i < n; i++)
            printf("%s %llu\n", k[i].name, (unsigned long long)k[i].value);
        skc_reply_free(r);
        return 0;
    }
    if (argc < 2)
        return usage();
    if (!strcmp(cmd, "load"))
        return argc == 2 ? cmd_load(c, argv[1]) : usage();
    if (!strcmp(cmd, "info"))
        return argc == 2 ? cmd_info(c, argv[1]) : usage();
    bool render = !strcmp(cmd, "render");
    if (!render && strcmp(cmd, "pose") && strcmp(cmd, "mesh"))
        return usage();
    struct skp_cli_args f;
    char msg[256];
    uint32_t allowed = render ? SKP_CLI_RENDER_FLAGS : SKP_CLI_EVAL_FLAGS | SKP_CLI_OPTS_FLAGS;
    if (skp_cli_parse(argc, argv, allowed, 1, &f, msg, sizeof msg) || f.nargs != 1) {
        fprintf(stderr, "skelctl %s: %s\n", cmd, f.nargs != 1 ? "expected one ARM" : msg);
        return usage();
    }
    if (!render)
        return cmd_eval(c, strcmp(cmd, "pose") ? 1 : 0, f.arg[0], &f);
    return cmd_render(c, f.arg[0], &f);
}

/* The options before the command (--uri, --token): "--name value" or "--name=value". */
static char *global_flag(const char *name, int argc, char **argv, int *i)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n))
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (!argv[*i][n] && *i + 1 < argc)
        return argv[++*i];
    return NULL;
}

int main(int argc, char **argv)
{
    skc_options opt;
    memset(&opt, 0, sizeof opt);
    opt.uri = getenv("SKELD_URI");
    int i = 1;
    for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
        char *v;
        if ((v = global_flag("--uri", argc, argv, &i)))
            opt.uri = v;
        else if ((v = global_flag("--token", argc, argv, &i)))
            opt.auth_token = v;
        else
            return usage();
    }
    if (i >= argc)
        return usage();
    if (!opt.uri)
        opt.uri = "tcp://127.0.0.1:7878";
    skc_client *c = NULL;
    if (skc_connect(&c, &opt)) {
        int rc = fail(c, opt.uri);
        skc_free(c);
        return rc;
    }
    int rc = run(c, argc - i, argv + i);
    skc_free(c);
    return rc;
}
