/* The command lines' shared parts (skeld eval/render and skelctl pose/mesh/render): one flag
 * table and parser, the evaluation flags' syntax, and small value parsers, so the same flag
 * means the same thing in both programs. No I/O. */
#ifndef SKP_CLI_H
#define SKP_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "skp.h"

/* Every flag, by index; SKP_CLI_BIT(f) in a command's mask allows it. */
enum skp_cli_flag {
    SKP_CLI_ANIM,
    SKP_CLI_FRAME,
    SKP_CLI_SMOOTH,
    SKP_CLI_FROM,
    SKP_CLI_WARMUP,
    SKP_CLI_LOOP,
    SKP_CLI_REVERSE,
    SKP_CLI_POSITION, /* engine option, or (render) the camera's */
    SKP_CLI_SCALE,    /* engine option, or (render) the camera's */
    SKP_CLI_VELOCITY,
    SKP_CLI_Y_DOWN,
    SKP_CLI_FRAMES,
    SKP_CLI_SIZE,
    SKP_CLI_FIT,
    SKP_CLI_STYLE,
    SKP_CLI_BACKGROUND,
    SKP_CLI_SAMPLES,
    SKP_CLI_PNG_LEVEL,
    SKP_CLI_SHEET,
    SKP_CLI_OUTPUT,
    SKP_CLI_MATRIX,     /* pose: each bone's world matrix and tint too */
    SKP_CLI_PROMETHEUS, /* skelctl stats: the Prometheus text format */
    SKP_CLI_HELP,
    SKP_CLI_VERSION,
    SKP_CLI_NFLAGS
};
#define SKP_CLI_BIT(f) (1u << (f))
/* What every command takes: --help and --version. */
#define SKP_CLI_COMMON_FLAGS (SKP_CLI_BIT(SKP_CLI_HELP) | SKP_CLI_BIT(SKP_CLI_VERSION))
/* The flags of an evaluation (skeld eval, skelctl pose and mesh) ... */
#define SKP_CLI_EVAL_FLAGS                                                                         \
    (SKP_CLI_BIT(SKP_CLI_ANIM) | SKP_CLI_BIT(SKP_CLI_FRAME) | SKP_CLI_BIT(SKP_CLI_SMOOTH) |        \
     SKP_CLI_BIT(SKP_CLI_FROM) | SKP_CLI_BIT(SKP_CLI_WARMUP) | SKP_CLI_BIT(SKP_CLI_LOOP) |         \
     SKP_CLI_BIT(SKP_CLI_REVERSE) | SKP_CLI_COMMON_FLAGS)
/* ... with its engine options ... */
#define SKP_CLI_OPTS_FLAGS                                                                         \
    (SKP_CLI_BIT(SKP_CLI_POSITION) | SKP_CLI_BIT(SKP_CLI_SCALE) | SKP_CLI_BIT(SKP_CLI_VELOCITY) |  \
     SKP_CLI_BIT(SKP_CLI_Y_DOWN))
/* ... of a pose (skeld eval, skelctl pose), which may print the matrices and tints too ... */
#define SKP_CLI_POSE_FLAGS (SKP_CLI_EVAL_FLAGS | SKP_CLI_OPTS_FLAGS | SKP_CLI_BIT(SKP_CLI_MATRIX))
/* ... and of a render (skeld render, skelctl render), whose --scale and --position are the
 * camera's. */
#define SKP_CLI_RENDER_FLAGS                                                                       \
    (SKP_CLI_EVAL_FLAGS | SKP_CLI_BIT(SKP_CLI_POSITION) | SKP_CLI_BIT(SKP_CLI_SCALE) |             \
     SKP_CLI_BIT(SKP_CLI_FRAMES) | SKP_CLI_BIT(SKP_CLI_SIZE) | SKP_CLI_BIT(SKP_CLI_FIT) |          \
     SKP_CLI_BIT(SKP_CLI_STYLE) | SKP_CLI_BIT(SKP_CLI_BACKGROUND) | SKP_CLI_BIT(SKP_CLI_SAMPLES) | \
     SKP_CLI_BIT(SKP_CLI_PNG_LEVEL) | SKP_CLI_BIT(SKP_CLI_SHEET) | SKP_CLI_BIT(SKP_CLI_OUTPUT))

/* Exit statuses of both programs, every command: success, a runtime, load or server error,
 * a usage error (the command line itself is wrong). */
