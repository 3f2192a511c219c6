/* The CalDAV app's memory for the LM3S9B95 port (app_config.h lists what
 * each value bounds). The QEMU lm3s6965evb build must fit 64 KiB of SRAM
 * with lwIP, the stack and its RAM store; the real chip has 96 KiB. */
#ifndef LITEDAV_APP_PORT_CONFIG_H
#define LITEDAV_APP_PORT_CONFIG_H

#define DAV_CTX_MAX 1                 /* one /dav/ request at a time; others wait */
#define DAV_CTX_WAIT_MAX 4            /* for it (more connections wait for an HTTP state) */
#define DAV_XML_MAX 1536
#define DAV_XML_ARENA 4096
#define DAV_OUT_MAX 1536
#define DAV_FRAGMENT_CACHE 0          /* no RAM to keep responses in: the copying path */
#define DAV_MAX_RESOURCE_SIZE 2048    /* calendar objects up to 2 KiB */
#define CALDAV_ICAL_ARENA 6144
/* The store's RAM index (20 bytes a slot, 7/8 of them usable): the 128 KiB
 * internal-flash store holds about 150 office-sized objects (~740 bytes of
 * iCalendar), so the chip needs 256 slots to use it (64 would stop at 56
 * objects); the QEMU build's 8 KiB RAM store holds about 10. */
#if !defined(LM3S_QEMU) || defined(LM3S_QEMU_SEMIHOST_STORE)
#define DAV_STORE_INDEX_SLOTS 256
#else
#define DAV_STORE_INDEX_SLOTS 64
#endif
#define DAV_STORE_COLL_SLOTS 8
#define DAV_STORE_USER_SLOTS 4

#ifdef LM3S_QEMU                      /* 64 KiB of SRAM */
#define HTTPD_CONNS_MAX 2             /* clients served at once; more wait (lwipopts.h) */
#else                                 /* the LM3S9B95's 96 KiB */
#define HTTPD_CONNS_MAX 4
#endif
#define SYN_QUEUE_LEN 100             /* ab -c 100 at once: 20 bytes each */
#define HTTPD_HEAD_MAX 1024
#define HTTPD_SCRATCH_MAX 1024
#define HTTPD_STAGE_MAX 512
#define HTTPD_BODY_MAX (256u * 1024u)
#define APP_BULK_SIZE 0               /* no /bulk resource */
#define CALDAV_SCHEDULING 0           /* no room in the flash for RFC 6638's part (caldav_sched.c) */

#endif
