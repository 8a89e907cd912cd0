/* Offline subcommands: info, eval, conform. */
#include "cli.h"
#include "work.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "engine/eval.h"
#include "engine/load.h"
#include "skp_cli.h"
#include "skp_json.h"

/* ---- shared helpers ------------------------------------------------------------------- */

int cli_fail(const char *cmd, const struct eng_error *err)
{
    fprintf(stderr, "skeld %s: %s\n", cmd, err->msg);
    return err->code == ENG_EINVAL || err->code == ENG_ENOTFOUND ? 2 : 1; /* usage errors */
}

int cli_load(const char *cmd, const char *path, bool pixels, struct armature **arm)
{
    struct load_limits lim;
    struct eng_error err;
    load_limits_default(&lim);
    lim.skip_atlas_pixels = !pixels;
    if (!armature_load_file(path, &lim, arm, &err))
        return 0;
    fprintf(stderr, "skeld %s: %s: %s\n", cmd, path, err.msg);
    return 1;
}

/* ---- JSON output ---------------------------------------------------------------------- */

void cli_write_json_string(FILE *out, const char *s)
{
    char small[256], *q = skp_json_quoted(s, small, sizeof small);
    fputs(q ? q : "\"\"", out);
    if (q != small)
        free(q);
}

int cli_write_pose_json(FILE *out, const struct pose *p)
{
    struct byte_buf b = {NULL, 0, 0};
    int rc = work_pose_json(p, &b);
    if (!rc)
        rc = fwrite(b.data, 1, b.len, out) == b.len ? 0 : -1;
    free(b.data);
    return rc;
}

/* ---- skeld info ----------------------------------------------------------------------- */

int cli_info(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: skeld info FILE.skf\n");
        return 2;
    }
    struct armature *arm;
    int rc = cli_load("info", argv[1], false, &arm);
    if (rc)
        return rc;
    struct byte_buf b = {NULL, 0, 0};
    if (work_info_json(arm, &b) || fwrite(b.data, 1, b.len, stdout) != b.len) {
        fprintf(stderr, "skeld info: out of memory or write error\n");
        rc = 1;
    }
    free(b.data);
    armature_free(arm);
    return rc;
}

/* ---- skeld eval ----------------------------------------------------------------------- */

static const char eval_usage[] =
    "usage: skeld eval FILE.skf [--anim A[,B..]] [--frame F[,G..]] [--smooth S[,..]]\n"
    "                  [--from F0] [--warmup N] [--loop] [--reverse]\n"
    "                  [--position X,Y] [--scale X,Y] [--velocity X,Y] [--y-down]\n";

int cli_eval(int argc, char **argv)
{
    struct skp_cli_args args;
    struct skp_cli_eval flags;
    bool done;
    char msg[256];
    int rc = cli_parse_args("eval", argc, argv, SKP_CLI_EVAL_FLAGS | SKP_CLI_OPTS_FLAGS,
                            eval_usage, &args, &done);
    if (rc || done)
        return rc;
    if (skp_cli_eval_parse(&args, true, &flags, msg, sizeof msg)) {
        fprintf(stderr, "skeld eval: %s\n", msg);
        return 2;
    }
    struct armature *arm;
    if ((rc = cli_load("eval", args.arg[0], false, &arm)))
        return rc;
    struct eval_request req;
    struct construct_opts opts;
    struct eng_error err;
    struct pose *p = NULL;
    if (cli_resolve_eval(arm, &flags, &req, &opts, &err)) {
        rc = cli_fail("eval", &err);
    } else if (!(p = pose_new(arm))) {
        fprintf(stderr, "skeld eval: out of memory\n");
        rc = 1;
    } else {
        eval_run(p, &req, &opts);
        if (cli_write_pose_json(stdout, p)) {
            fprintf(stderr, "skeld eval: out of memory or write error\n");
            rc = 1;
        }
    }
    pose_free(p);
    armature_free(arm);
    return rc;
}
