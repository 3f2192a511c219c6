/* LiteDAV on the Gowin GW1NSR-4C's hard Cortex-M3 (EMCU, Sipeed Tang Nano 4K):
 * the network bring-up image. lwIP (NO_SYS) on LiteEth's MAC behind an RMII
 * PHY module, polled from the main loop; it answers ping and serves a
 * one-page status (uptime, frame counters) on port 80.
 *
 * The CalDAV application (firmware/app) does not fit this chip: it needs
 * about 100 KB of code and 50 KB of RAM (the LM3S9B95 build), the EMCU has
 * 32 KiB of flash and 8 KiB of SRAM. What is shared with the LM3S9B95 port
 * is the Cortex-M3 code (../cortex_m: start-up, vectors, linker sections,
 * SysTick time base, console, idle) and, with the LiteX port, the MAC
 * driver (../litex/liteeth_netif.c). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <generated/csr.h>
#include <generated/soc.h>

#include "lwip/init.h"
#include "lwip/netif.h"
#include "lwip/tcp.h"
#include "lwip/timeouts.h"
#include "netif/ethernet.h"

#include "cortex_m.h"
#include "liteeth_netif.h"
#include "platform/port.h"

#ifndef EMCU_IP
#define EMCU_IP "192.168.1.50"
#endif
#ifndef EMCU_NETMASK
#define EMCU_NETMASK "255.255.255.0"
#endif
#ifndef EMCU_GATEWAY
#define EMCU_GATEWAY "192.168.1.1"
#endif
#define HTTP_PORT 80

#define IRQ_COUNT 32   /* the EMCU's NVIC inputs; none is used (the MAC is polled) */
__attribute__((section(".isr_vector_irq"), used)) const cortex_m_vector emcu_irq_vectors[IRQ_COUNT] = {
    [0 ... IRQ_COUNT - 1] = cortex_m_unexpected_irq,
};

/* The console is LiteX's UART on the fabric (the EMCU's own UARTs are not
 * wired out by LiteX's gowin_emcu). */
void cortex_m_console_putc(char c)
{
    while (uart_txfull_read())
        ;
    uart_rxtx_write((uint8_t)c);
}

const char *port_name(void) { return "gowin-emcu"; }

/* One response per connection: the status, then close. */
static err_t status_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    char page[224];
    int n;

    if (!p) {
        tcp_close(pcb);
        return ERR_OK;
    }
    tcp_recved(pcb, p->tot_len);
    pbuf_free(p);
    n = snprintf(page, sizeof(page),
                 "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n"
                 "LiteDAV network bring-up on %s\nuptime_ms %" PRIu32 "\nframes_in %" PRIu32
                 "\nframes_out %" PRIu32 "\nrx_dropped %" PRIu32 "\n",
                 port_name(), cortex_m_millis(), (uint32_t)port_stats.frames_in,
                 (uint32_t)port_stats.frames_out, (uint32_t)port_stats.rx_dropped);
    if (n > 0 && tcp_write(pcb, page, (u16_t)(n < (int)sizeof(page) ? n : (int)sizeof(page) - 1),
                           TCP_WRITE_FLAG_COPY) == ERR_OK)
        tcp_output(pcb);
    tcp_recv(pcb, NULL);
    if (tcp_close(pcb) != ERR_OK)
        tcp_abort(pcb);
    return err == ERR_OK ? ERR_OK : ERR_ABRT;
}

static err_t status_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
    if (err != ERR_OK || !pcb)
        return ERR_VAL;
    tcp_recv(pcb, status_recv);
    return ERR_OK;
}

int main(void)
{
    static struct netif netif;
    struct tcp_pcb *listener;
    ip4_addr_t ip, mask, gw;

    cortex_m_systick_init(CONFIG_CLOCK_FREQUENCY);
    cortex_m_printf("\nLiteDAV network bring-up (%s, %" PRIu32 " Hz)\n", port_name(), port_cycles_hz());
    lwip_init();
    ip4addr_aton(EMCU_IP, &ip);
    ip4addr_aton(EMCU_NETMASK, &mask);
    ip4addr_aton(EMCU_GATEWAY, &gw);
    netif_add(&netif, &ip, &mask, &gw, NULL, liteeth_netif_init, ethernet_input);
    netif_set_default(&netif);
    netif_set_up(&netif);

    listener = tcp_new();
    if (!listener || tcp_bind(listener, IP_ADDR_ANY, HTTP_PORT) != ERR_OK ||
        !(listener = tcp_listen(listener)))
        cortex_m_fatal("cannot listen on port 80");
    tcp_accept(listener, status_accept);
    cortex_m_printf("ping %s; status on http://%s/\n", EMCU_IP, EMCU_IP);

    for (;;) {
        liteeth_netif_poll(&netif);
        sys_check_timeouts();
    }
}
