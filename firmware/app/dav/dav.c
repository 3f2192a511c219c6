/* WebDAV (RFC 4918) on the store: request contexts, URL resolution, the
 * writer lock, properties, PROPFIND, PROPPATCH, MKCOL, DELETE, GET/HEAD/PUT.
 * CalDAV specifics are in caldav.c, sync-collection in sync.c. */
#include "dav/dav.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lwip/sys.h"

#include "caldav/caldav.h"
#include "http/http_cond.h"
#include "caldav/ical.h"
#include "http/router.h"
#include "caldav/sync.h"

struct store dav_store;
STORE_MEMORY_DEFINE(dav_memory, DAV_STORE_INDEX_SLOTS, DAV_STORE_COLL_SLOTS, DAV_STORE_USER_SLOTS);

static bool mounted;
static struct dav_ctx ctx_pool[DAV_CTX_MAX];
static unsigned char xml_arenas[DAV_CTX_MAX][DAV_XML_ARENA] LITEDAV_NOINIT;

/* PUT bodies are collected here (calendar objects are validated whole before
 * they are stored, RFC 4791 section 5.3.2.1) by the request holding the
 * writer lock. */
static char upload[DAV_MAX_RESOURCE_SIZE] LITEDAV_NOINIT;
static size_t upload_len;

char dav_work[DAV_MAX_RESOURCE_SIZE] LITEDAV_NOINIT;
unsigned char dav_ical_arena[DAV_ICAL_ARENA] LITEDAV_NOINIT;
const size_t dav_ical_arena_size = sizeof(dav_ical_arena);

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
 * dav_ctx_wait_ms (below httpd's idle timeout, which would reset it). */
struct ctx_waiter {
    struct http_exchange *x;
    uint32_t since_ms;          /* sys_now() when it began to wait */
};
static struct ctx_waiter ctx_waiters[DAV_CTX_WAIT_MAX];
static unsigned ctx_waiting;
static struct http_exchange *ctx_handover;  /* dav_poll() is letting it in */
static struct http_exchange *ctx_expired;   /* dav_poll() is sending it its 503 */
uint32_t dav_ctx_wait_ms = DAV_CTX_WAIT_MS;
struct dav_stats dav_stats;

static void end_request(struct dav_ctx *c);

/* ---- store, lock and context pool ---------------------------------------- */

static struct store_check mount_check;

int dav_mount(const struct flash *f, struct store_mount_stats *stats)
{
    struct store_config cfg = {DAV_MAX_RESOURCE_SIZE, DAV_OBJECTS_PER_COLLECTION};
    int rc = store_mount(&dav_store, f, &cfg, &dav_memory, stats);
    if (rc != STORE_OK)
        return rc;
    /* before anything is written: what the flash held at power-up. The
     * replay has just checked the CRC of every record outside sealed blocks
     * (and sealed blocks were checked when sealed): headers, names, lists and
     * counts are checked again here, payloads are not read a second time. */
    rc = store_check_quick(&dav_store, &mount_check);
    if (rc != STORE_OK)
        return rc;
    rc = auth_provision(&dav_store);
    if (rc < 0)
        return rc;
    mounted = true;
    return STORE_OK;
}

bool dav_mounted(void) { return mounted; }

const struct store_check *dav_mount_check(void) { return &mount_check; }

static struct dav_ctx *ctx_get(struct http_exchange *x)
{
    unsigned i;
    for (i = 0; i < DAV_CTX_MAX; i++) {
        struct dav_ctx *c = &ctx_pool[i];
        if (!c->in_use) {
            memset(c, 0, sizeof(*c));
            c->in_use = true;
            c->x = x;
            x->state = c;
            dav_stats.ctx_used++;
            return c;
        }
    }
    return NULL;
}

static void ctx_wait_remove(struct http_exchange *x)
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
static int ctx_acquire(struct http_exchange *x, struct dav_ctx **out)
{
    unsigned i;
    if (x == ctx_expired) {
        ctx_expired = NULL;
        dav_stats.refused++;
        httpd_respond_error(x, 503, "Every request context stayed busy for the longest wait.",
                            "Retry-After: 1\r\n");
        return 503;
    }
    if ((x == ctx_handover || !ctx_waiting) && (*out = ctx_get(x)) != NULL) {
        if (x == ctx_handover) {
            ctx_handover = NULL;
            ctx_wait_remove(x);
        }
        return 0;
    }
    for (i = 0; i < ctx_waiting; i++)
        if (ctx_waiters[i].x == x)
            return HTTPD_BEGIN_WAIT; /* keeps its place */
    if (ctx_waiting == DAV_CTX_WAIT_MAX) {
        dav_stats.refused++;
        httpd_respond_error(x, 503, "All request contexts are busy and the wait queue is full.",
                            "Retry-After: 1\r\n");
        return 503;
    }
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
        store_put_abort(&dav_store);
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

static void ctx_free(struct dav_ctx *c)
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
static bool writer_try(struct dav_ctx *c)
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

static void writer_wait(struct dav_ctx *c, enum dav_wait why)
{
    if (c->waiting == DAV_WAIT_NONE)
        wait_queue[wait_count++] = c; /* at most one entry per context */
    c->waiting = why;
}

static int put_take(struct dav_ctx *c, const uint8_t *data, size_t len);

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
    while (ctx_waiting && (uint32_t)(sys_now() - ctx_waiters[0].since_ms) >= dav_ctx_wait_ms) {
        struct http_exchange *x = ctx_waiters[0].x;
        ctx_wait_remove(x);
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
            rc = put_take(c, (const uint8_t *)x->scratch, n);
            if (rc >= 300) {
                /* put_take answered; its remaining body is dropped */
                ctx_free(c);
            }
        } else {
            end_request(c);
        }
        httpd_resume(x);
    }
}

/* ---- paths ------------------------------------------------------------------ */

static int hex_digit(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* Well-formed UTF-8 (RFC 3629 section 4): no overlong forms (C0 AE for '.'),
 * no surrogates, nothing above U+10FFFF. */
static bool utf8_valid(const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char b = p[i];
        size_t k, more = b < 0x80 ? 0 : b >= 0xC2 && b <= 0xDF ? 1 : b >= 0xE0 && b <= 0xEF ? 2 :
                         b >= 0xF0 && b <= 0xF4 ? 3 : 4;
        if (more == 4 || more >= n - i)
            return false;
        for (k = 1; k <= more; k++)
            if ((p[i + k] & 0xC0) != 0x80)
                return false;
        if ((b == 0xE0 && p[i + 1] < 0xA0) || (b == 0xED && p[i + 1] > 0x9F) ||
            (b == 0xF0 && p[i + 1] < 0x90) || (b == 0xF4 && p[i + 1] > 0x8F))
            return false;
        i += more + 1;
    }
    return true;
}

/* RFC 3986 section 2.1. A path in absolute-form (a full URI, RFC 9112
 * section 3.2.2) is reduced to its path; query and fragment are dropped.
 * Encoded '/', control bytes (NUL...), backslashes (a separator to some
 * clients and file systems), malformed or overlong UTF-8, empty and "." /
 * ".." segments are refused, so one path has one spelling. */
int dav_decode_path(const char *in, size_t len, char *out, size_t cap, size_t *out_len)
{
    size_t i, n = 0;
    if (len > 7 && (memcmp(in, "http://", 7) == 0 || (len > 8 && memcmp(in, "https://", 8) == 0))) {
        const char *slash = memchr(in + 8, '/', len - 8);
        if (!slash)
            return 400;
        len -= (size_t)(slash - in);
        in = slash;
    }
    for (i = 0; i < len && in[i] != '?' && in[i] != '#'; i++) {
        char ch = in[i];
        if (ch == '%') {
            int hi, lo;
            if (i + 2 >= len + 0 || (hi = hex_digit(in[i + 1])) < 0 || (lo = hex_digit(in[i + 2])) < 0)
                return 400;
            ch = (char)(hi << 4 | lo);
            if (ch == '/')
                return 400;
            i += 2;
        }
        if ((unsigned char)ch < 0x20 || ch == 0x7F || ch == '\\')
            return 400;
        if (n + 1 >= cap)
            return 414;
        out[n++] = ch;
    }
    out[n] = '\0';
    if (n == 0 || out[0] != '/' || !utf8_valid((const unsigned char *)out, n))
        return 400;
    for (i = 0; i < n; i++) {
        if (out[i] != '/')
            continue;
        if (i + 1 < n && out[i + 1] == '/')
            return 400;
        if (i + 1 < n && out[i + 1] == '.' && (i + 2 == n || out[i + 2] == '/'))
            return 400;
        if (i + 2 < n && out[i + 1] == '.' && out[i + 2] == '.' && (i + 3 == n || out[i + 3] == '/'))
            return 400;
    }
    *out_len = n;
    return 0;
}

