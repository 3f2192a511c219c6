/* HTTP/1.1 server on lwIP's raw TCP API (NO_SYS): keep-alive, pipelining,
 * flow control through tcp_recved and tcp_sent, bounded per-connection memory.
 *
 * Handlers (chosen by the route table given to httpd_init, http/router.h) see
 * one request at a time as an http_exchange and never touch lwIP:
 *
 *   begin(x)            the head is parsed. Return 0 to accept the request
 *                       (its body follows through body(); an
 *                       "Expect: 100-continue" is answered now), or a status
 *                       >= 300 to reject it with a short error body. A handler
 *                       that needs headers in its rejection (ETag, Allow...)
 *                       calls httpd_respond() and returns its status instead.
 *                       HTTPD_BEGIN_WAIT: not now (no room for the request
 *                       yet); nothing is read meanwhile (the TCP window stays
 *                       shut), and begin(x) is called again once the handler
 *                       calls httpd_resume(x). abort(x) is called if the
 *                       connection ends while it waits.
 *   body(x, data, len)  the next piece of the decoded body (Content-Length or
 *                       chunked, RFC 9112 section 6.3). Return HTTPD_BODY_OK,
 *                       HTTPD_BODY_PAUSE to get no more until httpd_resume()
 *                       (the TCP window stays shut meanwhile), or a status
 *                       >= 300 to reject. NULL: the body is discarded.
 *   end(x)              the body is complete. The handler answers with
 *                       httpd_respond(), now or later (then httpd_resume()).
 *   abort(x)            optional: the request ended without end() or before
 *                       its response was fully queued (connection lost,
 *                       framing error, rejection); release what x->state holds.
 *
 * A rejected request's body is read and dropped when that is cheap (RFC 9112
 * section 9.3 keeps the connection usable), otherwise the response says
 * "Connection: close" and the connection is closed after it. */
#ifndef LITEDAV_HTTPD_H
#define LITEDAV_HTTPD_H

#include <stddef.h>
#include <stdint.h>

#include "http/http_parse.h"

/* Largest request body the server takes at all (413 above it); routes set
 * their own, smaller limits (/bulk is the one that needs this much). */
#ifndef HTTPD_BODY_MAX
#define HTTPD_BODY_MAX (1024u * 1024u)
#endif
/* Largest body of a rejected request that is read and dropped to keep the
 * connection; larger ones close it. */
#ifndef HTTPD_DRAIN_MAX
#define HTTPD_DRAIN_MAX (16u * 1024u)
#endif

struct http_route;
struct http_router;

struct http_exchange {
    const struct http_request *req;   /* the head: valid until the response is queued */
    const struct http_route *route;   /* the matched route, NULL if none */
    uint32_t allow;                   /* HTTP_METHOD_BIT() set the target allows (Allow fields) */
    void *state;                      /* the handler's own, NULL at begin */
    char *scratch;                    /* per-connection buffer, free for the handler */
    size_t scratch_size;
    uint32_t body_received;           /* decoded body bytes delivered so far */
};

enum { HTTPD_BODY_OK = 0, HTTPD_BODY_PAUSE = 1 };
enum { HTTPD_BEGIN_WAIT = 1 };

struct http_handler {
    int (*begin)(struct http_exchange *x);
    int (*body)(struct http_exchange *x, const uint8_t *data, size_t len);
    void (*end)(struct http_exchange *x);
    void (*abort)(struct http_exchange *x);
};

/* A streamed body: write at most room bytes to buf and set *len. Return 0
 * while more follows, 1 with the last piece, -1 to abort the connection
 * (the status line is long gone). 0 with *len == 0 means "not ready": call
 * httpd_resume() once it is.
 *
 * A piece may instead be handed out by reference, without a copy: the
 * producer calls httpd_produce_ref() and returns with *len == 0. Those bytes
 * are queued to lwIP as they are (the NIC reads them where they lie), so they
 * must not change while httpd_bytes_in_flight() says they may be sent. */
typedef int (*httpd_produce_fn)(struct http_exchange *x, char *buf, size_t room, size_t *len);

/* Inside a producer: the next piece is len bytes at data, by reference.
 * framed: they are whole chunks already (RFC 9112 section 7.1), for a
 * chunked response only; httpd adds no framing. */
void httpd_produce_ref(struct http_exchange *x, const void *data, uint32_t len, int framed);
/* Is the response being produced sent in chunked coding? */
int httpd_response_chunked(const struct http_exchange *x);

/* May TCP still send bytes from [start, end) (queued, unacknowledged, or held
 * by the NIC)? What hands out pieces by reference asks before it reuses
 * their memory. */
int httpd_bytes_in_flight(const void *start, const void *end);

#define HTTPD_LENGTH_UNKNOWN 0xffffffffu

struct http_response {
    int status;
    const char *content_type;  /* NULL: none (no body) */
    const char *headers;       /* extra field lines, each ending in CRLF; copied */
    /* the body: either bytes that outlive the response (sent without a copy;
     * bytes in x->scratch are copied), or a producer */
    const uint8_t *body;
    uint32_t body_len;
    httpd_produce_fn produce;
    uint32_t content_length;   /* with produce: total, or HTTPD_LENGTH_UNKNOWN (chunked) */
};

/* Start the response of x's request: the head is queued now, the body as the
 * send buffer drains. HEAD requests get the head only; 1xx/204/304 no body.
 * Returns 0, or -1 if x already has a response or its head does not fit
 * (then a 500 is sent instead). */
int httpd_respond(struct http_exchange *x, const struct http_response *resp);

/* A short text/plain error body "<status> <reason>\n[detail\n]". */
int httpd_respond_error(struct http_exchange *x, int status, const char *detail,
                        const char *headers);

/* A paused body or a waiting producer/handler may go on: call it from the
 * main loop (or from a handler callback, where it only lifts the pause). The
 * connection may be finished and x gone when it returns. */
void httpd_resume(struct http_exchange *x);

struct httpd_stats {
    uint32_t conns_open;
    uint32_t conns_max_open;
    uint64_t conns_total;
    uint64_t conns_refused;   /* no memory even to wait for connection state: reset */
    uint32_t conns_waiting;   /* asked something, waiting for a connection state (httpd_poll) */
    uint32_t conns_idle;      /* open without a state, silent (HTTPD_CONNS_MAX: between requests) */
    uint64_t conns_waited;    /* times a connection went through the wait, since boot */
    uint64_t conns_timed_out; /* closed (reset, when stalled mid-exchange) after an idle timeout */
    uint64_t conns_reclaimed; /* idle ones reset to give their PCB to a SYN waiting for one */
    uint64_t orphans_reset;   /* closed ones reset after HTTPD_ORPHAN_RETRIES unanswered FINs */
    uint64_t requests;
    uint64_t responses_4xx, responses_5xx;
};
/* The server's counters (the HTTP layer keeps them). */
const struct httpd_stats *httpd_get_stats(void);

/* Give waiting connections the state freed since the last call: call it
 * from the main loop. */
void httpd_poll(void);

/* Listen on the given TCP port and serve requests by the router's table
 * (kept, not copied). Returns 0 on success. */
int httpd_init(uint16_t port, const struct http_router *router);

#endif
