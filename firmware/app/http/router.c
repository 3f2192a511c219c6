#include "http/router.h"

#include <stdio.h>
#include <string.h>

static const char *const method_names[] = {
    [HTTP_GET] = "GET", [HTTP_HEAD] = "HEAD", [HTTP_POST] = "POST", [HTTP_PUT] = "PUT",
    [HTTP_DELETE] = "DELETE", [HTTP_OPTIONS] = "OPTIONS", [HTTP_PROPFIND] = "PROPFIND",
    [HTTP_PROPPATCH] = "PROPPATCH", [HTTP_MKCOL] = "MKCOL", [HTTP_MKCALENDAR] = "MKCALENDAR",
    [HTTP_REPORT] = "REPORT", [HTTP_COPY] = "COPY", [HTTP_MOVE] = "MOVE",
};

size_t http_allow_header(uint32_t methods, char *out, size_t size)
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

/* Every method some route serves, for "OPTIONS *" and targets no route takes. */
static uint32_t all_methods(const struct http_router *router)
{
    uint32_t m = 0;
    size_t i;
    for (i = 0; i < router->count; i++)
        m |= router->routes[i].methods;
    return m;
}

/* OPTIONS (RFC 9110 section 9.3.7): what the target (or, for "*", the
 * server) supports, no content. A request body has no meaning: dropped. */
static void options_end(struct http_exchange *x)
{
    char fields[256];
    struct http_response resp;
    size_t n;
    memset(&resp, 0, sizeof(resp));
    n = http_allow_header(x->allow, fields, sizeof(fields));
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
    http_allow_header(x->allow, allow, sizeof(allow));
    httpd_respond_error(x, status, NULL, allow);
    return status;
}

static const struct http_handler not_allowed_handler = { not_allowed_begin, NULL, NULL, NULL };

static int not_found_begin(struct http_exchange *x) { return 404; }

static const struct http_handler not_found_handler = { not_found_begin, NULL, NULL, NULL };

/* One pass over each route's path, no strlen or memcmp: routing runs for
 * every request, and a small GET's whole HTTP layer is a few hundred
 * instructions. */
static const struct http_route *route_find(const struct http_router *router, const char *path,
                                           size_t len)
{
    size_t i, n;
    for (i = 0; i < router->count; i++) {
        const char *p = router->routes[i].path;
        for (n = 0; p[n] && n < len && p[n] == path[n]; n++)
            ;
        /* the whole route matched: the whole path, or a prefix ending in '/' */
        if (!p[n] && (n == len || (n > 1 && p[n - 1] == '/')))
            return &router->routes[i];
    }
    return NULL;
}

const struct http_handler *http_route(const struct http_router *router, struct http_exchange *x,
                                      uint32_t *body_max)
{
    const struct http_request *req = x->req;
    uint32_t bit = HTTP_METHOD_BIT(req->method);

    x->route = NULL;
    *body_max = HTTPD_BODY_MAX; /* rejected requests: the drain rules apply */
    if (req->target_len == 1 && req->target[0] == '*') {
        x->allow = all_methods(router);
        /* asterisk-form is for OPTIONS only (RFC 9112 section 3.2.4) */
        if (req->method != HTTP_OPTIONS)
            return req->method == HTTP_METHOD_OTHER ? &not_allowed_handler : &not_found_handler;
        *body_max = ROUTE_DISCARD_MAX;
        return &options_handler;
    }
    x->route = route_find(router, req->target, http_path_length(req));
    if (!x->route) {
        x->allow = all_methods(router);
        return req->method == HTTP_METHOD_OTHER ? &not_allowed_handler : &not_found_handler;
    }
    x->allow = x->route->methods;
    if (req->method == HTTP_METHOD_OTHER || !(x->route->methods & bit))
        return &not_allowed_handler;
    *body_max = x->route->body_max;
    if (req->method == HTTP_OPTIONS)
        return &options_handler;
    return x->route->handler;
}
