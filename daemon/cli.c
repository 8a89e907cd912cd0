/* Offline subcommands: info, eval, conform. */
#include "cli.h"
#include "sha256.h"
#include "work.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "outfile.h"
#include "engine/eval.h"
#include "engine/load.h"
#include "skp_cli.h"
#include "skp_json.h"

_Static_assert(SKP_CLI_MAX_STEPS == EVAL_MAX_STEPS, "skelctl refuses the ranges skeld render does");

/* ---- shared helpers ------------------------------------------------------------------- */

int cli_fail(const char *cmd, const struct eng_error *err)
{
    fprintf(stderr, "skeld %s: %s\n", cmd, err->msg);
    /* A value no armature could take is the command line's fault; anything judged against the
     * file (an unknown animation or style included) is not. */
    return err->code == ENG_EINVAL ? SKP_EXIT_USAGE : SKP_EXIT_FAIL;
}

int cli_load(const char *cmd, const char *path, bool pixels, struct armature **arm, uint8_t id[32])
{
    struct load_limits lim;
    struct eng_error err;
    load_limits_default(&lim);
    lim.skip_atlas_pixels = !pixels;
    void *bytes = NULL;
    size_t len;
    int rc = eng_read_file(path, lim.max_uncompressed, &bytes, &len, &err);
    if (!rc && id && sha256(bytes, len, id))
        rc = eng_seterr(&err, ENG_ENOMEM, "out of memory");
    if (!rc)
        rc = armature_load(bytes, len, &lim, arm, &err);
    free(bytes);
    if (!rc)
        return SKP_EXIT_OK;
    /* A file that cannot be read is named by the message already. */
    bool named = !strncmp(err.msg, path, strlen(path));
    fprintf(stderr, "skeld %s: %s%s%s\n", cmd, named ? "" : path, named ? "" : ": ", err.msg);
    return SKP_EXIT_FAIL;
}

/* ---- JSON output ---------------------------------------------------------------------- */

void cli_write_json_string(FILE *out, const char *s)
{
    char small[256], *q = skp_json_quoted(s, small, sizeof small);
    fputs(q ? q : "\"\"", out);
    if (q != small)
        free(q);
}

int cli_print_pose_json(const struct pose *p, bool matrix)
{
    struct byte_buf b = {NULL, 0, 0};
    int rc = work_pose_json(p, matrix, &b);
    if (!rc)
        outfile_stdout(b.data, b.len); /* a failure is outfile_flush_stdout's to say */
    free(b.data);
    return rc;
}

/* ---- skeld info ----------------------------------------------------------------------- */

static const struct cli_command info_cmd = {
    .name = "info",
    .args = "FILE.skf",
    .synopsis = "FILE.skf",
    .about = "Prints the armature as JSON: its id (SHA-256 of the file), format version and\n"
             "layout, bones, animations, styles, atlases, IK family, vertex and keyframe counts\n"
             "(skelctl info prints the same, byte for byte).\n",
    .flags = SKP_CLI_COMMON_FLAGS,
    .nargs = 1};

int cli_info(int argc, char **argv)
{
    struct skp_cli_args args;
    bool done;
    int rc = cli_parse_args(&info_cmd, argc, argv, &args, &done);
    if (rc || done)
        return rc;
    struct armature *arm;
    uint8_t id[32];
    if ((rc = cli_load("info", args.arg[0], false, &arm, id)))
        return rc;
    struct byte_buf b = {NULL, 0, 0};
    if (work_info_json(arm, id, &b)) {
        fprintf(stderr, "skeld info: out of memory\n");
        rc = SKP_EXIT_FAIL;
    } else {
        outfile_stdout(b.data, b.len); /* a failure is outfile_flush_stdout's to say */
    }
    free(b.data);
    armature_free(arm);
    return rc;
}

/* ---- skeld eval ----------------------------------------------------------------------- */

static const struct cli_command eval_cmd = {
    .name = "eval",
    .args = "FILE.skf",
    .synopsis = "FILE.skf [flags]",
    .about = "Evaluates one fresh instance and prints its constructed bones as a JSON array in\n"
             "bone id order (skelctl pose prints the same bytes for the same flags).\n",
    .flags = SKP_CLI_POSE_FLAGS,
    .nargs = 1};

int cli_eval(int argc, char **argv)
{
    struct skp_cli_args args;
    struct skp_cli_eval flags;
    bool done;
    char msg[256];
    int rc = cli_parse_args(&eval_cmd, argc, argv, &args, &done);
    if (rc || done)
        return rc;
    if (skp_cli_eval_parse(&args, true, &flags, msg, sizeof msg)) {
        fprintf(stderr, "skeld eval: %s\n", msg);
        return SKP_EXIT_USAGE;
    }
    struct armature *arm;
    if ((rc = cli_load("eval", args.arg[0], false, &arm, NULL)))
        return rc;
    struct eval_request req;
    struct construct_opts opts;
    struct eng_error err;
    struct pose *p = NULL;
    if (cli_resolve_eval(arm, &flags, &req, &opts, &err)) {
        rc = cli_fail("eval", &err);
    } else if (!(p = pose_new(arm))) {
        fprintf(stderr, "skeld eval: out of memory\n");
        rc = SKP_EXIT_FAIL;
    } else {
        eval_run(p, &req, &opts);
        if (pose_check_finite(p, &err)) {
            rc = cli_fail("eval", &err);
        } else if (cli_print_pose_json(p, args.value[SKP_CLI_MATRIX] != NULL)) {
            fprintf(stderr, "skeld eval: out of memory\n");
            rc = SKP_EXIT_FAIL;
        }
    }
    pose_free(p);
    armature_free(arm);
    return rc;
}