int dav_coll_key(const char *path, size_t len, char kind, char *key)
{
    if (len + 1 > STORE_PATH_MAX)
        return -1;
    key[0] = kind;
    memcpy(key + 1, path, len);
    key[len + 1] = '\0';
    return 0;
}

int dav_find_collection(const char *path, size_t len, uint32_t *id, bool *calendar)
{
    char key[STORE_PATH_MAX + 1];
    if (dav_coll_key(path, len, 'c', key))
        return STORE_ERR_NOT_FOUND;
    if (store_coll_find(&dav_store, key, len + 1, id) == STORE_OK) {
        *calendar = true;
        return STORE_OK;
    }
    key[0] = 'w';
    if (store_coll_find(&dav_store, key, len + 1, id) == STORE_OK) {
        *calendar = false;
        return STORE_OK;
    }
    return STORE_ERR_NOT_FOUND;
}

static bool is_home(const char *path, size_t len)
{
    /* "/dav/<user>/" */
    const char *rest = path + sizeof(DAV_ROOT_PATH) - 1;
    size_t n = len - (sizeof(DAV_ROOT_PATH) - 1);
    const char *slash;
    if (len < sizeof(DAV_ROOT_PATH))
        return false; /* the root itself, or shorter */
    slash = memchr(rest, '/', n);
    return slash && slash == rest + n - 1 && n > 1;
}

/* Length of the parent's path (with its '/'), for a path that is not the root. */
static size_t parent_len(const char *path, size_t len)
{
    size_t i = len - 1; /* skip a trailing '/' */
    while (i > 0 && path[i - 1] != '/')
        i--;
    return i;
}

/* Does the collection at path[0..len) (ending in '/') have a parent that can
 * hold it: the user's home or an existing collection? */
static bool coll_parent_exists(const char *path, size_t len, uint32_t *parent, bool *calendar)
{
    size_t p = parent_len(path, len);
    *parent = 0;
    *calendar = false;
    if (is_home(path, p))
        return true;
    return p > sizeof(DAV_ROOT_PATH) && dav_find_collection(path, p, parent, calendar) == STORE_OK;
}

/* Resolve c->path into c->target. Returns 0 or an HTTP status. */
static int resolve(struct dav_ctx *c)
{
    struct dav_resource *t = &c->target;
    size_t root = sizeof(DAV_ROOT_PATH) - 1, len;
    const char *slash;
    int rc = dav_decode_path(c->x->req->target, c->x->req->target_len, c->path, sizeof(c->path) - 1,
                             &len);
    if (rc)
        return rc;
    memset(t, 0, sizeof(*t));
    t->path = c->path;
    if (len == root - 1 && memcmp(c->path, DAV_ROOT_PATH, root - 1) == 0) {
        c->path[len++] = '/';
        c->path[len] = '\0';
    }
    if (len < root || memcmp(c->path, DAV_ROOT_PATH, root) != 0)
        return 404;
    t->path_len = len;
    t->exists = true;
    if (len == root) {
        t->kind = DAV_RES_ROOT;
        return 0;
    }
    slash = memchr(c->path + root, '/', len - root);
    if (!slash) {
        /* "/dav/<user>": the home without its slash */
        c->path[len++] = '/';
        c->path[len] = '\0';
        slash = c->path + len - 1;
    }
    if ((size_t)(slash - (c->path + root)) > AUTH_USER_MAX)
        return 404;
    memcpy(c->owner, c->path + root, (size_t)(slash - (c->path + root)));
    c->owner[slash - (c->path + root)] = '\0';
    /* each user sees only their own tree */
    if (strcmp(c->owner, c->user) != 0)
        return 403;
    t->path_len = len;
    if (is_home(c->path, len)) {
        t->kind = DAV_RES_HOME;
        return 0;
    }
    if (c->path[len - 1] == '/') {
        t->kind = DAV_RES_COLL;
        if (dav_find_collection(c->path, len, &t->coll, &t->calendar) == STORE_OK)
            return store_coll_info(&dav_store, t->coll, &t->info) == STORE_OK ? 0 : 500;
        t->exists = false;
        c->parent_exists = coll_parent_exists(c->path, len, &t->coll, &t->calendar);
        return 0;
    }
    /* no trailing slash: a collection if there is one, else an object */
    if (len + 1 < sizeof(c->path) - 1) {
        c->path[len] = '/';
        if (dav_find_collection(c->path, len + 1, &t->coll, &t->calendar) == STORE_OK) {
            c->path[++len] = '\0';
            t->path_len = len;
            t->kind = DAV_RES_COLL;
            return store_coll_info(&dav_store, t->coll, &t->info) == STORE_OK ? 0 : 500;
        }
        c->path[len] = '\0';
    }
    t->kind = DAV_RES_OBJECT;
    c->name_off = parent_len(c->path, len);
    c->name_len = len - c->name_off;
    if (c->name_len > STORE_NAME_MAX)
        return 414;
    if (is_home(c->path, c->name_off) ||
        dav_find_collection(c->path, c->name_off, &t->coll, &t->calendar) != STORE_OK) {
        c->parent_exists = false;
        t->exists = false;
        return 0;
    }
    c->parent_exists = true;
    {
        uint32_t got;
        char dummy;
        rc = store_get_object(&dav_store, t->coll, c->path + c->name_off, c->name_len, 0, &dummy, 0,
                              &got, &t->obj);
    }
    t->exists = rc == STORE_OK;
    if (rc != STORE_OK && rc != STORE_ERR_NOT_FOUND)
        return dav_store_http_status(rc);
    return 0;
}

/* ---- responses -------------------------------------------------------------- */

int dav_store_http_status(int rc)
{
    switch (rc) {
    case STORE_OK: return 200;
    case STORE_ERR_NOT_FOUND: return 404;
    case STORE_ERR_PRECONDITION: return 412;
    case STORE_ERR_EXISTS: return 405;
    case STORE_ERR_TOO_LARGE: return 413;
    case STORE_ERR_COLL_FULL:
    case STORE_ERR_INDEX_FULL:
    case STORE_ERR_NO_SPACE:
    case STORE_ERR_TOO_MANY_COLLECTIONS:
    case STORE_ERR_TOO_MANY_USERS: return 507;
    case STORE_ERR_SYNC_TOKEN: return 403;
    case STORE_ERR_INVALID: return 400;
    case STORE_ERR_BUSY: return 503;
    default: return 500;
    }
}

/* By hand, not snprintf: picolibc formats with 64-bit divisions, and a
 * listing formats an ETag and a status line per member. */
void dav_etag_format(uint32_t etag, char *out, size_t size)
{
    static const char hex[] = "0123456789abcdef";
    char tag[11];
    tag[0] = tag[9] = '"';
    for (int i = 8; i >= 1; i--, etag >>= 4)
        tag[i] = hex[etag & 15];
    tag[10] = '\0';
    if (size) {
        size_t n = size - 1 < 10 ? size - 1 : 10;
        memcpy(out, tag, n);
        out[n] = '\0';
    }
}

void dav_respond_status(struct dav_ctx *c, int status, const char *detail)
{
    struct http_exchange *x = c->x;
    const char *headers = NULL;
    char allow[160];
    if (status == 401)
        headers = AUTH_CHALLENGE;
    if (status == 405 && x->route) {
        http_allow_header(x->allow, allow, sizeof(allow));
        headers = allow;
    }
    httpd_respond_error(x, status, detail, headers);
}

void dav_respond_precondition(struct dav_ctx *c, int status, const char *prefix, const char *name)
{
    struct http_exchange *x = c->x;
    struct http_response resp;
    int n = snprintf(x->scratch, x->scratch_size,
                     "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
                     "<D:error xmlns:D=\"DAV:\" xmlns:C=\"" XML_NS_CALDAV "\"><%s:%s/></D:error>\n",
                     prefix, name);
    memset(&resp, 0, sizeof(resp));
    resp.status = status;
    resp.content_type = "application/xml; charset=utf-8";
    resp.body = (const uint8_t *)x->scratch;
    resp.body_len = n > 0 && (size_t)n < x->scratch_size ? (uint32_t)n : 0;
    httpd_respond(x, &resp);
}

/* ---- multistatus pieces ----------------------------------------------------- */

void dav_out_raw(struct dav_ctx *c, const char *s)
{
    size_t n = strlen(s);
    if (c->out_len + n <= sizeof(c->out)) {
        memcpy(c->out + c->out_len, s, n);
        c->out_len += n;
    }
}

void dav_writer(struct dav_ctx *c, struct xml_writer *w)
{
    xml_writer_init(w, c->out + c->out_len, sizeof(c->out) - c->out_len);
}

void dav_writer_done(struct dav_ctx *c, struct xml_writer *w)
{
    if (w->status == XMLW_OK)
        c->out_len += w->len;
}

