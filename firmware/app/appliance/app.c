#include "appliance/app.h"

#include "net/syn_queue.h"
#include "net/tcp_time_wait.h"
#include "http/httpd.h"
#include "dav/dav.h"
#include "caldav/caldav.h"
#include "caldav/sync.h"
#include "appliance/routes.h"

/* What /dav/ serves besides WebDAV itself. Sync first: properties are listed
 * in the order registered, DAV:sync-token before CalDAV's. */
static const struct dav_extension *const dav_extensions[] = {&sync_extension, &caldav_extension,
                                                             &dav_principals_extension};

int app_start(uint16_t port)
{
    unsigned i;
    for (i = 0; i < sizeof(dav_extensions) / sizeof(dav_extensions[0]); i++)
        if (dav_register(dav_extensions[i]) != 0)
            return -1;
    return httpd_init(port, &app_router);
}

void app_poll(void)
{
    tcp_time_wait_trim();   /* first: the PCBs it frees are there for held SYNs */
    syn_queue_poll();
    httpd_poll();
    dav_poll();
}
