/* Spoofed TCP peers of the slirp_ethernet module: see flood.h. */
#include "flood.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define ETH_HEADER 14
#define IP_HEADER 20
#define TCP_HEADER 20
#define ETHERTYPE_IPV4 0x0800
#define IPPROTO_TCP_ 6

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_PSH 0x08
#define TCP_ACK 0x10

#define PEER_NET 0xc6120000u /* 198.18.0.0/15 */
#define PEER_MASK 0xfffe0000u
#define MAX_PEERS 131000u

/* what a half-open peer sends before it vanishes: a request head cut short */
static const char partial_head[] = "GET /static/task.ics HTTP/1.1\r\nHost: flood\r\n";

/* what a stale_fin peer asks: a small answer, after which the server closes first */
static const char close_request[] = "GET /stale-fin HTTP/1.0\r\n\r\n";

/* how far behind the connection's own a stale FIN's sequence number is */
#define STALE_SEQ_OFFSET 0x40000000u

enum stale_fin_phase { STALE_ASKED = 1, STALE_FIN_SENT, STALE_FIN_AGAIN, STALE_LOOP, STALE_DONE };

static const char *const kind_names[] = { [FLOOD_SYN] = "syn", [FLOOD_HALF_OPEN] = "half_open", [FLOOD_IDLE] = "idle",
                                          [FLOOD_STALE_FIN] = "stale_fin" };

static uint64_t next_random(struct flood *f) /* xorshift64* */
{
    f->rng ^= f->rng >> 12;
    f->rng ^= f->rng << 25;
    f->rng ^= f->rng >> 27;
    return f->rng * 0x2545f4914f6cdd1dull;
}

static void put16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, (uint16_t)v); }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)get16(p) << 16 | get16(p + 2); }

static uint32_t sum16(const uint8_t *p, size_t len, uint32_t sum)
{
    size_t i;
    for (i = 0; i + 1 < len; i += 2)
        sum += get16(p + i);
    if (len & 1)
        sum += (uint32_t)p[len - 1] << 8;
    return sum;
}

