/* A repeated SYN-ACK against the installed libslirp, with and without the
 * slirp_ethernet module's guard (sim/modules/slirp_ethernet/synack_guard.h),
 * for tests/test_sim_synack_guard.py:
 *
 *   slirp_synack_driver PORT guard|direct
 *
 * libslirp forwards 127.0.0.1:PORT to the "guest" 10.0.2.15:80, which this
 * driver plays with hand-made frames. A host client connects and writes a
 * request; the guest answers slirp's SYN with a SYN-ACK (MSS option), drops
 * slirp's ACK and the request (as a MAC with full RX slots does), and then
 * sends the same SYN-ACK again, as a TCP in SYN_RCVD does when its timer
 * expires. Slirp's clock then runs 60 s (simulated: the driver's clock) and
 * the driver counts slirp's retransmissions of the request.
 *
 * guard: the guest's frames go to slirp through synack_guard_frame(), as in
 * the simulator; direct: they go unchanged.
 *
 * Output: "repeat HEX" (the repeated SYN-ACK as slirp got it), "sent N" (the
 * request's copies slirp sent before the repeat), "retransmitted N" (after
 * it), "guard synacks A repeats B stripped C". Exit status 0 when the run got
 * that far, 1 on a setup failure (message on stderr). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "slirp_glue.h"
#include "synack_guard.h"

static const uint8_t GUEST_MAC[6] = {0x10, 0xe2, 0xd5, 0, 0, 1};
static const char *GUEST_IP = "10.0.2.15";

static int64_t elapsed_ns; /* the driver's clock, slirp's from 1 s (slirp_glue.h) */
static struct slirp_glue *slirp;
static struct synack_guard guard;
static int use_guard;

/* what slirp sent to the guest */
static uint8_t slirp_mac[6];
static int have_syn;
static uint8_t syn_frame[2048];
static size_t syn_len;
static unsigned data_segments; /* TCP segments with payload from slirp */

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)(v >> 16)); put16(p + 2, (uint16_t)v); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)get16(p) << 16 | get16(p + 2); }

static uint32_t sum16(const uint8_t *d, size_t len, uint32_t sum)
{
    size_t i;
    for (i = 0; i + 1 < len; i += 2)
        sum += get16(d + i);
    if (len & 1)
        sum += (uint32_t)d[len - 1] << 8;
    return sum;
}

