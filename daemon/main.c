/* skeld: argv -> subcommand. The daemon itself arrives with `skeld serve`. */
#include "autoconfig.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

#include "cli.h"
#include "config.h"
#include "log.h"
#include "outfile.h"
#include "server.h"
#include "skp_cli.h"

static const char usage[] =
    "usage: skeld [serve] [--option=value ...]    run the daemon (skeld serve --help)\n"
    "       skeld COMMAND ARGS [flags]            (skeld COMMAND --help lists its flags)\n"
    "       skeld --help | --version\n"
    "commands:\n"
    "  serve                          the daemon: binary protocol and HTTP\n"
    "  info FILE.skf                  the armature as JSON\n"
    "  eval FILE.skf [flags]          constructed bones as JSON\n"
    "  render FILE.skf [flags] -o OUT.png\n"
    "                                 PNG pictures, frame ranges, spritesheets\n"
    "  conform FILE.skf VECTORS.json  run golden vectors, report differences\n" SKP_CLI_EXIT_HELP;

/* Exit status: 0 after --help, --version or a clean stop, 1 if serving failed (startup or an
 * unclean close), 2 for bad options. */
static int serve(int argc, char **argv, int first)
{
    struct config cfg;
    int cores = (int)uv_available_parallelism();
    config_init(&cfg, cores);
    int rc = config_parse_args(&cfg, argc, argv, first, stderr);
    if (rc == 0)
        rc = config_check(&cfg, stderr);
    int level = rc == 0 ? log_parse_level(cfg.log_level) : 0; /* config_check: a level */
    /* 1: --help or --version printed, which must have got out (a full disk is a 1) */
    int status = rc == 1 ? outfile_flush_stdout("skeld", SKP_EXIT_OK) : SKP_EXIT_USAGE;
    if (rc == 0 && log_open(cfg.log_file)) {
        fprintf(stderr, "skeld: --log-file %s: %s\n", cfg.log_file, strerror(errno));
        rc = -1;
        status = SKP_EXIT_FAIL;
    }
    if (rc == 0) {
        log_set_level((enum log_level)level);
        struct config_source src = {argc, argv, first, cores};
        status = server_run(&cfg, &src);
    }
    config_free(&cfg);
    return status;
}

int main(int argc, char **argv)
{
    bool out_closed = outfile_keep_std_fds();
    if (argc < 2 || !strcmp(argv[1], "serve"))
        return serve(argc, argv, 2);
    if (!strncmp(argv[1], "--", 2) && strcmp(argv[1], "--help") && strcmp(argv[1], "--version"))
        return serve(argc, argv, 1);
    /* the daemon's lines go to /dev/null then; a command's output would be lost (render
     * writes files, and says so itself for -o -) */
    if (out_closed && strcmp(argv[1], "render")) {
        fprintf(stderr, "skeld %s: standard output is closed\n", argv[1]);
        return SKP_EXIT_FAIL;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(usage, stdout);
        return outfile_flush_stdout("skeld", SKP_EXIT_OK);
    }
    if (!strcmp(argv[1], "--version")) {
        puts(PACKAGE_STRING);
        return outfile_flush_stdout("skeld", SKP_EXIT_OK);
    }
    if (!strcmp(argv[1], "info"))
        return outfile_flush_stdout("skeld", cli_info(argc - 1, argv + 1));
    if (!strcmp(argv[1], "eval"))
        return outfile_flush_stdout("skeld", cli_eval(argc - 1, argv + 1));
    if (!strcmp(argv[1], "render"))
        return outfile_flush_stdout("skeld", cli_render(argc - 1, argv + 1, out_closed));
    if (!strcmp(argv[1], "conform"))
        return outfile_flush_stdout("skeld", cli_conform(argc - 1, argv + 1));
    fprintf(stderr, "skeld: unknown command \"%s\"\n%s", argv[1], usage);
    return SKP_EXIT_USAGE;
}