static uint16_t fold(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

void flood_init(struct flood *f, frame_sink sink, void *opaque, uint32_t soc_ip, uint16_t soc_port)
{
    static const uint8_t soc_mac[6] = { 0x10, 0xe2, 0xd5, 0x00, 0x00, 0x01 };     /* the firmware's */
    static const uint8_t gateway_mac[6] = { 0x52, 0x55, 0x0a, 0x00, 0x02, 0x02 }; /* slirp's 10.0.2.2 */

    memset(f, 0, sizeof(*f));
    f->fd = -1;
    f->sink = sink;
    f->opaque = opaque;
    f->soc_ip = soc_ip;
    f->soc_port = soc_port;
    f->rng = 1;
    memcpy(f->soc_mac, soc_mac, 6);
    memcpy(f->gateway_mac, gateway_mac, 6);
}

int flood_listen(struct flood *f, const char *path)
{
    struct sockaddr_un addr;

    if (strlen(path) >= sizeof(addr.sun_path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    f->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (f->fd < 0)
        return -1;
    memset(&addr, 0, sizeof(addr));
    addr.sun_family = AF_UNIX;
    strcpy(addr.sun_path, path);
    unlink(path);
    if (bind(f->fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        close(f->fd);
        f->fd = -1;
        return -1;
    }
    f->path = strdup(path);
    return 0;
}

/* A TCP segment from peer n to the SoC, through the frame sink. */
static void send_segment(struct flood *f, uint32_t n, uint32_t seq, uint32_t ack, uint8_t flags,
                         const void *payload, size_t payload_len)
{
    uint8_t frame[ETH_HEADER + IP_HEADER + TCP_HEADER + 4 + sizeof(partial_head)];
    uint8_t *ip = frame + ETH_HEADER, *tcp = ip + IP_HEADER;
    size_t tcp_len = TCP_HEADER + ((flags & TCP_SYN) ? 4 : 0);
    uint32_t src = PEER_NET + 1 + n, sum;

    if (payload_len > sizeof(partial_head))
        return;
    memset(frame, 0, sizeof(frame));
    memcpy(frame, f->soc_mac, 6);
    memcpy(frame + 6, f->gateway_mac, 6);
    put16(frame + 12, ETHERTYPE_IPV4);

    ip[0] = 0x45;
    put16(ip + 2, (uint16_t)(IP_HEADER + tcp_len + payload_len));
    put16(ip + 4, (uint16_t)next_random(f));
    put16(ip + 6, 0x4000); /* don't fragment */
    ip[8] = 64;
    ip[9] = IPPROTO_TCP_;
    put32(ip + 12, src);
    put32(ip + 16, f->soc_ip);
    put16(ip + 10, fold(sum16(ip, IP_HEADER, 0)));

    put16(tcp, f->peers[n].port);
    put16(tcp + 2, f->soc_port);
    put32(tcp + 4, seq);
    put32(tcp + 8, ack);
    tcp[12] = (uint8_t)(tcp_len / 4) << 4;
    tcp[13] = flags;
    put16(tcp + 14, 65535);
    if (flags & TCP_SYN) {
        tcp[20] = 2; /* MSS */
        tcp[21] = 4;
        put16(tcp + 22, 1460);
    }
    memcpy(tcp + tcp_len, payload, payload_len);
    /* pseudo header: addresses, protocol, TCP length */
    sum = sum16(ip + 12, 8, IPPROTO_TCP_ + (uint32_t)(tcp_len + payload_len));
    put16(tcp + 16, fold(sum16(tcp, tcp_len + payload_len, sum)));

    f->sink(frame, ETH_HEADER + IP_HEADER + tcp_len + payload_len, 0, f->opaque);
}

void flood_tick(struct flood *f, uint64_t cycle)
{
    struct flood_peer *p;
    uint32_t n;

    if (!f->remaining || cycle < f->next_cycle)
        return;
    if (f->npeers == MAX_PEERS) {
        f->remaining = 0; /* addresses used up */
        return;
    }
    if (f->npeers == f->peers_cap) {
        size_t cap = f->peers_cap ? 2 * f->peers_cap : 1024;
        struct flood_peer *grown = realloc(f->peers, cap * sizeof(*grown));
        if (!grown) {
            f->remaining = 0;
            return;
        }
        f->peers = grown;
        f->peers_cap = cap;
    }
    n = (uint32_t)f->npeers++;
    p = &f->peers[n];
    p->kind = (uint8_t)f->kind;
    p->acked = 0;
    p->phase = 0;
    p->replies = 0;
    p->isn = (uint32_t)next_random(f);
    p->port = (uint16_t)(1024 + next_random(f) % 64000);
    send_segment(f, n, p->isn, 0, TCP_SYN, NULL, 0);
    if (f->kind == FLOOD_SYN)
        f->syn_sent++;
    else if (f->kind == FLOOD_HALF_OPEN)
        f->half_open_sent++;
    else if (f->kind == FLOOD_STALE_FIN)
        f->stale_fin_sent++;
    else
        f->idle_sent++;
    f->remaining--;
    f->next_cycle = cycle + f->interval_cycles;
}

/* A stale_fin peer's part, once its handshake is done (see flood.h). */
static void stale_fin_segment(struct flood *f, uint32_t n, uint32_t seq, uint32_t ack, uint8_t flags,
                              size_t payload_len)
{
    struct flood_peer *p = &f->peers[n];

    if (flags & TCP_RST) {
        p->phase = STALE_DONE;
        return;
    }
    switch (p->phase) {
    case STALE_ASKED: /* the answer, then the server's FIN: ACK it, and send ours */
        if (!payload_len && !(flags & TCP_FIN))
            return;
        if (seq != p->rcv_nxt) { /* a retransmission: ACK what we have */
            send_segment(f, n, p->snd_nxt, p->rcv_nxt, TCP_ACK, NULL, 0);
            return;
        }
        p->rcv_nxt += (uint32_t)payload_len + ((flags & TCP_FIN) ? 1 : 0);
        if (flags & TCP_FIN) {
            send_segment(f, n, p->snd_nxt++, p->rcv_nxt, TCP_FIN | TCP_ACK, NULL, 0);
            p->phase = STALE_FIN_SENT;
        } else {
            send_segment(f, n, p->snd_nxt, p->rcv_nxt, TCP_ACK, NULL, 0);
        }
        return;
    case STALE_FIN_SENT: /* our FIN ACKed: the server's side is in TIME-WAIT; our FIN again */
        if (!(flags & TCP_ACK) || ack != p->snd_nxt || payload_len || (flags & TCP_FIN))
            return;
        f->time_wait_reached++;
        send_segment(f, n, p->snd_nxt - 1, p->rcv_nxt, TCP_FIN | TCP_ACK, NULL, 0);
        p->phase = STALE_FIN_AGAIN;
        return;
    case STALE_FIN_AGAIN: /* ACKed again: now a FIN from an older connection on this port */
        if (!(flags & TCP_ACK) || ack != p->snd_nxt)
            return;
        f->fin_again_acked++;
        f->stale_fin_first++;
        send_segment(f, n, p->snd_nxt - 1 - STALE_SEQ_OFFSET, p->rcv_nxt - STALE_SEQ_OFFSET, TCP_FIN | TCP_ACK,
                     NULL, 0);
        p->phase = STALE_LOOP;
        return;
    case STALE_LOOP: /* each ACK the stale FIN gets is answered with it again */
        if (!(flags & TCP_ACK))
            return;
        f->stale_fin_acked++;
        if (p->replies < STALE_FIN_REPLIES) {
            p->replies++;
            send_segment(f, n, p->snd_nxt - 1 - STALE_SEQ_OFFSET, p->rcv_nxt - STALE_SEQ_OFFSET,
                         TCP_FIN | TCP_ACK, NULL, 0);
        }
        return;
    default:
        return;
    }
}

int flood_from_soc(struct flood *f, const uint8_t *data, size_t len)
{
    const uint8_t *ip = data + ETH_HEADER, *tcp;
    uint32_t dst, n;
    size_t ihl, total, off, payload_len = 0;
    uint8_t flags;
    struct flood_peer *p;

    if (len < ETH_HEADER + IP_HEADER || get16(data + 12) != ETHERTYPE_IPV4 || (ip[0] >> 4) != 4)
        return 0;
    memcpy(f->soc_mac, data + 6, 6);
    dst = get32(ip + 16);
    if ((dst & PEER_MASK) != PEER_NET)
        return 0;
    memcpy(f->gateway_mac, data, 6); /* where the SoC routes the peers' range */
    f->from_soc++;
    ihl = (size_t)(ip[0] & 15) * 4;
    total = get16(ip + 2);
    if (ip[9] != IPPROTO_TCP_ || ihl < IP_HEADER || total > len - ETH_HEADER || total < ihl + TCP_HEADER)
        return 1;
    tcp = ip + ihl;
    off = (size_t)(tcp[12] >> 4) * 4;
    flags = tcp[13];
    if (off >= TCP_HEADER && total >= ihl + off)
        payload_len = total - ihl - off;
    f->data_bytes += payload_len;
    if (flags & TCP_RST)
        f->rst++;
    if (flags & TCP_FIN)
        f->fin++;
    n = dst - PEER_NET - 1;
    p = n < f->npeers ? &f->peers[n] : NULL;
    if (p && p->acked && p->kind == FLOOD_STALE_FIN && get16(tcp + 2) == p->port) {
        stale_fin_segment(f, n, get32(tcp + 4), get32(tcp + 8), flags, payload_len);
        return 1;
    }
    if ((flags & (TCP_SYN | TCP_ACK)) != (TCP_SYN | TCP_ACK))
        return 1;
    f->syn_ack++;
    if (!p || p->acked || get16(tcp + 2) != p->port || get32(tcp + 8) != p->isn + 1)
        return 1;
    p->acked = 1;
    f->answered++;
    if (p->kind == FLOOD_SYN)
        return 1;
    f->handshakes_completed++;
    if (p->kind == FLOOD_IDLE) { /* the handshake's ACK, and nothing after it */
        send_segment(f, n, p->isn + 1, get32(tcp + 4) + 1, TCP_ACK, NULL, 0);
    } else if (p->kind == FLOOD_STALE_FIN) { /* a whole request with it */
        p->snd_nxt = p->isn + 1 + (uint32_t)(sizeof(close_request) - 1);
        p->rcv_nxt = get32(tcp + 4) + 1;
        p->phase = STALE_ASKED;
        /* first the older connection's FIN, its ACK none the server sent on this one */
        send_segment(f, n, p->isn + 1 - STALE_SEQ_OFFSET, p->rcv_nxt - STALE_SEQ_OFFSET, TCP_FIN | TCP_ACK, NULL, 0);
        send_segment(f, n, p->isn + 1, p->rcv_nxt, TCP_ACK | TCP_PSH, close_request, sizeof(close_request) - 1);
    } else {                   /* its ACK carries the first part of a request */
        send_segment(f, n, p->isn + 1, get32(tcp + 4) + 1, TCP_ACK | TCP_PSH, partial_head,
                     sizeof(partial_head) - 1);
    }
    return 1;
}

static int stats_json(const struct flood *f, uint64_t cycle, char *out, size_t size)
{
    return snprintf(out, size,
                    "{\"cycle\": %llu, \"running\": \"%s\", \"remaining\": %llu, \"peers\": %llu, \"syn_sent\": %llu, "
                    "\"half_open_sent\": %llu, \"idle_sent\": %llu, \"stale_fin_sent\": %llu, \"answered\": %llu, "
                    "\"handshakes_completed\": %llu, \"from_soc\": %llu, "
                    "\"syn_ack\": %llu, \"rst\": %llu, \"fin\": %llu, \"data_bytes\": %llu, "
                    "\"time_wait_reached\": %llu, \"fin_again_acked\": %llu, \"stale_fin_first\": %llu, "
                    "\"stale_fin_acked\": %llu}",
                    (unsigned long long)cycle, f->remaining ? kind_names[f->kind] : "", (unsigned long long)f->remaining,
                    (unsigned long long)f->npeers, (unsigned long long)f->syn_sent,
                    (unsigned long long)f->half_open_sent, (unsigned long long)f->idle_sent,
                    (unsigned long long)f->stale_fin_sent, (unsigned long long)f->answered,
                    (unsigned long long)f->handshakes_completed,
                    (unsigned long long)f->from_soc, (unsigned long long)f->syn_ack,
                    (unsigned long long)f->rst, (unsigned long long)f->fin,
                    (unsigned long long)f->data_bytes, (unsigned long long)f->time_wait_reached,
                    (unsigned long long)f->fin_again_acked, (unsigned long long)f->stale_fin_first,
                    (unsigned long long)f->stale_fin_acked);
}

/* One command; the answer goes to out. */
static void command(struct flood *f, char *text, uint64_t cycle, char *out, size_t size)
{
    char verb[16];
    unsigned long long count, interval;
    int fields = sscanf(text, "%15s %llu %llu", verb, &count, &interval);

    if (fields >= 1 && (!strcmp(verb, "syn") || !strcmp(verb, "half_open") || !strcmp(verb, "idle") ||
                        !strcmp(verb, "stale_fin"))) {
        if (fields != 3 || count == 0 || interval == 0) {
            snprintf(out, size, "{\"error\": \"usage: %s COUNT INTERVAL_CYCLES (both > 0)\"}", verb);
            return;
        }
        f->kind = !strcmp(verb, "syn")         ? FLOOD_SYN
                  : !strcmp(verb, "idle")      ? FLOOD_IDLE
                  : !strcmp(verb, "stale_fin") ? FLOOD_STALE_FIN
                                               : FLOOD_HALF_OPEN;
        f->remaining = count;
        f->interval_cycles = interval;
        f->next_cycle = cycle;
    } else if (fields == 1 && !strcmp(verb, "stop")) {
        f->remaining = 0;
    } else if (fields != 1 || strcmp(verb, "stats")) {
        snprintf(out, size, "{\"error\": \"unknown command (syn COUNT INTERVAL, half_open COUNT "
                 "INTERVAL, idle COUNT INTERVAL, stale_fin COUNT INTERVAL, stop, stats)\"}");
        return;
    }
    stats_json(f, cycle, out, size);
}

void flood_poll(struct flood *f, uint64_t cycle)
{
    char text[128], answer[1024];
    struct sockaddr_un from;
    socklen_t from_len;
    ssize_t n;

    if (f->fd < 0)
        return;
    for (;;) {
        from_len = sizeof(from);
        n = recvfrom(f->fd, text, sizeof(text) - 1, 0, (struct sockaddr *)&from, &from_len);
        if (n < 0)
            return;
        text[n] = 0;
        command(f, text, cycle, answer, sizeof(answer));
        if (from_len > sizeof(sa_family_t))
            sendto(f->fd, answer, strlen(answer), MSG_DONTWAIT, (struct sockaddr *)&from, from_len);
    }
}

void flood_close(struct flood *f)
{
    if (f->fd >= 0) {
        close(f->fd);
        f->fd = -1;
        unlink(f->path);
    }
    free(f->path);
    f->path = NULL;
}
