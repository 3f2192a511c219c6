/*
 * The HTTP server's responses (httpd.h: httpd_respond). A response is its
 * head (formatted into conn->stage, copied into lwIP) and a body that is
 * static (sent without copying), in the scratch buffer (copied), or produced
 * piece by piece into conn->stage; what does not fit the send buffer now is
 * finished from the tcp_sent callback (httpd.c).
 */
#include <stdio.h>
#include <string.h>

#include "lwip/tcp.h"

#include "http/httpd_conn.h"
#include "net/conn_admission.h"

/* ---- responses ---------------------------------------------------------- */

static int body_allowed(int status) { return status >= 200 && status != 204 && status != 304; }

/* Response heads are assembled by hand: picolibc's snprintf formats every
 * integer with 64-bit divisions, which cost more than the rest of a small
 * GET's response together. */
struct head_writer {
    char *buf;
    size_t size, len;
    int overflow;
};

static void put_bytes(struct head_writer *w, const char *s, size_t n)
{
    if (w->overflow || n >= w->size - w->len) {
        w->overflow = 1; /* a NUL must still fit, as with snprintf */
        return;
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = '\0';
}

static void put_str(struct head_writer *w, const char *s) { put_bytes(w, s, strlen(s)); }

/* a string literal, its length known at compile time */
#define put_lit(w, s) put_bytes(w, "" s, sizeof(s) - 1)

static void put_uint(struct head_writer *w, uint32_t v)
{
    char digits[10];
    size_t n = sizeof(digits);
    do {
        digits[--n] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put_bytes(w, digits + n, sizeof(digits) - n);
}

/* A rejected request: read and drop its body when that is cheap, else close
 * after the response without reading it (RFC 9110 section 10.1.1: a client
 * that asked for 100-continue and got a final status may not send it). */
static void reject_body(struct conn *c)
{
    c->deliver = 0;
    if (c->framing == BODY_NONE)
        return;
    if ((!c->accepted && c->req.expect_continue) ||
        (c->framing == BODY_LENGTH && c->body_left > HTTPD_DRAIN_MAX)) {
        c->skip_body = 1;
        c->close_after = 1;
    }
}

int httpd_respond(struct http_exchange *x, const struct http_response *resp)
{
    struct conn *c = conn_of(x);
    const struct http_request *req = &c->req;
    int status = resp->status, n, keep_alive, send_body, has_body;
    uint32_t length;
    struct head_writer w = { c->stage, sizeof(c->stage), 0, 0 };

    if (c->responded)
        return -1;
    c->responded = 1;
    if (c->rx_state == RX_BODY)
        reject_body(c); /* answered before the body was read */
    if (status >= 500)
        httpd_stats.responses_5xx++;
    else if (status >= 400)
        httpd_stats.responses_4xx++;

    has_body = body_allowed(status);
    length = resp->produce ? resp->content_length : resp->body_len;
    c->tx_chunked = 0;
    if (has_body && length == HTTPD_LENGTH_UNKNOWN && req->version_minor >= 1)
        c->tx_chunked = 1; /* RFC 9112 section 7.1 */
    else if (has_body && length == HTTPD_LENGTH_UNKNOWN)
        c->close_after = 1; /* HTTP/1.0: the close delimits the body (section 6.3) */
    if (!HTTPD_CONNS_MAX && conn_admission_queued())
        c->close_after = 1; /* hand this connection's state to a waiting client */
    keep_alive = req->keep_alive && !c->close_after;

    put_lit(&w, "HTTP/1.1 ");
    put_uint(&w, (uint32_t)status);
    put_lit(&w, " ");
    put_str(&w, http_reason(status));
    put_lit(&w, "\r\nServer: LiteDAV\r\n");
    if (resp->content_type && has_body) {
        put_lit(&w, "Content-Type: ");
        put_str(&w, resp->content_type);
        put_lit(&w, "\r\n");
    }
    if (has_body && length != HTTPD_LENGTH_UNKNOWN) {
        put_lit(&w, "Content-Length: ");
        put_uint(&w, length);
        put_lit(&w, "\r\n");
    }
    if (c->tx_chunked)
        put_lit(&w, "Transfer-Encoding: chunked\r\n");
    if (resp->headers)
        put_str(&w, resp->headers);
    if (keep_alive)
        put_lit(&w, "Connection: keep-alive\r\n\r\n");
    else
        put_lit(&w, "Connection: close\r\n\r\n");
    n = w.overflow ? -1 : (int)w.len;
    if (n < 0 || (size_t)n >= sizeof(c->stage)) {
        /* a handler's header lines overflowed the stage: report, not truncate */
        n = snprintf(c->stage, sizeof(c->stage),
                     "HTTP/1.1 500 %s\r\nServer: LiteDAV\r\nContent-Length: 0\r\n"
                     "Connection: close\r\n\r\n", http_reason(500));
        httpd_stats.responses_5xx++;
        c->close_after = 1;
        c->stage_off = 0;
        c->stage_len = (uint16_t)n;
        return -1;
    }
    if (!keep_alive)
        c->close_after = 1;
    c->stage_off = 0;
    c->stage_len = (uint16_t)n;

    send_body = has_body && req->method != HTTP_HEAD;
    c->body_tx_left = 0;
    c->chunk_crlf_left = 0;
    c->tx_producing = 0;
    c->last_chunk_left = 0;
    if (send_body && resp->produce) {
        c->produce = resp->produce;
        c->tx_producing = c->tx_chunked || length > 0;
        c->tx_length_left = length; /* HTTPD_LENGTH_UNKNOWN: not counted */
    } else if (send_body && resp->body_len) {
        c->body = resp->body;
        c->body_tx_left = resp->body_len;
        /* scratch is reused by the next request; lwIP references unless copied */
        c->body_copy = resp->body >= (const uint8_t *)c->scratch &&
                       resp->body < (const uint8_t *)c->scratch + sizeof(c->scratch);
    }
    return 0;
}

int httpd_respond_error(struct http_exchange *x, int status, const char *detail,
                        const char *headers)
{
    struct http_response resp;
    int n = snprintf(x->scratch, x->scratch_size, "%d %s\n%s%s", status, http_reason(status),
                     detail ? detail : "", detail ? "\n" : "");
    memset(&resp, 0, sizeof(resp));
    resp.status = status;
    resp.content_type = "text/plain; charset=utf-8";
    resp.headers = headers;
    resp.body = (const uint8_t *)x->scratch;
    resp.body_len = n < 0 ? 0 : (size_t)n >= x->scratch_size ? (uint32_t)x->scratch_size - 1
                                                             : (uint32_t)n;
    return httpd_respond(x, &resp);
}
