#include "appliance/app.h"

#include "net/syn_queue.h"
#include "net/tcp_time_wait.h"
#include "http/httpd.h"
#include "dav/dav.h"
#include "appliance/routes.h"

int app_start(uint16_t port) { return httpd_init(port, &app_router); }

void app_poll(void)
{
    tcp_time_wait_trim();   /* first: the PCBs it frees are there for held SYNs */
    syn_queue_poll();
    httpd_poll();
    dav_poll();
}
