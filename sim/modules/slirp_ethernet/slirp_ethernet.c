/*
 * LiteX simulation module: the SoC's Ethernet PHY (sim/phy.py) wired to
 * libslirp, the user-mode network stack QEMU uses for "-nic user". A host TCP
 * port on 127.0.0.1 is forwarded to the simulated appliance, so no root, TAP
 * or bridge is needed.
 *
 * Pads: the "eth" group of SimPHY: an 8-bit frame stream each way with an
 * explicit `last` (no preamble, no FCS); source_* leave the SoC (TX, with
 * `source_ready` driven here), sink_* enter it (RX, cannot be stalled).
 * Frames to the SoC are queued (bounded), so a burst from the host never
 * silently overruns the MAC's RX slots.
 *
 * Wire rate (argument `phy`):
 *   model  one byte per sys_clk into the SoC with `gap_cycles` idle cycles
 *          between frames; TX is never throttled (LiteEth's PHY model).
 *   gmii   1000 Mbit/s, mii 100 Mbit/s, both directions. A byte crosses the
 *          PHY interface only when the wire has room for it. Time is counted
 *          in integer units (a sys_clk cycle = bitrate/g, a byte on the wire =
 *          8*sys_clk_hz/g, g their gcd) and the wire's booking carries the
 *          remainder from byte to byte, so a non-integer number of cycles per
 *          byte keeps the exact average rate (an idle wire banks no credit).
 *          Every frame also occupies the wire for preamble+SFD (8 bytes,
 *          before its first byte), the padding to 60 bytes, FCS (4) and the
 *          inter-frame gap (12, after its last byte): into the SoC the module
 *          holds `valid` low for that time, out of it `ready` low. Frame
 *          starts are thus at least (8 + max(len, 60) + 4 + 12) byte times
 *          apart in each direction. A rate above one byte per sys_clk is
 *          refused at start-up (the PHY interface moves at most one byte a
 *          cycle): gmii needs sys_clk >= 125 MHz, mii >= 12.5 MHz.
 *
 * Trace (argument `pcap`): every frame of both directions, in a
 * nanosecond-resolution pcap (LINKTYPE_ETHERNET), exactly as it crossed the
 * PHY interface (frames to the SoC padded to 60 bytes as sent; no preamble,
 * no FCS). Timestamp: the simulated time of the frame's first byte on the PHY
 * interface, cycles since start-up * 1e9 / sys_clk_hz (never wall time); with
 * a non-integer number of cycles per byte a gap may look up to one cycle
 * shorter than on the wire. Records are written in timestamp order across
 * both directions; the direction is in the MAC addresses: the SoC's is
 * 10:e2:d5:00:00:01 (firmware), slirp's gateway 52:55:0a:00:02:02. The file
 * is flushed every poll of the host sockets and at exit.
 *
 * Clock: libslirp's clock (clock_get_ns) and its timers run in simulated time,
 * cycles since start-up / sys_clk_hz (times `clock_scale`), like lwIP's in the
 * firmware: slirp's TCP retransmission, delayed-ACK and TIME_WAIT timers then
 * keep a fixed ratio to the SoC's own, however slowly the simulator runs. The host sockets
 * are polled every `poll_cycles` cycles without blocking. The simulation never
 * stops while the SoC idles (its clock runs on), so a pending timer always fires.
 *
 * Peer (argument `peer_pid`, peer_wait.h): before each poll of the host
 * sockets, and before each frame that may make slirp write to one (anything
 * but a pure TCP ACK), the module waits until the named host process (a benchmark, and
 * what it started, e.g. ab) is blocked, so what the host's clients have
 * written or read by a simulated cycle does not depend on how fast the
 * simulator or the clients run. Without it, clients run in wall time beside
 * the simulation.
 *
 * Speed (argument `progress_s`): every that many seconds of wall time, and at
 * exit, the module prints how many cycles it has simulated and at how many
 * simulated cycles per wall second.
 *
 * Faults (argument `faults`, faults.c): a seeded, deterministic fault
 * injector between slirp and the PHY, in either or both directions: drop,
 * duplicate, reorder, bad FCS, bad IP/TCP checksum with a good FCS,
 * truncation. The PHY interface carries no FCS, so a frame "with a bad FCS"
 * into the SoC crosses it corrupted with the PHY's `error` flag set on its
 * last byte (pad sink_error), which is what LiteEth's FCS checker would hand
 * the MAC's RX path: LiteEth's SRAM writer and the offload NIC's RX DMA drop
 * it. Out of the SoC, the receiving end (slirp has no MAC) checks the FCS
 * the module computed before corrupting and drops the frame. The pcap shows
 * frames into the SoC as delivered (after faults) and frames out of it as
 * the SoC sent them (before faults).
 *
 * Exit: LiteX's sim main never calls a module's close(), and SIGINT/SIGTERM
 * would end the process at once, so this module catches them, prints its
 * counters, completes the pcap and re-raises the signal (the exit status stays
 * "killed by SIGINT"). A normal exit does the same through atexit.
 *
 * Arguments (JSON from sim_config.js):
 *   host_port   TCP port on 127.0.0.1 forwarded to the guest (default 8080)
 *   guest_port  TCP port of the appliance (default 80)
 *   guest_ip    address of the appliance (default 10.0.2.15)
 *   phy         model, gmii or mii (default model)
 *   sys_clk_hz  the SoC's clock (required: slirp's clock, gmii/mii pacing, pcap)
 *   gap_cycles  phy model: idle sys_clk cycles between frames into the SoC
 *               (default 20: 12-byte IFG + 8-byte preamble at one byte per cycle)
 *   pcap        file to write the trace to (absent or empty: none)
 *   poll_cycles sys_clk cycles between polls of the host sockets (default 2048)
 *   rx_queue    frames held for the SoC before new ones are dropped (default 256)
 *   clock_scale slirp's clock runs this many times faster than simulated time
 *               (default 1; litedav-sim passes 32: libslirp's BSD timers, 1 s
 *               minimum and 6 s initial retransmission timeout, would make
 *               every frame the SoC drops cost minutes of wall time)
 *   faults      fault injection (faults.h), absent: a clean link
 *   inject      malformed frames into the SoC among the good ones (malformed.h:
 *               {"seed", "interval_cycles", "kinds", "stats"}), absent: none
 *   flood_control  path of a UNIX datagram socket that starts floods of
 *               spoofed SYNs and half-open connections (flood.h); absent: none
 *   peer_pid    host process to wait for before each poll (peer_wait.h); absent
 *               or 0: none
 *   peer_wait_ms  wall time a runnable peer is waited for before simulated time
 *               goes on without it (default 60000)
 *   progress_s  seconds of wall time between speed reports (default 0: at exit only)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <slirp/libslirp.h>

#include "error.h"
#include "modules.h"
#include "faults.h"
#include "malformed.h"
#include "flood.h"
#include "peer_wait.h"
#include "poll_gate.h"
#include "synack_guard.h"
#include "slirp_glue.h"

#define MAX_FRAME 2048

/* bytes of wire time around a frame, IEEE 802.3 */
#define PREAMBLE_SFD 8
#define MIN_FRAME 60 /* without FCS */
#define FCS 4
#define IFG 12

