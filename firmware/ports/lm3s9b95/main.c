/* LiteDAV on the TI Stellaris LM3S9B95 (Cortex-M3) and QEMU's lm3s6965evb:
 * lwIP (NO_SYS) on the on-chip Ethernet MAC, served from a polled main loop
 * that sleeps in WFI when there is nothing to do. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lwip/etharp.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "lwip/sys.h"
#include "lwip/timeouts.h"
#include "netif/ethernet.h"

#include "dav/dav.h"
#include "platform/flash_ram.h"
#include "http/httpd.h"
#include "internal_flash.h"
#include "lm3s_port.h"
#include "platform/port.h"
#include "appliance/app.h"
#include "net/tcp_isn_lwip.h"
#include "semihost_flash.h"
#include "stellaris_eth.h"

/* Static address on QEMU's user-mode network (slirp defaults). */
#define IP_ADDR   "10.0.2.15"
#define NETMASK   "255.255.255.0"
#define GATEWAY   "10.0.2.2"
#define HTTP_PORT 80
#define LINK_POLL_MS 500u

/* The store: on the real chip, the upper 128 KiB of the internal flash
 * (lm3s9b95.ld's STORE region, internal_flash.c), so it survives a reset and
 * a power cut. QEMU does not emulate flash programming: the QEMU build keeps
 * the store in a RAM flash instead, lost at reset; 512-byte blocks keep the
 * compaction reserve (a few blocks) small. */
#if defined(LM3S_QEMU) && defined(LM3S_QEMU_SEMIHOST_STORE)
/* Benchmarks: the real chip's 128 KiB store geometry in a host file
 * (semihost_flash.c), which also frees the RAM store's SRAM. */
#ifndef SEMIHOST_STORE_FILE
#define SEMIHOST_STORE_FILE "lm3s-store.bin"
#endif
#ifndef SEMIHOST_STORE_BYTES
#define SEMIHOST_STORE_BYTES (128u * 1024u)
#endif
static struct semihost_flash host_store;

const struct flash *port_flash(void) { return NULL; }

static const struct flash *store_flash(char *where, size_t cap)
{
    snprintf(where, cap, "in host file %s (%u KiB, semihosting)", SEMIHOST_STORE_FILE,
             (unsigned)(SEMIHOST_STORE_BYTES / 1024u));
    if (semihost_flash_init(&host_store, SEMIHOST_STORE_FILE, SEMIHOST_STORE_BYTES) != FLASH_OK)
        return NULL;
    return &host_store.flash;
}
#elif defined(LM3S_QEMU)
#ifndef RAM_STORE_BYTES
#define RAM_STORE_BYTES (16u * 512u)
#endif
#define RAM_STORE_BLOCK 512u
#define RAM_STORE_PAGE 256u
static uint8_t ram_store_mem[RAM_STORE_BYTES] __attribute__((aligned(4)));
static struct flash_ram ram_store;

const struct flash *port_flash(void) { return NULL; }

static const struct flash *store_flash(char *where, size_t cap)
{
    snprintf(where, cap, "in RAM (%u bytes)", (unsigned)sizeof(ram_store_mem));
    if (flash_ram_init(&ram_store, ram_store_mem, sizeof(ram_store_mem), RAM_STORE_BLOCK,
                       RAM_STORE_PAGE) != FLASH_OK)
        return NULL;
    return &ram_store.flash;
}
#else
extern const uint8_t __store_start[], __store_size[];   /* lm3s9b95.ld */
static struct internal_flash store_region;

const struct flash *port_flash(void)
{
    if (!store_region.flash.ops &&
        internal_flash_init(&store_region, (uint32_t)(uintptr_t)__store_start,
                            (uint32_t)(uintptr_t)__store_size) != FLASH_OK)
        return NULL;
    return &store_region.flash;
}

static const struct flash *store_flash(char *where, size_t cap)
{
    snprintf(where, cap, "in internal flash at 0x%05" PRIx32 " (%" PRIu32 " KiB)",
             (uint32_t)(uintptr_t)__store_start, (uint32_t)(uintptr_t)__store_size / 1024u);
    return port_flash();
}
#endif

/* No RAM to spare for /bulk (APP_BULK_SIZE is 0 here). */
uint8_t *port_bulk_buffer(uint32_t size) { return NULL; }

/* stellaris_eth.c copies every frame into the MAC's FIFO at once. */
int port_tx_holds(const void *start, const void *end)
{
    (void)start, (void)end;
    return 0;
}

static void mount_store(void)
{
    struct store_mount_stats stats;
    char where[64];
    const struct flash *f = store_flash(where, sizeof(where));
    int rc;
    if (!f) {
        cortex_m_printf("store: %s: bad flash geometry\n", where);
        return;
    }
    rc = dav_mount(f, &stats);
    if (rc != STORE_OK) {
        /* the status page and static files still work; /dav/ answers 503 */
        cortex_m_printf("store: %s: %s\n", where, store_strerror(rc));
        return;
    }
    cortex_m_printf("store: %s, %" PRIu32 " collections, %" PRIu32 " objects, %" PRIu32
                        " users\n", where, stats.collections, stats.objects, stats.users);
}

static int work_pending(void) { return stellaris_eth_rx_pending(); }

int main(void)
{
    static struct netif netif;
    ip4_addr_t ip, mask, gw;
    uint32_t last_link_poll = 0;

    lm3s_board_init();
    cortex_m_printf("\nLiteDAV firmware (%s, %" PRIu32 " Hz)\n", port_name(), port_cycles_hz());
    mount_store();
    lwip_init();
    ip4addr_aton(IP_ADDR, &ip);
    ip4addr_aton(NETMASK, &mask);
    ip4addr_aton(GATEWAY, &gw);
    netif_add(&netif, &ip, &mask, &gw, NULL, stellaris_eth_init, ethernet_input);
    netif_set_default(&netif);
    netif_set_up(&netif);
    tcp_isn_stir_boot(&netif, port_cycles());
    /* Announce ourselves: the user-mode network learns our MAC from this. */
    etharp_request(&netif, &gw);

    if (app_start(HTTP_PORT) != 0)
        cortex_m_fatal("httpd: cannot listen on port 80");
    cortex_m_printf("listening on http://%s:%d/\n", IP_ADDR, HTTP_PORT);

    for (;;) {
        uint64_t start = port_cycles();
        int work = stellaris_eth_poll(&netif);
        sys_check_timeouts();
        app_poll();
        if (sys_now() - last_link_poll >= LINK_POLL_MS) {
            last_link_poll = sys_now();
            stellaris_eth_link_poll(&netif);
        }
        if (!work) {
            cortex_m_idle(work_pending);
            port_stats.idle_cycles += port_cycles() - start;
        }
    }
}
