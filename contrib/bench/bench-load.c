/* Load generator for skeld: N connections, each keeping D requests in flight, a mix of POSE,
 * MESH and RENDER requests on one armature, for a fixed time. Reports requests/s, latency
 * percentiles and, with --pid, the daemon's RSS, CPU and context switches per request, the
 * share of requests its own latency histogram puts at 1 ms or more, and the CPU time the
 * hypervisor stole during the run.
 *
 *   bench-load --uri unix:/path | tcp://127.0.0.1:7878 --skf FILE.skf [--conns 4]
 *              [--depth 16] [--mix pose=1,mesh=0,render=0] [--seconds 5] [--size 512]
 *              [--anim 0] [--pid PID] [--rate R]
 *
 * Without --rate each connection keeps D requests in flight (throughput); with --rate the
 * requests go out at R per second in total (latency at a given load), still at most D in
 * flight per connection. Paced requests leave in small bursts: whatever is due each time the
 * client wakes, which is at least once a millisecond and whenever replies arrive. Sleeping
 * to the microsecond instead was tried: on a 2-core virtual machine the client's wake-ups
 * then took a core from the daemon it measures, and every figure got worse.
 * The file is uploaded (LOAD_BYTES). Requests are stateless; the frame advances per request.
 * Bounded in time and in count; it talks only to the address it is given. */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "skp_msg.h"
#include "skp_parser.h"

#define MAX_CONNS 256

