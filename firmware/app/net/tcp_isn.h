/* Initial sequence numbers that an off-path attacker cannot guess (RFC 6528).
 *
 * lwIP's own ISN is a counter advanced by its timer ticks: anyone who opens
 * one connection can predict the sequence numbers of the next, and inject
 * into or reset other clients' connections without seeing their traffic.
 * Here, as RFC 6528 section 3 describes:
 *
 *   ISN = M + F(local ip, local port, remote ip, remote port, secret key)
 *
 * M is a clock of 4 microsecond ticks (sys_now() x 250), so a connection's
 * ISNs still grow with time, as RFC 793 asks. F is SipHash-2-4 under a 128-bit
 * key, truncated to 32 bits.
 *
 * The key starts from nothing secret; the port stirs in what it has that an
 * attacker cannot read (tcp_isn_stir): on the microcontroller ports, the
 * cycle counter when each of the first TCP_ISN_STIR_FRAMES frames arrived
 * (its low bits vary with PHY link-up and the peers' timing; in the
 * simulator they do not, and the simulator needs no secret) and the MAC
 * address; on the host, the kernel's random bytes.
 *
 * A port enables it in its lwipopts.h with
 *   #define LWIP_HOOK_TCP_ISN tcp_isn_hook
 * and tcp_isn_lwip.h (which has tcp_isn_hook and tcp_isn_stir_boot) in its
 * LWIP_HOOK_FILENAME. The key: the MAC and the cycle counter after the
 * store's mount at boot (tcp_isn_stir_boot), then the first frames' arrival
 * cycles (tcp_isn_stir_arrival) on the microcontrollers; /dev/urandom on the
 * host. */
#ifndef LITEDAV_TCP_ISN_H
#define LITEDAV_TCP_ISN_H

#include <stddef.h>
#include <stdint.h>

/* Frames whose arrival time the ports stir into the key (then it stays). */
#define TCP_ISN_STIR_FRAMES 64

/* The ISN for a connection; addresses as lwIP holds them (network order in a
 * uint32_t), ports in host order, now_ms: sys_now(). */
uint32_t tcp_isn(uint32_t local_ip, uint16_t local_port, uint32_t remote_ip, uint16_t remote_port,
                 uint32_t now_ms);

/* Mix len bytes into the key. */
void tcp_isn_stir(const void *data, size_t len);

/* A port's receive path: the cycle counter at a frame's arrival, stirred in
 * for the first TCP_ISN_STIR_FRAMES frames (a few hundred cycles each),
 * nothing after. */
void tcp_isn_stir_arrival(uint32_t cycles);

/* SipHash-2-4 of data under a 16-byte key (little-endian, as its authors
 * define it); for the key stirring, and the test against their vectors. */
uint64_t siphash24(const uint8_t key[16], const void *data, size_t len);

#endif
