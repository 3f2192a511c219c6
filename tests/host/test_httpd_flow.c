/* httpd's flow control, in process: lwIP (NO_SYS) on its loopback netif,
 * firmware/app/http/httpd.c as the server and a raw-API lwIP client, with small
 * windows and send buffers (tests/host/httpd_flow/lwipopts.h).
 *
 *   test_httpd_flow [seed [rounds]]     (defaults: seed 1, 20)
 *
 * The route table is this file's: a body sink whose body() pauses at random
 * (httpd_resume() comes later from the main loop, sometimes from inside the
 * callback), answering with a chunked response from a producer that is
 * sometimes "not ready"; and a 100,000-byte body of known length produced
 * in random pieces, far larger than the send buffer. Each round pipelines
 * PUT (chunked or Content-Length, 0..64 KiB, random pieces) + GET on one
 * connection and checks both responses byte for byte, that body() is never
 * called while paused, and that end() sees every body byte. Built with
 * ASan/UBSan. The last line printed is "N passed, M failed". */
#define _GNU_SOURCE /* memmem */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lwip/init.h"
#include "lwip/ip_addr.h"
#include "lwip/netif.h"
#include "lwip/tcp.h"
#include "lwip/timeouts.h"

#include "check.h"
#include "http/httpd.h"
#include "http/router.h"

#define BIG_LEN 100000u
#define BODY_MAX (64u * 1024u)
#define REQ_MAX (BODY_MAX * 2 + 4096)
#define RESP_MAX (BIG_LEN + 8192)

static uint32_t now_ms;
u32_t sys_now(void) { return now_ms; }

/* the loopback netif copies every frame at once (platform/port.h) */
int port_tx_holds(const void *start, const void *end)
{
    (void)start, (void)end;
    return 0;
}

static uint64_t rng_state;
static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)(((rng_state * 0x2545f4914f6cdd1dull) >> 33) % n);
}

static uint32_t fnv(uint32_t h, const uint8_t *p, size_t n)
{
    while (n--)
        h = (h ^ *p++) * 16777619u;
    return h;
}

static uint8_t big_byte(uint32_t i) { return (uint8_t)('a' + (i * 7 + i / 251) % 26); }

/* ---- the server side: handlers and route table ------------------------- */

static struct {
    struct http_exchange *x;   /* the exchange that waits for a resume */
    int paused, waiting;       /* body paused / producer not ready */
    uint32_t received, hash;
    int body_while_paused, ended, aborted;
    unsigned long pauses, waits, bodies;
    char reply[64];
    size_t reply_len, reply_off;
} sink;

static int sink_begin(struct http_exchange *x)
{
    sink.received = 0;
    sink.hash = 2166136261u;
    sink.paused = sink.waiting = 0;
    sink.x = x;
    return 0;
}

static int sink_body(struct http_exchange *x, const uint8_t *data, size_t len)
{
    if (sink.paused)
        sink.body_while_paused++;
    sink.bodies++;
    sink.received += (uint32_t)len;
    sink.hash = fnv(sink.hash, data, len);
    switch (rnd(4)) {
    case 0:
        sink.paused = 1;
        sink.pauses++;
        return HTTPD_BODY_PAUSE;
    case 1:
        /* done at once: resuming from inside the callback must be harmless */
        httpd_resume(x);
        return HTTPD_BODY_OK;
    default:
        return HTTPD_BODY_OK;
    }
}

static int sink_produce(struct http_exchange *x, char *buf, size_t room, size_t *len)
{
    size_t n;
    *len = 0;
    if (rnd(3) == 0) {
        sink.waiting = 1; /* "not ready": the main loop resumes us */
        sink.waits++;
        return 0;
    }
    n = 1 + rnd(7);
    if (n > room)
        n = room;
    if (n > sink.reply_len - sink.reply_off)
        n = sink.reply_len - sink.reply_off;
    memcpy(buf, sink.reply + sink.reply_off, n);
    sink.reply_off += n;
    *len = n;
    if (sink.reply_off == sink.reply_len) {
        sink.x = NULL;
        return 1;
    }
    return 0;
}

