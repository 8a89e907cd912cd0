/* Daemon configuration: one option table drives --help, --name=value flags and the config
 * file. Out-of-range values fail at startup with the option's name; nothing is clamped. */
#ifndef SKELD_CONFIG_H
#define SKELD_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#define CONFIG_MAX_LISTEN 8
#define CONFIG_MAX_OPTIONS 32 /* room for the option table's entries (config.c) */

struct config {
    char *listen[CONFIG_MAX_LISTEN];
    int listen_count;
    char *root;
    char *preload;
    char *auth_token;
    char *cors_origin;
    char *log_level;
    char *log_file;  /* NULL: stderr */
    char *node_name; /* this node in a cluster: X-Skeld-Node, /metrics; default the host name */
    int64_t threads;
    int64_t queue_depth;
    int64_t cache_mb;
    int64_t result_cache_mb;
    int64_t max_frame;
    int64_t max_connections;
    int64_t max_inflight;
    int64_t out_high_water;
    int64_t out_low_water;
    int64_t max_image_pixels;
    int64_t max_skf_mb;
    int64_t max_json_mb;
    int64_t max_bones;
    int64_t max_bone_steps;
    int64_t idle_timeout;
    int64_t frame_timeout;
    int64_t drain_grace;
    int64_t max_input_mb;
    int64_t max_instance_mb;
    int64_t file_settle_ms;
    /* Where each option (by its place in the table) and each listener was last set, for
     * messages: "FILE:LINE: " from a config file, NULL from a flag or a default. */
    char *where[CONFIG_MAX_OPTIONS];
    char *listen_where[CONFIG_MAX_LISTEN];
    /* Not an option: bumped by config_apply_live each time auth-token changes (set, changed
     * or removed), so that a binary connection can tell that the token it passed is gone. */
    uint64_t auth_generation;
};

/* Fills c with defaults (threads = cores). */
void config_init(struct config *c, int cores);

/* Applies argv[first..argc) ("--name=value", "--name value", "--config FILE"; a flag with a
 * value once, but --listen, which adds a listener each time). Returns 0, 1 if --help or
 * --version was printed, or -1 after printing the problem to err. */
int config_parse_args(struct config *c, int argc, char **argv, int first, FILE *err);

/* Reads "name = value" lines ('#' comments) from path: a regular file of 1 MiB at most, read
 * without waiting (a FIFO or a device is refused, never read). 0 or -1 with a message to err
 * naming the file, the line and the key ("f:12: unknown key \"listn\""). */
int config_load_file(struct config *c, const char *path, FILE *err);

/* Checks of values and between options (the listeners, the node name, the log level, low
 * water below high water, ...), each message naming where the option was set. */
int config_check(struct config *c, FILE *err);

void config_print_help(FILE *out);

/* SIGHUP: copies into live the options that can change at run time (log level, auth token,
 * CORS origin, limits) where fresh differs, and says on err which others differ (they need a
 * restart). Strings move from fresh to live (fresh keeps the old ones, to free). A changed
 * auth token bumps live->auth_generation. Returns the number of options changed, and writes
 * their names (never their values: one is the token) to names, ", " between them, cut to fit
 * cap. Loop thread. */
int config_apply_live(struct config *live, struct config *fresh, FILE *err, char *names,
                      size_t cap);

void config_free(struct config *c);

/* Whether got (got_len bytes, no NUL needed) passes c's --auth-token: always without one;
 * else compared in constant time in the token's length. Both fronts' check. */
bool config_token_ok(const struct config *c, const char *got, size_t got_len);

/* The address of a tcp:// or http:// listener's "HOST:PORT" (HOST an IPv4 address or an IPv6
 * one in brackets, PORT 0-65535 in decimal, 0 for any free one): 0, or -1 if it is not that.
 * config_check refuses such a listener, and the server binds what this reads. */
int config_listen_addr(const char *hostport, struct sockaddr_storage *addr);

/* Whether listener i, an IPv6 one, must take IPv6 connections only: another listener is IPv4
 * on its port, which the system would otherwise give it too (net.ipv6.bindv6only=0), so that
 * the second bind failed. */
bool config_listen_v6only(const struct config *c, int i);

#endif
