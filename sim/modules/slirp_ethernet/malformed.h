/* Malformed traffic for the slirp_ethernet module: generated frames that no
 * well-behaved sender would put on the wire, inserted into the SoC's PHY
 * among slirp's good frames while clients are served. The SoC's MAC, NIC
 * gateware and driver must drop them (or lwIP must, and answer as a stack
 * should) and go on: nothing may wedge, good traffic keeps flowing.
 *
 * Kinds (one drawn uniformly among those enabled for every frame):
 *   random_bytes   1-1600 random bytes, half of them addressed to the SoC's MAC
 *   runt           1-59 bytes of a plausible IPv4/TCP frame, not padded
 *   oversize       1519-9018 bytes (jumbo), an IPv4/TCP header in front
 *   bad_ethertype  802.3 lengths, IPv6, a VLAN tag over garbage, LLDP, ARP
 *                  with impossible hardware/protocol sizes, unknown types
 *   bad_ip_header  IPv4 with the wrong version, IHL < 5, IHL past the total
 *                  length, total length past the frame or below 20, a bad
 *                  header checksum, a broadcast or zero source
 *   ip_options     IHL 6-15 with random option bytes (bad option lengths too),
 *                  a valid TCP segment inside
 *   fragment       a first, middle or last fragment (MF, offsets) of a packet
 *                  whose other fragments never come
 *   tcp_bad_offset TCP data offset below 5 or past the segment, checksums good
 *   tcp_odd_flags  SYN+FIN, SYN+RST, FIN+RST, all flags, no flags, URG
 *   udp_icmp       UDP with a length past or short of the packet, ICMP of
 *                  unknown types and odd sizes
 *
 * IPv4 frames come from slirp's gateway (its MAC and 10.0.2.2) to the SoC
 * (10.0.2.15), so that what the SoC answers goes to slirp, which knows no
 * such connection; their TCP and UDP source ports are below 1024, where no
 * host client's port ever is, so no generated segment can belong to a real
 * connection. Header checksums are valid unless the kind is about a bad one,
 * so the frames reach past the checksum checks into the parsers.
 *
 * Timing: a frame every `interval_cycles` on average (uniform in half to one
 * and a half times it), queued to the SoC behind the frames already waiting.
 * One xorshift64* generator seeded from `seed`: the same frames, with the
 * same gaps, for the same seed. */
#ifndef LITEDAV_SLIRP_MALFORMED_H
#define LITEDAV_SLIRP_MALFORMED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "faults.h"

enum malformed_kind {
    MALFORMED_RANDOM_BYTES,
    MALFORMED_RUNT,
    MALFORMED_OVERSIZE,
    MALFORMED_BAD_ETHERTYPE,
    MALFORMED_BAD_IP_HEADER,
    MALFORMED_IP_OPTIONS,
    MALFORMED_FRAGMENT,
    MALFORMED_TCP_BAD_OFFSET,
    MALFORMED_TCP_ODD_FLAGS,
    MALFORMED_UDP_ICMP,
    MALFORMED_KINDS
};

extern const char *const malformed_names[MALFORMED_KINDS];

#define MALFORMED_MAX_FRAME 9018 /* a jumbo frame without FCS */

struct malformed {
    frame_sink sink; /* frames into the SoC */
    void *opaque;

    uint64_t seed, rng;
    uint64_t interval_cycles; /* 0: off */
    uint64_t next_cycle;
    int enabled[MALFORMED_KINDS];
    int nenabled;

    uint64_t count[MALFORMED_KINDS]; /* frames injected */
    uint64_t bytes;
    int changed;
};

void malformed_init(struct malformed *m, frame_sink sink, void *opaque);

/* From the module's `inject` argument:
 *   {"seed": N, "interval_cycles": N, "kinds": ["runt", ...] (default: all), "stats": FILE}
 * Returns 0, or -1 with a message in err. */
int malformed_configure(struct malformed *m, json_object *cfg, char *err, size_t err_len);

static inline int malformed_active(const struct malformed *m) { return m->interval_cycles > 0; }

/* Injects the frames due by `cycle`. */
void malformed_tick(struct malformed *m, uint64_t cycle);

/* Builds one frame of kind k into buf (MALFORMED_MAX_FRAME bytes); returns its
 * length and sets *flags (FRAME_*). */
size_t malformed_build(struct malformed *m, int k, uint8_t *buf, int *flags);

void malformed_report(const struct malformed *m, FILE *out);

/* Counters as JSON, written to path through a temporary file and rename(). */
int malformed_write_stats(struct malformed *m, const char *path);

#endif
