#include "caldav/wellknown.h"

#include <stdio.h>
#include <string.h>

#include "http/auth.h"
#include "dav/dav.h"

/* RFC 6764 section 5: redirect to the context path. With credentials that is
 * the user's principal (their calendar home too); without, the DAV root,
 * where a PROPFIND for current-user-principal asks for them. */
static void wellknown_end(struct http_exchange *x)
{
    char user[AUTH_USER_MAX + 1], headers[160];
    struct store *store = dav_mounted_store();
    struct http_response resp;

    if (store && auth_check(store, x->req, user) == AUTH_OK)
        snprintf(headers, sizeof(headers), "Location: " DAV_ROOT_PATH "%s/\r\nVary: Authorization\r\n",
                 user);
    else
        snprintf(headers, sizeof(headers), "Location: " DAV_ROOT_PATH "\r\nVary: Authorization\r\n");
    memset(&resp, 0, sizeof(resp));
    resp.status = 301;
    resp.headers = headers;
    httpd_respond(x, &resp);
}

const struct http_handler wellknown_handler = {NULL, NULL, wellknown_end, NULL};
