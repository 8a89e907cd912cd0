/* Wire protocol (proto/PROTOCOL.md): byte order, the frame header, the body codec (writer and
 * reader), the incremental frame parser, status and opcode tables, and a deterministic fuzz
 * loop over the parser.
 *
 * Expected bytes are written out by hand from PROTOCOL.md (little-endian everywhere, the header
 * table, the status table), never produced by the code under test. Frames fed to the parser are
 * built by mkframe() below with explicit shifts, not by skp_encode_header, so a bug in the
 * encoder cannot hide a bug in the parser.
 *
 * Out-of-bounds reads and writes are caught in every build, not only under the sanitizers:
 * buffers handed to the code under test are placed against a PROT_NONE guard page (tail() puts
 * the last byte just before the upper guard, head() the first byte just after the lower one),
 * so touching one byte outside [buf, buf + len) faults and Check reports the signal. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "skp.h"
#include "skp_cli.h"
#include "skp_json.h"
#include "skp_msg.h"
#include "skp_parser.h"
#include "skp_prom.h"

#ifndef MAP_ANONYMOUS
#define MAP_ANONYMOUS MAP_ANON
#endif

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* An assertion for hot loops: Check's ck_assert_* record a checkpoint on every pass, which
 * makes the fuzz and split loops slow under valgrind; this one only calls Check on failure. */
#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ck_abort_msg("expected " #cond ": " __VA_ARGS__);                                      \
    } while (0)

/* ---- guarded buffers ---------------------------------------------------------------------- */

#define ARENA_PAGES 16 /* usable pages between the two guards */

static uint8_t *arena_map; /* the whole mapping, guards included */
static size_t arena_map_size;
static uint8_t *arena_lo, *arena_hi; /* the usable bytes: [arena_lo, arena_hi) */

static void arena_init(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    arena_map_size = (ARENA_PAGES + 2) * page;
    void *m =
        mmap(NULL, arena_map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        perror("mmap");
        exit(EXIT_FAILURE);
    }
    arena_map = m;
    if (mprotect(arena_map, page, PROT_NONE) != 0 ||
        mprotect(arena_map + (ARENA_PAGES + 1) * page, page, PROT_NONE) != 0) {
        perror("mprotect");
        exit(EXIT_FAILURE);
    }
    arena_lo = arena_map + page;
    arena_hi = arena_lo + ARENA_PAGES * page;
}

static void arena_free(void)
{
    munmap(arena_map, arena_map_size);
}

/* n bytes ending right at the upper guard page; copies src in when src is not NULL. */
static uint8_t *tail(const void *src, size_t n)
{
    EXPECT(n <= (size_t)(arena_hi - arena_lo), "%zu bytes do not fit", n);
    uint8_t *p = arena_hi - n;
    if (src && n)
        memcpy(p, src, n);
    return p;
}

/* n bytes starting right after the lower guard page. */
static uint8_t *head(const void *src, size_t n)
{
    EXPECT(n <= (size_t)(arena_hi - arena_lo), "%zu bytes do not fit", n);
    if (src && n)
        memcpy(arena_lo, src, n);
    return arena_lo;
}

/* ---- hand-written wire bytes -------------------------------------------------------------- */

static void le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v & 0xFF);
    p[1] = (uint8_t)(v >> 8);
}

static void le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v & 0xFF);
    p[1] = (uint8_t)((v >> 8) & 0xFF);
    p[2] = (uint8_t)((v >> 16) & 0xFF);
    p[3] = (uint8_t)(v >> 24);
}

static void le64(uint8_t *p, uint64_t v)
{
    le32(p, (uint32_t)(v & 0xFFFFFFFFu));
    le32(p + 4, (uint32_t)(v >> 32));
}

