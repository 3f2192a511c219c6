/* litedav-host: the LiteDAV firmware (firmware/app on lwIP, NO_SYS) as a
 * native Linux program. Its Ethernet is an in-process libslirp, so
 * 127.0.0.1:PORT reaches the app's port 80 at 10.0.2.15 exactly as with the
 * simulated SoC, at native speed. */
#define _GNU_SOURCE

#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lwip/etharp.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "lwip/timeouts.h"
#include "netif/ethernet.h"

#include "host_port.h"
#include "httpd.h"
#include "port.h"
#include "slirp_netif.h"

/* The simulator's user-mode network (libslirp defaults). */
#define IP_ADDR   "10.0.2.15"
#define NETMASK   "255.255.255.0"
#define GATEWAY   "10.0.2.2"
#define HTTP_PORT 80

#define READY_PREFIX "[litedav-host] LiteDAV is serving at"
/* Longest wait in one turn, so a stuck clock or missed wake-up cannot stall
 * lwIP's timers for long. */
#define MAX_WAIT_MS 100

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig) { stop_signal = sig; }

static void usage(FILE *out, const char *prog)
{
    fprintf(out,
            "usage: %s --port N [--store FILE]\n"
            "\n"
            "Run the LiteDAV firmware natively: lwIP and the HTTP/CalDAV app on an\n"
            "in-process user-mode network (libslirp). The app listens on " IP_ADDR ":%d\n"
            "inside that network; 127.0.0.1:N on this machine is forwarded to it.\n"
            "Ctrl-C (SIGINT) or SIGTERM stops it.\n"
            "\n"
            "  --port N      TCP port on 127.0.0.1 to listen on (1-65535)\n"
            "  --store FILE  file holding the store's flash image (for the store backend)\n"
            "  --help        this text\n",
            prog, HTTP_PORT);
}

static int parse_port(const char *text, uint16_t *port)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (!*text || *end || v < 1 || v > 65535)
        return -1;
    *port = (uint16_t)v;
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        {"port", required_argument, NULL, 'p'},
        {"store", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static struct netif netif;
    struct slirp_netif_config net_config = {.host_port = 0, .guest_port = HTTP_PORT};
    struct sigaction stop_action;
    sigset_t stop_signals, unblocked;
    ip4_addr_t ip, mask, gw;
    int opt;

    while ((opt = getopt_long(argc, argv, "p:s:h", options, NULL)) != -1) {
        switch (opt) {
        case 'p':
            if (parse_port(optarg, &net_config.host_port) != 0) {
                fprintf(stderr, "%s: --port wants a number from 1 to 65535, not \"%s\"\n",
                        argv[0], optarg);
                return 2;
            }
            break;
        case 's':
            host_port_set_store_path(optarg);
            break;
        case 'h':
            usage(stdout, argv[0]);
            return 0;
        default:
            usage(stderr, argv[0]);
            return 2;
        }
    }
    if (optind < argc || !net_config.host_port) {
        fprintf(stderr, "%s: %s\n", argv[0],
                optind < argc ? "unexpected argument" : "--port is required");
        usage(stderr, argv[0]);
        return 2;
    }

    /* Console lines are read by tests and scripts through a pipe. */
    setvbuf(stdout, NULL, _IOLBF, 0);

    /* SIGINT/SIGTERM are only delivered while waiting for the network, so a
     * stop never lands in the middle of lwIP. */
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    sigprocmask(SIG_BLOCK, &stop_signals, &unblocked);
    sigdelset(&unblocked, SIGINT);
    sigdelset(&unblocked, SIGTERM);
    memset(&stop_action, 0, sizeof(stop_action));
    stop_action.sa_handler = on_stop_signal;
    sigemptyset(&stop_action.sa_mask);
    sigaction(SIGINT, &stop_action, NULL);
    sigaction(SIGTERM, &stop_action, NULL);
    /* writing to a client that went away is the network's business */
    signal(SIGPIPE, SIG_IGN);

    host_port_init();
    printf("\nLiteDAV firmware (%s, %" PRIu32 " Hz)\n", port_name(), port_cycles_hz());
    lwip_init();
    ip4addr_aton(IP_ADDR, &ip);
    ip4addr_aton(NETMASK, &mask);
    ip4addr_aton(GATEWAY, &gw);
    if (!netif_add(&netif, &ip, &mask, &gw, &net_config, slirp_netif_init, ethernet_input))
        return 1;
    netif_set_default(&netif);
    netif_set_up(&netif);
    /* Announce ourselves: the user-mode network learns our MAC from this. */
    etharp_request(&netif, &gw);

    if (httpd_init(HTTP_PORT) != 0) {
        printf("httpd: cannot listen on port %d\n", HTTP_PORT);
        slirp_netif_shutdown(&netif);
        return 1;
    }
    printf("listening on http://%s:%d/\n", IP_ADDR, HTTP_PORT);
    printf(READY_PREFIX " http://127.0.0.1:%u/  (Ctrl-C stops it)\n",
           (unsigned)net_config.host_port);

    while (!stop_signal) {
        uint64_t start = port_cycles(), woke;
        u32_t lwip_sleep = sys_timeouts_sleeptime();
        int work;

        slirp_netif_wait(&netif, lwip_sleep < MAX_WAIT_MS ? lwip_sleep : MAX_WAIT_MS, &unblocked);
        /* time spent in the network (slirp, host sockets) is idle time, as the
         * simulated PHY and slirp cost the SoC nothing */
        woke = port_cycles();
        port_stats.idle_cycles += woke - start;
        work = slirp_netif_input(&netif);
        sys_check_timeouts();
        if (!work)
            port_stats.idle_cycles += port_cycles() - woke;
    }

    printf("[litedav-host] stopping (%s): %" PRIu64 " frames in, %" PRIu64 " out, "
           "%" PRIu64 " dropped\n",
           stop_signal == SIGINT ? "SIGINT" : "SIGTERM", port_stats.frames_in,
           port_stats.frames_out, port_stats.rx_dropped + port_stats.tx_dropped);
    netif_set_down(&netif);
    slirp_netif_shutdown(&netif);
    return 0;
}