enum { SKP_EXIT_OK = 0, SKP_EXIT_FAIL = 1, SKP_EXIT_USAGE = 2 };

/* What --help says of the exit statuses, in both programs. */
#define SKP_CLI_EXIT_HELP "exit status: 0 success, 1 runtime, load or server error, 2 usage error\n"

#define SKP_CLI_MAX_ARGS 4

/* A command line as typed: each flag's value (NULL if absent, "" for a switch given), and
 * the arguments that are not flags. Pointers into argv. */
struct skp_cli_args {
    char *value[SKP_CLI_NFLAGS];
    char *arg[SKP_CLI_MAX_ARGS];
    int nargs;
};

/* Parses argv[1..argc) (argv[0] names the command) against the flags in allowed, with
 * getopt_long (whose global state makes this a front-end-only call). "--flag value" and
 * "--flag=value" both work, flags and arguments in any order. Returns 0, or -1 with msg
 * naming the problem: an unknown flag, one the command does not take, a missing value, more
 * than max_args arguments. */
int skp_cli_parse(int argc, char **argv, uint32_t allowed, int max_args, struct skp_cli_args *a,
                  char *msg, size_t cap);

/* The long name of flag f ("anim", "png-level"), without its dashes. */
const char *skp_cli_flag_name(int f);

/* A message of this parser as a query's: each flag it names ("--frame") by its parameter's
 * name ("frame"), in place. Other words with dashes (a daemon option) and anything quoted
 * (a value as the client sent it) stay. */
void skp_cli_as_query(char *msg);

/* What --help says of the flags in allowed: one line per flag, in table order, each naming
 * the flag, the shape of its value and what it does ("  --anim A[,B..]  animations to ...").
 * camera: --scale and --position are a render's camera, not engine options. Same buffer
 * contract as snprintf. */
size_t skp_cli_help(char *buf, size_t cap, uint32_t allowed, bool camera);

/* The most steps one play may take (the engine's EVAL_MAX_STEPS, asserted equal where both
 * are seen): skelctl refuses a range past it before sending anything, as skeld render does,
 * since its requests each take a part of the range. */
#define SKP_CLI_MAX_STEPS 100000000L

/* The room the programs give an output path (OUT, OUT.json, a frame pattern filled in). */
#define SKP_CLI_PATH_MAX 4096

/* The sheet's JSON file beside OUT (as `--sheet ... -o OUT` writes it): OUT with a final
 * ".png" (any case) replaced by ".json", or ".json" appended when OUT does not end so
 * ("hop.png" -> "hop.json", "hop" -> "hop.json"). 0, or -1 if that does not fit in cap. */
int skp_cli_sheet_json_path(char *buf, size_t cap, const char *output);

/* The evaluation flags' syntax: animation names (split in place), one frame or smoothing
 * value per animation or one for all, from, warm-up, loop/reverse/y-down, and the engine
 * options (position 0, scale 1, velocity 0 when absent). Values are judged later by the
 * daemon's or the engine's one validator. */
struct skp_cli_eval {
    char *anims[SKP_MAX_ANIMS];
    unsigned count;
    double frames[SKP_MAX_ANIMS], smooth[SKP_MAX_ANIMS];
    bool has_from;
    double from;
    double warmup; /* a whole number, not yet range-checked */
    bool loop, reverse, y_down;
    double position[2], scale[2], velocity[2];
};

/* 0, or -1 with msg naming the flag. engine_opts: read --position/--scale/--velocity as
 * engine options (else they are left at their defaults for the camera's caller). */
int skp_cli_eval_parse(struct skp_cli_args *a, bool engine_opts, struct skp_cli_eval *e, char *msg,
                       size_t cap);

/* The render flags' syntax, shared by skeld render and skelctl render. Absent flags take
 * skeld render's defaults (512x512, transparent, fit 0.9, 4 samples, skeld's PNG encoder);
 * values are judged later by the one validator. --scale without --position centres the
 * origin: position (width / 2, -height / 2). */
struct skp_cli_render {
    uint32_t width, height;
    uint8_t background[4];
    bool fit; /* else the explicit camera: scale and position */
    double fraction;
    double scale[2], position[2];
    char *styles[SKP_MAX_STYLES]; /* names or indices, split in place */
    unsigned style_count;
    uint32_t samples;
    int png_level; /* SKP_CLI_PNG_DEFAULT (default or fast), or 0-9 as typed */
    bool range;
    uint32_t first, last;
    uint32_t cols, rows;
    const char *output; /* NULL if absent */
};

