/* LOAD by path beneath the root (confine.h). */
#define _GNU_SOURCE /* O_NOFOLLOW, O_DIRECTORY with openat; syscall */
#include "confine.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine/errors.h"
#include "engine/load.h"
#include "skp.h"

#define FILE_FLAGS (O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)

/* The client's path for a message: about 200 bytes of it at most, its UTF-8 characters kept
 * and anything else shown as '?' (eng_quote_n), so the message is UTF-8 (PROTOCOL.md) and
 * never cut inside a character. */
#define SHOWN_CAP 208
#define SHOWN(rel) eng_quote_n((rel), (char[SHOWN_CAP]){0}, SHOWN_CAP)

uint16_t confine_check(const char *rel, size_t len, char *why, size_t whylen)
{
    if (len == 0) { /* not a path out of the root: no file named */
        snprintf(why, whylen, "no file named (an empty path)");
        return SKP_S_NOT_FOUND;
    }
    if (rel[0] == '/' || memchr(rel, 0, len)) {
        snprintf(why, whylen, "path must be relative to the root");
        return SKP_S_FORBIDDEN_PATH;
    }
    if (len >= 4096) {
        snprintf(why, whylen, "path too long");
        return SKP_S_FORBIDDEN_PATH;
    }
    /* ".." as a whole component; "..x.skf" is a name like any other. */
    for (size_t i = 0; i + 1 < len; i++) {
        bool starts = i == 0 || rel[i - 1] == '/';
        bool ends = i + 2 == len || rel[i + 2] == '/';
        if (starts && ends && rel[i] == '.' && rel[i + 1] == '.') {
            snprintf(why, whylen, "path may not contain \"..\"");
            return SKP_S_FORBIDDEN_PATH;
        }
    }
    return SKP_S_OK;
}

/* Without openat2: each directory component opened with O_NOFOLLOW from the root down. */
static int open_walk(int root_fd, const char *rel)
{
    char *copy = strdup(rel);
    if (!copy) {
        errno = ENOMEM;
        return -1;
    }
    int dir = root_fd, fd = -1;
    char *save = NULL;
    char *name = strtok_r(copy, "/", &save);
    while (name) {
        char *next = strtok_r(NULL, "/", &save);
        if (strcmp(name, ".") != 0 || !next) {
            int flags = next ? O_RDONLY | O_DIRECTORY | O_CLOEXEC : FILE_FLAGS;
            fd = openat(dir, name, flags | O_NOFOLLOW);
            if (dir != root_fd)
                close(dir);
            if (fd < 0)
                break;
            dir = fd;
        }
        name = next;
    }
    int saved = errno;
    free(copy);
    errno = saved;
    return fd;
}

/* Learnt once: the kernel (or a seccomp filter) lacks openat2, and open_walk follows no link. */
static atomic_bool no_openat2;

static int open_beneath(int root_fd, const char *rel)
{
    if (atomic_load_explicit(&no_openat2, memory_order_relaxed))
        return open_walk(root_fd, rel);
    struct open_how how = {.flags = FILE_FLAGS, .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS};
    long fd = syscall(SYS_openat2, root_fd, rel, &how, sizeof how);
    if (fd < 0 && (errno == ENOSYS || errno == EPERM)) { /* old kernel, or a seccomp filter */
        atomic_store_explicit(&no_openat2, true, memory_order_relaxed);
        return open_walk(root_fd, rel);
    }
    return (int)fd;
}

static uint16_t open_error(int err, const char *rel, char *why, size_t whylen)
{
    switch (err) {
    case ENOENT:
    case ENOTDIR: snprintf(why, whylen, "%s: no such file", SHOWN(rel)); return SKP_S_NOT_FOUND;
    case EXDEV:
        snprintf(why, whylen, "%s: path leads outside the root", SHOWN(rel));
        return SKP_S_FORBIDDEN_PATH;
    case ELOOP: /* openat2: links that never end; open_walk: any link at all */
        if (atomic_load_explicit(&no_openat2, memory_order_relaxed))
            snprintf(why, whylen,
                     "%s: path holds a symbolic link, which this system cannot follow safely "
                     "(no openat2)",
                     SHOWN(rel));
        else
            snprintf(why, whylen, "%s: too many symbolic links (a loop?)", SHOWN(rel));
        return SKP_S_FORBIDDEN_PATH;
    case ENOMEM: snprintf(why, whylen, "out of memory"); return SKP_S_NO_MEMORY;
    default:
        snprintf(why, whylen, "%s: cannot be opened (%s)", SHOWN(rel), strerror(err));
        return SKP_S_FORBIDDEN_PATH;
    }
}

