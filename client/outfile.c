/* See outfile.h. Plain descriptors, not stdio: a picture is then a handful of system calls
 * (open, write, close, rename) where stdio's buffering made more. */
#include "autoconfig.h"

#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A new hidden file beside path, "DIR/.NAME.XXXXXX", into tmp (of size cap), with the
 * permissions the picture is to have; -1 (errno set) if none can be made there. */
static int open_beside(const char *path, char *tmp, size_t cap, mode_t mode)
{
    const char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
    int n = snprintf(tmp, cap, "%.*s.%s.XXXXXX", (int)dir, path, path + dir);
    if (n < 0 || (size_t)n >= cap) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = mkstemp(tmp);
    if (fd >= 0 && fchmod(fd, mode)) { /* mkstemp makes it 0600 */
        int e = errno;
        close(fd);
        unlink(tmp);
        errno = e;
        return -1;
    }
    return fd;
}

/* The permissions a new file gets from open(..., 0666): what the umask leaves. These are
 * single-threaded programs, so reading the umask (by setting it) races with nothing. */
static mode_t new_file_mode(void)
{
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

/* All of data into fd: 0 or an errno. */
static int write_all(int fd, const unsigned char *data, size_t len)
{
    size_t put = 0;
    while (put < len) {
        ssize_t n = write(fd, data + put, len - put);
        if (n > 0)
            put += (size_t)n;
        else if (n == 0 || errno != EINTR)
            return n == 0 ? EIO : errno;
    }
    return 0;
}

/* A file being written: into a hidden file beside its path (tmp), which commit renames over
 * it, or through the path itself (a link, a pipe, a device: not beside). */
struct pending {
    char tmp[4096];
    bool beside, exists;
};

/* The bytes written, but not yet under path: 0 or an errno (nothing then left behind but what
 * was written through), *opened saying whether it got that far. */
static int write_prepare(const char *path, const void *data, size_t len, struct pending *p,
                         bool *opened)
{
    struct stat st;
    p->exists = lstat(path, &st) == 0;
    int fd = -1;
    *opened = false;
    if (!p->exists || S_ISREG(st.st_mode))
        fd = open_beside(path, p->tmp, sizeof p->tmp,
                         p->exists ? st.st_mode & 07777 : new_file_mode());
    p->beside = fd >= 0;
    if (!p->beside) { /* a link, a pipe, a device, or a directory that is not ours: through */
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0)
            return errno;
    }
    *opened = true;
    int failed = write_all(fd, data, len);
    if (close(fd) && !failed)
        failed = errno;
    if (p->beside && failed)
        unlink(p->tmp);
    return failed;
}

/* The prepared bytes take path's name: 0 or an errno (the hidden file then gone). The old
 * file goes first, then the new one takes its name: renamed over a file, ext4 writes the new
 * one back at once (auto_da_alloc), and waiting for that made 100 frames re-rendered into one
 * directory 1.23x slower. The price is an instant with no file at path, as unlinking and
 * making it anew always had; never one with a part of a picture. */
static int write_commit(const char *path, struct pending *p)
{
    if (!p->beside)
        return 0;
    if (p->exists)
        (void)unlink(path);
    if (!rename(p->tmp, path))
        return 0;
    int e = errno;
    unlink(p->tmp);
    return e;
}

/* What went wrong with path, said on standard error after prog. */
static int report(const char *prog, const char *path, int failed, bool opened)
{
    fprintf(stderr, opened ? "%s: %s: write failed: %s\n" : "%s: %s: %s\n", prog, path,
            strerror(failed));
    return 1;
}

int outfile_write(const char *prog, const char *path, const void *data, size_t len)
{
    bool opened = true;
    int failed = 0; /* an errno */
    if (strcmp(path, "-")) {
        struct pending p;
        failed = write_prepare(path, data, len, &p, &opened);
        if (!failed)
            failed = write_commit(path, &p);
    } else {
        errno = 0;
        if (fwrite(data, 1, len, stdout) != len || fflush(stdout))
            failed = errno ? errno : EIO;
    }
    return failed ? report(prog, path, failed, opened) : 0;
}

int outfile_write_pair(const char *prog, const char *path, const void *data, size_t len,
                       const char *path2, const void *data2, size_t len2)
{
    if (!strcmp(path, "-") || !strcmp(path2, "-")) /* not a pair of files: one after the other */
        return outfile_write(prog, path, data, len) || outfile_write(prog, path2, data2, len2);
    struct pending a, b;
    bool opened;
    int failed = write_prepare(path, data, len, &a, &opened);
    if (failed)
        return report(prog, path, failed, opened);
    if ((failed = write_prepare(path2, data2, len2, &b, &opened))) {
        if (a.beside)
            unlink(a.tmp); /* both written, or neither: the old picture stays */
        return report(prog, path2, failed, opened);
    }
    if ((failed = write_commit(path, &a))) {
        if (b.beside)
            unlink(b.tmp);
        return report(prog, path, failed, true);
    }
    if ((failed = write_commit(path2, &b))) { /* the picture is new: gone again if it was ours */
        if (!a.exists)
            unlink(path);
        return report(prog, path2, failed, true);
    }
    return 0;
}

/* Why a write to standard output through outfile_stdout failed first (an errno), 0 if none
 * did: stdio keeps only its error flag, and by exit errno says nothing about it. */
static int stdout_failed;

bool outfile_stdout(const void *data, size_t len)
{
    errno = 0;
    if (fwrite(data, 1, len, stdout) == len)
        return true;
    if (!stdout_failed)
        stdout_failed = errno ? errno : EIO;
    return false;
}

int outfile_flush_stdout(const char *prog, int rc)
{
    errno = 0;
    if ((fflush(stdout) == 0 && !ferror(stdout)) || rc)
        return rc;
    int failed = stdout_failed ? stdout_failed : errno ? errno : EIO;
    fprintf(stderr, "%s: writing the output: %s\n", prog, strerror(failed));
    return 1;
}

bool outfile_keep_std_fds(void)
{
    bool out_closed = false;
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        out_closed |= fd == 1;
        if (open("/dev/null", O_RDWR) < 0) /* the lowest free descriptor: fd itself */
            break;
    }
    return out_closed;
}
