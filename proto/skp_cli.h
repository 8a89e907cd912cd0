/* Small parsers shared by the two command lines (skeld render and skelctl render), so the
 * same flags mean the same thing in both. No I/O. */
#ifndef SKP_CLI_H
#define SKP_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "AsepB" with two whole numbers (e.g. "512x512", "0-49"): 0, or -1 if malformed. */
int skp_cli_pair(const char *s, char sep, long *a, long *b);

/* "RRGGBB" or "RRGGBBAA" in hex -> straight RGBA: 0, or -1. */
int skp_cli_color(const char *s, uint8_t out[4]);

/* True if s holds exactly one integer conversion (%d, %04d, ...) and no other: a file name
 * pattern for numbered frames. */
bool skp_cli_frame_pattern(const char *s);

/* An output file name: output itself, or (pattern) output with frame put in its one integer
 * conversion, then suffix. 0, or -1 if that does not fit in cap bytes. */
int skp_cli_out_path(char *buf, size_t cap, const char *output, bool pattern, long frame,
                     const char *suffix);

/* A progress bar line for done of total: "\r[####    ] done/total", with a newline once
 * done == total. Same buffer contract as snprintf. */
size_t skp_cli_progress(char *buf, size_t cap, long done, long total);

/* s as a JSON string literal (quotes included) into buf, truncated at cap (terminated when
 * cap > 0). Returns the length it needs, excluding the terminator. */
size_t skp_json_quote(char *buf, size_t cap, const char *s);

/* s as a JSON string literal, in small when it fits in cap bytes, else malloc'd; NULL when
 * memory runs out. Free the result when it is not small. */
char *skp_json_quoted(const char *s, char *small, size_t cap);

#endif
