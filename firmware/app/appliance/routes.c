#include "appliance/routes.h"

#include <stdio.h>
#include <string.h>

#include "platform/app_config.h"
#include "http/static_files.h"
#include "dav/dav.h"
#include "caldav/wellknown.h"
#include "appliance/bulk.h"
#include "appliance/status.h"

#define READ_METHODS \
    (HTTP_METHOD_BIT(HTTP_GET) | HTTP_METHOD_BIT(HTTP_HEAD) | HTTP_METHOD_BIT(HTTP_OPTIONS))

/* ---- GET / : the status page -------------------------------------------- */

/* Streamed section by section in the chunked coding (RFC 9112 section 7.1):
 * its length is not known before it is rendered. x->state counts sections. */
static int status_produce(struct http_exchange *x, char *buf, size_t room, size_t *len)
{
    uintptr_t index = (uintptr_t)x->state;
    size_t n;

    while ((n = status_section((unsigned)index, buf, room)) == 0)
        index++; /* a section with nothing to show in this build */
    *len = 0;
    if (n == STATUS_END)
        return 1;
    if (n == STATUS_TOO_SMALL)
        return -1;
    x->state = (void *)(index + 1);
    *len = n;
    return 0;
}

/* A 200 text/plain body of unknown length, written by produce as it goes. */
static void respond_produced_text(struct http_exchange *x, httpd_produce_fn produce)
{
    struct http_response resp;
    memset(&resp, 0, sizeof(resp));
    resp.status = 200;
    resp.content_type = "text/plain; charset=utf-8";
    resp.produce = produce;
    resp.content_length = HTTPD_LENGTH_UNKNOWN;
    httpd_respond(x, &resp);
}

static void status_end(struct http_exchange *x) { respond_produced_text(x, status_produce); }

static const struct http_handler status_handler = { NULL, NULL, status_end, NULL };

/* ---- GET /static/... : files embedded at build time --------------------- */

static int static_begin(struct http_exchange *x)
{
    const struct static_file *f = static_file_find(x->req->target, http_path_length(x->req));
    if (!f)
        return 404;
    x->state = (void *)f;
    return 0;
}

static void static_end(struct http_exchange *x)
{
    const struct static_file *f = x->state;
    struct http_response resp;
    memset(&resp, 0, sizeof(resp));
    resp.status = 200;
    resp.content_type = f->content_type;
    resp.body = f->data;
    resp.body_len = f->len;
    httpd_respond(x, &resp);
}

static const struct http_handler static_handler = { static_begin, NULL, static_end, NULL };

/* ---- GET /profile : PC samples (firmware built with PROFILE=1) ------------ */

#ifdef LITEDAV_PROFILE
#include "platform/profile.h"

/* x->state: the next histogram index to look at, plus one (0: not started). */
static int profile_produce(struct http_exchange *x, char *buf, size_t room, size_t *len)
{
    unsigned index = (unsigned)(uintptr_t)x->state;
    size_t n = 0;
    uint32_t pc, count;
    int at;

    while (room - n >= 24 && (at = profile_sample(index, &pc, &count)) >= 0) {
        n += (size_t)snprintf(buf + n, room - n, "%08lx %lu\n", (unsigned long)pc, (unsigned long)count);
        index = (unsigned)at + 1;
    }
    x->state = (void *)(uintptr_t)index;
    *len = n;
    if (room - n >= 24) {
        profile_reset(); /* everything was sent: the next profile starts now */
        return 1;
    }
    return 0;
}

static void profile_end(struct http_exchange *x)
{
    profile_pause(); /* the profile sent is the one before this request */
    respond_produced_text(x, profile_produce);
}

static const struct http_handler profile_handler = { NULL, NULL, profile_end, NULL };
#endif

/* ---- / : the status page, and the DAV root for PROPFIND ------------------- */

/* RFC 6764 section 6: a client given only the server may take its root as the context path and
 * ask it for current-user-principal (RFC 5397), or search principals there (RFC 3744 section
 * 9.4). PROPFIND and REPORT / go to WebDAV, which answers for "/" as for its own root
 * (credentials asked, the principal named); every other method is the status page's. */
static const struct http_handler *root_target(const struct http_exchange *x)
{
    return x->req->method == HTTP_PROPFIND || x->req->method == HTTP_REPORT ? &dav_handler
                                                                            : &status_handler;
}

static int root_begin(struct http_exchange *x)
{
    const struct http_handler *h = root_target(x);
    return h->begin ? h->begin(x) : 0;
}

static int root_body(struct http_exchange *x, const uint8_t *data, size_t len)
{
    const struct http_handler *h = root_target(x);
    return h->body ? h->body(x, data, len) : HTTPD_BODY_OK;
}

static void root_end(struct http_exchange *x)
{
    const struct http_handler *h = root_target(x);
    if (h->end)
        h->end(x);
}

static void root_abort(struct http_exchange *x)
{
    const struct http_handler *h = root_target(x);
    if (h->abort)
        h->abort(x);
}

static const struct http_handler root_handler = { root_begin, root_body, root_end, root_abort };

/* ---- the table ------------------------------------------------------------ */

#define DAV_METHODS                                                                           \
    (READ_METHODS | HTTP_METHOD_BIT(HTTP_PUT) | HTTP_METHOD_BIT(HTTP_DELETE) |                \
     HTTP_METHOD_BIT(HTTP_PROPFIND) | HTTP_METHOD_BIT(HTTP_PROPPATCH) |                       \
     HTTP_METHOD_BIT(HTTP_MKCOL) | HTTP_METHOD_BIT(HTTP_MKCALENDAR) | HTTP_METHOD_BIT(HTTP_REPORT) | \
     HTTP_METHOD_BIT(HTTP_COPY) | HTTP_METHOD_BIT(HTTP_MOVE) |                                \
     HTTP_METHOD_BIT(HTTP_POST)) /* the scheduling outbox's (RFC 6638 section 5); 405 elsewhere */
/* RFC 4918 section 10.1, RFC 4791 section 5.1: compliance classes. LOCK is
 * not implemented (class 2 is not claimed): 501. */
#define DAV_OPTIONS "DAV: 1, 3, calendar-access\r\n"
/* Request bodies of /dav/: calendar objects and XML are far smaller. */
#define DAV_BODY_MAX (256u * 1024u)

static const struct http_route routes[] = {
    /* a discovery PROPFIND or a principal search is a few hundred bytes: the status page's small
     * body limit holds */
    { "/", READ_METHODS | HTTP_METHOD_BIT(HTTP_PROPFIND) | HTTP_METHOD_BIT(HTTP_REPORT),
      ROUTE_DISCARD_MAX, &root_handler, DAV_OPTIONS },
    { "/static/", READ_METHODS, ROUTE_DISCARD_MAX, &static_handler, NULL },
    { "/.well-known/caldav", READ_METHODS | HTTP_METHOD_BIT(HTTP_PROPFIND), ROUTE_DISCARD_MAX,
      &wellknown_handler, NULL },
    { "/dav", DAV_METHODS, DAV_BODY_MAX, &dav_handler, DAV_OPTIONS },
    { "/dav/", DAV_METHODS, DAV_BODY_MAX, &dav_handler, DAV_OPTIONS },
    { "/bulk", READ_METHODS | HTTP_METHOD_BIT(HTTP_PUT), APP_BULK_SIZE, &bulk_handler, NULL },
#ifdef LITEDAV_PROFILE
    { "/profile", READ_METHODS, ROUTE_DISCARD_MAX, &profile_handler, NULL },
#endif
};

const struct http_router app_router = { routes, sizeof(routes) / sizeof(routes[0]) };
