#include "appliance/routes.h"

#include <stdio.h>
#include <string.h>

#include "platform/app_config.h"
#include "appliance/bulk.h"
#include "dav/dav.h"
#include "http/static_files.h"
#include "net/syn_queue.h"
#include "net/tcp_time_wait.h"
#include "caldav/wellknown.h"

#define READ_METHODS \
    (HTTP_METHOD_BIT(HTTP_GET) | HTTP_METHOD_BIT(HTTP_HEAD) | HTTP_METHOD_BIT(HTTP_OPTIONS))

/* ---- GET / : the status page -------------------------------------------- */

/* Streamed section by section in the chunked coding (RFC 9112 section 7.1):
 * its length is not known before it is rendered. x->state counts sections. */
static int status_produce(struct http_exchange *x, char *buf, size_t room, size_t *len)
{
    uintptr_t index = (uintptr_t)x->state;
    size_t n = status_section((unsigned)index, buf, room);

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

static size_t path_length(const struct http_request *req)
{
    /* the query string does not select the resource here */
    const char *q = memchr(req->target, '?', req->target_len);
    return q ? (size_t)(q - req->target) : req->target_len;
}

static int static_begin(struct http_exchange *x)
{
    const struct static_file *f = static_file_find(x->req->target, path_length(x->req));
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

/* ---- the table ------------------------------------------------------------ */

#define DAV_METHODS                                                                           \
    (READ_METHODS | HTTP_METHOD_BIT(HTTP_PUT) | HTTP_METHOD_BIT(HTTP_DELETE) |                \
     HTTP_METHOD_BIT(HTTP_PROPFIND) | HTTP_METHOD_BIT(HTTP_PROPPATCH) |                       \
     HTTP_METHOD_BIT(HTTP_MKCOL) | HTTP_METHOD_BIT(HTTP_MKCALENDAR) | HTTP_METHOD_BIT(HTTP_REPORT))
/* RFC 4918 section 10.1, RFC 4791 section 5.1: compliance classes. COPY,
 * MOVE and LOCK are not implemented (class 2 is not claimed): 501. */
#define DAV_OPTIONS "DAV: 1, 3, calendar-access\r\n"
/* Request bodies of /dav/: calendar objects and XML are far smaller. */
#define DAV_BODY_MAX (256u * 1024u)

static const struct http_route routes[] = {
    { "/", READ_METHODS, ROUTE_DISCARD_MAX, &status_handler, NULL },
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

void app_poll(void)
{
    tcp_time_wait_trim();   /* first: the PCBs it frees are there for held SYNs */
    syn_queue_poll();
    httpd_poll();
    dav_poll();
}

#define ROUTES_COUNT (sizeof(routes) / sizeof(routes[0]))

/* Every method some route serves, for "OPTIONS *". */
static uint32_t all_methods(void)
{
    uint32_t m = 0;
    size_t i;
    for (i = 0; i < ROUTES_COUNT; i++)
        m |= routes[i].methods;
    return m;
}

static const char *const method_names[] = {
    [HTTP_GET] = "GET", [HTTP_HEAD] = "HEAD", [HTTP_POST] = "POST", [HTTP_PUT] = "PUT",
    [HTTP_DELETE] = "DELETE", [HTTP_OPTIONS] = "OPTIONS", [HTTP_PROPFIND] = "PROPFIND",
    [HTTP_PROPPATCH] = "PROPPATCH", [HTTP_MKCOL] = "MKCOL", [HTTP_MKCALENDAR] = "MKCALENDAR",
    [HTTP_REPORT] = "REPORT",
};

size_t route_allow_header(uint32_t methods, char *out, size_t size)
{
    size_t n = 0, i;
    int w = snprintf(out, size, "Allow:");
    if (w < 0 || (size_t)w >= size)
        return 0;
    n = (size_t)w;
    for (i = 0; i < sizeof(method_names) / sizeof(method_names[0]); i++) {
        if (!(methods & HTTP_METHOD_BIT(i)))
            continue;
        w = snprintf(out + n, size - n, "%s %s", n > 6 ? "," : "", method_names[i]);
        if (w < 0 || (size_t)w >= size - n)
            return 0;
        n += (size_t)w;
    }
    w = snprintf(out + n, size - n, "\r\n");
    if (w < 0 || (size_t)w >= size - n)
        return 0;
    return n + (size_t)w;
}

static uint32_t route_methods(const struct http_exchange *x)
{
    return x->route ? x->route->methods : all_methods();
}

/* OPTIONS (RFC 9110 section 9.3.7): what the target (or, for "*", the
 * server) supports, no content. A request body has no meaning: dropped. */
static void options_end(struct http_exchange *x)
{
    char fields[256];
    struct http_response resp;
    size_t n;
    memset(&resp, 0, sizeof(resp));
    n = route_allow_header(route_methods(x), fields, sizeof(fields));
    if (x->route && x->route->options_fields)
        snprintf(fields + n, sizeof(fields) - n, "%s", x->route->options_fields);
    resp.status = 200;
    resp.headers = fields;
    httpd_respond(x, &resp);
}

static const struct http_handler options_handler = { NULL, NULL, options_end, NULL };

/* 405 with the route's methods in Allow (RFC 9110 section 15.5.6); 501 for a
 * method the server does not know at all (section 15.6.2). */
static int not_allowed_begin(struct http_exchange *x)
{
    char allow[256];
    int status = x->req->method == HTTP_METHOD_OTHER ? 501 : 405;
    route_allow_header(route_methods(x), allow, sizeof(allow));
    httpd_respond_error(x, status, NULL, allow);
    return status;
}

static const struct http_handler not_allowed_handler = { not_allowed_begin, NULL, NULL, NULL };

static int not_found_begin(struct http_exchange *x) { return 404; }

static const struct http_handler not_found_handler = { not_found_begin, NULL, NULL, NULL };

static const struct http_route *route_find(const char *path, size_t len)
{
    size_t i;
    for (i = 0; i < ROUTES_COUNT; i++) {
        const char *p = routes[i].path;
        size_t n = strlen(p);
        int prefix = n > 1 && p[n - 1] == '/';
        if (prefix ? (len >= n && memcmp(path, p, n) == 0)
                   : (len == n && memcmp(path, p, n) == 0))
            return &routes[i];
    }
    return NULL;
}

const struct http_handler *app_dispatch(struct http_exchange *x, uint32_t *body_max)
{
    const struct http_request *req = x->req;
    uint32_t bit = HTTP_METHOD_BIT(req->method);

    x->route = NULL;
    *body_max = HTTPD_BODY_MAX; /* rejected requests: the drain rules apply */
    if (req->target_len == 1 && req->target[0] == '*') {
        /* asterisk-form is for OPTIONS only (RFC 9112 section 3.2.4) */
        if (req->method != HTTP_OPTIONS)
            return req->method == HTTP_METHOD_OTHER ? &not_allowed_handler : &not_found_handler;
        *body_max = ROUTE_DISCARD_MAX;
        return &options_handler;
    }
    x->route = route_find(req->target, path_length(req));
    if (!x->route)
        return req->method == HTTP_METHOD_OTHER ? &not_allowed_handler : &not_found_handler;
    if (req->method == HTTP_METHOD_OTHER || !(x->route->methods & bit))
        return &not_allowed_handler;
    *body_max = x->route->body_max;
    if (req->method == HTTP_OPTIONS)
        return &options_handler;
    return x->route->handler;
}
