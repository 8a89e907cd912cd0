/* Connecting: URI parsing, getaddrinfo, non-blocking connect, bounded by a deadline for the
 * blocking client or left in progress for skc_async. The socket stays non-blocking for its
 * whole life; skc_io.c waits with poll(). */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "skc_int.h"

#define MAX_ADDRS 16

/* Where a URI leads: the addresses to try, in order. */
struct addrs {
    struct sockaddr_storage a[MAX_ADDRS];
    socklen_t len[MAX_ADDRS];
    int n;
    char where[300]; /* the URI without its scheme, for messages */
};

static int sys_fail(skc_client *c, int fd, const char *what, const char *where)
{
    char buf[128];
    skc__errno_str(errno, buf, sizeof buf);
    if (fd >= 0)
        close(fd);
    return skc__fail(c, SKC_EIO, "%s %s: %s", what, where, buf);
}

static int new_socket(skc_client *c, int family, const char *where, int *fd)
{
    *fd = socket(family, SOCK_STREAM, 0);
    if (*fd < 0)
        return sys_fail(c, -1, "socket for", where);
    int fl = fcntl(*fd, F_GETFL), one = 1;
    if (fl < 0 || fcntl(*fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl(*fd, F_SETFD, FD_CLOEXEC) < 0)
        return sys_fail(c, *fd, "fcntl on the socket for", where);
    if (family != AF_UNIX && setsockopt(*fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)
        return sys_fail(c, *fd, "TCP_NODELAY for", where);
    return 0;
}

/* One connect() on fd: 0 connected, 1 in progress, SKC_EAGAIN when a unix socket's listen
 * queue is full (try again on the same fd), or an error (fd closed). */
static int try_connect(skc_client *c, int fd, const struct addrs *as, int i)
{
    if (connect(fd, (const struct sockaddr *)&as->a[i], as->len[i]) == 0)
        return 0;
    if (errno == EINPROGRESS || errno == EINTR)
        return 1; /* after EINTR the connect goes on in the background */
    if (errno == EAGAIN)
        return SKC_EAGAIN;
    return sys_fail(c, fd, "connecting to", as->where);
}

/* Waits for an in-progress connect to finish; 0 when it succeeded (else fd is closed). */
static int finish_connect(skc_client *c, int fd, const char *where, int64_t deadline)
{
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int n;
    do
        n = poll(&p, 1, skc__remaining(deadline));
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return sys_fail(c, fd, "poll connecting to", where);
    if (n == 0) {
        close(fd);
        return skc__fail(c, SKC_ETIMEOUT, "connecting to %s: timed out", where);
    }
    int soerr = 0;
    socklen_t len = sizeof soerr;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0)
        return sys_fail(c, fd, "getsockopt connecting to", where);
    if (soerr) {
        errno = soerr;
        return sys_fail(c, fd, "connecting to", where);
    }
    return 0;
}

/* A unix socket whose listen queue is full refuses a non-blocking connect with EAGAIN
 * instead of queueing it, so retry every few milliseconds until the deadline. */
static int backoff(skc_client *c, int fd, const char *where, int64_t deadline)
{
    int left = skc__remaining(deadline);
    if (left == 0) {
        close(fd);
        return skc__fail(c, SKC_ETIMEOUT, "connecting to %s: timed out (queue full)", where);
    }
    if (poll(NULL, 0, left < 0 || left > 10 ? 10 : left) < 0 && errno != EINTR)
        return sys_fail(c, fd, "poll connecting to", where);
    return 0;
}

/* Connects c->fd to address i of as before the deadline. */
static int connect_addr(skc_client *c, const struct addrs *as, int i, int64_t deadline)
{
    int fd, rc = new_socket(c, as->a[i].ss_family, as->where, &fd);
    while (rc == 0 && (rc = try_connect(c, fd, as, i)) == SKC_EAGAIN)
        rc = backoff(c, fd, as->where, deadline);
    if (rc == 1)
        rc = finish_connect(c, fd, as->where, deadline);
    if (rc == 0)
        c->fd = fd;
    return rc;
}

static int resolve_unix(skc_client *c, const char *path, struct addrs *as)
{
    struct sockaddr_un sun;
    memset(&sun, 0, sizeof sun);
    if (path[0] == '/' && path[1] == '/')
        path += 2; /* unix:///run/skeld.sock */
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof sun.sun_path)
        return skc__fail(c, SKC_EINVAL, "unix socket path \"%s\" is empty or longer than %zu", path,
                         sizeof sun.sun_path - 1);
    sun.sun_family = AF_UNIX;
    memcpy(sun.sun_path, path, len);
    memcpy(&as->a[0], &sun, sizeof sun);
    as->len[0] = (socklen_t)sizeof sun;
    as->n = 1;
    snprintf(as->where, sizeof as->where, "%s", path);
    return 0;
}