enum { TO_SOC, FROM_SOC };

/* One direction of the link. Time is in units where a sys_clk cycle is
 * unit_cycle and a byte on the wire unit_byte; `wait` is how far ahead of now
 * the wire is booked (<= 0: a byte may go this cycle). */
struct wire {
    int64_t wait;
    uint64_t start_cycle; /* first byte of the frame in progress */
    uint64_t frames, bytes, dropped;
    struct frame *pcap_head, *pcap_tail; /* finished, not yet written */
};

struct session {
    /* pads */
    char *sys_clk;
    uint8_t *to_soc_data;
    char *to_soc_valid, *to_soc_last;
    uint8_t *from_soc_data;
    char *from_soc_valid, *from_soc_ready, *from_soc_last;
    char *to_soc_error;
    clk_edge_state_t edge;

    struct slirp_glue *slirp;

    /* link */
    const char *phy_name;
    int paced;                   /* gmii/mii: both directions at the wire rate */
    int64_t unit_cycle, unit_byte;
    struct wire wire[2];

    /* SoC -> host: bytes of the frame being received from the MAC */
    uint8_t tx_buf[MAX_FRAME];
    size_t tx_len;
    int tx_overflow;
    int tx_booked;  /* the frame's preamble time is booked */

    /* host -> SoC: queue of frames and the frame on the wire */
    struct frame *rx_head, *rx_tail;
    unsigned rx_queued;
    struct frame *rx_cur;
    size_t rx_pos;

    unsigned gap_cycles, poll_cycles, rx_queue_max;
    uint64_t sys_clk_hz;
    uint64_t cycles, next_poll;

    struct fault_link faults[2];
    int faulty;
    struct malformed inject;
    const char *inject_stats; /* JSON file of the injection counters; NULL: none */
    struct flood flood;

    FILE *pcap;
    char *pcap_path;
    const char *fault_stats; /* JSON file of the fault counters; NULL: none */
    int pcap_dirty;
    int finished;

    struct poll_gate gate; /* whether a poll slot needs slirp's socket walks */
    struct peer_wait peer; /* the host process whose clients simulated time waits for */

    /* simulator speed: wall time (s) and cycles at start-up and at the last report */
    unsigned progress_s;
    double wall_start, wall_report;
    uint64_t cycles_report;
    struct synack_guard synack; /* repeated SYN-ACKs reach slirp without MSS (synack_guard.h) */
    uint8_t slirp_frame[MAX_FRAME];
};

static struct session *the_session; /* for atexit and the signal path */
static volatile sig_atomic_t stop_signal;

/* slirp's side (slirp_glue.h) ---------------------------------------------- */

/* simulated time since start-up, in ns: cycles / sys_clk_hz */
static int64_t sim_time_ns(void *opaque)
{
    const struct session *s = opaque;
    uint64_t sec = s->cycles / s->sys_clk_hz, rem = s->cycles % s->sys_clk_hz;
    return (int64_t)(sec * 1000000000ull + rem * 1000000000ull / s->sys_clk_hz);
}

