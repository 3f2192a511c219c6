/* The WebDAV layer's state: the store it serves, the pool of request
 * contexts (and the requests waiting for one), the writer lock, and the
 * memory the contexts use besides their own: XML arenas, the work buffer. */
#include "dav/dav_private.h"

#include <string.h>

#include "lwip/sys.h"

/* The store /dav/ serves: requests reach it through their context. */
static struct store store;
STORE_MEMORY_DEFINE(dav_memory, DAV_STORE_INDEX_SLOTS, DAV_STORE_COLL_SLOTS, DAV_STORE_USER_SLOTS);

static bool mounted;
static struct dav_ctx ctx_pool[DAV_CTX_MAX];
static unsigned char xml_arenas[DAV_CTX_MAX][DAV_XML_ARENA] LITEDAV_NOINIT;

/* A whole object, or PROPPATCH's old values: inside one callback only. */
static char work[DAV_MAX_RESOURCE_SIZE] LITEDAV_NOINIT;

/* The writer lock: one request at a time writes the store (a streamed put
 * keeps the store busy across callbacks). The others wait in FIFO order,
 * their body paused (TCP window shut) or their end() deferred; dav_poll()
 * hands the lock on from the main loop. */
static struct dav_ctx *writer;
static struct dav_ctx *wait_queue[DAV_CTX_MAX];
static unsigned wait_count;

/* Requests that found every context taken wait for one, oldest first (their
 * connection reads nothing meanwhile: httpd's HTTPD_BEGIN_WAIT). dav_poll()
 * lets the oldest in as soon as a context is free. The wait is bounded: a
 * request gets 503 with Retry-After when the queue is full or after
 * ctx_wait_ms (below httpd's idle timeout, which would reset it). */
struct ctx_waiter {
    struct http_exchange *x;
    uint32_t since_ms;          /* sys_now() when it began to wait */
};
static struct ctx_waiter ctx_waiters[DAV_CTX_WAIT_MAX];
static unsigned ctx_waiting;
static struct http_exchange *ctx_handover;  /* dav_poll() is letting it in */
static struct http_exchange *ctx_expired;   /* dav_poll() is sending it its 503 */
static uint32_t ctx_wait_ms = DAV_CTX_WAIT_MS;
static struct dav_stats dav_stats;

void dav_set_ctx_wait_ms(uint32_t ms) { ctx_wait_ms = ms; }

const struct dav_stats *dav_get_stats(void) { return &dav_stats; }

static struct store_check mount_check;

size_t dav_keep_index_etags(void *mem, size_t size)
{
    size_t need = sizeof(uint32_t) * DAV_STORE_INDEX_SLOTS;
    if (mounted || size < need)
        return 0; /* the mount fills them: they come before it or not at all */
    dav_memory.index_etags = mem;
    return need;
}

int dav_mount(const struct flash *f, struct store_mount_stats *stats)
{
    struct store_config cfg = {DAV_MAX_RESOURCE_SIZE, DAV_OBJECTS_PER_COLLECTION};
    int rc = store_mount(&store, f, &cfg, &dav_memory, stats);
    if (rc != STORE_OK)
        return rc;
    /* before anything is written: what the flash held at power-up. The
     * replay has just checked the CRC of every record outside sealed blocks
     * (and sealed blocks were checked when sealed): headers, names, lists and
     * counts are checked again here, payloads are not read a second time. */
    rc = store_check_quick(&store, &mount_check);
    if (rc != STORE_OK)
        return rc;
    rc = auth_provision(&store);
    if (rc < 0)
        return rc;
    mounted = true;
    return STORE_OK;
}

struct store *dav_mounted_store(void) { return mounted ? &store : NULL; }

char *dav_work_buffer(size_t *size)
{
    *size = sizeof(work);
    return work;
}

const struct store_check *dav_mount_check(void) { return &mount_check; }

bool dav_pending_refs_hold(const void *start, const void *end)
{
    unsigned i;
    for (i = 0; i < DAV_CTX_MAX; i++) {
        const struct dav_ctx *c = &ctx_pool[i];
        if (c->in_use && c->ref_len && (const void *)c->ref < end && (const void *)(c->ref + c->ref_len) > start)
            return true;
    }
    return false;
}

static struct dav_ctx *ctx_get(struct http_exchange *x)
{
    unsigned i;
    for (i = 0; i < DAV_CTX_MAX; i++) {
        struct dav_ctx *c = &ctx_pool[i];
        if (!c->in_use) {
            memset(c, 0, sizeof(*c));
            c->in_use = true;
            c->out = c->out_buf;
            c->out_cap = sizeof(c->out_buf);
            c->x = x;
            c->store = &store;
            x->state = c;
            dav_stats.ctx_used++;
            return c;
        }
    }
    return NULL;
}

void dav_ctx_wait_remove(struct http_exchange *x)
{
    unsigned i, j;
    for (i = j = 0; i < ctx_waiting; i++)
        if (ctx_waiters[i].x != x)
            ctx_waiters[j++] = ctx_waiters[i];
    ctx_waiting = j;
    dav_stats.waiting = j;
}