struct client {
    int fd;
    uint8_t *in;
    size_t in_off, in_len, in_cap; /* unread replies are in[in_off..in_len) */
    int inflight;
    uint32_t next_id;
    double sent_at[65536]; /* by request id modulo */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int dial(const char *uri)
{
    if (!strncmp(uri, "unix:", 5)) {
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        snprintf(a.sun_path, sizeof a.sun_path, "%s", uri + 5);
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
            return fd;
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (strncmp(uri, "tcp://", 6))
        return -1;
    char host[256];
    snprintf(host, sizeof host, "%s", uri + 6);
    char *colon = strrchr(host, ':');
    if (!colon)
        return -1;
    *colon = 0;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res;
    if (getaddrinfo(host, colon + 1, &hints, &res))
        return -1;
    int fd = socket(res->ai_family, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen)) {
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

static int send_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int send_frame(int fd, uint8_t op, uint32_t id, const uint8_t *body, size_t len)
{
    uint8_t h[SKP_HEADER_SIZE];
    struct skp_header hd = {SKP_VERSION, op, 0, 0, id, (uint32_t)len};
    skp_encode_header(&hd, h);
    return send_all(fd, h, sizeof h) || (len && send_all(fd, body, len)) ? -1 : 0;
}

/* Reads what the socket has into c's input buffer (grown as needed): 0, or -1 at EOF/error. */
static int read_more(struct client *c)
{
    if (c->in_off) { /* what was consumed goes, once per read: not once per reply */
        memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
        c->in_len -= c->in_off;
        c->in_off = 0;
    }
    if (c->in_cap - c->in_len < 65536) {
        size_t cap = c->in_cap ? c->in_cap * 2 : 1 << 20;
        uint8_t *n = realloc(c->in, cap);
        if (!n)
            return -1;
        c->in = n;
        c->in_cap = cap;
    }
    ssize_t r = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
    if (r <= 0)
        return -1;
    c->in_len += (size_t)r;
    return 0;
}

/* Reads until one whole frame is buffered; returns it (body stays valid until next read). */
static int read_frame(struct client *c, struct skp_frame *f, size_t *used)
{
    for (;;) {
        int rc = skp_parser_feed(c->in + c->in_off, c->in_len - c->in_off, SKP_MAX_FRAME, f, used);
        if (rc == SKP_FRAME)
            return 0;
        if (rc < 0)
            return -1;
        if (read_more(c))
            return -1;
    }
}

static void consume(struct client *c, size_t used)
{
    c->in_off += used;
}

struct plan {
    uint8_t id[32];
    double rate; /* requests per second in total; 0: as fast as the pipeline allows */
    int mix[3];  /* weights: pose, mesh, render */
    const char *anim;
    uint32_t size;
    uint32_t frames;
};

static size_t eval_body(const struct plan *p, uint32_t frame, uint8_t *buf, size_t cap)
{
    struct skp_eval_req m;
    skp_eval_req_init(&m);
    memcpy(m.armature, p->id, sizeof m.armature);
    m.flags = SKP_EVAL_LOOP;
    m.anim_count = 1;
    m.anims[0] = (struct skp_anim_ref){{p->anim, strlen(p->anim)}, frame, 0};
    struct skp_writer w;
    skp_writer_init(&w, buf, cap);
    skp_encode_eval_req(&w, &m);
    return w.len;
}

/* A fit-camera render of the plan's size with the defaults of `skeld render`. */
static size_t render_body(const struct plan *p, uint8_t *buf, size_t cap, size_t at)
{
    struct skp_render_req m;
    skp_render_req_init(&m);
    m.width = m.height = p->size;
    struct skp_writer w;
    skp_writer_init(&w, buf + at, cap - at);
    skp_encode_render_req(&w, &m);
    return at + w.len;
}

static int pick(const struct plan *p, uint32_t n)
{
    int total = p->mix[0] + p->mix[1] + p->mix[2], r = (int)(n % (uint32_t)total);
    return r < p->mix[0] ? SKP_OP_POSE : r < p->mix[0] + p->mix[1] ? SKP_OP_MESH : SKP_OP_RENDER;
}

/* n requests in one write (a reader of many replies refills as many at once, the way a
 * pipelining client does). */
static int send_many(struct client *c, const struct plan *p, double now, unsigned n)
{
    enum { ROOM = 1024 + SKP_HEADER_SIZE };
    uint8_t buf[64 * ROOM];
    while (n) {
        size_t at = 0;
        for (; n && at + ROOM <= sizeof buf; n--) {
            uint32_t id = c->next_id++;
            int op = pick(p, id);
            uint8_t *body = buf + at + SKP_HEADER_SIZE;
            size_t len = eval_body(p, id % p->frames, body, 1024);
            if (op == SKP_OP_RENDER)
                len = render_body(p, body, 1024, len);
            struct skp_header hd = {SKP_VERSION, (uint8_t)op, 0, 0, id, (uint32_t)len};
            skp_encode_header(&hd, buf + at);
            at += SKP_HEADER_SIZE + len;
            c->sent_at[id % 65536] = now;
            c->inflight++;
        }
        if (send_all(c->fd, buf, at))
            return -1;
    }
    return 0;
}

static int send_one(struct client *c, const struct plan *p, double now)
{
    return send_many(c, p, now, 1);
}

static int upload(int fd, const char *path, struct plan *p)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    static uint8_t file[64 << 20];
    size_t n = fread(file + 4, 1, sizeof file - 4, f);
    fclose(f);
    skp_put_u32(file, (uint32_t)n);
    struct client c = {.fd = fd};
    struct skp_frame fr;
    size_t used;
    int rc = send_frame(fd, SKP_OP_LOAD_BYTES, 1, file, n + 4) || read_frame(&c, &fr, &used) ||
             fr.h.status != SKP_S_OK || fr.h.body_len < 32 + 6;
    if (!rc) {
        memcpy(p->id, fr.body, 32);
        /* summary: u32 bones, u16 anims, first anim: str name, f64 fps, u32 frames */
        size_t nl = skp_get_u16(fr.body + 38);
        p->frames = fr.h.body_len >= 40 + nl + 12 ? skp_get_u32(fr.body + 40 + nl + 8) : 1;
        if (!p->frames)
            p->frames = 1;
    }
    free(c.in);
    return rc ? -1 : 0;
}

static long rss_kb(int pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

/* What the daemon's threads have used so far: CPU seconds (user + system) and context
 * switches (voluntary: waits and wake-ups between the loop and the workers; involuntary:
 * preemption), summed over /proc/PID/task. Per request, these move far less than throughput
 * with the load of a shared machine, so they show a change in the daemon's own costs. */
struct proc_use {
    double cpu_s;
    long long vcsw, ivcsw;
};

static int proc_use(int pid, struct proc_use *u)
{
    *u = (struct proc_use){0, 0, 0};
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    unsigned long long ut = 0, st = 0;
    /* after "(comm)": state, then fields 4..13, then utime (14) and stime (15) */
    int got = f ? fscanf(f, "%*d (%*[^)]) %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
                         &ut, &st)
                : 0;
    if (f)
        fclose(f);
    if (got != 2)
        return -1;
    u->cpu_s = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char sp[320], line[128];
        snprintf(sp, sizeof sp, "/proc/%d/task/%s/status", pid, e->d_name);
        FILE *tf = fopen(sp, "r");
        while (tf && fgets(line, sizeof line, tf)) {
            if (!strncmp(line, "voluntary_ctxt_switches:", 24))
                u->vcsw += atoll(line + 24);
            else if (!strncmp(line, "nonvoluntary_ctxt_switches:", 27))
                u->ivcsw += atoll(line + 27);
        }
        if (tf)
            fclose(tf);
    }
    if (d)
        closedir(d);
    return 0;
}

/* The share of all CPUs' time the hypervisor gave to others (/proc/stat "steal"): on a
 * shared virtual machine, a busy vCPU is taken away for milliseconds at a time, and every
 * request it holds waits. cpu_total and steal in clock ticks; -1 where there is no
 * /proc/stat. */
static int steal_ticks(unsigned long long *total, unsigned long long *steal)
{
    FILE *f = fopen("/proc/stat", "r");
    unsigned long long v[8] = {0};
    int got = f ? fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                         &v[3], &v[4], &v[5], &v[6], &v[7])
                : 0;
    if (f)
        fclose(f);
    if (got != 8)
        return -1;
    *total = 0;
    for (int i = 0; i < 8; i++)
        *total += v[i];
    *steal = v[7];
    return 0;
}

/* The daemon's own latency histogram (STATS latency.*: bucket i counts requests answered in
 * under 2^i * 64 us, from the frame's arrival to its answer), read on connection c: 0, or -1.
 * Against the client's figures it tells the daemon's time from the machine's. */
static int daemon_latency(struct client *c, uint64_t hist[16])
{
    struct skp_frame f;
    size_t used;
    if (send_frame(c->fd, SKP_OP_STATS, 7, NULL, 0) || read_frame(c, &f, &used) ||
        f.h.status != SKP_S_OK)
        return -1;
    struct skp_reader rd;
    skp_reader_init(&rd, f.body, f.h.body_len);
    uint32_t n = skp_read_u32(&rd);
    memset(hist, 0, 16 * sizeof *hist);
    for (uint32_t i = 0, b = 0; i < n; i++) {
        size_t len;
        const char *name = skp_read_str(&rd, &len);
        uint64_t hi = skp_read_u32(&rd), lo = skp_read_u32(&rd);
        if (name && len > 8 && !memcmp(name, "latency.", 8) && b < 16)
            hist[b++] = hi << 32 | lo;
    }
    consume(c, used);
    return skp_reader_finish(&rd) ? -1 : 0;
}

struct results {
    double *lat;
    size_t n, cap;
    uint64_t ok, errors, busy;
};

static void record(struct results *r, double lat, int status)
{
    if (status == SKP_S_OK)
        r->ok++;
    else if (status == SKP_S_BUSY)
        r->busy++;
    else
        r->errors++;
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 1 << 16;
        double *n = cap <= (1u << 24) ? realloc(r->lat, cap * sizeof *n) : NULL;
        if (!n)
            return;
        r->lat = n;
        r->cap = cap;
    }
    r->lat[r->n++] = lat;
}

