/*
 * HTTP/1.1 server on lwIP's raw API.
 *
 * One connection = one struct conn from lwIP's heap. Received pbufs are
 * chained on conn->rx and consumed only as requests are handled, so
 * tcp_recved() (the receive window) is the backpressure: a client that
 * pipelines or uploads faster than we handle is throttled by TCP, not by
 * dropping. A request goes through three receive states:
 *
 *   RX_HEAD    collecting the head into conn->head (4 KiB, 431 beyond);
 *              waits while an earlier response is still being queued, so
 *              pipelined responses stay in order
 *   RX_BODY    the body, decoded (Content-Length or chunked) and passed to
 *              the handler in pieces straight from the pbufs, or dropped
 *   RX_RESPOND the body is done; waiting for the response to be queued
 *
 * Responses are httpd_response.c's. A connection without a state (every
 * state taken, or between requests with a state pool) waits in
 * net/conn_admission.c.
 */
#include "http/httpd.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "lwip/mem.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#include "http/http_chunked.h"
#include "http/http_parse.h"
#include "http/httpd_conn.h"
#include "http/router.h"
#include "net/conn_admission.h"
#include "net/server_conn.h"

#include "platform/app_config.h"
#include "platform/port.h"

struct httpd_stats httpd_stats;

const struct httpd_stats *httpd_get_stats(void) { return &httpd_stats; }

static const struct http_router *router; /* httpd_init's */

/* CONN_DETACHED: the connection went on waiting without its struct conn */
enum conn_fate { CONN_ALIVE, CONN_CLOSED, CONN_ABORTED, CONN_DETACHED };

/* The request ends without end() or before its response was queued. */
static void handler_abort(struct conn *c)
{
    if (c->accepted && c->handler && c->handler->abort)
        c->handler->abort(&c->x);
    c->accepted = 0;
}

/* With HTTPD_CONNS_MAX set, connection states come from a static pool: a
 * few KiB each out of a small heap that also holds send data and waiting
 * clients' copies would soon find no hole big enough. Otherwise from the
 * heap, as many as it holds. */
static enum conn_fate process(struct conn *c);
static err_t on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err);

#if HTTPD_CONNS_MAX
static struct conn conn_pool[HTTPD_CONNS_MAX];
static struct conn *conn_unused[HTTPD_CONNS_MAX];
static unsigned conn_unused_count, conn_pool_ready;
static unsigned conns_stalled;  /* states with write_stalled set: the main loop retries them */

static struct conn *conn_alloc(void)
{
    if (!conn_pool_ready) {
        for (conn_unused_count = 0; conn_unused_count < HTTPD_CONNS_MAX; conn_unused_count++)
            conn_unused[conn_unused_count] = &conn_pool[conn_unused_count];
        conn_pool_ready = 1;
    }
    return conn_unused_count ? conn_unused[--conn_unused_count] : NULL;   /* conn_attach marks it */
}

/* A connection may keep (or, accepted, get) a state without asking only while
 * more than HTTPD_CONNS_RESERVE are free: those stay for clients that wait. */
static int conns_spare(void)
{
    if (!conn_pool_ready)
        return HTTPD_CONNS_MAX > HTTPD_CONNS_RESERVE;
    return conn_unused_count > HTTPD_CONNS_RESERVE;
}

static void conn_release(struct conn *c)
{
    c->in_use = 0;
    conn_unused[conn_unused_count++] = c;
}

/* Writes that found lwIP out of segments or heap go on as soon as the main
 * loop comes round, not a poll interval later: with a small pool the
 * memory is back within a few ACKs. One state per main-loop turn, round
 * robin: a produced response renders up to PRODUCE_TURN, and the NIC is
 * polled before the next connection's turn (with LiteEth's two RX slots,
 * frames that arrive during more than one turn are dropped). */
static void retry_stalled_writes(void)
{
    static unsigned next;
    unsigned n;
    /* the pool is walked only while a write is stalled, not on every main-loop turn */
    for (n = 0; conns_stalled && n < HTTPD_CONNS_MAX; n++) {
        struct conn *c = &conn_pool[next];
        next = next + 1 < HTTPD_CONNS_MAX ? next + 1 : 0;
        if (c->in_use && c->write_stalled && !c->in_process) {
            process(c);
            return;
        }
    }
}

void httpd_write_stalled(struct conn *c, uint8_t stalled)
{
    if (c->write_stalled != stalled)
        conns_stalled += stalled ? 1u : (unsigned)-1;
    c->write_stalled = stalled;
}
#else
static int conns_spare(void)
{
    return 1;
}

