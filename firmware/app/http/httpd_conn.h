/* One connection's state in the HTTP server: what httpd.c (the connection,
 * its requests) and httpd_response.c (its responses) share. Private to the
 * two; handlers see only the http_exchange inside (httpd.h). */
#ifndef LITEDAV_HTTPD_CONN_H
#define LITEDAV_HTTPD_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "lwip/pbuf.h"
#include "lwip/tcp.h"

#include "http/http_chunked.h"
#include "http/http_parse.h"
#include "http/httpd.h"

#include "platform/app_config.h"

#define HEAD_MAX HTTPD_HEAD_MAX       /* longest request head; longer gets 431 */
#define SCRATCH_MAX HTTPD_SCRATCH_MAX /* rendered bodies, handler buffers */
#define STAGE_MAX HTTPD_STAGE_MAX     /* response heads and produced body pieces */

enum rx_state { RX_HEAD, RX_BODY, RX_RESPOND };
enum body_framing { BODY_NONE, BODY_LENGTH, BODY_CHUNKED };

struct conn {
    struct tcp_pcb *pcb;
    struct pbuf *rx;            /* received, not yet consumed */
    uint32_t recved_owed;       /* consumed, window not yet given back (paused, or in process()) */
    uint16_t head_len;
    uint8_t head_scan;          /* enum http_head_scan_state of head[0..head_len) */
    uint8_t rx_state;
    uint16_t idle_polls;
    uint8_t peer_closed;        /* FIN received */
    uint8_t close_after;        /* close once the current response is queued */
    uint8_t in_process;         /* process() is running: handlers are called from it */
    uint8_t in_use;             /* HTTPD_CONNS_MAX pool: taken */
    uint8_t write_stalled;      /* a write found lwIP's segments or heap exhausted */

    /* the request in progress */
    const struct http_handler *handler;
    uint8_t framing;
    uint8_t accepted;           /* begin() said yes: end() or abort() is owed */
    uint8_t deliver;            /* body goes to the handler (else dropped) */
    uint8_t paused;
    uint8_t begin_wait;         /* begin() said HTTPD_BEGIN_WAIT: asked again at httpd_resume() */
    uint8_t responded;          /* the response has been started */
    uint8_t skip_body;          /* rejected, body not read: the connection closes */
    uint32_t body_left;         /* BODY_LENGTH: bytes still to come */
    uint32_t drain_left;        /* dropped-body bytes we still read before closing */
    struct http_chunked chunked;
    struct http_request req;
    struct http_exchange x;

    /* the response in progress */
    uint8_t continue_left;      /* bytes of "100 Continue" still to queue */
    uint8_t tx_chunked;         /* produced body in chunked coding */
    uint8_t tx_producing;       /* produce() has more */
    uint32_t tx_length_left;    /* produced body of known length: bytes owed */
    uint8_t last_chunk_left;
    uint16_t stage_len, stage_off;
    const uint8_t *body;        /* static or scratch body still to queue */
    uint32_t body_tx_left;
    uint8_t body_copy;
    uint8_t chunk_crlf_left;    /* the CRLF ending a chunk whose data went by reference */
    httpd_produce_fn produce;
    const void *ref;            /* a producer's piece by reference (httpd_produce_ref) */
    uint32_t ref_len;
    uint8_t ref_framed;

    char stage[STAGE_MAX];
    char head[HEAD_MAX];
    char scratch[SCRATCH_MAX];
};

static inline struct conn *conn_of(struct http_exchange *x)
{
    return (struct conn *)((char *)x - offsetof(struct conn, x));
}

static inline int response_pending(const struct conn *c)
{
    return c->continue_left || c->stage_off < c->stage_len || c->body_tx_left ||
           c->chunk_crlf_left || c->tx_producing || c->last_chunk_left;
}

/* httpd.c: a write found lwIP's segments or heap exhausted (1), or goes on (0):
 * with a state pool, the main loop retries stalled writes (httpd_poll). */
void httpd_write_stalled(struct conn *c, uint8_t stalled);

/* httpd.c: an interim "100 Continue" goes out before anything else. */
void httpd_send_continue(struct conn *c);

/* The counters httpd_get_stats() shows, kept by httpd.c and httpd_response.c. */
extern struct httpd_stats httpd_stats;

#endif
