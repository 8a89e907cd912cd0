/* How skelctl and skeld write their output. A picture goes to a file whole, or not at all: a
 * regular file already at the path (or nothing there) is replaced only once every byte is written:
 * the bytes go to a hidden file beside it, which takes the path's name at the end, so a failed
 * write (a full disk, a file size limit) leaves the old file as it was, and a reader that has
 * the old file open keeps reading it whole. Anything else at the path (a symbolic link, a
 * pipe, a device), or a file in a directory the caller may not write, is written through. */
#ifndef SKELD_OUTFILE_H
#define SKELD_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>

/* Writes the len bytes of data to path ("-": standard output). Returns 0, or 1 having said
 * on standard error, after prog, what failed: opening the file (nothing changed), or the
 * write (a file this call made is gone again; one written through may hold part of the
 * picture). */
int outfile_write(const char *prog, const char *path, const void *data, size_t len);

/* A picture and the file that describes it (a sheet's OUT.png and OUT.json): both, or
 * neither. Both are written beside their paths first, and take their names only once both
 * are whole, so a failure (a full disk) leaves the old pair as it was. What is written through
 * (a link, a pipe) cannot be taken back; and should the second rename fail after the first,
 * a picture this call made is removed again. Returns 0, or 1 having said why. */
int outfile_write_pair(const char *prog, const char *path, const void *data, size_t len,
                       const char *path2, const void *data2, size_t len2);

/* Writes len bytes of data to standard output; false if they did not all go (the buffer's
 * write failed: a full disk, a closed pipe), with the reason kept for outfile_flush_stdout,
 * which says it. Use it for output large enough to pass stdio's buffer. */
bool outfile_stdout(const void *data, size_t len);

/* A command's exit status rc, or 1 having said so after prog if what it wrote to standard
 * output did not all get out (a full disk, a closed pipe): stdio holds the last of it until
 * exit, where nobody checks. A command that failed already (rc != 0) said why. */
int outfile_flush_stdout(const char *prog, int rc);

/* Standard input, output and error, if the caller closed any, opened on /dev/null: else the
 * next descriptor opened (a socket, a log file, libuv's signal pipe) would become one of
 * them, and what is meant for standard output or error would go into it. Returns whether
 * standard output was closed: a command that would print to it then fails, as a write to it
 * would. Call first thing in main. */
bool outfile_keep_std_fds(void);

#endif
