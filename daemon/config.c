#include "autoconfig.h"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <uv.h>

#include "log.h"
#include "skp_cli.h"
#include "skp_msg.h"

enum opt_type { OPT_INT, OPT_STR, OPT_LIST };

struct option {
    const char *name;
    enum opt_type type;
    size_t offset;
    int64_t min, max;
    const char *def; /* default as text (NULL: none) */
    const char *help;
};

#define F(field) offsetof(struct config, field)

static const struct option options[] = {
    {"listen", OPT_LIST, F(listen), 0, 0, NULL,
     "listen on URI (unix:/path, tcp://host:port for the binary protocol, http://host:port for "
     "HTTP; repeatable; default tcp://127.0.0.1:7878 and http://127.0.0.1:8080)"},
    {"root", OPT_STR, F(root), 0, 0, NULL,
     "directory LOAD by path is confined to (none: LOAD by path is refused)"},
    {"preload", OPT_STR, F(preload), 0, 0, NULL, "load every .skf in this directory at start"},
    {"auth-token", OPT_STR, F(auth_token), 0, 0, NULL,
     "require HELLO with this token before anything but HELLO/PING"},
    {"cors-origin", OPT_STR, F(cors_origin), 0, 0, NULL,
     "HTTP: the origin browsers may call from (Access-Control-Allow-Origin)"},
    {"log-level", OPT_STR, F(log_level), 0, 0, "info", "error, warn, info or debug"},
    {"log-file", OPT_STR, F(log_file), 0, 0, NULL,
     "append the log to this file instead of stderr (reopened on SIGHUP, for logrotate)"},
    {"node-name", OPT_STR, F(node_name), 0, 0, NULL,
     "this node's name behind a load balancer: HTTP answers carry it in X-Skeld-Node and "
     "/metrics in skeld_node_info (1-64 of A-Z a-z 0-9 . _ -; default: the host name)"},
    {"threads", OPT_INT, F(threads), 1, 256, NULL, "evaluation worker threads (default: cores)"},
    {"queue-depth", OPT_INT, F(queue_depth), 1, 1 << 20, "1024",
     "queued jobs before requests get BUSY"},
    {"cache-mb", OPT_INT, F(cache_mb), 1, 1 << 20, "512", "armature cache budget in MiB"},
    {"result-cache-mb", OPT_INT, F(result_cache_mb), 0, 1 << 20, "64",
     "cache of encoded answers (renders, poses) in MiB; 0 turns it off"},
    {"max-frame", OPT_INT, F(max_frame), 1024, 64 << 20, "67108864",
     "largest binary-protocol request body (HTTP: max-skf-mb)"},
    {"max-connections", OPT_INT, F(max_connections), 1, 1 << 20, "1024", "open connections"},
    {"max-inflight", OPT_INT, F(max_inflight), 1, 1 << 16, "64",
     "requests in progress per connection before reading pauses"},
    {"out-high-water", OPT_INT, F(out_high_water), 1024, (int64_t)1 << 32, "16777216",
     "queued reply bytes per connection that pause reading"},
    {"out-low-water", OPT_INT, F(out_low_water), 0, (int64_t)1 << 32, "4194304",
     "queued reply bytes below which reading resumes"},
    {"max-image-pixels", OPT_INT, F(max_image_pixels), 1, (int64_t)1 << 30, "16777216",
     "largest picture a RENDER may ask for"},
    {"max-skf-mb", OPT_INT, F(max_skf_mb), 1, 4096, "64", "largest .skf file, MiB"},
    {"max-json-mb", OPT_INT, F(max_json_mb), 1, 1024, "16",
     "largest armature.json inside a .skf, MiB (bounds a parse's memory)"},
    {"max-bones", OPT_INT, F(max_bones), 1, 1 << 20, "10000", "most bones an armature may have"},
    {"max-bone-steps", OPT_INT, F(max_bone_steps), 1000, (int64_t)1 << 40, "100000000",
     "work one request may ask for: (warm-up + steps) x bones, plus drawing"},
    {"idle-timeout", OPT_INT, F(idle_timeout), 0, 86400 * 7, "300",
     "seconds before an idle connection is closed (0: never)"},
    {"frame-timeout", OPT_INT, F(frame_timeout), 1, 86400, "60",
     "seconds a frame may take from its first byte to its last"},
    {"drain-grace", OPT_INT, F(drain_grace), 0, 3600, "0",
     "seconds SIGTERM keeps serving with /readyz answering 503 before draining, so a load "
     "balancer's health check takes the node out first (SIGINT drains at once)"},
    {"max-input-mb", OPT_INT, F(max_input_mb), 1, 1 << 20, "1024",
     "input buffered for partly received frames, over all connections, MiB"},
    {"max-instance-mb", OPT_INT, F(max_instance_mb), 1, 1 << 20, "1024",
     "memory the instances of all connections may hold, MiB (INSTANCE_NEW past it: LIMIT)"},
    {"file-settle-ms", OPT_INT, F(file_settle_ms), -1, 86400000, "3000",
     "LOAD by path: a file unchanged this long before it was read is opened but not read "
     "again while it keeps its inode, size and times (-1: always read)"},
};

