/* Memory the portable application reserves statically, per port.
 *
 * The defaults are sized for a board with megabytes of RAM (the LiteX SoC,
 * the host build). A port with less RAM overrides any of these by defining
 * them before this header is read: the port's build passes
 * `-include app_port_config.h` (see firmware/ports/lm3s9b95/) or -D flags.
 * Every value below is a hard limit the app enforces with an HTTP status
 * (413, 431, 503...), never by overrunning a buffer. */
#ifndef LITEDAV_APP_CONFIG_H
#define LITEDAV_APP_CONFIG_H

/* ---- dav/: request contexts and buffers --------------------------------- */
#ifndef DAV_CTX_MAX
#define DAV_CTX_MAX 8                 /* concurrent /dav/ requests; more wait for one */
#endif
#ifndef DAV_CTX_WAIT_MAX
#define DAV_CTX_WAIT_MAX 64           /* requests waiting for a context (8 bytes each); 503 beyond */
#endif
#ifndef DAV_CTX_WAIT_MS
#define DAV_CTX_WAIT_MS 30000u        /* the longest wait (lwIP ms, under httpd's 60 s idle */
#endif                                /* timeout); 503 then */
#ifndef DAV_XML_MAX
#define DAV_XML_MAX 16384             /* XML request bodies, per context; 413 above */
#endif
#ifndef DAV_XML_ARENA
#define DAV_XML_ARENA 65536           /* their parsed trees, per context */
#endif
#ifndef DAV_FRAGMENT_CACHE
#define DAV_FRAGMENT_CACHE 1          /* responses kept rendered in the RAM a port gives */
#endif                                /* (dav_fragments_init; 0: every response takes the copying path) */
#ifndef DAV_FRAGMENT_CACHE_MIN
#define DAV_FRAGMENT_CACHE_MIN (64u * 1024u)  /* less RAM than this: no cache */
#endif
#ifndef DAV_FRAGMENT_BYTES_PER_BUCKET
#define DAV_FRAGMENT_BYTES_PER_BUCKET 2048u   /* the index's size: a bucket per this much of it */
#endif
#ifndef DAV_FRAGMENT_META_SHARE
#define DAV_FRAGMENT_META_SHARE 5u     /* 1/this of it for the records that find the responses */
#endif
#ifndef DAV_REF_JOIN_MAX
#define DAV_REF_JOIN_MAX (16u * 1024u) /* kept responses in a row joined into one piece, at most */
#endif
#ifndef DAV_FRAGMENT_OBJECT_MAX
#define DAV_FRAGMENT_OBJECT_MAX (16u * 1024u)  /* larger objects are streamed, not kept */
#endif
#ifndef DAV_OUT_MAX
#define DAV_OUT_MAX 8192              /* one rendered multistatus piece, per context */
#endif
#ifndef DAV_MAX_RESOURCE_SIZE
#define DAV_MAX_RESOURCE_SIZE 65536   /* CALDAV:max-resource-size: the upload and work buffers */
#endif

/* ---- caldav/: the parsed iCalendar of one object --------------------------- */
#ifndef CALDAV_ICAL_ARENA
#define CALDAV_ICAL_ARENA (4 * DAV_MAX_RESOURCE_SIZE)
#endif
#ifndef CALDAV_SCHEDULING
#define CALDAV_SCHEDULING 1           /* RFC 6638's principal properties, inbox, outbox and its */
#endif                                /* free-busy POST (caldav_sched.c); 0: none of them */
#ifndef DAV_FIXED_COLLECTIONS         /* dav.h DAV_RES_FIXED resolved: scheduling's mailboxes */
#define DAV_FIXED_COLLECTIONS CALDAV_SCHEDULING /* are the only ones */
#endif

/* ---- dav/: the store's RAM index (store.h STORE_MEMORY_DEFINE) --------- */
#ifndef DAV_STORE_INDEX_SLOTS
#define DAV_STORE_INDEX_SLOTS 16384   /* objects + tombstones: 7/8 of this */
#endif
#ifndef DAV_STORE_COLL_SLOTS
#define DAV_STORE_COLL_SLOTS 128      /* collections */
#endif
#ifndef DAV_STORE_USER_SLOTS
#define DAV_STORE_USER_SLOTS 128      /* users */
#endif