/* Reads whatever arrived on c; records replies and refills the pipeline while sending. */
static int service(struct client *c, const struct plan *p, struct results *res, bool refill)
{
    if (read_more(c))
        return -1;
    double now = now_s();
    unsigned answered = 0;
    for (;;) {
        struct skp_frame f;
        size_t used;
        int rc =
            skp_parser_feed(c->in + c->in_off, c->in_len - c->in_off, SKP_MAX_FRAME, &f, &used);
        if (rc < 0)
            return -1;
        if (rc != SKP_FRAME)
            break;
        record(res, now - c->sent_at[f.h.id % 65536], f.h.status);
        c->inflight--;
        consume(c, used);
        answered++;
    }
    return refill && p->rate <= 0 && answered ? send_many(c, p, now, answered) : 0;
}

static int run(const char *uri, struct client **cl, int conns, int depth, const struct plan *p,
               double seconds, struct results *res)
{
    struct pollfd pfd[MAX_CONNS];
    double start = now_s(), end = start + seconds;
    uint64_t sent = 0;
    for (int i = 0; i < conns; i++) {
        pfd[i] = (struct pollfd){cl[i]->fd, POLLIN, 0};
        for (int d = 0; d < depth && p->rate <= 0; d++)
            if (send_one(cl[i], p, start))
                return -1;
    }
    (void)uri;
    for (int rr = 0;;) {
        double now = now_s();
        bool sending = now < end;
        /* Paced mode: send what the clock allows, round robin, within the depth. */
        while (sending && p->rate > 0 && sent < (uint64_t)((now - start) * p->rate)) {
            int tries = 0;
            while (tries < conns && cl[rr]->inflight >= depth)
                rr = (rr + 1) % conns, tries++;
            if (tries == conns)
                break;
            if (send_one(cl[rr], p, now))
                return -1;
            sent++;
            rr = (rr + 1) % conns;
        }
        int pending = 0;
        for (int i = 0; i < conns; i++)
            pending += cl[i]->inflight;
        if (!sending && (pending == 0 || now > end + 10))
            break;
        if (poll(pfd, (nfds_t)conns, p->rate > 0 ? 1 : 100) < 0 && errno != EINTR)
            return -1;
        for (int i = 0; i < conns; i++)
            if ((pfd[i].revents & (POLLIN | POLLHUP)) && service(cl[i], p, res, sending))
                return -1;
    }
    return 0;
}

