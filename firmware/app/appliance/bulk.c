/* /bulk: one RAM resource for throughput tests (bench/, tests/).
 *
 * PUT stores its body (any user's Basic credentials, RFC 7617) in the port's
 * bulk buffer, GET and HEAD return it. The GET body is sent without a copy:
 * lwIP references the buffer until the peer acknowledges it, and on the
 * offload NIC the DMA reads it from there. As with sendfile(2), a PUT that
 * lands while a GET of the same bytes is still in flight changes what that
 * GET sends; the buffer itself always stays valid. One PUT at a time (409
 * for a second one); a PUT that fails part-way leaves the resource empty.
 * It holds no calendar data and is not part of the store: it is lost at reset. */
#include "appliance/bulk.h"

#include <stdio.h>
#include <string.h>

#include "platform/app_config.h"
#include "http/auth.h"
#include "dav/dav.h"
#include "platform/port.h"

static uint8_t *bulk_data;   /* APP_BULK_SIZE bytes from the port, once asked for */
static uint32_t bulk_length; /* bytes of the last complete PUT */
static const struct http_exchange *bulk_writer;

static int bulk_ready(void)
{
    if (!bulk_data && APP_BULK_SIZE)
        bulk_data = port_bulk_buffer(APP_BULK_SIZE);
    return bulk_data != NULL;
}

static int bulk_begin(struct http_exchange *x)
{
    char user[AUTH_USER_MAX + 1];
    struct store *users;

    if (!bulk_ready())
        return 404;
    if (x->req->method != HTTP_PUT)
        return 0;
    if ((users = dav_mounted_store()) == NULL)
        return 503; /* the users live in the store */
    if (auth_check(users, x->req, user) != AUTH_OK) {
        httpd_respond_error(x, 401, NULL, AUTH_CHALLENGE);
        return 401;
    }
    if (bulk_writer) {
        httpd_respond_error(x, 409, "Another PUT of /bulk is in progress.", NULL);
        return 409;
    }
    bulk_writer = x;
    bulk_length = 0;
    return 0;
}

static int bulk_body(struct http_exchange *x, const uint8_t *data, size_t len)
{
    uint32_t offset = x->body_received - (uint32_t)len;
    if (x->req->method != HTTP_PUT)
        return HTTPD_BODY_OK; /* a GET's body has no meaning: dropped */
    if (bulk_writer != x || !bulk_data)
        return 500; /* only the PUT that begin() accepted writes */
    /* the route's body limit is the capacity; this guards the arithmetic */
    if (offset > APP_BULK_SIZE || len > APP_BULK_SIZE - offset)
        return 413;
    memcpy(bulk_data + offset, data, len);
    return HTTPD_BODY_OK;
}

static void bulk_end(struct http_exchange *x)
{
    struct http_response resp;
    char fields[48];

    memset(&resp, 0, sizeof(resp));
    if (x->req->method == HTTP_PUT) {
        bulk_length = x->body_received;
        bulk_writer = NULL;
        snprintf(fields, sizeof(fields), "X-Bulk-Length: %lu\r\n", (unsigned long)bulk_length);
        resp.status = 204;
        resp.headers = fields;
    } else {
        resp.status = 200;
        resp.content_type = "application/octet-stream";
        resp.body = bulk_data;
        resp.body_len = bulk_length;
    }
    httpd_respond(x, &resp);
}

static void bulk_abort(struct http_exchange *x)
{
    if (bulk_writer == x) {
        bulk_writer = NULL;
        bulk_length = 0;
    }
}

const struct http_handler bulk_handler = { bulk_begin, bulk_body, bulk_end, bulk_abort };