/* A context for x's request: 0 with *out set, HTTPD_BEGIN_WAIT (queued), or
 * 503 (answered). Waiting requests go first: a new one does not overtake
 * them when a context has just been freed. */
static int refuse(struct http_exchange *x, const char *why)
{
    dav_stats.refused++;
    httpd_respond_error(x, 503, why, "Retry-After: 1\r\n");
    return 503;
}

int dav_ctx_acquire(struct http_exchange *x, struct dav_ctx **out)
{
    unsigned i;
    if (x == ctx_expired) {
        ctx_expired = NULL;
        return refuse(x, "Every request context stayed busy for the longest wait.");
    }
    if ((x == ctx_handover || !ctx_waiting) && (*out = ctx_get(x)) != NULL) {
        if (x == ctx_handover) {
            ctx_handover = NULL;
            dav_ctx_wait_remove(x);
        }
        return 0;
    }
    for (i = 0; i < ctx_waiting; i++)
        if (ctx_waiters[i].x == x)
            return HTTPD_BEGIN_WAIT; /* keeps its place */
    if (ctx_waiting == DAV_CTX_WAIT_MAX)
        return refuse(x, "All request contexts are busy and the wait queue is full.");
    ctx_waiters[ctx_waiting].x = x;
    ctx_waiters[ctx_waiting].since_ms = sys_now();
    ctx_waiting++;
    dav_stats.waiting = ctx_waiting;
    dav_stats.waited++;
    return HTTPD_BEGIN_WAIT;
}

static void writer_release(struct dav_ctx *c)
{
    if (!c->holds_writer)
        return;
    if (c->streaming_put)
        store_put_abort(c->store);
    c->streaming_put = false;
    c->holds_writer = false;
    writer = NULL;
}

static void wait_remove(struct dav_ctx *c)
{
    unsigned i, j;
    for (i = j = 0; i < wait_count; i++)
        if (wait_queue[i] != c)
            wait_queue[j++] = wait_queue[i];
    wait_count = j;
    c->waiting = DAV_WAIT_NONE;
}

void dav_ctx_free(struct dav_ctx *c)
{
    if (!c || !c->in_use)
        return;
    writer_release(c);
    wait_remove(c);
    c->x->state = NULL;
    c->in_use = false;
    dav_stats.ctx_used--;
}

/* Take the lock now, or return false (the caller queues itself). */
bool dav_lock_try(struct dav_ctx *c)
{
    if (c->holds_writer)
        return true;
    if (writer || (wait_count && wait_queue[0] != c))
        return false;
    if (wait_count)
        wait_remove(c);
    writer = c;
    c->holds_writer = true;
    return true;
}

void dav_lock_wait(struct dav_ctx *c, enum dav_wait why)
{
    if (c->waiting == DAV_WAIT_NONE)
        wait_queue[wait_count++] = c; /* at most one entry per context */
    c->waiting = why;
}

void dav_poll(void)
{
    /* contexts freed since the last call go to the oldest waiting requests */
    while (ctx_waiting && dav_stats.ctx_used < DAV_CTX_MAX) {
        struct http_exchange *x = ctx_waiters[0].x;
        ctx_handover = x;
        httpd_resume(x); /* begin() again: it takes a context and leaves the queue */
        ctx_handover = NULL;
        if (ctx_waiting && ctx_waiters[0].x == x)
            break; /* it did not (cannot happen): try again next time */
    }
    /* the oldest first: those that waited too long get their 503 */
    while (ctx_waiting && (uint32_t)(sys_now() - ctx_waiters[0].since_ms) >= ctx_wait_ms) {
        struct http_exchange *x = ctx_waiters[0].x;
        dav_ctx_wait_remove(x);
        ctx_expired = x;
        httpd_resume(x);
        ctx_expired = NULL;
    }
    while (!writer && wait_count) {
        struct dav_ctx *c = wait_queue[0];
        struct http_exchange *x = c->x;
        enum dav_wait why = c->waiting;
        wait_remove(c);
        writer = c;
        c->holds_writer = true;
        if (why == DAV_WAIT_BODY) {
            uint32_t n = c->stash_len;
            int rc;
            c->stash_len = 0;
            rc = dav_put_take(c, (const uint8_t *)x->scratch, n);
            if (rc >= 300) {
                /* dav_put_take answered; its remaining body is dropped */
                dav_ctx_free(c);
            }
        } else {
            dav_end_request(c);
        }
        httpd_resume(x);
    }
}

/* Parse the XML body into c->doc. Returns 0 (an empty body leaves doc.root
 * NULL) or 400. */
int dav_parse_body(struct dav_ctx *c)
{
    struct xml_limits limits = {DAV_XML_MAX, 0};
    unsigned char *arena = xml_arenas[c - ctx_pool];
    if (!c->body_len)
        return 0;
    if (xml_parse(&c->doc, c->body, c->body_len, arena, DAV_XML_ARENA, &limits, NULL) != XML_OK)
        return 400;
    return 0;
}
