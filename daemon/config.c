#include "autoconfig.h"

#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

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
        char *end;
        errno = 0;
        long long v = strtoll(value, &end, 10);
        if (end == value || *end) {
            fprintf(err,
                    "skeld: %s%s: \"%s\" is not a number (expected a whole number in "
                    "%lld..%lld)\n",
                    where, o->name, value, (long long)o->min, (long long)o->max);
            return -1;
        }
        if (errno || v < o->min || v > o->max) {
            fprintf(err, "skeld: %s%s: %s is out of range (expected %lld..%lld)\n", where, o->name,
                    value, (long long)o->min, (long long)o->max);
            return -1;
        }
        *(int64_t *)field = v;
        return 0;
    }
    char *copy = strdup(value);
    if (!copy)
        return -1;
    if (o->type == OPT_STR) {
        free(*(char **)field);
        *(char **)field = copy;
        return 0;
    }
    if (c->listen_count == CONFIG_MAX_LISTEN) {
        fprintf(err, "skeld: %s%s: at most %d\n", where, o->name, CONFIG_MAX_LISTEN);
        free(copy);
        return -1;
    }
    c->listen[c->listen_count++] = copy;
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
    memset(c, 0, sizeof *c);
}

int config_load_file(struct config *c, const char *path, FILE *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(err, "skeld: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[4096];
    int rc = 0, lineno = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        char *p = line + strspn(line, " \t");
        p[strcspn(p, "#\r\n")] = 0;
        if (!*p)
            continue;
        char *eq = strchr(p, '=');
        size_t nlen = eq ? (size_t)(eq - p) : strlen(p);
        while (nlen && (p[nlen - 1] == ' ' || p[nlen - 1] == '\t'))
            nlen--;
        const struct option *o = find(p, nlen);
        if (!eq || !o) {
            if (!eq)
                fprintf(err, "skeld: %s:%d: expected \"key = value\"\n", path, lineno);
            else
                fprintf(err, "skeld: %s:%d: unknown key \"%.*s\"\n", path, lineno, (int)nlen, p);
            rc = -1;
            break;
        }
        char *v = eq + 1 + strspn(eq + 1, " \t");
        size_t vlen = strlen(v);
        while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
            v[--vlen] = 0;
        char where[4096 + 32];
        snprintf(where, sizeof where, "%s:%d: ", path, lineno);
        rc = set(c, o, v, where, err);
    }
    fclose(f);
    return rc;
}

void config_print_help(FILE *out)
{
    fprintf(out, "usage: skeld [serve] [--config FILE] [--option=value ...]\n\noptions:\n");
    for (size_t i = 0; i < NOPTS; i++)
        fprintf(out, "  --%-18s %s%s%s%s\n", options[i].name, options[i].help,
                options[i].def ? " [" : "", options[i].def ? options[i].def : "",
                options[i].def ? "]" : "");
    fprintf(out, "  --%-18s %s\n", "config", "read options from FILE (name = value lines)");
    fprintf(out, "  --%-18s %s\n", "help", "print this help and exit");
    fprintf(out, "  --%-18s %s\n", "version", "print the version and exit");
    fprintf(out, "\nexit status: 0 after a clean stop, 1 if serving failed (startup, an unclean "
                 "close),\n2 for bad options or a bad config file\n");
}

int config_parse_args(struct config *c, int argc, char **argv, int first, FILE *err)
{
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
            if (!value || config_load_file(c, value, err))
                return -1;
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

int config_check(struct config *c, FILE *err)
{
    if (!c->node_name && default_node_name(c, err))
        return -1;
    if (!valid_node_name(c->node_name)) {
        fprintf(err, "skeld: --node-name \"%s\": expected 1 to 64 of A-Z a-z 0-9 . _ -\n",
                c->node_name);
        return -1;
    }
    if (c->cors_origin && !valid_origin(c->cors_origin)) {
        fprintf(err,
                "skeld: --cors-origin: expected an origin (https://host[:port]) or *: 1 to %d "
                "visible ASCII characters\n",
                CORS_ORIGIN_MAX);
        return -1;
    }
    if (c->out_low_water >= c->out_high_water) {
        fprintf(err, "skeld: --out-low-water must be below --out-high-water\n");
        return -1;
    }
    /* No listener given: the binary protocol and HTTP, both on the loopback interface. */
    if (c->listen_count == 0 && (set(c, &options[0], "tcp://127.0.0.1:7878", "--", err) ||
                                 set(c, &options[0], "http://127.0.0.1:8080", "--", err)))
        return -1;
    for (int i = 0; i < c->listen_count; i++) {
        const char *u = c->listen[i];
        struct sockaddr_storage addr;
        if (strncmp(u, "unix:", 5) && strncmp(u, "tcp://", 6) && strncmp(u, "http://", 7)) {
            fprintf(err,
                    "skeld: --listen %s: expected unix:/path, tcp://HOST:PORT or "
                    "http://HOST:PORT\n",
                    u);
            return -1;
        }
        if (strncmp(u, "unix:", 5) && config_listen_addr(strstr(u, "//") + 2, &addr)) {
            fprintf(err,
                    "skeld: --listen %s: HOST must be an IP address (127.0.0.1, 0.0.0.0, [::1], "
                    "[::]) and PORT a number from 0 (any free one) to 65535\n",
                    u);
            return -1;
        }
    }
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