void httpd_write_stalled(struct conn *c, uint8_t stalled)
{
    c->write_stalled = stalled;
}

static struct conn *conn_alloc(void)
{
    return mem_malloc(sizeof(struct conn));
}

static void conn_release(struct conn *c)
{
    mem_free(c);
}

static void retry_stalled_writes(void)
{
}
#endif

static void conn_free(struct conn *c)
{
    handler_abort(c);
    httpd_write_stalled(c, 0);
    if (c->pcb)
        server_conn_unhook(c->pcb);
    if (c->rx)
        pbuf_free(c->rx);
    conn_release(c);
    httpd_stats.conns_open--;
}

/* Give back the window of everything received, then close gracefully: lwIP
 * answers a close with unread data by RST, which would cut off the response. */
static enum conn_fate conn_close(struct conn *c)
{
    struct tcp_pcb *pcb = c->pcb;
    server_conn_window_give(pcb, c->recved_owed + (c->rx ? c->rx->tot_len : 0));
    conn_free(c);
    return server_conn_close(pcb, &httpd_stats.orphans_reset) == ERR_OK ? CONN_CLOSED : CONN_ABORTED;
}

static enum conn_fate conn_abort(struct conn *c)
{
    struct tcp_pcb *pcb = c->pcb;
    conn_free(c);
    tcp_abort(pcb);
    return CONN_ABORTED;
}

/* Drop n bytes from the front of rx. The window reopens once per process()
 * (one tcp_recved for a whole chain of pbufs, not one each), unless a
 * handler asked for a pause (then when it resumes). */
static void consume_rx(struct conn *c, uint32_t n)
{
    uint32_t left = n;
    while (left) {
        u16_t step = left > 0xffff ? 0xffff : (u16_t)left;
        c->rx = pbuf_free_header(c->rx, step);
        left -= step;
    }
    c->recved_owed += n;
}

/* Zero-length pbufs at the front of rx would stall the body loop. */
static void drop_empty_pbufs(struct conn *c)
{
    while (c->rx && c->rx->len == 0) {
        struct pbuf *next = c->rx->next;
        if (next)
            pbuf_ref(next);
        pbuf_free(c->rx);
        c->rx = next;
    }
}

/* Errors in the framing itself: where the next request starts is unknown,
 * so the connection closes after the answer (RFC 9112 section 6.3). */
static void fail_request(struct conn *c, int status, const char *detail)
{
    handler_abort(c);
    c->close_after = 1;
    c->skip_body = 1;
    if (!c->responded)
        httpd_respond_error(&c->x, status, detail, NULL);
    c->rx_state = RX_RESPOND;
}

/* ---- receiving ---------------------------------------------------------- */

static void request_reset(struct conn *c)
{
    c->handler = NULL;
    c->framing = BODY_NONE;
    c->accepted = c->deliver = c->paused = c->begin_wait = c->responded = c->skip_body = 0;
    c->body_left = c->drain_left = 0;
    memset(&c->x, 0, sizeof(c->x));
    c->x.req = &c->req;
    c->x.scratch = c->scratch;
    c->x.scratch_size = sizeof(c->scratch);
    c->head_len = 0;
    c->head_scan = HTTP_SCAN_LEAD;
    c->rx_state = RX_HEAD;
}

/* Ask the handler to take the request (again after HTTPD_BEGIN_WAIT). */
static void begin_request(struct conn *c)
{
    int rc = c->handler->begin ? c->handler->begin(&c->x) : 0;
    if (rc == HTTPD_BEGIN_WAIT && !c->responded) {
        /* nothing more is read (paused: the window stays shut) until the
         * handler resumes x; abort() is owed if the connection ends first */
        c->begin_wait = c->accepted = c->paused = 1;
        return;
    }
    if (rc == 0 && !c->responded) {
        c->accepted = 1;
        c->deliver = c->handler->body != NULL;
        /* RFC 9110 section 10.1.1: ask for the body only once it is wanted */
        if (c->req.expect_continue && c->framing != BODY_NONE)
            httpd_send_continue(c);
    } else if (!c->responded) {
        httpd_respond_error(&c->x, rc >= 300 && rc <= 599 ? rc : 500, NULL, NULL);
    }
    if (c->responded && c->framing != BODY_NONE && !c->skip_body)
        c->drain_left = HTTPD_DRAIN_MAX;
}

