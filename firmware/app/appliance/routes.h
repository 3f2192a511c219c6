/* The appliance's route table: which handler serves which methods on which
 * paths (the status page, embedded static files, .well-known, WebDAV/CalDAV
 * under /dav/, the /bulk benchmark endpoint). app_start() hands it to the
 * HTTP server. */
#ifndef LITEDAV_APPLIANCE_ROUTES_H
#define LITEDAV_APPLIANCE_ROUTES_H

#include "http/router.h"

extern const struct http_router app_router;

#endif
