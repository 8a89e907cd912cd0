/* Test fixtures: .skf files built in memory from JSON text, and the data folders. */
#ifndef SKELD_TESTHELP_H
#define SKELD_TESTHELP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/armature.h"
#include "engine/errors.h"

/* Turns every ' of s into ": fixtures' JSON is written with single quotes, which C strings
 * take without escapes (no fixture needs a real apostrophe). Returns s. */
char *th_dequote(char *s);

/* fmt formatted into out (cap bytes; failing the test if it does not fit), then dequoted:
 * the printf-style fixtures' JSON. */
void th_vformat_json(char *out, size_t cap, const char *fmt, va_list ap);

/* A solid w x h RGBA PNG in memory (caller frees *out). 0 on success. */
int th_png(uint32_t w, uint32_t h, const uint8_t rgba[4], void **out, size_t *len);

/* A w x h PNG in memory from straight RGBA8 pixels, row-major (caller frees *out). */
int th_png_rgba(uint32_t w, uint32_t h, const uint8_t *rgba, void **out, size_t *len);

/* Decodes a PNG (in memory, or a file) to straight RGBA8 with libpng's simplified API;
 * *rgba is malloc'd (caller frees). 0 on success. */
int th_png_decode(const void *png, size_t len, uint32_t *w, uint32_t *h, uint8_t **rgba);
int th_png_decode_file(const char *path, uint32_t *w, uint32_t *h, uint8_t **rgba);

/* A zip in memory holding the given members (names[i] -> data[i], lens[i]); free *out. */
int th_zip(const char *const *names, const void *const *data, const size_t *lens, int count,
           void **out, size_t *len);

/* A .skf in memory: armature.json = json, plus atlas0.png .. atlas{n-1}.png (64x64). */
int th_skf(const char *json, int atlases, void **out, size_t *len);

/* Builds th_skf(json, atlases) and loads it; returns armature_load's code. */
int th_load(const char *json, int atlases, struct armature **arm, struct eng_error *err);

/* Like th_load, with the caller's atlas images: atlas{i}.png = pngs[i] (lens[i] bytes). */
int th_load_atlases(const char *json, const void *const *pngs, const size_t *lens, int count,
                    struct armature **arm, struct eng_error *err);

/* $SKELD_SHARED (the shared/ folder beside the project) or NULL if it is absent. */
const char *th_shared_dir(void);

/* The exit status of a Check program that ran failed failing tests: EXIT_FAILURE if any
 * failed; else 77 (Automake's SKIP) if some of its tests need $SKELD_SHARED (needs_shared)
 * and it is absent, so a run without the data shows a skip, never a pass; else
 * EXIT_SUCCESS. */
int th_exit_status(int failed, bool needs_shared);

/* $SKELD_SAMPLES (the built sample armatures) or NULL if unset. */
const char *th_samples_dir(void);

/* Whether path is on a filesystem whose file times the daemon trusts for LOAD by path
 * (daemon/confine.c: ext2/3/4, xfs, btrfs, tmpfs, overlayfs, f2fs, zfs), told by statfs
 * here independently of the daemon's own list. */
bool th_local_fs(const char *path);

/* Loads "<dir>/<name>" or fails the current test. */
struct armature *th_load_path(const char *dir, const char *name);

#endif
