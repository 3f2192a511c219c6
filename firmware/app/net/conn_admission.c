/* Accepted connections waiting for a server's state (conn_admission.h). */
#include "net/conn_admission.h"

#include <stddef.h>
#include <string.h>

#include "lwip/mem.h"
#include "lwip/memp.h"
#include "lwip/sys.h"

#include "platform/app_config.h"
#include "util/age_list.h"
#include "net/server_conn.h"
#include "net/syn_queue.h"
#include "net/tcp_park.h"

static const struct conn_admission_server *server;

/* records that have sent a whole request, oldest first */
static struct age_list waiting_queue;

struct waiting {
    struct tcp_pcb *pcb;
    struct pbuf *rx;            /* heap copies of what arrived, in order */
    struct age_link queue;      /* in waiting_queue while queued */
    uint8_t queued;             /* has sent a whole request: in waiting_queue */
    uint8_t request_scan;       /* how far rx is into a request (server->request_complete) */
    uint8_t peer_closed;
    uint16_t idle_polls;
#if HTTPD_PARK_BUCKETS          /* not on a small heap that parks nothing */
    uint8_t candidate;
    struct waiting *cand_prev, *cand_next;  /* in the park_candidates list */
    struct tcp_park_node park;  /* parked while idle (tcp_park.h) */
#endif
};

/* Records that may be idle now: conn_admission_poll() tries to park them,
 * outside lwIP (parking takes the PCB off the list lwIP's timers walk). */
#if HTTPD_PARK_BUCKETS
static struct waiting *park_candidates;

static void candidate_add(struct waiting *w)
{
    if (w->candidate)
        return;
    w->candidate = 1;
    w->cand_prev = NULL;
    w->cand_next = park_candidates;
    if (park_candidates)
        park_candidates->cand_prev = w;
    park_candidates = w;
}

static void candidate_remove(struct waiting *w)
{
    if (!w->candidate)
        return;
    if (w->cand_prev)
        w->cand_prev->cand_next = w->cand_next;
    else
        park_candidates = w->cand_next;
    if (w->cand_next)
        w->cand_next->cand_prev = w->cand_prev;
    w->candidate = 0;
}

static void waiting_unpark(struct waiting *w)
{
    candidate_remove(w);
    tcp_unpark(&w->park);
}
#else
static void candidate_add(struct waiting *w) { (void)w; }
static void waiting_unpark(struct waiting *w) { (void)w; }
#endif

static void waiting_enqueue(struct waiting *w)
{
    (*server->idle)--;
    (*server->waiting)++;
    (*server->waited)++;
    w->queued = 1;
    age_list_append(&waiting_queue, &w->queue);
}

static void waiting_unlink(struct waiting *w)
{
    if (!w->queued)
        return;
    (*server->waiting)--;
    (*server->idle)++;
    age_list_unlink(&waiting_queue, &w->queue);
    w->queued = 0;
}

/* Records from a pool of their own (HTTPD_WAIT_POOL, app_config.h), not
 * lwIP's heap: the heap is first fit from its lowest free block, and a
 * record that lives as long as its idle client stays where it was put,
 * among the send buffers. With 1,000 of them and their holes below the free
 * space, every TX pbuf allocation steps past each (the likely cause of a
 * keep-alive request costing 68 % more with 1,000 idle clients once on the
 * LiteX SoC, bench/README.md). A pool's free list takes and gives back in
 * O(1); a connection holds one record at most, so a pool of one per PCB
 * never runs out. */
#if HTTPD_WAIT_POOL
LWIP_MEMPOOL_DECLARE(conn_waiting, HTTPD_WAIT_POOL, sizeof(struct waiting), "conn waiting")
#define waiting_alloc() ((struct waiting *)LWIP_MEMPOOL_ALLOC(conn_waiting))
#define waiting_release(w) LWIP_MEMPOOL_FREE(conn_waiting, (w))
#else
#define waiting_alloc() ((struct waiting *)mem_malloc(sizeof(struct waiting)))
#define waiting_release(w) mem_free(w)
#endif

/* Forget w; its pcb (if any) is left to the caller. */
static void waiting_free(struct waiting *w)
{
    waiting_unlink(w);
    waiting_unpark(w);
    if (w->pcb)
        server_conn_unhook(w->pcb);
    if (w->rx)
        pbuf_free(w->rx);
    waiting_release(w);
    (*server->idle)--;
}

