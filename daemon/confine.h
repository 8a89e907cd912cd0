/* LOAD by path, confined to the daemon's --root. The client's path is checked lexically on
 * the loop thread (relative, no "..", no NUL), then opened by a worker beneath the root
 * directory in one step, so a directory swapped for a symlink in between cannot lead out:
 * openat2 with RESOLVE_BENEATH (symlinks that stay inside the root are followed), or, where
 * the kernel lacks it, a walk that opens each component with O_NOFOLLOW (and so refuses every
 * symlink). The open is non-blocking and only regular files are read, so a FIFO cannot hold a
 * worker. Messages name the client's path, never the root's. No libuv: any thread. */
#ifndef SKELD_CONFINE_H
#define SKELD_CONFINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* SKP_S_OK, or SKP_S_FORBIDDEN_PATH with why filled. */
uint16_t confine_check(const char *rel, size_t len, char *why, size_t whylen);

/* What tells one version of a file from another without reading it: which file (device and
 * inode), its size, and when its contents and its status last changed (ns). The status-change
 * time is set by the kernel on every write, rename or truncation, and cannot be set back. */
struct confine_sig {
    uint64_t dev, ino, size;
    int64_t mtime_ns, ctime_ns;
};

/* A signature is trusted only for a file whose status changed this long before it was read:
 * file times advance in clock ticks, so a file written again within the tick it was read in
 * could keep its signature with new contents. */
#define CONFINE_SETTLED_NS 1000000000LL

/* Opens rel beneath the directory root_fd (or, with root_fd -1, rel as it is: the operator's
 * --preload) and reads it whole, at most max bytes, into *buf (caller frees). SKP_S_OK, or a
 * wire status (NOT_FOUND, FORBIDDEN_PATH, BAD_REQUEST for what is not a regular file, LIMIT,
 * NO_MEMORY) with why filled. If sig is not NULL it receives the file's signature once the
 * file is open; if known is not NULL and the file's signature equals it, nothing is read
 * (SKP_S_OK with *buf NULL): the open still goes through the root's confinement. */
uint16_t confine_read(int root_fd, const char *rel, uint64_t max, const struct confine_sig *known,
                      struct confine_sig *sig, void **buf, size_t *len, char *why, size_t whylen);

bool confine_sig_equal(const struct confine_sig *a, const struct confine_sig *b);

/* Whether sig, seen at now_ns (CLOCK_REALTIME), names contents that cannot change without
 * changing it (CONFINE_SETTLED_NS). */
bool confine_sig_settled(const struct confine_sig *sig, int64_t now_ns);

#endif
