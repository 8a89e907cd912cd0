/* LOAD by path, confined to the daemon's --root. The client's path is checked lexically on
 * the loop thread (relative, no "..", no NUL), then opened by a worker beneath the root
 * directory in one step, so a directory swapped for a symlink in between cannot lead out:
 * openat2 with RESOLVE_BENEATH (symlinks that stay inside the root are followed), or, where
 * the kernel lacks it, a walk that opens each component with O_NOFOLLOW (and so refuses every
 * symlink). The open is non-blocking and only regular files are read, so a FIFO cannot hold a
 * worker. Messages name the client's path, never the root's. No libuv: any thread. */
#ifndef SKELD_CONFINE_H
#define SKELD_CONFINE_H

#include <stddef.h>
#include <stdint.h>

/* SKP_S_OK, or SKP_S_FORBIDDEN_PATH with why filled. */
uint16_t confine_check(const char *rel, size_t len, char *why, size_t whylen);

/* Opens rel beneath the directory root_fd (or, with root_fd -1, rel as it is: the operator's
 * --preload) and reads it whole, at most max bytes, into *buf (caller frees). SKP_S_OK, or a
 * wire status (NOT_FOUND, FORBIDDEN_PATH, BAD_REQUEST for what is not a regular file, LIMIT,
 * NO_MEMORY) with why filled. */
uint16_t confine_read(int root_fd, const char *rel, uint64_t max, void **buf, size_t *len,
                      char *why, size_t whylen);

#endif
