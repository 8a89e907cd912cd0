/* The evaluation flags of `skeld eval` and `skeld render` resolved against an armature: the
 * syntax is proto/skp_cli's (shared with skelctl), the judging the engine's request model. */
#ifndef SKELD_CLI_ARGS_H
#define SKELD_CLI_ARGS_H

#include "engine/eval.h"
#include "skp_cli.h"

/* The parsed flags as an evaluation request: animation names resolved (an unknown one lists
 * the valid names), unchecked. 0 or ENG_EINVAL with err. */
int cli_parse_eval(const struct armature *arm, const struct skp_cli_eval *f, struct eval_request *r,
                   struct eng_error *err);

/* The same plus the engine options, checked by request_check_eval (no work limit offline). */
int cli_resolve_eval(const struct armature *arm, const struct skp_cli_eval *f,
                     struct eval_request *r, struct construct_opts *o, struct eng_error *err);

/* An offline subcommand's command line: what --help says of it and what it takes. */
struct cli_command {
    const char *name;     /* "eval" */
    const char *args;     /* its arguments: "FILE.skf" */
    const char *synopsis; /* its command line after the name: "FILE.skf [flags]" */
    const char *about;    /* what it does, a line or two (each ending in a newline) */
    uint32_t flags;       /* the flags of proto/skp_cli's table it takes */
    int nargs;            /* how many arguments, exactly */
    bool camera;          /* --scale and --position are a render's camera */
};

/* Parses argv (argv[0] the subcommand) for cmd. --help prints the command's help to stdout:
 * synopsis, about, every flag it takes (from the shared table) and the exit statuses;
 * --version prints the version; either sets *done. Returns 0, or the exit status 2 after
 * printing the problem (an unknown flag, one the command does not take, the wrong number of
 * arguments) to stderr. */
int cli_parse_args(const struct cli_command *cmd, int argc, char **argv, struct skp_cli_args *a,
                   bool *done);

#endif
