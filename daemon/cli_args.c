/* The evaluation flags of the offline subcommands, resolved against an armature. */
#include "cli_args.h"

#include <math.h>
#include <stdio.h>

#include "engine/request.h"

int cli_parse_eval(const struct armature *arm, const struct skp_cli_eval *f,
                   struct eval_request *r, struct eng_error *err)
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

int cli_parse_args(const char *cmd, int argc, char **argv, uint32_t allowed, const char *usage,
                   struct skp_cli_args *a, bool *done)
{
    char msg[256];
    *done = false;
    if (skp_cli_parse(argc, argv, allowed, 1, a, msg, sizeof msg)) {
        fprintf(stderr, "skeld %s: %s\n%s", cmd, msg, usage);
        return 2;
    }
    if (a->value[SKP_CLI_HELP]) {
        fputs(usage, stdout);
        *done = true;
        return 0;
    }
    if (a->nargs != 1) {
        fprintf(stderr, "skeld %s: expected one FILE.skf\n%s", cmd, usage);
        return 2;
    }
    return 0;
}