size_t dav_out_escaped(struct dav_ctx *c, const char *s, size_t n)
{
    size_t written, taken = xml_escape_content(c->out + c->out_len, sizeof(c->out) - c->out_len, s, n,
                                               &written);
    c->out_len += written;
    return taken;
}

/* RFC 3986 section 2: everything but unreserved characters and '/' is
 * percent-encoded. */
void dav_write_href(struct xml_writer *w, const char *path, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    char buf[3 * DAV_PATH_MAX + 4];
    size_t i, n = 0;
    for (i = 0; i < len && n + 3 < sizeof(buf); i++) {
        unsigned char ch = (unsigned char)path[i];
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '.' || ch == '_' || ch == '~' || ch == '/') {
            buf[n++] = (char)ch;
        } else {
            buf[n++] = '%';
            buf[n++] = hex[ch >> 4];
            buf[n++] = hex[ch & 15];
        }
    }
    xml_write_text_element(w, "D", "href", buf, n);
}

void dav_write_status(struct xml_writer *w, int status)
{
    char line[64] = "HTTP/1.1 ";
    const char *reason;
    size_t n = 9, reason_len;
    if (status < 100 || status > 999)
        status = 500; /* before the reason, so the line's code and text agree */
    reason = http_reason(status);
    reason_len = strlen(reason);
    line[n++] = (char)('0' + status / 100);
    line[n++] = (char)('0' + status / 10 % 10);
    line[n++] = (char)('0' + status % 10);
    line[n++] = ' ';
    if (reason_len > sizeof(line) - n)
        reason_len = sizeof(line) - n;
    memcpy(line + n, reason, reason_len);
    xml_write_text_element(w, "D", "status", line, n + reason_len);
}

void dav_multistatus_open(struct dav_ctx *c)
{
    dav_out_raw(c, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
                   "<D:multistatus xmlns:D=\"DAV:\" xmlns:C=\"" XML_NS_CALDAV "\" xmlns:CS=\""
                   XML_NS_CALSERVER "\" xmlns:A=\"" XML_NS_APPLE_ICAL "\">\n");
}

void dav_multistatus_close(struct dav_ctx *c) { dav_out_raw(c, "</D:multistatus>\n"); }

static int dav_produce(struct http_exchange *x, char *buf, size_t room, size_t *len)
{
    struct dav_ctx *c = x->state;
    *len = 0;
    if (!c)
        return -1;
    while (*len < room) {
        if (c->out_off < c->out_len) {
            size_t n = c->out_len - c->out_off;
            if (n > room - *len)
                n = room - *len;
            memcpy(buf + *len, c->out + c->out_off, n);
            c->out_off += n;
            *len += n;
            continue;
        }
        c->out_off = c->out_len = 0;
        if (c->done)
            break;
        if (c->render(c) < 0) {
            ctx_free(c);
            return -1;
        }
        if (*len)
            break; /* one piece per call: other connections get their turn */
    }
    if (c->done && c->out_off >= c->out_len) {
        ctx_free(c);
        return 1;
    }
    return 0;
}

void dav_respond_multistatus(struct dav_ctx *c, dav_render_fn render)
{
    dav_respond_stream(c, 207, "application/xml; charset=utf-8", render);
}

void dav_respond_stream(struct dav_ctx *c, int status, const char *type, dav_render_fn render)
{
    struct http_response resp;
    memset(&resp, 0, sizeof(resp));
    c->render = render;
    c->out_len = c->out_off = 0;
    c->done = false;
    resp.status = status;
    resp.content_type = type;
    resp.produce = dav_produce;
    resp.content_length = HTTPD_LENGTH_UNKNOWN;
    c->producing = httpd_respond(c->x, &resp) == 0;
}

/* ---- properties (RFC 4918 section 15, RFC 5397, RFC 4791, RFC 6578) ---------- */

static void write_user_href(struct xml_writer *w, const char *user)
{
    char path[DAV_PATH_MAX + 1];
    int n = snprintf(path, sizeof(path), DAV_ROOT_PATH "%s/", user);
    dav_write_href(w, path, (size_t)n);
}

static bool p_resourcetype(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    if (w && r->kind != DAV_RES_OBJECT) {
        xml_write_start(w, "D", "resourcetype");
        xml_write_start(w, "D", "collection");
        xml_write_end(w);
        if (r->kind == DAV_RES_HOME) {
            xml_write_start(w, "D", "principal");
            xml_write_end(w);
        }
        if (r->kind == DAV_RES_COLL && r->calendar) {
            xml_write_start(w, "C", "calendar");
            xml_write_end(w);
        }
        xml_write_end(w);
    } else if (w) {
        xml_write_start(w, "D", "resourcetype");
        xml_write_end(w);
    }
    return true;
}

static bool coll_prop(const struct dav_resource *r, enum store_prop prop, struct xml_writer *w,
                      const char *prefix, const char *name)
{
    char value[STORE_COLL_RECORD_MAX];
    size_t len = 0;
    if (r->kind != DAV_RES_COLL ||
        store_coll_get_prop(&dav_store, r->coll, prop, value, sizeof(value), &len) != STORE_OK)
        return false;
    if (w)
        xml_write_text_element(w, prefix, name, value, len);
    return true;
}

static bool p_displayname(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    if (r->kind == DAV_RES_HOME) {
        if (w)
            xml_write_text_element(w, "D", "displayname", c->user, strlen(c->user));
        return true;
    }
    return coll_prop(r, STORE_PROP_DISPLAYNAME, w, "D", "displayname");
}

static bool p_getetag(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    char etag[16];
    if (r->kind != DAV_RES_OBJECT)
        return false;
    if (w) {
        dav_etag_format(r->obj.etag, etag, sizeof(etag));
        xml_write_text_element(w, "D", "getetag", etag, strlen(etag));
    }
    return true;
}

static const char *content_type(const struct dav_resource *r)
{
    return r->calendar ? "text/calendar; charset=utf-8" : "application/octet-stream";
}

static bool p_getcontenttype(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    if (r->kind != DAV_RES_OBJECT)
        return false;
    if (w)
        xml_write_text_element(w, "D", "getcontenttype", content_type(r), strlen(content_type(r)));
    return true;
}

static bool p_getcontentlength(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    char n[16];
    if (r->kind != DAV_RES_OBJECT)
        return false;
    if (w) {
        snprintf(n, sizeof(n), "%" PRIu32, r->obj.size);
        xml_write_text_element(w, "D", "getcontentlength", n, strlen(n));
    }
    return true;
}

/* RFC 5397 section 3 */
static bool p_current_user_principal(struct dav_ctx *c, const struct dav_resource *r,
                                     struct xml_writer *w)
{
    if (w) {
        xml_write_start(w, "D", "current-user-principal");
        write_user_href(w, c->user);
        xml_write_end(w);
    }
    return true;
}

/* RFC 3744 section 4.2 */
static bool p_principal_url(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    if (r->kind != DAV_RES_HOME)
        return false;
    if (w) {
        xml_write_start(w, "D", "principal-URL");
        write_user_href(w, c->user);
        xml_write_end(w);
    }
    return true;
}

/* RFC 3744 section 5.1: everything below /dav/<user>/ is the user's */
static bool p_owner(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    if (r->kind == DAV_RES_ROOT)
        return false;
    if (w) {
        xml_write_start(w, "D", "owner");
        write_user_href(w, c->user);
        xml_write_end(w);
    }
    return true;
}

/* RFC 3744 section 5.4: the owner may do everything */
static bool p_current_user_privilege_set(struct dav_ctx *c, const struct dav_resource *r,
                                         struct xml_writer *w)
{
    static const char *const privileges[] = {"read", "write", "write-properties", "write-content",
                                             "bind", "unbind", "read-current-user-privilege-set"};
    unsigned i;
    if (w) {
        xml_write_start(w, "D", "current-user-privilege-set");
        for (i = 0; i < sizeof(privileges) / sizeof(privileges[0]); i++) {
            if (r->kind == DAV_RES_ROOT && i > 0 && i < 6)
                continue;
            xml_write_start(w, "D", "privilege");
            xml_write_start(w, "D", privileges[i]);
            xml_write_end(w);
            xml_write_end(w);
        }
        xml_write_end(w);
    }
    return true;
}