/* A complete head is in c->head[0..head_len). */
static void start_request(struct conn *c)
{
    char detail[64];
    uint32_t body_max;
    int rc = http_parse_head(c->head, c->head_len, &c->req);

    httpd_stats.requests++;
    c->rx_state = RX_BODY;
    if (rc) {
        fail_request(c, rc, NULL);
        return;
    }
    if (c->req.chunked) {
        c->framing = BODY_CHUNKED;
    } else if (c->req.content_length) {
        c->framing = BODY_LENGTH;
        c->body_left = c->req.content_length;
    }

    c->handler = http_route(router, &c->x, &body_max);
    if (body_max > HTTPD_BODY_MAX)
        body_max = HTTPD_BODY_MAX;
    http_chunked_init(&c->chunked, body_max);
    if (c->framing == BODY_LENGTH && c->req.content_length > body_max) {
        /* RFC 9110 section 15.5.14 */
        snprintf(detail, sizeof(detail), "The limit is %lu bytes.", (unsigned long)body_max);
        httpd_respond_error(&c->x, 413, detail, NULL);
        if (c->responded && c->framing != BODY_NONE && !c->skip_body)
            c->drain_left = HTTPD_DRAIN_MAX;
    } else {
        begin_request(c);
    }
}

/* The body is complete (or will not be read): hand over to the handler. */
static void body_done(struct conn *c)
{
    c->rx_state = RX_RESPOND;
    if (c->accepted && !c->responded && c->handler->end)
        c->handler->end(&c->x);
    else if (c->accepted && !c->responded)
        httpd_respond_error(&c->x, 500, "The handler gave no response.", NULL);
}

/* Pass n body bytes to the handler, or drop them. Returns 0 when they are
 * used up, -1 when they are left unread because the connection will close. */
static int body_bytes(struct conn *c, const uint8_t *data, size_t n)
{
    if (!n)
        return 0;
    c->x.body_received += (uint32_t)n;
    if (c->accepted && !c->responded) {
        int rc = c->deliver ? c->handler->body(&c->x, data, n) : HTTPD_BODY_OK;
        if (rc == HTTPD_BODY_PAUSE && !c->responded) {
            c->paused = 1;
        } else if (rc != HTTPD_BODY_OK || c->responded) {
            /* rejected part-way: the rest of the body is dropped */
            handler_abort(c);
            if (!c->responded)
                httpd_respond_error(&c->x, rc >= 300 && rc <= 599 ? rc : 500, NULL, NULL);
            c->drain_left = HTTPD_DRAIN_MAX;
        }
        return 0;
    }
    /* the body of a rejected request: read a bounded amount, then close */
    if (n > c->drain_left) {
        c->close_after = 1;
        c->skip_body = 1;
        return -1;
    }
    c->drain_left -= (uint32_t)n;
    return 0;
}

/* Consume what rx holds of the body. Returns 1 if it made progress. */
static int body_step(struct conn *c)
{
    const char *seg;
    size_t seg_len;

    if (c->skip_body) {
        c->rx_state = RX_RESPOND;
        handler_abort(c);
        return 1;
    }
    if (c->paused)
        return 0; /* the handler is busy with what it has (a flash write...) */
    if (c->framing == BODY_NONE || (c->framing == BODY_LENGTH && c->body_left == 0)) {
        body_done(c);
        return 1;
    }
    drop_empty_pbufs(c);
    if (!c->rx) {
        if (c->peer_closed)
            fail_request(c, 400, "The request body ended early."); /* section 8 */
        return c->rx_state != RX_BODY;
    }

    seg = c->rx->payload;
    seg_len = c->rx->len;
    /* A handler may have to keep one piece (dav_body: a PUT that meets a busy
     * writer stashes it in the scratch buffer). A waiting connection's bytes
     * are one heap copy of up to HTTPD_WAIT_RX_MAX, more than that when lwIP
     * hands over reordered segments at once. */
    if (seg_len > SCRATCH_MAX)
        seg_len = SCRATCH_MAX;
    if (c->framing == BODY_LENGTH) {
        size_t n = seg_len < c->body_left ? seg_len : c->body_left;
        c->body_left -= (uint32_t)n;
        if (body_bytes(c, (const uint8_t *)seg, n) == 0)
            consume_rx(c, (uint32_t)n);
        return 1;
    } else {
        size_t used, off, len;
        enum http_chunked_result r =
            http_chunked_feed(&c->chunked, seg, seg_len, &used, &off, &len);
        if (r == HTTP_CHUNKED_ERROR || r == HTTP_CHUNKED_TOO_LARGE) {
            char detail[64];
            if (r == HTTP_CHUNKED_TOO_LARGE)
                snprintf(detail, sizeof(detail), "The limit is %lu bytes.",
                         (unsigned long)c->chunked.max_body);
            fail_request(c, r == HTTP_CHUNKED_ERROR ? 400 : 413,
                         r == HTTP_CHUNKED_ERROR ? "Malformed chunked encoding." : detail);
            return 1;
        }
        if (body_bytes(c, (const uint8_t *)seg + off, len) == 0)
            consume_rx(c, (uint32_t)used);
        if (r == HTTP_CHUNKED_DONE && c->rx_state == RX_BODY && !c->skip_body)
            body_done(c);
        return 1;
    }
}

