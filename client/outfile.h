/* How skelctl and skeld render write a picture to a file: whole, or not at all. A regular file
 * already at the path (or nothing there) is replaced only once every byte is written: the
 * bytes go to a hidden file beside it, which takes the path's name at the end, so a failed
 * write (a full disk, a file size limit) leaves the old file as it was, and a reader that has
 * the old file open keeps reading it whole. Anything else at the path (a symbolic link, a
 * pipe, a device), or a file in a directory the caller may not write, is written through. */
#ifndef SKELD_OUTFILE_H
#define SKELD_OUTFILE_H

#include <stddef.h>

enum outfile_stage { OUTFILE_OPEN, OUTFILE_WRITE };

/* Writes the len bytes of data to path. Returns 0, or an errno with *stage saying whether the
 * file could not be opened (nothing changed) or the write failed (a file this call made is
 * gone again; one written through may hold part of the picture). */
int outfile_write(const char *path, const void *data, size_t len, enum outfile_stage *stage);

#endif
