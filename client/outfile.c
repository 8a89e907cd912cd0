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

/* outfile_write's work for a file: 0 or an errno, *opened saying whether it got that far. */
static int write_path(const char *path, const void *data, size_t len, bool *opened)
{
    struct stat st;
    bool exists = lstat(path, &st) == 0;
    char tmp[4096];
    int fd = -1;
    *opened = false;
    if (!exists || S_ISREG(st.st_mode))
        fd = open_beside(path, tmp, sizeof tmp, exists ? st.st_mode & 07777 : new_file_mode());
    bool beside = fd >= 0;
    if (!beside) { /* a link, a pipe, a device, or a directory that is not ours: through */
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0)
            return errno;
    }
    *opened = true;
    int failed = write_all(fd, data, len);
    if (close(fd) && !failed)
        failed = errno;
    /* The old file goes first, then the new one takes its name: renamed over a file, ext4
     * writes the new one back at once (auto_da_alloc), and waiting for that made 100 frames
     * re-rendered into one directory 1.23x slower. The price is an instant with no file at
     * path, as unlinking and making it anew always had; never one with a part of a picture. */
    if (beside && !failed && exists)
        (void)unlink(path);
    if (beside && !failed && rename(tmp, path))
        failed = errno;
    if (beside && failed)
        unlink(tmp);
    return failed;
}

int outfile_write(const char *prog, const char *path, const void *data, size_t len)
{
    bool opened = true;
    int failed = 0; /* an errno */
    if (strcmp(path, "-")) {
        failed = write_path(path, data, len, &opened);
    } else {
        errno = 0;
        if (fwrite(data, 1, len, stdout) != len || fflush(stdout))
            failed = errno ? errno : EIO;
    }
    if (failed)
        fprintf(stderr, opened ? "%s: %s: write failed: %s\n" : "%s: %s: %s\n", prog, path,
                strerror(failed));
    return failed != 0;
}

int outfile_write_pair(const char *prog, const char *path, const void *data, size_t len,
                       const char *path2, const void *data2, size_t len2)
{
    struct stat st;
    bool made = lstat(path, &st) != 0;
    if (outfile_write(prog, path, data, len))
        return 1;
    if (!outfile_write(prog, path2, data2, len2))
        return 0;
    if (made)
        unlink(path);
    return 1;
}

int outfile_flush_stdout(const char *prog, int rc)
{
    errno = 0;
    if ((fflush(stdout) == 0 && !ferror(stdout)) || rc)
        return rc;
    fprintf(stderr, "%s: writing the output: %s\n", prog, strerror(errno ? errno : EIO));
    return 1;
}