#define NOPTS (sizeof options / sizeof options[0])
_Static_assert(NOPTS <= CONFIG_MAX_OPTIONS, "struct config's where[] holds every option");

/* Where option o was set, as messages begin: "FILE:LINE: " or "--". */
static const char *origin(const struct config *c, const struct option *o)
{
    const char *w = c->where[o - options];
    return w ? w : "--";
}

/* Remembers where option o (for --listen: the listener just added) was set: "--" is kept
 * as NULL. */
static void note_where(struct config *c, const struct option *o, const char *where)
{
    char *copy = strcmp(where, "--") ? strdup(where) : NULL;
    char **slot =
        o->type == OPT_LIST ? &c->listen_where[c->listen_count - 1] : &c->where[o - options];
    free(*slot);
    *slot = copy;
}

static const struct option *find(const char *name, size_t len)
{
    for (size_t i = 0; i < NOPTS; i++)
        if (strlen(options[i].name) == len && !strncmp(options[i].name, name, len))
            return &options[i];
    return NULL;
}

/* Sets option o from its text. where says where the value came from in messages: "--" for
 * the command line, "FILE:LINE: " for a config file. 0, or -1 after printing the problem. */
static int set(struct config *c, const struct option *o, const char *value, const char *where,
               FILE *err)
{
    void *field = (char *)c + o->offset;
    if (o->type == OPT_INT) {
        long long v;
        int rc = skp_cli_whole(value, o->min, o->max, &v);
        if (rc == SKP_CLI_NOT_WHOLE) {
            fprintf(err,
                    "skeld: %s%s: \"%s\" is not a number (expected a whole number in "
                    "%lld..%lld)\n",
                    where, o->name, value, (long long)o->min, (long long)o->max);
            return -1;
        }
        if (rc) {
            fprintf(err, "skeld: %s%s: %s is out of range (expected %lld..%lld)\n", where, o->name,
                    value, (long long)o->min, (long long)o->max);
            return -1;
        }
        *(int64_t *)field = v;
        note_where(c, o, where);
        return 0;
    }
    char *copy = strdup(value);
    if (!copy)
        return -1;
    if (o->type == OPT_STR) {
        free(*(char **)field);
        *(char **)field = copy;
        note_where(c, o, where);
        return 0;
    }
    if (c->listen_count == CONFIG_MAX_LISTEN) {
        fprintf(err, "skeld: %s%s: at most %d\n", where, o->name, CONFIG_MAX_LISTEN);
        free(copy);
        return -1;
    }
    c->listen[c->listen_count++] = copy;
    note_where(c, o, where);
    return 0;
}

void config_init(struct config *c, int cores)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < NOPTS; i++)
        if (options[i].def)
            set(c, &options[i], options[i].def, "--", stderr);
    c->threads = cores > 0 ? cores : 1;
}