/* Collect the next head from rx. Returns 1 if it made progress. */
static int head_step(struct conn *c)
{
    const struct pbuf *q;
    u16_t room, got;
    size_t want;

    if (!c->rx)
        return 0;
    /* RFC 9112 section 2.2: ignore empty lines before a request-line */
    if (c->head_len == 0) {
        u8_t ch = pbuf_get_at(c->rx, 0);
        if (ch == '\r' || ch == '\n') {
            consume_rx(c, 1);
            return 1;
        }
    }
    /* scan the received pieces where they lie, then copy the head alone */
    room = (u16_t)(HEAD_MAX - c->head_len);
    for (q = c->rx, want = 0; q && want < room && c->head_scan != HTTP_SCAN_DONE; q = q->next)
        want += http_head_scan(&c->head_scan, q->payload,
                               q->len < room - want ? q->len : room - want);
    got = pbuf_copy_partial(c->rx, c->head + c->head_len, (u16_t)want, 0);
    consume_rx(c, got);
    c->head_len += got;
    if (c->head_scan == HTTP_SCAN_DONE) {
        start_request(c);
        return 1;
    }
    if (c->head_len == HEAD_MAX) {
        httpd_stats.requests++;
        c->rx_state = RX_BODY;
        memset(&c->req, 0, sizeof(c->req));
        fail_request(c, 431, NULL);
    }
    return 1;
}

/* Work through received bytes until everything waits for send room, more
 * input, or a handler. */
/* ---- sending ------------------------------------------------------------ */

/* Queuing what a response has ready (its head and body come from
 * httpd_response.c) lives here, beside process() that calls it after every
 * request: in a file of its own it could not be inlined, and the call cost
 * a keep-alive small GET on LiteEth ~1% of its cycles (bench/README.md). */
#define CHUNK_FRAMING 12       /* "xxxxxxxx\r\n" before and "\r\n" after a piece */

static const char continue_line[] = "HTTP/1.1 100 Continue\r\n\r\n";
static const char last_chunk[] = "0\r\n\r\n";

/* Queue up to len bytes; returns how many were taken, or -1 on a fatal
 * error (the connection must be aborted). */
static int queue_bytes(struct conn *c, const void *ptr, uint32_t len, int copy, int more)
{
    u16_t room = tcp_sndbuf(c->pcb);
    u16_t n;
    u8_t flags = copy ? TCP_WRITE_FLAG_COPY : 0;
    err_t err;

    if (room == 0 || tcp_sndqueuelen(c->pcb) >= TCP_SND_QUEUELEN)
        return 0;
    n = len > room ? room : (u16_t)len;
    if (n < len || more)
        flags |= TCP_WRITE_FLAG_MORE;
    err = tcp_write(c->pcb, ptr, n, flags);
    if (err == ERR_MEM) {
        httpd_write_stalled(c, 1);
        return 0; /* retried from tcp_sent or tcp_poll (and httpd_poll) */
    }
    return err == ERR_OK ? n : -1;
}

static int segments_hold(const struct tcp_seg *seg, const uint8_t *start, const uint8_t *end)
{
    for (; seg; seg = seg->next) {
        const struct pbuf *p;
        for (p = seg->p; p; p = p->next)
            if ((const uint8_t *)p->payload < end && (const uint8_t *)p->payload + p->len > start)
                return 1;
    }
    return 0;
}

/* Bytes by reference that a connection has not handed to TCP yet. */
static int pending_body_holds(const struct tcp_pcb *pcb, const uint8_t *start, const uint8_t *end)
{
    const struct conn *c = pcb->recv == on_recv ? pcb->callback_arg : NULL;
    return c && c->body_tx_left && !c->body_copy && c->body < end && c->body + c->body_tx_left > start;
}