/* host -> SoC: a frame (after the fault link) joins the queue for the wire */
static void queue_to_soc(const uint8_t *data, size_t len, int flags, void *opaque)
{
    struct session *s = opaque;
    struct frame *f;
    /* as a host MAC pads (a frame cut short on the wire stays short) */
    size_t padded = len < MIN_FRAME && !(flags & FRAME_TRUNCATED) ? MIN_FRAME : len;

    if (len > (flags & FRAME_INJECTED ? MALFORMED_MAX_FRAME : MAX_FRAME) || s->rx_queued >= s->rx_queue_max) {
        s->wire[TO_SOC].dropped++;
        return; /* TCP recovers; slirp documents dropping as allowed */
    }
    f = calloc(1, sizeof(*f) + padded);
    if (!f) {
        s->wire[TO_SOC].dropped++;
        return;
    }
    memcpy(f->data, data, len);
    f->len = padded;
    f->flags = flags;
    if (s->rx_tail)
        s->rx_tail->next = f;
    else
        s->rx_head = f;
    s->rx_tail = f;
    s->rx_queued++;
}

/* A TCP segment over IPv4 with no payload and no SYN, FIN or RST: slirp
 * takes it without touching a host socket (it reads them only when polled). */
static int pure_tcp_ack(const uint8_t *data, size_t len)
{
    size_t ihl, doff, total;

    if (len < 14 + 20 || data[12] != 0x08 || data[13] != 0x00 || (data[14] >> 4) != 4 || data[23] != 6)
        return 0;
    ihl = (size_t)(data[14] & 0x0f) * 4;
    total = (size_t)data[16] << 8 | data[17];
    if (len < 14 + ihl + 20 || total > len - 14)
        return 0;
    doff = (size_t)(data[14 + ihl + 12] >> 4) * 4;
    return total == ihl + doff && !(data[14 + ihl + 13] & 0x07); /* FIN 1, SYN 2, RST 4 */
}

/* SoC -> host: a frame (after the fault link) reaches slirp, unless the
 * receiving end found its FCS bad */
static void deliver_to_slirp(const uint8_t *data, size_t len, int flags, void *opaque)
{
    struct session *s = opaque;
    if (!(flags & FRAME_BAD_FCS)) {
        if (len <= sizeof(s->slirp_frame)) {
            memcpy(s->slirp_frame, data, len);
            if (synack_guard_frame(&s->synack, s->slirp_frame, len))
                data = s->slirp_frame;
        }
        int socket_io = s->peer.peer && !pure_tcp_ack(data, len);
        /* slirp may write data to a host socket at once (or shut it): the peer's reads so
         * far must be done */
        if (socket_io)
            peer_wait_settle(&s->peer, "[slirp_ethernet]");
        slirp_glue_input(s->slirp, data, len); /* may queue frames to the SoC at once */
        if (socket_io)
            peer_wait_touch(&s->peer);
        poll_gate_touch(&s->gate);
    }
}

/* host -> SoC: a frame from slirp enters the fault link */
static void from_slirp(const uint8_t *frame, size_t len, void *opaque)
{
    struct session *s = opaque;
    fault_link_pass(&s->faults[TO_SOC], frame, len, s->cycles);
}

static void poll_wanted(void *opaque) { poll_gate_touch(&((struct session *)opaque)->gate); }
static void fd_closed(int fd, void *opaque) { poll_gate_forget(&((struct session *)opaque)->gate, fd); }

static void poll_host(struct session *s)
{
    uint32_t timeout = UINT32_MAX; /* slirp lowers it to when its timers want a poll */
    int64_t now = slirp_glue_now_ms(s->slirp);
    const struct pollfd *fds;
    int nfds;

    slirp_glue_run_timers(s->slirp, 0); /* each one that runs touches the gate */
    if (!poll_gate_due(&s->gate, now)) {
        /* Nothing for the socket walks (poll_gate.h). slirp still reads the
         * clock and runs its TCP timers (delayed ACK, retransmission) and
         * output queue, as every slot did before. */
        slirp_glue_skip_sockets(s->slirp);
        return;
    }
    /* host sockets: never wait (wall time), the simulation goes on */
    slirp_glue_fill(s->slirp, &timeout);
    fds = slirp_glue_pollfds(s->slirp, &nfds);
    poll_gate_sync(&s->gate, fds, nfds, now, timeout);
    if (slirp_glue_poll(s->slirp, 0, NULL) != 0) /* what it read or wrote may change what slirp watches */
        poll_gate_touch(&s->gate);
    peer_wait_touch(&s->peer);
}

/* simulator speed ----------------------------------------------------------- */

