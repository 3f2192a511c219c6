/* CalDAV (RFC 4791) on the WebDAV layer: what it registers there
 * (caldav_extension: calendar collections and their properties, validated
 * calendar object PUTs, MKCALENDAR, and the calendar-multiget,
 * calendar-query and free-busy-query REPORTs), and the member responses
 * that the sync-collection REPORT shares. */
#ifndef LITEDAV_CALDAV_H
#define LITEDAV_CALDAV_H

#include <stdbool.h>

#include "dav/dav.h"

/* For dav_register(), after sync_extension: its properties follow sync's. */
extern const struct dav_extension caldav_extension;

/* ---- member responses in a REPORT (RFC 4791 section 9.6) ----------------- */

/* c->obj, the member c->member of the target collection. */
void caldav_object_from_member(struct dav_ctx *c);
/* What a response gives of a calendar object's CALDAV:calendar-data
 * (section 9.6); false and true are NONE and WHOLE. */
enum caldav_data {
    CALDAV_DATA_NONE,           /* not requested */
    CALDAV_DATA_WHOLE,          /* the object as stored, streamed from the store */
    CALDAV_DATA_EXPAND,         /* CALDAV:expand (9.6.5), rendered anew */
    CALDAV_DATA_LIMIT,          /* CALDAV:limit-recurrence-set (9.6.6), rendered anew */
};
/* The DAV:response of c->obj, one piece per call (c->obj_phase zero to
 * start), with its calendar-data as `data` says (EXPAND and LIMIT: only in
 * calendar-query and calendar-multiget, whose range they take). Returns 1
 * once it is complete. */
int caldav_render_object(struct dav_ctx *c, int data);
/* c->obj's whole response by reference, kept rendered (dav_fragments.c):
 * true, or false when the request's responses are not kept or there is no
 * room now (then caldav_render_object renders it, the copying path). Only
 * NONE and WHOLE are ever kept. */
bool caldav_send_object_ref(struct dav_ctx *c, int data);
/* Before c->obj (in collection c->obj.coll, its name at name_off) is read
 * from the store: a response kept for it that is current (then its ETag is
 * in c->obj and caldav_send_object_ref sends it). */
bool caldav_find_kept_object(struct dav_ctx *c, size_t name_off);
/* A response kept for this request's properties whose path is href exactly,
 * and so its own decoding (no '%', '?' or '#'). */
bool caldav_find_kept_href(struct dav_ctx *c, struct xml_str href, struct dav_kept *k);

#endif