static err_t waiting_close(struct waiting *w)
{
    struct tcp_pcb *pcb = w->pcb;
    server_conn_window_give(pcb, w->rx ? w->rx->tot_len : 0);
    waiting_free(w);
    return server_conn_close(pcb, server->orphans_reset);
}

/* Free w and reset its connection. */
static void waiting_reset(struct waiting *w)
{
    struct tcp_pcb *pcb = w->pcb;
    waiting_free(w);   /* unparks and unhooks the PCB */
    tcp_abort(pcb);
}

/* A record queues for a state once its client has sent a whole request (or
 * more than is copied here): then the client waits for us. Until then the
 * server waits for the client, as for an idle one: the record stays off the
 * queue, may be parked, and is reset after the idle timeout without
 * progress. Queued at its first byte, a client that sends the start of a
 * head and vanishes (hundreds of them, in the half-open flood) held its place
 * in the queue for ever and then a state for the whole idle timeout, and
 * every client behind it waited for all of them: a status request after
 * 1,000 such peers got no answer within 900 s of wall time. */
#if HTTPD_HEAD_PIECES
struct head_piece {
    struct pbuf_custom pc;      /* first: the pbuf is the piece */
    uint8_t data[HTTPD_HEAD_PIECE_SIZE];
};
LWIP_MEMPOOL_DECLARE(conn_head_piece, HTTPD_HEAD_PIECES, sizeof(struct head_piece), "conn head pieces")

static void head_piece_free(struct pbuf *p)
{
    LWIP_MEMPOOL_FREE(conn_head_piece, (struct head_piece *)(void *)p);
}
#endif

/* A copy of p that frees the receive pool: a piece of the head pool when p
 * fits one (HTTPD_HEAD_PIECES, app_config.h), else lwIP's heap; NULL when
 * neither has room. */
static struct pbuf *waiting_copy(struct pbuf *p)
{
#if HTTPD_HEAD_PIECES
    if (p->tot_len <= HTTPD_HEAD_PIECE_SIZE) {
        struct head_piece *piece = (struct head_piece *)LWIP_MEMPOOL_ALLOC(conn_head_piece);
        if (piece) {
            struct pbuf *q;
            piece->pc.custom_free_function = head_piece_free;
            q = pbuf_alloced_custom(PBUF_RAW, p->tot_len, PBUF_REF, &piece->pc, piece->data,
                                    sizeof piece->data);
            pbuf_copy_partial(p, q->payload, p->tot_len, 0);
            return q;
        }
    }
#endif
    return pbuf_clone(PBUF_RAW, PBUF_RAM, p);
}

static err_t waiting_on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    struct waiting *w = arg;
    struct pbuf *copy;

    if (!p) {
        w->peer_closed = 1;
        if (!w->queued)
            return waiting_close(w);   /* nothing asked, or a request that will never end */
        return ERR_OK;
    }
    if (err != ERR_OK) {
        pbuf_free(p);
        return err;
    }
    /* beyond the limit, or without heap for a copy, lwIP keeps the data
     * (refused) and offers it again later, to the real connection by then:
     * so the record queues for a state even when nothing was copied (a
     * first piece beyond the limit, as merged frames or segments released
     * together after a reordering can be), or it would be offered the same
     * data for ever while its client waits */
    if ((w->rx ? w->rx->tot_len : 0) + p->tot_len > server->rx_max ||
        (copy = waiting_copy(p)) == NULL) {
        w->idle_polls = 0;
        if (!w->queued)
            waiting_enqueue(w);
        return ERR_MEM;
    }
    /* the heap copy frees the receive pool for connections being served */
    pbuf_free(p);
    w->idle_polls = 0;
    if (w->rx)
        pbuf_cat(w->rx, copy);
    else
        w->rx = copy;
    if (server->request_complete(&w->request_scan, copy) && !w->queued)
        waiting_enqueue(w);
    return ERR_OK;
}

static err_t waiting_on_poll(void *arg, struct tcp_pcb *pcb)
{
    struct waiting *w = arg;
    /* Queued: its client has asked and waits for us (for a state, as one whose
     * request the server holds), it is not idle. The wait ends when a state
     * frees, and the states' holders are themselves bounded. */
    if (w->queued) {
        w->idle_polls = 0;
        return ERR_OK;
    }
    if (server_conn_idle_poll(&w->idle_polls)) {
        (*server->timed_out)++;
        if (w->rx || server_conn_mid_exchange(pcb) || !server_conn_fin_affordable()) {
            waiting_reset(w);
            return ERR_ABRT;
        }
        return waiting_close(w);
    }
    candidate_add(w);
    return ERR_OK;
}

