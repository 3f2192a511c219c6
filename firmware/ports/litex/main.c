/* LiteDAV firmware for the LiteX SoC: bring up lwIP on the LiteEth MAC and
 * serve HTTP from a polled main loop (NO_SYS). */
#include <inttypes.h>
#include <stdio.h>

#include <generated/csr.h>
#include <generated/soc.h>

#include "lwip/etharp.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "lwip/timeouts.h"
#include "netif/ethernet.h"

#include "dav/dav.h"
#include "platform/flash_ram.h"
#include "http/httpd.h"
#ifdef LITEDAV_NIC_OFFLOAD
#include "offload_netif.h"
#define nic_netif_init offload_netif_init
#define nic_netif_poll offload_netif_poll
#else
#include "liteeth_netif.h"
#define nic_netif_init liteeth_netif_init
#define nic_netif_poll liteeth_netif_poll
#endif
#include "platform/port.h"
#include "platform/profile.h"
#include "appliance/app.h"
#include "net/tcp_isn_lwip.h"

/* Static address on the simulator's user-mode network (libslirp defaults). */
#define IP_ADDR   "10.0.2.15"
#define NETMASK   "255.255.255.0"
#define GATEWAY   "10.0.2.2"
#define HTTP_PORT 80

struct port_stats port_stats;

/* When the SoC has no flash (port_flash() returns NULL), the store lives
 * in main RAM: 4 MiB, 4 KiB sectors, 256-byte pages, lost at reset. It is
 * carved from the top of the free RAM between .bss and the stack, not from
 * .bss: crt0 clears .bss word by word, and 4 MiB more of that cost seconds of
 * simulated boot time for memory flash_ram_init() fills with 0xFF anyway. */
#define RAM_FLASH_SIZE (4u * 1024u * 1024u)
extern char __heap_end[];
static struct flash_ram store_ram;
/* The /bulk buffer (bulk.c) sits below the RAM flash, for the same reason
 * (at the top of the free RAM when the SoC has a flash for the store: the
 * boards' 8 MiB of SDRAM leave no room for an unused RAM flash). */
#define BULK_AREA_SIZE (1024u * 1024u)
#define RAM_FLASH_ROOM (port_flash() ? 0u : RAM_FLASH_SIZE)
#define FREE_RAM_NEEDED (MEM_SIZE + 1024u + BULK_AREA_SIZE + RAM_FLASH_ROOM)

/* --- port.h ------------------------------------------------------------- */

uint64_t port_cycles(void)
{
    timer0_uptime_latch_write(1);
    return timer0_uptime_cycles_read();
}

uint32_t port_cycles_hz(void) { return CONFIG_CLOCK_FREQUENCY; }

const char *port_name(void) { return "litex-" CONFIG_PLATFORM_NAME; }

/* An SoC without a flash for the store; the flash drivers override it when their
 * gateware is there: flash_litespi.c (LiteSPI and the store constants: boards, the
 * simulator with --spi-flash), flash_sim.c (the simulator's sim flash). */
__attribute__((weak)) const struct flash *port_flash(void) { return NULL; }

uint8_t *port_bulk_buffer(uint32_t size)
{
    if (size > BULK_AREA_SIZE || (size_t)(__heap_end - __heap_start) < FREE_RAM_NEEDED)
        return NULL;
    return (uint8_t *)((uintptr_t)__heap_end - RAM_FLASH_ROOM - BULK_AREA_SIZE);
}

/* The network driver's frames still queued for DMA (port.h). */
int port_tx_holds(const void *start, const void *end)
{
#ifdef LITEDAV_NIC_OFFLOAD
    return offload_netif_tx_holds(start, end);
#else
    (void)start, (void)end;
    return 0; /* liteeth_netif.c copies every frame into a MAC slot at once */
#endif
}

/* Kept responses (dav_fragments.c) take the free RAM between lwIP's heap
 * (at __heap_start, MEM_SIZE and its two list headers) and the /bulk buffer. */
static void fragments_init(void)
{
    uintptr_t start = ((uintptr_t)__heap_start + MEM_SIZE + 1024u + 63u) & ~(uintptr_t)63u;
    uintptr_t end = (uintptr_t)__heap_end - RAM_FLASH_ROOM - BULK_AREA_SIZE;
    if (end > start)
        dav_fragments_init((void *)start, end - start);
}

/* lwIP's clock runs this many times faster than sys_clk time: 1 on a board.
 * The simulator's fault-injection runs patch another value into the image
 * (`litedav-sim run --lwip-clock-scale N`, found by this symbol's address),
 * the same factor as libslirp's clock there, so that both TCP ends' timers
 * (retransmission, delayed ACK, TIME-WAIT) keep their ratio while a lost
 * frame costs 1/N of its seconds of simulated time. Volatile: the compiler
 * must not fold the 1 in. */
volatile const uint32_t port_lwip_clock_scale = 1;

/* lwIP's clock: milliseconds of simulated (or real) sys_clk time, times
 * port_lwip_clock_scale. The main loop asks every turn; a 64-bit division is
 * a libgcc call of hundreds of cycles on rv32, so whole lwIP milliseconds are
 * carried forward instead. They are counted one by one (every 1/scale of a
 * sys_clk millisecond), not a scale's worth at a time: lwIP runs a cyclic
 * timer at most once per sys_now() value, so steps of `scale` ms would cap
 * its TCP timer at one tick per sys_clk millisecond (50 x real time with
 * TCP_TMR_INTERVAL 50). */