int httpd_bytes_in_flight(const void *start, const void *end)
{
    const struct tcp_pcb *pcb;
    /* every connection that can still send is on the active list (TIME-WAIT
     * holds no data); segments freed on acknowledgement may live on in the NIC */
    for (pcb = tcp_active_pcbs; pcb; pcb = pcb->next)
        if (segments_hold(pcb->unsent, start, end) || segments_hold(pcb->unacked, start, end) ||
            pending_body_holds(pcb, start, end))
            return 1;
    return port_tx_holds(start, end);
}

void httpd_produce_ref(struct http_exchange *x, const void *data, uint32_t len, int framed)
{
    struct conn *c = conn_of(x);
    c->ref = data;
    c->ref_len = len;
    c->ref_framed = (uint8_t)framed;
}

int httpd_response_chunked(const struct http_exchange *x) { return conn_of((struct http_exchange *)x)->tx_chunked; }

/* Ask the producer for the next piece, framed as a chunk if need be. A piece
 * by reference goes out from where it lies (c->body, not copied), its chunk
 * head from the stage and its CRLF after it. */
static int produce_piece(struct conn *c)
{
    size_t room = STAGE_MAX - CHUNK_FRAMING, len = 0;
    char *buf = c->stage + (c->tx_chunked ? CHUNK_FRAMING - 2 : 0);
    int rc, counted = !c->tx_chunked && c->tx_length_left != HTTPD_LENGTH_UNKNOWN;
    int by_ref, framed;

    if (counted && c->tx_length_left < room)
        room = c->tx_length_left;
    c->ref_len = 0;
    rc = c->produce(&c->x, buf, room, &len);
    by_ref = c->ref_len != 0;
    framed = by_ref && c->ref_framed;
    if (by_ref) {
        if (len || (counted && c->ref_len > c->tx_length_left) || (framed && !c->tx_chunked))
            return -1;
        len = c->ref_len;
        c->body = c->ref;
        c->body_tx_left = c->ref_len;
        c->body_copy = 0;
        c->ref_len = 0;
    }
    if (rc < 0 || (!by_ref && len > room))
        return -1;
    if (counted) {
        /* the Content-Length sent must be the length produced (RFC 9112
         * section 6.3): a producer that falls short breaks the framing */
        c->tx_length_left -= (uint32_t)len;
        if (rc == 1 && c->tx_length_left)
            return -1;
        if (c->tx_length_left == 0)
            rc = 1;
    }
    if (rc == 1)
        c->tx_producing = 0;
    if (len && c->tx_chunked && !framed) {
        /* RFC 9112 section 7.1: chunk-size in hex, right-aligned before the
         * data; by hand, as snprintf costs more than the rest of a piece's framing */
        static const char hex[] = "0123456789abcdef";
        size_t start = CHUNK_FRAMING - 2, v = len;
        c->stage[--start] = '\n';
        c->stage[--start] = '\r';
        do {
            c->stage[--start] = hex[v & 15];
            v >>= 4;
        } while (v);
        c->stage_off = (uint16_t)start;
        if (by_ref) {
            c->stage_len = (uint16_t)(CHUNK_FRAMING - 2);
            c->chunk_crlf_left = 2;
        } else {
            memcpy(buf + len, "\r\n", 2);
            c->stage_len = (uint16_t)(CHUNK_FRAMING + len);
        }
    } else {
        c->stage_off = 0;
        c->stage_len = by_ref ? 0 : (uint16_t)len;
    }
    if (!c->tx_producing && c->tx_chunked)
        c->last_chunk_left = sizeof(last_chunk) - 1;
    return len || !c->tx_producing;
}

/* A produced response renders at most this much per main-loop turn (with a
 * state pool, whose stalled writes the main loop retries): a long listing
 * rendered into a 64 KiB send buffer at once kept the CPU from the MAC's two
 * RX slots for milliseconds, and frames were dropped. */
#if HTTPD_CONNS_MAX
#define PRODUCE_TURN HTTPD_PRODUCE_TURN
#else
#define PRODUCE_TURN SIZE_MAX
#endif