void config_free(struct config *c)
{
    for (int i = 0; i < c->listen_count; i++)
        free(c->listen[i]);
    free(c->root);
    free(c->preload);
    free(c->auth_token);
    free(c->cors_origin);
    free(c->log_level);
    free(c->log_file);
    free(c->node_name);
    for (int i = 0; i < CONFIG_MAX_OPTIONS; i++)
        free(c->where[i]);
    for (int i = 0; i < CONFIG_MAX_LISTEN; i++)
        free(c->listen_where[i]);
    memset(c, 0, sizeof *c);
}

/* A configuration file is small text: anything larger is not one. */
#define CONFIG_FILE_MAX (1 << 20)

/* The whole of the file at path, NUL-terminated: a regular file, opened without waiting (a
 * FIFO would block the loop thread on SIGHUP, /dev/zero never end). 0, or -1 after saying
 * why. */
static int read_config_file(const char *path, char **text, size_t *len, FILE *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    const char *why = NULL;
    if (fd < 0 || fstat(fd, &st))
        why = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        why = S_ISDIR(st.st_mode) ? "a directory, not a configuration file"
                                  : "not a regular file (a configuration file is one)";
    else if (st.st_size > CONFIG_FILE_MAX)
        why = "larger than 1 MiB: not a configuration file";
    char *buf = why ? NULL : malloc(CONFIG_FILE_MAX + 1);
    size_t got = 0;
    if (!why && !buf)
        why = "out of memory";
    while (!why) { /* to its end, which a file still growing may move */
        ssize_t n = read(fd, buf + got, CONFIG_FILE_MAX + 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            why = strerror(errno);
        else if (n == 0)
            break;
        else if ((got += (size_t)n) > CONFIG_FILE_MAX)
            why = "larger than 1 MiB: not a configuration file";
    }
    if (fd >= 0)
        close(fd);
    if (why) {
        fprintf(err, "skeld: %s: %s\n", path, why);
        free(buf);
        return -1;
    }
    buf[got] = 0;
    *text = buf;
    *len = got;
    return 0;
}

/* One "key = value" line (its end cut off already) of file path, at lineno. seen_at: the line
 * each key was given on so far (0: not yet), so that a key given twice is refused, as a flag
 * given twice is, never read as its last line. */
static int config_line(struct config *c, char *line, const char *path, int lineno, int *seen_at,
                       FILE *err)
{
    char *p = line + strspn(line, " \t");
    p[strcspn(p, "#\r")] = 0;
    if (!*p)
        return 0;
    char *eq = strchr(p, '=');
    size_t nlen = eq ? (size_t)(eq - p) : strlen(p);
    while (nlen && (p[nlen - 1] == ' ' || p[nlen - 1] == '\t'))
        nlen--;
    const struct option *o = find(p, nlen);
    if (!eq) {
        fprintf(err, "skeld: %s:%d: expected \"key = value\"\n", path, lineno);
        return -1;
    }
    if (!o) { /* shown as printable ASCII, cut short: it may be anything */
        char q[48];
        size_t n = nlen < sizeof q - 4 ? nlen : sizeof q - 4;
        for (size_t i = 0; i < n; i++)
            q[i] = p[i] > ' ' && p[i] < 0x7f ? p[i] : '?';
        strcpy(q + n, n < nlen ? "..." : "");
        fprintf(err, "skeld: %s:%d: unknown key \"%s\"\n", path, lineno, q);
        return -1;
    }
    int *seen = &seen_at[o - options];
    if (o->type != OPT_LIST && *seen) {
        fprintf(err, "skeld: %s:%d: \"%s\" given twice (first on line %d)\n", path, lineno, o->name,
                *seen);
        return -1;
    }
    *seen = lineno;
    char *v = eq + 1 + strspn(eq + 1, " \t");
    size_t vlen = strlen(v);
    while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
        v[--vlen] = 0;
    size_t cap = strlen(path) + 32;
    char *where = malloc(cap);
    if (!where)
        return -1;
    snprintf(where, cap, "%s:%d: ", path, lineno);
    int rc = set(c, o, v, where, err);
    free(where);
    return rc;
}

int config_load_file(struct config *c, const char *path, FILE *err)
{
    char *text;
    size_t len;
    if (read_config_file(path, &text, &len, err))
        return -1;
    char *p = text, *end = text + len;
    if (len >= 3 && !memcmp(p, "\xef\xbb\xbf", 3)) /* a UTF-8 byte order mark */
        p += 3;
    int rc = 0, seen_at[NOPTS] = {0};
    for (int lineno = 1; !rc && p < end; lineno++) {
        char *nl = memchr(p, '\n', (size_t)(end - p)), *stop = nl ? nl : end;
        if (memchr(p, 0, (size_t)(stop - p))) {
            fprintf(err, "skeld: %s:%d: holds a NUL byte: not a text line\n", path, lineno);
            rc = -1;
            break;
        }
        *stop = 0;
        rc = config_line(c, p, path, lineno, seen_at, err);
        p = stop + 1;
    }
    free(text);
    return rc;
}

void config_print_help(FILE *out)
{
    fprintf(out, "usage: skeld [serve] [--config FILE] [--option=value ...]\n\noptions:\n");
    for (size_t i = 0; i < NOPTS; i++) {
        const struct option *o = &options[i];
        char range[64] = "";
        if (o->type == OPT_INT)
            snprintf(range, sizeof range, " (%lld..%lld)", (long long)o->min, (long long)o->max);
        fprintf(out, "  --%-18s %s%s%s%s%s\n", o->name, o->help, range, o->def ? " [" : "",
                o->def ? o->def : "", o->def ? "]" : "");
    }
    fprintf(out, "  --%-18s %s\n", "config", "read options from FILE (name = value lines)");
    fprintf(out, "  --%-18s %s\n", "help", "print this help and exit");
    fprintf(out, "  --%-18s %s\n", "version", "print the version and exit");
    fprintf(out, "\nexit status: 0 after a clean stop, 1 if serving failed (startup, an unclean "
                 "close),\n2 for bad options or a bad config file\n");
}

int config_parse_args(struct config *c, int argc, char **argv, int first, FILE *err)
{
    /* The options given on this command line, by their place in the table, and --config: a
     * flag given twice is refused, as every command's is, never read as the last one. */
    uint64_t given = 0;
    bool config_given = false;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            config_print_help(stdout);
            return 1;
        }
        if (!strcmp(a, "--version")) {
            puts(PACKAGE_STRING);
            return 1;
        }
        if (strncmp(a, "--", 2) != 0) {
            fprintf(err, "skeld: unexpected argument \"%s\" (see --help)\n", a);
            return -1;
        }
        const char *name = a + 2, *eq = strchr(name, '=');
        size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        const char *value = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (nlen == 6 && !strncmp(name, "config", 6)) {
            if (!value)
                fprintf(err, "skeld: --config needs a value\n");
            else if (config_given)
                fprintf(err, "skeld: --config given twice\n");
            if (!value || config_given || config_load_file(c, value, err))
                return -1;
            config_given = true;
            continue;
        }
        const struct option *o = find(name, nlen);
        if (!o) {
            fprintf(err, "skeld: unknown option \"%s\" (see --help)\n", a);
            return -1;
        }
        if (!value) {
            fprintf(err, "skeld: --%s needs a value\n", o->name);
            return -1;
        }
        uint64_t bit = (uint64_t)1 << (o - options);
        if (o->type != OPT_LIST && (given & bit)) {
            fprintf(err, "skeld: --%s given twice\n", o->name);
            return -1;
        }
        given |= bit;
        if (set(c, o, value, "--", err))
            return -1;
    }
    return 0;
}