/* RFC 3253 section 3.1.5 */
static bool p_supported_report_set(struct dav_ctx *c, const struct dav_resource *r,
                                   struct xml_writer *w)
{
    static const char *const calendar_reports[] = {"calendar-multiget", "calendar-query",
                                                   "free-busy-query"};
    unsigned i;
    if (r->kind != DAV_RES_COLL)
        return false;
    if (!w)
        return true;
    xml_write_start(w, "D", "supported-report-set");
    for (i = 0; r->calendar && i < 3; i++) {
        xml_write_start(w, "D", "supported-report");
        xml_write_start(w, "D", "report");
        xml_write_start(w, "C", calendar_reports[i]);
        xml_write_end(w);
        xml_write_end(w);
        xml_write_end(w);
    }
    xml_write_start(w, "D", "supported-report");
    xml_write_start(w, "D", "report");
    xml_write_start(w, "D", "sync-collection");
    xml_write_end(w);
    xml_write_end(w);
    xml_write_end(w);
    xml_write_end(w);
    return true;
}

static bool p_sync_token(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    char token[64];
    if (r->kind != DAV_RES_COLL)
        return false;
    if (w) {
        sync_token_format(r->coll, r->info.sync_seq, token, sizeof(token));
        xml_write_text_element(w, "D", "sync-token", token, strlen(token));
    }
    return true;
}

/* calendarserver.org CTag: changes whenever a member does */
static bool p_getctag(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    char tag[32];
    if (r->kind != DAV_RES_COLL)
        return false;
    if (w) {
        snprintf(tag, sizeof(tag), "\"%" PRIu32 "-%" PRIu32 "\"", r->coll, r->info.sync_seq);
        xml_write_text_element(w, "CS", "getctag", tag, strlen(tag));
    }
    return true;
}

static bool p_calendar_description(struct dav_ctx *c, const struct dav_resource *r,
                                   struct xml_writer *w)
{
    return coll_prop(r, STORE_PROP_DESCRIPTION, w, "C", "calendar-description");
}

static bool p_calendar_color(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    return coll_prop(r, STORE_PROP_COLOR, w, "A", "calendar-color");
}

static bool p_calendar_timezone(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    return coll_prop(r, STORE_PROP_TIMEZONE, w, "C", "calendar-timezone");
}

struct prop_def {
    const char *ns, *prefix, *name;
    bool (*get)(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w);
    bool allprop;   /* RFC 4918 section 14.2: the live properties of this spec */
};

static const struct prop_def props[] = {
    {XML_NS_DAV, "D", "resourcetype", p_resourcetype, true},
    {XML_NS_DAV, "D", "displayname", p_displayname, true},
    {XML_NS_DAV, "D", "getetag", p_getetag, true},
    {XML_NS_DAV, "D", "getcontenttype", p_getcontenttype, true},
    {XML_NS_DAV, "D", "getcontentlength", p_getcontentlength, true},
    {XML_NS_DAV, "D", "current-user-principal", p_current_user_principal, false},
    {XML_NS_DAV, "D", "principal-URL", p_principal_url, false},
    {XML_NS_DAV, "D", "owner", p_owner, false},
    {XML_NS_DAV, "D", "current-user-privilege-set", p_current_user_privilege_set, false},
    {XML_NS_DAV, "D", "supported-report-set", p_supported_report_set, false},
    {XML_NS_DAV, "D", "sync-token", p_sync_token, false},
    {XML_NS_CALSERVER, "CS", "getctag", p_getctag, false},
    {XML_NS_CALDAV, "C", "calendar-home-set", caldav_prop_calendar_home_set, false},
    {XML_NS_CALDAV, "C", "supported-calendar-component-set", caldav_prop_supported_components, false},
    {XML_NS_CALDAV, "C", "supported-calendar-data", caldav_prop_supported_data, false},
    {XML_NS_CALDAV, "C", "max-resource-size", caldav_prop_max_resource_size, false},
    {XML_NS_CALDAV, "C", "calendar-description", p_calendar_description, false},
    {XML_NS_CALDAV, "C", "calendar-timezone", p_calendar_timezone, false},
    {XML_NS_APPLE_ICAL, "A", "calendar-color", p_calendar_color, false},
};
#define PROPS_COUNT (sizeof(props) / sizeof(props[0]))

static const struct prop_def *prop_lookup(const struct xml_node *n)
{
    size_t i;
    for (i = 0; i < PROPS_COUNT; i++)
        if (xml_is(n, props[i].ns, props[i].name))
            return &props[i];
    return NULL;
}

bool dav_prop_requested(const struct dav_ctx *c, const char *ns, const char *name)
{
    return c->props && xml_child(c->props, ns, name) != NULL;
}

static bool is_calendar_data(const struct xml_node *n)
{
    return xml_is(n, XML_NS_CALDAV, "calendar-data");
}

/* An element named like a requested one, empty, in its own namespace. */
static void write_prop_name(struct xml_writer *w, const struct xml_node *n)
{
    char buf[512];
    size_t len = 0, i;
    if (n->name.len > 200)
        return;
    buf[len++] = '<';
    if (n->ns.len) {
        memcpy(buf + len, "X:", 2);
        len += 2;
    }
    memcpy(buf + len, n->name.ptr, n->name.len);
    len += n->name.len;
    memcpy(buf + len, n->ns.len ? " xmlns:X=\"" : " xmlns=\"", n->ns.len ? 10 : 8);
    len += n->ns.len ? 10 : 8;
    for (i = 0; i < n->ns.len && len + 8 < sizeof(buf); i++) {
        char ch = n->ns.ptr[i];
        const char *ref = ch == '&' ? "&amp;" : ch == '<' ? "&lt;" : ch == '"' ? "&quot;" : NULL;
        if (ref) {
            memcpy(buf + len, ref, strlen(ref));
            len += strlen(ref);
        } else {
            buf[len++] = ch;
        }
    }
    memcpy(buf + len, "\"/>", 3);
    len += 3;
    xml_write_raw(w, buf, len);
}

unsigned dav_write_propstats(struct dav_ctx *c, struct xml_writer *w, const struct dav_resource *r,
                             bool skip_data)
{
    unsigned found = 0, missing = 0;
    size_t i;

    xml_write_start(w, "D", "propstat");
    xml_write_start(w, "D", "prop");
    if (c->mode == DAV_PROP && c->props) {
        XML_FOR_EACH_CHILD(n, c->props) {
            const struct prop_def *d = prop_lookup(n);
            if (is_calendar_data(n) && skip_data) {
                found++;
                continue;
            }
            if (d && d->get(c, r, w))
                found++;
            else
                missing++;
        }
    } else {
        for (i = 0; i < PROPS_COUNT; i++) {
            if (c->mode == DAV_ALLPROP && !props[i].allprop)
                continue;
            if (c->mode == DAV_PROPNAME) {
                if (props[i].get(c, r, NULL)) {
                    xml_write_start(w, props[i].prefix, props[i].name);
                    xml_write_end(w);
                    found++;
                }
            } else if (props[i].get(c, r, w)) {
                found++;
            }
        }
    }
    if (skip_data)
        return found; /* the caller closes prop and propstat after the data */
    xml_write_end(w);
    dav_write_status(w, 200);
    xml_write_end(w);
    if (missing) {
        /* RFC 4918 section 9.1: 404 for each property that does not exist */
        xml_write_start(w, "D", "propstat");
        xml_write_start(w, "D", "prop");
        XML_FOR_EACH_CHILD(n, c->props) {
            const struct prop_def *d = prop_lookup(n);
            if (!(d && d->get(c, r, NULL)))
                write_prop_name(w, n);
        }
        xml_write_end(w);
        dav_write_status(w, 404);
        xml_write_end(w);
    }
    return found;
}

/* After a skip_data dav_write_propstats and the streamed calendar-data. */
void dav_write_propstats_tail(struct dav_ctx *c, struct xml_writer *w, const struct dav_resource *r)
{
    unsigned missing = 0;
    xml_write_raw(w, "</D:prop>", 9);
    dav_write_status(w, 200);
    xml_write_raw(w, "</D:propstat>", 13);
    if (c->props) {
        XML_FOR_EACH_CHILD(n, c->props) {
            const struct prop_def *d = prop_lookup(n);
            if (!is_calendar_data(n) && !(d && d->get(c, r, NULL)))
                missing++;
        }
    }
    if (!missing)
        return;
    xml_write_start(w, "D", "propstat");
    xml_write_start(w, "D", "prop");
    XML_FOR_EACH_CHILD(n, c->props) {
        const struct prop_def *d = prop_lookup(n);
        if (!is_calendar_data(n) && !(d && d->get(c, r, NULL)))
            write_prop_name(w, n);
    }
    xml_write_end(w);
    dav_write_status(w, 404);
    xml_write_end(w);
}

/* ---- enumeration in stable order -------------------------------------------- */

struct batch_fill {
    struct dav_ctx *c;
    const char *prefix;   /* collections: the parent's path */
    size_t prefix_len;
    unsigned candidates;
    bool stopped;         /* the store's walk was ended early: more may follow */
};

/* The order of a listing: objects by (name hash, name), the store's own
 * order, so a batch resumes at the cursor's hash without reading the
 * members before it; changes by sync sequence; collections by path (their
 * name_hash is 0). Stable while members change between batches. */
