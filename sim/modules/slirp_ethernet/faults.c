/* Fault-injecting link of the slirp_ethernet module: see faults.h. */
#include "faults.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FAULT_FRAME 2048
#define ETH_HEADER 14
#define ETHERTYPE_IPV4 0x0800
#define IPPROTO_ICMP_ 1
#define IPPROTO_TCP_ 6

const char *const fault_names[FAULT_KINDS] = {
    [FAULT_DROP] = "drop",
    [FAULT_TRUNCATE] = "truncate",
    [FAULT_BAD_FCS] = "bad_fcs",
    [FAULT_BAD_CHECKSUM] = "bad_checksum",
    [FAULT_DUPLICATE] = "duplicate",
    [FAULT_REORDER] = "reorder",
};

/* IEEE 802.3 CRC-32 (reflected, polynomial 0xEDB88320), as the FCS */
uint32_t ethernet_crc32(const uint8_t *data, size_t len)
{
    uint32_t crc = 0xffffffffu;
    size_t i;
    int b;

    for (i = 0; i < len; i++) {
        crc ^= data[i];
        for (b = 0; b < 8; b++)
            crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
    }
    return ~crc;
}

static uint64_t next_random(struct fault_link *l) /* xorshift64* */
{
    l->rng ^= l->rng >> 12;
    l->rng ^= l->rng << 25;
    l->rng ^= l->rng >> 27;
    return l->rng * 0x2545f4914f6cdd1dull;
}

static double uniform(struct fault_link *l) { return (next_random(l) >> 11) * 0x1.0p-53; }

static uint64_t below(struct fault_link *l, uint64_t n) { return n ? next_random(l) % n : 0; }

void fault_link_init(struct fault_link *l, const char *name, frame_sink sink, void *opaque)
{
    memset(l, 0, sizeof(*l));
    l->name = name;
    l->sink = sink;
    l->opaque = opaque;
    l->reorder_hold_cycles = 125000; /* 1 ms at 125 MHz */
}

int fault_link_active(const struct fault_link *l)
{
    int k;
    for (k = 0; k < FAULT_KINDS; k++)
        if (l->rate[k] > 0)
            return 1;
    return 0;
}

static int configure_rates(struct fault_link *l, json_object *rates, char *err, size_t err_len)
{
    json_object_object_foreach(rates, key, value) {
        int k;
        double r;
        for (k = 0; k < FAULT_KINDS; k++)
            if (!strcmp(key, fault_names[k]))
                break;
        if (k == FAULT_KINDS) {
            snprintf(err, err_len, "%s: unknown fault \"%s\" (drop, duplicate, reorder, bad_fcs, "
                     "bad_checksum, truncate)", l->name, key);
            return -1;
        }
        if (!json_object_is_type(value, json_type_double) && !json_object_is_type(value, json_type_int)) {
            snprintf(err, err_len, "%s: rate of %s must be a number", l->name, key);
            return -1;
        }
        r = json_object_get_double(value);
        if (!(r >= 0 && r <= 1)) {
            snprintf(err, err_len, "%s: rate of %s is %g, expected 0..1", l->name, key, r);
            return -1;
        }
        l->rate[k] = r;
        l->block_len[k] = r > 0 ? (uint64_t)llround(1 / r) : 0;
    }
    return 0;
}

int fault_link_configure(struct fault_link links[2], json_object *cfg, char *err, size_t err_len)
{
    uint64_t seed = 1, hold = links[0].reorder_hold_cycles;
    int spread = 0, spare_syn = 0, i;

    if (!json_object_is_type(cfg, json_type_object)) {
        snprintf(err, err_len, "the faults argument must be an object");
        return -1;
    }
    json_object_object_foreach(cfg, key, value) {
        if (!strcmp(key, "seed")) {
            seed = (uint64_t)json_object_get_int64(value);
        } else if (!strcmp(key, "mode")) {
            const char *mode = json_object_get_string(value);
            if (!strcmp(mode, "spread"))
                spread = 1;
            else if (strcmp(mode, "random")) {
                snprintf(err, err_len, "mode \"%s\": expected random or spread", mode);
                return -1;
            }
        } else if (!strcmp(key, "spare_syn")) {
            spare_syn = json_object_get_boolean(value);
        } else if (!strcmp(key, "reorder_hold_cycles")) {
            hold = (uint64_t)json_object_get_int64(value);
        } else if (!strcmp(key, links[0].name) || !strcmp(key, links[1].name)) {
            struct fault_link *l = !strcmp(key, links[0].name) ? &links[0] : &links[1];
            if (!json_object_is_type(value, json_type_object)) {
                snprintf(err, err_len, "%s must be an object of rates", key);
                return -1;
            }
            if (configure_rates(l, value, err, err_len))
                return -1;
        } else if (strcmp(key, "stats")) {
            snprintf(err, err_len, "unknown key \"%s\" (seed, mode, spare_syn, reorder_hold_cycles, %s, %s, stats)",
                     key, links[0].name, links[1].name);
            return -1;
        }
    }
    for (i = 0; i < 2; i++) {
        struct fault_link *l = &links[i];
        /* one generator per direction, so one direction's traffic never shifts the other's faults */
        uint64_t z = seed + 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        l->rng = (z ^ (z >> 31)) | 1;
        l->seed = seed;
        l->spread = spread;
        l->spare_syn = spare_syn;
        l->reorder_hold_cycles = hold;
    }
    return 0;
}