/* Filesystems whose file times the kernel sets itself, to the tick (statfs f_type). */
static bool local_fs(int fd)
{
    static const unsigned long kinds[] = {
        0xEF53,     /* ext2/3/4 */
        0x58465342, /* xfs */
        0x9123683E, /* btrfs */
        0x01021994, /* tmpfs */
        0x794c7630, /* overlayfs */
        0xF2F52010, /* f2fs */
        0x2fc12fc1, /* zfs */
    };
    struct statfs fs;
    if (fstatfs(fd, &fs) != 0)
        return false;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if ((unsigned long)fs.f_type == kinds[i])
            return true;
    return false;
}

/* A file time in ns, clamped for dates past 2262 (touch -d accepts them) so that none
 * overflows; a clamped time is in the future, which no settled signature has. */
static int64_t ns_of(const struct timespec *t)
{
    if (t->tv_sec >= INT64_MAX / 1000000000LL - 1)
        return INT64_MAX;
    if (t->tv_sec <= INT64_MIN / 1000000000LL + 1)
        return INT64_MIN;
    return (int64_t)t->tv_sec * 1000000000LL + t->tv_nsec;
}

static int64_t realtime_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return ns_of(&now);
}

static struct confine_sig sig_of(int fd, const struct stat *st)
{
    return (struct confine_sig){(uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
                                ns_of(&st->st_mtim),  ns_of(&st->st_ctim),  local_fs(fd)};
}

bool confine_sig_equal(const struct confine_sig *a, const struct confine_sig *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

bool confine_sig_settled(const struct confine_sig *sig, int64_t opened_ns, int64_t settle_ns)
{
    return settle_ns >= 0 && sig->local && sig->ctime_ns <= opened_ns - settle_ns &&
           sig->mtime_ns <= opened_ns && sig->ctime_ns != INT64_MIN;
}

/* The checks and the read of an open file whose status is st. */
static uint16_t read_open(int fd, const struct stat *st, const char *rel, uint64_t max, void **buf,
                          size_t *len, char *why, size_t whylen)
{
    if (!S_ISREG(st->st_mode)) {
        snprintf(why, whylen, "%s: not a regular file", SHOWN(rel));
        return SKP_S_BAD_REQUEST;
    }
    if ((uint64_t)st->st_size > max) {
        snprintf(why, whylen, "%s: file larger than %llu bytes (--max-skf-mb)", SHOWN(rel),
                 (unsigned long long)max);
        return SKP_S_LIMIT;
    }
    struct eng_error err;
    int rc = eng_read_fd(fd, max, buf, len, &err);
    if (!rc)
        return SKP_S_OK;
    snprintf(why, whylen, "%s: %s", SHOWN(rel), rc == ENG_ENOMEM ? "out of memory" : "read error");
    return rc == ENG_ENOMEM ? SKP_S_NO_MEMORY : rc == ENG_ELIMIT ? SKP_S_LIMIT : SKP_S_NOT_FOUND;
}

uint16_t confine_read(int root_fd, const char *rel, uint64_t max, struct confine_version *v,
                      void **buf, size_t *len, char *why, size_t whylen)
{
    *buf = NULL;
    *len = 0;
    int64_t opened = 0;
    if (v) {
        v->unchanged = v->settled = false;
        opened = realtime_ns(); /* before the open: settled measures from before the signature */
    }
    int fd = root_fd >= 0 ? open_beneath(root_fd, rel) : open(rel, FILE_FLAGS);
    if (fd < 0)
        return open_error(errno, rel, why, whylen);
    struct stat st;
    uint16_t status = SKP_S_OK;
    if (fstat(fd, &st) != 0) {
        status = open_error(errno, rel, why, whylen);
    } else {
        if (v) {
            v->sig = sig_of(fd, &st);
            v->unchanged = S_ISREG(st.st_mode) && v->known && v->sig.size <= max &&
                           confine_sig_equal(v->known, &v->sig);
            v->settled = confine_sig_settled(&v->sig, opened, v->settle_ns);
        }
        if (!v || (!v->unchanged && !v->check_only)) /* the known version is not read again */
            status = read_open(fd, &st, rel, max, buf, len, why, whylen);
    }
    close(fd);
    return status;
}
