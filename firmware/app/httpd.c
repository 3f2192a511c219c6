/*
 * HTTP/1.1 server on lwIP's raw API.
 *
 * One connection = one struct conn from lwIP's heap. Received pbufs are
 * chained on conn->rx and consumed only as requests are handled, so
 * tcp_recved() (the receive window) is the backpressure: a client that
 * pipelines faster than we answer is throttled by TCP, not by dropping.
 * A response is a header (copied into lwIP) plus a body that is either static
 * (sent without copying) or rendered into conn->scratch (copied); what does
 * not fit the send buffer now is finished from the tcp_sent callback.
 */
#include "httpd.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "lwip/mem.h"
#include "lwip/tcp.h"

#include "http_parse.h"
#include "routes.h"

#define HEAD_MAX 4096          /* longest request head; longer gets 431 */
#define SCRATCH_MAX 2048       /* rendered bodies */
#define POLL_INTERVAL 2        /* tcp_poll period, in TCP slow-timer ticks */
#define IDLE_TIMEOUT_POLLS 60  /* keep-alive connections idle this long are closed */

struct chunk {
    const uint8_t *ptr;
    uint32_t len;
    uint8_t copy;
};

struct conn {
    struct tcp_pcb *pcb;
    struct pbuf *rx;          /* received, not yet consumed */
    uint32_t body_left;       /* request body bytes still to skip */
    uint16_t head_len;
    uint8_t close_after;      /* close once the response is queued */
    uint8_t idle_polls;
    struct chunk chunks[2];
    uint8_t nchunks, cur;
    char hdr[256];
    char head[HEAD_MAX];
    char scratch[SCRATCH_MAX];
};

struct httpd_stats httpd_stats;

static void conn_free(struct conn *c)
{
    if (c->pcb) {
        tcp_arg(c->pcb, NULL);
        tcp_recv(c->pcb, NULL);
        tcp_sent(c->pcb, NULL);
        tcp_err(c->pcb, NULL);
        tcp_poll(c->pcb, NULL, 0);
    }
    if (c->rx)
        pbuf_free(c->rx);
    mem_free(c);
    httpd_stats.conns_open--;
}

/* What process() and friends report about the connection. */
enum conn_fate { CONN_ALIVE, CONN_CLOSED, CONN_ABORTED };

/* Give back the window of everything received, then close gracefully: lwIP
 * answers a close with unread data by RST, which would cut off the response. */
static enum conn_fate conn_close(struct conn *c)
{
    struct tcp_pcb *pcb = c->pcb;
    if (c->rx) {
        uint32_t n = c->rx->tot_len;
        while (n) {
            u16_t step = n > 0xffff ? 0xffff : (u16_t)n;
            tcp_recved(pcb, step);
            n -= step;
        }
    }
    conn_free(c);
    if (tcp_close(pcb) == ERR_OK)
        return CONN_CLOSED;
    tcp_abort(pcb);
    return CONN_ABORTED;
}

static void consume_rx(struct conn *c, uint32_t n)
{
    uint32_t left = n;
    while (left) {
        u16_t step = left > 0xffff ? 0xffff : (u16_t)left;
        c->rx = pbuf_free_header(c->rx, step);
        tcp_recved(c->pcb, step);
        left -= step;
    }
}

static int response_pending(const struct conn *c) { return c->cur < c->nchunks; }

/* Queue as much of the response as the send buffer takes. */
static enum conn_fate send_pending(struct conn *c)
{
    while (response_pending(c)) {
        struct chunk *k = &c->chunks[c->cur];
        u16_t room = tcp_sndbuf(c->pcb);
        u16_t n;
        u8_t flags;
        err_t err;

        if (room == 0 || tcp_sndqueuelen(c->pcb) >= TCP_SND_QUEUELEN)
            break;
        n = k->len > room ? room : (u16_t)k->len;
        flags = k->copy ? TCP_WRITE_FLAG_COPY : 0;
        if (n < k->len || c->cur + 1 < c->nchunks)
            flags |= TCP_WRITE_FLAG_MORE;
        err = tcp_write(c->pcb, k->ptr, n, flags);
        if (err == ERR_MEM)
            break; /* retried from tcp_sent or tcp_poll */
        if (err != ERR_OK) {
            struct tcp_pcb *pcb = c->pcb;
            conn_free(c);
            tcp_abort(pcb);
            return CONN_ABORTED;
        }
        k->ptr += n;
        k->len -= n;
        if (k->len == 0)
            c->cur++;
    }
    tcp_output(c->pcb);
    return CONN_ALIVE;
}

static void start_response(struct conn *c, const struct http_request *req,
                           const struct http_response *resp, int keep_alive)
{
    int n;

    if (resp->status >= 500)
        httpd_stats.responses_5xx++;
    else if (resp->status >= 400)
        httpd_stats.responses_4xx++;

    n = snprintf(c->hdr, sizeof(c->hdr),
                 "HTTP/1.1 %d %s\r\n"
                 "Server: LiteDAV\r\n"
                 "Content-Type: %s\r\n"
                 "Content-Length: %lu\r\n"
                 "%s%s%s"
                 "Connection: %s\r\n"
                 "\r\n",
                 resp->status, http_reason(resp->status),
                 resp->content_type ? resp->content_type : "application/octet-stream",
                 (unsigned long)resp->body_len,
                 resp->allow ? "Allow: " : "", resp->allow ? resp->allow : "",
                 resp->allow ? "\r\n" : "",
                 keep_alive ? "keep-alive" : "close");
    c->chunks[0].ptr = (const uint8_t *)c->hdr;
    c->chunks[0].len = (uint32_t)n;
    c->chunks[0].copy = 1;
    c->nchunks = 1;
    c->cur = 0;
    if (resp->body_len && !(req && req->method == HTTP_HEAD)) {
        c->chunks[1].ptr = resp->body;
        c->chunks[1].len = resp->body_len;
        /* rendered bodies live in scratch, which the next request reuses */
        c->chunks[1].copy = resp->body == (const uint8_t *)c->scratch;
        c->nchunks = 2;
    }
    c->close_after = !keep_alive;
}