/* The last response is acknowledged: nothing keeps the connection active. */
static err_t waiting_on_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
    if (!pcb->unacked && !pcb->unsent)
        candidate_add(arg);
    return ERR_OK;
}

#if HTTPD_PARK_BUCKETS
static struct waiting *parked_waiting(struct tcp_park_node *node)
{
    return (struct waiting *)(void *)((char *)node - offsetof(struct waiting, park));
}
#endif

/* Park the candidates that are idle now; close the parked connections idle
 * for the idle timeout (lwIP no longer polls them). Both only look at the
 * ends of their lists: nothing here walks every connection. */
static void park_idle(void)
{
#if HTTPD_PARK_BUCKETS
    uint32_t now, held;
    struct tcp_park_node *node;

    if (!park_candidates && !tcp_park_count())
        return;
    now = sys_now();
    while (park_candidates) {
        struct waiting *w = park_candidates;
        candidate_remove(w);
        /* an unfinished request (rx, not queued) waits for its client like an idle one */
        if (!w->queued && !w->peer_closed && w->pcb)
            tcp_park(&w->park, w->pcb, server_conn_idle_since(now, w->idle_polls));
    }
    while ((node = tcp_park_idle_before(now - HTTPD_IDLE_TIMEOUT_MS)) != NULL) {
        struct waiting *w = parked_waiting(node);
        tcp_unpark(node);
        (*server->timed_out)++;
        if (w->rx || !server_conn_fin_affordable())   /* as waiting_on_poll does */
            waiting_reset(w);
        else
            waiting_close(w);
    }
    /* Every PCB taken and a SYN waiting for one (syn_queue.c): the connection
     * idle longest is reset to make room, as a server out of connections drops
     * its idle keep-alive ones first (a FIN would keep the PCB while it is
     * retransmitted to a peer that may be gone). Without this, idle
     * connections from more peers than PCBs kept a new client out until an
     * idle timeout. */
    for (held = syn_queue_stats.held; held && syn_queue_needs_pcb() && (node = tcp_park_oldest()); held--) {
        (*server->reclaimed)++;
        waiting_reset(parked_waiting(node));   /* unparks it first */
    }
#endif
}

static void waiting_on_err(void *arg, err_t err)
{
    struct waiting *w = arg;
    w->pcb = NULL; /* lwIP has freed it already */
    waiting_free(w);
}

/* pcb waits for a state; -1 without memory for its record. */
static int conn_wait(struct tcp_pcb *pcb)
{
    struct waiting *w = waiting_alloc();
    if (!w)
        return -1;
    memset(w, 0, sizeof(*w));
    w->pcb = pcb;
    (*server->idle)++;
    tcp_arg(pcb, w);
    tcp_recv(pcb, waiting_on_recv);
    tcp_sent(pcb, waiting_on_sent);
    tcp_err(pcb, waiting_on_err);
    tcp_poll(pcb, waiting_on_poll, SERVER_CONN_POLL_INTERVAL);
    candidate_add(w);
    return 0;
}

int conn_admission_release(struct tcp_pcb *pcb, int idle)
{
    if (!idle && server->state_spare() && !waiting_queue.oldest)
        return -1;
    return conn_wait(pcb);
}

int conn_admission_queued(void)
{
    return waiting_queue.oldest != NULL;
}

void conn_admission_poll(void)
{
    park_idle();
    while (waiting_queue.oldest) {
        struct waiting *w = AGE_ENTRY(waiting_queue.oldest, struct waiting, queue);
        struct tcp_pcb *pcb = w->pcb;
        struct pbuf *rx = w->rx;
        uint8_t peer_closed = w->peer_closed;
        void *state = server->state_alloc();

        if (!state)
            return;
        w->rx = NULL;
        w->pcb = NULL;
        waiting_free(w);
        server->state_attach(state, pcb, rx, peer_closed);
    }
}

err_t conn_admission_wait(struct tcp_pcb *pcb)
{
    if (conn_wait(pcb) == 0)
        return ERR_OK;
    (*server->refused)++;
    tcp_abort(pcb);
    return ERR_ABRT;
}

void conn_admission_start(const struct conn_admission_server *s)
{
    server = s;
#if HTTPD_WAIT_POOL
    LWIP_MEMPOOL_INIT(conn_waiting);
#endif
#if HTTPD_HEAD_PIECES
    LWIP_MEMPOOL_INIT(conn_head_piece);
#endif
}