/* A node name goes verbatim into a response header, a Prometheus label and the HELLO
 * reply's server name: a short word of characters that need no quoting in any. */
static bool valid_node_name(const char *s)
{
    return skp_node_name_valid(s, strlen(s));
}

/* No --node-name: the host name (cut to its first label if the whole does not fit), or
 * "skeld" on a host without one. */
static int default_node_name(struct config *c, FILE *err)
{
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) || !host[0])
        strcpy(host, "skeld");
    if (!valid_node_name(host))
        host[strcspn(host, ".")] = 0;
    return set(c, find("node-name", 9), valid_node_name(host) ? host : "skeld", "--", err);
}

/* An origin goes verbatim into every HTTP answer's headers: visible ASCII (no CR or LF to
 * split them), and short enough that the headers it joins always fit (api.c). A scheme,
 * a host name of 253 and a port fit. */
#define CORS_ORIGIN_MAX 270

static bool valid_origin(const char *s)
{
    size_t len = strlen(s);
    for (size_t i = 0; i < len; i++)
        if (s[i] <= ' ' || s[i] > '~')
            return false;
    return len > 0 && len <= CORS_ORIGIN_MAX;
}

/* The option named name in the table. */
static const struct option *option_named(const char *name)
{
    return find(name, strlen(name));
}

