/* The preview page that `GET /` serves (proto/HTTP.md): contrib/www's index.html, app.js and
 * style.css, compiled in. contrib/embed writes daemon/www.c from those files at build time (it
 * is not in the source tree); this header is its interface. Constant data: any thread. */
#ifndef SKELD_WWW_H
#define SKELD_WWW_H

#include <stddef.h>

struct www_file {
    const char *path;         /* the URL path it answers: "/", "/app.js", "/style.css" */
    const char *content_type; /* for Content-Type, with the charset for text */
    const unsigned char *bytes;
    size_t length;    /* of bytes; a NUL follows them that length does not count */
    const char *etag; /* "\"page-HEX\"": a strong validator of bytes (sha256), made at build time */
};

extern const struct www_file www_files[];
extern const size_t www_files_count;

/* The file a URL path names, or NULL. A query after the path ("/?file=robot.skf") is ignored;
 * the rest must match exactly (no decoding, no trailing slash, "/index.html" is not "/"). */
const struct www_file *www_find(const char *path);

#endif
