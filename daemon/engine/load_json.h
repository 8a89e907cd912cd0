/* Internal to the loader: armature.json -> struct armature (no archive, no pixels). */
#ifndef SKELD_ENGINE_LOAD_JSON_H
#define SKELD_ENGINE_LOAD_JSON_H

#include "load.h"

/* Parses the JSON text into a new armature (atlases listed, pixels not loaded). */
int load_json(const char *text, size_t len, const struct load_limits *lim, struct armature **out,
              struct eng_error *err);

/* Checks every texture rectangle against the decoded atlas sizes. */
int load_check_textures(const struct armature *arm, struct eng_error *err);

#endif