/* Before a run: what report() compares with. */
struct baseline {
    struct proc_use use;
    unsigned long long cpu_ticks, steal;
    uint64_t hist[16];
    bool has_steal, has_hist;
};

static void report(struct results *res, double seconds, int pid, const struct baseline *base,
                   struct client *c)
{
    const struct proc_use *before = &base->use;
    qsort(res->lat, res->n, sizeof *res->lat, bench_cmp_double);
    double q[3] = {0.5, 0.99, 0.999};
    printf("requests: %llu ok, %llu busy, %llu errors in %.1f s = %.0f ok/s\n",
           (unsigned long long)res->ok, (unsigned long long)res->busy,
           (unsigned long long)res->errors, seconds, res->ok / seconds);
    printf("latency:");
    for (int i = 0; i < 3; i++)
        printf(" p%g %.3f ms", q[i] * 100,
               res->n ? res->lat[(size_t)(q[i] * (double)(res->n - 1))] * 1000 : 0.0);
    printf("\n");
    if (pid <= 0)
        return;
    printf("daemon RSS: %.1f MiB\n", rss_kb(pid) / 1024.0);
    struct proc_use after;
    double n = res->ok + res->busy + res->errors;
    if (n > 0 && proc_use(pid, &after) == 0)
        printf("daemon per request: %.1f us CPU, %.3f voluntary and %.3f involuntary context "
               "switches\n",
               (after.cpu_s - before->cpu_s) * 1e6 / n, (double)(after.vcsw - before->vcsw) / n,
               (double)(after.ivcsw - before->ivcsw) / n);
    uint64_t hist[16], all = 0, over_1ms = 0;
    if (base->has_hist && daemon_latency(c, hist) == 0) {
        for (int b = 0; b < 16; b++) {
            uint64_t k = hist[b] - base->hist[b];
            all += k;
            over_1ms += b >= 5 ? k : 0; /* bucket 5 on: 1,024 us or more */
        }
        if (all)
            printf("inside the daemon (its latency histogram): %.2f%% of requests took 1 ms or "
                   "more\n",
                   100.0 * (double)over_1ms / (double)all);
    }
    unsigned long long total, steal;
    if (base->has_steal && steal_ticks(&total, &steal) == 0 && total > base->cpu_ticks)
        printf("the machine: %.1f%% of CPU time stolen by the hypervisor during the run\n",
               100.0 * (double)(steal - base->steal) / (double)(total - base->cpu_ticks));
}