static void sink_end(struct http_exchange *x)
{
    struct http_response resp;
    sink.ended++;
    sink.reply_len = (size_t)snprintf(sink.reply, sizeof(sink.reply), "received %lu hash %08lx\n",
                                      (unsigned long)sink.received, (unsigned long)sink.hash);
    sink.reply_off = 0;
    memset(&resp, 0, sizeof(resp));
    resp.status = 200;
    resp.content_type = "text/plain";
    resp.produce = sink_produce;
    resp.content_length = HTTPD_LENGTH_UNKNOWN;
    httpd_respond(x, &resp);
}

static void sink_abort(struct http_exchange *x)
{
    sink.aborted++;
    sink.x = NULL;
    sink.paused = sink.waiting = 0;
}

static const struct http_handler sink_handler = { sink_begin, sink_body, sink_end, sink_abort };

static uint32_t big_sent;

static int big_produce(struct http_exchange *x, char *buf, size_t room, size_t *len)
{
    size_t n = 1 + rnd(room < 1500 ? (uint32_t)room : 1500), i;
    if (n > room)
        n = room;
    for (i = 0; i < n && big_sent < BIG_LEN; i++)
        buf[i] = (char)big_byte(big_sent++);
    *len = i;
    return big_sent == BIG_LEN;
}

static void big_end(struct http_exchange *x)
{
    struct http_response resp;
    big_sent = 0;
    memset(&resp, 0, sizeof(resp));
    resp.status = 200;
    resp.content_type = "application/octet-stream";
    resp.produce = big_produce;
    resp.content_length = BIG_LEN;
    httpd_respond(x, &resp);
}

static const struct http_handler big_handler = { NULL, NULL, big_end, NULL };

static const struct http_route routes[] = {
    { "/sink", HTTP_METHOD_BIT(HTTP_PUT), BODY_MAX, &sink_handler, NULL },
    { "/big", HTTP_METHOD_BIT(HTTP_GET), BODY_MAX, &big_handler, NULL },
};
static const struct http_router router = { routes, sizeof(routes) / sizeof(routes[0]) };

/* ---- the client side ----------------------------------------------------- */

static struct {
    struct tcp_pcb *pcb;
    uint8_t req[REQ_MAX];
    size_t req_len, req_off;
    uint8_t resp[RESP_MAX];
    size_t resp_len;
    int closed, error;
} cl;

static void client_send(void)
{
    while (cl.req_off < cl.req_len) {
        u16_t room = tcp_sndbuf(cl.pcb);
        size_t n = cl.req_len - cl.req_off;
        size_t piece = 1 + rnd(2000);
        if (n > piece)
            n = piece;
        if (n > room)
            n = room;
        if (!n || tcp_write(cl.pcb, cl.req + cl.req_off, (u16_t)n, TCP_WRITE_FLAG_COPY) != ERR_OK)
            break;
        cl.req_off += n;
    }
    tcp_output(cl.pcb);
}

static err_t client_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
    client_send();
    return ERR_OK;
}

static err_t client_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    if (!p) {
        cl.closed = 1;
        tcp_arg(pcb, NULL);
        tcp_recv(pcb, NULL);
        tcp_sent(pcb, NULL);
        tcp_err(pcb, NULL);
        if (tcp_close(pcb) != ERR_OK) {
            tcp_abort(pcb);
            cl.pcb = NULL;
            return ERR_ABRT;
        }
        cl.pcb = NULL;
        return ERR_OK;
    }
    if (cl.resp_len + p->tot_len <= RESP_MAX) {
        pbuf_copy_partial(p, cl.resp + cl.resp_len, p->tot_len, 0);
        cl.resp_len += p->tot_len;
    } else {
        cl.error = 1;
    }
    tcp_recved(pcb, p->tot_len);
    pbuf_free(p);
    return ERR_OK;
}