static void respond_error(struct conn *c, int status)
{
    struct http_response resp;
    memset(&resp, 0, sizeof(resp));
    app_error(status, &resp, c->scratch, sizeof(c->scratch));
    start_response(c, NULL, &resp, 0);
}

/* A complete head is in c->head[0..head_len). */
static void handle_request(struct conn *c)
{
    struct http_request req;
    struct http_response resp;
    int rc = http_parse_head(c->head, c->head_len, &req);

    httpd_stats.requests++;
    if (rc) {
        respond_error(c, rc);
        return;
    }
    if (req.chunked) {
        respond_error(c, 501); /* chunked request bodies are not accepted yet */
        return;
    }
    c->body_left = req.has_content_length ? req.content_length : 0;
    app_route(&req, &resp, c->scratch, sizeof(c->scratch));
    start_response(c, &req, &resp, req.keep_alive);
}

/* Work through received bytes until a response is waiting for send room or
 * the input runs out. */
static enum conn_fate process(struct conn *c)
{
    for (;;) {
        if (response_pending(c)) {
            enum conn_fate fate = send_pending(c);
            if (fate != CONN_ALIVE)
                return fate;
            if (response_pending(c))
                return CONN_ALIVE;
        }
        if (c->close_after)
            return conn_close(c);
        if (!c->rx)
            return CONN_ALIVE;

        if (c->body_left) {
            uint32_t n = c->rx->tot_len < c->body_left ? c->rx->tot_len : c->body_left;
            consume_rx(c, n);
            c->body_left -= n;
            continue;
        }

        /* RFC 9112 section 2.2: ignore empty lines before a request-line */
        if (c->head_len == 0) {
            u8_t ch = pbuf_get_at(c->rx, 0);
            if (ch == '\r' || ch == '\n') {
                consume_rx(c, 1);
                continue;
            }
        }

        {
            u16_t room = (u16_t)(HEAD_MAX - c->head_len);
            u16_t got = pbuf_copy_partial(c->rx, c->head + c->head_len, room, 0);
            size_t head = http_head_length(c->head, c->head_len + got);
            if (head) {
                consume_rx(c, (uint32_t)(head - c->head_len));
                c->head_len = (u16_t)head;
                handle_request(c);
                c->head_len = 0;
            } else {
                consume_rx(c, got);
                c->head_len += got;
                if (c->head_len == HEAD_MAX) {
                    httpd_stats.requests++;
                    respond_error(c, 431);
                    c->head_len = 0;
                }
            }
        }
    }
}

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
        /* peer finished sending: finish the response in flight, then close */
        c->close_after = 1;
        if (!response_pending(c))
            return conn_close(c) == CONN_ABORTED ? ERR_ABRT : ERR_OK;
        return ERR_OK;
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

static err_t on_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
    struct conn *c = arg;
    if (!c)
        return ERR_OK;
    c->idle_polls = 0;
    return process(c) == CONN_ABORTED ? ERR_ABRT : ERR_OK;
}

static err_t on_poll(void *arg, struct tcp_pcb *pcb)
{
    struct conn *c = arg;
    if (!c) {
        tcp_abort(pcb);
        return ERR_ABRT;
    }
    if (++c->idle_polls > IDLE_TIMEOUT_POLLS && !response_pending(c))
        return conn_close(c) == CONN_ABORTED ? ERR_ABRT : ERR_OK;
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

static err_t on_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
    struct conn *c;

    if (err != ERR_OK || !pcb)
        return ERR_VAL;
    c = mem_malloc(sizeof(*c));
    if (!c) {
        httpd_stats.conns_refused++;
        tcp_abort(pcb);
        return ERR_ABRT;
    }
    memset(c, 0, offsetof(struct conn, hdr));
    c->pcb = pcb;
    httpd_stats.conns_open++;
    httpd_stats.conns_total++;
    if (httpd_stats.conns_open > httpd_stats.conns_max_open)
        httpd_stats.conns_max_open = httpd_stats.conns_open;

    tcp_nagle_disable(pcb); /* whole responses are written at once */
    tcp_arg(pcb, c);
    tcp_recv(pcb, on_recv);
    tcp_sent(pcb, on_sent);
    tcp_err(pcb, on_err);
    tcp_poll(pcb, on_poll, POLL_INTERVAL);
    return ERR_OK;
}

int httpd_init(uint16_t port)
{
    struct tcp_pcb *pcb = tcp_new_ip_type(IPADDR_TYPE_ANY);
    struct tcp_pcb *listener;

    if (!pcb)
        return -1;
    if (tcp_bind(pcb, IP_ANY_TYPE, port) != ERR_OK) {
        tcp_close(pcb);
        return -1;
    }
    listener = tcp_listen_with_backlog(pcb, TCP_DEFAULT_LISTEN_BACKLOG);
    if (!listener) {
        tcp_close(pcb);
        return -1;
    }
    tcp_accept(listener, on_accept);
    return 0;
}