/* Splits "host:port" or "[v6]:port" into host and port (both NUL-terminated in buf). */
static int split_host_port(char *buf, char **host, char **port)
{
    char *colon;
    if (buf[0] == '[') {
        char *end = strchr(buf, ']');
        if (!end || end[1] != ':')
            return -1;
        *end = '\0';
        *host = buf + 1;
        colon = end + 1;
    } else {
        colon = strrchr(buf, ':');
        if (!colon || memchr(buf, ':', (size_t)(colon - buf)))
            return -1; /* an IPv6 address needs brackets */
        *colon = '\0';
        *host = buf;
    }
    *port = colon + 1;
    size_t n = strlen(*port);
    if (**host == '\0' || n == 0 || n > 5 || strspn(*port, "0123456789") != n)
        return -1;
    long v = strtol(*port, NULL, 10);
    return v >= 1 && v <= 65535 ? 0 : -1;
}

static int resolve_tcp(skc_client *c, const char *hostport, struct addrs *as)
{
    char buf[300];
    char *host, *port;
    size_t n = strlen(hostport);
    if (n < sizeof buf)
        memcpy(buf, hostport, n + 1);
    if (n >= sizeof buf || split_host_port(buf, &host, &port))
        return skc__fail(c, SKC_EINVAL, "\"tcp://%s\": expected tcp://host:port", hostport);
    struct addrinfo hints, *list = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    int g = getaddrinfo(host, port, &hints, &list);
    if (g == EAI_MEMORY)
        return skc__fail(c, SKC_ENOMEM, "resolving %s: out of memory", host);
    char why[128];
    if (g != 0)
        return skc__fail(c, SKC_EIO, "resolving %s: %s", host,
                         g == EAI_SYSTEM ? skc__errno_str(errno, why, sizeof why)
                                         : gai_strerror(g));
    as->n = 0;
    for (const struct addrinfo *ai = list; ai && as->n < MAX_ADDRS; ai = ai->ai_next) {
        if (ai->ai_addrlen > sizeof as->a[0])
            continue;
        memcpy(&as->a[as->n], ai->ai_addr, ai->ai_addrlen);
        as->len[as->n++] = ai->ai_addrlen;
    }
    freeaddrinfo(list);
    snprintf(as->where, sizeof as->where, "%s", hostport);
    return as->n ? 0 : skc__fail(c, SKC_EIO, "resolving %s: no usable address", host);
}

static int resolve(skc_client *c, const char *uri, struct addrs *as)
{
    if (!uri)
        return skc__fail(c, SKC_EINVAL, "no URI: use unix:/path or tcp://host:port");
    if (strncmp(uri, "unix:", 5) == 0)
        return resolve_unix(c, uri + 5, as);
    if (strncmp(uri, "tcp://", 6) == 0)
        return resolve_tcp(c, uri + 6, as);
    return skc__fail(c, SKC_EINVAL, "unsupported URI \"%s\": use unix:/path or tcp://host:port",
                     uri);
}

int skc__dial(skc_client *c, const char *uri, int64_t deadline)
{
    struct addrs as;
    int rc = resolve(c, uri, &as);
    for (int i = 0; rc == 0 && i < as.n; i++) {
        rc = connect_addr(c, &as, i, deadline);
        if (rc == 0 || rc == SKC_ETIMEOUT)
            break;
    }
    return rc;
}

int skc__dial_start(skc_client *c, const char *uri)
{
    struct addrs as;
    int rc = resolve(c, uri, &as);
    if (rc)
        return rc;
    rc = SKC_EIO;
    for (int i = 0; i < as.n && rc < 0; i++) {
        int fd;
        if ((rc = new_socket(c, as.a[i].ss_family, as.where, &fd)))
            continue;
        rc = try_connect(c, fd, &as, i);
        if (rc == SKC_EAGAIN) {
            /* Without a loop of our own there is no retrying later: say it plainly. */
            close(fd);
            rc = skc__fail(c, SKC_EIO, "connecting to %s: its listen queue is full", as.where);
        }
        if (rc >= 0)
            c->fd = fd;
    }
    return rc;
}

int skc__dial_done(skc_client *c)
{
    int soerr = 0;
    socklen_t len = sizeof soerr;
    struct sockaddr_storage peer;
    socklen_t plen = sizeof peer;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0)
        soerr = errno;
    if (!soerr && getpeername(c->fd, (struct sockaddr *)&peer, &plen) == 0)
        return 0;
    if (!soerr && errno == ENOTCONN)
        return 1; /* woken before the connect ended */
    char buf[128];
    skc__errno_str(soerr ? soerr : errno, buf, sizeof buf);
    skc__close(c, "connecting to %s: %s", c->uri ? c->uri : "the server", buf);
    return skc__fail(c, SKC_EIO, "%s", c->gone);
}
