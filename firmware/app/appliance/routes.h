/* The route table: which handler serves which methods on which paths.
 *
 * A route is an exact path, or a prefix when it ends in '/'. Methods outside
 * a route's set get 405 with an Allow field listing the set (RFC 9110
 * section 15.5.6); OPTIONS on a route that lists it is answered by the router
 * (section 9.3.7), as is "OPTIONS *" with every method the server knows. */
#ifndef LITEDAV_ROUTES_H
#define LITEDAV_ROUTES_H

#include <stddef.h>
#include <stdint.h>

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

/* Main-loop hook of the application (ports call it every turn). */
void app_poll(void);

/* Choose the handler for x->req and set x->route. Never NULL: requests no
 * route takes get built-in handlers answering 404, 405, 501 or OPTIONS.
 * *body_max is the body limit that applies. */
const struct http_handler *app_dispatch(struct http_exchange *x, uint32_t *body_max);

/* Format "Allow: GET, HEAD\r\n" for a method set into out. Returns its length. */
size_t route_allow_header(uint32_t methods, char *out, size_t size);

/* The status page: counters for humans and benchmark scripts, one
 * "name: value" per line, rendered one section at a time. Writes section
 * `index` to out and returns its length; STATUS_END after the last one,
 * STATUS_TOO_SMALL if it does not fit size. */
#define STATUS_END ((size_t)-1)
#define STATUS_TOO_SMALL ((size_t)-2)
size_t status_section(unsigned index, char *out, size_t size);

#endif
