/* libFuzzer target: the bytes as armature.json inside a well-formed .skf (with one 64x64
 * atlas), so the fuzzer spends its time in the JSON reader and the engine instead of in the
 * zip container. Build and run: contrib/fuzz/run.sh json */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/load.h"
#include "testhelp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);
int fuzz_load_one(const uint8_t *data, size_t len); /* fuzz-load.c */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    char *json = malloc(len + 1);
    if (!json)
        return 0;
    memcpy(json, data, len);
    json[len] = 0;
    void *skf;
    size_t skf_len;
    int rc = th_skf(json, 1, &skf, &skf_len);
    free(json);
    if (rc)
        return 0;
    fuzz_load_one(skf, skf_len); /* load, step, draw: as the load target */
    free(skf);
    return 0;
}
