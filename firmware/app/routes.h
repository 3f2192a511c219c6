/* Maps a parsed request to a response. Bodies are either static data (sent
 * without copying) or text rendered into the connection's scratch buffer. */
#ifndef LITEDAV_ROUTES_H
#define LITEDAV_ROUTES_H

#include <stddef.h>
#include <stdint.h>

#include "http_parse.h"

struct http_response {
    int status;
    const char *content_type;
    const char *allow;        /* Allow header value, for 405 */
    const uint8_t *body;      /* static body, or NULL when rendered */
    uint32_t body_len;
};

/* Fill resp for req. A rendered body goes into scratch and sets body to
 * scratch; it must fit scratch_size. */
void app_route(const struct http_request *req, struct http_response *resp,
               char *scratch, size_t scratch_size);

/* Render a short text body for an error status into scratch. */
void app_error(int status, struct http_response *resp, char *scratch, size_t scratch_size);

/* The status page: counters for humans and benchmark scripts, one
 * "name: value" per line. Returns the length written. */
size_t status_render(char *out, size_t size);

#endif