/* simulated cycles per wall second since start-up, and since the last report */
static void report_speed(struct session *s, double now, FILE *out)
{
    double total = now - s->wall_start, recent = now - s->wall_report;

    if (total <= 0)
        return;
    fprintf(out, "[slirp_ethernet] %.1f M cycles simulated (%.4f s at %.6g MHz) in %.1f s of wall time: "
            "%.3f M cycles/s", (double)s->cycles / 1e6, (double)s->cycles / (double)s->sys_clk_hz,
            (double)s->sys_clk_hz / 1e6, total, (double)s->cycles / total / 1e6);
    if (recent > 0 && s->wall_report > s->wall_start)
        fprintf(out, ", %.3f M cycles/s over the last %.0f s",
                (double)(s->cycles - s->cycles_report) / recent / 1e6, recent);
    fprintf(out, "\n");
    fflush(out);
    s->wall_report = now;
    s->cycles_report = s->cycles;
}

/* wire pacing --------------------------------------------------------------- */

/* The wire's booking relative to now for a new byte: back to back with the
 * last one when that ended within the last cycle, else now (an idle wire
 * banks no credit). */
static int64_t wire_base(const struct session *s, const struct wire *w)
{
    return w->wait > -s->unit_cycle ? w->wait : 0;
}

static void wire_book(struct session *s, struct wire *w, unsigned bytes)
{
    w->wait = wire_base(s, w) + (int64_t)bytes * s->unit_byte;
}

/* after the last byte of a frame of len bytes */
static void wire_frame_end(struct session *s, struct wire *w, size_t len)
{
    if (s->paced)
        w->wait += (int64_t)((len < MIN_FRAME ? MIN_FRAME - len : 0) + FCS + IFG) * s->unit_byte;
    else
        w->wait += (int64_t)s->gap_cycles * s->unit_cycle;
}

/* pcap ---------------------------------------------------------------------- */

/* Records and header in host byte order: readers detect it from the magic. */
struct pcap_header {
    uint32_t magic;
    uint16_t version_major, version_minor;
    int32_t thiszone;
    uint32_t sigfigs, snaplen, network;
};

struct pcap_record {
    uint32_t ts_sec, ts_nsec, incl_len, orig_len;
};

static int pcap_open(struct session *s, const char *path)
{
    struct pcap_header h = {
        .magic = 0xa1b23c4d, /* nanosecond timestamps */
        .version_major = 2, .version_minor = 4,
        .snaplen = 65535, .network = 1, /* LINKTYPE_ETHERNET */
    };

    s->pcap = fopen(path, "wb");
    if (!s->pcap)
        return -1;
    fwrite(&h, sizeof(h), 1, s->pcap);
    fflush(s->pcap);
    return 0;
}

static void pcap_write(struct session *s, const struct frame *f)
{
    struct pcap_record r = {
        .ts_sec = (uint32_t)(f->cycle / s->sys_clk_hz),
        .ts_nsec = (uint32_t)(f->cycle % s->sys_clk_hz * 1000000000ull / s->sys_clk_hz),
        .incl_len = (uint32_t)f->len,
        .orig_len = (uint32_t)f->len,
    };

    fwrite(&r, sizeof(r), 1, s->pcap);
    fwrite(f->data, 1, f->len, s->pcap);
    s->pcap_dirty = 1;
}

/* A finished frame, held until no frame still on the wire started earlier,
 * so the file is in timestamp order across both directions. */
static void pcap_add(struct session *s, int dir, const uint8_t *data, size_t len, uint64_t cycle)
{
    struct wire *w = &s->wire[dir];
    struct frame *f;

    if (!s->pcap)
        return;
    f = malloc(sizeof(*f) + len);
    if (!f)
        return;
    f->next = NULL;
    f->len = len;
    f->cycle = cycle;
    memcpy(f->data, data, len);
    if (w->pcap_tail)
        w->pcap_tail->next = f;
    else
        w->pcap_head = f;
    w->pcap_tail = f;
}

static void pcap_drain(struct session *s, int all)
{
    uint64_t bound = UINT64_MAX;

    if (!s->pcap)
        return;
    if (!all && s->rx_cur && s->rx_pos)
        bound = s->wire[TO_SOC].start_cycle;
    if (!all && (s->tx_len || s->tx_overflow) && s->wire[FROM_SOC].start_cycle < bound)
        bound = s->wire[FROM_SOC].start_cycle;
    for (;;) {
        struct frame *a = s->wire[TO_SOC].pcap_head, *b = s->wire[FROM_SOC].pcap_head;
        int dir = !a ? FROM_SOC : !b ? TO_SOC : a->cycle <= b->cycle ? TO_SOC : FROM_SOC;
        struct wire *w = &s->wire[dir];
        struct frame *f = w->pcap_head;

        if (!f || f->cycle > bound)
            break;
        pcap_write(s, f);
        w->pcap_head = f->next;
        if (!w->pcap_head)
            w->pcap_tail = NULL;
        free(f);
    }
}

/* exit ---------------------------------------------------------------------- */

