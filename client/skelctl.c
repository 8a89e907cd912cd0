/* skelctl: the command line on libskc, for scripted pipelines.
 *
 *   skelctl [--uri URI] [--token T] COMMAND ARGS [flags]
 *   URI: unix:/path or tcp://host:port (default $SKELD_URI, else tcp://127.0.0.1:7878)
 *
 * Commands: ping, stats, load FILE, info ARM, pose ARM [flags], mesh ARM [flags],
 * render ARM [flags] -o OUT.png. ARM is an armature id (64 lowercase hex digits), a local .skf file
 * (uploaded) or a path under the daemon's --root. The flags are proto/skp_cli's, those of
 * `skeld eval` and `skeld render`; `skelctl pose` prints what `skeld eval` prints and
 * `skelctl info` what `skeld info` prints, byte for byte (the INFO reply carries its JSON).
 * Every command line is read before connecting: --help, --version and usage errors need no
 * daemon. Exit status: 0 ok, 1 failure (message on stderr), 2 usage. */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>
#include <wctype.h>

#include <jansson.h>

#include "outfile.h"
#include "skc.h"
#include "skp.h"
#include "skp_cli.h"
#include "skp_json.h"
#include "skp_msg.h"
#include "skp_prom.h"

/* --version: the program, its package and configure's version (the last word). */
#define VERSION_LINE "skelctl (" PACKAGE_NAME ") " PACKAGE_VERSION

/* Whether a character of a daemon's text may reach the terminal as it is: not a control
 * character (C0, DEL, C1), nor one that reorders or hides text (zero-width and bidirectional
 * marks, embeddings, overrides, isolates, the byte order mark: the engine's list, errors.c),
 * nor with blank a space. */
static bool shown_char(wchar_t wc, bool blank)
{
    uint32_t c = (uint32_t)wc;
    return !iswcntrl((wint_t)wc) && !(blank && wc == L' ') && !(c >= 0x200b && c <= 0x200f) &&
           !(c >= 0x202a && c <= 0x202e) && !(c >= 0x2066 && c <= 0x2069) && c != 0xfeff;
}

/* What a daemon said (an error's message, a counter's name), for a terminal: read in the
 * terminal's encoding (the locale's, which main takes up), each character shown_char refuses,
 * and each byte that is no character there, becomes '?'. A hostile or broken server must not
 * move the cursor, retitle the window, forge lines of output or turn text around (a raw 0x9b
 * is a CSI to an 8-bit terminal; in the C locale every byte past ASCII is a '?'). Written to
 * out, of cap, whole characters only. */
static const char *shown(const char *s, bool blank, char *out, size_t cap)
{
    size_t n = 0, len = s ? strlen(s) : 0;
    mbstate_t st;
    memset(&st, 0, sizeof st);
    for (size_t i = 0; i < len && n + 1 < cap;) {
        wchar_t wc;
        size_t k = mbrtowc(&wc, s + i, len - i, &st);
        if (k == (size_t)-1 || k == (size_t)-2 || k == 0) { /* no character: its first byte */
            memset(&st, 0, sizeof st); /* after an invalid sequence the state is undefined */
            out[n++] = '?';
            i++;
            continue;
        }
        if (!shown_char(wc, blank)) { /* a character: one '?' for all its bytes */
            out[n++] = '?';
            i += k;
            continue;
        }
        if (n + k >= cap)
            break;
        memcpy(out + n, s + i, k);
        n += k;
        i += k;
    }
    out[n] = 0;
    return out;
}
#define SHOWN_MAX 1200 /* past libskc's longest message */

/* Whether a range's progress bar left its line open: a message must start a line of its own. */
static bool bar_open;

/* Ends the bar's line, for a message. */
static void end_bar(void)
{
    if (bar_open)
        fputc('\n', stderr);
    bar_open = false;
}

static int fail(skc_client *c, const char *what)
{
    char msg[SHOWN_MAX];
    end_bar();
    fprintf(stderr, "skelctl %s: %s\n", what,
            c ? shown(skc_errmsg(c), false, msg, sizeof msg) : "out of memory");
    return SKP_EXIT_FAIL;
}

/* A failed evaluation: the daemon judges the flags' values (its one validator), so a request
 * it calls malformed is the command line's fault, as `skeld eval` would say; the rest (an
 * unknown animation or style, a limit, the connection) is not. */
static int fail_eval(skc_client *c, const char *what)
{
    int rc = fail(c, what);
    return c && skc_status(c) == SKC_S_BAD_REQUEST ? SKP_EXIT_USAGE : rc;
}

static int fail_arm(skc_client *c, const char *arm)
{
    char msg[SHOWN_MAX];
    end_bar();
    fprintf(stderr, "skelctl: %s: %s\n", arm, shown(skc_errmsg(c), false, msg, sizeof msg));
    return SKP_EXIT_FAIL;
}