static int send_pending(struct conn *c)
{
    size_t produced = 0;
    for (;;) {
        int n;
        if (c->continue_left) {
            size_t off = sizeof(continue_line) - 1 - c->continue_left;
            n = queue_bytes(c, continue_line + off, c->continue_left, 0, 0);
            if (n > 0)
                c->continue_left -= (uint8_t)n;
        } else if (c->stage_off < c->stage_len) {
            n = queue_bytes(c, c->stage + c->stage_off, (uint32_t)(c->stage_len - c->stage_off),
                            1, c->body_tx_left || c->tx_producing || c->last_chunk_left);
            if (n > 0)
                c->stage_off += (uint16_t)n;
        } else if (c->body_tx_left) {
            n = queue_bytes(c, c->body, c->body_tx_left, c->body_copy,
                            c->chunk_crlf_left || c->tx_producing || c->last_chunk_left);
            if (n > 0) {
                c->body += n;
                c->body_tx_left -= (uint32_t)n;
            }
        } else if (c->chunk_crlf_left) {
            /* copied: the next chunk's head joins these two bytes in one pbuf */
            n = queue_bytes(c, "\r\n" + 2 - c->chunk_crlf_left, c->chunk_crlf_left, 1, 1);
            if (n > 0)
                c->chunk_crlf_left -= (uint8_t)n;
        } else if (c->tx_producing) {
            if (tcp_sndbuf(c->pcb) < CHUNK_FRAMING) {
                n = 0;
            } else if (produced >= PRODUCE_TURN) {
                httpd_write_stalled(c, 1); /* the main loop comes back after RX */
                n = 0;
            } else {
                n = produce_piece(c); /* 0: the producer is not ready */
                produced += (size_t)(c->stage_len - c->stage_off) + c->body_tx_left;
            }
        } else if (c->last_chunk_left) {
            size_t off = sizeof(last_chunk) - 1 - c->last_chunk_left;
            n = queue_bytes(c, last_chunk + off, c->last_chunk_left, 0, 0);
            if (n > 0)
                c->last_chunk_left -= (uint8_t)n;
        } else {
            break;
        }
        if (n < 0)
            return -1;
        if (n == 0)
            break;
    }
    tcp_output(c->pcb);
    return 0;
}

void httpd_send_continue(struct conn *c)
{
    c->continue_left = sizeof(continue_line) - 1;
}

static enum conn_fate process_loop(struct conn *c);
static enum conn_fate conn_detach(struct conn *c, int idle);

/* A connection may take a state, or keep its own after a response, while
 * states are spare and no record queues for one (the count admission keeps
 * for us): conn_admission_release's test, asked here inline after every
 * request and on every accept, where a call into admission and back through
 * its callbacks cost a small GET a few cache lines. */
static inline int state_may_stay(void)
{
    return conns_spare() && !httpd_stats.conns_waiting;
}

static inline int keeps_state(const struct conn *c)
{
    return !HTTPD_CONNS_MAX || c->rx || c->peer_closed || state_may_stay();
}

static enum conn_fate process(struct conn *c)
{
    enum conn_fate fate;
    c->in_process = 1;
    httpd_write_stalled(c, 0);
    fate = process_loop(c);
    if (fate == CONN_ALIVE) {
        c->in_process = 0;
        if (!c->paused && c->recved_owed) {
            server_conn_window_give(c->pcb, c->recved_owed);
            c->recved_owed = 0;
        }
    }
    return fate;
}

static enum conn_fate process_loop(struct conn *c)
{
    for (;;) {
        int progress = 0;

        if (response_pending(c) && send_pending(c) < 0)
            return conn_abort(c);
        if (c->rx_state == RX_BODY)
            progress = body_step(c);
        if (c->rx_state == RX_RESPOND && c->responded && !response_pending(c)) {
            c->accepted = 0; /* the response is queued: nothing more is owed */
            if (c->close_after || c->peer_closed)
                return conn_close(c);
            request_reset(c);
            if (!keeps_state(c) && conn_detach(c, 0) == CONN_DETACHED)
                return CONN_DETACHED;
            progress = 1;
        }
        if (c->rx_state == RX_HEAD && !response_pending(c)) {
            if (!c->rx && c->peer_closed)
                return conn_close(c);
            progress |= head_step(c);
            if (!progress && c->peer_closed)
                return conn_close(c); /* a partial head that will never complete */
        }
        if (!progress)
            return CONN_ALIVE;
    }
}

void httpd_resume(struct http_exchange *x)
{
    struct conn *c = conn_of(x);
    if (c->begin_wait) {
        c->begin_wait = c->accepted = c->paused = 0;
        begin_request(c);
        if (c->begin_wait)
            return; /* still no room */
        if (c->recved_owed) {
            server_conn_window_give(c->pcb, c->recved_owed);
            c->recved_owed = 0;
        }
    } else if (c->paused) {
        c->paused = 0;
        server_conn_window_give(c->pcb, c->recved_owed);
        c->recved_owed = 0;
    }
    /* called from inside a handler callback: the running loop goes on */
    if (!c->in_process)
        process(c);
}

