/* Receive-side merging of TCP frames before lwIP (rx_merge.c): the RX half
 * of what TSO does for TX. */
#ifndef LITEDAV_RX_MERGE_H
#define LITEDAV_RX_MERGE_H

#include "lwip/pbuf.h"

/* Frames merged into one segment at most, and its largest payload. */
#define RX_MERGE_MAX_FRAMES 16
#define RX_MERGE_MAX_PAYLOAD (16u * 1460u)

struct rx_merge {
    struct pbuf *head;   /* the segment being built (an Ethernet frame) */
    u16_t ip_offset;     /* its IPv4 header, TCP header and payload offsets */
    u16_t tcp_offset;
    u16_t payload_offset;
    u32_t payload_len;   /* TCP payload of the merged segment */
    u32_t next_seq;      /* sequence number the next frame must start at */
    u32_t ack;           /* acknowledgment number of the latest frame */
    u8_t frames;
    u8_t mergeable;      /* head is a plain TCP segment that may take more */
    u32_t merged;        /* frames taken in by rx_merge_add (statistics) */
};

/* Begin with frame p (checksums verified by the NIC, p one pbuf). */
void rx_merge_start(struct rx_merge *m, struct pbuf *p);

/* Frame q (same conditions) right after the current segment on the wire:
 * returns 1 if it was merged (a later cumulative ACK replaces an earlier
 * pure ACK; payload that continues the segment's sequence is chained to
 * it), 0 if the segment must go to lwIP first (q untouched). */
int rx_merge_add(struct rx_merge *m, struct pbuf *q);

/* The segment for lwIP, headers made to describe the merged payload. The
 * IPv4 and TCP checksums are not rewritten: the NIC verified every part and
 * lwIP's checks are off for it. */
struct pbuf *rx_merge_finish(struct rx_merge *m);

#endif