static int bad(const char *msg, const char *arg)
{
    end_bar();
    fprintf(stderr, "skelctl render: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    return SKP_EXIT_USAGE;
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

/* 64 hex digits, some of them upper case: meant as an id (which the daemon would otherwise be
 * asked for as a path under its root, and say it has no such file). */
static bool upper_case_id(const char *s)
{
    size_t n = strspn(s, "0123456789abcdefABCDEF");
    return n == 2 * SKC_ID_SIZE && !s[n] && strpbrk(s, "ABCDEF");
}

/* The largest local file read for upload: the protocol's 64 MiB frame holds less, and a
 * larger file is no armature the daemon would take. */
#define LOCAL_MAX ((size_t)256 << 20)

/* path's bytes, or NULL with errno (EFBIG: over LOCAL_MAX). */
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
            unsigned char *n = cap < LOCAL_MAX ? realloc(buf, cap * 2) : NULL;
            if (!n) {
                errno = cap < LOCAL_MAX ? ENOMEM : EFBIG; /* the message says which */
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

/* ARM -> id: an id as given; a local file, given to the daemon only if it lacks it
 * (skc_ensure), so a file it has is not sent again and a daemon that restarted or evicted it
 * (or, behind a load balancer, another node) is given it once more; else a path under the
 * daemon's root. An INFO first, not a retry after the command fails: NOT_FOUND also means an
 * unknown animation or style. Without send, a local file's id is only computed (skc_id_of).
 * 0 or an exit status. */
static int resolve_arm(skc_client *c, const char *arm, unsigned char id[SKC_ID_SIZE], bool send)
{
    if (parse_id(arm, id))
        return 0;
    struct stat st;
    bool local = stat(arm, &st) == 0 && S_ISREG(st.st_mode);
    if (!local && upper_case_id(arm)) {
        fprintf(stderr, "skelctl: %s: an armature id is 64 lowercase hex digits\n", arm);
        return SKP_EXIT_USAGE;
    }
    if (!local)
        return skc_load_path(c, arm, id, NULL) ? fail_arm(c, arm) : SKP_EXIT_OK;
    size_t len;
    /* a file too large is said from its size, before any of it is read */
    unsigned char *bytes =
        (uint64_t)st.st_size > LOCAL_MAX ? (errno = EFBIG, NULL) : read_local(arm, &len);
    if (!bytes && errno == EFBIG) {
        fprintf(stderr, "skelctl: %s: larger than %zu bytes: no armature file\n", arm, LOCAL_MAX);
        return SKP_EXIT_FAIL;
    }
    if (!bytes) {
        fprintf(stderr, "skelctl: %s: %s\n", arm, strerror(errno));
        return SKP_EXIT_FAIL;
    }
    int err = send ? skc_ensure(c, bytes, len, id) : skc_id_of(bytes, len, id);
    free(bytes);
    if (err && send)
        return fail_arm(c, arm);
    if (err) /* skc_id_of has no handle to explain itself */
        fprintf(stderr, "skelctl: %s: %s\n", arm, skc_strerror(err));
    return err ? SKP_EXIT_FAIL : SKP_EXIT_OK;
}

/* ---- commands ---------------------------------------------------------------------------- */

static int cmd_ping(skc_client *c, struct skp_cli_args *a)
{
    (void)a;
    if (skc_ping(c, "skelctl", 7))
        return fail(c, "ping");
    puts("pong");
    return SKP_EXIT_OK;
}

/* STATS as "name value" lines, or (--prometheus) as GET /metrics names them. */
static int cmd_stats(skc_client *c, struct skp_cli_args *a)
{
    skc_reply *r = NULL;
    if (skc_stats(c, &r))
        return fail(c, "stats");
    uint32_t n;
    const skc_counter *k = skc_reply_counters(r, &n);
    int rc = SKP_EXIT_OK;
    if (a->value[SKP_CLI_PROMETHEUS]) {
        struct skp_counter *pk = calloc(n ? n : 1, sizeof *pk);
        size_t len = 0;
        for (uint32_t i = 0; pk && i < n; i++)
            pk[i] = (struct skp_counter){k[i].name, k[i].value};
        char *text = pk ? malloc((len = skp_prom_text(NULL, 0, pk, n)) + 1) : NULL;
        struct skp_str version, node; /* which node answered, as /metrics says it */
        char info[256];
        size_t in = 0;
        if (skp_hello_name_parse(skc_server_name(c), &version, &node))
            in = skp_prom_node_info(info, sizeof info, node.p, node.len, version.p, version.len);
        if (text && in < sizeof info) {
            skp_prom_text(text, len + 1, pk, n);
            if (outfile_stdout(text, len)) /* a failure is outfile_flush_stdout's to say */
                outfile_stdout(info, in);
        } else {
            rc = fail(NULL, "stats");
        }
        free(text);
        free(pk);
    } else {
        for (uint32_t i = 0; i < n; i++) { /* "name value" lines: one name, one line */
            char name[SHOWN_MAX];
            printf("%s %llu\n", shown(k[i].name, true, name, sizeof name),
                   (unsigned long long)k[i].value);
        }
    }
    skc_reply_free(r);
    return rc;
}

/* Whether what a daemon sent as JSON (what) is a JSON object, as every real one is; if not,
 * says so, after the command (cmd). skelctl writes such text to a file or the terminal as it
 * comes, so a daemon gone wrong must not pass anything else off as one. */
static bool daemon_json_object(const char *cmd, const char *what, const void *data, size_t len)
{
    json_error_t err;
    json_t *v = json_loadb(data, len, 0, &err);
    bool object = json_is_object(v);
    json_decref(v);
    if (v && !object)
        fprintf(stderr, "skelctl: %s: the daemon's %s is JSON but not an object\n", cmd, what);
    else if (!v) /* the position only: jansson's text may quote the daemon's bytes */
        fprintf(stderr, "skelctl: %s: the daemon's %s is not JSON (line %d, column %d)\n", cmd,
                what, err.line, err.column);
    return object;
}

/* The armature as `skeld info` prints it, byte for byte: the daemon's INFO_JSON. */
static int show_info(skc_client *c, const unsigned char id[SKC_ID_SIZE])
{
    skc_reply *r = NULL;
    if (skc_info_json(c, id, &r))
        return fail(c, "info");
    size_t len;
    const void *json = skc_reply_payload(r, &len);
    int rc = SKP_EXIT_FAIL;
    if (daemon_json_object("info", "INFO_JSON", json, len)) {
        outfile_stdout(json, len); /* a failure is outfile_flush_stdout's to say */
        rc = SKP_EXIT_OK;
    }
    skc_reply_free(r);
    return rc;
}

/* LOAD (an upload for a local file, else by path) then the armature as `info` prints it. */
static int cmd_load(skc_client *c, struct skp_cli_args *a)
{
    const char *file = a->arg[0];
    unsigned char id[SKC_ID_SIZE];
    struct stat st;
    int rc;
    if (stat(file, &st) == 0 && S_ISREG(st.st_mode)) {
        size_t len;
        unsigned char *bytes = read_local(file, &len);
        if (!bytes) {
            fprintf(stderr, "skelctl load: %s: %s\n", file, strerror(errno));
            return SKP_EXIT_FAIL;
        }
        rc = skc_load_bytes(c, bytes, len, id, NULL);
        free(bytes);
    } else {
        rc = skc_load_path(c, file, id, NULL);
    }
    return rc ? fail(c, "load") : show_info(c, id);
}

/* A local file is named by its id, not sent; a path under the root only a LOAD can name (it
 * is cached already, most likely). */
static int cmd_unload(skc_client *c, struct skp_cli_args *a)
{
    unsigned char id[SKC_ID_SIZE];
    int rc = resolve_arm(c, a->arg[0], id, false);
    if (rc == SKP_EXIT_OK && skc_unload(c, id))
        rc = fail_arm(c, a->arg[0]);
    return rc;
}

static int cmd_info(skc_client *c, struct skp_cli_args *a)
{
    unsigned char id[SKC_ID_SIZE];
    int rc = resolve_arm(c, a->arg[0], id, true);
    return rc ? rc : show_info(c, id);
}

/* Prints the bones exactly as `skeld eval` does (proto/skp_json.c), with matrix also each
 * bone's world matrix and tint, as the POSE reply carries them. */
static int print_pose(const skc_reply *r, bool matrix)
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
                                          b[i].vertex_count > 0,
                                          matrix ? b[i].matrix : NULL,
                                          matrix ? b[i].tint : NULL};
    size_t len = skp_pose_json(NULL, 0, views, n);
    char *buf = malloc(len + 1);
    if (buf) {
        skp_pose_json(buf, len + 1, views, n);
        outfile_stdout(buf, len); /* a failure is outfile_flush_stdout's to say */
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

static int cmd_eval(skc_client *c, struct skp_cli_args *a, bool pose)
{
    skc_eval ev;
    skc_eval_init(&ev);
    if (make_eval(a, &ev, true))
        return SKP_EXIT_USAGE;
    int rc = resolve_arm(c, a->arg[0], ev.armature, true);
    if (rc)
        return rc;
    skc_reply *r = NULL;
    if ((pose ? skc_pose(c, &ev, &r) : skc_mesh(c, &ev, &r)))
        return fail_eval(c, pose ? "pose" : "mesh");
    if (pose)
        rc = print_pose(r, a->value[SKP_CLI_MATRIX] != NULL) ? fail(NULL, "pose") : 0;
    else
        print_draws(r);
    skc_reply_free(r);
    return rc;
}

static int cmd_pose(skc_client *c, struct skp_cli_args *a)
{
    return cmd_eval(c, a, true);
}

static int cmd_mesh(skc_client *c, struct skp_cli_args *a)
{
    return cmd_eval(c, a, false);
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
    ro->png_level = skp_cli_png_wire(r.png_level); /* SKC_PNG_* are the wire's values */
    /* The range is cut into requests here, so it must be one. */
    if (r.range && r.last < r.first) { /* said as skeld render says it */
        fprintf(stderr, "skelctl render: frames %u-%u: the first frame is after the last\n",
                (unsigned)r.first, (unsigned)r.last);
        return SKP_EXIT_USAGE;
    }
    ro->has_range = r.range;
    ro->first = r.first;
    ro->last = r.last;
    ro->sheet_cols = r.cols;
    ro->sheet_rows = r.rows;
    *output = r.output;
    return 0;
}

/* data into path ("-": standard output), as skeld render writes (outfile.h): a failed write
 * leaves no part of a picture to pass for one, and an old file at path as it was. */
static int write_bytes(const char *path, const void *data, size_t len)
{
    return outfile_write(bar_open ? "\nskelctl" : "skelctl", path, data, len); /* see end_bar */
}

/* The sheet picture as OUT.png and its JSON as OUT.json, as `skeld render --sheet` writes
 * them: one picture, of the range's first frame and cols x rows cells of the size asked. */
static int write_sheet(const char *output, const skc_render_opts *ro, const skc_reply *r)
{
    uint32_t n;
    size_t len;
    const skc_image *img = skc_reply_images(r, &n);
    const char *json = skc_reply_sheet_json(r, &len);
    if (n != 1 || !json || !len) {
        fprintf(stderr, "skelctl: render: the daemon sent no sheet\n");
        return 1;
    }
    uint32_t first = ro->has_range ? ro->first : img[0].frame; /* a single frame: as it says */
    if (img[0].frame != first || img[0].width != (uint64_t)ro->width * ro->sheet_cols ||
        img[0].height != (uint64_t)ro->height * ro->sheet_rows) {
        fprintf(stderr,
                "skelctl: render: the daemon sent a sheet of %ux%u pixels from frame %u, not the "
                "%ux%u cells of %ux%u asked for from frame %u\n",
                (unsigned)img[0].width, (unsigned)img[0].height, (unsigned)img[0].frame,
                (unsigned)ro->sheet_cols, (unsigned)ro->sheet_rows, (unsigned)ro->width,
                (unsigned)ro->height, (unsigned)first);
        return 1;
    }
    if (!daemon_json_object("render", "sheet JSON", json, len))
        return 1;
    size_t named_len = skp_sheet_json_named(NULL, 0, json, len, output);
    char *named = malloc(named_len + 1), path[SKP_CLI_PATH_MAX];
    if (!named)
        return fail(NULL, "render");
    skp_sheet_json_named(named, named_len + 1, json, len, output);
    int rc = skp_cli_sheet_json_path(path, sizeof path, output)
                 ? bad("-o: the file name is too long", NULL)
                 : outfile_write_pair("skelctl", output, img[0].data, img[0].size, path, named,
                                      named_len);
    free(named);
    return rc;
}

/* Every picture of a reply, to OUT or to the frame pattern: exactly the frames first..last
 * asked for (one picture when !range), else nothing is written. */
static int write_images(const char *output, bool pattern, const skc_reply *r, bool range,
                        uint32_t first, uint32_t last)
{
    uint32_t n;
    const skc_image *img = skc_reply_images(r, &n);
    bool whole = range ? n == (uint64_t)last - first + 1 : n == 1;
    for (uint32_t i = 0; whole && range && i < n; i++)
        whole = img[i].frame == first + i;
    if (!whole) {
        end_bar();
        fprintf(stderr, "skelctl: render: the daemon sent %u pictures, not the frames asked for\n",
                (unsigned)n);
        return 1;
    }
    for (uint32_t i = 0; i < n; i++) {
        char path[SKP_CLI_PATH_MAX];
        if (skp_cli_out_path(path, sizeof path, output, pattern, img[i].frame, ""))
            return bad("-o: the file name is too long", NULL);
        if (write_bytes(path, img[i].data, img[i].size))
            return 1;
    }
    return 0;
}

static void progress(uint64_t done, uint64_t total)
{
    if (total < 2 || !isatty(STDERR_FILENO))
        return;
    char line[128];
    skp_cli_progress(line, sizeof line, (long)done, (long)total);
    fputs(line, stderr);
    bar_open = done < total; /* the last one ends the line */
}

/* A frame range goes out as chunks of frames, pipelined a few at a time so the daemon's
 * workers draw them in parallel and the progress bar moves. Each chunk's pictures must be
 * those of one long request (and of `skeld render --frames`), whose steps carry state from
 * one frame to the next (physics, smoothing). A short range sends stateless chunks that
 * replay from the range's first step: the daemon can answer them from its result cache. A
 * longer one would replay quadratically many steps (16,000 frames took 3x the time of
 * `skeld render --frames`: contrib/bench/bench-range.sh), so it plays on WINDOW instances,
 * lanes, each taking every WINDOW-th chunk and stepping through the frames between its
 * chunks without drawing them: every lane steps the whole range once, in parallel with the
 * others. A lane has one request in flight at most, so its requests run in order, and one
 * the daemon refused as busy has changed nothing and goes out again. */
#define CHUNK_PIXELS (4u << 20) /* per reply, well under the daemon's default bound */
#define WINDOW 4                /* chunks in flight, and lanes */

struct lane {
    uint32_t instance;
    uint64_t from; /* where its next request starts stepping */
    bool fresh;    /* nothing played yet: the warm-up comes first */
    bool busy;     /* a request in flight */
};

struct chunked {
    skc_client *c;
    skc_eval ev;
    skc_render_opts ro;
    uint32_t first, last, per_chunk, warmup;
    double from;         /* the range's first step */
    uint64_t next, done; /* 64-bit: a range may end at the last 32-bit frame */
    uint32_t ids[WINDOW], starts[WINDOW];
    unsigned head, count; /* ring of requests in flight, oldest first */
    bool lanes_on;
    struct lane lanes[WINDOW];
};

static struct lane *lane_of(struct chunked *k, uint32_t start)
{
    return k->lanes_on ? &k->lanes[(start - k->first) / k->per_chunk % WINDOW] : NULL;
}

/* The last frame of the chunk that starts at start. */
static uint32_t chunk_end(const struct chunked *k, uint32_t start)
{
    uint64_t end = (uint64_t)start + k->per_chunk - 1;
    return end < k->last ? (uint32_t)end : k->last;
}

static int send_chunk_at(struct chunked *k, uint32_t start, unsigned slot)
{
    k->ro.first = start;
    k->ro.last = chunk_end(k, start);
    for (unsigned i = 0; i < k->ev.anim_count; i++)
        k->ev.anims[i].frame = k->ro.last; /* a range ends every animation at its last frame */
    struct lane *l = lane_of(k, start);
    if (l) {
        k->ev.target = SKC_TARGET_INSTANCE;
        k->ev.instance = l->instance;
        k->ev.from = l->fresh ? k->from : (double)l->from;
        k->ev.warmup = l->fresh ? k->warmup : 0;
        l->busy = true;
    }
    if (skc_send_render(k->c, &k->ev, &k->ro, &k->ids[slot]))
        return fail(k->c, "render");
    k->starts[slot] = start;
    return 0;
}

static int send_chunk(struct chunked *k, uint32_t start)
{
    int rc = send_chunk_at(k, start, (k->head + k->count) % WINDOW);
    if (!rc)
        k->count++;
    return rc;
}

/* A request the daemon was too busy for (BUSY: its queue full) has changed nothing and is sent
 * again, 10 ms later, up to BUSY_TRIES times in a row. */
#define BUSY_TRIES 500

static void busy_pause(void)
{
    nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
}

/* skc_render, sent again while the daemon answers BUSY. */
static int render_through_busy(skc_client *c, const skc_eval *ev, const skc_render_opts *ro,
                               skc_reply **r)
{
    int rc, tries = 0;
    while ((rc = skc_render(c, ev, ro, r)) == SKC_ESERVER && skc_status(c) == SKC_S_BUSY &&
           ++tries < BUSY_TRIES)
        busy_pause();
    return rc;
}

/* After a failure: what is still in flight is dropped. */
static void drop_in_flight(struct chunked *k)
{
    while (k->count) {
        skc_discard(k->c, k->ids[k->head]);
        k->head = (k->head + 1) % WINDOW;
        k->count--;
    }
}

/* After the chunk from start failed: the frames before the one that failed, as `skeld render
 * --frames` writes them before it stops. The daemon's error reply carries no pictures, so the
 * longest part of the chunk it draws is found by halving, each try a stateless request from
 * the range's first step (a lane's instance may have stepped part way). At most five tries,
 * on a path that ends the command anyway; their own errors are the first one's, unsaid. */
static void salvage_chunk(struct chunked *k, uint32_t start, const char *output)
{
    skc_eval ev = k->ev;
    skc_render_opts ro = k->ro;
    ev.target = SKC_TARGET_ARMATURE;
    ev.from = k->from;
    ev.warmup = k->warmup;
    ro.first = start;
    skc_reply *best = NULL;
    uint32_t best_last = start;
    /* [start, lo) draws; [start, hi] fails */
    for (uint32_t lo = start, hi = chunk_end(k, start); lo < hi;) {
        uint32_t mid = lo + (hi - lo) / 2;
        skc_reply *r = NULL;
        ro.last = mid;
        for (unsigned i = 0; i < ev.anim_count; i++)
            ev.anims[i].frame = mid;
        if (render_through_busy(k->c, &ev, &ro, &r) == 0) {
            skc_reply_free(best);
            best = r;
            best_last = mid;
            lo = mid + 1;
        } else if (skc_status(k->c) != SKC_S_BAD_FILE && skc_status(k->c) != SKC_S_LIMIT) {
            break; /* busy still, or the connection gone: what is known is kept */
        } else {
            hi = mid;
        }
    }
    if (best)
        write_images(output, skp_cli_frame_pattern(output), best, true, start, best_last);
    skc_reply_free(best);
}

/* Collects the oldest chunk; one the daemon was too busy for goes out again. */
static int collect_chunk(struct chunked *k, const char *output, int *busy_retries)
{
    skc_reply *r = NULL;
    uint32_t start = k->starts[k->head];
    struct lane *l = lane_of(k, start);
    int rc = skc_recv(k->c, k->ids[k->head], &r);
    if (l)
        l->busy = false;
    if (rc == SKC_ESERVER && skc_status(k->c) == SKC_S_BUSY && ++*busy_retries < BUSY_TRIES) {
        /* again in its own slot, still the oldest: the chunks are written (and a failing
         * one salvaged) in the range's order, as skeld render writes them */
        busy_pause();
        return send_chunk_at(k, start, k->head);
    }
    k->head = (k->head + 1) % WINDOW;
    k->count--;
    if (rc) {
        /* A pose that overflows (BAD_FILE) or a picture past a limit fails at one frame, and
         * skeld render would have written those before it. */
        int status = rc == SKC_ESERVER ? skc_status(k->c) : 0;
        rc = fail_eval(k->c, "render");
        if (status == SKC_S_BAD_FILE || status == SKC_S_LIMIT) {
            drop_in_flight(k);
            salvage_chunk(k, start, output);
        }
        return rc;
    }
    *busy_retries = 0; /* the bound is on consecutive refusals */
    if (l) {
        l->from = (uint64_t)chunk_end(k, start) + 1;
        l->fresh = false;
    }
    uint32_t n;
    skc_reply_images(r, &n);
    rc = write_images(output, skp_cli_frame_pattern(output), r, true, start, chunk_end(k, start));
    skc_reply_free(r);
    if (!rc) /* counted once written */
        progress(k->done += n, (uint64_t)k->last - k->first + 1);
    return rc;
}

/* The lanes' instances, for a range of more than 2 x WINDOW chunks (below that, the stateless
 * chunks replay fewer steps than the lanes would play). A daemon that refuses them (its
 * --max-instance-mb) gets stateless chunks. */
static int open_lanes(struct chunked *k)
{
    uint64_t chunks = ((uint64_t)k->last - k->first) / k->per_chunk + 1;
    if (chunks <= 2 * WINDOW)
        return 0;
    unsigned opened = 0;
    int rc = 0;
    for (; opened < WINDOW; opened++) {
        struct lane *l = &k->lanes[opened];
        *l = (struct lane){.fresh = true};
        if ((rc = skc_instance_new(k->c, k->ev.armature, &l->instance)))
            break;
    }
    if (opened == WINDOW) {
        k->lanes_on = true;
        return 0;
    }
    while (opened)
        skc_instance_free(k->c, k->lanes[--opened].instance);
    return rc == SKC_ESERVER ? 0 : fail(k->c, "render");
}

static void close_lanes(struct chunked *k)
{
    for (unsigned i = 0; k->lanes_on && i < WINDOW; i++)
        skc_instance_free(k->c, k->lanes[i].instance);
}

/* Whether the next chunk may go out now: room in the window, and its lane free. */
static bool may_send(struct chunked *k)
{
    if (k->next > k->last || k->count == WINDOW)
        return false;
    struct lane *l = lane_of(k, (uint32_t)k->next);
    return !l || !l->busy;
}

static int render_chunked(skc_client *c, const skc_eval *ev, const skc_render_opts *ro,
                          const char *output)
{
    struct chunked k = {.c = c, .ev = *ev, .ro = *ro, .first = ro->first, .last = ro->last};
    uint64_t px = (uint64_t)ro->width * ro->height;
    /* an empty canvas is the daemon's to refuse (its message), not a division by zero */
    k.per_chunk = px >= CHUNK_PIXELS || px == 0 ? 1 : (uint32_t)(CHUNK_PIXELS / px);
    if (k.per_chunk > 16)
        k.per_chunk = 16;
    /* A --from later than the range's first frame goes out as given: the daemon refuses the
     * first chunk, as skeld render refuses the range, before any picture is written. */
    k.from = ev->has_from ? ev->from : ro->first; /* where one request for the range starts */
    /* The chunks each step less than the whole range: refuse what skeld render refuses
     * (daemon/engine/eval.c, EVAL_MAX_STEPS), before any file is written. */
    if ((double)ro->last - k.from >= SKP_CLI_MAX_STEPS) {
        fprintf(stderr,
                "skelctl render: from %g must be at most frame %g, a whole number of frames "
                "before it, and fewer than %ld steps\n",
                k.from, (double)ro->last, SKP_CLI_MAX_STEPS);
        return SKP_EXIT_USAGE;
    }
    k.ev.from = k.from;
    k.ev.has_from = 1;
    k.warmup = ev->warmup;
    int rc = open_lanes(&k), busy_retries = 0;
    for (k.next = k.first; !rc && (k.next <= k.last || k.count);) {
        if (may_send(&k)) {
            rc = send_chunk(&k, (uint32_t)k.next);
            k.next += k.per_chunk;
        } else {
            rc = collect_chunk(&k, output, &busy_retries);
        }
    }
    drop_in_flight(&k);
    if (!rc) /* after a failure the requests dropped may still run on them: the connection's
              * end frees them */
        close_lanes(&k);
    return rc;
}

static int cmd_render(skc_client *c, struct skp_cli_args *f)
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
        return SKP_EXIT_USAGE;
    if ((rc = resolve_arm(c, f->arg[0], ev.armature, true)))
        return rc;
    if (ro.has_range && !ro.sheet_cols)
        return render_chunked(c, &ev, &ro, output);
    skc_reply *r = NULL;
    if (skc_render(c, &ev, &ro, &r))
        return fail_eval(c, "render");
    rc = ro.sheet_cols ? write_sheet(output, &ro, r) : write_images(output, false, r, false, 0, 0);
    skc_reply_free(r);
    return rc;
}

/* ---- command lines --------------------------------------------------------------------- */

/* A command: what --help says of it, the flags of the shared table it takes, what it runs. */
struct command {
    const char *name, *args, *synopsis, *about;
    uint32_t flags;
    int nargs;
    bool camera; /* --scale and --position are a render's camera */
    int (*run)(skc_client *c, struct skp_cli_args *a);
};

static const struct command commands[] = {
    {"ping", "", "", "Asks the daemon for an echo; prints pong.\n", SKP_CLI_COMMON_FLAGS, 0, false,
     cmd_ping},
    {"stats", "", "[--prometheus]",
     "Prints the daemon's counters (PROTOCOL.md, STATS), one \"name value\" a line, or in the\n"
     "Prometheus text format with the metric names of its GET /metrics.\n",
     SKP_CLI_COMMON_FLAGS | SKP_CLI_BIT(SKP_CLI_PROMETHEUS), 0, false, cmd_stats},
    {"load", "FILE", "FILE",
     "Loads FILE (uploaded if it is a local file, else a path under the daemon's --root) and\n"
     "prints the armature as `info` does.\n",
     SKP_CLI_COMMON_FLAGS, 1, false, cmd_load},
    {"info", "ARM", "ARM",
     "Prints the armature as JSON: what `skeld info` prints, byte for byte.\n",
     SKP_CLI_COMMON_FLAGS, 1, false, cmd_info},
    {"unload", "ARM", "ARM",
     "Drops the armature from the daemon's cache (requests in flight finish first); prints\n"
     "nothing. A local file is named by the id computed from it, and not sent.\n",
     SKP_CLI_COMMON_FLAGS, 1, false, cmd_unload},
    {"pose", "ARM", "ARM [flags]",
     "Evaluates and prints the constructed bones as JSON, byte for byte what `skeld eval`\n"
     "prints for the same flags.\n",
     SKP_CLI_POSE_FLAGS, 1, false, cmd_pose},
    {"mesh", "ARM", "ARM [flags]",
     "Evaluates and prints the draw list as JSON: per textured bone in draw order its atlas,\n"
     "tint, vertices (x, y, u, v) and triangle indices.\n",
     SKP_CLI_EVAL_FLAGS | SKP_CLI_OPTS_FLAGS, 1, false, cmd_mesh},
    {"render", "ARM", "ARM [flags] -o OUT.png",
     "Draws PNG pictures, byte for byte what `skeld render` writes for the same flags; with\n"
     "--frames, OUT is a pattern such as out_%04d.png unless --sheet packs the range into\n"
     "OUT.png and its JSON, OUT.json.\n",
     SKP_CLI_RENDER_FLAGS, 1, true, cmd_render},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const char globals[] =
    "options (before the command):\n"
    "  --uri URI     unix:/path or tcp://host:port (default $SKELD_URI, else\n"
    "                tcp://127.0.0.1:7878)\n"
    "  --token T     the daemon's --auth-token, sent in HELLO\n"
    "ARM: an armature id (64 lowercase hex digits), a local .skf file (sent only if\n"
    "the daemon lacks it), or a path under the daemon's --root\n";

static void print_flags(uint32_t flags, bool camera)
{
    char text[4096];
    size_t len = skp_cli_help(text, sizeof text, flags, camera);
    fputs(text, stdout);
    if (len >= sizeof text)
        fputs("  ...\n", stdout); /* a table grown past the buffer: never silently cut */
}

/* skelctl --help: every command with the names of its flags. */
static void print_help(void)
{
    puts("usage: skelctl [--uri URI] [--token T] COMMAND ARGS [flags]\n"
         "       skelctl --help | --version | COMMAND --help\n"
         "commands (COMMAND --help says what each flag does):");
    for (size_t i = 0; i < NCOMMANDS; i++) {
        const struct command *k = &commands[i];
        printf("  %s%s%s\n   ", k->name, *k->synopsis ? " " : "", k->synopsis);
        int col = 3;
        for (int f = 0; f < SKP_CLI_NFLAGS; f++) {
            const char *name = skp_cli_flag_name(f);
            if (!(k->flags & SKP_CLI_BIT(f)))
                continue;
            if (col + (int)strlen(name) + 6 > 92) {
                fputs("\n   ", stdout);
                col = 3;
            }
            col += printf(" %s--%s", f == SKP_CLI_OUTPUT ? "-o/" : "", name);
        }
        putchar('\n');
    }
    fputs(globals, stdout);
    fputs(SKP_CLI_EXIT_HELP, stdout);
}

static void print_command_help(const struct command *k)
{
    printf("usage: skelctl [--uri URI] [--token T] %s%s%s\n%s\nflags:\n", k->name,
           *k->synopsis ? " " : "", k->synopsis, k->about);
    print_flags(k->flags, k->camera);
    fputs(globals, stdout);
    fputs(SKP_CLI_EXIT_HELP, stdout);
}

static int usage_error(const char *cmd, const char *msg, const char *synopsis)
{
    fprintf(stderr, "skelctl%s%s: %s\n", cmd ? " " : "", cmd ? cmd : "", msg);
    if (cmd)
        fprintf(stderr,
                "usage: skelctl [--uri URI] [--token T] %s%s%s (skelctl %s --help lists "
                "the flags)\n",
                cmd, *synopsis ? " " : "", synopsis, cmd);
    else
        fputs("usage: skelctl [--uri URI] [--token T] COMMAND ARGS [flags] (skelctl --help)\n",
              stderr);
    return SKP_EXIT_USAGE;
}

/* Reads the command's line; *done after --help or --version. 0 or the usage exit status. */
static int parse_command(const struct command *k, int argc, char **argv, struct skp_cli_args *a,
                         bool *done)
{
    char msg[256];
    if (skp_cli_parse(argc, argv, k->flags, k->nargs, a, msg, sizeof msg)) {
        /* The slip of putting a global option after the command: say where it goes. */
        static const char *const before[] = {"--uri", "--token"};
        const char *word = !strncmp(msg, "unknown flag ", 13) ? msg + 13 : "";
        for (size_t g = 0; g < 2; g++) {
            size_t n = strlen(before[g]);
            if (!strncmp(word, before[g], n) && strchr("= ", word[n] ? word[n] : ' ')) {
                snprintf(msg, sizeof msg, "%s goes before the command: skelctl %s ... %s ...",
                         before[g], before[g], k->name);
                break;
            }
        }
        return usage_error(k->name, msg, k->synopsis);
    }
    *done = a->value[SKP_CLI_HELP] || a->value[SKP_CLI_VERSION];
    if (a->value[SKP_CLI_HELP])
        print_command_help(k);
    else if (*done)
        puts(VERSION_LINE);
    if (!*done && a->nargs != k->nargs) {
        snprintf(msg, sizeof msg, "expected %s", k->args);
        return usage_error(k->name, msg, k->synopsis);
    }
    return SKP_EXIT_OK;
}

/* The command's flags judged before connecting, so that a malformed value is a usage error
 * (2) whether or not a daemon answers, and without waiting for one. The parse runs on copies
 * of the values, since it cuts lists where they stand (strtok); the command parses them again. */
static int check_before_connect(const struct command *k, const struct skp_cli_args *a)
{
    struct skp_cli_args copy = *a;
    char *own[SKP_CLI_NFLAGS] = {NULL};
    int rc = SKP_EXIT_OK;
    for (int f = 0; f < SKP_CLI_NFLAGS && !rc; f++)
        if (a->value[f] && *a->value[f] && !(copy.value[f] = own[f] = strdup(a->value[f])))
            rc = fail(NULL, k->name);
    if (!rc && (k->flags & SKP_CLI_BIT(SKP_CLI_ANIM))) {
        skc_eval ev;
        skc_eval_init(&ev);
        if (make_eval(&copy, &ev, !k->camera))
            rc = SKP_EXIT_USAGE;
        skc_render_opts ro;
        const char *styles[SKC_MAX_STYLES], *output;
        skc_render_opts_init(&ro);
        if (!rc && k->camera)
            rc = make_render(&copy, &ro, styles, &output);
    }
    struct stat st;
    if (!rc && k->nargs >= 1 && upper_case_id(a->arg[0]) &&
        !(stat(a->arg[0], &st) == 0 && S_ISREG(st.st_mode))) {
        fprintf(stderr, "skelctl: %s: an armature id is 64 lowercase hex digits\n", a->arg[0]);
        rc = SKP_EXIT_USAGE;
    }
    for (int f = 0; f < SKP_CLI_NFLAGS; f++)
        free(own[f]);
    return rc;
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
    bool stdout_closed = outfile_keep_std_fds();
    setlocale(LC_CTYPE, ""); /* the terminal's encoding, for what shown() lets through */
    skc_options opt;
    memset(&opt, 0, sizeof opt);
    opt.uri = getenv("SKELD_URI");
    int i = 1;
    bool uri_flag = false, token_flag = false; /* each may be given once, as a command's flags */
    for (; i < argc && argv[i][0] == '-'; i++) {
        char *v;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            print_help();
            return outfile_flush_stdout("skelctl", SKP_EXIT_OK);
        }
        if (!strcmp(argv[i], "--version")) {
            puts(VERSION_LINE);
            return outfile_flush_stdout("skelctl", SKP_EXIT_OK);
        }
        bool *seen = NULL;
        if ((v = global_flag("--uri", argc, argv, &i))) {
            opt.uri = v;
            seen = &uri_flag;
        } else if ((v = global_flag("--token", argc, argv, &i))) {
            opt.auth_token = v;
            seen = &token_flag;
        }
        if (seen && *seen) {
            char msg[64];
            snprintf(msg, sizeof msg, "%s is given twice", seen == &uri_flag ? "--uri" : "--token");
            return usage_error(NULL, msg, NULL);
        }
        if (seen) {
            *seen = true;
        } else {
            char msg[128];
            if (!strcmp(argv[i], "--uri") || !strcmp(argv[i], "--token"))
                snprintf(msg, sizeof msg, "%s needs a value", argv[i]);
            else
                snprintf(msg, sizeof msg, "unknown option %.64s", argv[i]);
            return usage_error(NULL, msg, NULL);
        }
    }
    if (i >= argc)
        return usage_error(NULL, "no command", NULL);
    const struct command *k = NULL;
    for (size_t n = 0; n < NCOMMANDS && !k; n++)
        if (!strcmp(argv[i], commands[n].name))
            k = &commands[n];
    if (!k) {
        char msg[128];
        snprintf(msg, sizeof msg, "unknown command \"%.64s\"", argv[i]);
        return usage_error(NULL, msg, NULL);
    }
    struct skp_cli_args a;
    bool done = false;
    int rc = parse_command(k, argc - i, argv + i, &a, &done);
    if (done)
        return outfile_flush_stdout("skelctl", rc);
    if (rc || (rc = check_before_connect(k, &a)))
        return rc;
    /* every command prints to standard output but unload, and render with -o - only */
    const char *out = a.value[SKP_CLI_OUTPUT];
    bool prints = k->camera ? out && !strcmp(out, "-") : strcmp(k->name, "unload") != 0;
    if (stdout_closed && prints) {
        fprintf(stderr, "skelctl %s: standard output is closed\n", k->name);
        return SKP_EXIT_FAIL;
    }
    if (!opt.uri)
        opt.uri = "tcp://127.0.0.1:7878";
    skc_client *c = NULL;
    int crc = skc_connect(&c, &opt);
    if (crc == SKC_EINVAL && c) { /* the options do not read (the URI, a token too long) */
        char msg[512];
        snprintf(msg, sizeof msg, "%s: %s", opt.uri ? opt.uri : "(no --uri)", skc_errmsg(c));
        skc_free(c);
        return usage_error(NULL, msg, NULL);
    }
    if (crc) {
        char why[SHOWN_MAX];
        fprintf(stderr, "skelctl: %s: %s\n", opt.uri,
                c ? shown(skc_errmsg(c), false, why, sizeof why) : "out of memory");
        skc_free(c);
        return SKP_EXIT_FAIL;
    }
    rc = k->run(c, &a);
    skc_free(c);
    return outfile_flush_stdout("skelctl", rc);
}
