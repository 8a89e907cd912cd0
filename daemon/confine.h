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
 * time is set by the kernel on every write, rename, link or truncation, and cannot be set
 * back by a program. local: the file is on a filesystem whose times the kernel keeps to the
 * tick (ext2/3/4, xfs, btrfs, tmpfs, overlayfs, f2fs, zfs); other filesystems (network,
 * FUSE, FAT) are never trusted. */
struct confine_sig {
    uint64_t dev, ino, size;
    int64_t mtime_ns, ctime_ns;
    bool local;
};

/* A read that may be skipped, and what may be remembered of it. In: known (NULL: none), the
 * signature of the version read before, and settle_ns (see confine_sig_settled); check_only:
 * only say whether the file is the known version, never read it. Out, once the file is open:
 * its sig; unchanged (nothing read) if it is a regular file within the size limit with
 * exactly the known signature; settled, whether sig may be remembered, judged against the
 * clock read before the open. */
struct confine_version {
    const struct confine_sig *known;
    int64_t settle_ns;
    bool check_only;
    struct confine_sig sig;
    bool unchanged, settled;
};

/* Opens rel beneath the directory root_fd (or, with root_fd -1, rel as it is: the operator's
 * --preload) and reads it whole, at most max bytes, into *buf (caller frees). SKP_S_OK, or a
 * wire status (NOT_FOUND, FORBIDDEN_PATH, BAD_REQUEST for what is not a regular file, LIMIT,
 * NO_MEMORY) with why filled. With v (may be NULL), the read is skipped for the known
 * version (SKP_S_OK with *buf NULL): the open still goes through the root's confinement.
 * With v->check_only, it is skipped for any other file too (SKP_S_OK, *buf NULL, unchanged
 * false). */
uint16_t confine_read(int root_fd, const char *rel, uint64_t max, struct confine_version *v,
                      void **buf, size_t *len, char *why, size_t whylen);

bool confine_sig_equal(const struct confine_sig *a, const struct confine_sig *b);

/* Whether sig may stand for the file's contents from now on: the file is local and its
 * status last changed at least settle_ns before opened_ns (CLOCK_REALTIME, taken before the
 * file was opened), with its contents not dated after that. File times advance in clock
 * ticks, so a file written again within the tick it was read in could keep its signature
 * with new contents; a margin of seconds covers the tick and small clock steps. settle_ns < 0
 * trusts nothing. */
bool confine_sig_settled(const struct confine_sig *sig, int64_t opened_ns, int64_t settle_ns);

#endif
