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

#include "http/auth.h"
#include "dav/dav.h"
#include "platform/flash.h"
#include "flash_file.h"
#include "platform/flash_ram.h"
#include "host_port.h"
#include "http/httpd.h"
#include "platform/port.h"
#include "appliance/app.h"
#include "slirp_netif.h"
#include "net/tcp_isn.h"

/* The simulator's user-mode network (libslirp defaults). */
#define IP_ADDR   "10.0.2.15"
#define NETMASK   "255.255.255.0"
#define GATEWAY   "10.0.2.2"
#define HTTP_PORT 80

#define READY_PREFIX "[litedav-host] LiteDAV is serving at"
/* Longest wait in one turn, so a stuck clock or missed wake-up cannot stall
 * lwIP's timers for long. */
#define MAX_WAIT_MS 100

/* The store's flash: a SPI NOR part of 16 MiB with 4 KiB sectors by default; --store-size
 * gives another size (the board's store flash is 32 MiB: platforms/store_flash.py). */
#define FLASH_SIZE_DEFAULT (16u * 1024u * 1024u)
#define FLASH_SIZE_MAX  (64u * 1024u * 1024u)
#define FLASH_BLOCK 4096u
#define FLASH_PAGE  256u
/* --user options: the store's user table holds DAV_STORE_USER_SLOTS (128) with demo */
#define MAX_USERS   127

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig) { stop_signal = sig; }

#define FRAGMENT_CACHE_KIB_DEFAULT 16384u
#define FRAGMENT_CACHE_KIB_MAX (1024u * 1024u)

static void usage(FILE *out, const char *prog)
{
    fprintf(out,
            "usage: %s --port N [--store FILE] [--store-size MIB] [--user NAME:PASSWORD]...\n"
            "\n"
            "Run the LiteDAV firmware natively: lwIP and the HTTP/CalDAV app on an\n"
            "in-process user-mode network (libslirp). The app listens on " IP_ADDR ":%d\n"
            "inside that network; 127.0.0.1:N on this machine is forwarded to it.\n"
            "Ctrl-C (SIGINT) or SIGTERM stops it.\n"
            "\n"
            "  --port N      TCP port on 127.0.0.1 to listen on (1-65535)\n"
            "  --store FILE  file holding the store's flash image (created when absent);\n"
            "                without it the store is in RAM and lost at exit\n"
            "  --store-size MIB  the store's flash in MiB (1-64; default 16): an image\n"
            "                of another size is refused\n"
            "  --user NAME:PASSWORD  add or update a user at start-up (repeatable), beside\n"
            "                the ones of firmware/users.conf (demo / demo)\n"
            "  --dav-wait-ms N  longest wait of a /dav/ request for a request context,\n"
            "                in ms (1-600000; default %u), then 503\n"
            "  --fragment-cache KIB  RAM for responses kept rendered and sent by\n"
            "                reference (dav_fragments.c), in KiB (0: none, every REPORT\n"
            "                takes the copying path; %u or more; default %u)\n"
            "  --drop-every N  a lossy link: drop every Nth frame of 1400 bytes or more,\n"
            "                each way (2 or more)\n"
            "  --help        this text\n",
            prog, HTTP_PORT, (unsigned)DAV_CTX_WAIT_MS, (unsigned)(DAV_FRAGMENT_CACHE_MIN / 1024u),
            (unsigned)FRAGMENT_CACHE_KIB_DEFAULT);
}

static uint32_t flash_size = FLASH_SIZE_DEFAULT;
static uint32_t fragment_cache_kib = FRAGMENT_CACHE_KIB_DEFAULT;
static struct flash_file store_file;
static struct flash_ram store_ram;
static uint8_t *ram_flash;

static void close_store(void)
{
    if (host_port_store_path())
        flash_file_close(&store_file);
    free(ram_flash);
    ram_flash = NULL;
}

