/*
 * A repeated SYN-ACK from the SoC reaches libslirp without its MSS option.
 *
 * libslirp (4.7.0) reads the MSS option of every segment that carries SYN,
 * also on a connection it already has open: tcp_dooptions() calls tcp_mss(),
 * which sizes the connection's socket buffers again with sbreserve(), and
 * sbreserve() empties them. For a host-forwarded connection slirp is the
 * active opener, so when the SoC (lwIP in SYN_RCVD, which never saw slirp's
 * ACK nor the request, both lost to the MAC's full RX slots) retransmits its
 * SYN-ACK, slirp answers it with an ACK but has thrown away the request bytes
 * it still had to retransmit. Its sequence numbers still count them, so the
 * next retransmission timeout finds nothing to send, is not armed again, and
 * the connection waits for ever with the host client's request never sent
 * (seen in ab -n 400 -c 100 at clock x32: flows whose request went out, was
 * dropped, and then met the SoC's repeated SYN-ACK; every other flow's
 * request was retransmitted).
 *
 * A retransmitted SYN-ACK must still reach slirp (it answers with the ACK the
 * SoC is waiting for), and its MSS is the one slirp already took from the
 * first copy. So the guard remembers the SYN-ACKs it has let through, by
 * connection (addresses, ports) and sequence number, and in a copy with the
 * same ones it overwrites the MSS option with four no-operation options,
 * adjusting the TCP checksum (RFC 1624). A real TCP client ignores options on
 * a repeated SYN-ACK; this makes slirp do the same.
 *
 * The table: SYNACK_GUARD_SETS sets of SYNACK_GUARD_WAYS entries, a
 * connection's set chosen by a hash of its addresses and ports; a new
 * connection takes the set's least recently seen entry. A repeat comes within
 * the SoC's SYN_RCVD lifetime, while a few hundred other connections open
 * (ab -c 100); it is missed only when more than SYNACK_GUARD_WAYS newer
 * connections fell into its set. (A first version, one entry per hash slot,
 * 8,192 slots, missed one repeat of five in ab -n 400 -c 100: another
 * connection had taken its slot, and that request stalled as before.)
 */
#ifndef SLIRP_ETHERNET_SYNACK_GUARD_H
#define SLIRP_ETHERNET_SYNACK_GUARD_H

#include <stddef.h>
#include <stdint.h>

#define SYNACK_GUARD_SETS 4096
#define SYNACK_GUARD_WAYS 8

struct synack_guard {
    struct synack_seen {
        uint32_t src_ip, dst_ip, seq;   /* as in the frame (network order) */
        uint16_t src_port, dst_port;
        uint64_t stamp;                 /* the SYN-ACK's number (synacks); 0: unused */
    } seen[SYNACK_GUARD_SETS][SYNACK_GUARD_WAYS];
    uint64_t synacks, repeats, stripped;
};

/* frame: an Ethernet frame from the SoC on its way to slirp, len bytes.
 * Returns 1 when it rewrote the frame (a repeated SYN-ACK's MSS option),
 * else 0 (frame untouched). */
int synack_guard_frame(struct synack_guard *g, uint8_t *frame, size_t len);

#endif
