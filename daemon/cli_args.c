/* The evaluation flags of the offline subcommands, resolved against an armature. */
#include "autoconfig.h"

#include "cli_args.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/request.h"

int cli_parse_eval(const struct armature *arm, const struct skp_cli_eval *f, struct eval_request *r,
                   struct eng_error *err)
{
    eval_request_init(r);
    for (unsigned i = 0; i < f->count; i++) {
        struct eng_error why;
        if (request_find_anim(arm, f->anims[i], &r->anims[i], &why))
            return eng_seterr(err, why.code, "--anim: %s", why.msg);
        r->frames[i] = f->frames[i];
        r->smooth[i] = f->smooth[i];
    }
    r->count = f->count;
    r->has_from = f->has_from;
    r->from = f->from;
    /* The request model judges the range; keep what does not fit a long out of its reach. */
    r->warmup = fabs(f->warmup) < 1e15 ? (long)f->warmup : -1;
    r->loop = f->loop;
    r->reverse = f->reverse;
    return 0;
}

int cli_resolve_eval(const struct armature *arm, const struct skp_cli_eval *f,
                     struct eval_request *r, struct construct_opts *o, struct eng_error *err)
{
    int rc = cli_parse_eval(arm, f, r, err);
    if (rc)
        return rc;
    *o = (struct construct_opts){{f->position[0], f->position[1]},
                                 {f->scale[0], f->scale[1]},
                                 {f->velocity[0], f->velocity[1]},
                                 f->y_down};
    return request_check_eval(arm, r, o, NULL, err);
}

static void print_help(const struct cli_command *cmd)
{
    printf("usage: skeld %s %s\n%s\nflags:\n", cmd->name, cmd->synopsis, cmd->about);
    size_t len = skp_cli_help(NULL, 0, cmd->flags, cmd->camera);
    char *text = malloc(len + 1);
    if (text) { /* else the flags go unlisted: --help still answers */
        skp_cli_help(text, len + 1, cmd->flags, cmd->camera);
        fputs(text, stdout);
    }
    free(text);
    fputs(SKP_CLI_EXIT_HELP, stdout);
}

int cli_parse_args(const struct cli_command *cmd, int argc, char **argv, struct skp_cli_args *a,
                   bool *done)
{
    char msg[256];
    int rc = skp_cli_parse(argc, argv, cmd->flags, cmd->nargs, a, msg, sizeof msg);
    *done = !rc && (a->value[SKP_CLI_HELP] || a->value[SKP_CLI_VERSION]);
    if (*done && a->value[SKP_CLI_HELP])
        print_help(cmd);
    else if (*done)
        puts(PACKAGE_STRING);
    if (!rc && !*done && a->nargs != cmd->nargs) {
        snprintf(msg, sizeof msg, "expected %s", cmd->args);
        rc = -1;
    }
    if (!rc)
        return SKP_EXIT_OK;
    fprintf(stderr, "skeld %s: %s\nusage: skeld %s %s (skeld %s --help lists the flags)\n",
            cmd->name, msg, cmd->name, cmd->synopsis, cmd->name);
    return SKP_EXIT_USAGE;
}
