/* Command-line flags shared by `skeld eval` and `skeld render`: the evaluation knobs
 * (animations, frames, smoothing, from, warmup, loop, reverse) and engine options. */
#ifndef SKELD_CLI_ARGS_H
#define SKELD_CLI_ARGS_H

#include "engine/eval.h"

/* The flags as typed, before they are resolved against an armature. Pointers into argv. */
struct eval_flags {
    char *anim_list;
    char *frame_list, *smooth_list;
    char *from, *warmup;
    char *position, *scale, *velocity;
    bool loop, reverse, y_down;
};

/* Takes "--flag value" or "--flag=value" at argv[*i] (advancing *i past a separate value);
 * returns the value or NULL. */
char *cli_flag_value(const char *flag, int argc, char **argv, int *i);

/* 1 if argv[*i] was an evaluation flag (consumed), 0 if not. */
int cli_take_eval_flag(struct eval_flags *f, int argc, char **argv, int *i);

/* 1 if argv[*i] was an engine-option flag (--position, --scale, --velocity, --y-down). */
int cli_take_opts_flag(struct eval_flags *f, int argc, char **argv, int *i);

/* Resolves the evaluation and engine-option flags against arm into a request and its
 * options, checked by the request model (request_check_eval, no work limit offline). */
int cli_resolve_eval(const struct armature *arm, struct eval_flags *f, struct eval_request *r,
                     struct construct_opts *o, struct eng_error *err);

/* The evaluation flags alone, unchecked: for callers whose request model check comes later
 * (skeld render, whose ranges set the frames). */
int cli_parse_eval(const struct armature *arm, struct eval_flags *f, struct eval_request *r,
                   struct eng_error *err);

/* Resolves --position/--scale/--velocity/--y-down into construct options. */
int cli_resolve_opts(struct eval_flags *f, struct construct_opts *o, struct eng_error *err);

/* Parses "X,Y" (or one number for both) into out. */
int cli_parse_vec2(const char *flag, char *s, struct vec2 *out, struct eng_error *err);

/* Splits a comma list in place into at most max items; returns the count or -1. */
int cli_split_list(char *s, char **items, int max);

#endif