static int decide(struct fault_link *l, int k)
{
    int hit;

    if (l->rate[k] <= 0)
        return 0;
    if (!l->spread)
        return uniform(l) < l->rate[k];
    if (l->block_pos[k] == 0)
        l->block_hit[k] = below(l, l->block_len[k]);
    hit = l->block_pos[k] == l->block_hit[k];
    l->block_pos[k] = (l->block_pos[k] + 1) % l->block_len[k];
    return hit;
}

/* The IPv4 packet in a frame: offset of its L4 segment and the end of the
 * packet within the frame; 0 if the frame is not IPv4 with room for it. */
static int ipv4_bounds(const uint8_t *d, size_t len, size_t *l4, size_t *end, int *proto)
{
    size_t ihl, total;

    if (len < ETH_HEADER + 20 || ((d[12] << 8) | d[13]) != ETHERTYPE_IPV4 || (d[14] >> 4) != 4)
        return 0;
    ihl = (size_t)(d[14] & 15) * 4;
    total = (size_t)((d[16] << 8) | d[17]);
    if (ihl < 20 || total < ihl)
        return 0;
    *l4 = ETH_HEADER + ihl;
    *end = ETH_HEADER + total < len ? ETH_HEADER + total : len;
    *proto = d[23];
    return *l4 <= *end;
}

static int is_tcp_syn(const uint8_t *d, size_t len)
{
    size_t l4, end;
    int proto;
    return ipv4_bounds(d, len, &l4, &end, &proto) && proto == IPPROTO_TCP_ && l4 + 14 <= end &&
           (d[l4 + 13] & 0x02);
}

static void flip_bit(struct fault_link *l, uint8_t *data, size_t from, size_t to)
{
    uint64_t bit = below(l, (uint64_t)(to - from) * 8);
    data[from + bit / 8] ^= (uint8_t)(1u << (bit % 8));
}

/* Applies fault k to buf (a copy of the frame); returns 0 if k cannot apply. */
static int apply(struct fault_link *l, int k, uint8_t *buf, size_t *len, int *flags)
{
    size_t l4, end;
    int proto;

    switch (k) {
    case FAULT_DROP:
    case FAULT_DUPLICATE:
        return 1;
    case FAULT_REORDER:
        return !l->held;
    case FAULT_TRUNCATE: {
        size_t limit = ipv4_bounds(buf, *len, &l4, &end, &proto) ? end : *len;
        if (limit <= ETH_HEADER + 1)
            return 0;
        *len = ETH_HEADER + 1 + (size_t)below(l, limit - ETH_HEADER - 1); /* < limit */
        *flags |= FRAME_TRUNCATED;
        return 1;
    }
    case FAULT_BAD_FCS: {
        /* the sender's FCS follows the frame; a bit of either is flipped on the wire */
        uint32_t fcs = ethernet_crc32(buf, *len), received;
        uint8_t wire_fcs[4] = {fcs, fcs >> 8, fcs >> 16, fcs >> 24};
        uint64_t bit = below(l, (uint64_t)(*len + 4) * 8);
        if (bit / 8 < *len)
            buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        else
            wire_fcs[bit / 8 - *len] ^= (uint8_t)(1u << (bit % 8));
        received = wire_fcs[0] | wire_fcs[1] << 8 | wire_fcs[2] << 16 | (uint32_t)wire_fcs[3] << 24;
        if (ethernet_crc32(buf, *len) != received) /* the receiving MAC's check */
            *flags |= FRAME_BAD_FCS;
        return 1;
    }
    case FAULT_BAD_CHECKSUM:
        /* TCP and ICMP checksums cover their whole segment (a UDP checksum may be off) */
        if (!ipv4_bounds(buf, *len, &l4, &end, &proto) || l4 >= end ||
            (proto != IPPROTO_TCP_ && proto != IPPROTO_ICMP_))
            return 0;
        flip_bit(l, buf, l4, end); /* the FCS is computed over the damaged frame: it is valid */
        return 1;
    }
    return 0;
}