static int member_cmp(const struct dav_ctx *c, const struct dav_member *a, const char *name,
                      size_t len, uint32_t seq, uint32_t hash)
{
    int r;
    if (c->source == DAV_SRC_CHANGES)
        return a->sync_seq < seq ? -1 : a->sync_seq > seq;
    if (a->name_hash != hash)
        return a->name_hash < hash ? -1 : 1;
    r = memcmp(a->name, name, a->len < len ? a->len : len);
    return r ? r : (a->len < len ? -1 : a->len > len);
}

static bool after_cursor(const struct dav_ctx *c, const char *name, size_t len, uint32_t seq,
                         uint32_t hash)
{
    struct dav_member cur;
    if (!c->cursor_set)
        return true;
    memcpy(cur.name, c->cursor, c->cursor_len);
    cur.len = c->cursor_len;
    cur.sync_seq = c->cursor_seq;
    cur.name_hash = c->cursor_hash;
    return member_cmp(c, &cur, name, len, seq, hash) < 0;
}

/* Keep the DAV_BATCH smallest candidates after the cursor, in order. The
 * members stay where they were written and only batch_order[] is kept sorted:
 * an insertion moves bytes, not 280-byte members (picolibc's memmove copies
 * byte by byte, which made large batches cost more than the index walks they
 * save). */
static void batch_offer(struct batch_fill *f, const char *name, size_t len, uint32_t etag,
                        uint32_t size, uint32_t seq, uint32_t hash, uint32_t coll, bool deleted)
{
    struct dav_ctx *c = f->c;
    struct dav_member *m;
    unsigned i, slot;
    if (len > STORE_PATH_MAX || !after_cursor(c, name, len, seq, hash))
        return;
    f->candidates++;
    i = c->batch_n;
    while (i > 0 && member_cmp(c, &c->batch[c->batch_order[i - 1]], name, len, seq, hash) > 0)
        i--;
    if (i >= DAV_BATCH)
        return;
    if (c->batch_n == DAV_BATCH)
        slot = c->batch_order[--c->batch_n];  /* the largest drops out; its member is reused */
    else
        slot = c->batch_n;
    memmove(&c->batch_order[i + 1], &c->batch_order[i], c->batch_n - i);
    c->batch_order[i] = (uint8_t)slot;
    m = &c->batch[slot];
    memcpy(m->name, name, len);
    m->len = len;
    m->etag = etag;
    m->size = size;
    m->sync_seq = seq;
    m->name_hash = hash;
    m->coll = coll;
    m->deleted = deleted;
    c->batch_n++;
}

static int offer_entry(void *ctx, const struct store_entry *e)
{
    struct batch_fill *f = ctx;
    struct dav_ctx *c = f->c;
    uint32_t hash = c->source == DAV_SRC_OBJECTS ? e->name_hash : 0;
    /* the store lists objects in ascending hash: once the batch is full and a
     * hash beyond its largest comes, nothing later can get in */
    if (c->source == DAV_SRC_OBJECTS && c->batch_n == DAV_BATCH &&
        hash > c->batch[c->batch_order[DAV_BATCH - 1]].name_hash) {
        f->stopped = true;
        return 1;
    }
    batch_offer(f, e->name, e->name_len, e->etag, e->size, e->sync_seq, hash, 0, e->deleted != 0);
    return 0;
}

/* Direct sub-collections of the prefix: the store path is kind + URL path. */
static int offer_collection(void *ctx, const struct store_collection *info)
{
    struct batch_fill *f = ctx;
    const char *p = info->path + 1;
    size_t len = info->path_len - 1;
    const char *slash;
    if (info->path_len < 2 || len <= f->prefix_len || memcmp(p, f->prefix, f->prefix_len) != 0)
        return 0;
    slash = memchr(p + f->prefix_len, '/', len - f->prefix_len);
    if (!slash || slash != p + len - 1)
        return 0;
    batch_offer(f, info->path, info->path_len, 0, 0, info->sync_seq, 0, info->id, false);
    return 0;
}

void dav_enum_start(struct dav_ctx *c, int source)
{
    c->source = source;
    c->cursor_set = false;
    c->exhausted = false;
    c->batch_n = c->batch_i = 0;
}

int dav_enum_next(struct dav_ctx *c, uint32_t coll)
{
    for (;;) {
        struct batch_fill f = {c, c->target.path, c->target.path_len, 0, false};
        int rc;
        if (c->batch_i < c->batch_n) {
            c->member = c->batch[c->batch_order[c->batch_i++]];
            memcpy(c->cursor, c->member.name, c->member.len);
            c->cursor_len = c->member.len;
            c->cursor_seq = c->member.sync_seq;
            c->cursor_hash = c->member.name_hash;
            c->cursor_set = true;
            return 1;
        }
        if (c->exhausted)
            return 0;
        c->batch_n = c->batch_i = 0;
        /* resume at the cursor: the store skips what is before it in RAM */
        if (c->source == DAV_SRC_OBJECTS)
            rc = store_list_from(&dav_store, coll, c->cursor_set ? c->cursor_hash : 0, offer_entry, &f);
        else if (c->source == DAV_SRC_CHANGES)
            rc = store_changes_after(&dav_store, coll, c->sync_from, c->cursor_set ? c->cursor_seq : 0,
                                     offer_entry, &f);
        else
            rc = store_coll_list(&dav_store, offer_collection, &f);
        if (rc != STORE_OK)
            return rc;
        if (!f.stopped && f.candidates <= DAV_BATCH)
            c->exhausted = true;
        if (!c->batch_n)
            return 0;
    }
}

void dav_object_resource(struct dav_ctx *c, const struct dav_member *m, char *pathbuf,
                         struct dav_resource *r)
{
    size_t plen = c->target.path_len;
    memset(r, 0, sizeof(*r));
    memcpy(pathbuf, c->target.path, plen);
    if (plen + m->len <= DAV_PATH_MAX) {
        memcpy(pathbuf + plen, m->name, m->len);
        plen += m->len;
    }
    pathbuf[plen] = '\0';
    r->kind = DAV_RES_OBJECT;
    r->path = pathbuf;
    r->path_len = plen;
    r->coll = c->target.coll;
    r->calendar = c->target.calendar;
    r->exists = !m->deleted;
    r->obj.etag = m->etag;
    r->obj.size = m->size;
    r->obj.sync_seq = m->sync_seq;
}

long dav_read_object(uint32_t coll, const char *name, size_t len)
{
    struct store_object_info info;
    uint32_t got = 0, total = 0;
    int rc;
    do {
        rc = store_get_object(&dav_store, coll, name, len, total, dav_work + total,
                              (uint32_t)sizeof(dav_work) - total, &got, &info);
        if (rc != STORE_OK)
            return rc;
        total += got;
    } while (got && total < info.size && total < sizeof(dav_work));
    return (long)total;
}

/* One object's DAV:response in a REPORT, calendar-data streamed from the
 * store in pieces (RFC 4791 section 9.6). c->obj must be set and
 * c->obj_phase zero to start. Returns 1 once the response is complete. */
int dav_render_object(struct dav_ctx *c)
{
    struct xml_writer w;
    const struct dav_resource *r = &c->obj;
    char data[1024];
    uint32_t got = 0;
    struct store_object_info info;

    switch (c->obj_phase) {
    case 0:
        dav_writer(c, &w);
        xml_write_start(&w, "D", "response");
        dav_write_href(&w, r->path, r->path_len);
        if (!r->exists) {
            dav_write_status(&w, 404);
            xml_write_end(&w);
            dav_writer_done(c, &w);
            return 1;
        }
        dav_write_propstats(c, &w, r, true);
        dav_writer_done(c, &w);
        c->offset = 0;
        c->obj_phase = 2;
        if (c->want_data && r->calendar) {
            dav_out_raw(c, "<C:calendar-data>");
            c->obj_phase = 1;
        }
        return 0;
    case 1:
        if (store_get_object(&dav_store, r->coll, r->path + c->obj_name_off, r->path_len - c->obj_name_off,
                             c->offset, data, sizeof(data), &got, &info) != STORE_OK || got == 0 ||
            info.etag != r->obj.etag) {
            /* gone or replaced meanwhile: what was sent stands, the rest is cut */
            dav_out_raw(c, "</C:calendar-data>");
            c->obj_phase = 2;
            return 0;
        }
        c->offset += dav_out_escaped(c, data, got); /* the rest, if any, in the next piece */
        if (c->offset >= info.size) {
            dav_out_raw(c, "</C:calendar-data>");
            c->obj_phase = 2;
        }
        return 0;
    default:
        dav_writer(c, &w);
        dav_write_propstats_tail(c, &w, r);
        xml_write_raw(&w, "</D:response>", 13);
        dav_writer_done(c, &w);
        c->obj_phase = 0;
        return 1;
    }
}

