/* What a pending request of the reply fuzzer (fuzz-reply.c) waits for, in the order byte 0 of
 * an input counts them: every opcode libskc sends, and a RENDER asked for raw RGBA. One list,
 * so make-seeds.c writes byte 0 of its seeds for the same requests the target queues. */
#ifndef SKELD_FUZZ_REPLY_KINDS_H
#define SKELD_FUZZ_REPLY_KINDS_H

#define REPLY_KINDS(X)                                                                             \
    X(HELLO)                                                                                       \
    X(PING)                                                                                        \
    X(LOAD_PATH)                                                                                   \
    X(LOAD_BYTES)                                                                                  \
    X(UNLOAD)                                                                                      \
    X(INFO)                                                                                        \
    X(INSTANCE_NEW)                                                                                \
    X(INSTANCE_FREE)                                                                               \
    X(POSE)                                                                                        \
    X(MESH)                                                                                        \
    X(RENDER)                                                                                      \
    X(RENDER_RAW)                                                                                  \
    X(STATS)                                                                                       \
    X(INFO_JSON)

#define REPLY_KIND_ENUM(name) K_##name,
enum reply_kind { REPLY_KINDS(REPLY_KIND_ENUM) REPLY_KIND_COUNT };

#endif