static void client_err(void *arg, err_t err)
{
    cl.error = 1;
    cl.pcb = NULL;
}

static err_t client_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
    client_send();
    return ERR_OK;
}

/* ---- checks ------------------------------------------------------------- */

static size_t build_request(int chunked, uint32_t body_len, uint32_t *hash)
{
    size_t n = 0;
    uint32_t i;
    static uint8_t body[BODY_MAX];

    for (i = 0; i < body_len; i++)
        body[i] = (uint8_t)rnd(256);
    *hash = fnv(2166136261u, body, body_len);
    if (chunked) {
        n += (size_t)sprintf((char *)cl.req + n,
                             "PUT /sink HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n");
        for (i = 0; i < body_len;) {
            uint32_t size = 1 + rnd(rnd(2) ? 100 : 5000);
            if (size > body_len - i)
                size = body_len - i;
            n += (size_t)sprintf((char *)cl.req + n, "%lx;i=%lu\r\n", (unsigned long)size,
                                 (unsigned long)i);
            memcpy(cl.req + n, body + i, size);
            n += size;
            memcpy(cl.req + n, "\r\n", 2);
            n += 2;
            i += size;
        }
        n += (size_t)sprintf((char *)cl.req + n, "0\r\nX-Trailer: 1\r\n\r\n");
    } else {
        n += (size_t)sprintf((char *)cl.req + n,
                             "PUT /sink HTTP/1.1\r\nHost: t\r\nContent-Length: %lu\r\n\r\n",
                             (unsigned long)body_len);
        memcpy(cl.req + n, body, body_len);
        n += body_len;
    }
    n += (size_t)sprintf((char *)cl.req + n, "GET /big HTTP/1.1\r\nConnection: close\r\n\r\n");
    return n;
}

/* Find "\r\n\r\n" from *pos; returns the head's start and moves *pos past it. */
static const char *next_head(size_t *pos, size_t *head_len)
{
    const char *start = (const char *)cl.resp + *pos;
    size_t i;
    for (i = *pos; i + 4 <= cl.resp_len; i++) {
        if (memcmp(cl.resp + i, "\r\n\r\n", 4) == 0) {
            *head_len = i + 4 - *pos;
            *pos = i + 4;
            return start;
        }
    }
    return NULL;
}

static int check_responses(uint32_t body_len, uint32_t hash)
{
    size_t pos = 0, hl, out = 0, i;
    const char *h;
    char want[64], got[64];
    int ok = 1;

    /* 1: chunked, decoded here */
    h = next_head(&pos, &hl);
    if (!h || strncmp(h, "HTTP/1.1 200 OK\r\n", 17) != 0 ||
        !memmem(h, hl, "Transfer-Encoding: chunked\r\n", 28))
        return 0;
    for (;;) {
        unsigned long size;
        char *end;
        size = strtoul((const char *)cl.resp + pos, &end, 16);
        if (end == (const char *)cl.resp + pos || strncmp(end, "\r\n", 2) != 0)
            return 0;
        pos = (size_t)(end - (const char *)cl.resp) + 2;
        if (size == 0)
            break;
        if (out + size >= sizeof(got) || pos + size + 2 > cl.resp_len)
            return 0;
        memcpy(got + out, cl.resp + pos, size);
        out += size;
        pos += size;
        if (memcmp(cl.resp + pos, "\r\n", 2) != 0)
            return 0;
        pos += 2;
    }
    if (pos + 2 > cl.resp_len || memcmp(cl.resp + pos, "\r\n", 2) != 0)
        return 0;
    pos += 2;
    got[out] = 0;
    snprintf(want, sizeof(want), "received %lu hash %08lx\n", (unsigned long)body_len,
             (unsigned long)hash);
    CHECKF(strcmp(got, want) == 0, "sink said \"%s\", want \"%s\"", got, want);

    /* 2: 100,000 bytes of known length */
    h = next_head(&pos, &hl);
    if (!h || strncmp(h, "HTTP/1.1 200 OK\r\n", 17) != 0 ||
        !memmem(h, hl, "Content-Length: 100000\r\n", 24) ||
        !memmem(h, hl, "Connection: close\r\n", 19))
        return 0;
    if (cl.resp_len - pos != BIG_LEN)
        return 0;
    for (i = 0; i < BIG_LEN; i++)
        ok &= cl.resp[pos + i] == big_byte((uint32_t)i);
    return ok;
}

