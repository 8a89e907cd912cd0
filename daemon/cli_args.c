/* Parsing of the evaluation flags shared by the offline subcommands. */
#include "cli_args.h"

#include "engine/request.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int cli_split_list(char *s, char **items, int max)
{
    int n = 0;
    for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
        if (n == max)
            return -1;
        items[n++] = tok;
    }
    return n;
}

static int parse_numbers(char *s, double *out, unsigned *count)
{
    char *items[EVAL_MAX_ANIMS];
    int n = cli_split_list(s, items, EVAL_MAX_ANIMS);
    if (n <= 0)
        return -1;
    for (int i = 0; i < n; i++) {
        char *end;
        out[i] = strtod(items[i], &end);
        if (end == items[i] || *end || !isfinite(out[i]))
            return -1;
    }
    *count = (unsigned)n;
    return 0;
}

char *cli_flag_value(const char *flag, int argc, char **argv, int *i)
{
    size_t n = strlen(flag);
    if (strncmp(argv[*i], flag, n) != 0)
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] == 0 && *i + 1 < argc)
        return argv[++*i];
    return NULL;
}

int cli_take_eval_flag(struct eval_flags *f, int argc, char **argv, int *i)
{
    char *v;
    if (!strcmp(argv[*i], "--loop"))
        return f->loop = true;
    if (!strcmp(argv[*i], "--reverse"))
        return f->reverse = true;
    if ((v = cli_flag_value("--anim", argc, argv, i)))
        return f->anim_list = v, 1;
    if ((v = cli_flag_value("--frame", argc, argv, i)))
        return f->frame_list = v, 1;
    if ((v = cli_flag_value("--smooth", argc, argv, i)))
        return f->smooth_list = v, 1;
    if ((v = cli_flag_value("--from", argc, argv, i)))
        return f->from = v, 1;
    if ((v = cli_flag_value("--warmup", argc, argv, i)))
        return f->warmup = v, 1;
    return 0;
}

int cli_take_opts_flag(struct eval_flags *f, int argc, char **argv, int *i)
{
    char *v;
    if (!strcmp(argv[*i], "--y-down"))
        return f->y_down = true;
    if ((v = cli_flag_value("--position", argc, argv, i)))
        return f->position = v, 1;
    if ((v = cli_flag_value("--scale", argc, argv, i)))
        return f->scale = v, 1;
    if ((v = cli_flag_value("--velocity", argc, argv, i)))
        return f->velocity = v, 1;
    return 0;
}

int cli_parse_vec2(const char *flag, char *s, struct vec2 *out, struct eng_error *err)
{
    double v[EVAL_MAX_ANIMS];
    unsigned n = 0;
    if (parse_numbers(s, v, &n) || n > 2)
        return eng_seterr(err, ENG_EINVAL, "%s: expected X,Y", flag);
    *out = (struct vec2){v[0], n == 2 ? v[1] : v[0]};
    return 0;
}

int cli_resolve_opts(struct eval_flags *f, struct construct_opts *o, struct eng_error *err)
{
    construct_opts_default(o);
    o->y_down = f->y_down;
    int rc = 0;
    if (f->position && (rc = cli_parse_vec2("--position", f->position, &o->position, err)))
        return rc;
    if (f->scale && (rc = cli_parse_vec2("--scale", f->scale, &o->scale, err)))
        return rc;
    if (f->velocity && (rc = cli_parse_vec2("--velocity", f->velocity, &o->velocity, err)))
        return rc;
    return 0;
}

static int resolve_anims(const struct armature *arm, char *list, struct eval_request *r,
                         struct eng_error *err)
{
    char *items[EVAL_MAX_ANIMS];
    int n = cli_split_list(list, items, EVAL_MAX_ANIMS);
    if (n < 0)
        return eng_seterr(err, ENG_EINVAL, "--anim: at most %d animations", EVAL_MAX_ANIMS);
    for (int i = 0; i < n; i++) {
        struct eng_error why;
        if (request_find_anim(arm, items[i], &r->anims[i], &why))
            return eng_seterr(err, ENG_EINVAL, "--anim: %s", why.msg);
    }
    r->count = (unsigned)n;
    return 0;
}

static int resolve_numbers(struct eval_flags *f, struct eval_request *r, struct eng_error *err)
{
    unsigned nf = 0, ns = 0;
    if (f->frame_list && parse_numbers(f->frame_list, r->frames, &nf))
        return eng_seterr(err, ENG_EINVAL, "--frame: expected numbers separated by commas");
    if (f->smooth_list && parse_numbers(f->smooth_list, r->smooth, &ns))
        return eng_seterr(err, ENG_EINVAL, "--smooth: expected numbers separated by commas");
    /* One value stands for every animation. */
    for (unsigned i = nf; nf == 1 && i < r->count; i++)
        r->frames[i] = r->frames[0];
    for (unsigned i = ns; ns == 1 && i < r->count; i++)
        r->smooth[i] = r->smooth[0];
    if (r->count && nf > 1 && nf != r->count)
        return eng_seterr(err, ENG_EINVAL, "--frame: %u values for %u animations", nf, r->count);
    if (ns > 1 && ns != r->count)
        return eng_seterr(err, ENG_EINVAL, "--smooth: %u values for %u animations", ns, r->count);
    return 0;
}

static int parse_long(const char *s, long *out)
{
    char *end;
    *out = strtol(s, &end, 10);
    return end == s || *end ? -1 : 0;
}

int cli_resolve_eval(const struct armature *arm, struct eval_flags *f, struct eval_request *r,
                     struct construct_opts *o, struct eng_error *err)
{
    int rc = cli_parse_eval(arm, f, r, err);
    if (rc || (rc = cli_resolve_opts(f, o, err)))
        return rc;
    return request_check_eval(arm, r, o, NULL, err);
}

int cli_parse_eval(const struct armature *arm, struct eval_flags *f, struct eval_request *r,
                   struct eng_error *err)
{
    eval_request_init(r);
    int rc;
    if (f->anim_list && (rc = resolve_anims(arm, f->anim_list, r, err)))
        return rc;
    if ((rc = resolve_numbers(f, r, err)))
        return rc;
    if (f->from) {
        char *end;
        r->from = strtod(f->from, &end);
        if (end == f->from || *end)
            return eng_seterr(err, ENG_EINVAL, "--from: expected a number");
        r->has_from = true;
    }
    if (f->warmup && parse_long(f->warmup, &r->warmup))
        return eng_seterr(err, ENG_EINVAL, "--warmup: expected a whole number");
    r->loop = f->loop;
    r->reverse = f->reverse;
    return 0;
}