static void release_held(struct fault_link *l)
{
    struct frame *f = l->held;
    l->held = NULL;
    l->sink(f->data, f->len, f->flags, l->opaque);
    free(f);
}

void fault_link_pass(struct fault_link *l, const uint8_t *data, size_t len, uint64_t cycle)
{
    uint8_t buf[MAX_FAULT_FRAME];
    int k, fault = -1, flags = 0;

    if (l->spare_syn && is_tcp_syn(data, len)) {
        l->spared++;
        l->changed = 1;
        l->sink(data, len, 0, l->opaque);
        if (l->held)
            release_held(l);
        return;
    }
    l->frames++;
    if (len > sizeof(buf)) { /* the wire refuses it anyway */
        l->sink(data, len, 0, l->opaque);
        return;
    }
    for (k = 0; k < FAULT_KINDS; k++)
        if (decide(l, k))
            l->pending[k]++;
    memcpy(buf, data, len);
    for (k = 0; k < FAULT_KINDS && fault < 0; k++) {
        if (l->pending[k] && apply(l, k, buf, &len, &flags)) {
            l->pending[k]--;
            l->count[k]++;
            l->changed = 1;
            fault = k;
        }
    }
    switch (fault) {
    case FAULT_DROP:
        return;
    case FAULT_REORDER: {
        struct frame *f = malloc(sizeof(*f) + len);
        if (!f)
            break;
        f->len = len;
        f->flags = flags;
        memcpy(f->data, buf, len);
        l->held = f;
        l->held_cycle = cycle;
        return;
    }
    case FAULT_DUPLICATE:
        l->sink(buf, len, flags, l->opaque);
        break;
    }
    l->sink(buf, len, flags, l->opaque);
    if (l->held && fault != FAULT_REORDER)
        release_held(l);
}

void fault_link_tick(struct fault_link *l, uint64_t cycle)
{
    if (l->held && cycle - l->held_cycle >= l->reorder_hold_cycles)
        release_held(l);
}

void fault_link_report(const struct fault_link links[2], FILE *out)
{
    int i, k;
    for (i = 0; i < 2; i++) {
        const struct fault_link *l = &links[i];
        if (!fault_link_active(l))
            continue;
        fprintf(out, "[slirp_ethernet] faults %s: %llu frames (%llu SYN spared)", l->name,
                (unsigned long long)l->frames, (unsigned long long)l->spared);
        for (k = 0; k < FAULT_KINDS; k++)
            fprintf(out, ", %s %llu", fault_names[k], (unsigned long long)l->count[k]);
        fprintf(out, "\n");
    }
}

int fault_link_write_stats(struct fault_link links[2], const char *path)
{
    char tmp[4096];
    FILE *f;
    int i, k;

    if (!path || !*path)
        return 0;
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    f = fopen(tmp, "w");
    if (!f)
        return -1;
    fprintf(f, "{\"seed\": %llu, \"mode\": \"%s\", \"spare_syn\": %s", (unsigned long long)links[0].seed,
            links[0].spread ? "spread" : "random", links[0].spare_syn ? "true" : "false");
    for (i = 0; i < 2; i++) {
        struct fault_link *l = &links[i];
        fprintf(f, ", \"%s\": {\"frames\": %llu, \"spared_syn\": %llu", l->name,
                (unsigned long long)l->frames, (unsigned long long)l->spared);
        for (k = 0; k < FAULT_KINDS; k++)
            fprintf(f, ", \"%s\": %llu", fault_names[k], (unsigned long long)l->count[k]);
        fprintf(f, ", \"rates\": {");
        for (k = 0; k < FAULT_KINDS; k++)
            fprintf(f, "%s\"%s\": %.9g", k ? ", " : "", fault_names[k], l->rate[k]);
        fprintf(f, "}}");
        l->changed = 0;
    }
    fprintf(f, "}\n");
    if (fclose(f) != 0)
        return -1;
    return rename(tmp, path);
}