/* ---- lwIP callbacks ----------------------------------------------------- */

static err_t on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    struct conn *c = arg;

    if (!c) {
        if (p) {
            tcp_recved(pcb, p->tot_len);
            pbuf_free(p);
        }
        return ERR_OK;
    }
    if (!p) {
        c->peer_closed = 1; /* finish what was received, then close */
        return process(c) == CONN_ABORTED ? ERR_ABRT : ERR_OK;
    }
    if (err != ERR_OK) {
        pbuf_free(p);
        return err;
    }
    c->idle_polls = 0;
    if (c->rx)
        pbuf_cat(c->rx, p);
    else
        c->rx = p;
    return process(c) == CONN_ABORTED ? ERR_ABRT : ERR_OK;
}

/* A large body waits for this much send room before more of it is queued:
 * each ACK frees about one wire segment, and topping the queue up per ACK
 * would cost a tcp_write() each time for the same bytes on the wire. */
#define SEND_REFILL_ROOM (TCP_SND_BUF / 4)

static err_t on_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
    struct conn *c = arg;
    if (!c)
        return ERR_OK;
    c->idle_polls = 0;
    /* more ACKs (and so more calls) follow while data is unacknowledged */
    if (c->body_tx_left > tcp_sndbuf(pcb) && tcp_sndbuf(pcb) < SEND_REFILL_ROOM && pcb->unacked)
        return ERR_OK;
#if HTTPD_CONNS_MAX
    /* a produced body is rendered from the main loop, not here inside the
     * NIC's receive loop: rendering after every ACK kept the CPU from the RX
     * slots for one PRODUCE_TURN per ACK, and frames were dropped */
    if (c->tx_producing && !c->in_process) {
        httpd_write_stalled(c, 1);
        return ERR_OK;
    }
#endif
    return process(c) == CONN_ABORTED ? ERR_ABRT : ERR_OK;
}

/* The handler holds the request (it waits for a resource of the handler's, its
 * body paused, or its end() deferred): the client waits for us, it is not
 * idle. The handler ends the wait (/dav/ answers 503 after its longest wait
 * for a context; the writer's holder is itself timed out if its client
 * stalls), not a reset: on a lossy link a lost RST left a client that had sent
 * its whole PUT waiting for ever. */
static int server_holds(const struct conn *c)
{
    return c->paused || (c->rx_state == RX_RESPOND && c->accepted && !c->responded);
}

static err_t on_poll(void *arg, struct tcp_pcb *pcb)
{
    struct conn *c = arg;
    if (!c) {
        tcp_abort(pcb);
        return ERR_ABRT;
    }
    if (server_holds(c))
        c->idle_polls = 0;
    else if (server_conn_idle_poll(&c->idle_polls)) {
        /* in the middle of an exchange (a request begun, or data of ours not
         * acknowledged) the peer has most likely vanished: reset, not closed */
        int stalled = c->head_len || c->rx_state != RX_HEAD || c->rx ||
                      server_conn_mid_exchange(pcb) || !server_conn_fin_affordable();
        httpd_stats.conns_timed_out++;
        return (stalled ? conn_abort(c) : conn_close(c)) == CONN_ABORTED ? ERR_ABRT : ERR_OK;
    }
    /* a keep-alive client quiet for a poll interval between requests gives
     * its state back: idle ones must not hold the states busy ones need */
    if (c->idle_polls >= 2 && c->rx_state == RX_HEAD && !c->head_len && !response_pending(c) &&
        conn_detach(c, 1) == CONN_DETACHED)
        return ERR_OK;
    return process(c) == CONN_ABORTED ? ERR_ABRT : ERR_OK;
}

static void on_err(void *arg, err_t err)
{
    struct conn *c = arg;
    if (c) {
        c->pcb = NULL; /* lwIP has freed it already */
        conn_free(c);
    }
}

static void conn_attach(struct conn *c, struct tcp_pcb *pcb)
{
    memset(c, 0, offsetof(struct conn, stage));
    c->in_use = 1;
    c->pcb = pcb;
    request_reset(c);
    httpd_stats.conns_open++;
    httpd_stats.conns_total++;
    if (httpd_stats.conns_open > httpd_stats.conns_max_open)
        httpd_stats.conns_max_open = httpd_stats.conns_open;

    tcp_nagle_disable(pcb); /* whole responses are written at once */
    tcp_arg(pcb, c);
    tcp_recv(pcb, on_recv);
    tcp_sent(pcb, on_sent);
    tcp_err(pcb, on_err);
    tcp_poll(pcb, on_poll, SERVER_CONN_POLL_INTERVAL);
}

