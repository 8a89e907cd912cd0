/* The daemon: loop ownership, listeners, signals and the shutdown sequence. It wires the
 * connection layer (conn.h) to the request layer (dispatch.h) and moves bytes; it does no
 * bone math and knows no message. Loop thread only. */
#ifndef SKELD_SERVER_H
#define SKELD_SERVER_H

#include "config.h"

/* The command line the configuration came from, read again on SIGHUP (with its --config
 * file) to reload what can change at run time. */
struct config_source {
    int argc;
    char **argv;
    int first;
    int cores; /* --threads' default at the start */
};

/* Runs the daemon until SIGINT/SIGTERM; SIGHUP reloads the configuration from src. Returns
 * the process exit status. */
int server_run(struct config *cfg, const struct config_source *src);

#endif
