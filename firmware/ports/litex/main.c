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

#include "httpd.h"
#include "liteeth_netif.h"
#include "port.h"

/* Static address on the simulator's user-mode network (libslirp defaults). */
#define IP_ADDR   "10.0.2.15"
#define NETMASK   "255.255.255.0"
#define GATEWAY   "10.0.2.2"
#define HTTP_PORT 80

struct port_stats port_stats;

/* --- port.h ------------------------------------------------------------- */

uint64_t port_cycles(void)
{
    timer0_uptime_latch_write(1);
    return timer0_uptime_cycles_read();
}

uint32_t port_cycles_hz(void) { return CONFIG_CLOCK_FREQUENCY; }

const char *port_name(void) { return "litex-" CONFIG_PLATFORM_NAME; }

/* lwIP's clock: milliseconds of simulated (or real) sys_clk time. */
u32_t sys_now(void)
{
    return (u32_t)(port_cycles() / (CONFIG_CLOCK_FREQUENCY / 1000));
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

/* --- main loop ------------------------------------------------------------ */

int main(void)
{
    static struct netif netif;
    ip4_addr_t ip, mask, gw;

    printf("\nLiteDAV firmware (%s, %" PRIu32 " Hz)\n", port_name(), port_cycles_hz());
    lwip_init();
    ip4addr_aton(IP_ADDR, &ip);
    ip4addr_aton(NETMASK, &mask);
    ip4addr_aton(GATEWAY, &gw);
    netif_add(&netif, &ip, &mask, &gw, NULL, liteeth_netif_init, ethernet_input);
    netif_set_default(&netif);
    netif_set_up(&netif);
    /* Announce ourselves: the user-mode network learns our MAC from this. */
    etharp_request(&netif, &gw);

    if (httpd_init(HTTP_PORT) != 0) {
        printf("httpd: cannot listen on port %d\n", HTTP_PORT);
        litedav_halt();
    }
    printf("listening on http://%s:%d/\n", IP_ADDR, HTTP_PORT);

    for (;;) {
        uint64_t start = port_cycles();
        int work = liteeth_netif_poll(&netif);
        sys_check_timeouts();
        if (!work)
            port_stats.idle_cycles += port_cycles() - start;
    }
}