static void finish(struct session *s)
{
    if (!s || s->finished)
        return;
    s->finished = 1;
    fprintf(stderr, "[slirp_ethernet] phy %s: to SoC %llu frames, %llu bytes, %llu dropped; "
            "from SoC %llu frames, %llu bytes, %llu dropped\n", s->phy_name,
            (unsigned long long)s->wire[TO_SOC].frames, (unsigned long long)s->wire[TO_SOC].bytes,
            (unsigned long long)s->wire[TO_SOC].dropped, (unsigned long long)s->wire[FROM_SOC].frames,
            (unsigned long long)s->wire[FROM_SOC].bytes, (unsigned long long)s->wire[FROM_SOC].dropped);
    if (s->faulty) {
        fault_link_report(s->faults, stderr);
        fault_link_write_stats(s->faults, s->fault_stats);
    }
    if (malformed_active(&s->inject)) {
        malformed_report(&s->inject, stderr);
        malformed_write_stats(&s->inject, s->inject_stats);
    }
    fprintf(stderr, "[slirp_ethernet] SYN-ACKs from the SoC: %llu, %llu repeated, %llu of them passed to slirp "
            "without their MSS option (synack_guard.h)\n", (unsigned long long)s->synack.synacks,
            (unsigned long long)s->synack.repeats, (unsigned long long)s->synack.stripped);
    report_speed(s, peer_wait_wall_s(), stderr);
    peer_wait_report(&s->peer, "[slirp_ethernet]");
    fprintf(stderr, "[slirp_ethernet] host sockets: slirp's socket walks ran in %llu poll slots, %llu slots "
            "had nothing for them%s\n", (unsigned long long)s->gate.polls, (unsigned long long)s->gate.skipped,
            s->gate.broken ? " (epoll unavailable: every slot walked)" : "");
    poll_gate_close(&s->gate);
    flood_close(&s->flood);
    if (s->pcap) {
        pcap_drain(s, 1); /* frames cut off mid-wire are not written */
        fclose(s->pcap);
        s->pcap = NULL;
        fprintf(stderr, "[slirp_ethernet] pcap written: %s\n", s->pcap_path);
    }
}

static void finish_at_exit(void) { finish(the_session); }

static void on_stop_signal(int sig) { stop_signal = sig; }

/* module arguments --------------------------------------------------------- */

static unsigned arg_uint(json_object *args, const char *key, unsigned def)
{
    json_object *v;
    if (args && json_object_object_get_ex(args, key, &v))
        return (unsigned)json_object_get_int(v);
    return def;
}

static uint64_t arg_u64(json_object *args, const char *key, uint64_t def)
{
    json_object *v;
    if (args && json_object_object_get_ex(args, key, &v))
        return (uint64_t)json_object_get_int64(v);
    return def;
}

