/* lwIP configuration for the LiteX SoC: raw API, NO_SYS, one Ethernet netif.
 * Sizes assume main RAM in the megabytes (sim: 16 MiB). */
#ifndef LITEDAV_LWIPOPTS_H
#define LITEDAV_LWIPOPTS_H

#include "../lwipopts_base.h"

#define MEM_ALIGNMENT               4
#define MEM_SIZE                    (2 * 1024 * 1024)
/* The heap starts the free RAM after .bss (the linker's __heap_start, aligned),
 * so crt0 does not spend boot time clearing 2 MiB that mem_init() sets up
 * itself; main.c checks that it fits below the RAM flash. */
extern char __heap_start[];
#define LWIP_RAM_HEAP_POINTER       ((void *)__heap_start)
#define MEMP_NUM_PBUF               256
/* One PCB (~200 bytes) per connection: 4,000 idle keep-alive clients and room
 * to serve new ones (bench/idle_conns.py; the HTTP side is app_port_config.h). */
#ifndef MEMP_NUM_TCP_PCB  /* smaller for a test of what happens at the limit (tests/test_sim_floods.py) */
#define MEMP_NUM_TCP_PCB            4200
#endif
#define MEMP_NUM_TCP_PCB_LISTEN     4
/* Before lwIP looks for the connection a segment is for, one in TIME-WAIT
 * (firmware/app/net/tcp_time_wait.c) or parked idle (firmware/app/net/tcp_park.c)
 * goes back on lwIP's list. */
struct pbuf;
struct netif;
void tcp_time_wait_input(const struct pbuf *p);
int tcp_park_input(struct pbuf *p, struct netif *inp);
#define LWIP_HOOK_IP4_INPUT(p, inp) (tcp_time_wait_input(p), tcp_park_input(p, inp))
#define MEMP_NUM_TCP_SEG            512
/* PBUF_POOL: the offload NIC's RX ring (256, offload_netif.c) and 128 more
 * for the frames lwIP holds; 384 x 1.5 KiB, ~600 KB of the MBs of main RAM. */
#define PBUF_POOL_SIZE              384
#define PBUF_POOL_BUFSIZE           1536
/* The memp pools (~880 KB: 4,200 PCBs, the pbuf pool) live in picolibc's
 * .preserve section, which crt0 does not clear (NOLOAD, not part of .bss).
 * lwIP needs no zeroed pool memory (MEMP_MEM_INIT stays 0): memp_init() links
 * every element into its pool's free list, and each allocation sets what it
 * uses (tcp_alloc, udp_new and the reassembly clear the whole element;
 * pbuf_alloc, tcp_create_segment, tcp_seg_copy, sys_timeout and tcp_listen set
 * every field they read), as they must for an element freed and reused. */