/* A string option given empty, which would mean none or nothing: refused, so that
 * "auth-token =" never opens a daemon meant to be closed. */
static int check_not_empty(const struct config *c, const char *name, FILE *err)
{
    const struct option *o = option_named(name);
    const char *v = *(char *const *)(const void *)((const char *)c + o->offset);
    if (v && !*v) {
        fprintf(err, "skeld: %s%s: empty (leave the option out for none)\n", origin(c, o), o->name);
        return -1;
    }
    return 0;
}

/* Listener i: unix:PATH (a path a socket address holds: 1 to 107 bytes), tcp:// or
 * http:// with an IP address and a port. */
static int check_listener(const struct config *c, int i, FILE *err)
{
    const char *u = c->listen[i], *at = c->listen_where[i] ? c->listen_where[i] : "--";
    struct sockaddr_storage addr;
    if (!strncmp(u, "unix:", 5)) {
        size_t len = strlen(u + 5), most = sizeof(((struct sockaddr_un *)NULL)->sun_path) - 1;
        if (len == 0 || len > most) {
            fprintf(err, "skeld: %slisten %s: a unix socket's path is 1 to %zu bytes, not %zu\n",
                    at, u, most, len);
            return -1;
        }
        return 0;
    }
    if (strncmp(u, "tcp://", 6) && strncmp(u, "http://", 7)) {
        fprintf(err,
                "skeld: %slisten %s: expected unix:/path, tcp://HOST:PORT or http://HOST:PORT\n",
                at, u);
        return -1;
    }
    if (config_listen_addr(strstr(u, "//") + 2, &addr)) {
        fprintf(err,
                "skeld: %slisten %s: HOST must be an IP address (127.0.0.1, 0.0.0.0, [::1], "
                "[::]) and PORT a number from 0 (any free one) to 65535\n",
                at, u);
        return -1;
    }
    return 0;
}

/* The address of a tcp:// or http:// listener; -1 for a unix one (or one config_check
 * refuses). */
static int listener_addr(const struct config *c, int i, struct sockaddr_storage *addr)
{
    const char *u = c->listen[i];
    return strncmp(u, "unix:", 5) && strstr(u, "//") ? config_listen_addr(strstr(u, "//") + 2, addr)
                                                     : -1;
}

/* An address's port (network order), of either family. */
static in_port_t port_of(const struct sockaddr_storage *a)
{
    return a->ss_family == AF_INET ? ((const struct sockaddr_in *)(const void *)a)->sin_port
                                   : ((const struct sockaddr_in6 *)(const void *)a)->sin6_port;
}

/* Whether listeners i and j (both valid) name one address: one unix path, or one IP address
 * and port (tcp:// and http:// alike; port 0, any free one, never clashes). The second would
 * fail the start at bind, after the first had printed that it listens. */