static unsigned long pauses, waits, bodies;

static void run_round(int round)
{
    uint32_t body_len = round == 0 ? 0 : rnd(2) ? rnd(2000) : rnd(BODY_MAX);
    int chunked = round % 2;
    uint32_t hash, iter;
    ip_addr_t lo;

    pauses += sink.pauses;
    waits += sink.waits;
    bodies += sink.bodies;
    memset(&sink, 0, sizeof(sink));
    cl.req_len = build_request(chunked, body_len, &hash);
    cl.req_off = cl.resp_len = 0;
    cl.closed = cl.error = 0;
    cl.pcb = tcp_new();
    IP_ADDR4(&lo, 127, 0, 0, 1);
    tcp_recv(cl.pcb, client_recv);
    tcp_sent(cl.pcb, client_sent);
    tcp_err(cl.pcb, client_err);
    if (tcp_connect(cl.pcb, &lo, 80, client_connected) != ERR_OK) {
        CHECK(!"tcp_connect");
        return;
    }
    for (iter = 0; iter < 2000000 && !cl.closed && !cl.error; iter++) {
        netif_poll_all();
        sys_check_timeouts();
        if (iter % 16 == 0)
            now_ms++;
        if (sink.x && sink.paused && rnd(8) == 0) {
            sink.paused = 0;
            httpd_resume(sink.x);
        } else if (sink.x && sink.waiting && rnd(4) == 0) {
            sink.waiting = 0;
            httpd_resume(sink.x);
        }
    }
    CHECKF(cl.closed && !cl.error, "round %d (%s, %lu bytes): closed %d error %d after %lu "
           "turns, %zu response bytes", round, chunked ? "chunked" : "length",
           (unsigned long)body_len, cl.closed, cl.error, (unsigned long)iter, cl.resp_len);
    CHECKF(check_responses(body_len, hash), "round %d: responses wrong (%zu bytes)", round,
           cl.resp_len);
    CHECK(sink.body_while_paused == 0);
    CHECK(sink.ended == 1 && sink.aborted == 0);
    /* let the closing handshake finish */
    for (iter = 0; iter < 20000; iter++) {
        netif_poll_all();
        sys_check_timeouts();
        now_ms++;
    }
}

int main(int argc, char **argv)
{
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
    int rounds = argc > 2 ? atoi(argv[2]) : 20, r;

    printf("test_httpd_flow: seed %llu, %d rounds\n", (unsigned long long)seed, rounds);
    rng_state = seed * 0x9e3779b97f4a7c15ull | 1;
    lwip_init();
    if (httpd_init(80, &router) != 0) {
        CHECK(!"httpd_init");
        return check_summary();
    }
    for (r = 0; r < rounds; r++)
        run_round(r);
    pauses += sink.pauses;
    waits += sink.waits;
    bodies += sink.bodies;
    printf("body pieces %lu, pauses %lu, producer waits %lu\n", bodies, pauses, waits);
    if (rounds >= 10)
        CHECK(pauses > 10 && waits > 10 && bodies > 100);
    CHECK(httpd_get_stats()->conns_open == 0);
    CHECK(httpd_get_stats()->requests == 2u * (unsigned)rounds);
    return check_summary();
}
