/* Which bucket of a power-of-two hash table a TCP connection falls in, by
 * its remote address and port and our port: one hash for the tables that
 * find a connection in O(1) off lwIP's lists (tcp_park.c, tcp_time_wait.c). */
#ifndef LITEDAV_TCP_CONN_HASH_H
#define LITEDAV_TCP_CONN_HASH_H

#include <stdint.h>

#include "lwip/ip_addr.h"
#include "lwip/tcp.h"

static inline uint32_t tcp_conn_hash(uint32_t remote_ip, uint16_t remote_port, uint16_t local_port,
                                     uint32_t buckets)
{
    uint32_t key = remote_ip ^ ((uint32_t)remote_port << 16 | local_port);
    key *= 2654435761u; /* Knuth's multiplicative hash: the top bits are the best mixed */
    return key >> (32 - __builtin_ctz(buckets));
}

static inline uint32_t tcp_conn_hash_pcb(const struct tcp_pcb *pcb, uint32_t buckets)
{
    return tcp_conn_hash(ip4_addr_get_u32(ip_2_ip4(&pcb->remote_ip)), pcb->remote_port, pcb->local_port,
                         buckets);
}

#endif
