/* LD_PRELOAD shim for qemu-system-arm (host side, not firmware): QEMU's
 * user-mode network (libslirp) listens on a forwarded host port with a
 * backlog of 1, so when many clients connect at once (ab -c 100) the host
 * kernel drops their handshakes and the clients retry 1, 3, 7, 15 s later;
 * some exceed ab's 30 s timeout before the firmware ever sees them. A real
 * board on a LAN has no such queue in front of it. This raises every
 * listen() backlog to LITEDAV_LISTEN_BACKLOG (default 128). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/socket.h>

int listen(int fd, int backlog)
{
    static int (*next_listen)(int, int);
    const char *wanted = getenv("LITEDAV_LISTEN_BACKLOG");
    int at_least = wanted ? atoi(wanted) : 128;

    if (!next_listen)
        next_listen = (int (*)(int, int))dlsym(RTLD_NEXT, "listen");
    return next_listen(fd, backlog < at_least ? at_least : backlog);
}
