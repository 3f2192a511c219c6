/* Shared by the simulator's slirp_ethernet module and the host port's slirp
 * netif (included from both; static, no library to link). */
#ifndef LITEDAV_SLIRP_BACKLOG_H
#define LITEDAV_SLIRP_BACKLOG_H

#include <dirent.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>

#define SLIRP_ACCEPT_BACKLOG 128

/* libslirp's forwarded port listens with a backlog of one. When the accept
 * queue is full Linux drops new SYNs, and a client retries after 1, 3, 7, 15 s:
 * a burst of connections (ab -c 50) then stalls for seconds. Find the
 * listening socket on 127.0.0.1:port and give it a real backlog (listen(2) on
 * a listening socket only changes the backlog). */
static int widen_accept_backlog(uint16_t port)
{
    DIR *fds = opendir("/proc/self/fd");
    struct dirent *entry;
    int widened = -1;

    if (!fds)
        return -1;
    while ((entry = readdir(fds))) {
        int fd = atoi(entry->d_name), listening = 0;
        socklen_t len = sizeof(listening);
        struct sockaddr_in addr;
        socklen_t addr_len = sizeof(addr);

        if (fd <= 2 || fd == dirfd(fds))
            continue;
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening)
            continue;
        if (getsockname(fd, (struct sockaddr *)&addr, &addr_len) != 0 ||
            addr.sin_family != AF_INET || ntohs(addr.sin_port) != port)
            continue;
        widened = listen(fd, SLIRP_ACCEPT_BACKLOG);
    }
    closedir(fds);
    return widened;
}

#endif
