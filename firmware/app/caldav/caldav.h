/* CalDAV (RFC 4791) on top of the WebDAV layer: calendar properties, MKCALENDAR,
 * validated calendar object PUTs and the calendar-multiget, calendar-query
 * and free-busy-query REPORTs. */
#ifndef LITEDAV_CALDAV_H
#define LITEDAV_CALDAV_H

#include <stdbool.h>
#include <stddef.h>

#include "dav/dav.h"

bool caldav_prop_calendar_home_set(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w);
bool caldav_prop_supported_components(struct dav_ctx *c, const struct dav_resource *r,
                                      struct xml_writer *w);
bool caldav_prop_supported_data(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w);
bool caldav_prop_max_resource_size(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w);

/* PUT into a calendar: the head's checks (0 or the status answered). */
int caldav_put_begin(struct dav_ctx *c);
/* The whole body's checks, RFC 4791 section 5.3.2.1 (0 or the status answered). */
int caldav_put_check(struct dav_ctx *c, const char *body, size_t len);

void caldav_mkcalendar(struct dav_ctx *c);
void caldav_report(struct dav_ctx *c);

#endif
