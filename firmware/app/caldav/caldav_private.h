/* What the files of CalDAV share among themselves. caldav/caldav.h is its
 * interface for the layers above. */
#ifndef LITEDAV_CALDAV_PRIVATE_H
#define LITEDAV_CALDAV_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "caldav/caldav.h"
#include "caldav/ical.h"

/* Calendar collections (caldav.c). */
extern const struct dav_coll_type caldav_calendar;

/* What a CalDAV REPORT keeps in c->ext across the pieces of its response. */
struct caldav_report {
    uint8_t data;                       /* enum caldav_data: CALDAV:calendar-data requested, how */
    bool in_xml;                        /* free-busy lines go inside XML, escaped */
    const struct xml_node *filter;      /* calendar-query: its CALDAV:filter */
    const struct xml_node *next_href;   /* calendar-multiget: the next DAV:href */
    int64_t range_start, range_end;     /* free-busy-query, the outbox's free-busy request;
                                           calendar-data's expand or limit-recurrence-set */
    uint32_t calendar;                  /* the outbox's request: the calendar being read */
    uint16_t attendee;                  /* the outbox's request: the ATTENDEE answered now */
};
typedef char caldav_report_fits[sizeof(struct caldav_report) <= DAV_EXT_STATE ? 1 : -1];

static inline struct caldav_report *caldav_report_of(struct dav_ctx *c)
{
    return (struct caldav_report *)c->ext.bytes;
}

/* The phases of a streamed REPORT response (c->phase). */
enum { R_OPEN, R_NEXT, R_OBJECT, R_CLOSE };

/* ---- caldav_put.c (section 5.3.2) ---------------------------------------- */

/* The request head's checks (0 or the status answered). */
int caldav_put_begin(struct dav_ctx *c);
/* The whole body's checks, section 5.3.2.1 (0 or the status answered). */
int caldav_put_check(struct dav_ctx *c, const char *body, size_t len);
/* Section 5.2.3: the component kinds calendar coll takes (bits of
 * caldav_component_bit), and the bit of a kind (0: none a calendar takes). */
unsigned caldav_components(struct dav_ctx *c, uint32_t coll);
unsigned caldav_component_bit(enum ical_kind kind);

/* ---- caldav_object.c: calendar objects ------------------------------------ */

/* Parse text into obj in CalDAV's iCalendar arena (valid until the next
 * parse, inside one callback). */
enum ical_status caldav_parse(struct ical_object *obj, const char *text, size_t len);
/* The same for a scheduling message (RFC 5546), which has a METHOD. */
enum ical_status caldav_parse_itip(struct ical_object *obj, const char *text, size_t len);
/* Read the member c->member of the target collection whole and parse it:
 * true when it is a valid calendar object. */
bool caldav_read_member(struct dav_ctx *c, struct ical_object *obj);

/* The next piece of c->obj's calendar-data as stored (caldav_render_object's
 * phase 1): false when it was cut (the object is gone or replaced). */
bool caldav_stream_data(struct dav_ctx *c);

/* ---- caldav_expand.c (sections 9.6.5, 9.6.6) ------------------------------- */

/* The request's CALDAV:calendar-data (in c->props): its enum caldav_data,
 * with the range of an expand or limit-recurrence-set in the report's state;
 * -1 when that element's start or end is missing or not a UTC time. */
int caldav_data_request(struct dav_ctx *c);
/* The next piece of c->obj's calendar-data as `data` (EXPAND or LIMIT) says,
 * after "<C:calendar-data>": true once its end tag is written. */
bool caldav_render_data(struct dav_ctx *c, int data);

/* ---- caldav_report.c, caldav_freebusy.c (section 7) -------------------------- */

/* What every calendar REPORT checks and sets up first: true, or false once it
 * has answered. */
bool caldav_report_begin(struct dav_ctx *c);
void caldav_multiget(struct dav_ctx *c);
void caldav_query(struct dav_ctx *c);
void caldav_freebusy(struct dav_ctx *c);
/* Free-busy text into c->out: raw, or escaped when in_xml. */
void caldav_out_ical(struct dav_ctx *c, const char *s);
/* The VCALENDAR and VFREEBUSY head of the range (method: "" or a METHOD
 * line), into c->out as caldav_out_ical writes. */
void caldav_freebusy_head(struct dav_ctx *c, const char *method);
/* FREEBUSY lines of the busy time inside [s, e) of c->member of the
 * collection c->target.coll (section 7.10). */
void caldav_busy_time(struct dav_ctx *c, int64_t s, int64_t e);

/* ---- caldav_sched.c: RFC 6638 ------------------------------------------------ */

/* The scheduling inbox and outbox (sections 2.1, 2.2), every home's. */
extern const struct dav_coll_type caldav_mailboxes[2];
#define CALDAV_INBOX "inbox"
#define CALDAV_OUTBOX "outbox"
/* POST of a free-busy request to the outbox (section 5). */
void caldav_outbox_post(struct dav_ctx *c);

/* ---- caldav_filter.c (section 9.7) ----------------------------------------- */

/* A CALDAV:time-range's start and end attributes (section 9.9: at least one;
 * a missing one is INT64_MIN or INT64_MAX). false if neither is there, one
 * does not parse, or start is not before end. */
bool caldav_time_range_bounds(const struct xml_node *tr, int64_t *start, int64_t *end);
/* What evaluating the filter relies on: NULL, or the name of the CALDAV
 * precondition it fails (valid-filter, supported-collation). */
const char *caldav_filter_check(const struct xml_node *filter);
/* Does the object match the CALDAV:filter? */
bool caldav_filter_matches(const struct ical_object *obj, const struct xml_node *filter);

#endif
