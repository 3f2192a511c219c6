/* A seeded, deterministic fault-injecting link for one direction of the
 * slirp_ethernet module: frames pass through fault_link_pass() on their way
 * between slirp and the PHY and come out (zero, one or two of them, possibly
 * late or damaged) through the link's sink.
 *
 * Fault kinds, each at its own rate (probability per frame):
 *   drop          the frame is lost
 *   duplicate     it is delivered twice
 *   reorder       it is held back and delivered after the next frame (or after
 *                 `reorder_hold_cycles` if no frame follows)
 *   bad_fcs       one bit of the frame or of its FCS (CRC-32, computed here as
 *                 the sender's MAC would) is flipped; the receiving end checks
 *                 the FCS and the frame is delivered flagged FRAME_BAD_FCS (the
 *                 module passes the flag to the SoC's MAC, which drops the
 *                 frame, or drops it itself before slirp)
 *   bad_checksum  one bit of an IPv4 TCP/ICMP segment (header or payload) is
 *                 flipped and the FCS recomputed: the frame arrives intact at
 *                 the link layer and the IP/TCP checksum check must drop it
 *   truncate      the frame is cut inside its IP packet (inside the frame for
 *                 non-IP frames) and delivered short, flagged FRAME_TRUNCATED
 *                 (not padded to the minimum frame size again)
 *
 * A frame receives at most one fault. A fault whose turn comes on a frame it
 * cannot apply to (a checksum fault on an ARP frame, a reorder while a frame
 * is already held, any fault on a dropped frame) waits for the next frame it
 * fits, so the rates hold on average.
 *
 * With `spare_syn`, TCP segments carrying SYN pass untouched (and count as
 * spared, not as frames drawn on): a lost SYN-ACK costs lwIP's initial
 * retransmission timeout of 3 s of simulated time (slirp's for a SYN is 6 s
 * of its clock), tens of minutes of wall time in the simulator; tests that
 * want faults on the data path, not on connection setup, turn it on.
 *
 * Modes: "random" decides every kind independently for every frame
 * (Bernoulli); "spread" places exactly one fault of a kind at a random
 * position in every block of round(1/rate) frames, so that each kind
 * occurs within its first block (tests that must see every kind happen use
 * it). Both draw from one xorshift64* generator per direction seeded from
 * `seed`: the same frames in the same order get the same faults.
 */
#ifndef LITEDAV_SLIRP_FAULTS_H
#define LITEDAV_SLIRP_FAULTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

enum fault_kind {
    FAULT_DROP,
    FAULT_TRUNCATE,
    FAULT_BAD_FCS,
    FAULT_BAD_CHECKSUM,
    FAULT_DUPLICATE,
    FAULT_REORDER,
    FAULT_KINDS
};

extern const char *const fault_names[FAULT_KINDS];

#define FRAME_BAD_FCS   1 /* the receiving MAC finds the FCS wrong */
#define FRAME_TRUNCATED 2 /* cut short on the wire: not padded again */
#define FRAME_INJECTED  4 /* generated malformed traffic (malformed.h): may exceed MAX_FRAME */

struct frame {
    struct frame *next;
    size_t len;
    uint64_t cycle; /* pcap records: cycle of the first byte */
    int flags;      /* FRAME_* */
    uint8_t data[];
};

typedef void (*frame_sink)(const uint8_t *data, size_t len, int flags, void *opaque);

struct fault_link {
    const char *name; /* "to_soc" or "from_soc" */
    frame_sink sink;
    void *opaque;

    int spread, spare_syn;
    uint64_t seed, rng;
    double rate[FAULT_KINDS];
    uint64_t block_len[FAULT_KINDS], block_pos[FAULT_KINDS], block_hit[FAULT_KINDS];
    unsigned pending[FAULT_KINDS];

    uint64_t frames;             /* frames offered to the link */
    uint64_t spared;             /* SYN segments passed untouched (spare_syn) */
    uint64_t count[FAULT_KINDS]; /* faults applied */

    struct frame *held; /* reorder */
    uint64_t held_cycle, reorder_hold_cycles;
    int changed;        /* counters changed since the last stats write */
};

/* A clean link that hands every frame to sink. */
void fault_link_init(struct fault_link *l, const char *name, frame_sink sink, void *opaque);

/* Configure from the module's `faults` argument:
 *   {"seed": N, "mode": "random"|"spread", "reorder_hold_cycles": N, "spare_syn": bool,
 *    "to_soc": {"drop": r, "duplicate": r, ...}, "from_soc": {...}}
 * Returns 0, or -1 with a message in err. */
int fault_link_configure(struct fault_link links[2], json_object *cfg, char *err, size_t err_len);

/* Is any fault configured on this link? */
int fault_link_active(const struct fault_link *l);

void fault_link_pass(struct fault_link *l, const uint8_t *data, size_t len, uint64_t cycle);

/* Release a held (reordered) frame that no other frame has followed in time. */
void fault_link_tick(struct fault_link *l, uint64_t cycle);

void fault_link_report(const struct fault_link links[2], FILE *out);

/* Counters as JSON, written to path through a temporary file and rename(). */
int fault_link_write_stats(struct fault_link links[2], const char *path);

uint32_t ethernet_crc32(const uint8_t *data, size_t len);

#endif