#define LWIP_DECLARE_MEMORY_ALIGNED(variable_name, size) \
    u8_t variable_name[LWIP_MEM_ALIGN_BUFFER(size)] __attribute__((section(".preserve." #variable_name)))

#define TCP_MSS                     1460
/* Windows as large as 16 bits allow (no window scaling): a bulk transfer at
 * 1 Gbit/s keeps the link busy for 0.5 ms per window. */
#define TCP_WND                     (44 * TCP_MSS)
#define TCP_SND_BUF                 (44 * TCP_MSS)
#define TCP_LISTEN_BACKLOG          1
/* The TCP timers run on simulated cycles; a shorter tick keeps delayed ACKs
 * and retransmissions reasonable when the simulation runs slower than real time. */
#define TCP_TMR_INTERVAL            50

/* Checksums are on/off per netif (netif->chksum_flags): the offload NIC's
 * driver leaves IPv4/TCP/UDP generation to the NIC and turns verification
 * off per received frame the NIC found good; the LiteEth driver keeps all on. */
#define LWIP_CHECKSUM_CTRL_PER_NETIF 1

/* The offload NIC cuts large TCP segments (offload_tso.c): lwIP's TCP hooks
 * tell it the connection's real MSS, and IP must pass segments larger than
 * the MTU to the driver instead of fragmenting them (the driver drops other
 * datagrams that large, counted as tx_dropped). */
#include <generated/soc.h>
/* Half-open connections the listener keeps before the SYN queue evicts the
 * oldest (syn_queue.c). 128 where the receive side takes in the SYNs of more
 * than 100 clients connecting at once in one burst (the offload NIC's RX ring,
 * a LiteEth MAC with more than 64 RX slots): with 64, the burst's last SYNs
 * evict the first clients' half-open connections and those clients are reset.
 * 64 otherwise: 32 RX slots (the simulator's default) never deliver such a
 * burst, and each half-open connection makes every SYN cost more (lwIP's
 * demultiplexing walks them all, so does the heap's search for its lowest
 * free block past their SYN-ACKs); at 128 a SYN flood costs the LiteEth SoC
 * more cycles a SYN than the flood test leaves between them, its RX slots stay
 * full and a real client's handshake is dropped until the flood evicts it
 * (tests/test_sim_floods.py; README.md has the cycles). */
#if defined(LITEDAV_NIC_OFFLOAD) || (defined(ETHMAC_RX_SLOTS) && ETHMAC_RX_SLOTS > 64)
#define TCP_DEFAULT_LISTEN_BACKLOG  128
#else
#define TCP_DEFAULT_LISTEN_BACKLOG  64
#endif
#ifdef LITEDAV_NIC_OFFLOAD
#define LWIP_TCP_PCB_NUM_EXT_ARGS   1
#define LWIP_HOOK_TCP_OUT_ADD_TCPOPTS(p, hdr, pcb, opts) \
    tso_output_hook(pcb, syn_queue_output_hook(pcb, opts))
#define IP_FRAG                     0
#define LWIP_SUPPORT_CUSTOM_PBUF    1  /* conn_admission.c: pieces of unfinished heads (HTTPD_HEAD_PIECES) */
#endif

/* Every received TCP segment with its PCB goes first to the SYN queue
 * (firmware/app/net/syn_queue.c, sized in app_config.h): a SYN that finds every
 * PCB taken waits there instead of being dropped, and a SYN reusing the ports
 * of a connection in TIME-WAIT reopens it. Whatever the queue does not take
 * goes on to the TSO hook on the offload NIC's SoC; the queue's ERR_ABRT
 * (it took the segment, or freed the PCB in TIME-WAIT) ends it there. */
#define LWIP_HOOK_FILENAME          "litex_hooks.h"
#define LWIP_HOOK_TCP_ISN           tcp_isn_hook  /* RFC 6528 (firmware/app/net/tcp_isn.h) */
/* Every segment lwIP builds passes the SYN queue's output hook: a half-open
 * connection's SYN-ACK gives it an error callback that counts its end by lwIP
 * itself (status page: syn_half_open_dropped); the offload build's definition
 * above chains the TSO hook after it. */
#ifndef LITEDAV_NIC_OFFLOAD
#define LWIP_HOOK_TCP_OUT_ADD_TCPOPTS(p, hdr, pcb, opts) syn_queue_output_hook(pcb, opts)
#endif
#ifdef LITEDAV_NIC_OFFLOAD
#define LWIP_HOOK_TCP_INPACKET_PCB(pcb, hdr, optlen, opt1len, opt2, p) \
    (syn_queue_input_hook(pcb, hdr, optlen, opt1len, opt2, p) == ERR_OK ? tso_input_hook(pcb, hdr, p) \
                                                                     : ERR_ABRT)
#else
#define LWIP_HOOK_TCP_INPACKET_PCB(pcb, hdr, optlen, opt1len, opt2, p) \
    syn_queue_input_hook(pcb, hdr, optlen, opt1len, opt2, p)
#endif

#endif