static const char *arg_str(json_object *args, const char *key, const char *def)
{
    json_object *v;
    if (args && json_object_object_get_ex(args, key, &v) && !json_object_is_type(v, json_type_null))
        return json_object_get_string(v);
    return def;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* phy and sys_clk_hz -> pacing units; exits with a message when impossible */
static void setup_link(struct session *s, const char *phy)
{
    uint64_t bitrate, byte, g;

    s->phy_name = strdup(phy);
    if (!strcmp(phy, "model")) {
        s->unit_cycle = s->unit_byte = 1;
        return;
    }
    if (!strcmp(phy, "gmii"))
        bitrate = 1000000000ull;
    else if (!strcmp(phy, "mii"))
        bitrate = 100000000ull;
    else {
        fprintf(stderr, "[slirp_ethernet] phy \"%s\": expected model, gmii or mii\n", phy);
        exit(1);
    }
    if (!s->sys_clk_hz) {
        fprintf(stderr, "[slirp_ethernet] phy %s needs the sys_clk_hz argument\n", phy);
        exit(1);
    }
    byte = 8 * s->sys_clk_hz; /* one byte on the wire, in 1/(sys_clk_hz*bitrate) s */
    if (bitrate > byte) {
        fprintf(stderr, "[slirp_ethernet] phy %s (%llu Mbit/s) needs sys_clk >= %.1f MHz (one byte per "
                "cycle at most on the PHY interface); sys_clk_hz is %llu\n", phy,
                (unsigned long long)(bitrate / 1000000), bitrate / 8 / 1e6,
                (unsigned long long)s->sys_clk_hz);
        exit(1);
    }
    g = gcd(bitrate, byte);
    s->unit_cycle = (int64_t)(bitrate / g);
    s->unit_byte = (int64_t)(byte / g);
    s->paced = 1;
}

/* LiteX module interface --------------------------------------------------- */

static int slirp_ethernet_start(void *base)
{
    printf("[slirp_ethernet] loaded (libslirp %s)\n", slirp_version_string());
    return RC_OK;
}

static int slirp_ethernet_new(void **sess, char *args)
{
    struct session *s;
    json_object *jargs = args ? json_tokener_parse(args) : NULL;
    static const struct slirp_glue_hooks hooks = {
        .to_guest = from_slirp,
        .elapsed_ns = sim_time_ns,
        .poll_wanted = poll_wanted,
        .fd_closed = fd_closed,
    };
    struct slirp_glue_config glue_config = {.name = "[slirp_ethernet]"};
    struct in_addr guest_addr;
    unsigned host_port, guest_port, clock_scale;
    pid_t peer;
    const char *guest_ip, *pcap, *flood_control;
    json_object *jfaults, *jinject;
    struct sigaction sa;

    s = calloc(1, sizeof(*s));
    if (!s)
        return RC_NOENMEM;
    if (poll_gate_init(&s->gate) != 0)
        fprintf(stderr, "[slirp_ethernet] warning: no epoll (%s): every poll slot walks slirp's sockets\n",
                strerror(errno));
    host_port = arg_uint(jargs, "host_port", 8080);
    guest_port = arg_uint(jargs, "guest_port", 80);
    guest_ip = arg_str(jargs, "guest_ip", "10.0.2.15");
    s->gap_cycles = arg_uint(jargs, "gap_cycles", 20);
    s->poll_cycles = arg_uint(jargs, "poll_cycles", 2048);
    s->rx_queue_max = arg_uint(jargs, "rx_queue", 256);
    s->sys_clk_hz = arg_u64(jargs, "sys_clk_hz", 0);
    s->progress_s = arg_uint(jargs, "progress_s", 0);
    peer = (pid_t)arg_uint(jargs, "peer_pid", 0);
    if (peer_wait_init(&s->peer, peer, arg_uint(jargs, "peer_wait_ms", 60000)) != 0) {
        fprintf(stderr, "[slirp_ethernet] peer_pid %d: no such process visible in /proc (%s)\n", (int)peer,
                strerror(errno));
        exit(1);
    }
    clock_scale = arg_uint(jargs, "clock_scale", 1);
    if (clock_scale < 1 || clock_scale > 1000) {
        fprintf(stderr, "[slirp_ethernet] clock_scale %u: expected 1..1000\n", clock_scale);
        exit(1);
    }
    if (s->poll_cycles == 0)
        s->poll_cycles = 1;
    if (!s->sys_clk_hz) {
        fprintf(stderr, "[slirp_ethernet] the sys_clk_hz argument is needed (slirp's clock runs "
                "in simulated time)\n");
        exit(1);
    }
    setup_link(s, arg_str(jargs, "phy", "model"));
    fault_link_init(&s->faults[TO_SOC], "to_soc", queue_to_soc, s);
    fault_link_init(&s->faults[FROM_SOC], "from_soc", deliver_to_slirp, s);
    if (jargs && json_object_object_get_ex(jargs, "faults", &jfaults) &&
        !json_object_is_type(jfaults, json_type_null)) {
        char err[256];
        json_object *stats;
        if (fault_link_configure(s->faults, jfaults, err, sizeof(err)) != 0) {
            fprintf(stderr, "[slirp_ethernet] faults: %s\n", err);
            exit(1);
        }
        if (json_object_object_get_ex(jfaults, "stats", &stats))
            s->fault_stats = strdup(json_object_get_string(stats));
        s->faulty = fault_link_active(&s->faults[TO_SOC]) || fault_link_active(&s->faults[FROM_SOC]);
    }
    malformed_init(&s->inject, queue_to_soc, s);
    if (jargs && json_object_object_get_ex(jargs, "inject", &jinject) &&
        !json_object_is_type(jinject, json_type_null)) {
        char err[256];
        json_object *stats;
        if (malformed_configure(&s->inject, jinject, err, sizeof(err)) != 0) {
            fprintf(stderr, "[slirp_ethernet] inject: %s\n", err);
            exit(1);
        }
        if (json_object_object_get_ex(jinject, "stats", &stats))
            s->inject_stats = strdup(json_object_get_string(stats));
    }
    pcap = arg_str(jargs, "pcap", "");
    if (*pcap) {
        s->pcap_path = strdup(pcap);
        if (pcap_open(s, pcap) != 0) {
            fprintf(stderr, "[slirp_ethernet] cannot write pcap %s: %s\n", pcap, strerror(errno));
            exit(1);
        }
    }

    glue_config.clock_scale = clock_scale;
    s->slirp = slirp_glue_new(&glue_config, &hooks, s);
    if (!s->slirp)
        return RC_ERROR;

    if (inet_pton(AF_INET, guest_ip, &guest_addr) != 1) {
        fprintf(stderr, "[slirp_ethernet] bad guest_ip \"%s\"\n", guest_ip);
        return RC_INVARG;
    }
    if (slirp_glue_forward(s->slirp, (uint16_t)host_port, guest_ip, (uint16_t)guest_port) != 0) {
        fprintf(stderr,
                "[slirp_ethernet] cannot listen on 127.0.0.1:%u (%s): is another simulator "
                "running? choose another port\n",
                host_port, strerror(errno));
        exit(1);
    }
    flood_init(&s->flood, queue_to_soc, s, ntohl(guest_addr.s_addr), (uint16_t)guest_port);
    flood_control = arg_str(jargs, "flood_control", "");
    if (*flood_control && flood_listen(&s->flood, flood_control) != 0) {
        fprintf(stderr, "[slirp_ethernet] cannot bind the flood control socket %s: %s\n", flood_control,
                strerror(errno));
        exit(1);
    }
    printf("[slirp_ethernet] forwarding 127.0.0.1:%u -> %s:%u, phy %s", host_port, guest_ip,
           guest_port, s->phy_name);
    if (s->paced)
        printf(" (%.4g sys_clk cycles per byte)", (double)s->unit_byte / (double)s->unit_cycle);
    if (s->pcap)
        printf(", pcap %s", s->pcap_path);
    if (clock_scale == 1)
        printf(", slirp clock in simulated time\n");
    else
        printf(", slirp clock at %u x simulated time\n", clock_scale);
    if (s->faulty) {
        int i, k;
        printf("[slirp_ethernet] fault injection (seed %llu, %s):", (unsigned long long)s->faults[0].seed,
               s->faults[0].spread ? "spread" : "random");
        for (i = 0; i < 2; i++) {
            if (!fault_link_active(&s->faults[i]))
                continue;
            printf(" %s", s->faults[i].name);
            for (k = 0; k < FAULT_KINDS; k++)
                if (s->faults[i].rate[k] > 0)
                    printf(" %s=%g", fault_names[k], s->faults[i].rate[k]);
            printf(";");
        }
        printf(" counters: %s\n", s->fault_stats ? s->fault_stats : "printed at exit");
    }
    if (s->peer.peer)
        printf("[slirp_ethernet] simulated time waits for host process %d and its descendants before each "
               "poll (up to %u ms each)\n", (int)s->peer.peer, s->peer.max_wait_ms);
    if (malformed_active(&s->inject))
        printf("[slirp_ethernet] malformed frames into the SoC: one every %llu cycles on average "
               "(seed %llu), counters: %s\n", (unsigned long long)s->inject.interval_cycles,
               (unsigned long long)s->inject.seed, s->inject_stats ? s->inject_stats : "printed at exit");
    fflush(stdout);
    if (jargs)
        json_object_put(jargs);

    the_session = s;
    atexit(finish_at_exit);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop_signal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    *sess = s;
    return RC_OK;
}

static int slirp_ethernet_add_pads(void *sess, struct pad_list_s *plist)
{
    struct session *s = sess;
    struct pad_s *p;

    if (!s || !plist)
        return RC_INVARG;
    for (p = plist->pads; p->name; p++) {
        if (!strcmp(plist->name, "eth")) {
            /* "sink" is the PHY's input: frames into the SoC */
            if (!strcmp(p->name, "sink_data")) s->to_soc_data = (uint8_t *)p->signal;
            if (!strcmp(p->name, "sink_valid")) s->to_soc_valid = p->signal;
            if (!strcmp(p->name, "sink_last")) s->to_soc_last = p->signal;
            if (!strcmp(p->name, "sink_error")) s->to_soc_error = p->signal;
            if (!strcmp(p->name, "source_data")) s->from_soc_data = (uint8_t *)p->signal;
            if (!strcmp(p->name, "source_valid")) s->from_soc_valid = p->signal;
            if (!strcmp(p->name, "source_ready")) s->from_soc_ready = p->signal;
            if (!strcmp(p->name, "source_last")) s->from_soc_last = p->signal;
        }
        if (!strcmp(plist->name, "sys_clk") && !strcmp(p->name, "sys_clk"))
            s->sys_clk = p->signal;
    }
    if (!strcmp(plist->name, "eth") &&
        (!s->to_soc_data || !s->to_soc_valid || !s->to_soc_last || !s->to_soc_error || !s->from_soc_data ||
         !s->from_soc_valid || !s->from_soc_ready || !s->from_soc_last)) {
        fprintf(stderr, "[slirp_ethernet] the SoC's eth pads lack source_last/sink_last/sink_error/"
                "source_ready (sim/phy.py): rebuild the simulator\n");
        return RC_INVARG;
    }
    return RC_OK;
}

/* SoC -> host, at the falling edge, after sample_from_soc: whether a byte may
 * be accepted in the next cycle, when the wire will have room for it (its
 * booking less the cycle that passes at the rising edge) and its frame's
 * preamble time is booked. SimPHY (sim/phy.py) registers the pad, so this is
 * `ready` throughout the next cycle. */
static void drive_from_soc_ready(struct session *s)
{
    *s->from_soc_ready = !s->paced ||
        (s->tx_booked && s->wire[FROM_SOC].wait - s->unit_cycle <= 0);
}

/* SoC -> host, at the falling edge: valid & ready now (ready as driven a cycle
 * ago, SimPHY's register) is the transfer that the next rising edge completes. */
static void sample_from_soc(struct session *s)
{
    struct wire *w = &s->wire[FROM_SOC];

    if (!*s->from_soc_valid)
        return;
    if (s->paced && !s->tx_booked) { /* a new frame: its preamble goes first */
        wire_book(s, w, PREAMBLE_SFD);
        s->tx_booked = 1;
        return; /* ready was low this cycle */
    }
    if (!*s->from_soc_ready)
        return;

    if (s->paced)
        wire_book(s, w, 1);
    if (!s->tx_len && !s->tx_overflow)
        w->start_cycle = s->cycles;
    if (s->tx_len < MAX_FRAME)
        s->tx_buf[s->tx_len++] = *s->from_soc_data;
    else
        s->tx_overflow = 1;
    if (!*s->from_soc_last)
        return;

    if (s->paced)
        wire_frame_end(s, w, s->tx_len);
    s->tx_booked = 0;
    if (s->tx_overflow) {
        w->dropped++;
    } else {
        size_t len = s->tx_len;
        w->frames++;
        w->bytes += len;
        s->tx_len = 0;
        pcap_add(s, FROM_SOC, s->tx_buf, len, w->start_cycle);
        if (!flood_from_soc(&s->flood, s->tx_buf, len)) /* the spoofed peers' frames end here */
            fault_link_pass(&s->faults[FROM_SOC], s->tx_buf, len, s->cycles);
    }
    s->tx_len = 0;
    s->tx_overflow = 0;
    pcap_drain(s, 0);
}

/* host -> SoC: the queued frames, a byte whenever the wire has room */
static void tick_to_soc(struct session *s)
{
    struct wire *w = &s->wire[TO_SOC];
    struct frame *f;

    *s->to_soc_valid = 0;
    *s->to_soc_last = 0;
    *s->to_soc_error = 0;
    if (!s->rx_cur && s->rx_head) {
        s->rx_cur = s->rx_head;
        s->rx_head = s->rx_head->next;
        if (!s->rx_head)
            s->rx_tail = NULL;
        s->rx_queued--;
        s->rx_pos = 0;
        wire_book(s, w, s->paced ? PREAMBLE_SFD : 0);
    }
    f = s->rx_cur;
    if (!f || w->wait > 0)
        return;

    wire_book(s, w, 1);
    if (s->rx_pos == 0)
        w->start_cycle = s->cycles;
    *s->to_soc_valid = 1;
    *s->to_soc_data = f->data[s->rx_pos++];
    if (s->rx_pos < f->len)
        return;

    *s->to_soc_last = 1;
    *s->to_soc_error = (f->flags & FRAME_BAD_FCS) != 0; /* as the MAC's FCS checker flags it */
    wire_frame_end(s, w, f->len);
    w->frames++;
    w->bytes += f->len;
    s->rx_cur = NULL;
    pcap_add(s, TO_SOC, f->data, f->len, w->start_cycle);
    free(f);
    pcap_drain(s, 0);
}

static int slirp_ethernet_tick(void *sess, uint64_t time_ps)
{
    struct session *s = sess;
    int i;

    if (stop_signal) {
        int sig = stop_signal;
        finish(s);
        signal(sig, SIG_DFL);
        raise(sig);
    }
    if (!s->sys_clk)
        return RC_OK;
    switch (clk_edge(&s->edge, *s->sys_clk)) {
    case CLK_EDGE_FALLING:
        sample_from_soc(s);
        drive_from_soc_ready(s);
        return RC_OK;
    case CLK_EDGE_RISING:
        break;
    default:
        return RC_OK;
    }
    if (!s->cycles++)
        s->wall_start = s->wall_report = peer_wait_wall_s();
    for (i = 0; i < 2; i++) { /* a cycle of wire time has passed; an idle wire stays at -1 cycle */
        s->wire[i].wait -= s->unit_cycle;
        if (s->wire[i].wait < -s->unit_cycle)
            s->wire[i].wait = -s->unit_cycle;
    }

    flood_tick(&s->flood, s->cycles);
    if (malformed_active(&s->inject))
        malformed_tick(&s->inject, s->cycles);
    tick_to_soc(s);

    if (s->cycles >= s->next_poll) {
        s->next_poll = s->cycles + s->poll_cycles;
        peer_wait_settle(&s->peer, "[slirp_ethernet]");
        poll_host(s);
        flood_poll(&s->flood, s->cycles);
        if (s->faulty) {
            fault_link_tick(&s->faults[TO_SOC], s->cycles);
            fault_link_tick(&s->faults[FROM_SOC], s->cycles);
            if (s->faults[TO_SOC].changed || s->faults[FROM_SOC].changed)
                fault_link_write_stats(s->faults, s->fault_stats); /* tests read it live */
        }
        if (s->inject.changed)
            malformed_write_stats(&s->inject, s->inject_stats); /* tests read it live */
        if (s->pcap_dirty) { /* readable even after SIGKILL */
            fflush(s->pcap);
            s->pcap_dirty = 0;
        }
        if (s->progress_s) {
            double now = peer_wait_wall_s();
            if (now - s->wall_report >= s->progress_s)
                report_speed(s, now, stdout);
        }
    }
    return RC_OK;
}

static int slirp_ethernet_close(void *sess)
{
    struct session *s = sess;
    finish(s);
    slirp_glue_free(s->slirp);
    return RC_OK;
}

static struct ext_module_s ext_mod = {
    "slirp_ethernet",
    slirp_ethernet_start,
    slirp_ethernet_new,
    slirp_ethernet_add_pads,
    slirp_ethernet_close,
    slirp_ethernet_tick,
};

int litex_sim_ext_module_init(int (*register_module)(struct ext_module_s *))
{
    return register_module(&ext_mod);
}