/* ---- connections without a state (conn_admission.h) ----------------------
 * With HTTPD_CONNS_MAX (a small build with a few states), a connection
 * waits between requests without its state, and gets one once it has sent a
 * whole request head. A pool larger than HTTPD_CONNS_RESERVE (the LiteX
 * SoC's) lets connections keep their state between requests while more than
 * that many are free, so busy keep-alive clients skip the copy and the
 * hand-over. Without HTTPD_CONNS_MAX, connections keep their state between
 * requests, so while any wait, responses say "Connection: close": a few
 * persistent clients cannot hold every state. */
#ifndef HTTPD_WAIT_RX_MAX
#define HTTPD_WAIT_RX_MAX HEAD_MAX   /* copied while waiting; more stays with lwIP */
#endif

/* Has the chain p completed the request head whose scan is at *scan? */
static int head_complete(uint8_t *scan, const struct pbuf *p)
{
    for (; p && *scan != HTTP_SCAN_DONE; p = p->next)
        http_head_scan(scan, p->payload, p->len);
    return *scan == HTTP_SCAN_DONE;
}

static void *state_alloc(void)
{
    return conn_alloc();
}

/* A new connection, or one handed over from the wait with what it sent. */
static void state_attach(void *state, struct tcp_pcb *pcb, struct pbuf *rx, int peer_closed)
{
    struct conn *c = state;
    conn_attach(c, pcb);
    c->rx = rx;
    c->peer_closed = (uint8_t)peer_closed;
    if (rx || peer_closed)
        process(c);
}

/* lwIP's accept callback: a state now when one may be taken (first come,
 * first served), else a record of admission's. */
static err_t on_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
    struct conn *c;

    if (err != ERR_OK || !pcb)
        return ERR_VAL;
    if (!state_may_stay() || (c = conn_alloc()) == NULL)
        return conn_admission_wait(pcb);
    state_attach(c, pcb, NULL, 0);
    return ERR_OK;
}

static const struct conn_admission_server admission = {
    .request_complete = head_complete,
    .state_alloc = state_alloc,
    .state_spare = conns_spare,
    .state_attach = state_attach,
    .rx_max = HTTPD_WAIT_RX_MAX,
    .refused = &httpd_stats.conns_refused,
    .waiting = &httpd_stats.conns_waiting,
    .idle = &httpd_stats.conns_idle,
    .waited = &httpd_stats.conns_waited,
    .timed_out = &httpd_stats.conns_timed_out,
    .reclaimed = &httpd_stats.conns_reclaimed,
    .orphans_reset = &httpd_stats.orphans_reset,
};

/* Between requests, give the state back and wait like a new connection
 * (HTTPD_CONNS_MAX builds): an idle keep-alive client holds no state. Right
 * after a response only when states are scarce (HTTPD_CONNS_RESERVE); idle,
 * from on_poll, always. */
static enum conn_fate conn_detach(struct conn *c, int idle)
{
    struct tcp_pcb *pcb = c->pcb;

    if (!HTTPD_CONNS_MAX || c->rx || c->peer_closed || conn_admission_release(pcb, idle) != 0)
        return CONN_ALIVE;
    server_conn_window_give(pcb, c->recved_owed);
    c->recved_owed = 0;
    c->pcb = NULL;          /* the pcb's callbacks are the waiting record's now */
    conn_free(c);
    return CONN_DETACHED;
}

void httpd_poll(void)
{
    retry_stalled_writes();
    /* admission has work only while it holds records: queued or idle ones
     * (the counts it keeps for us); the main loop turns far more often */
    if (httpd_stats.conns_waiting || httpd_stats.conns_idle)
        conn_admission_poll();
}

int httpd_init(uint16_t port, const struct http_router *routes)
{
    struct tcp_pcb *pcb = tcp_new_ip_type(IPADDR_TYPE_ANY);
    struct tcp_pcb *listener;

    if (!pcb)
        return -1;
    router = routes;
    if (tcp_bind(pcb, IP_ANY_TYPE, port) != ERR_OK) {
        tcp_close(pcb);
        return -1;
    }
    listener = tcp_listen_with_backlog(pcb, TCP_DEFAULT_LISTEN_BACKLOG);
    if (!listener) {
        tcp_close(pcb);
        return -1;
    }
    conn_admission_start(&admission);
    tcp_accept(listener, on_accept);
    return 0;
}