u32_t sys_now(void)
{
    static uint64_t counted_cycles;
    static u32_t now_ms;
    uint32_t scale = port_lwip_clock_scale;
    const uint32_t cycles_per_lwip_ms = CONFIG_CLOCK_FREQUENCY / 1000 / (scale ? scale : 1);
    uint64_t elapsed = port_cycles() - counted_cycles;

    if (elapsed >= cycles_per_lwip_ms) {
        u32_t ms = elapsed >> 32 ? (u32_t)(elapsed / cycles_per_lwip_ms) : (u32_t)elapsed / cycles_per_lwip_ms;
        now_ms += ms;
        counted_cycles += (uint64_t)ms * cycles_per_lwip_ms;
    }
    return now_ms;
}

unsigned int litedav_rand(void)
{
    static uint32_t state;
    if (!state)
        state = (uint32_t)port_cycles() | 1;
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
}

void litedav_halt(void)
{
    for (;;)
        ;
}

/* --- console on the LiteX UART (picolibc stdio) --------------------------- */

static int uart_putc(char c, FILE *file)
{
    (void)file;
    if (c == '\n')
        uart_putc('\r', file);
    while (uart_txfull_read())
        ;
    uart_rxtx_write((unsigned char)c);
    return (unsigned char)c;
}

static FILE console = FDEV_SETUP_STREAM(uart_putc, NULL, NULL, _FDEV_SETUP_WRITE);
FILE *const stdout = &console;
FILE *const stderr = &console;
FILE *const stdin = &console;

void _exit(int code)
{
    printf("firmware exited with %d\n", code);
    litedav_halt();
}

/* --- the store -------------------------------------------------------------- */

/* One line the power-cut test reads after every boot (tests/test_sim_powerfail.py). */
static void print_store_check(const struct store_mount_stats *stats)
{
    const struct store_check *c = dav_mount_check();
    if (c->problems)
        printf("store check: %" PRIu32 " problems, first: %s at 0x%" PRIx32 "\n", c->problems,
               c->first_problem, c->first_problem_addr);
    else
        printf("store check: ok (%" PRIu32 " blocks, %" PRIu32 " records replayed, %" PRIu32
               " checked, %" PRIu32 " torn bytes dropped)\n",
               c->blocks, stats->records, c->records, stats->torn_bytes);
}

static void mount_store(void)
{
    const struct flash *f = port_flash();
    struct store_mount_stats stats;
    int rc;
    if (!f) {
        /* lwIP's heap (LWIP_RAM_HEAP_POINTER) is at the bottom of the same area. */
        if ((size_t)(__heap_end - __heap_start) < FREE_RAM_NEEDED) {
            printf("store: no flash and no room for a RAM flash\n");
            return;
        }
        flash_ram_init(&store_ram, (uint8_t *)((uintptr_t)__heap_end - RAM_FLASH_SIZE), RAM_FLASH_SIZE,
                       4096, 256);
        f = &store_ram.flash;
    }
    fragments_init();
    rc = dav_mount(f, &stats);
    if (rc != STORE_OK) {
        /* the status page and static files still work; /dav/ answers 503 */
        printf("store: %s\n", store_strerror(rc));
        return;
    }
    printf("store: %s, %" PRIu32 " collections, %" PRIu32 " objects, %" PRIu32 " users\n",
           f == &store_ram.flash ? "in RAM" : "on flash", stats.collections, stats.objects,
           stats.users);
    print_store_check(&stats);
}

/* --- main loop ------------------------------------------------------------ */

int main(void)
{
    static struct netif netif;
    ip4_addr_t ip, mask, gw;
    /* the cycle counter starts at reset: what crt0 spent (copying .data, clearing .bss) */
    uint64_t main_cycle = port_cycles();

    printf("\nLiteDAV firmware (%s, %" PRIu32 " Hz)\n", port_name(), port_cycles_hz());
    if (port_lwip_clock_scale != 1)
        printf("lwIP clock: %" PRIu32 " x sys_clk time (simulator time dilation)\n",
               port_lwip_clock_scale);
#if defined(LITEDAV_PROFILE) && defined(LITEDAV_PROFILE_BOOT)
    /* LITEDAV_FW_DEFS=-DLITEDAV_PROFILE_BOOT with PROFILE=1: the first GET /profile covers
     * the boot too (the store's mount and check) */
    profile_start();
#endif
    mount_store();
    lwip_init();
    ip4addr_aton(IP_ADDR, &ip);
    ip4addr_aton(NETMASK, &mask);
    ip4addr_aton(GATEWAY, &gw);
    if (!netif_add(&netif, &ip, &mask, &gw, NULL, nic_netif_init, ethernet_input)) {
        printf("netif: the Ethernet driver did not start\n");
        litedav_halt();
    }
    netif_set_default(&netif);
    netif_set_up(&netif);
    tcp_isn_stir_boot(&netif, port_cycles());
    /* Announce ourselves: the user-mode network learns our MAC from this. */
    etharp_request(&netif, &gw);

    if (app_start(HTTP_PORT) != 0) {
        printf("httpd: cannot listen on port %d\n", HTTP_PORT);
        litedav_halt();
    }
    /* tests/test_sim_http.py reads this line: every simulated boot pays these cycles */
    printf("boot: %" PRIu64 " cycles from reset to serving (%" PRIu64 " before main)\n", port_cycles(),
           main_cycle);
    printf("listening on http://%s:%d/\n", IP_ADDR, HTTP_PORT);
#ifdef LITEDAV_PROFILE
    profile_start();
    printf("profiling: GET /profile\n");
#endif

    for (;;) {
        uint64_t start = port_cycles();
        int work = nic_netif_poll(&netif);
        /* a turn that runs lwIP's timers is busy too: their walks over every
         * connection are what thousands of idle clients would cost */
        if (sys_timeouts_sleeptime() == 0)
            work = 1;
        sys_check_timeouts();
        app_poll();
        if (!work)
            port_stats.idle_cycles += port_cycles() - start;
    }
}
