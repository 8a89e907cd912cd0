/* Armature ids on the client side: hex text both ways (proto's skp_hex/skp_unhex, the same
 * code the daemon writes URLs and JSON with) and the id of a file's bytes, so a client knows
 * an armature's id before it uploads anything. */
#include <openssl/evp.h>
#include <string.h>

#include "skc_int.h"

char *skc_id_to_hex(char out[SKC_ID_HEX_SIZE], const unsigned char id[SKC_ID_SIZE])
{
    if (!out || !id)
        return NULL;
    skp_hex(out, id, SKC_ID_SIZE);
    return out;
}

int skc_id_from_hex(unsigned char id[SKC_ID_SIZE], const char *hex)
{
    uint8_t tmp[SKC_ID_SIZE];
    if (!id || !hex)
        return SKC_EINVAL;
    /* strnlen: a string far longer than an id is refused without reading all of it. */
    size_t len = strnlen(hex, SKC_ID_HEX_SIZE);
    if (skp_unhex(tmp, SKC_ID_SIZE, hex, len) != 0)
        return SKC_EINVAL;
    memcpy(id, tmp, SKC_ID_SIZE);
    return 0;
}

int skc_id_of(const void *skf, size_t len, unsigned char id[SKC_ID_SIZE])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    static const unsigned char none = 0;
    if (!id || (!skf && len))
        return SKC_EINVAL;
    /* The daemon's ids are libcrypto's SHA-256 too (daemon/sha256.c). EVP_Digest with a
     * built-in algorithm fails only when it cannot allocate its context. */
    if (!EVP_Digest(skf ? skf : &none, len, md, &mdlen, EVP_sha256(), NULL) || mdlen != SKC_ID_SIZE)
        return SKC_ENOMEM;
    memcpy(id, md, SKC_ID_SIZE);
    return 0;
}
