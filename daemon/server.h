/* The daemon: loop ownership, listeners, signals and the shutdown sequence. It wires the
 * connection layer (conn.h) to the request layer (dispatch.h) and moves bytes; it does no
 * bone math and knows no message. Loop thread only. */
#ifndef SKELD_SERVER_H
#define SKELD_SERVER_H

#include "config.h"

/* Runs the daemon until SIGINT/SIGTERM. Returns the process exit status. */
int server_run(struct config *cfg);

#endif