static uint16_t fold(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

/* the guest's frame into slirp, through the guard when asked */
static void to_slirp(uint8_t *frame, size_t len)
{
    if (use_guard)
        synack_guard_frame(&guard, frame, len);
    slirp_glue_input(slirp, frame, len);
}

static void arp_reply(const uint8_t *req)
{
    uint8_t f[60] = {0};
    memcpy(f, req + 6, 6);
    memcpy(f + 6, GUEST_MAC, 6);
    put16(f + 12, 0x0806);
    put16(f + 14, 1);
    put16(f + 16, 0x0800);
    f[18] = 6;
    f[19] = 4;
    put16(f + 20, 2);
    memcpy(f + 22, GUEST_MAC, 6);
    memcpy(f + 28, req + 38, 4); /* the address asked for: ours */
    memcpy(f + 32, req + 22, 10); /* the asker's MAC and address */
    to_slirp(f, sizeof(f));
}

static void from_slirp(const uint8_t *f, size_t len, void *opaque)
{
    (void)opaque;
    if (len >= 42 && get16(f + 12) == 0x0806 && get16(f + 20) == 1) {
        arp_reply(f);
        return;
    }
    if (len >= 54 && get16(f + 12) == 0x0800 && f[23] == 6) {
        size_t ihl = (size_t)(f[14] & 15) * 4, total = get16(f + 16);
        const uint8_t *tcp = f + 14 + ihl;
        size_t doff = (size_t)(tcp[12] >> 4) * 4;
        memcpy(slirp_mac, f + 6, 6);
        if ((tcp[13] & 0x12) == 0x02 && !have_syn && len <= sizeof(syn_frame)) {
            memcpy(syn_frame, f, len);
            syn_len = len;
            have_syn = 1;
        }
        if (total > ihl + doff)
            data_segments++;
    }
}

/* the guest's SYN-ACK to slirp's SYN: sequence number 5000, MSS 1460 */
static size_t make_synack(uint8_t *f)
{
    const uint8_t *syn_ip = syn_frame + 14;
    const uint8_t *syn_tcp = syn_ip + (syn_ip[0] & 15) * 4;
    uint8_t *ip = f + 14, *tcp = ip + 20;
    uint32_t sum;

    memset(f, 0, 14 + 20 + 24);
    memcpy(f, slirp_mac, 6);
    memcpy(f + 6, GUEST_MAC, 6);
    put16(f + 12, 0x0800);
    ip[0] = 0x45;
    put16(ip + 2, 20 + 24);
    put16(ip + 6, 0x4000);
    ip[8] = 64;
    ip[9] = 6;
    memcpy(ip + 12, syn_ip + 16, 4);
    memcpy(ip + 16, syn_ip + 12, 4);
    put16(ip + 10, fold(sum16(ip, 20, 0)));
    memcpy(tcp, syn_tcp + 2, 2);
    memcpy(tcp + 2, syn_tcp, 2);
    put32(tcp + 4, 5000);
    put32(tcp + 8, get32(syn_tcp + 4) + 1);
    tcp[12] = 6 << 4;
    tcp[13] = 0x12;
    put16(tcp + 14, 64240);
    tcp[20] = 2;
    tcp[21] = 4;
    put16(tcp + 22, 1460);
    sum = sum16(ip + 12, 8, 6 + 24);
    put16(tcp + 16, fold(sum16(tcp, 24, sum)));
    return 14 + 20 + 24;
}

static int64_t driver_clock(void *opaque)
{
    (void)opaque;
    return elapsed_ns;
}

/* advance the clock by ms and give slirp its poll (host sockets, TCP timers) */
static void step(int ms)
{
    uint32_t timeout = 0;

    elapsed_ns += (int64_t)ms * 1000000;
    slirp_glue_run_timers(slirp, 0);
    slirp_glue_fill(slirp, &timeout);
    slirp_glue_poll(slirp, 0, NULL);
}

int main(int argc, char **argv)
{
    static const char request[] = "GET /static/task.ics HTTP/1.1\r\nHost: litedav\r\n\r\n";
    static const struct slirp_glue_config config = {.name = "[slirp_synack_driver]"};
    static const struct slirp_glue_hooks hooks = {.to_guest = from_slirp, .elapsed_ns = driver_clock};
    struct sockaddr_in sa;
    uint8_t synack[128];
    size_t synack_len, i;
    unsigned sent;
    int port, client, n;

    if (argc != 3 || (strcmp(argv[2], "guard") && strcmp(argv[2], "direct"))) {
        fprintf(stderr, "usage: %s PORT guard|direct\n", argv[0]);
        return 2;
    }
    port = atoi(argv[1]);
    use_guard = !strcmp(argv[2], "guard");

    slirp = slirp_glue_new(&config, &hooks, NULL);
    if (!slirp || slirp_glue_forward(slirp, (uint16_t)port, GUEST_IP, 80) != 0) {
        fprintf(stderr, "slirp setup failed (port %d)\n", port);
        return 1;
    }

    client = socket(AF_INET, SOCK_STREAM, 0);
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (client < 0 || connect(client, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        write(client, request, sizeof(request) - 1) != (ssize_t)(sizeof(request) - 1)) {
        fprintf(stderr, "client: %s\n", strerror(errno));
        return 1;
    }

    /* slirp accepts the client and sends its SYN (after asking for our MAC) */
    for (n = 0; n < 1000 && !have_syn; n++)
        step(10);
    if (!have_syn) {
        fprintf(stderr, "slirp sent no SYN\n");
        return 1;
    }
    synack_len = make_synack(synack);
    to_slirp(synack, synack_len);
    /* slirp's ACK and the request go out; the guest "loses" them */
    for (n = 0; n < 10; n++)
        step(10);
    sent = data_segments;
    if (!sent) {
        fprintf(stderr, "slirp sent no request after the handshake\n");
        return 1;
    }
    /* the guest's SYN_RCVD timer: the same SYN-ACK again */
    synack_len = make_synack(synack);
    to_slirp(synack, synack_len);
    printf("repeat ");
    for (i = 0; i < synack_len; i++)
        printf("%02x", synack[i]);
    printf("\n");
    for (n = 0; n < 6000; n++) /* 60 s of slirp's clock: its RTO is at most 12 s */
        step(10);
    printf("sent %u\nretransmitted %u\n", sent, data_segments - sent);
    printf("guard synacks %llu repeats %llu stripped %llu\n", (unsigned long long)guard.synacks,
           (unsigned long long)guard.repeats, (unsigned long long)guard.stripped);
    close(client);
    slirp_glue_free(slirp);
    return 0;
}