static int parse_mix(const char *s, int mix[3])
{
    mix[0] = mix[1] = mix[2] = 0;
    int n = sscanf(s, "pose=%d,mesh=%d,render=%d", &mix[0], &mix[1], &mix[2]);
    return n >= 1 && mix[0] >= 0 && mix[1] >= 0 && mix[2] >= 0 && mix[0] + mix[1] + mix[2] > 0 ? 0
                                                                                               : -1;
}

int main(int argc, char **argv)
{
    const char *uri = NULL, *skf = NULL;
    int conns = 4, depth = 16, pid = 0;
    double seconds = 5;
    struct plan p = {.mix = {1, 0, 0}, .anim = "0", .size = 512};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--uri"))
            uri = v;
        else if (!strcmp(k, "--skf"))
            skf = v;
        else if (!strcmp(k, "--conns"))
            conns = atoi(v);
        else if (!strcmp(k, "--depth"))
            depth = atoi(v);
        else if (!strcmp(k, "--seconds"))
            seconds = atof(v);
        else if (!strcmp(k, "--size"))
            p.size = (uint32_t)atoi(v);
        else if (!strcmp(k, "--anim"))
            p.anim = v;
        else if (!strcmp(k, "--pid"))
            pid = atoi(v);
        else if (!strcmp(k, "--rate"))
            p.rate = atof(v);
        else if (!strcmp(k, "--mix") && !parse_mix(v, p.mix))
            continue;
        else {
            fprintf(stderr, "bench-load: bad option %s %s\n", k, v);
            return 2;
        }
    }
    if (!uri || !skf || conns < 1 || conns > MAX_CONNS || depth < 1 || depth > 4096 ||
        !(seconds > 0 && seconds <= 600)) {
        fprintf(stderr, "usage: bench-load --uri URI --skf FILE [--conns N<=256] [--depth D] "
                        "[--mix pose=A,mesh=B,render=C] [--seconds S<=600] [--size PX] "
                        "[--anim A] [--pid PID]\n");
        return 2;
    }
    struct client *cl[MAX_CONNS] = {0};
    struct results res = {0};
    int rc = 0;
    for (int i = 0; i < conns && !rc; i++) {
        cl[i] = calloc(1, sizeof *cl[i]);
        if (!cl[i] || (cl[i]->fd = dial(uri)) < 0) {
            fprintf(stderr, "bench-load: cannot connect to %s\n", uri);
            rc = 1;
        }
        if (cl[i])
            cl[i]->next_id = 1000;
    }
    if (!rc && upload(cl[0]->fd, skf, &p)) {
        fprintf(stderr, "bench-load: uploading %s failed\n", skf);
        rc = 1;
    }
    struct baseline base = {0};
    if (pid > 0 && !rc) {
        proc_use(pid, &base.use);
        base.has_hist = daemon_latency(cl[0], base.hist) == 0;
        base.has_steal = steal_ticks(&base.cpu_ticks, &base.steal) == 0;
    }
    if (!rc && run(uri, cl, conns, depth, &p, seconds, &res)) {
        fprintf(stderr, "bench-load: connection lost\n");
        rc = 1;
    }
    if (!rc)
        report(&res, seconds, pid, &base, cl[0]);
    for (int i = 0; i < conns; i++) {
        if (cl[i] && cl[i]->fd >= 0)
            close(cl[i]->fd);
        if (cl[i])
            free(cl[i]->in);
        free(cl[i]);
    }
    free(res.lat);
    return rc;
}