static uint64_t dbits(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

static double bitsd(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* A frame as PROTOCOL.md's header table lays it out, written into out; returns its size
 * (header plus bodyn bytes of body; blen is what the header claims). */
static size_t mkframe(uint8_t *out, uint8_t version, uint8_t opcode, uint16_t flags,
                      uint16_t status, uint16_t reserved, uint32_t id, uint32_t blen,
                      const void *body, size_t bodyn)
{
    out[0] = 'S';
    out[1] = 'K';
    out[2] = 'L';
    out[3] = 'D';
    out[4] = version;
    out[5] = opcode;
    le16(out + 6, flags);
    le16(out + 8, status);
    le16(out + 10, reserved);
    le32(out + 12, id);
    le32(out + 16, blen);
    if (bodyn)
        memcpy(out + 20, body, bodyn);
    return 20 + bodyn;
}

/* A valid request frame with the given body. */
static size_t mkreq(uint8_t *out, uint8_t opcode, uint32_t id, const void *body, size_t n)
{
    return mkframe(out, 1, opcode, 0, 0, 0, id, (uint32_t)n, body, n);
}

/* ---- encode ------------------------------------------------------------------------------- */

START_TEST(constants_match_protocol)
{
    ck_assert_int_eq(SKP_HEADER_SIZE, 20);
    ck_assert_int_eq(SKP_VERSION, 1);
    ck_assert_uint_eq(SKP_MAX_FRAME, 64u * 1024u * 1024u);
    ck_assert_int_eq(SKP_MAX_NAME, 1024);
    ck_assert_int_eq(SKP_MAX_ANIMS, 16);
    ck_assert_int_eq(SKP_ID_SIZE, 32);
    ck_assert_uint_eq(SKP_F_REPLY, 1);
    uint8_t m[4];
    skp_put_u32(m, SKP_MAGIC);
    ck_assert_mem_eq(m, "SKLD", 4);
}
END_TEST

START_TEST(u16_byte_order)
{
    static const struct {
        uint16_t v;
        uint8_t b[2];
    } cases[] = {
        {0x0000, {0x00, 0x00}}, {0x1234, {0x34, 0x12}}, {0x00FF, {0xFF, 0x00}},
        {0xFF00, {0x00, 0xFF}}, {0xBEEF, {0xEF, 0xBE}}, {0xFFFF, {0xFF, 0xFF}},
        {0x8001, {0x01, 0x80}},
    };
    for (size_t i = 0; i < NELEM(cases); i++) {
        uint8_t *p = tail(NULL, 2);
        memset(p, 0xAA, 2);
        skp_put_u16(p, cases[i].v);
        ck_assert_mem_eq(p, cases[i].b, 2);
        const uint8_t *q = tail(cases[i].b, 2);
        ck_assert_uint_eq(skp_get_u16(q), cases[i].v);
    }
}
END_TEST

START_TEST(u32_byte_order)
{
    static const struct {
        uint32_t v;
        uint8_t b[4];
    } cases[] = {
        {0x00000000u, {0x00, 0x00, 0x00, 0x00}}, {0x12345678u, {0x78, 0x56, 0x34, 0x12}},
        {0xDEADBEEFu, {0xEF, 0xBE, 0xAD, 0xDE}}, {0x80000001u, {0x01, 0x00, 0x00, 0x80}},
        {0x80000000u, {0x00, 0x00, 0x00, 0x80}}, {0x00800000u, {0x00, 0x00, 0x80, 0x00}},
        {0x00008000u, {0x00, 0x80, 0x00, 0x00}}, {0xFFFFFFFFu, {0xFF, 0xFF, 0xFF, 0xFF}},
        {0x444C4B53u, {'S', 'K', 'L', 'D'}},
    };
    for (size_t i = 0; i < NELEM(cases); i++) {
        uint8_t *p = tail(NULL, 4);
        memset(p, 0xAA, 4);
        skp_put_u32(p, cases[i].v);
        ck_assert_mem_eq(p, cases[i].b, 4);
        const uint8_t *q = tail(cases[i].b, 4);
        ck_assert_uint_eq(skp_get_u32(q), cases[i].v);
    }
}
END_TEST

START_TEST(u64_byte_order)
{
    static const struct {
        uint64_t v;
        uint8_t b[8];
    } cases[] = {
        {0x0000000000000000u, {0, 0, 0, 0, 0, 0, 0, 0}},
        {0x0102030405060708u, {0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01}},
        {0xFFFFFFFFFFFFFFFFu, {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}},
        {0x8000000000000000u, {0, 0, 0, 0, 0, 0, 0, 0x80}},
        {0x0000000080000000u, {0, 0, 0, 0x80, 0, 0, 0, 0}},
        {0x0000008000000000u, {0, 0, 0, 0, 0x80, 0, 0, 0}},
        {0x00000000FFFFFFFFu, {0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0}},
        {0xFFFFFFFF00000000u, {0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF}},
        {0x3FF8000000000000u, {0, 0, 0, 0, 0, 0, 0xF8, 0x3F}}, /* 1.5 */
    };
    for (size_t i = 0; i < NELEM(cases); i++) {
        uint8_t *p = tail(NULL, 8);
        memset(p, 0xAA, 8);
        skp_put_u64(p, cases[i].v);
        ck_assert_mem_eq(p, cases[i].b, 8);
        const uint8_t *q = tail(cases[i].b, 8);
        ck_assert_uint_eq(skp_get_u64(q), cases[i].v);
    }
}
END_TEST

/* put_* writes its width and nothing before or after it. */
START_TEST(put_writes_only_its_width)
{
    uint8_t buf[12];
    memset(buf, 0xAA, sizeof buf);
    skp_put_u16(buf + 2, 0);
    static const uint8_t e16[12] = {0xAA, 0xAA, 0,    0,    0xAA, 0xAA,
                                    0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA};
    ck_assert_mem_eq(buf, e16, 12);
    memset(buf, 0xAA, sizeof buf);
    skp_put_u32(buf + 2, 0);
    static const uint8_t e32[12] = {0xAA, 0xAA, 0, 0, 0, 0, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA};
    ck_assert_mem_eq(buf, e32, 12);
    memset(buf, 0xAA, sizeof buf);
    skp_put_u64(buf + 2, 0);
    static const uint8_t e64[12] = {0xAA, 0xAA, 0, 0, 0, 0, 0, 0, 0, 0, 0xAA, 0xAA};
    ck_assert_mem_eq(buf, e64, 12);
}
END_TEST

START_TEST(encode_header_bytes)
{
    struct skp_header h = {.version = SKP_VERSION,
                           .opcode = SKP_OP_RENDER,
                           .flags = SKP_F_REPLY,
                           .status = SKP_S_BUSY,
                           .id = 0x0A0B0C0Du,
                           .body_len = 0x01020304u};
    static const uint8_t want[SKP_HEADER_SIZE] = {
        0x53, 0x4B, 0x4C, 0x44, /* 0: magic "SKLD" */
        0x01,                   /* 4: version 1 */
        0x0B,                   /* 5: opcode RENDER = 11 */
        0x01, 0x00,             /* 6: flags, bit 0 reply */
        0x64, 0x00,             /* 8: status BUSY = 100 */
        0x00, 0x00,             /* 10: reserved */
        0x0D, 0x0C, 0x0B, 0x0A, /* 12: request id */
        0x04, 0x03, 0x02, 0x01, /* 16: body_len */
    };
    uint8_t *out = tail(NULL, SKP_HEADER_SIZE);
    memset(out, 0xFF, SKP_HEADER_SIZE);
    skp_encode_header(&h, out);
    ck_assert_mem_eq(out, want, SKP_HEADER_SIZE);
}
END_TEST

/* Every field lands at its own offset: distinct high and low bytes in each. */
START_TEST(encode_header_fields_distinct)
{
    struct skp_header h = {.version = 0x7E,
                           .opcode = 0xC3,
                           .flags = 0xA1B2,
                           .status = 0xC4D5,
                           .id = 0xE6F70819u,
                           .body_len = 0x2A3B4C5Du};
    static const uint8_t want[SKP_HEADER_SIZE + 1] = {
        0x53, 0x4B, 0x4C, 0x44, 0x7E, 0xC3, 0xB2, 0xA1, 0xD5, 0xC4, 0x00,
        0x00, 0x19, 0x08, 0xF7, 0xE6, 0x5D, 0x4C, 0x3B, 0x2A, 0xEE, /* canary */
    };
    uint8_t out[SKP_HEADER_SIZE + 1];
    memset(out, 0xEE, sizeof out);
    skp_encode_header(&h, out);
    ck_assert_mem_eq(out, want, sizeof want);
}
END_TEST

/* The encoder's output is what the parser accepts, field for field. */
START_TEST(encode_then_parse)
{
    static const struct skp_header hs[] = {
        {SKP_VERSION, SKP_OP_HELLO, 0, 0, 0, 0},
        {SKP_VERSION, SKP_OP_PING, SKP_F_REPLY, SKP_S_OK, 1, 5},
        {SKP_VERSION, SKP_OP_STATS, SKP_F_REPLY, SKP_S_NO_MEMORY, 0xFFFFFFFFu, 1},
        {SKP_VERSION, 0xFF, 0, 0xFFFF, 0x80000000u, 7},
    };
    for (size_t i = 0; i < NELEM(hs); i++) {
        uint8_t buf[SKP_HEADER_SIZE + 8];
        memset(buf, 0x5A, sizeof buf);
        skp_encode_header(&hs[i], buf);
        size_t n = SKP_HEADER_SIZE + hs[i].body_len;
        const uint8_t *p = tail(buf, n);
        struct skp_frame f;
        size_t used = 999;
        ck_assert_int_eq(skp_parser_feed(p, n, 64, &f, &used), SKP_FRAME);
        ck_assert_uint_eq(used, n);
        ck_assert_uint_eq(f.h.version, hs[i].version);
        ck_assert_uint_eq(f.h.opcode, hs[i].opcode);
        ck_assert_uint_eq(f.h.flags, hs[i].flags);
        ck_assert_uint_eq(f.h.status, hs[i].status);
        ck_assert_uint_eq(f.h.id, hs[i].id);
        ck_assert_uint_eq(f.h.body_len, hs[i].body_len);
        ck_assert_ptr_eq(f.body, p + SKP_HEADER_SIZE);
    }
}
END_TEST

/* ---- names and statuses ------------------------------------------------------------------- */

/* PROTOCOL.md "Messages", copied by hand. */
static const struct {
    int value;
    const char *name;
} proto_opcodes[] = {
    {1, "HELLO"},   {2, "PING"},         {3, "LOAD_PATH"},     {4, "LOAD_BYTES"}, {5, "UNLOAD"},
    {6, "INFO"},    {7, "INSTANCE_NEW"}, {8, "INSTANCE_FREE"}, {9, "POSE"},       {10, "MESH"},
    {11, "RENDER"}, {12, "STATS"},       {13, "INFO_JSON"},
};

/* PROTOCOL.md "Status codes", copied by hand (fault: 1 client, 0 none or server). */
static const struct {
    int value;
    const char *name;
    int client;
} proto_statuses[] = {
    {0, "OK", 0},         {1, "BAD_REQUEST", 1},     {2, "FRAMING", 1},
    {3, "VERSION", 1},    {4, "TOO_BIG", 1},         {5, "UNKNOWN_OPCODE", 1},
    {6, "AUTH", 1},       {7, "NOT_FOUND", 1},       {8, "BAD_FILE", 1},
    {9, "LIMIT", 1},      {10, "FORBIDDEN_PATH", 1}, {100, "BUSY", 0},
    {101, "SHUTDOWN", 0}, {102, "INTERNAL", 0},      {103, "NO_MEMORY", 0},
};

START_TEST(opcode_names_every_opcode)
{
    size_t n = 0;
#define SKP_X(N, V)                                                                                \
    ck_assert_str_eq(skp_opcode_name(V), #N);                                                      \
    ck_assert_str_eq(skp_opcode_name(SKP_OP_##N), #N);                                             \
    n++;
    SKP_OPCODES(SKP_X)
#undef SKP_X
    ck_assert_uint_eq(n, NELEM(proto_opcodes));
}
END_TEST

START_TEST(opcode_values_match_protocol)
{
    for (size_t i = 0; i < NELEM(proto_opcodes); i++)
        ck_assert_str_eq(skp_opcode_name(proto_opcodes[i].value), proto_opcodes[i].name);
    int found = 0;
#define SKP_X(N, V)                                                                                \
    for (size_t i = 0; i < NELEM(proto_opcodes); i++)                                              \
        if (proto_opcodes[i].value == (V)) {                                                       \
            ck_assert_str_eq(proto_opcodes[i].name, #N);                                           \
            found++;                                                                               \
        }
    SKP_OPCODES(SKP_X)
#undef SKP_X
    ck_assert_int_eq(found, (int)NELEM(proto_opcodes));
    ck_assert_int_eq(SKP_OP_MAX, 14);
}
END_TEST

/* The rows "| N | NAME | third |" under the heading section of PROTOCOL.md (up to the next
 * heading), into values, names and third; returns how many. */
static int doc_table(const char *doc, const char *section, int values[], char names[][32],
                     char third[][32], int max)
{
    const char *p = strstr(doc, section);
    ck_assert_msg(p != NULL, "PROTOCOL.md has no %s", section);
    const char *end = strstr(p + 3, "\n## ");
    int n = 0;
    for (const char *line = p; line && (!end || line < end) && n < max;) {
        int v;
        char name[32], cell[32] = "";
        if (sscanf(line, "| %d | %31[A-Z_] | %31[a-z]", &v, name, cell) >= 2) {
            values[n] = v;
            snprintf(names[n], 32, "%s", name);
            snprintf(third[n], 32, "%s", cell);
            n++;
        }
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    return n;
}

/* proto/PROTOCOL.md, the document clients are written from, names exactly the codes the code
 * has: every opcode and status row matches proto/skp.h (value, name, fault), and the code has
 * no code the document lacks. */
START_TEST(doc_tables_match_code)
{
    const char *src = getenv("SKELD_SRCDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/proto/PROTOCOL.md", src ? src : ".");
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    static char doc[1 << 17];
    size_t len = fread(doc, 1, sizeof doc - 1, f);
    fclose(f);
    doc[len] = 0;
    int values[64];
    char names[64][32], third[64][32];
    int n = doc_table(doc, "## Messages", values, names, third, 64), code = 0;
    for (int i = 0; i < n; i++)
        ck_assert_str_eq(skp_opcode_name(values[i]), names[i]);
#define SKP_X(N, V) code++;
    SKP_OPCODES(SKP_X)
#undef SKP_X
    ck_assert_int_eq(n, code);
    n = doc_table(doc, "## Status codes", values, names, third, 64);
    code = 0;
    for (int i = 0; i < n; i++) {
        ck_assert_str_eq(skp_status_name(values[i]), names[i]);
        ck_assert_int_eq(skp_is_client_fault(values[i]), !strcmp(third[i], "client"));
        ck_assert(values[i] == 0 || !strcmp(third[i], "client") || !strcmp(third[i], "server"));
    }
#define SKP_X(N, V, M) code++;
    SKP_STATUSES(SKP_X)
#undef SKP_X
    ck_assert_int_eq(n, code);
}
END_TEST

START_TEST(opcode_name_unknown)
{
    static const int unknown[] = {0, 14, 15, 99, 255, 256, 257, 265, -1, -9, INT_MAX, INT_MIN};
    for (size_t i = 0; i < NELEM(unknown); i++)
        ck_assert_str_eq(skp_opcode_name(unknown[i]), "?");
    ck_assert_str_eq(skp_opcode_name(SKP_OP_MAX), "?");
}
END_TEST

START_TEST(strerror_every_status)
{
    size_t n = 0;
#define SKP_X(N, V, M)                                                                             \
    ck_assert_str_eq(skp_strerror(V), M);                                                          \
    ck_assert_str_eq(skp_strerror(SKP_S_##N), M);                                                  \
    ck_assert_str_ne(skp_strerror(V), "unknown status");                                           \
    n++;
    SKP_STATUSES(SKP_X)
#undef SKP_X
    ck_assert_uint_eq(n, NELEM(proto_statuses));
    /* Messages tell statuses apart. */
    for (size_t i = 0; i < NELEM(proto_statuses); i++)
        for (size_t j = i + 1; j < NELEM(proto_statuses); j++)
            ck_assert_str_ne(skp_strerror(proto_statuses[i].value),
                             skp_strerror(proto_statuses[j].value));
    ck_assert_str_eq(skp_strerror(0), "ok");
    ck_assert_str_eq(skp_strerror(100), "server busy");
}
END_TEST

START_TEST(status_values_match_protocol)
{
    int found = 0;
#define SKP_X(N, V, M)                                                                             \
    for (size_t i = 0; i < NELEM(proto_statuses); i++)                                             \
        if (proto_statuses[i].value == (V)) {                                                      \
            ck_assert_str_eq(proto_statuses[i].name, #N);                                          \
            found++;                                                                               \
        }
    SKP_STATUSES(SKP_X)
#undef SKP_X
    ck_assert_int_eq(found, (int)NELEM(proto_statuses));
}
END_TEST

START_TEST(strerror_unknown)
{
    static const int unknown[] = {-1,  -10, 11,  12,    50,    99,      104,
                                  200, 255, 256, 65535, 65536, INT_MAX, INT_MIN};
    for (size_t i = 0; i < NELEM(unknown); i++)
        ck_assert_str_eq(skp_strerror(unknown[i]), "unknown status");
}
END_TEST

START_TEST(client_fault_ranges)
{
    for (size_t i = 0; i < NELEM(proto_statuses); i++)
        ck_assert_msg(!!skp_is_client_fault(proto_statuses[i].value) == proto_statuses[i].client,
                      "status %d (%s): client fault %d, want %d", proto_statuses[i].value,
                      proto_statuses[i].name, skp_is_client_fault(proto_statuses[i].value),
                      proto_statuses[i].client);
    ck_assert_int_eq(skp_is_client_fault(0), 0);
    for (int s = 1; s < 100; s++)
        EXPECT(skp_is_client_fault(s) == 1, "status %d", s);
    for (int s = 100; s <= 70000; s++)
        EXPECT(skp_is_client_fault(s) == 0, "status %d", s);
    for (int s = -70000; s < 0; s++)
        EXPECT(skp_is_client_fault(s) == 0, "status %d", s);
    static const int never[] = {-1, -99, -100, INT_MIN, INT_MAX};
    for (size_t i = 0; i < NELEM(never); i++)
        ck_assert_int_eq(skp_is_client_fault(never[i]), 0);
}
END_TEST

START_TEST(parse_status_mapping)
{
    ck_assert_int_eq(skp_parse_status(SKP_EBADMAGIC), SKP_S_FRAMING);
    ck_assert_int_eq(skp_parse_status(SKP_EBADVERSION), SKP_S_VERSION);
    ck_assert_int_eq(skp_parse_status(SKP_EOVERSIZE), SKP_S_TOO_BIG);
    ck_assert_int_eq(skp_parse_status(SKP_ERESERVED), SKP_S_FRAMING);
    /* The numbers of PROTOCOL.md's table. */
    ck_assert_int_eq(skp_parse_status(SKP_EBADMAGIC), 2);
    ck_assert_int_eq(skp_parse_status(SKP_EBADVERSION), 3);
    ck_assert_int_eq(skp_parse_status(SKP_EOVERSIZE), 4);
    ck_assert_int_eq(skp_parse_status(SKP_ERESERVED), 2);
    /* Every parse error is the client's fault. */
    static const int errs[] = {SKP_EBADMAGIC, SKP_EBADVERSION, SKP_EOVERSIZE, SKP_ERESERVED};
    for (size_t i = 0; i < NELEM(errs); i++)
        ck_assert_int_eq(skp_is_client_fault(skp_parse_status(errs[i])), 1);
}
END_TEST

/* ---- writer and reader -------------------------------------------------------------------- */

START_TEST(writer_exact_bytes)
{
    static const uint8_t want[] = {
        0xAB,                                           /* u8 */
        0x34, 0x12,                                     /* u16 0x1234 */
        0xEF, 0xBE, 0xAD, 0xDE,                         /* u32 0xDEADBEEF */
        0xFE, 0xFF, 0xFF, 0xFF,                         /* i32 -2 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xF8, 0x3F, /* f64 1.5 */
        0x02, 0x00, 'h',  'i',                          /* str "hi" */
        0x03, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03,       /* bytes {1, 2, 3} */
        0x09,                                           /* raw {9} */
    };
    uint8_t *buf = tail(NULL, sizeof want);
    memset(buf, 0x77, sizeof want);
    struct skp_writer w;
    skp_writer_init(&w, buf, sizeof want);
    ck_assert_uint_eq(w.len, 0);
    ck_assert_int_eq(w.err, SKP_EOK);
    skp_write_u8(&w, 0xAB);
    ck_assert_uint_eq(w.len, 1);
    skp_write_u16(&w, 0x1234);
    ck_assert_uint_eq(w.len, 3);
    skp_write_u32(&w, 0xDEADBEEFu);
    ck_assert_uint_eq(w.len, 7);
    skp_write_i32(&w, -2);
    ck_assert_uint_eq(w.len, 11);
    skp_write_f64(&w, 1.5);
    ck_assert_uint_eq(w.len, 19);
    skp_write_str(&w, "hi", 2);
    ck_assert_uint_eq(w.len, 23);
    static const uint8_t blob[] = {1, 2, 3};
    skp_write_bytes(&w, blob, 3);
    ck_assert_uint_eq(w.len, 30);
    static const uint8_t nine = 9;
    skp_write_raw(&w, &nine, 1);
    ck_assert_int_eq(w.err, SKP_EOK);
    ck_assert_uint_eq(w.len, sizeof want);
    ck_assert_mem_eq(buf, want, sizeof want);

    struct skp_reader r;
    skp_reader_init(&r, buf, sizeof want);
    ck_assert_uint_eq(skp_read_u8(&r), 0xAB);
    ck_assert_uint_eq(skp_read_u16(&r), 0x1234);
    ck_assert_uint_eq(skp_read_u32(&r), 0xDEADBEEFu);
    ck_assert_int_eq(skp_read_i32(&r), -2);
    ck_assert_uint_eq(dbits(skp_read_f64(&r)), dbits(1.5));
    size_t n = 99;
    const char *s = skp_read_str(&r, &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_ptr_eq(s, (const char *)buf + 21); /* a view, not a copy */
    ck_assert_mem_eq(s, "hi", 2);
    n = 99;
    const uint8_t *b = skp_read_bytes(&r, &n, 3);
    ck_assert_uint_eq(n, 3);
    ck_assert_ptr_eq(b, buf + 27);
    const uint8_t *raw = skp_read_raw(&r, 1);
    ck_assert_ptr_eq(raw, buf + 30);
    ck_assert_uint_eq(*raw, 9);
    ck_assert_uint_eq(r.pos, sizeof want);
    ck_assert_int_eq(r.err, SKP_EOK);
    ck_assert_int_eq(skp_reader_finish(&r), SKP_EOK);
}
END_TEST

START_TEST(round_trip_integers)
{
    static const uint8_t u8s[] = {0, 1, 0x7F, 0x80, 0xFF};
    static const uint16_t u16s[] = {0, 1, 0x00FF, 0x0100, 0x7FFF, 0x8000, 0xFFFF};
    static const uint32_t u32s[] = {0,       1,           0xFF,        0x100,      0xFFFF,
                                    0x10000, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu};
    static const int32_t i32s[] = {0, 1, -1, 127, -128, 32767, -32768, INT32_MAX, INT32_MIN};
    uint8_t buf[256];
    struct skp_writer w;
    skp_writer_init(&w, buf, sizeof buf);
    for (size_t i = 0; i < NELEM(u8s); i++)
        skp_write_u8(&w, u8s[i]);
    for (size_t i = 0; i < NELEM(u16s); i++)
        skp_write_u16(&w, u16s[i]);
    for (size_t i = 0; i < NELEM(u32s); i++)
        skp_write_u32(&w, u32s[i]);
    for (size_t i = 0; i < NELEM(i32s); i++)
        skp_write_i32(&w, i32s[i]);
    ck_assert_int_eq(w.err, SKP_EOK);
    size_t total = NELEM(u8s) + 2 * NELEM(u16s) + 4 * NELEM(u32s) + 4 * NELEM(i32s);
    ck_assert_uint_eq(w.len, total);

    /* Hand-check the signed encodings: two's complement, little-endian. */
    const uint8_t *i32_at = buf + NELEM(u8s) + 2 * NELEM(u16s) + 4 * NELEM(u32s);
    static const uint8_t minus1[4] = {0xFF, 0xFF, 0xFF, 0xFF};
    static const uint8_t min32[4] = {0x00, 0x00, 0x00, 0x80};
    static const uint8_t max32[4] = {0xFF, 0xFF, 0xFF, 0x7F};
    static const uint8_t m128[4] = {0x80, 0xFF, 0xFF, 0xFF};
    ck_assert_mem_eq(i32_at + 4 * 2, minus1, 4);
    ck_assert_mem_eq(i32_at + 4 * 4, m128, 4);
    ck_assert_mem_eq(i32_at + 4 * 7, max32, 4);
    ck_assert_mem_eq(i32_at + 4 * 8, min32, 4);

    struct skp_reader r;
    skp_reader_init(&r, tail(buf, total), total);
    for (size_t i = 0; i < NELEM(u8s); i++)
        ck_assert_uint_eq(skp_read_u8(&r), u8s[i]);
    for (size_t i = 0; i < NELEM(u16s); i++)
        ck_assert_uint_eq(skp_read_u16(&r), u16s[i]);
    for (size_t i = 0; i < NELEM(u32s); i++)
        ck_assert_uint_eq(skp_read_u32(&r), u32s[i]);
    for (size_t i = 0; i < NELEM(i32s); i++)
        ck_assert_int_eq(skp_read_i32(&r), i32s[i]);
    ck_assert_int_eq(skp_reader_finish(&r), SKP_EOK);
}
END_TEST

START_TEST(round_trip_f64_special)
{
    static const uint64_t bits[] = {
        0x0000000000000000u, /* +0 */
        0x8000000000000000u, /* -0 */
        0x3FF0000000000000u, /* 1 */
        0xC002000000000000u, /* -2.25 */
        0x7FF0000000000000u, /* +inf */
        0xFFF0000000000000u, /* -inf */
        0x7FF8000000000000u, /* the default quiet NaN */
        0x7FF8DEADBEEF0001u, /* a NaN with a payload */
        0xFFF8000000000001u, /* a negative NaN with a payload */
        0x0000000000000001u, /* the smallest subnormal */
        0x7FEFFFFFFFFFFFFFu, /* DBL_MAX */
        0x3FB999999999999Au, /* 0.1 */
    };
    uint8_t buf[8 * NELEM(bits)];
    uint8_t *out = tail(NULL, sizeof buf);
    struct skp_writer w;
    skp_writer_init(&w, out, sizeof buf);
    for (size_t i = 0; i < NELEM(bits); i++)
        skp_write_f64(&w, bitsd(bits[i]));
    ck_assert_int_eq(w.err, SKP_EOK);
    ck_assert_uint_eq(w.len, sizeof buf);
    for (size_t i = 0; i < NELEM(bits); i++) {
        uint8_t want[8];
        le64(want, bits[i]);
        ck_assert_mem_eq(out + 8 * i, want, 8);
    }
    /* The sign of zero is on the wire: the last byte of -0 is 0x80. */
    ck_assert_uint_eq(out[15], 0x80);

    struct skp_reader r;
    skp_reader_init(&r, out, sizeof buf);
    for (size_t i = 0; i < NELEM(bits); i++) {
        double d = skp_read_f64(&r);
        ck_assert_msg(dbits(d) == bits[i], "f64 %zu: read %016llx, wrote %016llx", i,
                      (unsigned long long)dbits(d), (unsigned long long)bits[i]);
    }
    ck_assert_int_eq(skp_reader_finish(&r), SKP_EOK);

    /* And as values. */
    skp_reader_init(&r, out, sizeof buf);
    double z = skp_read_f64(&r), nz = skp_read_f64(&r);
    ck_assert(z == 0.0 && !signbit(z));
    ck_assert(nz == 0.0 && signbit(nz));
    ck_assert(skp_read_f64(&r) == 1.0);
    ck_assert(skp_read_f64(&r) == -2.25);
    double pinf = skp_read_f64(&r), minf = skp_read_f64(&r);
    ck_assert(isinf(pinf) && pinf > 0);
    ck_assert(isinf(minf) && minf < 0);
    ck_assert(isnan(skp_read_f64(&r)));
}
END_TEST

START_TEST(str_up_to_max_name)
{
    static char s[SKP_MAX_NAME + 1];
    for (size_t i = 0; i < sizeof s; i++)
        s[i] = (char)('a' + i % 26);
    size_t cap = 2 + SKP_MAX_NAME;
    uint8_t *buf = tail(NULL, cap);
    struct skp_writer w;
    skp_writer_init(&w, buf, cap);
    skp_write_str(&w, s, SKP_MAX_NAME);
    ck_assert_int_eq(w.err, SKP_EOK);
    ck_assert_uint_eq(w.len, cap);
    ck_assert_uint_eq(buf[0], 0x00); /* 1024 = 0x0400, little-endian */
    ck_assert_uint_eq(buf[1], 0x04);
    ck_assert_mem_eq(buf + 2, s, SKP_MAX_NAME);

    struct skp_reader r;
    skp_reader_init(&r, buf, cap);
    size_t n = 0;
    const char *got = skp_read_str(&r, &n);
    ck_assert_ptr_eq(got, (const char *)buf + 2);
    ck_assert_uint_eq(n, SKP_MAX_NAME);
    ck_assert_int_eq(skp_reader_finish(&r), SKP_EOK);
}
END_TEST

START_TEST(str_one_over_max_name)
{
    static char s[SKP_MAX_NAME + 1];
    memset(s, 'x', sizeof s);
    /* Writer: refused whole, nothing written, even with room to spare. */
    size_t cap = 2 + SKP_MAX_NAME + 16;
    uint8_t *buf = tail(NULL, cap);
    memset(buf, 0xCC, cap);
    struct skp_writer w;
    skp_writer_init(&w, buf, cap);
    skp_write_str(&w, s, SKP_MAX_NAME + 1);
    ck_assert_int_eq(w.err, SKP_ETOOLONG);
    ck_assert_uint_eq(w.len, 0);
    ck_assert_uint_eq(buf[0], 0xCC);
    ck_assert_uint_eq(buf[1], 0xCC);

    /* Reader: a wire length of 1025 with all 1025 bytes present is still too long. */
    uint8_t *in = tail(NULL, 2 + SKP_MAX_NAME + 1);
    le16(in, SKP_MAX_NAME + 1);
    memset(in + 2, 'y', SKP_MAX_NAME + 1);
    struct skp_reader r;
    skp_reader_init(&r, in, 2 + SKP_MAX_NAME + 1);
    size_t n = 77;
    ck_assert_ptr_null(skp_read_str(&r, &n));
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(r.err, SKP_ETOOLONG);
    ck_assert_int_eq(skp_reader_finish(&r), SKP_ETOOLONG);
    /* Sticky: a u8 that is there is not read after the error. */
    ck_assert_uint_eq(skp_read_u8(&r), 0);
    ck_assert_int_eq(r.err, SKP_ETOOLONG);

    /* 0xFFFF: the largest a u16 can claim. */
    uint8_t ff[2] = {0xFF, 0xFF};
    skp_reader_init(&r, tail(ff, 2), 2);
    n = 77;
    ck_assert_ptr_null(skp_read_str(&r, &n));
    ck_assert_uint_eq(n, 0);
    ck_assert_int_ne(r.err, SKP_EOK);
}
END_TEST

START_TEST(str_empty)
{
    uint8_t *buf = tail(NULL, 2);
    struct skp_writer w;
    skp_writer_init(&w, buf, 2);
    skp_write_str(&w, "", 0);
    ck_assert_int_eq(w.err, SKP_EOK);
    ck_assert_uint_eq(w.len, 2);
    ck_assert_uint_eq(buf[0], 0);
    ck_assert_uint_eq(buf[1], 0);
    struct skp_reader r;
    skp_reader_init(&r, buf, 2);
    size_t n = 5;
    const char *s = skp_read_str(&r, &n);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(skp_reader_finish(&r), SKP_EOK);
}
END_TEST

START_TEST(bytes_round_trip_and_max)
{
    uint8_t blob[300];
    for (size_t i = 0; i < sizeof blob; i++)
        blob[i] = (uint8_t)(i * 7 + 1);
    size_t cap = 4 + sizeof blob + 4;
    uint8_t *buf = tail(NULL, cap);
    struct skp_writer w;
    skp_writer_init(&w, buf, cap);
    skp_write_bytes(&w, blob, sizeof blob);
    skp_write_bytes(&w, NULL, 0);
    ck_assert_int_eq(w.err, SKP_EOK);
    ck_assert_uint_eq(w.len, cap);
    static const uint8_t len300[4] = {0x2C, 0x01, 0x00, 0x00};
    static const uint8_t len0[4] = {0, 0, 0, 0};
    ck_assert_mem_eq(buf, len300, 4);
    ck_assert_mem_eq(buf + 4, blob, sizeof blob);
    ck_assert_mem_eq(buf + 4 + sizeof blob, len0, 4);

    /* max == length: accepted. */
    struct skp_reader r;
    skp_reader_init(&r, buf, cap);
    size_t n = 0;
    const void *p = skp_read_bytes(&r, &n, sizeof blob);
    ck_assert_ptr_eq(p, buf + 4);
    ck_assert_uint_eq(n, sizeof blob);
    n = 9;
    p = skp_read_bytes(&r, &n, 0);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(skp_reader_finish(&r), SKP_EOK);

    /* max one below the length: refused. */
    skp_reader_init(&r, buf, cap);
    n = 9;
    ck_assert_ptr_null(skp_read_bytes(&r, &n, sizeof blob - 1));
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(r.err, SKP_ETOOLONG);
    ck_assert_int_eq(skp_reader_finish(&r), SKP_ETOOLONG);

    /* PING's 1024: a 1025-byte payload is refused, 1024 taken. */
    uint8_t *ping = tail(NULL, 4 + 1025);
    le32(ping, 1025);
    memset(ping + 4, 0x11, 1025);
    skp_reader_init(&r, ping, 4 + 1025);
    ck_assert_ptr_null(skp_read_bytes(&r, &n, 1024));
    ck_assert_int_eq(r.err, SKP_ETOOLONG);
    le32(ping, 1024);
    skp_reader_init(&r, ping, 4 + 1024);
    ck_assert_ptr_eq(skp_read_bytes(&r, &n, 1024), ping + 4);
    ck_assert_uint_eq(n, 1024);
    ck_assert_int_eq(skp_reader_finish(&r), SKP_EOK);
}
END_TEST

START_TEST(writer_bytes_too_long)
{
    /* Longer than any frame: refused before anything is written (src is never read). */
    uint8_t dummy[1] = {0};
    uint8_t *buf = tail(NULL, 16);
    memset(buf, 0xCC, 16);
    struct skp_writer w;
    skp_writer_init(&w, buf, 16);
    skp_write_bytes(&w, dummy, (size_t)SKP_MAX_FRAME + 1);
    ck_assert_int_eq(w.err, SKP_ETOOLONG);
    ck_assert_uint_eq(w.len, 0);
    ck_assert_uint_eq(buf[0], 0xCC);
    /* Exactly SKP_MAX_FRAME is a legal length: this buffer is just too small. */
    skp_writer_init(&w, buf, 16);
    skp_write_bytes(&w, dummy, SKP_MAX_FRAME);
    ck_assert_int_eq(w.err, SKP_ENOSPACE);
    ck_assert_uint_le(w.len, 16);
}
END_TEST

START_TEST(writer_huge_lengths_no_wrap)
{
    uint8_t src[1] = {0};
    uint8_t *buf = tail(NULL, 8);
    struct skp_writer w;
    skp_writer_init(&w, buf, 8);
    skp_write_u32(&w, 1);
    skp_write_raw(&w, src, SIZE_MAX);
    ck_assert_int_eq(w.err, SKP_ENOSPACE);
    ck_assert_uint_eq(w.len, 4);
    skp_writer_init(&w, buf, 8);
    skp_write_u32(&w, 1);
    skp_write_raw(&w, src, SIZE_MAX - 3);
    ck_assert_int_eq(w.err, SKP_ENOSPACE);
    ck_assert_uint_eq(w.len, 4);
}
END_TEST

enum wop { W_U8, W_U16, W_U32, W_I32, W_F64, W_STR, W_BYTES, W_RAW };
static const struct {
    enum wop op;
    size_t size; /* bytes the write takes: payload of 3 for str, bytes and raw */
} wops[] = {
    {W_U8, 1}, {W_U16, 2}, {W_U32, 4}, {W_I32, 4}, {W_F64, 8}, {W_STR, 5}, {W_BYTES, 7}, {W_RAW, 3},
};

static void do_write(struct skp_writer *w, enum wop op)
{
    switch (op) {
    case W_U8: skp_write_u8(w, 0x11); break;
    case W_U16: skp_write_u16(w, 0x2222); break;
    case W_U32: skp_write_u32(w, 0x33333333u); break;
    case W_I32: skp_write_i32(w, -5); break;
    case W_F64: skp_write_f64(w, -0.0); break;
    case W_STR: skp_write_str(w, "abc", 3); break;
    case W_BYTES: skp_write_bytes(w, "abc", 3); break;
    case W_RAW: skp_write_raw(w, "abc", 3); break;
    }
}

/* Each write exactly fits, and one byte short it sets ENOSPACE without touching the byte past
 * the end (it is a guard page) or the bytes already written. */
START_TEST(writer_enospace_each_type)
{
    for (size_t i = 0; i < NELEM(wops); i++) {
        for (size_t pre = 0; pre < 3; pre++) {
            size_t cap = pre + wops[i].size;
            uint8_t *buf = tail(NULL, cap);
            memset(buf, 0xCC, cap);
            struct skp_writer w;
            skp_writer_init(&w, buf, cap);
            for (size_t k = 0; k < pre; k++)
                skp_write_u8(&w, 0x5A);
            do_write(&w, wops[i].op);
            ck_assert_msg(w.err == SKP_EOK, "op %zu with exact room: err %d", i, w.err);
            ck_assert_uint_eq(w.len, cap);

            buf = tail(NULL, cap - 1);
            memset(buf, 0xCC, cap - 1);
            skp_writer_init(&w, buf, cap - 1);
            for (size_t k = 0; k < pre; k++)
                skp_write_u8(&w, 0x5A);
            do_write(&w, wops[i].op);
            ck_assert_msg(w.err == SKP_ENOSPACE, "op %zu one byte short: err %d", i, w.err);
            ck_assert_uint_le(w.len, cap - 1);
            ck_assert_uint_ge(w.len, pre);
            for (size_t k = 0; k < pre; k++)
                ck_assert_uint_eq(buf[k], 0x5A);
            /* Fixed-width fields are all-or-nothing. */
            if (wops[i].op != W_STR && wops[i].op != W_BYTES) {
                ck_assert_uint_eq(w.len, pre);
                for (size_t k = pre; k < cap - 1; k++)
                    ck_assert_uint_eq(buf[k], 0xCC);
            }
        }
    }
}
END_TEST

/* The run writers through one signature, for assert_run_all_or_nothing. */
typedef void (*run_writer)(struct skp_writer *w, const void *v, size_t n);
static void write_f64s(struct skp_writer *w, const void *v, size_t n)
{
    skp_write_f64s(w, v, n);
}
static void write_u32s(struct skp_writer *w, const void *v, size_t n)
{
    skp_write_u32s(w, v, n);
}

/* A run of n (bytes long) into one byte less room: ENOSPACE, nothing written or counted; and
 * a count whose byte size wraps (wrap_n): ENOSPACE too. */
static void assert_run_all_or_nothing(run_writer write, const void *v, size_t n, size_t bytes,
                                      size_t wrap_n)
{
    uint8_t small[64];
    ck_assert_uint_le(bytes, sizeof small);
    memset(small, 0xCC, sizeof small);
    struct skp_writer w;
    skp_writer_init(&w, small, bytes - 1);
    write(&w, v, n);
    ck_assert_int_eq(w.err, SKP_ENOSPACE);
    ck_assert_uint_eq(w.len, 0);
    for (size_t k = 0; k < sizeof small; k++)
        ck_assert_uint_eq(small[k], 0xCC);
    skp_writer_init(&w, small, bytes - 1);
    write(&w, v, wrap_n);
    ck_assert_int_eq(w.err, SKP_ENOSPACE);
}

/* A run of doubles is the same bytes as one skp_write_f64 each, and all-or-nothing. */
START_TEST(writer_f64s_matches_single_writes)
{
    const double v[5] = {1.5, -0.0, 3.141592653589793, -1e300, 6.02214076e23};
    uint8_t one[40], run[40];
    struct skp_writer a, b;
    skp_writer_init(&a, one, sizeof one);
    skp_writer_init(&b, run, sizeof run);
    for (int i = 0; i < 5; i++)
        skp_write_f64(&a, v[i]);
    skp_write_f64s(&b, v, 5);
    ck_assert_int_eq(a.err, SKP_EOK);
    ck_assert_int_eq(b.err, SKP_EOK);
    ck_assert_uint_eq(b.len, 40);
    ck_assert_mem_eq(one, run, 40);
    ck_assert_uint_eq(run[0], 0x00); /* 1.5 = 0x3FF8000000000000, little-endian */
    ck_assert_uint_eq(run[7], 0x3F);
    ck_assert_uint_eq(run[6], 0xF8);
    skp_write_f64s(&b, v, 0); /* nothing, no error */
    ck_assert_int_eq(b.err, SKP_EOK);
    assert_run_all_or_nothing(write_f64s, v, 5, 40, SIZE_MAX / 4); /* n * 8 would wrap */
}
END_TEST

/* A run of u32s is the same bytes as one skp_write_u32 each, and all-or-nothing. */
START_TEST(writer_u32s_matches_single_writes)
{
    const uint32_t v[5] = {0, 1, 0xdeadbeefu, 0xffffffffu, 258};
    uint8_t one[20], run[20];
    struct skp_writer a, b;
    skp_writer_init(&a, one, sizeof one);
    skp_writer_init(&b, run, sizeof run);
    for (int i = 0; i < 5; i++)
        skp_write_u32(&a, v[i]);
    skp_write_u32s(&b, v, 5);
    ck_assert_int_eq(b.err, SKP_EOK);
    ck_assert_uint_eq(b.len, 20);
    ck_assert_mem_eq(one, run, 20);
    ck_assert_uint_eq(run[8], 0xef); /* little-endian */
    ck_assert_uint_eq(run[11], 0xde);
    skp_write_u32s(&b, v, 0);
    ck_assert_int_eq(b.err, SKP_EOK);
    assert_run_all_or_nothing(write_u32s, v, 5, 20, SIZE_MAX / 2); /* n * 4 would wrap */
}
END_TEST

/* A POSE bone record is the same bytes as its fields written one by one (PROTOCOL.md's
 * order), all or nothing, and refuses a name longer than SKP_MAX_NAME. */
START_TEST(writer_pose_bone_matches_fields)
{
    const double tint[4] = {255, 128.5, 0, 64};
    const double verts[4] = {1.25, -2.5, 1e-9, 42};
    struct skp_pose_bone rec = {
        {1, 2, 0.5, -1, 3, 0.25, 0.5, -0.5, 0.25, 7, -8}, 1, -3, "face.png", 8, tint, 2, verts};
    uint8_t want[256], got[256];
    struct skp_writer a, b;
    skp_writer_init(&a, want, sizeof want);
    skp_write_f64s(&a, rec.fields, 11);
    skp_write_u8(&a, 1);
    skp_write_i32(&a, -3);
    skp_write_str(&a, "face.png", 8);
    skp_write_f64s(&a, tint, 4);
    skp_write_u32(&a, 2);
    skp_write_f64s(&a, verts, 4);
    skp_writer_init(&b, got, sizeof got);
    skp_write_pose_bone(&b, &rec);
    ck_assert_int_eq(a.err, SKP_EOK);
    ck_assert_int_eq(b.err, SKP_EOK);
    ck_assert_uint_eq(b.len, a.len);
    ck_assert_uint_eq(b.len, 88 + 1 + 4 + 2 + 8 + 32 + 4 + 32);
    ck_assert_mem_eq(want, got, a.len);

    struct skp_pose_bone bare = rec; /* no texture, no vertices */
    bare.tex = "";
    bare.tex_len = 0;
    bare.vert_count = 0;
    bare.verts = NULL;
    skp_writer_init(&b, got, sizeof got);
    skp_write_pose_bone(&b, &bare);
    ck_assert_int_eq(b.err, SKP_EOK);
    ck_assert_uint_eq(b.len, 88 + 1 + 4 + 2 + 32 + 4);

    uint8_t small[170];
    memset(small, 0xCC, sizeof small);
    skp_writer_init(&b, small, sizeof small);
    skp_write_pose_bone(&b, &rec); /* needs 171 */
    ck_assert_int_eq(b.err, SKP_ENOSPACE);
    ck_assert_uint_eq(b.len, 0);
    for (size_t k = 0; k < sizeof small; k++)
        ck_assert_uint_eq(small[k], 0xCC);

    rec.tex_len = SKP_MAX_NAME + 1;
    skp_writer_init(&b, got, sizeof got);
    skp_write_pose_bone(&b, &rec);
    ck_assert_int_eq(b.err, SKP_ETOOLONG);
    ck_assert_uint_eq(b.len, 0);
}
END_TEST

/* After ENOSPACE nothing more is written, even what would fit. */
START_TEST(writer_stops_after_error)
{
    uint8_t *buf = tail(NULL, 6);
    memset(buf, 0xCC, 6);
    struct skp_writer w;
    skp_writer_init(&w, buf, 6);
    skp_write_u32(&w, 0x01020304u);
    ck_assert_int_eq(w.err, SKP_EOK);
    skp_write_u32(&w, 0x05060708u); /* needs 4, 2 left */
    ck_assert_int_eq(w.err, SKP_ENOSPACE);
    ck_assert_uint_eq(w.len, 4);
    skp_write_u8(&w, 0x99);
    skp_write_u16(&w, 0x9999);
    skp_write_raw(&w, "z", 1);
    skp_write_str(&w, "", 0);
    ck_assert_int_eq(w.err, SKP_ENOSPACE);
    ck_assert_uint_eq(w.len, 4);
    static const uint8_t want[6] = {0x04, 0x03, 0x02, 0x01, 0xCC, 0xCC};
    ck_assert_mem_eq(buf, want, 6);
}
END_TEST

/* The first error is the one reported. */
START_TEST(writer_first_error_sticks)
{
    static char big[SKP_MAX_NAME + 1];
    uint8_t *buf = tail(NULL, 4);
    struct skp_writer w;
    skp_writer_init(&w, buf, 4);
    skp_write_str(&w, big, sizeof big);
    ck_assert_int_eq(w.err, SKP_ETOOLONG);
    skp_write_f64(&w, 1.0); /* would be ENOSPACE on its own */
    ck_assert_int_eq(w.err, SKP_ETOOLONG);
    skp_write_u8(&w, 1); /* would fit on its own */
    ck_assert_int_eq(w.err, SKP_ETOOLONG);
    ck_assert_uint_eq(w.len, 0);

    skp_writer_init(&w, buf, 4);
    skp_write_f64(&w, 1.0);
    ck_assert_int_eq(w.err, SKP_ENOSPACE);
    skp_write_str(&w, big, sizeof big);
    ck_assert_int_eq(w.err, SKP_ENOSPACE);
    skp_write_bytes(&w, big, (size_t)SKP_MAX_FRAME + 1);
    ck_assert_int_eq(w.err, SKP_ENOSPACE);
}
END_TEST

START_TEST(writer_zero_capacity)
{
    uint8_t *buf = tail(NULL, 0);
    struct skp_writer w;
    skp_writer_init(&w, buf, 0);
    skp_write_raw(&w, "", 0);
    ck_assert_int_eq(w.err, SKP_EOK);
    ck_assert_uint_eq(w.len, 0);
    skp_write_u8(&w, 1);
    ck_assert_int_eq(w.err, SKP_ENOSPACE);
    ck_assert_uint_eq(w.len, 0);
}
END_TEST

/* Each read one byte short sets ETRUNCATED, yields zero and leaves pos alone. */
START_TEST(reader_truncated_each_type)
{
    static const uint8_t ff[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    struct skp_reader r;

    skp_reader_init(&r, tail(ff, 0), 0);
    ck_assert_uint_eq(skp_read_u8(&r), 0);
    ck_assert_int_eq(r.err, SKP_ETRUNCATED);
    ck_assert_uint_eq(r.pos, 0);

    skp_reader_init(&r, tail(ff, 1), 1);
    ck_assert_uint_eq(skp_read_u16(&r), 0);
    ck_assert_int_eq(r.err, SKP_ETRUNCATED);
    ck_assert_uint_eq(r.pos, 0);

    skp_reader_init(&r, tail(ff, 3), 3);
    ck_assert_uint_eq(skp_read_u32(&r), 0);
    ck_assert_int_eq(r.err, SKP_ETRUNCATED);
    ck_assert_uint_eq(r.pos, 0);

    skp_reader_init(&r, tail(ff, 3), 3);
    ck_assert_int_eq(skp_read_i32(&r), 0);
    ck_assert_int_eq(r.err, SKP_ETRUNCATED);

    skp_reader_init(&r, tail(ff, 7), 7);
    double d = skp_read_f64(&r);
    ck_assert_uint_eq(dbits(d), 0); /* +0.0, not a NaN from the 0xFF bytes */
    ck_assert_int_eq(r.err, SKP_ETRUNCATED);
    ck_assert_uint_eq(r.pos, 0);

    skp_reader_init(&r, tail(ff, 4), 4);
    ck_assert_ptr_null(skp_read_raw(&r, 5));
    ck_assert_int_eq(r.err, SKP_ETRUNCATED);
    ck_assert_int_eq(skp_reader_finish(&r), SKP_ETRUNCATED);

    /* After a partial read of a longer body, the next field runs over. */
    static const uint8_t three[3] = {0x01, 0x02, 0x03};
    skp_reader_init(&r, tail(three, 3), 3);
    ck_assert_uint_eq(skp_read_u16(&r), 0x0201);
    ck_assert_uint_eq(skp_read_u16(&r), 0);
    ck_assert_int_eq(r.err, SKP_ETRUNCATED);
    ck_assert_uint_eq(r.pos, 2);
    /* Sticky: the byte that is there is not handed out. */
    ck_assert_uint_eq(skp_read_u8(&r), 0);
    ck_assert_int_eq(r.err, SKP_ETRUNCATED);
    ck_assert_int_eq(skp_reader_finish(&r), SKP_ETRUNCATED);
}
END_TEST

START_TEST(reader_str_bytes_truncated)
{
    struct skp_reader r;
    size_t n;

    /* Length prefix itself cut short. */
    static const uint8_t one[1] = {0x05};
    skp_reader_init(&r, tail(one, 1), 1);
    n = 42;
    ck_assert_ptr_null(skp_read_str(&r, &n));
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(r.err, SKP_ETRUNCATED);

    /* A str claiming 5 with 3 present. */
    static const uint8_t s5[5] = {0x05, 0x00, 'a', 'b', 'c'};
    skp_reader_init(&r, tail(s5, 5), 5);
    n = 42;
    ck_assert_ptr_null(skp_read_str(&r, &n));
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(r.err, SKP_ETRUNCATED);

    /* bytes claiming 10 with 4 present. */
    static const uint8_t b10[8] = {0x0A, 0x00, 0x00, 0x00, 1, 2, 3, 4};
    skp_reader_init(&r, tail(b10, 8), 8);
    n = 42;
    ck_assert_ptr_null(skp_read_bytes(&r, &n, 100));
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(r.err, SKP_ETRUNCATED);

    /* bytes claiming 4 GiB - 1 with nothing behind it, and no cap: no wrap-around. */
    static const uint8_t huge[4] = {0xFF, 0xFF, 0xFF, 0xFF};
    skp_reader_init(&r, tail(huge, 4), 4);
    n = 42;
    ck_assert_ptr_null(skp_read_bytes(&r, &n, SIZE_MAX));
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(r.err, SKP_ETRUNCATED);

    /* bytes length prefix cut short. */
    skp_reader_init(&r, tail(huge, 3), 3);
    n = 42;
    ck_assert_ptr_null(skp_read_bytes(&r, &n, SIZE_MAX));
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(r.err, SKP_ETRUNCATED);

    /* raw of SIZE_MAX after one byte was read: no wrap-around. */
    skp_reader_init(&r, tail(huge, 4), 4);
    skp_read_u8(&r);
    ck_assert_ptr_null(skp_read_raw(&r, SIZE_MAX));
    ck_assert_int_eq(r.err, SKP_ETRUNCATED);
    ck_assert_uint_eq(r.pos, 1);
}
END_TEST

START_TEST(reader_finish)
{
    static const uint8_t body[5] = {1, 2, 3, 4, 5};
    struct skp_reader r;

    skp_reader_init(&r, tail(body, 0), 0);
    ck_assert_int_eq(skp_reader_finish(&r), SKP_EOK);

    skp_reader_init(&r, tail(body, 5), 5);
    ck_assert_int_eq(skp_reader_finish(&r), SKP_ETRAILING); /* nothing read yet */
    skp_read_u32(&r);
    ck_assert_int_eq(skp_reader_finish(&r), SKP_ETRAILING); /* one byte left */
    ck_assert_uint_eq(skp_read_u8(&r), 5);
    ck_assert_int_eq(skp_reader_finish(&r), SKP_EOK);
    /* A read past the end then: the error wins over everything. */
    skp_read_u8(&r);
    ck_assert_int_eq(skp_reader_finish(&r), SKP_ETRUNCATED);

    /* An error with bytes left over is the error, not ETRAILING. */
    skp_reader_init(&r, tail(body, 5), 5);
    size_t n;
    skp_read_bytes(&r, &n, 0); /* claims 0x04030201 */
    ck_assert_int_eq(skp_reader_finish(&r), SKP_ETOOLONG);

    /* Zero-length raw reads leave everything as it was. */
    skp_reader_init(&r, tail(body, 5), 5);
    ck_assert_ptr_nonnull(skp_read_raw(&r, 0));
    ck_assert_uint_eq(r.pos, 0);
    ck_assert_ptr_eq(skp_read_raw(&r, 5), r.buf);
    ck_assert_int_eq(skp_reader_finish(&r), SKP_EOK);
}
END_TEST

/* ---- parser: whole frames ----------------------------------------------------------------- */

START_TEST(whole_frame_hand_bytes)
{
    static const uint8_t frame[] = {
        0x53, 0x4B, 0x4C, 0x44, /* SKLD */
        0x01,                   /* version */
        0x09,                   /* POSE */
        0x01, 0x00,             /* reply */
        0x02, 0x01,             /* status 0x0102 */
        0x00, 0x00,             /* reserved */
        0x12, 0x34, 0x56, 0x78, /* id 0x78563412 */
        0x03, 0x00, 0x00, 0x00, /* body_len 3 */
        'a',  'b',  'c',
    };
    for (int placement = 0; placement < 2; placement++) {
        const uint8_t *p = placement ? head(frame, sizeof frame) : tail(frame, sizeof frame);
        struct skp_frame f;
        memset(&f, 0xEE, sizeof f);
        size_t used = 999;
        ck_assert_int_eq(skp_parser_feed(p, sizeof frame, 1024, &f, &used), SKP_FRAME);
        ck_assert_uint_eq(used, 23);
        ck_assert_uint_eq(f.h.version, 1);
        ck_assert_uint_eq(f.h.opcode, SKP_OP_POSE);
        ck_assert_uint_eq(f.h.flags, SKP_F_REPLY);
        ck_assert_uint_eq(f.h.status, 0x0102);
        ck_assert_uint_eq(f.h.id, 0x78563412u);
        ck_assert_uint_eq(f.h.body_len, 3);
        ck_assert_ptr_eq(f.body, p + 20);
        ck_assert_mem_eq(f.body, "abc", 3);
    }
}
END_TEST

START_TEST(zero_length_body)
{
    uint8_t buf[20];
    size_t n = mkreq(buf, SKP_OP_STATS, 7, NULL, 0);
    ck_assert_uint_eq(n, 20);
    static const uint32_t maxes[] = {0, 1, 1024, SKP_MAX_FRAME, UINT32_MAX};
    for (size_t i = 0; i < NELEM(maxes); i++) {
        const uint8_t *p = tail(buf, n);
        struct skp_frame f;
        size_t used = 999;
        ck_assert_int_eq(skp_parser_feed(p, n, maxes[i], &f, &used), SKP_FRAME);
        ck_assert_uint_eq(used, 20);
        ck_assert_uint_eq(f.h.body_len, 0);
        ck_assert_uint_eq(f.h.opcode, SKP_OP_STATS);
        ck_assert_uint_eq(f.h.id, 7);
        ck_assert_ptr_eq(f.body, p + 20);
    }
    /* Two empty frames back to back. */
    uint8_t two[40];
    mkreq(two, SKP_OP_STATS, 1, NULL, 0);
    mkreq(two + 20, SKP_OP_PING, 2, NULL, 0);
    const uint8_t *p = tail(two, 40);
    struct skp_frame f;
    size_t used;
    ck_assert_int_eq(skp_parser_feed(p, 40, 0, &f, &used), SKP_FRAME);
    ck_assert_uint_eq(used, 20);
    ck_assert_uint_eq(f.h.id, 1);
    ck_assert_int_eq(skp_parser_feed(p + used, 40 - used, 0, &f, &used), SKP_FRAME);
    ck_assert_uint_eq(used, 20);
    ck_assert_uint_eq(f.h.id, 2);
    ck_assert_uint_eq(f.h.opcode, SKP_OP_PING);
}
END_TEST

START_TEST(two_frames_back_to_back)
{
    uint8_t buf[64];
    size_t a = mkreq(buf, SKP_OP_PING, 11, "abc", 3);
    size_t b = mkframe(buf + a, 1, SKP_OP_INFO, SKP_F_REPLY, SKP_S_NOT_FOUND, 0, 12, 5, "hello", 5);
    size_t total = a + b;
    ck_assert_uint_eq(total, 48);
    const uint8_t *p = tail(buf, total);
    struct skp_frame f;
    size_t used = 999;
    ck_assert_int_eq(skp_parser_feed(p, total, 1024, &f, &used), SKP_FRAME);
    ck_assert_uint_eq(used, 23);
    ck_assert_uint_eq(f.h.id, 11);
    ck_assert_uint_eq(f.h.opcode, SKP_OP_PING);
    ck_assert_ptr_eq(f.body, p + 20);
    ck_assert_mem_eq(f.body, "abc", 3);

    const uint8_t *rest = p + used;
    size_t left = total - used;
    used = 999;
    ck_assert_int_eq(skp_parser_feed(rest, left, 1024, &f, &used), SKP_FRAME);
    ck_assert_uint_eq(used, 25);
    ck_assert_uint_eq(f.h.id, 12);
    ck_assert_uint_eq(f.h.opcode, SKP_OP_INFO);
    ck_assert_uint_eq(f.h.flags, SKP_F_REPLY);
    ck_assert_uint_eq(f.h.status, SKP_S_NOT_FOUND);
    ck_assert_ptr_eq(f.body, p + 23 + 20);
    ck_assert_mem_eq(f.body, "hello", 5);

    used = 999;
    ck_assert_int_eq(skp_parser_feed(rest + 25, 0, 1024, &f, &used), SKP_NEED_MORE);
    ck_assert_uint_eq(used, 0);

    /* The first of two frames when the second is only partly there. */
    for (size_t extra = 0; extra < b; extra++) {
        p = tail(buf, a + extra);
        used = 999;
        ck_assert_int_eq(skp_parser_feed(p, a + extra, 1024, &f, &used), SKP_FRAME);
        ck_assert_uint_eq(used, a);
        ck_assert_uint_eq(f.h.id, 11);
        used = 999;
        ck_assert_int_eq(skp_parser_feed(p + a, extra, 1024, &f, &used), SKP_NEED_MORE);
        ck_assert_uint_eq(used, 0);
    }
}
END_TEST

START_TEST(empty_buffer)
{
    struct skp_frame f;
    size_t used = 999;
    const uint8_t *p = tail(NULL, 0); /* right against the guard page */
    ck_assert_int_eq(skp_parser_feed(p, 0, 1024, &f, &used), SKP_NEED_MORE);
    ck_assert_uint_eq(used, 0);
    p = head(NULL, 0);
    used = 999;
    ck_assert_int_eq(skp_parser_feed(p, 0, 0, &f, &used), SKP_NEED_MORE);
    ck_assert_uint_eq(used, 0);
}
END_TEST

/* ---- parser: partial frames --------------------------------------------------------------- */

START_TEST(one_byte_at_a_time)
{
    uint8_t buf[64];
    size_t total = mkframe(buf, 1, SKP_OP_LOAD_PATH, 0, 0, 0, 0xCAFEF00Du, 9, "robot.skf", 9);
    for (size_t n = 0; n < total; n++) {
        const uint8_t *p = tail(buf, n);
        struct skp_frame f;
        size_t used = 999;
        int rc = skp_parser_feed(p, n, 1024, &f, &used);
        ck_assert_msg(rc == SKP_NEED_MORE, "with %zu of %zu bytes: %d", n, total, rc);
        ck_assert_uint_eq(used, 0);
    }
    const uint8_t *p = tail(buf, total);
    struct skp_frame f;
    size_t used = 999;
    ck_assert_int_eq(skp_parser_feed(p, total, 1024, &f, &used), SKP_FRAME);
    ck_assert_uint_eq(used, total);
    ck_assert_uint_eq(f.h.opcode, SKP_OP_LOAD_PATH);
    ck_assert_uint_eq(f.h.id, 0xCAFEF00Du);
    ck_assert_uint_eq(f.h.body_len, 9);
    ck_assert_ptr_eq(f.body, p + 20);
    ck_assert_mem_eq(f.body, "robot.skf", 9);
}
END_TEST

/* A header announcing a body waits for all of it, however little is missing. */
START_TEST(header_waits_for_body)
{
    static uint8_t buf[20 + 1000];
    memset(buf + 20, 0x42, 1000);
    size_t total = mkreq(buf, SKP_OP_LOAD_BYTES, 3, buf + 20, 1000);
    static const size_t have[] = {20, 21, 500, 998, 999};
    for (size_t i = 0; i < NELEM(have); i++) {
        struct skp_frame f;
        size_t used = 999;
        ck_assert_int_eq(skp_parser_feed(tail(buf, have[i]), have[i], 1000, &f, &used),
                         SKP_NEED_MORE);
        ck_assert_uint_eq(used, 0);
    }
    struct skp_frame f;
    size_t used;
    ck_assert_int_eq(skp_parser_feed(tail(buf, total), total, 1000, &f, &used), SKP_FRAME);
    ck_assert_uint_eq(used, 1020);
}
END_TEST

/* ---- parser: split reads ------------------------------------------------------------------ */

struct got {
    struct skp_header h;
    size_t len;
    uint8_t body[64];
};

/* Feeds stream[0..total) as the chunks between cuts (ascending, repeats allowed), the way a
 * connection would: append what arrived, parse as many frames as there are, keep the rest.
 * Returns the number of frames; *err gets the first error (0 for none). */
static size_t drive(const uint8_t *stream, size_t total, const size_t *cuts, size_t ncuts,
                    uint32_t max_body, struct got *out, size_t maxout, int *err)
{
    static uint8_t acc[4096];
    size_t have = 0, pos = 0, nout = 0;
    *err = 0;
    EXPECT(total <= sizeof acc, "%zu", total);
    for (size_t c = 0; c <= ncuts; c++) {
        size_t end = c < ncuts ? cuts[c] : total;
        EXPECT(pos <= end, "cuts not ascending at %zu", c);
        memcpy(acc + have, stream + pos, end - pos);
        have += end - pos;
        pos = end;
        for (;;) {
            const uint8_t *p = (nout + c) % 2 ? head(acc, have) : tail(acc, have);
            struct skp_frame f;
            size_t used = 12345;
            int rc = skp_parser_feed(p, have, max_body, &f, &used);
            EXPECT(used <= have, "consumed %zu of %zu", used, have);
            if (rc == SKP_FRAME) {
                EXPECT(nout < maxout, "more than %zu frames", maxout);
                EXPECT(used == SKP_HEADER_SIZE + (size_t)f.h.body_len, "consumed %zu, body_len %u",
                       used, f.h.body_len);
                EXPECT(f.body == p + SKP_HEADER_SIZE, "body at offset %td", f.body - p);
                EXPECT(f.h.body_len <= sizeof out[nout].body, "body_len %u", f.h.body_len);
                out[nout].h = f.h;
                out[nout].len = f.h.body_len;
                memcpy(out[nout].body, f.body, f.h.body_len);
                nout++;
                memmove(acc, acc + used, have - used);
                have -= used;
                continue;
            }
            EXPECT(used == 0, "consumed %zu without a frame (%d)", used, rc);
            if (rc != SKP_NEED_MORE) {
                *err = rc;
                return nout;
            }
            break;
        }
    }
    EXPECT(have == 0, "%zu bytes left over", have);
    return nout;
}

/* Three frames: a request with a body, an empty reply, a reply with a 5-byte body. */
static size_t three_frames(uint8_t *buf)
{
    size_t n = mkreq(buf, SKP_OP_PING, 1, "abc", 3);
    n += mkframe(buf + n, 1, SKP_OP_STATS, SKP_F_REPLY, 0, 0, 2, 0, NULL, 0);
    n += mkframe(buf + n, 1, SKP_OP_HELLO, SKP_F_REPLY, SKP_S_AUTH, 0, 0xFFFFFFFFu, 5, "token", 5);
    return n;
}

static void check_three(const struct got *g, size_t n)
{
    EXPECT(n == 3, "%zu frames", n);
    EXPECT(g[0].h.opcode == SKP_OP_PING, "");
    EXPECT(g[0].h.id == 1, "");
    EXPECT(g[0].h.flags == 0, "");
    EXPECT(g[0].len == 3, "");
    EXPECT(memcmp(g[0].body, "abc", 3) == 0, "");
    EXPECT(g[1].h.opcode == SKP_OP_STATS, "");
    EXPECT(g[1].h.id == 2, "");
    EXPECT(g[1].h.flags == SKP_F_REPLY, "");
    EXPECT(g[1].len == 0, "");
    EXPECT(g[2].h.opcode == SKP_OP_HELLO, "");
    EXPECT(g[2].h.id == 0xFFFFFFFFu, "");
    EXPECT(g[2].h.status == SKP_S_AUTH, "");
    EXPECT(g[2].len == 5, "");
    EXPECT(memcmp(g[2].body, "token", 5) == 0, "");
}

START_TEST(split_one_frame_every_offset)
{
    uint8_t buf[64];
    size_t total = mkreq(buf, SKP_OP_UNLOAD, 0x01020304u, "0123456789abcdef", 16);
    for (size_t s = 0; s <= total; s++) {
        /* First part alone. */
        const uint8_t *p = tail(buf, s);
        struct skp_frame f;
        size_t used = 999;
        int rc = skp_parser_feed(p, s, 64, &f, &used);
        EXPECT(rc == (s < total ? SKP_NEED_MORE : SKP_FRAME), "split at %zu: %d", s, rc);
        /* Then everything. */
        struct got g[2];
        int err;
        size_t cut[1] = {s};
        size_t n = drive(buf, total, cut, 1, 64, g, 2, &err);
        ck_assert_int_eq(err, 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(g[0].h.opcode, SKP_OP_UNLOAD);
        ck_assert_uint_eq(g[0].h.id, 0x01020304u);
        ck_assert_uint_eq(g[0].len, 16);
        ck_assert_mem_eq(g[0].body, "0123456789abcdef", 16);
    }
}
END_TEST

START_TEST(split_three_frames_every_pair)
{
    uint8_t buf[128];
    size_t total = three_frames(buf);
    ck_assert_uint_eq(total, 68);
    struct got g[4];
    int err;
    /* Unsplit. */
    check_three(g, drive(buf, total, NULL, 0, 64, g, 4, &err));
    ck_assert_int_eq(err, 0);
    /* Every pair of cut points (equal cuts give an empty read). */
    for (size_t s1 = 0; s1 <= total; s1++)
        for (size_t s2 = s1; s2 <= total; s2++) {
            size_t cuts[2] = {s1, s2};
            memset(g, 0, sizeof g);
            size_t n = drive(buf, total, cuts, 2, 64, g, 4, &err);
            EXPECT(err == 0, "cuts %zu %zu: error %d", s1, s2, err);
            check_three(g, n);
        }
}
END_TEST

static uint64_t rng_state;

static uint32_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)(rng_state >> 33);
}

/* Random chunkings of many frames, including one-byte dribbles. */
START_TEST(split_random_chunks)
{
    uint8_t buf[4096];
    size_t total = 0, nframes = 0;
    uint8_t bodies[40][64];
    size_t blens[40];
    rng_state = 12345;
    while (nframes < 40) {
        size_t bl = rnd() % 65;
        for (size_t i = 0; i < bl; i++)
            bodies[nframes][i] = (uint8_t)rnd();
        blens[nframes] = bl;
        total += mkframe(buf + total, 1, (uint8_t)(1 + rnd() % 12), (uint16_t)(rnd() & 1),
                         (uint16_t)rnd(), 0, (uint32_t)nframes, (uint32_t)bl, bodies[nframes], bl);
        nframes++;
    }
    for (int round = 0; round < 200; round++) {
        size_t cuts[600], ncuts = 0, at = 0;
        size_t maxstep = round % 4 == 0 ? 1 : 1 + rnd() % 90;
        while (ncuts < NELEM(cuts)) {
            at += 1 + rnd() % maxstep;
            if (at >= total)
                break;
            cuts[ncuts++] = at;
        }
        if (ncuts == NELEM(cuts))
            continue; /* too many pieces for this array: skip this chunking */
        struct got g[41];
        int err;
        size_t n = drive(buf, total, cuts, ncuts, 64, g, 41, &err);
        EXPECT(err == 0, "round %d: error %d", round, err);
        EXPECT(n == nframes, "round %d: %zu frames", round, n);
        for (size_t i = 0; i < n; i++) {
            EXPECT(g[i].h.id == i, "round %d: frame %zu has id %u", round, i, g[i].h.id);
            EXPECT(g[i].len == blens[i], "round %d: frame %zu", round, i);
            EXPECT(memcmp(g[i].body, bodies[i], blens[i]) == 0, "round %d: frame %zu", round, i);
        }
    }
}
END_TEST

/* ---- parser: oversize --------------------------------------------------------------------- */

static int feed_header(uint32_t body_len, uint32_t max_body, size_t *used)
{
    uint8_t buf[20];
    mkframe(buf, 1, SKP_OP_LOAD_BYTES, 0, 0, 0, 1, body_len, NULL, 0);
    struct skp_frame f;
    *used = 999;
    return skp_parser_feed(tail(buf, 20), 20, max_body, &f, used);
}

START_TEST(limit_exact_accepted_one_over_rejected)
{
    static const uint32_t limits[] = {
        0, 1, 100, 1024, 65535, 65536, SKP_MAX_FRAME - 1, SKP_MAX_FRAME};
    for (size_t i = 0; i < NELEM(limits); i++) {
        size_t used;
        /* Exactly at the limit: a valid header, waiting for the body (or complete if 0). */
        int rc = feed_header(limits[i], limits[i], &used);
        ck_assert_msg(rc == (limits[i] ? SKP_NEED_MORE : SKP_FRAME), "limit %u: %d", limits[i], rc);
        /* One over: rejected from the header alone. */
        rc = feed_header(limits[i] + 1, limits[i], &used);
        ck_assert_msg(rc == SKP_EOVERSIZE, "limit %u, body %u: %d", limits[i], limits[i] + 1, rc);
        ck_assert_uint_eq(used, 0);
        /* Far over. */
        ck_assert_int_eq(feed_header(UINT32_MAX, limits[i], &used), SKP_EOVERSIZE);
    }
    /* A whole frame at a small limit parses. */
    uint8_t buf[20 + 100];
    memset(buf + 20, 0x33, 100);
    size_t n = mkreq(buf, SKP_OP_PING, 5, buf + 20, 100);
    struct skp_frame f;
    size_t used;
    ck_assert_int_eq(skp_parser_feed(tail(buf, n), n, 100, &f, &used), SKP_FRAME);
    ck_assert_uint_eq(used, 120);
    ck_assert_int_eq(skp_parser_feed(tail(buf, n), n, 99, &f, &used), SKP_EOVERSIZE);
    ck_assert_uint_eq(used, 0);
}
END_TEST

START_TEST(limit_clamped_to_max_frame)
{
    static const uint32_t maxes[] = {SKP_MAX_FRAME + 1, SKP_MAX_FRAME + 2, 2 * SKP_MAX_FRAME,
                                     0x80000000u, UINT32_MAX};
    for (size_t i = 0; i < NELEM(maxes); i++) {
        size_t used;
        ck_assert_int_eq(feed_header(SKP_MAX_FRAME, maxes[i], &used), SKP_NEED_MORE);
        int rc = feed_header(SKP_MAX_FRAME + 1, maxes[i], &used);
        ck_assert_msg(rc == SKP_EOVERSIZE, "max_body %u, body SKP_MAX_FRAME + 1: %d", maxes[i], rc);
        ck_assert_int_eq(feed_header(maxes[i], maxes[i], &used), SKP_EOVERSIZE);
        ck_assert_int_eq(feed_header(UINT32_MAX, maxes[i], &used), SKP_EOVERSIZE);
    }
}
END_TEST

/* A frame of exactly SKP_MAX_FRAME bytes of body parses (the body is untouched zero pages). */
START_TEST(max_frame_whole)
{
    size_t n = SKP_HEADER_SIZE + (size_t)SKP_MAX_FRAME;
    uint8_t *big = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert(big != MAP_FAILED);
    mkframe(big, 1, SKP_OP_LOAD_BYTES, 0, 0, 0, 77, SKP_MAX_FRAME, NULL, 0);
    struct skp_frame f;
    size_t used = 999;
    int rc_short = skp_parser_feed(big, n - 1, SKP_MAX_FRAME, &f, &used);
    int rc_limit = skp_parser_feed(big, n, SKP_MAX_FRAME - 1, &f, &used);
    int rc_clamp = skp_parser_feed(big, n, UINT32_MAX, &f, &used);
    size_t used_clamp = used;
    used = 999;
    int rc = skp_parser_feed(big, n, SKP_MAX_FRAME, &f, &used);
    munmap(big, n);
    ck_assert_int_eq(rc, SKP_FRAME);
    ck_assert_uint_eq(used, n);
    ck_assert_uint_eq(f.h.body_len, SKP_MAX_FRAME);
    ck_assert_ptr_eq(f.body, big + SKP_HEADER_SIZE);
    ck_assert_uint_eq(f.h.id, 77);
    ck_assert_int_eq(rc_short, SKP_NEED_MORE);
    ck_assert_int_eq(rc_limit, SKP_EOVERSIZE);
    ck_assert_int_eq(rc_clamp, SKP_FRAME);
    ck_assert_uint_eq(used_clamp, n);
}
END_TEST

/* ---- parser: garbage ---------------------------------------------------------------------- */

static const uint8_t MAGIC[4] = {0x53, 0x4B, 0x4C, 0x44};

/* The first wrong magic byte is caught with only the bytes up to it. */
START_TEST(wrong_magic_each_position)
{
    for (size_t at = 0; at < 4; at++) {
        for (int v = 0; v < 256; v++) {
            if (v == MAGIC[at])
                continue;
            uint8_t buf[24];
            mkreq(buf, SKP_OP_PING, 1, NULL, 0);
            buf[at] = (uint8_t)v;
            struct skp_frame f;
            /* Everything before the bad byte is fine so far. */
            size_t used = 999;
            int rc = skp_parser_feed(tail(buf, at), at, 1024, &f, &used);
            EXPECT(rc == SKP_NEED_MORE, "%zu good magic bytes: %d", at, rc);
            for (size_t len = at + 1; len <= 20; len++) {
                used = 999;
                rc = skp_parser_feed(tail(buf, len), len, 1024, &f, &used);
                EXPECT(rc == SKP_EBADMAGIC, "byte %zu = 0x%02x, %zu bytes: %d", at, v, len, rc);
                EXPECT(used == 0, "consumed %zu", used);
            }
        }
    }
}
END_TEST

START_TEST(garbage_texts)
{
    static const char *texts[] = {
        "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        "DLKS", /* the magic byte-swapped */
        "skld", /* lower case */
        "SKLE",
        "\x16\x03\x01\x02\x00", /* a TLS ClientHello */
        "SSH-2.0-OpenSSH\r\n",
        "S\0\0\0",
    };
    for (size_t i = 0; i < NELEM(texts); i++) {
        size_t n = strlen(texts[i]);
        if (i == NELEM(texts) - 1)
            n = 4;
        struct skp_frame f;
        size_t used = 999;
        int rc = skp_parser_feed(tail(texts[i], n), n, 1024, &f, &used);
        ck_assert_msg(rc == SKP_EBADMAGIC, "garbage %zu: %d", i, rc);
        ck_assert_uint_eq(used, 0);
    }
    /* An all-zero header, and 20 bytes of 0xFF. */
    uint8_t zero[20] = {0}, ones[20];
    memset(ones, 0xFF, sizeof ones);
    struct skp_frame f;
    size_t used;
    ck_assert_int_eq(skp_parser_feed(tail(zero, 1), 1, 1024, &f, &used), SKP_EBADMAGIC);
    ck_assert_int_eq(skp_parser_feed(tail(zero, 20), 20, 1024, &f, &used), SKP_EBADMAGIC);
    ck_assert_int_eq(skp_parser_feed(tail(ones, 1), 1, 1024, &f, &used), SKP_EBADMAGIC);
}
END_TEST

/* A good frame followed by junk: the frame, then the junk is caught. */
START_TEST(garbage_after_frame)
{
    uint8_t buf[64];
    size_t a = mkreq(buf, SKP_OP_PING, 1, "xy", 2);
    memcpy(buf + a, "SKLX", 4);
    const uint8_t *p = tail(buf, a + 4);
    struct skp_frame f;
    size_t used;
    ck_assert_int_eq(skp_parser_feed(p, a + 4, 1024, &f, &used), SKP_FRAME);
    ck_assert_uint_eq(used, a);
    ck_assert_int_eq(skp_parser_feed(p + a, 3, 1024, &f, &used), SKP_NEED_MORE);
    ck_assert_int_eq(skp_parser_feed(p + a, 4, 1024, &f, &used), SKP_EBADMAGIC);
    ck_assert_uint_eq(used, 0);
}
END_TEST

/* ---- parser: version ---------------------------------------------------------------------- */

START_TEST(version_at_byte_4)
{
    for (int v = 0; v < 256; v++) {
        uint8_t buf[24];
        size_t n = mkframe(buf, (uint8_t)v, SKP_OP_HELLO, 0, 0, 0, 1, 4, "abcd", 4);
        struct skp_frame f;
        size_t used = 999;
        int rc = skp_parser_feed(tail(buf, 4), 4, 1024, &f, &used);
        EXPECT(rc == SKP_NEED_MORE, "version %d, magic only: %d", v, rc);
        for (size_t len = 5; len <= n; len++) {
            used = 999;
            rc = skp_parser_feed(tail(buf, len), len, 1024, &f, &used);
            int want = v == 1 ? (len == n ? SKP_FRAME : SKP_NEED_MORE) : SKP_EBADVERSION;
            EXPECT(rc == want, "version %d, %zu bytes: %d, want %d", v, len, rc, want);
            if (rc != SKP_FRAME)
                EXPECT(used == 0, "consumed %zu", used);
        }
    }
}
END_TEST

/* The earliest evidence decides: magic before version, version before the rest. */
START_TEST(version_precedence)
{
    uint8_t buf[24];
    struct skp_frame f;
    size_t used;
    /* Bad magic and bad version. */
    mkframe(buf, 2, SKP_OP_HELLO, 0, 0, 0, 0, 0, NULL, 0);
    buf[3] = 'X';
    ck_assert_int_eq(skp_parser_feed(tail(buf, 20), 20, 1024, &f, &used), SKP_EBADMAGIC);
    /* Bad version plus reserved bits, unknown flags and an oversize body. */
    mkframe(buf, 0, SKP_OP_HELLO, 0xFFFE, 0, 0xFFFF, 0, UINT32_MAX, NULL, 0);
    ck_assert_int_eq(skp_parser_feed(tail(buf, 20), 20, 1024, &f, &used), SKP_EBADVERSION);
    ck_assert_int_eq(skp_parser_feed(tail(buf, 5), 5, 1024, &f, &used), SKP_EBADVERSION);
}
END_TEST

/* ---- parser: reserved bits ---------------------------------------------------------------- */

START_TEST(reserved_field_set)
{
    static const uint16_t res[] = {0x0001, 0x0002, 0x0080, 0x0100, 0x8000, 0xFFFF};
    for (size_t i = 0; i < NELEM(res); i++) {
        uint8_t buf[24];
        size_t n = mkframe(buf, 1, SKP_OP_PING, 0, 0, res[i], 1, 0, NULL, 0);
        struct skp_frame f;
        size_t used = 999;
        int rc = skp_parser_feed(tail(buf, n), n, 1024, &f, &used);
        ck_assert_msg(rc == SKP_ERESERVED, "reserved 0x%04x: %d", res[i], rc);
        ck_assert_uint_eq(used, 0);
    }
}
END_TEST

START_TEST(unknown_flag_bits)
{
    for (int bit = 1; bit < 16; bit++) {
        uint16_t flags = (uint16_t)(1u << bit);
        for (int reply = 0; reply < 2; reply++) {
            uint8_t buf[24];
            size_t n = mkframe(buf, 1, SKP_OP_PING, (uint16_t)(flags | reply), 0, 0, 1, 2, "ok", 2);
            struct skp_frame f;
            size_t used = 999;
            int rc = skp_parser_feed(tail(buf, n), n, 1024, &f, &used);
            ck_assert_msg(rc == SKP_ERESERVED, "flags 0x%04x: %d", flags | reply, rc);
            ck_assert_uint_eq(used, 0);
            /* Known from the header alone. */
            ck_assert_int_eq(skp_parser_feed(tail(buf, 20), 20, 1024, &f, &used), SKP_ERESERVED);
        }
    }
    /* The reply bit alone is fine, and so is a status in any request. */
    uint8_t buf[24];
    size_t n = mkframe(buf, 1, SKP_OP_PING, SKP_F_REPLY, 0xFFFF, 0, 1, 2, "ok", 2);
    struct skp_frame f;
    size_t used;
    ck_assert_int_eq(skp_parser_feed(tail(buf, n), n, 1024, &f, &used), SKP_FRAME);
    ck_assert_uint_eq(f.h.flags, SKP_F_REPLY);
    ck_assert_uint_eq(f.h.status, 0xFFFF);
}
END_TEST

/* A partial header with bad reserved bits is never a frame; it may be caught as soon as the
 * bits are in, and must be by the end of the header. Once caught, it stays caught. */
START_TEST(reserved_partial_header)
{
    uint8_t buf[24];
    mkframe(buf, 1, SKP_OP_PING, 0x0004, 0, 0, 1, 0, NULL, 0);
    int seen = 0;
    for (size_t len = 0; len <= 20; len++) {
        struct skp_frame f;
        size_t used = 999;
        int rc = skp_parser_feed(tail(buf, len), len, 1024, &f, &used);
        int ok = len < 8 ? rc == SKP_NEED_MORE
                         : (rc == SKP_ERESERVED || (!seen && len < 20 && rc == SKP_NEED_MORE));
        ck_assert_msg(ok, "flags 0x0004, %zu bytes: %d", len, rc);
        ck_assert_uint_eq(used, 0);
        seen |= rc == SKP_ERESERVED;
    }
    ck_assert(seen);
}
END_TEST

/* Reserved bits and an oversize body together: a framing error of either kind. */
START_TEST(reserved_and_oversize)
{
    uint8_t buf[24];
    mkframe(buf, 1, SKP_OP_PING, 0, 0, 1, 1, 5000, NULL, 0);
    struct skp_frame f;
    size_t used;
    int rc = skp_parser_feed(tail(buf, 20), 20, 1024, &f, &used);
    ck_assert_msg(rc == SKP_ERESERVED || rc == SKP_EOVERSIZE, "%d", rc);
}
END_TEST

/* ---- parser: fuzz ------------------------------------------------------------------------- */

/* What PROTOCOL.md says the parser must answer for buf[0..len), worked out independently.
 * *alt is a second acceptable answer (0 if none) where the document leaves the choice open. */
static int oracle(const uint8_t *b, size_t len, uint32_t max_body, int *alt, struct skp_header *h)
{
    *alt = 0;
    for (size_t i = 0; i < len && i < 4; i++)
        if (b[i] != MAGIC[i])
            return SKP_EBADMAGIC;
    if (len >= 5 && b[4] != 1)
        return SKP_EBADVERSION;
    int flags_bad = len >= 8 && ((b[6] & 0xFE) || b[7]);
    int res_bad = len >= 12 && (b[10] || b[11]);
    if (len < 20) {
        if (flags_bad || res_bad)
            *alt = SKP_ERESERVED;
        return SKP_NEED_MORE;
    }
    h->version = b[4];
    h->opcode = b[5];
    h->flags = (uint16_t)(b[6] | b[7] * 256u);
    h->status = (uint16_t)(b[8] | b[9] * 256u);
    h->id = b[12] + b[13] * 0x100u + b[14] * 0x10000u + b[15] * 0x1000000u;
    h->body_len = b[16] + b[17] * 0x100u + b[18] * 0x10000u + b[19] * 0x1000000u;
    uint32_t limit = max_body < SKP_MAX_FRAME ? max_body : SKP_MAX_FRAME;
    int over = h->body_len > limit;
    if ((flags_bad || res_bad) && over) {
        *alt = SKP_EOVERSIZE;
        return SKP_ERESERVED;
    }
    if (flags_bad || res_bad)
        return SKP_ERESERVED;
    if (over)
        return SKP_EOVERSIZE;
    if (len - 20 < h->body_len)
        return SKP_NEED_MORE;
    return SKP_FRAME;
}

#define FUZZ_MAX 320

/* A random buffer, mostly shaped like frames so every branch is reached. */
static size_t gen(uint8_t *buf, uint32_t *max_body)
{
    size_t len;
    uint32_t mode = rnd() % 5;
    if (mode == 0) {
        len = rnd() % 48;
        for (size_t i = 0; i < len; i++)
            buf[i] = (uint8_t)rnd();
        if (len && rnd() % 2)
            buf[0] = 'S'; /* get past the first byte now and then */
    } else {
        uint8_t version = rnd() % 8 ? 1 : (uint8_t)rnd();
        uint16_t flags = rnd() % 6 ? (uint16_t)(rnd() & 1) : (uint16_t)rnd();
        uint16_t reserved = rnd() % 6 ? 0 : (uint16_t)(1u << rnd() % 16);
        uint32_t bl;
        switch (rnd() % 6) {
        case 0: bl = rnd() % 40; break;
        case 1: bl = 0; break;
        case 2: bl = rnd() | (uint32_t)(rnd() & 1) << 31; break;
        case 3: bl = SKP_MAX_FRAME - 1 + rnd() % 3; break;
        case 4: bl = UINT32_MAX; break;
        default: bl = rnd() % 200; break;
        }
        size_t present = bl < 200 ? bl : rnd() % 200;
        for (size_t i = 0; i < present; i++)
            buf[20 + i] = (uint8_t)rnd();
        mkframe(buf, version, (uint8_t)rnd(), flags, (uint16_t)rnd(), reserved, rnd(), bl, buf + 20,
                present);
        len = 20 + present;
        size_t trail = rnd() % 2 ? rnd() % 60 : 0; /* part of a next frame, or junk */
        for (size_t i = 0; i < trail; i++)
            buf[len + i] = (uint8_t)rnd();
        if (trail >= 4 && rnd() % 2)
            memcpy(buf + len, MAGIC, 4);
        len += trail;
        if (rnd() % 3 == 0)
            len = rnd() % (len + 1);
        if (mode == 4) /* flip a few bits, mostly in the header */
            for (uint32_t k = 1 + rnd() % 3; k--;) {
                size_t at = rnd() % (len < 24 ? len + 1 : 24);
                if (at < len)
                    buf[at] ^= (uint8_t)(1u << rnd() % 8);
            }
    }
    switch (rnd() % 7) {
    case 0: *max_body = 0; break;
    case 1: *max_body = rnd() % 64; break;
    case 2: *max_body = 100; break;
    case 3: *max_body = SKP_MAX_FRAME; break;
    case 4: *max_body = SKP_MAX_FRAME + 1; break;
    case 5: *max_body = UINT32_MAX; break;
    default: *max_body = rnd() | (uint32_t)(rnd() & 1) << 31; break;
    }
    return len;
}

/* Feeds buf[0..len) against a guard page and checks the answer against the oracle. */
static int fuzz_one(const uint8_t *src, size_t len, uint32_t max_body, int at_head, size_t iter)
{
    const uint8_t *p = at_head ? head(src, len) : tail(src, len);
    struct skp_frame f;
    memset(&f, 0, sizeof f);
    size_t used = 0xDEAD;
    int rc = skp_parser_feed(p, len, max_body, &f, &used);
    EXPECT(used <= len, "iter %zu: consumed %zu of %zu", iter, used, len);
    int alt;
    struct skp_header h;
    int want = oracle(p, len, max_body, &alt, &h);
    EXPECT(rc == want || (alt && rc == alt),
           "iter %zu: len %zu max_body %u: got %d, want %d (or %d)", iter, len, max_body, rc, want,
           alt);
    if (rc == SKP_FRAME) {
        EXPECT(used == 20 + (size_t)h.body_len, "iter %zu", iter);
        EXPECT(f.body == p + 20, "iter %zu", iter);
        EXPECT(f.body + f.h.body_len <= p + len, "iter %zu", iter);
        EXPECT(f.h.version == h.version, "iter %zu", iter);
        EXPECT(f.h.opcode == h.opcode, "iter %zu", iter);
        EXPECT(f.h.flags == h.flags, "iter %zu", iter);
        EXPECT(f.h.status == h.status, "iter %zu", iter);
        EXPECT(f.h.id == h.id, "iter %zu", iter);
        EXPECT(f.h.body_len == h.body_len, "iter %zu", iter);
    } else {
        EXPECT(used == 0, "iter %zu: consumed %zu without a frame", iter, used);
    }
    return rc;
}

START_TEST(fuzz_random_buffers)
{
    static uint8_t buf[FUZZ_MAX];
    int count[5] = {0}; /* need more, frame, bad magic, bad version, oversize or reserved */
    rng_state = 0x5EED5EEDu;
    for (size_t iter = 0; iter < 5000; iter++) {
        uint32_t max_body;
        size_t len = gen(buf, &max_body);
        EXPECT(len <= sizeof buf, "%zu", len);
        int rc = fuzz_one(buf, len, max_body, (int)(iter & 1), iter);
        switch (rc) {
        case SKP_NEED_MORE: count[0]++; break;
        case SKP_FRAME: count[1]++; break;
        case SKP_EBADMAGIC: count[2]++; break;
        case SKP_EBADVERSION: count[3]++; break;
        default: count[4]++; break;
        }
    }
    /* The generator reached every outcome often enough for the loop to mean something. */
    for (int i = 0; i < 5; i++)
        ck_assert_msg(count[i] >= 100, "outcome %d seen %d times", i, count[i]);
}
END_TEST

/* Every prefix of random streams: NEED_MORE until the answer is known, then the same answer
 * (the same frame) for every longer prefix. */
START_TEST(fuzz_prefixes_monotonic)
{
    static uint8_t buf[FUZZ_MAX];
    rng_state = 0xC0FFEEu;
    for (size_t iter = 0; iter < 1500; iter++) {
        uint32_t max_body;
        size_t len = gen(buf, &max_body);
        int decided = 0;
        size_t decided_used = 0;
        struct skp_header dh = {0};
        for (size_t n = 0; n <= len; n++) {
            const uint8_t *p = (n + iter) & 1 ? head(buf, n) : tail(buf, n);
            struct skp_frame f;
            size_t used = 0xDEAD;
            int rc = skp_parser_feed(p, n, max_body, &f, &used);
            EXPECT(used <= n, "iter %zu: consumed %zu of %zu", iter, used, n);
            EXPECT(rc == SKP_NEED_MORE || rc == SKP_FRAME || rc == SKP_EBADMAGIC ||
                       rc == SKP_EBADVERSION || rc == SKP_EOVERSIZE || rc == SKP_ERESERVED,
                   "iter %zu: %d", iter, rc);
            if (decided) {
                EXPECT(rc == decided, "iter %zu: %d at %zu bytes after %d", iter, rc, n, decided);
                if (rc == SKP_FRAME) {
                    EXPECT(used == decided_used, "iter %zu", iter);
                    EXPECT(f.h.id == dh.id, "iter %zu", iter);
                    EXPECT(f.h.opcode == dh.opcode, "iter %zu", iter);
                    EXPECT(f.h.body_len == dh.body_len, "iter %zu", iter);
                }
            } else if (rc != SKP_NEED_MORE) {
                decided = rc;
                decided_used = used;
                dh = f.h;
                if (rc == SKP_FRAME)
                    EXPECT(used == n, "iter %zu", iter); /* complete at exactly its last byte */
            }
        }
    }
}
END_TEST

/* ---- runner ------------------------------------------------------------------------------- */

/* ---- shared JSON ------------------------------------------------------------------------- */

START_TEST(progress_line)
{
    char buf[128];
    skp_cli_progress(buf, sizeof buf, 1, 4);
    ck_assert_str_eq(buf, "\r[##########                              ] 1/4");
    skp_cli_progress(buf, sizeof buf, 4, 4);
    ck_assert_str_eq(buf, "\r[########################################] 4/4\n");
}
END_TEST

START_TEST(json_quoted_small_or_allocated)
{
    char small[8];
    char *q = skp_json_quoted("a\"b", small, sizeof small);
    ck_assert_ptr_eq(q, small);
    ck_assert_str_eq(q, "\"a\\\"b\"");
    q = skp_json_quoted("longer than eight", small, sizeof small);
    ck_assert_ptr_ne(q, small);
    ck_assert_str_eq(q, "\"longer than eight\"");
    free(q);
}
END_TEST

/* JSON is UTF-8: well-formed sequences pass as they are, every other byte becomes \ufffd
 * (a stray continuation byte, a cut sequence, an overlong form, a surrogate, past U+10FFFF). */
START_TEST(json_quote_keeps_utf8_and_replaces_the_rest)
{
    static const struct {
        const char *in, *want;
        bool valid;
    } cases[] = {
        {"h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"",
         true},
        {"a\xff"
         "b",
         "\"a\\ufffdb\"", false},
        {"\x80", "\"\\ufffd\"", false},
        {"\xc3", "\"\\ufffd\"", false},
        {"\xc0\x80", "\"\\ufffd\\ufffd\"", false},
        {"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"", false},
        {"\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"", false},
        {"\xe2\x82", "\"\\ufffd\\ufffd\"", false},
        {"\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[64];
        size_t n = skp_json_quote(buf, sizeof buf, cases[i].in);
        ck_assert_msg(n == strlen(cases[i].want) && !strcmp(buf, cases[i].want),
                      "case %zu: got %s, want %s", i, buf, cases[i].want);
        ck_assert_msg(skp_utf8_valid(cases[i].in) == cases[i].valid, "case %zu: valid?", i);
    }
}
END_TEST

START_TEST(out_path_expands_and_refuses_truncation)
{
    char buf[16];
    ck_assert_int_eq(skp_cli_out_path(buf, sizeof buf, "f_%04d.png", true, 7, ""), 0);
    ck_assert_str_eq(buf, "f_0007.png");
    ck_assert_int_eq(skp_cli_out_path(buf, sizeof buf, "a%.png", false, 7, ".json"), 0);
    ck_assert_str_eq(buf, "a%.png.json"); /* not a pattern: taken literally */
    ck_assert_int_eq(skp_cli_out_path(buf, sizeof buf, "0123456789.png", false, 0, ".json"), -1);
    ck_assert_int_eq(skp_cli_out_path(buf, sizeof buf, "%020d", true, 1, ""), -1);
    ck_assert_int_eq(skp_cli_out_path(buf, sizeof buf, "%015d", true, 1, ""), 0); /* 15 + NUL */
    ck_assert_int_eq(skp_cli_out_path(buf, sizeof buf, "%016d", true, 1, ""), -1);
}
END_TEST

START_TEST(sheet_json_gets_the_image_name_first)
{
    const char *sheet = "{\"cell\":{\"w\":2,\"h\":2},\"frames\":[]}";
    const char *want =
        "{\"image\":\"out \\\"1\\\".png\",\"cell\":{\"w\":2,\"h\":2},\"frames\":[]}\n";
    char buf[256];
    size_t n = skp_sheet_json_named(NULL, 0, sheet, strlen(sheet), "out \"1\".png");
    ck_assert_uint_eq(n, strlen(want));
    ck_assert_uint_eq(skp_sheet_json_named(buf, sizeof buf, sheet, strlen(sheet), "out \"1\".png"),
                      n);
    ck_assert_str_eq(buf, want);
    /* Truncation keeps the terminator and the full length. */
    ck_assert_uint_eq(skp_sheet_json_named(buf, 5, sheet, strlen(sheet), "x"), 47);
    ck_assert_str_eq(buf, "{\"im");
    /* Not an object: just the name, still valid JSON. */
    skp_sheet_json_named(buf, sizeof buf, "", 0, "a.png");
    ck_assert_str_eq(buf, "{\"image\":\"a.png\"}\n");
}
END_TEST

/* ---- command lines (skp_cli) --------------------------------------------------------------- */

/* Parses a NULL-terminated list of words (the first naming the command) against allowed. */
static int parse_words(const char *const *words, uint32_t allowed, int max_args,
                       struct skp_cli_args *a, char *msg, size_t cap)
{
    static char store[16][64];
    char *argv[17];
    int argc = 0;
    for (; words[argc]; argc++) {
        snprintf(store[argc], sizeof store[argc], "%s", words[argc]);
        argv[argc] = store[argc];
    }
    argv[argc] = NULL;
    msg[0] = 0;
    return skp_cli_parse(argc, argv, allowed, max_args, a, msg, cap);
}

START_TEST(cli_help_version_and_matrix_parse)
{
    struct skp_cli_args a;
    char msg[256];
    ck_assert_int_eq(parse_words((const char *[]){"eval", "--version", NULL}, SKP_CLI_POSE_FLAGS, 1,
                                 &a, msg, sizeof msg),
                     0);
    ck_assert_ptr_nonnull(a.value[SKP_CLI_VERSION]);
    ck_assert_ptr_null(a.value[SKP_CLI_HELP]);
    ck_assert_int_eq(parse_words((const char *[]){"info", "--help", "f.skf", NULL},
                                 SKP_CLI_COMMON_FLAGS, 1, &a, msg, sizeof msg),
                     0);
    ck_assert_ptr_nonnull(a.value[SKP_CLI_HELP]);
    ck_assert_int_eq(a.nargs, 1);
    ck_assert_str_eq(a.arg[0], "f.skf");
    ck_assert_int_eq(parse_words((const char *[]){"pose", "a", "--matrix", NULL},
                                 SKP_CLI_POSE_FLAGS, 1, &a, msg, sizeof msg),
                     0);
    ck_assert_str_eq(a.value[SKP_CLI_MATRIX], "");
    ck_assert_int_eq(parse_words((const char *[]){"stats", "--prometheus", NULL},
                                 SKP_CLI_COMMON_FLAGS | SKP_CLI_BIT(SKP_CLI_PROMETHEUS), 0, &a, msg,
                                 sizeof msg),
                     0);
    ck_assert_ptr_nonnull(a.value[SKP_CLI_PROMETHEUS]);
}
END_TEST

/* Every refusal names the word at fault. */
START_TEST(cli_refusals_name_the_flag)
{
    static const struct {
        const char *words[7];
        uint32_t allowed;
        int max_args;
        const char *msg;
    } cases[] = {
        {{"eval", "f", "--size", "1x1"},
         SKP_CLI_POSE_FLAGS,
         1,
         "--size does not apply to this command"},
        {{"render", "f", "--matrix"},
         SKP_CLI_RENDER_FLAGS,
         1,
         "--matrix does not apply to this command"},
        {{"mesh", "f", "--matrix"},
         SKP_CLI_EVAL_FLAGS | SKP_CLI_OPTS_FLAGS,
         1,
         "--matrix does not apply to this command"},
        {{"info", "--anim", "Walk", "f"},
         SKP_CLI_COMMON_FLAGS,
         1,
         "--anim does not apply to this command"},
        {{"ping", "--prometheus"},
         SKP_CLI_COMMON_FLAGS,
         0,
         "--prometheus does not apply to this command"},
        {{"eval", "f", "--nope"}, SKP_CLI_POSE_FLAGS, 1, "unknown flag --nope"},
        {{"eval", "f", "--mat"},
         SKP_CLI_POSE_FLAGS,
         1,
         "unknown flag --mat (did you mean --matrix?)"},
        {{"eval", "f", "--anim"}, SKP_CLI_POSE_FLAGS, 1, "--anim needs a value"},
        {{"eval", "f", "g"}, SKP_CLI_POSE_FLAGS, 1, "unexpected argument \"g\""},
        {{"ping", "x"}, SKP_CLI_COMMON_FLAGS, 0, "unexpected argument \"x\""},
        {{"eval", "f", "--anim", "a", "--anim=b"},
         SKP_CLI_POSE_FLAGS,
         1,
         "--anim is given twice; several values go in one: --anim A[,B..]"},
        {{"render", "f", "--fit", "1", "--fit=0.5"},
         SKP_CLI_RENDER_FLAGS,
         1,
         "--fit is given twice"},
        {{"render", "f", "-o", "a.png", "--output", "b.png"},
         SKP_CLI_RENDER_FLAGS,
         1,
         "--output is given twice"},
    };
    for (size_t i = 0; i < NELEM(cases); i++) {
        struct skp_cli_args a;
        char msg[256];
        ck_assert_int_eq(
            parse_words(cases[i].words, cases[i].allowed, cases[i].max_args, &a, msg, sizeof msg),
            -1);
        ck_assert_str_eq(msg, cases[i].msg);
    }
}
END_TEST

/* Numbers from a flag or a query are decimal and whole: no hexadecimal, spaces, "inf" or
 * trailing comma, which strtod and strtol would have taken. */
START_TEST(cli_numbers_are_decimal)
{
    static const struct {
        const char *s;
        int n;
        double first;
    } lists[] = {
        {"10", 1, 10},      {"-.5e-2", 1, -0.005}, {"5.", 1, 5},       {"+2", 1, 2},
        {"1e3,2", 2, 1000}, {"1,2,3", 3, 1},       {"10,", -1, 0},     {",1", -1, 0},
        {"1,,2", -1, 0},    {"0x10", -1, 0},       {" 5", -1, 0},      {"5 ", -1, 0},
        {"inf", -1, 0},     {"nan", -1, 0},        {"1e400", -1, 0},   {".", -1, 0},
        {"1e", -1, 0},      {"", -1, 0},           {"1,2,3,4", -1, 0},
    };
    for (size_t i = 0; i < NELEM(lists); i++) {
        double v[3];
        int n = skp_cli_numbers(lists[i].s, v, 3);
        ck_assert_msg(n == lists[i].n, "\"%s\": %d numbers, not %d", lists[i].s, n, lists[i].n);
        if (n > 0)
            ck_assert_msg(v[0] == lists[i].first, "\"%s\": %g", lists[i].s, v[0]);
    }
    static const struct {
        const char *s;
        int ok;
    } pairs[] = {{"512x256", 1}, {"-1x2", 1}, {"0x10x5", 0}, {" 5x5", 0}, {"5x 5", 0},
                 {"+5x5", 0},    {"5x5 ", 0}, {"5x", 0},     {"x5", 0},   {"5y5", 0}};
    for (size_t i = 0; i < NELEM(pairs); i++) {
        long a, b;
        ck_assert_msg((skp_cli_pair(pairs[i].s, 'x', &a, &b) == 0) == pairs[i].ok, "\"%s\"",
                      pairs[i].s);
    }
}
END_TEST

/* Over HTTP the parser's messages name query parameters: "--frame" becomes "frame" where it
 * names a flag, and nothing else changes. */
START_TEST(cli_messages_as_a_query_says_them)
{
    static const char *const cases[][2] = {
        {"--frame: expected a number", "frame: expected a number"},
        {"--scale and --fit exclude each other", "scale and fit exclude each other"},
        {"--position needs --scale", "position needs scale"},
        {"larger than --max-skf-mb (--size)", "larger than --max-skf-mb (size)"},
        {"got \"a--frame\", --nosuch, --png-level", "got \"a--frame\", --nosuch, png-level"},
        {"--size: got \"x --frame\" (--fit)", "size: got \"x --frame\" (fit)"},
        {"--", "--"},
        {"", ""},
    };
    for (size_t i = 0; i < NELEM(cases); i++) {
        char m[128];
        snprintf(m, sizeof m, "%s", cases[i][0]);
        skp_cli_as_query(m);
        ck_assert_str_eq(m, cases[i][1]);
    }
}
END_TEST

/* The flag a help line describes ("  --anim A[,B..]  ..." or "  -o, --output ..."), or -1. */
static int help_line_flag(const char *line)
{
    const char *p = line + (strncmp(line, "  -o, ", 6) ? 2 : 6);
    if (strncmp(p, "--", 2))
        return -1;
    size_t n = strcspn(p + 2, " \n");
    for (int f = 0; f < SKP_CLI_NFLAGS; f++)
        if (strlen(skp_cli_flag_name(f)) == n && !strncmp(p + 2, skp_cli_flag_name(f), n))
            return f;
    return -1;
}

/* --help lists every flag a command takes, once, in table order, and no other. */
START_TEST(cli_help_lists_exactly_the_allowed_flags)
{
    const uint32_t masks[] = {SKP_CLI_POSE_FLAGS, SKP_CLI_EVAL_FLAGS | SKP_CLI_OPTS_FLAGS,
                              SKP_CLI_RENDER_FLAGS, SKP_CLI_COMMON_FLAGS,
                              SKP_CLI_COMMON_FLAGS | SKP_CLI_BIT(SKP_CLI_PROMETHEUS)};
    for (size_t m = 0; m < NELEM(masks); m++) {
        char text[8192];
        size_t len = skp_cli_help(text, sizeof text, masks[m], m == 2);
        ck_assert_uint_lt(len, sizeof text);
        ck_assert_uint_eq(strlen(text), len);
        uint32_t seen = 0;
        int last = -1;
        for (char *line = text; *line; line = strchr(line, '\n') + 1) {
            int f = help_line_flag(line);
            ck_assert_msg(f >= 0, "not a flag line: %.40s", line);
            ck_assert_msg(!(seen & SKP_CLI_BIT(f)) && f > last, "--%s twice or out of order",
                          skp_cli_flag_name(f));
            ck_assert_msg(strlen(line) > 32 && strchr(line, '\n') - line > 32,
                          "--%s has no description", skp_cli_flag_name(f));
            seen |= SKP_CLI_BIT(f);
            last = f;
        }
        ck_assert_uint_eq(seen, masks[m]);
    }
    /* A render's --scale is the camera's, an evaluation's an engine option. */
    char text[8192];
    skp_cli_help(text, sizeof text, SKP_CLI_RENDER_FLAGS, true);
    ck_assert_ptr_nonnull(strstr(text, "  --scale S[,SY]"));
    ck_assert_ptr_nonnull(strstr(text, "camera scale"));
    ck_assert_ptr_nonnull(strstr(text, "  -o, --output OUT.png"));
    skp_cli_help(text, sizeof text, SKP_CLI_POSE_FLAGS, false);
    ck_assert_ptr_nonnull(strstr(text, "  --scale X,Y"));
    ck_assert_ptr_nonnull(strstr(text, "engine option: scale"));
    /* Truncation keeps the terminator and the full length. */
    size_t full = skp_cli_help(NULL, 0, SKP_CLI_POSE_FLAGS, false);
    ck_assert_uint_eq(skp_cli_help(text, 10, SKP_CLI_POSE_FLAGS, false), full);
    ck_assert_str_eq(text, "  --anim ");
}
END_TEST

START_TEST(sheet_json_path_strips_png)
{
    static const struct {
        const char *out, *want;
    } cases[] = {
        {"hop.png", "hop.json"},     {"dir/HOP.PNG", "dir/HOP.json"}, {"hop", "hop.json"},
        {"a.png/b", "a.png/b.json"}, {".png", ".png.json"},           {"d/.png", "d/.png.json"},
        {"x.png.png", "x.png.json"}, {"hop.jpg", "hop.jpg.json"},     {"%d.png", "%d.json"},
    };
    char buf[64];
    for (size_t i = 0; i < NELEM(cases); i++) {
        ck_assert_int_eq(skp_cli_sheet_json_path(buf, sizeof buf, cases[i].out), 0);
        ck_assert_str_eq(buf, cases[i].want);
    }
    ck_assert_int_eq(skp_cli_sheet_json_path(buf, 9, "hop.png"), 0); /* "hop.json" + NUL */
    ck_assert_int_eq(skp_cli_sheet_json_path(buf, 8, "hop.png"), -1);
}
END_TEST

/* What only a command line means is no URL parameter; matrix is one only where it applies. */
START_TEST(query_refuses_command_line_only_flags)
{
    const uint32_t all = ~0u;
    const char *refused[] = {"prometheus", "help", "version", "output"};
    for (size_t i = 0; i < NELEM(refused); i++) {
        struct skp_cli_args a;
        char q[32], msg[128], want[64];
        snprintf(q, sizeof q, "%s", refused[i]);
        ck_assert_int_eq(skp_cli_query(q, all, &a, msg, sizeof msg), -1);
        snprintf(want, sizeof want, "unknown parameter \"%s\"", refused[i]);
        ck_assert_str_eq(msg, want);
    }
    struct skp_cli_args a;
    char q[] = "anim=Walk&loop", msg[128];
    ck_assert_int_eq(skp_cli_query(q, SKP_CLI_EVAL_FLAGS, &a, msg, sizeof msg), 0);
    ck_assert_str_eq(a.value[SKP_CLI_ANIM], "Walk");
    /* matrix is a pose's parameter (a switch), and no other resource's */
    char qm[] = "matrix", qm2[] = "matrix";
    ck_assert_int_eq(skp_cli_query(qm, SKP_CLI_POSE_FLAGS, &a, msg, sizeof msg), 0);
    ck_assert_ptr_nonnull(a.value[SKP_CLI_MATRIX]);
    ck_assert_int_eq(
        skp_cli_query(qm2, SKP_CLI_EVAL_FLAGS | SKP_CLI_OPTS_FLAGS, &a, msg, sizeof msg), -1);
    ck_assert_str_eq(msg, "parameter \"matrix\" does not apply to this resource");
    /* a repeat is refused, never last-wins: two animations go in one value */
    char qa[] = "anim=Walk&frame=2&anim=Run", qs[] = "size=8x8&loop&loop&size=9x9";
    ck_assert_int_eq(skp_cli_query(qa, SKP_CLI_EVAL_FLAGS, &a, msg, sizeof msg), -1);
    ck_assert_str_eq(msg,
                     "parameter \"anim\" is given twice; several values go in one: anim=A[,B..]");
    ck_assert_int_eq(skp_cli_query(qs, SKP_CLI_RENDER_FLAGS, &a, msg, sizeof msg), -1);
    ck_assert_str_eq(msg, "parameter \"size\" is given twice");
}
END_TEST

/* ---- pose and info JSON -------------------------------------------------------------------- */

START_TEST(pose_json_with_matrix_and_tint)
{
    const double m[6] = {0.5, -1, 1, 0.5, 10, -2.25}, tint[4] = {255, 128, 0, 64};
    const double verts[2] = {1.5, -3};
    struct skp_bone_view b[2] = {
        {{1, 2}, 0.5, {1, 1}, 0, 3, "a", 0, NULL, 0, m, tint},
        {{0, 0}, 0, {2, 2}, 1, -1, "", 1, verts, 1, m, tint},
    };
    const char *want =
        "[\n{\"id\":0,\"pos\":[1,2],\"rot\":0.5,\"scale\":[1,1],\"hidden\":false,\"zindex\":3,"
        "\"tex\":\"a\",\"matrix\":[0.5,-1,1,0.5,10,-2.25],\"tint\":[255,128,0,64]},\n"
        "{\"id\":1,\"pos\":[0,0],\"rot\":0,\"scale\":[2,2],\"hidden\":true,\"zindex\":-1,"
        "\"tex\":\"\",\"matrix\":[0.5,-1,1,0.5,10,-2.25],\"tint\":[255,128,0,64],"
        "\"verts\":[[1.5,-3]]}\n]\n";
    char buf[1024];
    ck_assert_uint_eq(skp_pose_json(buf, sizeof buf, b, 2), strlen(want));
    ck_assert_str_eq(buf, want);
    /* Without them, the keys are absent: skeld eval's JSON as before. */
    b[0].matrix = b[0].tint = NULL;
    skp_pose_json(buf, sizeof buf, b, 1);
    ck_assert_str_eq(buf, "[\n{\"id\":0,\"pos\":[1,2],\"rot\":0.5,\"scale\":[1,1],"
                          "\"hidden\":false,\"zindex\":3,\"tex\":\"a\"}\n]\n");
}
END_TEST

/* skeld info's view (file) and skelctl info's (the INFO reply's): the same bytes but for the
 * keys only the file holds. */
START_TEST(info_json_file_and_wire_views)
{
    const struct skp_info_bone bones[] = {{"Root", -1}, {"Arm \"L\"", 0}};
    const struct skp_info_anim anims[] = {{"Walk", 30, 41}, {"Idle", 24.5, 1}};
    const struct skp_info_style styles[] = {{"Default", 7, 12}};
    const struct skp_info_atlas atlases[] = {{"atlas0.png", 256, 128}};
    struct skp_info_view v = {.id = "00ff",
                              .bone_count = 2,
                              .anim_count = 2,
                              .style_count = 1,
                              .bones = bones,
                              .anims = anims,
                              .styles = styles,
                              .file = 1,
                              .version = "0.5.0",
                              .layout = "bones",
                              .atlas_count = 1,
                              .atlases = atlases,
                              .ik_families = 2,
                              .mesh_vertices = 40,
                              .keyframes = 900};
    const char *file = "{\"id\":\"00ff\",\"version\":\"0.5.0\",\"layout\":\"bones\",\"bones\":[\n"
                       "{\"id\":0,\"name\":\"Root\",\"parent\":-1},\n"
                       "{\"id\":1,\"name\":\"Arm \\\"L\\\"\",\"parent\":0}],\"animations\":[\n"
                       "{\"id\":0,\"name\":\"Walk\",\"fps\":30,\"frames\":41},\n"
                       "{\"id\":1,\"name\":\"Idle\",\"fps\":24.5,\"frames\":1}],\"styles\":[\n"
                       "{\"id\":7,\"name\":\"Default\",\"textures\":12}],\"atlases\":[\n"
                       "{\"filename\":\"atlas0.png\",\"width\":256,\"height\":128}],"
                       "\"ik_families\":2,\"mesh_vertices\":40,\"keyframes\":900}\n";
    const char *wire = "{\"id\":\"00ff\",\"bones\":[\n"
                       "{\"id\":0,\"name\":\"Root\",\"parent\":-1},\n"
                       "{\"id\":1,\"name\":\"Arm \\\"L\\\"\",\"parent\":0}],\"animations\":[\n"
                       "{\"id\":0,\"name\":\"Walk\",\"fps\":30,\"frames\":41},\n"
                       "{\"id\":1,\"name\":\"Idle\",\"fps\":24.5,\"frames\":1}],\"styles\":[\n"
                       "{\"name\":\"Default\"}]}\n";
    char buf[1024];
    ck_assert_uint_eq(skp_info_json(buf, sizeof buf, &v), strlen(file));
    ck_assert_str_eq(buf, file);
    v.file = 0;
    ck_assert_uint_eq(skp_info_json(buf, sizeof buf, &v), strlen(wire));
    ck_assert_str_eq(buf, wire);
    ck_assert_uint_eq(skp_info_json(buf, 4, &v), strlen(wire));
    ck_assert_str_eq(buf, "{\"i");
}
END_TEST

/* ---- Prometheus text (skp_prom) ------------------------------------------------------------- */

/* Node names: the characters a header, a label and the server name take unquoted, 1 to 64.
 * The HELLO reply's server name carries the node after " on ", and the client reads back the
 * version and node only when both are such words; skeld_node_info is the same text for
 * /metrics and skelctl. */
START_TEST(node_names_and_the_hello_server_name)
{
    static const char *good[] = {"a", "web-1", "node_a.1", "A.B-C_9"};
    static const char *bad[] = {"", "web 1", "we\"b", "n\\a", "x\ny", "é", "a/b", "{x}"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        ck_assert_msg(skp_node_name_valid(good[i], strlen(good[i])), "\"%s\" refused", good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(!skp_node_name_valid(bad[i], strlen(bad[i])), "\"%s\" taken", bad[i]);
    char n[80];
    memset(n, 'n', sizeof n);
    ck_assert(skp_node_name_valid(n, 64));
    ck_assert(!skp_node_name_valid(n, 65));
    ck_assert(!skp_node_name_valid("ab\0c", 4)); /* a NUL inside the length */

    char name[128];
    ck_assert_uint_eq(skp_hello_name(name, sizeof name, "skeld 0.2.0", "web-1"), 20);
    ck_assert_str_eq(name, "skeld 0.2.0 on web-1");
    struct skp_str v, node;
    ck_assert(skp_hello_name_parse(name, &v, &node));
    ck_assert(v.len == 5 && !memcmp(v.p, "0.2.0", 5));
    ck_assert(node.len == 5 && !memcmp(node.p, "web-1", 5));
    static const char *unparsed[] = {
        "skeld 0.2.0",             /* an older daemon: no node */
        "fake 1.0",                /* another server */
        "skeld 0.2.0 on ",         /* an empty node */
        "skeld 0.2.0 on we\"b",    /* a node that would break the label */
        "skeld 0 2 on web",        /* a version of two words */
        "skeld 0\"2 on web",       /* a version that would break the label */
        "skeld on web",            /* no version */
        "skeld 0.2.0 on web on x", /* a node with spaces */
    };
    for (size_t i = 0; i < sizeof unparsed / sizeof *unparsed; i++)
        ck_assert_msg(!skp_hello_name_parse(unparsed[i], &v, &node), "\"%s\" parsed", unparsed[i]);

    ck_assert_uint_eq(skp_hello_name(name, sizeof name, "skeld 0.2.0", "we b"), 11);
    ck_assert_str_eq(name, "skeld 0.2.0"); /* no node rather than one that breaks a label */
    ck_assert_uint_eq(skp_hello_name(name, sizeof name, "skeld 0.2.0", NULL), 11);
    ck_assert_str_eq(name, "skeld 0.2.0");

    char info[256];
    size_t len = skp_prom_node_info(info, sizeof info, "web-1", 5, "0.2.0", 5);
    ck_assert_str_eq(info, "# HELP skeld_node_info This node: its --node-name and version.\n"
                           "# TYPE skeld_node_info gauge\n"
                           "skeld_node_info{node=\"web-1\",version=\"0.2.0\"} 1\n");
    ck_assert_uint_eq(len, strlen(info));
    ck_assert_uint_eq(skp_prom_node_info(NULL, 0, "web-1", 5, "0.2.0", 5), len);
}
END_TEST

START_TEST(prom_text_names_families_and_histogram)
{
    const struct skp_counter k[] = {
        {"requests.HELLO", 3},   {"requests.POSE", 5},     {"cache.hits", 7},
        {"queue.depth", 1},      {"connections.total", 9}, {"uptime.ms", 12345},
        {"refusals.LIMIT", 6},   {"refusals.BUSY", 0},     {"latency.lt_64us", 2},
        {"latency.lt_128us", 3}, {"latency.ge_128us", 1},  {"latency.sum_us", 2500017},
        {"new.thing-2", 4},
    };
    const char *want = "# HELP skeld_requests_total Requests by operation, both protocols.\n"
                       "# TYPE skeld_requests_total counter\n"
                       "skeld_requests_total{op=\"HELLO\"} 3\n"
                       "skeld_requests_total{op=\"POSE\"} 5\n"
                       "# HELP skeld_cache_hits_total Armature cache hits.\n"
                       "# TYPE skeld_cache_hits_total counter\n"
                       "skeld_cache_hits_total 7\n"
                       "# HELP skeld_queue_depth Jobs staged, queued or running.\n"
                       "# TYPE skeld_queue_depth gauge\n"
                       "skeld_queue_depth 1\n"
                       "# HELP skeld_connections_accepted_total Connections accepted.\n"
                       "# TYPE skeld_connections_accepted_total counter\n"
                       "skeld_connections_accepted_total 9\n"
                       "# HELP skeld_uptime_seconds Time since the daemon started.\n"
                       "# TYPE skeld_uptime_seconds gauge\n"
                       "skeld_uptime_seconds 12.345\n"
                       "# HELP skeld_refusals_total Answers with an error status, both "
                       "protocols, by status.\n"
                       "# TYPE skeld_refusals_total counter\n"
                       "skeld_refusals_total{status=\"LIMIT\"} 6\n"
                       "skeld_refusals_total{status=\"BUSY\"} 0\n"
                       "# HELP skeld_job_seconds Pool jobs from arrival to answer.\n"
                       "# TYPE skeld_job_seconds histogram\n"
                       "skeld_job_seconds_bucket{le=\"0.000064\"} 2\n"
                       "skeld_job_seconds_bucket{le=\"0.000128\"} 5\n"
                       "skeld_job_seconds_bucket{le=\"+Inf\"} 6\n"
                       "skeld_job_seconds_sum 2.500017\n"
                       "skeld_job_seconds_count 6\n"
                       "# TYPE skeld_new_thing_2 untyped\n"
                       "skeld_new_thing_2 4\n";
    char buf[2048];
    ck_assert_uint_eq(skp_prom_text(buf, sizeof buf, k, NELEM(k)), strlen(want));
    ck_assert_str_eq(buf, want);
    ck_assert_uint_eq(skp_prom_text(buf, 3, k, NELEM(k)), strlen(want));
    ck_assert_str_eq(buf, "# ");
    /* A histogram cut short still ends in +Inf and its count (with no sum, as an older
     * daemon's STATS has none: none made up); a label value is escaped. */
    const struct skp_counter h[] = {{"latency.lt_64us", 1}, {"requests.A\"B", 2}};
    skp_prom_text(buf, sizeof buf, h, NELEM(h));
    ck_assert_ptr_nonnull(strstr(buf, "skeld_job_seconds_bucket{le=\"+Inf\"} 1\n"
                                      "skeld_job_seconds_count 1\n"));
    ck_assert_ptr_nonnull(strstr(buf, "skeld_requests_total{op=\"A\\\"B\"} 2\n"));
    ck_assert_ptr_null(strstr(buf, "_sum"));
    /* a sum under a second, and a sum of 0 */
    const struct skp_counter s[] = {{"latency.lt_64us", 1}, {"latency.sum_us", 42}};
    skp_prom_text(buf, sizeof buf, s, NELEM(s));
    ck_assert_ptr_nonnull(strstr(buf, "skeld_job_seconds_bucket{le=\"+Inf\"} 1\n"
                                      "skeld_job_seconds_sum 0.000042\n"
                                      "skeld_job_seconds_count 1\n"));
    const struct skp_counter z[] = {{"latency.ge_64us", 0}, {"latency.sum_us", 0}};
    skp_prom_text(buf, sizeof buf, z, NELEM(z));
    ck_assert_ptr_nonnull(strstr(buf, "skeld_job_seconds_bucket{le=\"+Inf\"} 0\n"
                                      "skeld_job_seconds_sum 0.000000\n"
                                      "skeld_job_seconds_count 0\n"));
}
END_TEST

/* ====================================================================================== */
/* Message codecs (skp_msg.h)                                                              */

static struct skp_str sv(const char *s)
{
    return (struct skp_str){s, strlen(s)};
}

static bool str_is(struct skp_str s, const char *want)
{
    return s.len == strlen(want) && !memcmp(s.p, want, s.len);
}

/* skp_fmt_g9 writes what printf's %.9g writes, byte for byte, wherever it answers: random
 * doubles over every decade of its range and around its edges, whole numbers, exact ties
 * (which round to even), and values just below a power of ten (which round up into the next
 * decade). Outside its range it declines. */
START_TEST(fmt_g9_matches_printf)
{
    char want[64], got[64];
    uint64_t s = 0x9e3779b97f4a7c15u;
    long checked = 0;
    for (long i = 0; i < 2000000; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        double mant = (double)(s >> 11) / 9007199254740992.0; /* [0, 1) */
        int dec = (int)(s % 21) - 6;                          /* 1e-6 .. 1e15 */
        double v = (mant + 0.05) * pow(10.0, dec) * ((s >> 7) & 1 ? -1 : 1);
        if (i % 7 == 0)
            v = round(v * 1e4) / 1e4; /* short decimals, many trailing zeros */
        if (i % 11 == 0)
            v = (double)(int64_t)v + 0.5; /* exact ties at the 10th digit for 9-digit ints */
        size_t n = skp_fmt_g9(got, v);
        snprintf(want, sizeof want, "%.9g", v);
        if (!n) {
            double a = fabs(v);
            ck_assert_msg(!(a >= 1e-5 && a < 1e15), "declined %.17g", v);
            continue;
        }
        ck_assert_msg(!strcmp(got, want) && n == strlen(want), "%.17g: got %s, printf %s", v, got,
                      want);
        checked++;
    }
    ck_assert_int_gt(checked, 1500000);
    /* Whole numbers (written two digits at a time): every length, each side of 10^k. */
    for (uint32_t w = 1; w < 1000000000u; w = w < 200000 ? w + 1 : w * 3 + 7) {
        for (int sign = 0; sign < 2; sign++) {
            double v = sign ? -(double)w : (double)w;
            size_t n = skp_fmt_g9(got, v);
            snprintf(want, sizeof want, "%.9g", v);
            ck_assert_msg(n == strlen(want) && !strcmp(got, want), "%.17g: got %s, printf %s", v,
                          got, want);
        }
    }
    static const double edges[] = {1e-5,
                                   9.9999999949e-5,
                                   0.000123456789,
                                   0.5,
                                   1,
                                   9.9999999949,
                                   9.99999999501,
                                   999999999.5,
                                   999999999,
                                   100000000,
                                   99,
                                   100,
                                   0.0009765625,
                                   0.00097656249999999989,
                                   123456789.5,
                                   123456788.5,
                                   1e9,
                                   1e14,
                                   999999999999999.875,
                                   1e-5 * 1.0000000001,
                                   2.5e-5,
                                   -3.14159265358979};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        size_t n = skp_fmt_g9(got, edges[i]);
        snprintf(want, sizeof want, "%.9g", edges[i]);
        ck_assert_msg(n && !strcmp(got, want), "%.17g: got %s, printf %s", edges[i], n ? got : "-",
                      want);
    }
    ck_assert_uint_eq(skp_fmt_g9(got, 1e15), 0);
    ck_assert_uint_eq(skp_fmt_g9(got, 9.9e-6), 0);
    ck_assert_uint_eq(skp_fmt_g9(got, NAN), 0);
    ck_assert_uint_eq(skp_fmt_g9(got, INFINITY), 0);
}
END_TEST

/* The digits of 9-digit significands come out right: q + 0.25 prints as q for q from 10^8 to
 * 10^9 in steps of 997 (prime to every power of ten, so each digit pair takes every value),
 * and round values drop their trailing zeros. */
START_TEST(fmt_g9_writes_every_significand)
{
    char got[32], want[16];
    for (uint32_t q = 100000000u; q < 1000000000u; q += 997) {
        skp_fmt_g9(got, q + 0.25);
        uint32_t n = q;
        for (int i = 8; i >= 0; i--, n /= 10)
            want[i] = (char)('0' + n % 10);
        want[9] = 0;
        if (strcmp(got, want))
            ck_abort_msg("%u.25: got %s", q, got);
    }
    static const struct {
        double v;
        const char *want;
    } round[] = {{100000000.5, "100000000"},
                 {120000000.25, "120000000"},
                 {0.5, "0.5"},
                 {1.25, "1.25"},
                 {0.001, "0.001"},
                 {1.5e-5, "1.5e-05"},
                 {2e10, "2e+10"},
                 {123456700000.0, "1.234567e+11"}};
    for (size_t i = 0; i < sizeof round / sizeof round[0]; i++) {
        skp_fmt_g9(got, round[i].v);
        ck_assert_str_eq(got, round[i].want);
    }
}
END_TEST

START_TEST(eval_req_layout_and_roundtrip)
{
    struct skp_eval_req m, d;
    skp_eval_req_init(&m);
    for (int i = 0; i < SKP_ID_SIZE; i++)
        m.armature[i] = (uint8_t)(i + 1);
    m.flags = SKP_EVAL_LOOP | SKP_EVAL_FROM;
    m.anim_count = 2;
    m.anims[0] = (struct skp_anim_ref){sv("Walk"), 10.5, 2};
    m.anims[1] = (struct skp_anim_ref){sv("3"), -1, 0};
    m.from = 4;
    m.warmup = 30;
    m.position[0] = 7;
    m.velocity[1] = -8;
    uint8_t buf[512];
    struct skp_writer w;
    skp_writer_init(&w, buf, sizeof buf);
    skp_encode_eval_req(&w, &m);
    ck_assert_int_eq(w.err, 0);
    ck_assert_uint_le(w.len, skp_eval_req_size(&m));
    /* PROTOCOL.md's order: target, id, flags, count, then per animation a u16-length name,
     * frame and smoothing; then from, warmup and six option doubles. */
    ck_assert_uint_eq(w.len, 1 + 32 + 2 + 1 + (2 + 4 + 16) + (2 + 1 + 16) + 8 + 4 + 48);
    ck_assert_uint_eq(buf[0], SKP_TARGET_ARMATURE);
    ck_assert_uint_eq(buf[1], 1);
    ck_assert_uint_eq(buf[32], 32);
    ck_assert_uint_eq(skp_get_u16(buf + 33), SKP_EVAL_LOOP | SKP_EVAL_FROM);
    ck_assert_uint_eq(buf[35], 2);
    ck_assert_uint_eq(skp_get_u16(buf + 36), 4);
    ck_assert(!memcmp(buf + 38, "Walk", 4));
    struct skp_reader rd;
    skp_reader_init(&rd, buf, w.len);
    ck_assert_int_eq(skp_decode_eval_req(&rd, &d), SKP_EOK);
    ck_assert_int_eq(skp_reader_finish(&rd), SKP_EOK);
    ck_assert(!memcmp(d.armature, m.armature, SKP_ID_SIZE));
    ck_assert_uint_eq(d.flags, m.flags);
    ck_assert_uint_eq(d.anim_count, 2);
    ck_assert(str_is(d.anims[0].name, "Walk") && str_is(d.anims[1].name, "3"));
    ck_assert(d.anims[0].frame == 10.5 && d.anims[0].smooth == 2 && d.anims[1].frame == -1);
    ck_assert(d.from == 4 && d.warmup == 30 && d.position[0] == 7 && d.velocity[1] == -8);
    ck_assert(d.scale[0] == 1 && d.scale[1] == 1);
    /* An instance target carries a u32 instead of the id. */
    m.target = SKP_TARGET_INSTANCE;
    m.instance = 77;
    skp_writer_init(&w, buf, sizeof buf);
    skp_encode_eval_req(&w, &m);
    skp_reader_init(&rd, buf, w.len);
    ck_assert_int_eq(skp_decode_eval_req(&rd, &d), SKP_EOK);
    ck_assert_uint_eq(d.target, SKP_TARGET_INSTANCE);
    ck_assert_uint_eq(d.instance, 77);
    ck_assert_uint_eq(skp_get_u32(buf + 1), 77);
}
END_TEST

START_TEST(render_req_roundtrip)
{
    struct skp_render_req m, d;
    skp_render_req_init(&m);
    ck_assert(m.width == 512 && m.fit == 0.9 && m.samples == 4 && m.png_level == SKP_PNG_DEFAULT);
    m.width = 64;
    m.height = 32;
    m.background[3] = 255;
    m.camera = SKP_CAMERA_EXPLICIT;
    m.scale[0] = 0.5;
    m.position[1] = -16;
    m.style_count = 2;
    m.styles[0] = sv("Red");
    m.styles[1] = sv("0");
    m.first = 3;
    m.last = 9;
    m.cols = 4;
    m.rows = 2;
    uint8_t buf[512];
    struct skp_writer w;
    skp_writer_init(&w, buf, sizeof buf);
    skp_encode_render_req(&w, &m);
    ck_assert_int_eq(w.err, 0);
    ck_assert_uint_le(w.len, skp_render_req_size(&m));
    ck_assert_uint_eq(buf[w.len - SKP_RENDER_PNG_FROM_END], m.png_level); /* result_key's */
    struct skp_reader rd;
    skp_reader_init(&rd, buf, w.len);
    ck_assert_int_eq(skp_decode_render_req(&rd, &d), SKP_EOK);
    ck_assert_int_eq(skp_reader_finish(&rd), SKP_EOK);
    ck_assert(d.width == 64 && d.height == 32 && d.background[3] == 255);
    ck_assert(d.camera == SKP_CAMERA_EXPLICIT && d.scale[0] == 0.5 && d.position[1] == -16);
    ck_assert(d.style_count == 2 && str_is(d.styles[0], "Red") && str_is(d.styles[1], "0"));
    ck_assert(d.first == 3 && d.last == 9 && d.cols == 4 && d.rows == 2);
    ck_assert_int_eq(d.png_level, SKP_PNG_DEFAULT);
    /* "fast" (an old client's 254) is the default encoder now: it decodes as the default (the
     * ETag's canonical request, and what the daemon draws); a zlib level stays as sent */
    static const uint8_t sent[] = {SKP_PNG_FAST, 6};
    static const uint8_t read[] = {SKP_PNG_DEFAULT, 6};
    for (int i = 0; i < 2; i++) {
        m.png_level = sent[i];
        skp_writer_init(&w, buf, sizeof buf);
        skp_encode_render_req(&w, &m);
        skp_reader_init(&rd, buf, w.len);
        ck_assert_int_eq(skp_decode_render_req(&rd, &d), SKP_EOK);
        ck_assert_int_eq(d.png_level, read[i]);
    }
}
END_TEST

START_TEST(msg_decode_errors)
{
    uint8_t buf[4096];
    struct skp_writer w;
    struct skp_reader rd;
    struct skp_eval_req m;
    struct skp_render_req rm;
    /* an unknown target */
    skp_writer_init(&w, buf, sizeof buf);
    skp_write_u8(&w, 2);
    skp_reader_init(&rd, buf, w.len);
    ck_assert_int_eq(skp_decode_eval_req(&rd, &m), SKP_ECOUNT);
    /* 17 animations */
    skp_eval_req_init(&m);
    skp_writer_init(&w, buf, sizeof buf);
    skp_encode_eval_req(&w, &m);
    buf[35] = SKP_MAX_ANIMS + 1;
    skp_reader_init(&rd, buf, w.len);
    ck_assert_int_eq(skp_decode_eval_req(&rd, &m), SKP_ECOUNT);
    /* every truncation of a valid body is ETRUNCATED, never a crash or a success */
    skp_eval_req_init(&m);
    m.anim_count = 1;
    m.anims[0].name = sv("Idle");
    skp_writer_init(&w, buf, sizeof buf);
    skp_encode_eval_req(&w, &m);
    for (size_t cut = 0; cut < w.len; cut++) {
        skp_reader_init(&rd, buf, cut);
        ck_assert_int_eq(skp_decode_eval_req(&rd, &m), SKP_ETRUNCATED);
    }
    /* 65 styles */
    skp_render_req_init(&rm);
    skp_writer_init(&w, buf, sizeof buf);
    skp_encode_render_req(&w, &rm);
    buf[4 + 4 + 4 + 1 + 8 + 32] = SKP_MAX_STYLES + 1;
    skp_reader_init(&rd, buf, w.len);
    ck_assert_int_eq(skp_decode_render_req(&rd, &rm), SKP_ECOUNT);
    /* a name longer than the protocol allows */
    skp_writer_init(&w, buf, sizeof buf);
    skp_write_u8(&w, SKP_TARGET_INSTANCE);
    skp_write_u32(&w, 1);
    skp_write_u16(&w, 0);
    skp_write_u8(&w, 1);
    skp_write_u16(&w, SKP_MAX_NAME + 1);
    memset(buf + w.len, 'a', SKP_MAX_NAME + 1);
    skp_reader_init(&rd, buf, w.len + SKP_MAX_NAME + 1);
    ck_assert_int_eq(skp_decode_eval_req(&rd, &m), SKP_ETOOLONG);
}
END_TEST

static Suite *proto_suite(void)
{
    Suite *s = suite_create("proto");

    TCase *tc = tcase_create("encode");
    tcase_add_test(tc, constants_match_protocol);
    tcase_add_test(tc, u16_byte_order);
    tcase_add_test(tc, u32_byte_order);
    tcase_add_test(tc, u64_byte_order);
    tcase_add_test(tc, put_writes_only_its_width);
    tcase_add_test(tc, encode_header_bytes);
    tcase_add_test(tc, encode_header_fields_distinct);
    tcase_add_test(tc, encode_then_parse);
    suite_add_tcase(s, tc);

    tc = tcase_create("names and statuses");
    tcase_add_test(tc, opcode_names_every_opcode);
    tcase_add_test(tc, opcode_values_match_protocol);
    tcase_add_test(tc, opcode_name_unknown);
    tcase_add_test(tc, doc_tables_match_code);
    tcase_add_test(tc, strerror_every_status);
    tcase_add_test(tc, status_values_match_protocol);
    tcase_add_test(tc, strerror_unknown);
    tcase_add_test(tc, client_fault_ranges);
    tcase_add_test(tc, parse_status_mapping);
    suite_add_tcase(s, tc);

    tc = tcase_create("reader/writer");
    tcase_add_test(tc, writer_exact_bytes);
    tcase_add_test(tc, round_trip_integers);
    tcase_add_test(tc, round_trip_f64_special);
    tcase_add_test(tc, str_up_to_max_name);
    tcase_add_test(tc, str_one_over_max_name);
    tcase_add_test(tc, str_empty);
    tcase_add_test(tc, bytes_round_trip_and_max);
    tcase_add_test(tc, writer_bytes_too_long);
    tcase_add_test(tc, writer_huge_lengths_no_wrap);
    tcase_add_test(tc, writer_enospace_each_type);
    tcase_add_test(tc, writer_f64s_matches_single_writes);
    tcase_add_test(tc, writer_pose_bone_matches_fields);
    tcase_add_test(tc, writer_u32s_matches_single_writes);
    tcase_add_test(tc, writer_stops_after_error);
    tcase_add_test(tc, writer_first_error_sticks);
    tcase_add_test(tc, writer_zero_capacity);
    tcase_add_test(tc, reader_truncated_each_type);
    tcase_add_test(tc, reader_str_bytes_truncated);
    tcase_add_test(tc, reader_finish);
    suite_add_tcase(s, tc);

    tc = tcase_create("parser: whole frames");
    tcase_add_test(tc, whole_frame_hand_bytes);
    tcase_add_test(tc, zero_length_body);
    tcase_add_test(tc, two_frames_back_to_back);
    tcase_add_test(tc, empty_buffer);
    suite_add_tcase(s, tc);

    tc = tcase_create("parser: partial frames");
    tcase_add_test(tc, one_byte_at_a_time);
    tcase_add_test(tc, header_waits_for_body);
    suite_add_tcase(s, tc);

    tc = tcase_create("parser: split reads");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, split_one_frame_every_offset);
    tcase_add_test(tc, split_three_frames_every_pair);
    tcase_add_test(tc, split_random_chunks);
    suite_add_tcase(s, tc);

    tc = tcase_create("parser: oversize");
    tcase_add_test(tc, limit_exact_accepted_one_over_rejected);
    tcase_add_test(tc, limit_clamped_to_max_frame);
    tcase_add_test(tc, max_frame_whole);
    suite_add_tcase(s, tc);

    tc = tcase_create("parser: garbage");
    tcase_add_test(tc, wrong_magic_each_position);
    tcase_add_test(tc, garbage_texts);
    tcase_add_test(tc, garbage_after_frame);
    suite_add_tcase(s, tc);

    tc = tcase_create("parser: version");
    tcase_add_test(tc, version_at_byte_4);
    tcase_add_test(tc, version_precedence);
    suite_add_tcase(s, tc);

    tc = tcase_create("parser: reserved");
    tcase_add_test(tc, reserved_field_set);
    tcase_add_test(tc, unknown_flag_bits);
    tcase_add_test(tc, reserved_partial_header);
    tcase_add_test(tc, reserved_and_oversize);
    suite_add_tcase(s, tc);

    tc = tcase_create("number formatting");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, fmt_g9_matches_printf);
    tcase_add_test(tc, fmt_g9_writes_every_significand);
    suite_add_tcase(s, tc);

    tc = tcase_create("message codecs");
    tcase_add_test(tc, eval_req_layout_and_roundtrip);
    tcase_add_test(tc, render_req_roundtrip);
    tcase_add_test(tc, msg_decode_errors);
    suite_add_tcase(s, tc);

    tc = tcase_create("json");
    tcase_add_test(tc, sheet_json_gets_the_image_name_first);
    tcase_add_test(tc, out_path_expands_and_refuses_truncation);
    tcase_add_test(tc, json_quoted_small_or_allocated);
    tcase_add_test(tc, json_quote_keeps_utf8_and_replaces_the_rest);
    tcase_add_test(tc, progress_line);
    tcase_add_test(tc, pose_json_with_matrix_and_tint);
    tcase_add_test(tc, info_json_file_and_wire_views);
    tcase_add_test(tc, prom_text_names_families_and_histogram);
    tcase_add_test(tc, node_names_and_the_hello_server_name);
    suite_add_tcase(s, tc);

    tc = tcase_create("command lines");
    tcase_add_test(tc, cli_help_version_and_matrix_parse);
    tcase_add_test(tc, cli_refusals_name_the_flag);
    tcase_add_test(tc, cli_numbers_are_decimal);
    tcase_add_test(tc, cli_messages_as_a_query_says_them);
    tcase_add_test(tc, cli_help_lists_exactly_the_allowed_flags);
    tcase_add_test(tc, sheet_json_path_strips_png);
    tcase_add_test(tc, query_refuses_command_line_only_flags);
    suite_add_tcase(s, tc);

    tc = tcase_create("parser: fuzz");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, fuzz_random_buffers);
    tcase_add_test(tc, fuzz_prefixes_monotonic);
    suite_add_tcase(s, tc);

    return s;
}

int main(void)
{
    arena_init();
    SRunner *sr = srunner_create(proto_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    arena_free();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
