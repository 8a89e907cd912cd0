#include "skp_cli.h"

#include "skp_msg.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The one flag table: long name, whether the flag takes a value, whether a URL query may
 * carry it (HTTP), and what --help says: the value's shape and the flag's meaning (a render's
 * own where its --scale and --position are the camera's). */
static const struct {
    const char *name;
    bool value, query;
    const char *arg, *help;
    const char *camera_arg, *camera_help; /* NULL: as arg and help */
} flags[SKP_CLI_NFLAGS] = {
    [SKP_CLI_ANIM] = {"anim", true, true, "A[,B..]",
                      "animations by name or index (#N); several play at once, later ones win"},
    [SKP_CLI_FRAME] = {"frame", true, true, "F[,G..]",
                       "each animation's frame (one value for all; default 0)"},
    [SKP_CLI_SMOOTH] = {"smooth", true, true, "S[,..]",
                        "smoothing frames per animation (one value for all; default 0)"},
    [SKP_CLI_FROM] = {"from", true, true, "F0",
                      "play one step per frame from F0 through the frame (default: one step)"},
    [SKP_CLI_WARMUP] = {"warmup", true, true, "N",
                        "constructs at rest first (the web player runs 30)"},
    [SKP_CLI_LOOP] = {"loop", false, true, NULL, "frames wrap round the animation"},
    [SKP_CLI_REVERSE] = {"reverse", false, true, NULL, "frames count back from the end"},
    [SKP_CLI_POSITION] = {"position", true, true, "X,Y", "engine option: offset the output", "X,Y",
                          "camera: where the armature origin lands (with --scale)"},
    [SKP_CLI_SCALE] = {"scale", true, true, "X,Y", "engine option: scale the output", "S[,SY]",
                       "camera scale; alone, it centres the origin"},
    [SKP_CLI_VELOCITY] = {"velocity", true, true, "X,Y",
                          "engine option: move the physics state by a velocity"},
    [SKP_CLI_Y_DOWN] = {"y-down", false, true, NULL, "engine option: y grows downwards"},
    [SKP_CLI_FRAMES] = {"frames", true, true, "F0-F1",
                        "every frame of a range (-o a pattern such as out_%04d.png, or --sheet)"},
    [SKP_CLI_SIZE] = {"size", true, true, "WxH", "canvas in pixels (default 512x512)"},
    [SKP_CLI_FIT] = {"fit", true, true, "F",
                     "frame the animation in this fraction of the canvas (default 0.9)"},
    [SKP_CLI_STYLE] = {"style", true, true, "NAME,..",
                       "styles by name or index (#N), by priority (default: Default, else all)"},
    [SKP_CLI_BACKGROUND] = {"background", true, true, "RRGGBB[AA]",
                            "background colour (default transparent)"},
    [SKP_CLI_SAMPLES] = {"samples", true, true, "1|4", "samples per pixel (default 4)"},
    [SKP_CLI_PNG_LEVEL] = {"png-level", true, true, "default|0-9",
                           "PNG encoder: skeld's own (default; \"fast\" names it too) or zlib's"},
    [SKP_CLI_SHEET] = {"sheet", true, true, "COLSxROWS",
                       "pack the range into one picture OUT.png and its OUT.json"},
    [SKP_CLI_OUTPUT] = {"output", true, false, "OUT.png",
                        "the picture to write (- for stdout; a %d pattern for a range)"},
    [SKP_CLI_MATRIX] = {"matrix", false, true, NULL,
                        "each bone's 2x3 world matrix and tint too (keys \"matrix\", \"tint\")"},
    [SKP_CLI_PROMETHEUS] = {"prometheus", false, false, NULL,
                            "the Prometheus text format, with GET /metrics' names"},
    [SKP_CLI_HELP] = {"help", false, false, NULL, "print this help and exit"},
    [SKP_CLI_VERSION] = {"version", false, false, NULL, "print the version and exit"},
};

const char *skp_cli_flag_name(int f)
{
    return f >= 0 && f < SKP_CLI_NFLAGS ? flags[f].name : "?";
}

size_t skp_cli_help(char *buf, size_t cap, uint32_t allowed, bool camera)
{
    size_t len = 0;
    for (int f = 0; f < SKP_CLI_NFLAGS; f++) {
        if (!(allowed & SKP_CLI_BIT(f)))
            continue;
        bool alt = camera && flags[f].camera_help;
        const char *arg = alt ? flags[f].camera_arg : flags[f].arg;
        const char *help = alt ? flags[f].camera_help : flags[f].help;
        char name[40];
        snprintf(name, sizeof name, "%s--%s%s%s", f == SKP_CLI_OUTPUT ? "-o, " : "", flags[f].name,
                 arg ? " " : "", arg ? arg : "");
        size_t room = len < cap ? cap - len : 0;
        int n = snprintf(room ? buf + len : NULL, room, "  %-26s %s\n", name, help);
        if (n > 0)
            len += (size_t)n;
    }
    if (cap)
        buf[len < cap ? len : cap - 1] = 0;
    return len;
}

/* getopt_long's table for every flag (exact names only: no abbreviations, see below). */
static void long_options(struct option *o)
{
    for (int f = 0; f < SKP_CLI_NFLAGS; f++)
        o[f] = (struct option){flags[f].name, flags[f].value ? required_argument : no_argument,
                               NULL, 256 + f};
    o[SKP_CLI_NFLAGS] = (struct option){NULL, 0, NULL, 0};
}

/* getopt_long accepts unambiguous prefixes ("--fr" for --from): flags are spelled out here so
 * that adding a flag never changes what an old command line means. */
static bool spelled_out(const char *arg, int f)
{
    const char *eq = strchr(arg, '=');
    size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
    return n == strlen(flags[f].name) + 2 && !strncmp(arg + 2, flags[f].name, n - 2);
}

/* A flag with a value given twice is refused rather than the last one winning: "anim=a&anim=b"
 * or "--anim a --anim b" reads as two animations, and playing only b would answer a question
 * that was not asked. The lists take their values in one, comma-separated. A switch given
 * twice says the same thing twice. */
static int given_twice(const struct skp_cli_args *a, int f, bool query, char *msg, size_t cap)
{
    if (!a->value[f] || !flags[f].value)
        return 0;
    bool list =
        f == SKP_CLI_ANIM || f == SKP_CLI_FRAME || f == SKP_CLI_SMOOTH || f == SKP_CLI_STYLE;
    const char *name = flags[f].name;
    int n = query ? snprintf(msg, cap, "parameter \"%s\" is given twice", name)
                  : snprintf(msg, cap, "--%s is given twice", name);
    if (list && n > 0 && (size_t)n < cap)
        snprintf(msg + n, cap - (size_t)n, "; several values go in one: %s%s%s%s",
                 query ? "" : "--", name, query ? "=" : " ", flags[f].arg);
    return -1;
}

int skp_cli_parse(int argc, char **argv, uint32_t allowed, int max_args, struct skp_cli_args *a,
                  char *msg, size_t cap)
{
    struct option opts[SKP_CLI_NFLAGS + 1];
    long_options(opts);
    memset(a, 0, sizeof *a);
    optind = 0; /* a fresh scan (GNU): the caller may parse more than one command line */
    opterr = 0;
    for (;;) {
        int at = optind ? optind : 1;
        int c = getopt_long(argc, argv, "-o:", opts, NULL);
        if (c == -1)
            break;
        const char *word = at < argc ? argv[at] : "";
        int f = c == 'o' ? SKP_CLI_OUTPUT : c - 256;
        if (c == 1) { /* an argument in order ("-" first in optstring) */
            if (a->nargs == max_args || a->nargs == SKP_CLI_MAX_ARGS) {
                snprintf(msg, cap, "unexpected argument \"%s\"", optarg);
                return -1;
            }
            a->arg[a->nargs++] = optarg;
            continue;
        }
        if (c == '?') { /* opterr is 0: a missing value sets optopt to the flag's code */
            if (optopt >= 256 && optopt < 256 + SKP_CLI_NFLAGS)
                snprintf(msg, cap, "--%s needs a value", flags[optopt - 256].name);
            else if (optopt == 'o')
                snprintf(msg, cap, "-o needs a value");
            else
                snprintf(msg, cap, "unknown flag %s", word);
            return -1;
        }
        if (c != 'o' && !spelled_out(word, f)) {
            snprintf(msg, cap, "unknown flag %s (did you mean --%s?)", word, flags[f].name);
            return -1;
        }
        if (!(allowed & SKP_CLI_BIT(f))) {
            snprintf(msg, cap, "--%s does not apply to this command", flags[f].name);
            return -1;
        }
        if (given_twice(a, f, false, msg, cap))
            return -1;
        a->value[f] = optarg ? optarg : (char *)"";
    }
    /* "--" ends the flags: what follows is arguments, counted as any other (getopt_long
     * stops there and leaves them at argv[optind..], unread). */
    for (int i = optind; i < argc; i++) {
        if (a->nargs == max_args || a->nargs == SKP_CLI_MAX_ARGS) {
            snprintf(msg, cap, "unexpected argument \"%s\"", argv[i]);
            return -1;
        }
        a->arg[a->nargs++] = argv[i];
    }
    return 0;
}

/* Where the decimal number at p ends (a sign, digits with at most one point, an exponent),
 * or p itself if none starts there. What strtod takes besides (hexadecimal, "inf", leading
 * spaces) is no number a flag or a query parameter takes. */
static const char *decimal_end(const char *p)
{
    const char *q = p + (*p == '-' || *p == '+');
    size_t whole = strspn(q, "0123456789");
    q += whole;
    size_t frac = *q == '.' ? strspn(q + 1, "0123456789") : 0;
    if (!whole && !frac)
        return p;
    q += *q == '.' ? 1 + frac : 0;
    if (*q == 'e' || *q == 'E') {
        const char *e = q + 1 + (q[1] == '-' || q[1] == '+');
        size_t digits = strspn(e, "0123456789");
        q = digits ? e + digits : q;
    }
    return q;
}

/* A whole number in decimal starts at s: strtol would also skip spaces and take a '+'. */
static bool whole_at(const char *s)
{
    return isdigit((unsigned char)s[*s == '-']);
}

/* The flag whose name starts at s and ends before a character that cannot be in one, or -1. */
static int flag_named_at(const char *s)
{
    size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz-");
    for (int f = 0; f < SKP_CLI_NFLAGS; f++)
        if (strlen(flags[f].name) == n && !strncmp(s, flags[f].name, n))
            return f;
    return -1;
}

void skp_cli_as_query(char *msg)
{
    char *w = msg;
    bool quoted = false; /* inside "...": what the client sent, quoted as sent */
    for (const char *r = msg; *r;) {
        bool starts = r == msg || r[-1] == ' ' || r[-1] == '(' || r[-1] == ',';
        quoted ^= *r == '"';
        if (!quoted && starts && r[0] == '-' && r[1] == '-' && flag_named_at(r + 2) >= 0)
            r += 2;
        else
            *w++ = *r++;
    }
    *w = 0;
}

int skp_cli_numbers(const char *s, double *out, int max)
{
    int n = 0;
    const char *p = s;
    if (!*p)
        return -1;
    while (*p) {
        char *end;
        if (n == max)
            return -1;
        const char *stop = decimal_end(p);
        out[n] = strtod(p, &end);
        if (stop == p || end != stop || !isfinite(out[n]) || (*end && *end != ',') ||
            (*end == ',' && !end[1]))
            return -1; /* not decimal, not finite, not followed by a comma and another */
        n++;
        p = *end ? end + 1 : end;
    }
    return n;
}

int skp_cli_vec2(const char *s, double out[2])
{
    int n = skp_cli_numbers(s, out, 2);
    if (n < 1)
        return -1;
    if (n == 1)
        out[1] = out[0];
    return 0;
}

/* One number per animation, or one standing for all; none leaves def. */
static int per_anim(const char *flag, const char *s, unsigned count, double def, double *out,
                    char *msg, size_t cap)
{
    double v[SKP_MAX_ANIMS];
    int n = s ? skp_cli_numbers(s, v, SKP_MAX_ANIMS) : 0;
    if (n < 0 || (n > 1 && count && (unsigned)n != count)) {
        snprintf(msg, cap, "--%s: expected one number, or one per animation, separated by commas",
                 flag);
        return -1;
    }
    for (unsigned i = 0; i < SKP_MAX_ANIMS; i++)
        out[i] = n == 0 ? def : v[n == 1 ? 0 : (i < (unsigned)n ? i : 0)];
    return 0;
}

static int vec_flag(const char *flag, const char *s, double def, double out[2], char *msg,
                    size_t cap)
{
    out[0] = out[1] = def;
    if (s && skp_cli_vec2(s, out)) {
        snprintf(msg, cap, "--%s: expected X,Y", flag);
        return -1;
    }
    return 0;
}

int skp_cli_eval_parse(struct skp_cli_args *a, bool engine_opts, struct skp_cli_eval *e, char *msg,
                       size_t cap)
{
    memset(e, 0, sizeof *e);
    char **v = a->value;
    /* The names, split in place. An empty one is refused, not skipped: "Walk,,Idle" or a
     * trailing comma is a slip, and reading it as two animations would answer another
     * question, with the frames given for three matched to the wrong names. */
    for (char *p = v[SKP_CLI_ANIM], *comma; p; p = comma ? comma + 1 : NULL) {
        if ((comma = strchr(p, ',')))
            *comma = '\0';
        if (!*p) {
            snprintf(msg, cap, "--anim: an empty animation name (a comma too many?)");
            return -1;
        }
        if (e->count == SKP_MAX_ANIMS) {
            snprintf(msg, cap, "--anim: at most %d animations", SKP_MAX_ANIMS);
            return -1;
        }
        if (strlen(p) > SKP_MAX_NAME) { /* what a request can carry (name it by its index) */
            snprintf(msg, cap, "--anim: a name is at most %d bytes (give a longer one's index)",
                     SKP_MAX_NAME);
            return -1;
        }
        e->anims[e->count++] = p;
    }
    if (per_anim("frame", v[SKP_CLI_FRAME], e->count, 0, e->frames, msg, cap) ||
        per_anim("smooth", v[SKP_CLI_SMOOTH], e->count, 0, e->smooth, msg, cap))
        return -1;
    if ((e->has_from = v[SKP_CLI_FROM] != NULL) &&
        skp_cli_numbers(v[SKP_CLI_FROM], &e->from, 1) != 1) {
        snprintf(msg, cap, "--from: expected a number");
        return -1;
    }
    /* a whole number as every front reads one (no '+', no exponent); the wire's u32 bounds
     * it, and the request model judges the rest (its own limit) */
    long long warmup = 0;
    int wrc = v[SKP_CLI_WARMUP] ? skp_cli_whole(v[SKP_CLI_WARMUP], 0, UINT32_MAX, &warmup) : 0;
    if (wrc == SKP_CLI_NOT_WHOLE) {
        snprintf(msg, cap, "--warmup: expected a whole number");
        return -1;
    }
    if (wrc == SKP_CLI_OUT_OF_RANGE) {
        snprintf(msg, cap, "--warmup: %s is out of range (a number of steps, 0 or more)",
                 v[SKP_CLI_WARMUP]);
        return -1;
    }
    if (v[SKP_CLI_WARMUP])
        e->warmup = (double)warmup;
    e->loop = v[SKP_CLI_LOOP] != NULL;
    e->reverse = v[SKP_CLI_REVERSE] != NULL;
    e->y_down = v[SKP_CLI_Y_DOWN] != NULL;
    if (!engine_opts)
        return vec_flag("position", NULL, 0, e->position, msg, cap) |
               vec_flag("scale", NULL, 1, e->scale, msg, cap) |
               vec_flag("velocity", NULL, 0, e->velocity, msg, cap);
    if (vec_flag("position", v[SKP_CLI_POSITION], 0, e->position, msg, cap) ||
        vec_flag("scale", v[SKP_CLI_SCALE], 1, e->scale, msg, cap) ||
        vec_flag("velocity", v[SKP_CLI_VELOCITY], 0, e->velocity, msg, cap))
        return -1;
    return 0;
}

int skp_cli_pair(const char *s, char sep, long *a, long *b)
{
    char *end;
    if (!whole_at(s))
        return -1;
    *a = strtol(s, &end, 10);
    if (*end != sep || !whole_at(end + 1))
        return -1;
    const char *t = end + 1;
    *b = strtol(t, &end, 10);
    return *end ? -1 : 0;
}

int skp_cli_color(const char *s, uint8_t out[4])
{
    size_t n = strlen(s);
    if ((n != 6 && n != 8) || strspn(s, "0123456789abcdefABCDEF") != n)
        return -1;
    unsigned long v = strtoul(s, NULL, 16);
    if (n == 6)
        v = v << 8 | 0xff;
    for (int c = 0; c < 4; c++)
        out[c] = (uint8_t)(v >> (24 - 8 * c));
    return 0;
}

bool skp_cli_frame_pattern(const char *s)
{
    int conversions = 0;
    for (; *s; s++) {
        if (*s != '%')
            continue;
        if (s[1] == '%') {
            s++;
            continue;
        }
        s++;
        while (*s && strchr("0123456789-+ ", *s))
            s++;
        if (*s != 'd')
            return false;
        conversions++;
    }
    return conversions == 1;
}

/* output (a pattern: skp_cli_frame_pattern) with its one %d made a %ld, so that a frame past
 * INT_MAX (frames are 32-bit unsigned) keeps its number; malloc'd, NULL if out of memory. */
static char *long_pattern(const char *output)
{
    char *f = malloc(strlen(output) + 2), *o = f;
    for (const char *s = output; f && *s; s++) {
        *o++ = *s;
        if (*s != '%')
            continue;
        if (s[1] == '%') {
            *o++ = *++s;
            continue;
        }
        while (s[1] && strchr("0123456789-+ ", s[1]))
            *o++ = *++s;
        if (s[1] == 'd')
            *o++ = 'l';
    }
    if (f)
        *o = 0;
    return f;
}

int skp_cli_out_path(char *buf, size_t cap, const char *output, bool pattern, long frame,
                     const char *suffix)
{
    int n;
    /* A pattern holds exactly one integer conversion (skp_cli_frame_pattern), made a %ld. */
    char *format = pattern ? long_pattern(output) : NULL;
    if (pattern && !format)
        return -1;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    n = pattern ? snprintf(buf, cap, format, frame) : snprintf(buf, cap, "%s", output);
#pragma GCC diagnostic pop
    free(format);
    if (n < 0 || (size_t)n >= cap)
        return -1;
    int m = snprintf(buf + n, cap - (size_t)n, "%s", suffix);
    return m < 0 || (size_t)m >= cap - (size_t)n ? -1 : 0;
}

int skp_cli_sheet_json_path(char *buf, size_t cap, const char *output)
{
    size_t n = strlen(output);
    const char *base = strrchr(output, '/');
    base = base ? base + 1 : output;
    /* The picture's extension goes; a name that is nothing but ".png" keeps it. */
    if (n - (size_t)(base - output) > 4 && !strcasecmp(output + n - 4, ".png"))
        n -= 4;
    int m = snprintf(buf, cap, "%.*s.json", (int)(n < INT_MAX ? n : 0), output);
    return m < 0 || (size_t)m >= cap || n >= INT_MAX ? -1 : 0;
}

/* Escape of one byte of a JSON string into tmp (NUL-terminated); most bytes are themselves. */
static const char *json_escape(unsigned char ch, char tmp[8])
{
    static const char digits[] = "0123456789abcdef";
    if (ch == '"' || ch == '\\') {
        tmp[0] = '\\';
        tmp[1] = (char)ch;
        tmp[2] = 0;
    } else if (ch < 0x20) {
        memcpy(tmp, "\\u00", 4);
        tmp[4] = digits[ch >> 4];
        tmp[5] = digits[ch & 15];
        tmp[6] = 0;
    } else {
        tmp[0] = (char)ch;
        tmp[1] = 0;
    }
    return tmp;
}

/* The length of the UTF-8 sequence at s (1 to 4 bytes), or 0 where none starts: a stray
 * continuation byte, a sequence cut short, an overlong form, a surrogate, past U+10FFFF. */
static size_t utf8_seq(const unsigned char *s)
{
    if (s[0] < 0x80)
        return 1;
    size_t n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
    if (!n || s[0] > 0xf4)
        return 0;
    uint32_t cp = s[0] & (0x7fu >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    return cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? 0 : n;
}

bool skp_utf8_valid(const char *s)
{
    for (size_t n; *s; s += n)
        if (!(n = utf8_seq((const unsigned char *)s)))
            return false;
    return true;
}

size_t skp_json_quote(char *buf, size_t cap, const char *s)
{
    size_t len = 0;
    char tmp[8];
    if (cap > 1)
        buf[0] = '"';
    len++;
    for (size_t n; *s; s += n) {
        n = utf8_seq((const unsigned char *)s);
        const char *p = json_escape((unsigned char)*s, tmp);
        if (n > 1) { /* copied as it is */
            memcpy(tmp, s, n);
            tmp[n] = 0;
        } else if (!n) { /* JSON is UTF-8: a byte that is not becomes U+FFFD */
            p = "\\ufffd";
            n = 1;
        }
        for (; *p; p++, len++)
            if (len + 1 < cap)
                buf[len] = *p;
    }
    if (len + 1 < cap)
        buf[len] = '"';
    len++;
    if (cap)
        buf[len < cap ? len : cap - 1] = 0;
    return len;
}

char *skp_json_quoted(const char *s, char *small, size_t cap)
{
    size_t n = skp_json_quote(small, cap, s);
    if (n < cap)
        return small;
    char *buf = malloc(n + 1);
    if (buf)
        skp_json_quote(buf, n + 1, s);
    return buf;
}

size_t skp_cli_progress(char *buf, size_t cap, long done, long total)
{
    int width = 40, fill = total > 0 ? (int)(done * width / total) : width;
    int n = snprintf(buf, cap, "\r[%.*s%*s] %ld/%ld%s", fill,
                     "########################################", width - fill, "", done, total,
                     done == total ? "\n" : "");
    return n > 0 ? (size_t)n : 0;
}

/* ---- render flags ------------------------------------------------------------------------ */

#define FAIL(...) (snprintf(msg, cap, __VA_ARGS__), -1)

/* "AsepB" with each part a whole number that fits a u32. */
static int u32_pair(const char *s, char sep, uint32_t *a, uint32_t *b)
{
    long x, y;
    if (skp_cli_pair(s, sep, &x, &y) || x < 0 || y < 0 || x > UINT32_MAX || y > UINT32_MAX)
        return -1;
    *a = (uint32_t)x;
    *b = (uint32_t)y;
    return 0;
}

int skp_cli_whole(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    if (!whole_at(s))
        return SKP_CLI_NOT_WHOLE;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end)
        return SKP_CLI_NOT_WHOLE;
    if (errno == ERANGE || v < lo || v > hi)
        return SKP_CLI_OUT_OF_RANGE;
    *out = v;
    return 0;
}

static int whole_number(const char *s, long lo, long hi, long *out)
{
    long long v;
    if (skp_cli_whole(s, lo, hi, &v))
        return -1;
    *out = (long)v;
    return 0;
}

static int render_camera(struct skp_cli_args *a, struct skp_cli_render *r, char *msg, size_t cap)
{
    char **v = a->value;
    if (v[SKP_CLI_SCALE] && v[SKP_CLI_FIT])
        return FAIL("--scale and --fit exclude each other");
    if (!v[SKP_CLI_SCALE]) {
        if (v[SKP_CLI_POSITION])
            return FAIL("--position needs --scale");
        if (v[SKP_CLI_FIT] && skp_cli_numbers(v[SKP_CLI_FIT], &r->fraction, 1) != 1)
            return FAIL("--fit: expected a fraction of the canvas such as 0.9, got \"%s\"",
                        v[SKP_CLI_FIT]);
        return 0;
    }
    r->fit = false;
    r->position[0] = r->width / 2.0;
    r->position[1] = -(r->height / 2.0);
    if (skp_cli_vec2(v[SKP_CLI_SCALE], r->scale))
        return FAIL("--scale: expected S or SX,SY");
    if (v[SKP_CLI_POSITION] && skp_cli_vec2(v[SKP_CLI_POSITION], r->position))
        return FAIL("--position: expected X,Y");
    return 0;
}

static int render_canvas(struct skp_cli_args *a, struct skp_cli_render *r, char *msg, size_t cap)
{
    char **v = a->value;
    long n;
    if (v[SKP_CLI_SIZE] && u32_pair(v[SKP_CLI_SIZE], 'x', &r->width, &r->height))
        return FAIL("--size: expected WxH, got \"%s\"", v[SKP_CLI_SIZE]);
    if (v[SKP_CLI_SAMPLES] && whole_number(v[SKP_CLI_SAMPLES], 0, 255, &n))
        return FAIL("--samples: expected 1 or 4, got \"%s\"", v[SKP_CLI_SAMPLES]);
    if (v[SKP_CLI_SAMPLES])
        r->samples = (uint32_t)n;
    if (v[SKP_CLI_BACKGROUND] && skp_cli_color(v[SKP_CLI_BACKGROUND], r->background))
        return FAIL("--background: expected RRGGBB or RRGGBBAA in hex, got \"%s\"",
                    v[SKP_CLI_BACKGROUND]);
    const char *sv = v[SKP_CLI_STYLE];
    /* strtok below would pass over an empty name; --anim refuses one, and so does this */
    if (sv && (*sv == ',' || strstr(sv, ",,") || (*sv && sv[strlen(sv) - 1] == ',')))
        return FAIL("--style: an empty style name in \"%s\"", sv);
    for (char *t = v[SKP_CLI_STYLE] ? strtok(v[SKP_CLI_STYLE], ",") : NULL; t;
         t = strtok(NULL, ",")) {
        if (r->style_count == SKP_MAX_STYLES)
            return FAIL("--style: at most %d styles", SKP_MAX_STYLES);
        if (strlen(t) > SKP_MAX_NAME)
            return FAIL("--style: a name is at most %d bytes (give a longer one's index)",
                        SKP_MAX_NAME);
        r->styles[r->style_count++] = t;
    }
    if (v[SKP_CLI_STYLE] && !r->style_count)
        return FAIL("--style: expected style names or indices separated by commas");
    return 0;
}

static int render_output(struct skp_cli_args *a, struct skp_cli_render *r, char *msg, size_t cap)
{
    char **v = a->value;
    long n;
    if (v[SKP_CLI_FRAMES] && v[SKP_CLI_FRAME])
        return FAIL("--frames and --frame exclude each other");
    if (v[SKP_CLI_FRAMES] && u32_pair(v[SKP_CLI_FRAMES], '-', &r->first, &r->last))
        return FAIL("--frames: expected F0-F1, got \"%s\"", v[SKP_CLI_FRAMES]);
    r->range = v[SKP_CLI_FRAMES] != NULL;
    if (v[SKP_CLI_SHEET] && u32_pair(v[SKP_CLI_SHEET], 'x', &r->cols, &r->rows))
        return FAIL("--sheet: expected COLSxROWS, got \"%s\"", v[SKP_CLI_SHEET]);
    /* 0x0 is the wire's "no sheet": given, it would be dropped without a word */
    if (v[SKP_CLI_SHEET] && (!r->cols || !r->rows || r->cols > 65535 || r->rows > 65535))
        return FAIL("--sheet: columns and rows are 1 to 65535 each, got \"%s\"", v[SKP_CLI_SHEET]);
    const char *level = v[SKP_CLI_PNG_LEVEL];
    /* "fast" names the default encoder now (it was a faster, larger one): parsed as
     * "default", so the two make one request, one ETag and one cached answer. */
    if (level && strcmp(level, "default") != 0 && strcmp(level, "fast") != 0) {
        if (whole_number(level, 0, 9, &n))
            return FAIL("--png-level: expected default, fast or 0..9, got \"%s\"", level);
        r->png_level = (int)n;
    }
    r->output = v[SKP_CLI_OUTPUT];
    return 0;
}

int skp_cli_render_output(const struct skp_cli_render *r, char *msg, size_t cap)
{
    if (!r->output)
        return FAIL("-o OUT.png is required");
    if ((r->cols || r->rows) && !strcmp(r->output, "-"))
        return FAIL("--sheet writes OUT.png and OUT.json: -o needs a file name");
    if (r->cols || r->rows) { /* refused before anything is drawn or written */
        char path[SKP_CLI_PATH_MAX];
        const char *base = strrchr(r->output, '/');
        if (skp_cli_sheet_json_path(path, sizeof path, r->output))
            return FAIL("-o: the file name is too long");
        if (!skp_utf8_valid(base ? base + 1 : r->output))
            return FAIL("--sheet: OUT.json names the picture, and JSON is UTF-8: -o's file name "
                        "is not");
    }
    if (!r->cols && !r->rows && r->range && r->last > r->first && !skp_cli_frame_pattern(r->output))
        return FAIL("-o: a frame range needs a pattern with one %%d, such as out_%%04d.png");
    return 0;
}

int skp_cli_render_parse(struct skp_cli_args *a, struct skp_cli_render *r, char *msg, size_t cap)
{
    memset(r, 0, sizeof *r);
    r->width = r->height = 512;
    r->fit = true;
    r->fraction = 0.9;
    r->scale[0] = r->scale[1] = 1.0;
    r->samples = 4;
    r->png_level = SKP_CLI_PNG_DEFAULT;
    if (render_canvas(a, r, msg, cap) || render_camera(a, r, msg, cap) ||
        render_output(a, r, msg, cap))
        return -1;
    return 0;
}

/* ---- URL queries --------------------------------------------------------------------------- */

static int hex_digit(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* Percent-decoding in place, '+' a space in queries only; false on a malformed escape or a
 * NUL. */
static bool decode(char *s, bool query)
{
    char *out = s;
    for (; *s; s++) {
        if (*s == '%') {
            int hi = hex_digit(s[1]), lo = hi < 0 ? -1 : hex_digit(s[2]);
            if (lo < 0 || (hi == 0 && lo == 0))
                return false;
            *out++ = (char)(hi * 16 + lo);
            s += 2;
        } else {
            *out++ = query && *s == '+' ? ' ' : *s;
        }
    }
    *out = 0;
    return true;
}

static bool url_decode(char *s)
{
    return decode(s, true);
}

bool skp_cli_path_decode(char *s)
{
    return decode(s, false);
}

static int flag_by_name(const char *name)
{
    for (int f = 0; f < SKP_CLI_NFLAGS; f++)
        if (flags[f].query && !strcmp(flags[f].name, name))
            return f;
    return -1;
}

int skp_cli_query(char *query, uint32_t allowed, struct skp_cli_args *a, char *msg, size_t cap)
{
    memset(a, 0, sizeof *a);
    char *save = NULL;
    for (char *pair = query ? strtok_r(query, "&", &save) : NULL; pair;
         pair = strtok_r(NULL, "&", &save)) {
        char *eq = strchr(pair, '=');
        char *value = eq ? eq + 1 : NULL;
        if (eq)
            *eq = 0;
        if (!url_decode(pair) || (value && !url_decode(value)))
            return FAIL("malformed percent-encoding in the query");
        int f = flag_by_name(pair);
        if (f < 0)
            return FAIL("unknown parameter \"%.64s\"", pair);
        if (!(allowed & SKP_CLI_BIT(f)))
            return FAIL("parameter \"%s\" does not apply to this resource", flags[f].name);
        if (given_twice(a, f, true, msg, cap))
            return -1;
        if (!flags[f].value) { /* a switch */
            if (value && strcmp(value, "") && strcmp(value, "1") && strcmp(value, "true"))
                return FAIL("parameter \"%s\" is a switch: give it no value, 1 or true",
                            flags[f].name);
            a->value[f] = (char *)"";
        } else {
            if (!value || !*value)
                return FAIL("parameter \"%s\" needs a value", flags[f].name);
            a->value[f] = value;
        }
    }
    return 0;
}

/* ---- as the wire's messages ---------------------------------------------------------------- */

void skp_cli_eval_req(const struct skp_cli_eval *e, struct skp_eval_req *m)
{
    skp_eval_req_init(m);
    m->flags = (uint16_t)((e->loop ? SKP_EVAL_LOOP : 0) | (e->reverse ? SKP_EVAL_REVERSE : 0) |
                          (e->has_from ? SKP_EVAL_FROM : 0) | (e->y_down ? SKP_EVAL_Y_DOWN : 0));
    m->anim_count = (uint8_t)e->count;
    for (unsigned i = 0; i < e->count; i++)
        m->anims[i] =
            (struct skp_anim_ref){{e->anims[i], strlen(e->anims[i])}, e->frames[i], e->smooth[i]};
    m->from = e->from;
    /* The request model judges the warm-up; one past the wire's range says "too many". */
    m->warmup = e->warmup < 0 || e->warmup > UINT32_MAX ? UINT32_MAX : (uint32_t)e->warmup;
    memcpy(m->position, e->position, sizeof m->position);
    memcpy(m->scale, e->scale, sizeof m->scale);
    memcpy(m->velocity, e->velocity, sizeof m->velocity);
}

uint8_t skp_cli_png_wire(int level)
{
    return level < 0 ? SKP_PNG_DEFAULT : (uint8_t)level;
}

int skp_cli_render_req(const struct skp_cli_render *r, struct skp_render_req *m, char *msg,
                       size_t cap)
{
    /* what render_parse refuses already, for callers that fill r themselves */
    if (r->samples > 255)
        return FAIL("--samples: %u is out of range", r->samples);
    if (r->cols > 65535 || r->rows > 65535)
        return FAIL("--sheet: %ux%u is out of range (1 to 65535 each)", r->cols, r->rows);
    if (r->png_level > 9)
        return FAIL("--png-level: %d is out of range (0..9)", r->png_level);
    skp_render_req_init(m);
    m->width = r->width;
    m->height = r->height;
    memcpy(m->background, r->background, 4);
    m->camera = r->fit ? SKP_CAMERA_FIT : SKP_CAMERA_EXPLICIT;
    m->fit = r->fraction;
    memcpy(m->scale, r->scale, sizeof m->scale);
    memcpy(m->position, r->position, sizeof m->position);
    m->style_count = (uint8_t)r->style_count;
    for (unsigned i = 0; i < r->style_count; i++)
        m->styles[i] = (struct skp_str){r->styles[i], strlen(r->styles[i])};
    m->samples = (uint8_t)r->samples;
    m->png_level = skp_cli_png_wire(r->png_level);
    m->first = r->first;
    m->last = r->last;
    m->cols = (uint16_t)r->cols;
    m->rows = (uint16_t)r->rows;
    return 0;
}
