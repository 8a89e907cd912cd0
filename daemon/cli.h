/* Offline subcommands of skeld: the engine without a server. */
#ifndef SKELD_CLI_H
#define SKELD_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/errors.h"
#include "engine/pose.h"

int cli_info(int argc, char **argv);
/* stdout_closed: standard output was closed at the start (now /dev/null), so -o - is refused. */
int cli_render(int argc, char **argv, bool stdout_closed);
int cli_eval(int argc, char **argv);
int cli_conform(int argc, char **argv);

/* Loads path for subcommand cmd (decoding atlas pixels only if pixels), and puts its id (the
 * SHA-256 of its bytes) in id unless that is NULL; prints "skeld CMD: PATH: message" and
 * returns the exit status (1) on failure, 0 on success. */
int cli_load(const char *cmd, const char *path, bool pixels, struct armature **arm, uint8_t id[32]);

/* Prints "skeld CMD: message" and returns the exit status for err: 2 for a value no armature
 * takes (the command line's fault), 1 for the rest (an unknown animation or style, limits). */
int cli_fail(const char *cmd, const struct eng_error *err);

/* Writes s as a JSON string literal. */
void cli_write_json_string(FILE *out, const char *s);

/* Prints the constructed bones of p as the JSON array `skeld eval` prints (skp_json.h), with
 * matrix each bone's world matrix and tint too. Returns 0, or an error for no memory; a
 * failed write is outfile_flush_stdout's to say. */
int cli_print_pose_json(const struct pose *p, bool matrix);

#endif