static bool same_listener(const struct config *c, int i, int j)
{
    const char *a = c->listen[i], *b = c->listen[j];
    bool unix_a = !strncmp(a, "unix:", 5), unix_b = !strncmp(b, "unix:", 5);
    if (unix_a || unix_b)
        return unix_a && unix_b && !strcmp(a + 5, b + 5);
    struct sockaddr_storage x, y;
    if (listener_addr(c, i, &x) || listener_addr(c, j, &y) || x.ss_family != y.ss_family ||
        !port_of(&x) || port_of(&x) != port_of(&y))
        return false;
    if (x.ss_family == AF_INET)
        return ((const struct sockaddr_in *)(const void *)&x)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)(const void *)&y)->sin_addr.s_addr;
    return !memcmp(&((const struct sockaddr_in6 *)(const void *)&x)->sin6_addr,
                   &((const struct sockaddr_in6 *)(const void *)&y)->sin6_addr,
                   sizeof(struct in6_addr));
}

bool config_listen_v6only(const struct config *c, int i)
{
    struct sockaddr_storage me, other;
    if (listener_addr(c, i, &me) || me.ss_family != AF_INET6 || !port_of(&me))
        return false;
    for (int j = 0; j < c->listen_count; j++)
        if (j != i && !listener_addr(c, j, &other) && other.ss_family == AF_INET &&
            port_of(&other) == port_of(&me))
            return true;
    return false;
}

/* Listener i again: no earlier one names its address. */
static int check_listener_once(const struct config *c, int i, FILE *err)
{
    for (int j = 0; j < i; j++)
        if (same_listener(c, i, j)) {
            fprintf(err, "skeld: %slisten %s: the same address as %slisten %s\n",
                    c->listen_where[i] ? c->listen_where[i] : "--", c->listen[i],
                    c->listen_where[j] ? c->listen_where[j] : "--", c->listen[j]);
            return -1;
        }
    return 0;
}

int config_check(struct config *c, FILE *err)
{
    if (!c->node_name && default_node_name(c, err))
        return -1;
    if (!valid_node_name(c->node_name)) {
        fprintf(err, "skeld: %snode-name \"%s\": expected 1 to 64 of A-Z a-z 0-9 . _ -\n",
                origin(c, option_named("node-name")), c->node_name);
        return -1;
    }
    if (c->cors_origin && !valid_origin(c->cors_origin)) {
        fprintf(err,
                "skeld: %scors-origin: expected an origin (https://host[:port]) or *: 1 to %d "
                "visible ASCII characters\n",
                origin(c, option_named("cors-origin")), CORS_ORIGIN_MAX);
        return -1;
    }
    if (log_parse_level(c->log_level) < 0) {
        fprintf(err, "skeld: %slog-level \"%s\": expected error, warn, info or debug\n",
                origin(c, option_named("log-level")), c->log_level);
        return -1;
    }
    if (check_not_empty(c, "root", err) || check_not_empty(c, "preload", err) ||
        check_not_empty(c, "auth-token", err) || check_not_empty(c, "log-file", err))
        return -1;
    if (c->out_low_water >= c->out_high_water) {
        fprintf(err, "skeld: %sout-low-water must be below --out-high-water\n",
                origin(c, option_named("out-low-water")));
        return -1;
    }
    /* No listener given: the binary protocol and HTTP, both on the loopback interface. */
    if (c->listen_count == 0 && (set(c, &options[0], "tcp://127.0.0.1:7878", "--", err) ||
                                 set(c, &options[0], "http://127.0.0.1:8080", "--", err)))
        return -1;
    for (int i = 0; i < c->listen_count; i++)
        if (check_listener(c, i, err) || check_listener_once(c, i, err))
            return -1;
    return 0;
}

bool config_token_ok(const struct config *c, const char *got, size_t got_len)
{
    const char *want = c->auth_token;
    if (!want || !*want)
        return true;
    /* No early exit on the first difference: the time says nothing of the token. */
    size_t want_len = strlen(want);
    unsigned diff = (unsigned)(want_len ^ got_len);
    for (size_t i = 0; i < want_len; i++)
        diff |= (unsigned char)want[i] ^ (unsigned char)(i < got_len ? got[i] : 0);
    return diff == 0;
}

