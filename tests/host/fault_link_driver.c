/* Drives the slirp_ethernet module's fault link (sim/modules/slirp_ethernet/
 * faults.c) with synthetic frames, for tests/test_sim_faults.py:
 *
 *   fault_link_driver CONFIG_JSON FRAMES STATS_JSON
 *
 * Frame i is an ARP request every 7th frame, else an IPv4 TCP segment with
 * correct checksums and i in its sequence number (a SYN-ACK every 13th). Before passing frame i the
 * driver prints "pass i"; every frame the link delivers is printed as
 * "out FLAGS HEX". After the last frame it advances time so that a held
 * frame is released, then writes the counters to STATS_JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faults.h"

static void print_frame(const uint8_t *data, size_t len, int flags, void *opaque)
{
    size_t i;
    printf("out %d ", flags);
    for (i = 0; i < len; i++)
        printf("%02x", data[i]);
    printf("\n");
}

static uint16_t ones_sum(const uint8_t *d, size_t len, uint32_t sum)
{
    size_t i;
    for (i = 0; i + 1 < len; i += 2)
        sum += (uint32_t)(d[i] << 8 | d[i + 1]);
    if (len & 1)
        sum += (uint32_t)d[len - 1] << 8;
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)sum;
}

static size_t make_frame(uint8_t *f, unsigned i)
{
    static const uint8_t soc[6] = {0x10, 0xe2, 0xd5, 0, 0, 1}, gw[6] = {0x52, 0x55, 10, 0, 2, 2};
    size_t payload, tcp_len, ip_len;
    uint16_t sum;
    unsigned k;

    memcpy(f, soc, 6);
    memcpy(f + 6, gw, 6);
    if (i % 7 == 6) { /* ARP request */
        static const uint8_t arp[28] = {0, 1, 8, 0, 6, 4, 0, 1, 0x52, 0x55, 10, 0, 2, 2, 10, 0, 2, 2,
                                        0, 0, 0, 0, 0, 0, 10, 0, 2, 15};
        memset(f, 0xff, 6);
        f[12] = 0x08, f[13] = 0x06;
        memcpy(f + 14, arp, sizeof(arp));
        return 14 + sizeof(arp);
    }
    payload = (i * 37) % 300;
    tcp_len = 20 + payload;
    ip_len = 20 + tcp_len;
    f[12] = 0x08, f[13] = 0x00;
    memset(f + 14, 0, ip_len);
    f[14] = 0x45;
    f[16] = ip_len >> 8, f[17] = ip_len & 255;
    f[22] = 64, f[23] = 6;
    memcpy(f + 26, (uint8_t[]){10, 0, 2, 2}, 4);
    memcpy(f + 30, (uint8_t[]){10, 0, 2, 15}, 4);
    sum = ones_sum(f + 14, 20, 0);
    f[24] = (uint8_t)(~sum >> 8), f[25] = (uint8_t)~sum;
    f[34] = 0xc0, f[35] = 0x01, f[36] = 0, f[37] = 80;               /* ports */
    f[38] = i >> 24, f[39] = i >> 16, f[40] = i >> 8, f[41] = i & 255; /* seq */
    f[46] = 0x50, f[47] = i % 13 == 12 ? 0x12 : 0x18; /* offset 5, SYN ACK or PSH ACK */
    f[48] = 0x20;                                                    /* window */
    for (k = 0; k < payload; k++)
        f[54 + k] = (uint8_t)(i + k * 7);
    /* pseudo-header: addresses, protocol, TCP length */
    sum = ones_sum(f + 26, 8, 6 + (uint32_t)tcp_len);
    sum = ones_sum(f + 34, tcp_len, sum);
    f[50] = (uint8_t)(~sum >> 8), f[51] = (uint8_t)~sum;
    return 14 + ip_len;
}

int main(int argc, char **argv)
{
    struct fault_link links[2];
    json_object *cfg;
    char err[256];
    unsigned i, n;
    uint8_t frame[2048];

    if (argc != 4) {
        fprintf(stderr, "usage: %s CONFIG_JSON FRAMES STATS_JSON\n", argv[0]);
        return 2;
    }
    fault_link_init(&links[0], "to_soc", print_frame, NULL);
    fault_link_init(&links[1], "from_soc", print_frame, NULL);
    cfg = json_tokener_parse(argv[1]);
    if (!cfg || fault_link_configure(links, cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "bad config: %s\n", cfg ? err : "not JSON");
        return 2;
    }
    n = (unsigned)atoi(argv[2]);
    for (i = 0; i < n; i++) {
        size_t len = make_frame(frame, i);
        printf("pass %u\n", i);
        fault_link_pass(&links[0], frame, len, (uint64_t)i * 1000);
        fault_link_tick(&links[0], (uint64_t)i * 1000 + 999);
    }
    printf("end\n");
    fault_link_tick(&links[0], UINT64_MAX / 2);
    fault_link_report(links, stderr);
    return fault_link_write_stats(links, argv[3]) != 0;
}
