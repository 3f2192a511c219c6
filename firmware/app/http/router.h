/* Routing requests to handlers: a table of routes that the application hands
 * to httpd_init(). The HTTP server knows no route of its own.
 *
 * A route is an exact path, or a prefix when it ends in '/'. Methods outside
 * a route's set get 405 with an Allow field listing the set (RFC 9110
 * section 15.5.6); OPTIONS on a route that lists it is answered by the router
 * (section 9.3.7), as is "OPTIONS *" with every method the table serves. */
#ifndef LITEDAV_HTTP_ROUTER_H
#define LITEDAV_HTTP_ROUTER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "http/http_parse.h"
#include "http/httpd.h"

#define HTTP_METHOD_BIT(m) (1u << (m))

/* Body limit of routes that do not use the body (GET, OPTIONS...): small
 * ones are read and dropped, larger get 413. */
#define ROUTE_DISCARD_MAX 4096u

struct http_route {
    const char *path;                   /* exact, or a prefix ending in '/' */
    uint32_t methods;                   /* HTTP_METHOD_BIT() set */
    uint32_t body_max;                  /* 413 above it (at most HTTPD_BODY_MAX) */
    const struct http_handler *handler;
    const char *options_fields;         /* extra field lines of OPTIONS answers, or NULL */
};

struct http_router {
    const struct http_route *routes;
    size_t count;
};

/* Choose the handler for x->req; set x->route and x->allow. Never NULL:
 * requests no route takes get built-in handlers answering 404, 405, 501 or
 * OPTIONS. *body_max is the body limit that applies. */
const struct http_handler *http_route(const struct http_router *router, struct http_exchange *x,
                                      uint32_t *body_max);

/* The length of the request target's path: the target without its query. */
static inline size_t http_path_length(const struct http_request *req)
{
    const char *q = memchr(req->target, '?', req->target_len);
    return q ? (size_t)(q - req->target) : req->target_len;
}

/* Format "Allow: GET, HEAD\r\n" for a method set into out. Returns its
 * length, 0 if it does not fit. */
size_t http_allow_header(uint32_t methods, char *out, size_t size);

#endif
