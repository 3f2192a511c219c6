/* The app's memory on the LiteX SoC (app_config.h lists what each value
 * bounds; the defaults are sized for this port otherwise). Main RAM is in
 * the megabytes, so what matters is that the cost of a connection does not
 * grow with the number of them (issue 9: thousands of idle keep-alive clients). */
#ifndef LITEDAV_APP_PORT_CONFIG_H
#define LITEDAV_APP_PORT_CONFIG_H

/* HTTP connection states (~7 KiB each: head, scratch and staging buffers) come
 * from a static pool of 64. A connection that is not in a request holds a
 * ~50-byte waiting record instead, so 4,000 idle clients cost ~200 KB,
 * not 28 MB; it keeps its state between requests while more
 * than 16 are free (the busy keep-alive clients of a benchmark never give it up). */
#define HTTPD_CONNS_MAX 64
#define HTTPD_CONNS_RESERVE 16
/* The waiting records come from a pool with one per PCB (~50 bytes each,
 * 210 KB), not from lwIP's heap: first fit from the lowest free block, every
 * send buffer's allocation would step past the records of all idle clients. */
#define HTTPD_WAIT_POOL MEMP_NUM_TCP_PCB
/* The start of a head whose end has not come (a slow client, or a peer that
 * vanished: the half-open flood) waits up to the idle timeout. Copied into the
 * heap, hundreds of such small blocks among the send buffers made lwIP's
 * first-fit walk the SoC's main cost (mem_malloc: 53 % of the samples with
 * 1,300 to 1,700 of them open). One small piece per PCB instead. */
#define HTTPD_HEAD_PIECES MEMP_NUM_TCP_PCB
/* Idle connections (waiting records with nothing in flight) leave lwIP's
 * active list, so its timers walk only the busy ones (firmware/app/net/tcp_park.h);
 * a segment for one brings it back through the IPv4 input hook (lwipopts.h). */
#define HTTPD_PARK_BUCKETS 4096

/* Connections in TIME-WAIT (the server closes first) leave lwIP's list,
 * which lwIP walks for every SYN and in its slow timer, for a hash table
 * (firmware/app/net/tcp_time_wait.h): as many as there are PCBs, each for its
 * 2 MSL unless a new connection needs its PCB. */
#define TCP_TIME_WAIT_BUCKETS 4096

/* The store's RAM index, 20 bytes a slot (7/8 of them usable): 32,768 slots
 * (640 KiB of main RAM, 320 KiB more than the default) hold the whole office
 * of issue 9, 100 users x 200 items = 20,000 objects, with room for their
 * tombstones (bench/office_sync.py). */
#define DAV_STORE_INDEX_SLOTS 32768
/* A listing (PROPFIND Depth 1, sync-collection) goes in batches of this
 * many members. Each batch walks the collection's member list in RAM and
 * reads the batch's members from the flash (firmware/app/store/); before the member
 * lists each batch walked the whole index (with the default 8 a 200-item
 * calendar took 25 walks, 46 M cycles for one PROPFIND; with 64 four, 16 M).
 * Costs 284 bytes a member per request context: 18 KB each, 145 KB for 8. */
#define DAV_BATCH 64

/* The mount's scan of every block header (STORE_SCAN_CODE, store_internal.h: find_log,
 * store_read_bhdr and flash_litespi.c's read path, about 2 KiB) in one piece at the start of the
 * code, where picolibc.ld links .text.startup.*, ahead of all other .text. VexRiscv's instruction
 * cache is 4 KiB and direct-mapped, and on the Colorlight i5 a miss is a read from SDRAM: spread
 * over the image, functions of this loop that map to the same cache lines evict each other on
 * every block (8,192 on the store flash), and which ones do depends on everything linked before
 * them. Together they cannot. noinline keeps each of them in this section. */
#define STORE_SCAN_CODE __attribute__((noinline, section(".text.startup.store_scan")))

/* Buffers written before they are read (arenas, the store's index: 1.4 MB)
 * stay out of .bss, which crt0 clears on every boot (app_config.h). */
#define LITEDAV_NOINIT __attribute__((section(".preserve.litedav")))

#endif