/* len bytes from the OS's random source; -1 when it cannot give them (a password salt or the
   TCP sequence number key is then refused rather than taken from a guessable generator). */
static int read_urandom(void *buf, size_t len)
{
    FILE *urandom = fopen("/dev/urandom", "rb");
    size_t got = urandom ? fread(buf, 1, len, urandom) : 0;

    if (urandom)
        fclose(urandom);
    return got == len ? 0 : -1;
}

/* The store on --store's file (or in RAM), users provisioned. */
static int mount_store(const char *const *users, unsigned nusers)
{
    const char *path = host_port_store_path();
    struct store_mount_stats stats;
    const struct flash *f;
    unsigned i;
    int rc;

    if (path) {
        rc = flash_file_open(&store_file, path, flash_size, FLASH_BLOCK, FLASH_PAGE);
        if (rc == FLASH_ERR_RANGE) {
            fprintf(stderr, "litedav-host: the store file %s is not a %u MiB image (--store-size "
                            "gives the store's size; an image is never resized)\n",
                    path, (unsigned)(flash_size >> 20));
            return -1;
        }
        if (rc != FLASH_OK) {
            fprintf(stderr, "litedav-host: cannot open the store file %s\n", path);
            return -1;
        }
        f = &store_file.flash;
    } else {
        ram_flash = malloc(flash_size);
        if (!ram_flash || flash_ram_init(&store_ram, ram_flash, flash_size, FLASH_BLOCK, FLASH_PAGE))
            return -1;
        f = &store_ram.flash;
    }
    if (fragment_cache_kib) {
        void *mem = malloc((size_t)fragment_cache_kib * 1024u);
        if (!mem) {
            fprintf(stderr, "litedav-host: no memory for a %u KiB fragment cache\n", fragment_cache_kib);
            return -1;
        }
        dav_fragments_init(mem, (size_t)fragment_cache_kib * 1024u);
    }
    rc = dav_mount(f, &stats);
    if (rc != STORE_OK) {
        fprintf(stderr, "litedav-host: store: %s\n", store_strerror(rc));
        close_store();
        return -1;
    }
    for (i = 0; i < nusers; i++) {
        char name[AUTH_USER_MAX + 1];
        const char *colon = strchr(users[i], ':');
        uint8_t salt[AUTH_SALT_SIZE];
        if ((size_t)(colon - users[i]) > AUTH_USER_MAX) {
            fprintf(stderr, "litedav-host: user name too long: %s\n", users[i]);
            close_store();
            return -1;
        }
        memcpy(name, users[i], (size_t)(colon - users[i]));
        name[colon - users[i]] = '\0';
        if (read_urandom(salt, sizeof(salt))) {
            fprintf(stderr, "litedav-host: cannot read /dev/urandom for user %s's password salt\n", name);
            close_store();
            return -1;
        }
        rc = auth_set_password(dav_mounted_store(), name, colon + 1, salt);
        if (rc != STORE_OK) {
            fprintf(stderr, "litedav-host: user %s: %s\n", name, store_strerror(rc));
            close_store();
            return -1;
        }
    }
    printf("store: %s, %" PRIu32 " collections, %" PRIu32 " objects, %" PRIu32 " users "
           "(%" PRIu32 " records replayed, %" PRIu32 " torn bytes dropped)\n",
           path ? path : "in RAM", stats.collections, stats.objects, stats.users,
           stats.records, stats.torn_bytes);
    if (dav_mount_check()->problems)
        printf("store check: %" PRIu32 " problems, first: %s at 0x%" PRIx32 "\n",
               dav_mount_check()->problems, dav_mount_check()->first_problem,
               dav_mount_check()->first_problem_addr);
    else
        printf("store check: ok (%" PRIu32 " records checked)\n", dav_mount_check()->records);
    return 0;
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

/* RFC 6528 ISNs (tcp_isn.h) under a key from the kernel's random bytes. */
static int key_isns(void)
{
    unsigned char seed[16];

    if (read_urandom(seed, sizeof(seed))) {
        fprintf(stderr, "litedav-host: cannot read /dev/urandom for the TCP sequence number key\n");
        return -1;
    }
    tcp_isn_stir(seed, sizeof(seed));
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        {"port", required_argument, NULL, 'p'},
        {"store", required_argument, NULL, 's'},
        {"store-size", required_argument, NULL, 'S'},
        {"user", required_argument, NULL, 'u'},
        {"dav-wait-ms", required_argument, NULL, 'w'},
        {"fragment-cache", required_argument, NULL, 'f'},
        {"drop-every", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static struct netif netif;
    struct slirp_netif_config net_config = {.host_port = 0, .guest_port = HTTP_PORT};
    struct sigaction stop_action;
    sigset_t stop_signals, unblocked;
    ip4_addr_t ip, mask, gw;
    const char *users[MAX_USERS];
    unsigned nusers = 0;
    int opt;

    while ((opt = getopt_long(argc, argv, "p:s:S:u:w:f:d:h", options, NULL)) != -1) {
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
        case 'S': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 1 || (unsigned long)v > (FLASH_SIZE_MAX >> 20)) {
                fprintf(stderr, "%s: --store-size wants MiB from 1 to %u, not \"%s\"\n", argv[0],
                        (unsigned)(FLASH_SIZE_MAX >> 20), optarg);
                return 2;
            }
            flash_size = (uint32_t)v << 20;
            break;
        }
        case 'u':
            if (!strchr(optarg, ':') || optarg[0] == ':' || nusers == MAX_USERS) {
                fprintf(stderr, "%s: --user wants NAME:PASSWORD (at most %d)\n", argv[0], MAX_USERS);
                return 2;
            }
            users[nusers++] = optarg;
            break;
        case 'w': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 1 || v > 600000) {
                fprintf(stderr, "%s: --dav-wait-ms wants a number from 1 to 600000, not \"%s\"\n",
                        argv[0], optarg);
                return 2;
            }
            dav_set_ctx_wait_ms((uint32_t)v);
            break;
        }
        case 'f': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 0 || (v > 0 && v < (long)(DAV_FRAGMENT_CACHE_MIN / 1024u)) ||
                v > (long)FRAGMENT_CACHE_KIB_MAX) {
                fprintf(stderr, "%s: --fragment-cache wants KiB, 0 or from %u to %u, not \"%s\"\n",
                        argv[0], (unsigned)(DAV_FRAGMENT_CACHE_MIN / 1024u), FRAGMENT_CACHE_KIB_MAX, optarg);
                return 2;
            }
            fragment_cache_kib = (uint32_t)v;
            break;
        }
        case 'd': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 2 || v > 1000000) {
                fprintf(stderr, "%s: --drop-every wants a number from 2 to 1000000, not \"%s\"\n",
                        argv[0], optarg);
                return 2;
            }
            net_config.drop_every = (uint32_t)v;
            break;
        }
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

    host_port_init();
    printf("\nLiteDAV firmware (%s, %" PRIu32 " Hz)\n", port_name(), port_cycles_hz());
    if (mount_store(users, nusers) != 0)
        return 1;
    if (key_isns() != 0)
        return 1;
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

    if (app_start(HTTP_PORT) != 0) {
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
        app_poll();
        if (!work)
            port_stats.idle_cycles += port_cycles() - woke;
    }

    printf("[litedav-host] stopping (%s): %" PRIu64 " frames in, %" PRIu64 " out, "
           "%" PRIu64 " dropped\n",
           stop_signal == SIGINT ? "SIGINT" : "SIGTERM", port_stats.frames_in,
           port_stats.frames_out, port_stats.rx_dropped + port_stats.tx_dropped);
    netif_set_down(&netif);
    slirp_netif_shutdown(&netif);
    close_store();
    return 0;
}