/* ---- PROPFIND (RFC 4918 section 9.1) ----------------------------------------- */

static void write_response(struct dav_ctx *c, const struct dav_resource *r)
{
    struct xml_writer w;
    dav_writer(c, &w);
    xml_write_start(&w, "D", "response");
    dav_write_href(&w, r->path, r->path_len);
    dav_write_propstats(c, &w, r, false);
    xml_write_end(&w);
    dav_writer_done(c, &w);
}

enum { PF_SELF, PF_COLLECTIONS, PF_OBJECTS, PF_CLOSE };

static int propfind_render(struct dav_ctx *c)
{
    char path[DAV_PATH_MAX + 2];
    struct dav_resource r;
    int rc;

    switch (c->phase) {
    case PF_SELF:
        dav_multistatus_open(c);
        write_response(c, &c->target);
        c->phase = c->depth == 0 || c->target.kind == DAV_RES_OBJECT ? PF_CLOSE : PF_COLLECTIONS;
        dav_enum_start(c, DAV_SRC_COLLECTIONS);
        return 0;
    case PF_COLLECTIONS:
        if (c->target.kind == DAV_RES_ROOT) {
            /* the root lists the user's own home only */
            memset(&r, 0, sizeof(r));
            r.kind = DAV_RES_HOME;
            r.path = path;
            r.path_len = (size_t)snprintf(path, sizeof(path), DAV_ROOT_PATH "%s/", c->user);
            r.exists = true;
            write_response(c, &r);
            c->phase = PF_CLOSE;
            return 0;
        }
        rc = dav_enum_next(c, 0);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            c->phase = c->target.kind == DAV_RES_COLL ? PF_OBJECTS : PF_CLOSE;
            dav_enum_start(c, DAV_SRC_OBJECTS);
            return 0;
        }
        memset(&r, 0, sizeof(r));
        r.kind = DAV_RES_COLL;
        memcpy(path, c->member.name + 1, c->member.len - 1);
        r.path = path;
        r.path_len = c->member.len - 1;
        r.coll = c->member.coll;
        r.calendar = c->member.name[0] == 'c';
        r.exists = store_coll_info(&dav_store, r.coll, &r.info) == STORE_OK;
        if (r.exists)
            write_response(c, &r);
        return 0;
    case PF_OBJECTS:
        rc = dav_enum_next(c, c->target.coll);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            c->phase = PF_CLOSE;
            return 0;
        }
        dav_object_resource(c, &c->member, path, &r);
        write_response(c, &r);
        return 0;
    default:
        dav_multistatus_close(c);
        c->done = true;
        return 0;
    }
}

/* Parse the XML body into c->doc. Returns 0 (an empty body leaves doc.root
 * NULL) or 400. */
static int parse_body(struct dav_ctx *c)
{
    struct xml_limits limits = {DAV_XML_MAX, 0};
    unsigned char *arena = xml_arenas[c - ctx_pool];
    if (!c->body_len)
        return 0;
    if (xml_parse(&c->doc, c->body, c->body_len, arena, DAV_XML_ARENA, &limits, NULL) != XML_OK)
        return 400;
    return 0;
}

static void do_propfind(struct dav_ctx *c)
{
    const struct xml_node *root;
    if (!c->target.exists) {
        dav_respond_status(c, 404, NULL);
        return;
    }
    if (parse_body(c)) {
        dav_respond_status(c, 400, "The body is not well-formed XML.");
        return;
    }
    root = c->doc.root;
    c->mode = DAV_ALLPROP; /* section 9.1: no body means allprop */
    if (root) {
        if (!xml_is(root, XML_NS_DAV, "propfind")) {
            dav_respond_status(c, 400, "Expected a DAV:propfind element.");
            return;
        }
        if ((c->props = xml_child(root, XML_NS_DAV, "prop")) != NULL)
            c->mode = DAV_PROP;
        else if (xml_child(root, XML_NS_DAV, "propname"))
            c->mode = DAV_PROPNAME;
        else if (!xml_child(root, XML_NS_DAV, "allprop")) {
            dav_respond_status(c, 400, "Expected prop, propname or allprop.");
            return;
        }
    }
    c->phase = PF_SELF;
    dav_respond_multistatus(c, propfind_render);
}

/* ---- PROPPATCH (RFC 4918 section 9.2) ---------------------------------------- */

static int patchable(const struct dav_ctx *c, const struct xml_node *n)
{
    if (c->target.kind != DAV_RES_COLL)
        return 0;
    if (xml_is(n, XML_NS_DAV, "displayname"))
        return STORE_PROP_DISPLAYNAME;
    if (!c->target.calendar)
        return 0;
    if (xml_is(n, XML_NS_CALDAV, "calendar-description"))
        return STORE_PROP_DESCRIPTION;
    if (xml_is(n, XML_NS_APPLE_ICAL, "calendar-color"))
        return STORE_PROP_COLOR;
    if (xml_is(n, XML_NS_CALDAV, "calendar-timezone"))
        return STORE_PROP_TIMEZONE;
    return 0;
}

/* Apply every set/remove instruction in document order, all or none
 * (section 9.2): a failure restores the values changed before it. Returns
 * 0, or the store status of the failure. */
int dav_apply_props(struct dav_ctx *c, uint32_t coll, const struct xml_node *update, bool check_only)
{
    struct { uint8_t prop; uint16_t len; char value[STORE_COLL_RECORD_MAX]; } *saved =
        (void *)dav_work; /* up to 4 properties' old values */
    unsigned nsaved = 0, i;
    int rc = STORE_OK;

    XML_FOR_EACH_CHILD(op, update) {
        bool set = xml_is(op, XML_NS_DAV, "set");
        const struct xml_node *prop;
        if (!set && !xml_is(op, XML_NS_DAV, "remove"))
            continue;
        if (!(prop = xml_child(op, XML_NS_DAV, "prop")))
            continue;
        XML_FOR_EACH_CHILD(p, prop) {
            int id = patchable(c, p);
            struct xml_str v;
            size_t old = 0;
            if (!id)
                return STORE_ERR_INVALID;
            v = xml_is(p, XML_NS_CALDAV, "calendar-timezone") ? p->text : xml_text_trimmed(p);
            if (set && (v.len == 0 || v.len > STORE_COLL_RECORD_MAX / 2))
                return STORE_ERR_INVALID;
            if (check_only)
                continue;
            if (nsaved < 4 * sizeof(saved[0]) / sizeof(saved[0]) &&
                (size_t)(nsaved + 1) * sizeof(saved[0]) <= sizeof(dav_work)) {
                saved[nsaved].prop = (uint8_t)id;
                if (store_coll_get_prop(&dav_store, coll, (enum store_prop)id, saved[nsaved].value,
                                        sizeof(saved[nsaved].value), &old) != STORE_OK)
                    old = 0;
                saved[nsaved].len = (uint16_t)old;
                nsaved++;
            }
            rc = store_coll_set_prop(&dav_store, coll, (enum store_prop)id, set ? v.ptr : NULL,
                                     set ? v.len : 0);
            if (rc != STORE_OK && !(rc == STORE_ERR_NOT_FOUND && !set))
                goto undo;
            rc = STORE_OK;
        }
    }
    return STORE_OK;
undo:
    for (i = nsaved; i-- > 0;)
        store_coll_set_prop(&dav_store, coll, (enum store_prop)saved[i].prop, saved[i].value,
                            saved[i].len);
    return rc;
}

static int proppatch_render(struct dav_ctx *c)
{
    struct xml_writer w;
    int rc = c->phase; /* the result, kept there by do_proppatch */
    dav_multistatus_open(c);
    dav_writer(c, &w);
    xml_write_start(&w, "D", "response");
    dav_write_href(&w, c->target.path, c->target.path_len);
    XML_FOR_EACH_CHILD(op, c->doc.root) {
        const struct xml_node *prop = xml_child(op, XML_NS_DAV, "prop");
        if (!prop)
            continue;
        XML_FOR_EACH_CHILD(p, prop) {
            int status = rc == 0 ? 200 : patchable(c, p) ? 424 : 403;
            xml_write_start(&w, "D", "propstat");
            xml_write_start(&w, "D", "prop");
            write_prop_name(&w, p);
            xml_write_end(&w);
            dav_write_status(&w, status);
            xml_write_end(&w);
        }
    }
    xml_write_end(&w);
    dav_writer_done(c, &w);
    dav_multistatus_close(c);
    c->done = true;
    return 0;
}