int config_listen_addr(const char *hostport, struct sockaddr_storage *addr)
{
    char host[INET6_ADDRSTRLEN + 2 + 16]; /* [v6%zone] */
    const char *colon = strrchr(hostport, ':'), *port = colon ? colon + 1 : "";
    size_t hl = colon ? (size_t)(colon - hostport) : 0, pl = strlen(port);
    if (!hl || hl >= sizeof host || !pl || pl > 5 || strspn(port, "0123456789") != pl)
        return -1;
    long p = strtol(port, NULL, 10);
    if (p > 65535)
        return -1;
    memcpy(host, hostport, hl);
    host[hl] = 0;
    memset(addr, 0, sizeof *addr);
    if (host[0] == '[' && host[hl - 1] == ']') { /* [::1], or [fe80::1%eth0] with its zone */
        host[hl - 1] = 0;
        return uv_ip6_addr(host + 1, (int)p, (struct sockaddr_in6 *)addr) ? -1 : 0;
    }
    return uv_ip4_addr(host, (int)p, (struct sockaddr_in *)addr) ? -1 : 0;
}

/* What a running daemon takes from a reloaded configuration (SIGHUP): the log level, the
 * auth token, the CORS origin and the per-request and per-connection limits. The rest
 * (listeners, root, threads, cache sizes, queue depth) shapes what was built at start. */
static bool live_option(const char *name)
{
    static const char *const live[] = {
        "log-level",    "auth-token",      "cors-origin",    "max-frame",        "max-connections",
        "max-inflight", "out-high-water",  "out-low-water",  "max-image-pixels", "max-skf-mb",
        "max-json-mb",  "max-bones",       "max-bone-steps", "idle-timeout",     "frame-timeout",
        "max-input-mb", "max-instance-mb", "file-settle-ms"};
    for (size_t i = 0; i < sizeof live / sizeof live[0]; i++)
        if (!strcmp(name, live[i]))
            return true;
    return false;
}

static bool same_value(const struct option *o, const struct config *a, const struct config *b)
{
    const char *pa = (const char *)a + o->offset, *pb = (const char *)b + o->offset;
    if (o->type == OPT_INT)
        return *(const int64_t *)(const void *)pa == *(const int64_t *)(const void *)pb;
    if (o->type == OPT_STR) {
        const char *x = *(char *const *)(const void *)pa, *y = *(char *const *)(const void *)pb;
        return (!x && !y) || (x && y && !strcmp(x, y));
    }
    if (a->listen_count != b->listen_count)
        return false;
    for (int i = 0; i < a->listen_count; i++)
        if (strcmp(a->listen[i], b->listen[i]))
            return false;
    return true;
}

/* Appends name to the list in buf (", " between names), cut to fit cap. */
static void list_name(char *buf, size_t cap, const char *name)
{
    size_t len = strnlen(buf, cap);
    if (len < cap)
        snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", name);
}

int config_apply_live(struct config *live, struct config *fresh, FILE *err, char *names, size_t cap)
{
    int changed = 0;
    if (cap)
        names[0] = 0;
    for (size_t i = 0; i < NOPTS; i++) {
        const struct option *o = &options[i];
        if (same_value(o, live, fresh))
            continue;
        if (!live_option(o->name)) {
            fprintf(err, "skeld: %s changed: it takes effect at the next start\n", o->name);
            continue;
        }
        char *pl = (char *)live + o->offset, *pf = (char *)fresh + o->offset;
        if (o->type == OPT_INT) {
            *(int64_t *)(void *)pl = *(int64_t *)(void *)pf;
        } else { /* a string: the fresh one moves over, the old one goes with fresh */
            char *old = *(char **)(void *)pl;
            *(char **)(void *)pl = *(char **)(void *)pf;
            *(char **)(void *)pf = old;
        }
        if (!strcmp(o->name, "auth-token"))
            live->auth_generation++;
        list_name(names, cap, o->name);
        changed++;
    }
    return changed;
}
