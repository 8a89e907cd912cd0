/* skeld: argv -> subcommand. The daemon itself arrives with `skeld serve`. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: skeld COMMAND [ARGS]\n"
    "  info FILE.skf                 armature summary as JSON\n"
    "  eval FILE.skf [flags]         constructed bones as JSON (see skeld eval --help)\n"
    "  render FILE.skf [flags] -o OUT PNG pictures, frame ranges, spritesheets\n"
    "  conform FILE.skf VECTORS.json run golden vectors, report differences\n";

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version")) {
        puts(PACKAGE_STRING);
        return 0;
    }
    if (!strcmp(argv[1], "info"))
        return cli_info(argc - 1, argv + 1);
    if (!strcmp(argv[1], "eval"))
        return cli_eval(argc - 1, argv + 1);
    if (!strcmp(argv[1], "render"))
        return cli_render(argc - 1, argv + 1);
    if (!strcmp(argv[1], "conform"))
        return cli_conform(argc - 1, argv + 1);
    fprintf(stderr, "skeld: unknown command \"%s\"\n%s", argv[1], usage);
    return 2;
}
