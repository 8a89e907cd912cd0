/* .skf bytes -> immutable armature. Never aborts: errors come back as ENG_E* with a message
 * naming the place, e.g. "armature.json: bones[12].parent_id: 40 is out of range". */
#ifndef SKELD_ENGINE_LOAD_H
#define SKELD_ENGINE_LOAD_H

#include "armature.h"
#include "errors.h"

/* Limits against hostile files. Zero fields take the defaults of load_limits_default(). */
struct load_limits {
    uint64_t max_uncompressed;       /* bytes read out of the archive in total */
    uint64_t max_json;               /* armature.json's bytes: checked before it is read */
    uint32_t max_json_values;        /* JSON values in armature.json: counted before it is parsed */
    uint64_t max_atlas_pixels;       /* per atlas */
    uint64_t max_total_atlas_pixels; /* all atlases together (one PNG may be listed often) */
    uint32_t max_bones;
    uint32_t max_keyframes; /* over all animations */
    uint32_t max_vertices;  /* over all meshes */
    bool skip_atlas_pixels; /* validate atlases but do not keep decoded pixels */
};

void load_limits_default(struct load_limits *lim);

/* Loads an armature from the bytes of a .skf file. On success returns 0 and sets *out
 * (caller frees with armature_free). On failure returns ENG_E*, fills err and leaves *out
 * NULL. lim may be NULL for defaults. Any thread; reads only its arguments. */
int armature_load(const void *bytes, size_t len, const struct load_limits *lim,
                  struct armature **out, struct eng_error *err);

/* The uncompressed size of armature.json inside the .skf bytes, without reading it (so a
 * server can schedule big parses apart). 0, or ENG_EBADFILE / ENG_ENOMEM with err. */
int armature_json_size(const void *bytes, size_t len, uint64_t *size, struct eng_error *err);

/* Reads an open file to its end, at most max bytes, into *out (caller frees), *out_len its
 * length. 0, ENG_EIO, ENG_ELIMIT (larger) or ENG_ENOMEM, with err. */
int eng_read_fd(int fd, uint64_t max, void **out, size_t *out_len, struct eng_error *err);

/* Reads a whole regular file of at most max bytes (non-blocking open, so a FIFO cannot hang
 * the caller): as eng_read_fd, with the path in the messages. */
int eng_read_file(const char *path, uint64_t max, void **out, size_t *out_len,
                  struct eng_error *err);

/* Reads path (at most lim->max_uncompressed bytes of file) and loads it. */
int armature_load_file(const char *path, const struct load_limits *lim, struct armature **out,
                       struct eng_error *err);

#endif