static void do_proppatch(struct dav_ctx *c)
{
    int rc;
    if (!c->target.exists) {
        dav_respond_status(c, 404, NULL);
        return;
    }
    if (parse_body(c) || !c->doc.root || !xml_is(c->doc.root, XML_NS_DAV, "propertyupdate")) {
        dav_respond_status(c, 400, "Expected a DAV:propertyupdate element.");
        return;
    }
    rc = dav_apply_props(c, c->target.coll, c->doc.root, true);
    if (rc == STORE_OK)
        rc = dav_apply_props(c, c->target.coll, c->doc.root, false);
    if (rc != STORE_OK && rc != STORE_ERR_INVALID) {
        dav_respond_status(c, dav_store_http_status(rc), store_strerror(rc));
        return;
    }
    c->phase = rc == STORE_OK ? 0 : 1;
    dav_respond_multistatus(c, proppatch_render);
}

/* ---- MKCOL (RFC 4918 section 9.3) -------------------------------------------- */

/* Shared with MKCALENDAR: a new collection at the target. Returns 0 or the
 * HTTP status already answered. */
int dav_create_collection(struct dav_ctx *c, char kind, uint32_t *id)
{
    char key[STORE_PATH_MAX + 1];
    uint32_t parent;
    bool parent_calendar;
    size_t len = c->target.path_len;
    int rc;

    if (c->target.kind == DAV_RES_OBJECT) {
        if (c->target.exists) {
            dav_respond_status(c, 405, "A resource exists there.");
            return 405;
        }
        c->path[len++] = '/';
        c->path[len] = '\0';
        c->target.path_len = len;
        c->target.kind = DAV_RES_COLL;
    }
    if (c->target.kind != DAV_RES_COLL || c->target.exists) {
        dav_respond_status(c, 405, "The collection exists.");
        return 405;
    }
    if (!coll_parent_exists(c->path, len, &parent, &parent_calendar)) {
        dav_respond_status(c, 409, "The parent collection does not exist.");
        return 409;
    }
    if (parent) {
        /* a resource of the same name without the slash (section 9.3.1: 405) */
        size_t p = parent_len(c->path, len);
        struct store_object_info info;
        uint32_t got;
        char dummy;
        if (store_get_object(&dav_store, parent, c->path + p, len - 1 - p, 0, &dummy, 0, &got,
                             &info) == STORE_OK) {
            dav_respond_status(c, 405, "A resource exists there.");
            return 405;
        }
    }
    if (parent_calendar) {
        /* RFC 4791 section 4.2: no collections inside calendars */
        if (kind == 'c')
            dav_respond_precondition(c, 403, "C", "calendar-collection-location-ok");
        else
            dav_respond_status(c, 403, "Calendar collections hold no collections.");
        return 403;
    }
    if (dav_coll_key(c->path, len, kind, key)) {
        dav_respond_status(c, 414, NULL);
        return 414;
    }
    rc = store_coll_create(&dav_store, c->user, key, id);
    if (rc != STORE_OK) {
        dav_respond_status(c, dav_store_http_status(rc), store_strerror(rc));
        return dav_store_http_status(rc);
    }
    return 0;
}

static void respond_created(struct dav_ctx *c, int status, const char *headers)
{
    struct http_response resp;
    memset(&resp, 0, sizeof(resp));
    resp.status = status;
    resp.headers = headers;
    httpd_respond(c->x, &resp);
}

static void do_mkcol(struct dav_ctx *c)
{
    uint32_t id;
    if (c->body_len) {
        /* section 9.3.1: a body we do not understand */
        dav_respond_status(c, 415, "MKCOL takes no body.");
        return;
    }
    if (dav_create_collection(c, 'w', &id) == 0)
        respond_created(c, 201, NULL);
}

/* ---- DELETE (RFC 4918 section 9.6) ------------------------------------------- */

struct find_under {
    const char *prefix;
    size_t len;
    uint32_t id;
    bool found;
};

static int find_under_cb(void *ctx, const struct store_collection *info)
{
    struct find_under *f = ctx;
    if (info->path_len > f->len && memcmp(info->path + 1, f->prefix, f->len) == 0) {
        f->id = info->id;
        f->found = true;
        return 1;
    }
    return 0;
}

static void do_delete(struct dav_ctx *c)
{
    char etag[16];
    int rc;
    if (c->target.kind == DAV_RES_ROOT || c->target.kind == DAV_RES_HOME) {
        dav_respond_status(c, 403, "The root and home collections cannot be deleted.");
        return;
    }
    if (!c->target.exists) {
        dav_respond_status(c, 404, NULL);
        return;
    }
    if (c->target.kind == DAV_RES_COLL) {
        /* the collection and every collection below it (section 9.6.1) */
        for (;;) {
            struct find_under f = {c->target.path, c->target.path_len, 0, false};
            rc = store_coll_list(&dav_store, find_under_cb, &f);
            if (rc != STORE_OK || !f.found)
                break;
            if ((rc = store_coll_delete(&dav_store, f.id)) != STORE_OK)
                break;
        }
        if (rc != STORE_OK) {
            dav_respond_status(c, dav_store_http_status(rc), store_strerror(rc));
            return;
        }
        respond_created(c, 204, NULL);
        return;
    }
    dav_etag_format(c->target.obj.etag, etag, sizeof(etag));
    rc = http_preconditions(c->x->req, etag);
    if (rc) {
        dav_respond_status(c, rc, NULL);
        return;
    }
    rc = store_delete_object(&dav_store, c->target.coll, c->path + c->name_off, c->name_len, NULL);
    if (rc != STORE_OK) {
        dav_respond_status(c, dav_store_http_status(rc), store_strerror(rc));
        return;
    }
    respond_created(c, 204, NULL);
}

/* ---- GET / HEAD (RFC 9110 sections 9.3.1, 9.3.2) ---------------------------- */

static int get_produce(struct http_exchange *x, char *buf, size_t room, size_t *len)
{
    struct dav_ctx *c = x->state;
    struct store_object_info info;
    uint32_t got = 0;
    int rc;
    *len = 0;
    if (!c)
        return -1;
    rc = store_get_object(&dav_store, c->target.coll, c->path + c->name_off, c->name_len, c->offset,
                          buf, (uint32_t)room, &got, &info);
    /* replaced while being sent: the length sent no longer holds */
    if (rc != STORE_OK || info.etag != c->target.obj.etag || got == 0) {
        ctx_free(c);
        return -1;
    }
    c->offset += got;
    *len = got;
    if (c->offset >= c->target.obj.size) {
        ctx_free(c);
        return 1;
    }
    return 0;
}

static void do_get(struct dav_ctx *c)
{
    struct http_response resp;
    char headers[64], etag[16];
    int rc;
    if (c->target.kind != DAV_RES_OBJECT) {
        /* collections have no representation of their own here */
        dav_respond_status(c, 405, "Collections are read with PROPFIND.");
        return;
    }
    if (!c->target.exists) {
        dav_respond_status(c, 404, NULL);
        return;
    }
    dav_etag_format(c->target.obj.etag, etag, sizeof(etag));
    snprintf(headers, sizeof(headers), "ETag: %s\r\n", etag);
    rc = http_preconditions(c->x->req, etag);
    memset(&resp, 0, sizeof(resp));
    if (rc == 304) {
        resp.status = 304;
        resp.headers = headers;
        httpd_respond(c->x, &resp);
        return;
    }
    if (rc) {
        dav_respond_status(c, rc, NULL);
        return;
    }
    resp.status = 200;
    resp.content_type = content_type(&c->target);
    resp.headers = headers;
    c->offset = 0;
    if (c->target.obj.size == 0 || c->x->req->method == HTTP_HEAD) {
        resp.body_len = 0;
        resp.content_length = c->target.obj.size;
        resp.produce = c->target.obj.size ? get_produce : NULL;
        httpd_respond(c->x, &resp);
        return;
    }
    resp.produce = get_produce;
    resp.content_length = c->target.obj.size;
    c->producing = httpd_respond(c->x, &resp) == 0; /* get_produce frees c */
}

/* ---- PUT (RFC 9110 section 9.3.4) --------------------------------------------- */

/* 413 naming this build's limit (app_config.h: ports set their own) */
static void too_large(struct http_exchange *x, const char *what, unsigned long limit)
{
    char detail[48];
    snprintf(detail, sizeof(detail), "%s %lu bytes.", what, limit);
    httpd_respond_error(x, 413, detail, NULL);
}

static int put_too_large(struct dav_ctx *c)
{
    if (c->target.calendar) {
        /* RFC 4791 section 5.3.2.1 */
        dav_respond_precondition(c, 403, "C", "max-resource-size");
        return 403;
    }
    too_large(c->x, "The limit is", DAV_MAX_RESOURCE_SIZE);
    return 413;
}

/* The writer lock is held: check the preconditions against the store as it
 * is now, and start streaming plain resources of known length. */