/* 0, or -1 with msg naming the flag. */
int skp_cli_render_parse(struct skp_cli_args *a, struct skp_cli_render *r, char *msg, size_t cap);

/* The output rules of the command lines (-o required; a sheet needs a file name; a range
 * without a sheet needs a %d pattern). 0, or -1 with msg. */
int skp_cli_render_output(const struct skp_cli_render *r, char *msg, size_t cap);

/* A URL query ("anim=Walk&frame=10&loop", decoded in place) as the same flags: names are the
 * flags without their dashes, switches are on when present without a value or with 1 or true.
 * 0, or -1 with msg naming the parameter (unknown, not for this resource, malformed). */
int skp_cli_query(char *query, uint32_t allowed, struct skp_cli_args *a, char *msg, size_t cap);

/* Percent-decoding in place ('+' stays '+': for paths); false on a malformed escape or a
 * NUL. */
bool skp_cli_path_decode(char *s);

struct skp_eval_req;
struct skp_render_req;

/* The parsed flags as the wire's messages (names are views of e's and r's strings). The
 * render one returns -1 with msg when a value does not fit its wire field. */
void skp_cli_eval_req(const struct skp_cli_eval *e, struct skp_eval_req *m);
/* --png-level as parsed: the engine's own values (render_cli.c passes them straight on). */
#define SKP_CLI_PNG_DEFAULT (-2)

/* The wire's png level byte for a parsed --png-level (SKP_PNG_DEFAULT or 0-9). */
uint8_t skp_cli_png_wire(int level);

int skp_cli_render_req(const struct skp_cli_render *r, struct skp_render_req *m, char *msg,
                       size_t cap);

/* "a,b,c" as decimal numbers (finite; no hexadecimal, spaces or trailing comma): the count, or
 * -1 if malformed or more than max. */
int skp_cli_numbers(const char *s, double *out, int max);

/* A whole number in decimal, all of s: digits with a '-' before them at most (no spaces, no
 * '+', nothing after), within lo..hi. 0, SKP_CLI_NOT_WHOLE or SKP_CLI_OUT_OF_RANGE. Every
 * front's whole numbers (flags, query parameters, the daemon's options and config file). */
enum { SKP_CLI_NOT_WHOLE = -1, SKP_CLI_OUT_OF_RANGE = -2 };
int skp_cli_whole(const char *s, long long lo, long long hi, long long *out);

/* "X,Y" or one number for both: 0, or -1. */
int skp_cli_vec2(const char *s, double out[2]);

/* "AsepB" with two whole numbers (e.g. "512x512", "0-49"): 0, or -1 if malformed. */
int skp_cli_pair(const char *s, char sep, long *a, long *b);

/* "RRGGBB" or "RRGGBBAA" in hex -> straight RGBA: 0, or -1. */
int skp_cli_color(const char *s, uint8_t out[4]);

/* True if s holds exactly one integer conversion (%d, %04d, ...) and no other: a file name
 * pattern for numbered frames. */
bool skp_cli_frame_pattern(const char *s);

/* An output file name: output itself, or (pattern) output with frame put in its one integer
 * conversion, then suffix. 0, or -1 if that does not fit in cap bytes. */
int skp_cli_out_path(char *buf, size_t cap, const char *output, bool pattern, long frame,
                     const char *suffix);

/* A progress bar line for done of total: "\r[####    ] done/total", with a newline once
 * done == total. Same buffer contract as snprintf. */
size_t skp_cli_progress(char *buf, size_t cap, long done, long total);

/* Whether s is well-formed UTF-8 (RFC 3629). */
bool skp_utf8_valid(const char *s);

/* s as a JSON string literal (quotes included) into buf, truncated at cap (terminated when
 * cap > 0): each byte that is not part of well-formed UTF-8 written as \ufffd, so the JSON
 * is valid whatever s holds. Returns the length it needs, excluding the terminator. */
size_t skp_json_quote(char *buf, size_t cap, const char *s);

/* s as a JSON string literal, in small when it fits in cap bytes, else malloc'd; NULL when
 * memory runs out. Free the result when it is not small. */
char *skp_json_quoted(const char *s, char *small, size_t cap);

#endif