/* ---- httpd.c and its connections' admission (conn_admission.c, server_conn.c) */
#ifndef HTTPD_HEAD_MAX
#define HTTPD_HEAD_MAX 4096           /* longest request head; longer gets 431 */
#endif
#ifndef HTTPD_SCRATCH_MAX
#define HTTPD_SCRATCH_MAX 2048        /* rendered bodies, handler buffers */
#endif
#ifndef HTTPD_CONNS_MAX
#define HTTPD_CONNS_MAX 0             /* connection states, a static pool (0: from the heap, as */
#endif                                /* many as it holds); clients beyond wait (conn_admission.h) */
#ifndef HTTPD_CONNS_RESERVE
#define HTTPD_CONNS_RESERVE HTTPD_CONNS_MAX /* pool states kept for waiting clients: a connection */
#endif                                /* keeps its state between requests only while more are free */
#ifndef HTTPD_HEAD_PIECES
#define HTTPD_HEAD_PIECES 0           /* pieces of unfinished request heads (conn_admission.c) */
#endif                                /* from a pool of this many, not the heap; 0: the heap */
#ifndef HTTPD_HEAD_PIECE_SIZE
#define HTTPD_HEAD_PIECE_SIZE 128     /* bytes a piece; a larger segment goes to the heap */
#endif
#ifndef HTTPD_WAIT_POOL
#define HTTPD_WAIT_POOL 0             /* waiting records (conn_admission.c) from a pool of this */
#endif                                /* many, in O(1); 0: from lwIP's heap (first fit) */
#ifndef HTTPD_PARK_BUCKETS
#define HTTPD_PARK_BUCKETS 0          /* idle connections parked off lwIP's timer walks (tcp_park.h): */
#endif                                /* hash buckets, a power of two; 0: off */
#ifndef HTTPD_PRODUCE_TURN
#define HTTPD_PRODUCE_TURN 4096       /* produced body rendered per main-loop turn (state pool only) */
#endif
#ifndef HTTPD_STAGE_MAX
#define HTTPD_STAGE_MAX 1024          /* response heads and produced body pieces */
#endif
#ifndef HTTPD_ORPHAN_RETRIES
#define HTTPD_ORPHAN_RETRIES 4        /* a closed connection whose FIN is retransmitted this many */
#endif                                /* times unanswered is reset (lwIP alone: TCP_MAXRTX, minutes) */
#ifndef HTTPD_IDLE_TIMEOUT_MS
#define HTTPD_IDLE_TIMEOUT_MS 60000u  /* connections without progress this long are closed */
#endif                                /* (lwIP ms; tests build litedav-host with a shorter one) */

/* ---- syn_queue.c: SYNs held while every TCP PCB is taken ---------------- */
#ifndef SYN_QUEUE_LEN
#define SYN_QUEUE_LEN 256             /* 20 bytes each; 0: none (lwIP drops such SYNs) */
#endif
#ifndef SYN_QUEUE_HOLD_MS
#define SYN_QUEUE_HOLD_MS 75000u      /* a peer's connect has timed out by then */
#endif

/* ---- tcp_time_wait.c: connections in TIME-WAIT, off lwIP's list -------- */
#ifndef TCP_TIME_WAIT_BUCKETS
#define TCP_TIME_WAIT_BUCKETS 0       /* hash buckets, a power of two; 0: off (lwIP's own list, */
#endif                                /* walked for every SYN) */
#ifndef TCP_TIME_WAIT_MAX
#define TCP_TIME_WAIT_MAX MEMP_NUM_TCP_PCB /* at most this many, the newest; and a PCB in */
#endif                                /* TIME-WAIT is freed whenever a new connection needs one */
#ifndef TCP_TIME_WAIT_PCB_RESERVE
#define TCP_TIME_WAIT_PCB_RESERVE 16  /* PCBs kept free by freeing the oldest in TIME-WAIT, so a */
#endif                                /* SYN finds one at once instead of waiting in syn_queue.c */
#ifndef TCP_TIME_WAIT_OOW_ACK_MS
#define TCP_TIME_WAIT_OOW_ACK_MS 500  /* at most one ACK per this many ms for segments in TIME-WAIT */
#endif                                /* that are not the peer's FIN again (Linux: the same 500 ms) */

/* ---- bulk.c: the /bulk throughput-test resource ------------------------- */
#ifndef APP_BULK_SIZE
#define APP_BULK_SIZE (1024u * 1024u) /* RAM from port_bulk_buffer(); 0: no /bulk */
#endif

/* ---- placement of large buffers ------------------------------------------ */
/* On the static buffers that are always written before they are read (the
 * arenas, the upload and work buffers; the store's RAM index, which
 * store_mount() clears): a port may put them where start-up code does not
 * clear them (LiteX: picolibc's .preserve section, outside .bss). */
#ifndef LITEDAV_NOINIT
#define LITEDAV_NOINIT
#endif

#endif