static int put_start(struct dav_ctx *c)
{
    char etag[16];
    struct store_object_info info;
    uint32_t got;
    char dummy;
    int rc = store_get_object(&dav_store, c->target.coll, c->path + c->name_off, c->name_len, 0,
                              &dummy, 0, &got, &info);
    c->put_existed = rc == STORE_OK;
    if (c->put_existed)
        dav_etag_format(info.etag, etag, sizeof(etag));
    rc = http_preconditions(c->x->req, c->put_existed ? etag : NULL);
    if (rc) {
        dav_respond_status(c, rc, NULL);
        return rc;
    }
    upload_len = 0;
    if (!c->target.calendar && !c->x->req->chunked) {
        rc = store_put_begin(&dav_store, c->target.coll, c->path + c->name_off, c->name_len,
                             c->x->req->content_length, NULL, 0);
        if (rc != STORE_OK) {
            rc = dav_store_http_status(rc);
            dav_respond_status(c, rc, store_strerror(rc));
            return rc;
        }
        c->streaming_put = true;
    }
    return 0;
}

/* Body bytes of a PUT, with the writer lock held. */
static int put_take(struct dav_ctx *c, const uint8_t *data, size_t len)
{
    int rc;
    if (!c->put_started) {
        c->put_started = true;
        if ((rc = put_start(c)) != 0)
            return rc;
    }
    if (c->streaming_put) {
        rc = store_put_write(&dav_store, data, (uint32_t)len);
        if (rc != STORE_OK) {
            rc = dav_store_http_status(rc);
            dav_respond_status(c, rc, NULL);
            return rc;
        }
        return HTTPD_BODY_OK;
    }
    if (upload_len + len > sizeof(upload))
        return put_too_large(c);
    memcpy(upload + upload_len, data, len);
    upload_len += len;
    return HTTPD_BODY_OK;
}

static void do_put(struct dav_ctx *c)
{
    char headers[64], etag[16];
    uint32_t tag;
    int rc;
    if (!c->put_started) {
        c->put_started = true;
        if (put_start(c) != 0)
            return;
    }
    if (c->streaming_put) {
        rc = store_put_commit(&dav_store, &tag);
        c->streaming_put = false;
    } else {
        if (c->target.calendar && caldav_put_check(c, upload, upload_len) != 0)
            return;
        rc = store_put_object(&dav_store, c->target.coll, c->path + c->name_off, c->name_len,
                              upload, (uint32_t)upload_len, NULL, 0, &tag);
    }
    if (rc != STORE_OK) {
        rc == STORE_ERR_TOO_LARGE ? (void)put_too_large(c)
                                  : dav_respond_status(c, dav_store_http_status(rc), store_strerror(rc));
        return;
    }
    dav_etag_format(tag, etag, sizeof(etag));
    snprintf(headers, sizeof(headers), "ETag: %s\r\n", etag);
    respond_created(c, c->put_existed ? 204 : 201, headers);
}

/* ---- the handler ---------------------------------------------------------------- */

static bool writes_store(enum http_method m)
{
    return m == HTTP_PUT || m == HTTP_DELETE || m == HTTP_MKCOL || m == HTTP_MKCALENDAR ||
           m == HTTP_PROPPATCH;
}

static bool takes_xml(enum http_method m)
{
    return m == HTTP_PROPFIND || m == HTTP_PROPPATCH || m == HTTP_REPORT || m == HTTP_MKCALENDAR ||
           m == HTTP_MKCOL;
}

static int dav_begin(struct http_exchange *x)
{
    const struct http_request *req = x->req;
    struct dav_ctx *c;
    size_t vlen;
    const char *v;
    int rc;

    if (!mounted)
        return 503;
    if ((rc = ctx_acquire(x, &c)) != 0)
        return rc;
    switch (auth_check(&dav_store, req, c->user)) {
    case AUTH_OK:
        break;
    default:
        dav_respond_status(c, 401, NULL);
        ctx_free(c);
        return 401;
    }
    if ((rc = resolve(c)) != 0) {
        dav_respond_status(c, rc, rc == 403 ? "Not your collection." : NULL);
        ctx_free(c);
        return rc;
    }
    c->depth = -1;
    if ((v = http_header(req, "Depth", &vlen)) != NULL) {
        if (vlen == 1 && (v[0] == '0' || v[0] == '1'))
            c->depth = v[0] - '0';
        else if (!http_token_equals(v, vlen, "infinity")) {
            dav_respond_status(c, 400, "Depth is 0, 1 or infinity.");
            ctx_free(c);
            return 400;
        }
    }
    if (req->method == HTTP_PROPFIND && c->depth < 0) {
        /* RFC 4918 section 9.1: we may refuse infinite depth */
        dav_respond_precondition(c, 403, "D", "propfind-finite-depth");
        ctx_free(c);
        return 403;
    }
    if (req->method == HTTP_REPORT && c->depth < 0)
        c->depth = 0; /* RFC 3253 section 3.6 */
    if (takes_xml(req->method) && req->has_content_length && req->content_length > DAV_XML_MAX) {
        too_large(x, "XML bodies are limited to", DAV_XML_MAX);
        ctx_free(c);
        return 413;
    }
    if (req->method == HTTP_PUT) {
        if (c->target.kind != DAV_RES_OBJECT) {
            dav_respond_status(c, 405, "PUT creates resources inside collections.");
            ctx_free(c);
            return 405;
        }
        if (!c->parent_exists) {
            dav_respond_status(c, 409, "The parent collection does not exist.");
            ctx_free(c);
            return 409;
        }
        if (req->has_content_length && req->content_length > DAV_MAX_RESOURCE_SIZE) {
            rc = put_too_large(c);
            ctx_free(c);
            return rc;
        }
        if (c->target.calendar && (rc = caldav_put_begin(c)) != 0) {
            ctx_free(c);
            return rc;
        }
        /* fail early, before the body is sent (re-checked once it is in) */
        {
            char etag[16];
            if (c->target.exists)
                dav_etag_format(c->target.obj.etag, etag, sizeof(etag));
            if ((rc = http_preconditions(req, c->target.exists ? etag : NULL)) != 0) {
                dav_respond_status(c, rc, NULL);
                ctx_free(c);
                return rc;
            }
        }
    }
    return 0;
}

static int dav_body(struct http_exchange *x, const uint8_t *data, size_t len)
{
    struct dav_ctx *c = x->state;
    if (!c)
        return 500;
    if (x->req->method == HTTP_PUT) {
        if (!writer_try(c)) {
            if (len > x->scratch_size)
                return 503;
            memcpy(x->scratch, data, len);
            c->stash_len = (uint32_t)len;
            writer_wait(c, DAV_WAIT_BODY);
            return HTTPD_BODY_PAUSE;
        }
        return put_take(c, data, len);
    }
    if (c->body_len + len > sizeof(c->body)) {
        c->body_too_large = true;
        return 413;
    }
    memcpy(c->body + c->body_len, data, len);
    c->body_len += len;
    return HTTPD_BODY_OK;
}

/* Run the request; the response is started unless it waits for the lock. */
static void end_request(struct dav_ctx *c)
{
    switch (c->x->req->method) {
    case HTTP_GET:
    case HTTP_HEAD: do_get(c); break;
    case HTTP_PUT: do_put(c); break;
    case HTTP_DELETE: do_delete(c); break;
    case HTTP_MKCOL: do_mkcol(c); break;
    case HTTP_MKCALENDAR:
        if (parse_body(c)) {
            dav_respond_status(c, 400, "The body is not well-formed XML.");
            break;
        }
        caldav_mkcalendar(c);
        break;
    case HTTP_PROPFIND: do_propfind(c); break;
    case HTTP_PROPPATCH: do_proppatch(c); break;
    case HTTP_REPORT:
        if (parse_body(c) || !c->doc.root)
            dav_respond_status(c, 400, "The body is not well-formed XML.");
        else if (xml_is(c->doc.root, XML_NS_DAV, "sync-collection"))
            sync_report(c);
        else
            caldav_report(c);
        break;
    default: dav_respond_status(c, 405, NULL); break;
    }
    /* answered from scratch or headers only, unless a producer owns c now */
    if (!c->producing)
        ctx_free(c);
}

static void dav_end(struct http_exchange *x)
{
    struct dav_ctx *c = x->state;
    if (!c) {
        httpd_respond_error(x, 500, NULL, NULL);
        return;
    }
    if (writes_store(x->req->method) && !writer_try(c)) {
        writer_wait(c, DAV_WAIT_END);
        return; /* dav_poll() runs it and resumes the connection */
    }
    end_request(c);
}

static void dav_abort(struct http_exchange *x)
{
    if (x->state)
        ctx_free(x->state);
    else
        ctx_wait_remove(x); /* it ended while waiting for a context */
}

const struct http_handler dav_handler = {dav_begin, dav_body, dav_end, dav_abort};
