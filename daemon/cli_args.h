/* The evaluation flags of `skeld eval` and `skeld render` resolved against an armature: the
 * syntax is proto/skp_cli's (shared with skelctl), the judging the engine's request model. */
#ifndef SKELD_CLI_ARGS_H
#define SKELD_CLI_ARGS_H

#include "engine/eval.h"
#include "skp_cli.h"

/* The parsed flags as an evaluation request: animation names resolved (an unknown one lists
 * the valid names), unchecked. 0 or ENG_EINVAL with err. */
int cli_parse_eval(const struct armature *arm, const struct skp_cli_eval *f,
                   struct eval_request *r, struct eng_error *err);

/* The same plus the engine options, checked by request_check_eval (no work limit offline). */
int cli_resolve_eval(const struct armature *arm, const struct skp_cli_eval *f,
                     struct eval_request *r, struct construct_opts *o, struct eng_error *err);

/* Parses argv for subcommand cmd ("eval", "render") against the flags in allowed, with one
 * argument (the file). Prints the problem or, for --help, usage (to stdout, returning 0 with
 * *done set); returns 0, or the exit status 2. */
int cli_parse_args(const char *cmd, int argc, char **argv, uint32_t allowed, const char *usage,
                   struct skp_cli_args *a, bool *done);

#endif
