/* Scheduling (RFC 6638) as far as a client's discovery and free-busy lookup
 * go: every home's scheduling inbox and outbox, and the outbox's answer to a
 * POSTed free-busy request (section 5). The principal's properties are in
 * caldav.c.
 *
 * The inbox and outbox are fixed collections (dav.h DAV_RES_FIXED), kept by
 * no store: the inbox stays empty, as this server delivers no scheduling
 * messages. It does no implicit scheduling (section 3), so the DAV header
 * does not claim calendar-auto-schedule.
 *
 * A calendar user address is a principal's URL, /dav/<user>/, absolute or
 * not (section 2.4.1: the users have no other address here). The busy time
 * of any local user is answered to any authenticated one: free-busy time
 * tells when, never what. */
#include "caldav/caldav_private.h"

#if CALDAV_SCHEDULING

#include <stdio.h>
#include <string.h>

const struct dav_coll_type caldav_mailboxes[2] = {
    {0, {"C", "schedule-inbox"}, NULL, NULL, NULL, {NULL, NULL}, {NULL, NULL}, NULL, CALDAV_INBOX},
    {0, {"C", "schedule-outbox"}, NULL, NULL, NULL, {NULL, NULL}, {NULL, NULL}, NULL, CALDAV_OUTBOX},
};

/* The local user the calendar user address a names, into user (AUTH_USER_MAX
 * + 1 bytes): false when it names none. */
static bool address_user(struct dav_ctx *c, struct ical_str a, char *user)
{
    const size_t root = sizeof(DAV_ROOT_PATH) - 1;
    char path[DAV_PATH_MAX + 1];
    uint8_t secret[AUTH_SALT_SIZE + 32];
    size_t n, len;
    if (dav_decode_path(a.ptr, a.len, path, sizeof(path), &n) || n <= root + 1 ||
        memcmp(path, DAV_ROOT_PATH, root) != 0 || path[n - 1] != '/' ||
        memchr(path + root, '/', n - root - 1) || n - root - 1 > AUTH_USER_MAX)
        return false;
    len = n - root - 1;
    memcpy(user, path + root, len);
    user[len] = '\0';
    return store_user_get(c->store, user, secret, sizeof(secret), &len) == STORE_OK;
}

/* The request's VFREEBUSY, parsed again into CalDAV's iCalendar arena
 * (reading the calendars parses their objects there): NULL if it is not. */
static const struct ical_component *request_of(struct dav_ctx *c, struct ical_object *obj)
{
    if (caldav_parse_itip(obj, c->body, c->body_len) != ICAL_OK || obj->kind != ICAL_VFREEBUSY)
        return NULL;
    return obj->master;
}

/* The attendee'th ATTENDEE of the request, or NULL. */
static const struct ical_prop *attendee_of(const struct ical_component *fb, unsigned attendee)
{
    const struct ical_prop *p = ical_find_prop(fb, "ATTENDEE");
    while (p && attendee--)
        p = ical_next_prop(p, "ATTENDEE");
    return p;
}

/* A walk of the store's collections for the calendar with the smallest id
 * after `after` among those whose store paths start with prefix. */
struct next_calendar {
    const char *prefix;     /* store path of the user's calendars: 'c' and the home's path */
    size_t len;
    uint32_t after, next;
};

static int offer_calendar(void *ctx, const struct store_collection *info)
{
    struct next_calendar *f = ctx;
    if (info->path_len > f->len && memcmp(info->path, f->prefix, f->len) == 0 && info->id > f->after &&
        (f->next == 0 || info->id < f->next))
        f->next = info->id;
    return 0;
}

/* The calendar of c->owner (at any depth below the home) read after the one
 * with id `after` (0: the first), in the order of their ids: its id, 0 when
 * there is none. */
static uint32_t next_calendar(struct dav_ctx *c, uint32_t after)
{
    char prefix[AUTH_USER_MAX + sizeof(DAV_ROOT_PATH) + 2];
    struct next_calendar f = {prefix, 0, after, 0};
    f.len = (size_t)snprintf(prefix, sizeof(prefix), "%c" DAV_ROOT_PATH "%s/", caldav_calendar.key, c->owner);
    return store_coll_list(c->store, offer_calendar, &f) == STORE_OK ? f.next : 0;
}

enum { S_OPEN, S_RECIPIENT, S_BUSY, S_CLOSE };

/* The VFREEBUSY REPLY's head (RFC 5546 section 3.3.3) for the attendee. */
static void reply_head(struct dav_ctx *c, const struct ical_component *fb, const struct ical_prop *attendee)
{
    static const char *const copied[] = {"UID", "ORGANIZER"};
    const struct ical_prop *p;
    unsigned i;
    caldav_freebusy_head(c, "METHOD:REPLY\r\n");
    for (i = 0; i < 2; i++) {
        p = ical_find_prop(fb, copied[i]);
        caldav_out_ical(c, copied[i]);
        caldav_out_ical(c, ":");
        dav_out_escaped(c, p->value.ptr, p->value.len);
        caldav_out_ical(c, "\r\n");
    }
    caldav_out_ical(c, "ATTENDEE:");
    dav_out_escaped(c, attendee->value.ptr, attendee->value.len);
    caldav_out_ical(c, "\r\n");
}

/* Section 5: a CALDAV:response per ATTENDEE (RFC 6638 section 10 for the
 * elements), a VFREEBUSY REPLY over every calendar of a local user, request
 * status 3.7 (RFC 5546 section 3.6) for an address that names none. */
static int outbox_render(struct dav_ctx *c)
{
    struct caldav_report *q = caldav_report_of(c);
    struct ical_object obj;
    const struct ical_component *fb;
    const struct ical_prop *attendee;
    struct xml_writer w;
    int rc;
    switch (c->phase) {
    case S_OPEN:
        dav_body_open(c, "C:schedule-response");
        c->phase = S_RECIPIENT;
        return 0;
    case S_RECIPIENT:
        fb = request_of(c, &obj);
        if (!fb || (attendee = attendee_of(fb, q->attendee)) == NULL) {
            c->phase = S_CLOSE;
            return 0;
        }
        dav_writer(c, &w);
        xml_write_start(&w, "C", "response");
        xml_write_start(&w, "C", "recipient");
        xml_write_start(&w, "D", "href");
        xml_write_text(&w, attendee->value.ptr, attendee->value.len);
        xml_write_end(&w);
        xml_write_end(&w);
        if (!address_user(c, attendee->value, c->owner)) {
            xml_write_text_element(&w, "C", "request-status", "3.7;Invalid calendar user", 25);
            xml_write_end(&w);
            dav_writer_done(c, &w);
            q->attendee++;
            return 0;
        }
        xml_write_text_element(&w, "C", "request-status", "2.0;Success", 11);
        xml_write_raw(&w, "<C:calendar-data>", 17);
        dav_writer_done(c, &w);
        reply_head(c, fb, attendee);
        q->calendar = 0;
        c->exhausted = true; /* no calendar being read yet: dav_enum_next gives none */
        c->batch_n = c->batch_i = 0;
        c->phase = S_BUSY;
        return 0;
    case S_BUSY:
        rc = dav_enum_next(c, q->calendar);
        if (rc < 0)
            return -1;
        if (rc > 0) {
            c->target.coll = q->calendar;
            caldav_busy_time(c, q->range_start, q->range_end);
            return 0;
        }
        if ((q->calendar = next_calendar(c, q->calendar)) != 0) {
            dav_enum_start(c, DAV_SRC_OBJECTS);
            return 0;
        }
        caldav_out_ical(c, "END:VFREEBUSY\r\nEND:VCALENDAR\r\n");
        dav_out_raw(c, "</C:calendar-data></C:response>\n");
        q->attendee++;
        c->phase = S_RECIPIENT;
        return 0;
    default:
        dav_out_raw(c, "</C:schedule-response>\n");
        c->done = true;
        return 0;
    }
}

/* Section 5: the request's checks (RFC 5546 section 3.3.2 for what a
 * VFREEBUSY REQUEST holds), then the streamed answer. */
void caldav_outbox_post(struct dav_ctx *c)
{
    struct caldav_report *q = caldav_report_of(c);
    struct ical_object obj;
    const struct ical_component *fb;
    const struct ical_prop *method, *start, *end, *organizer;
    struct ical_time ts, te;
    char organizer_user[AUTH_USER_MAX + 1];

    if (c->target.kind != DAV_RES_FIXED || c->target.type != &caldav_mailboxes[1]) {
        dav_respond_status(c, 405, "POST is for the scheduling outbox.");
        return;
    }
    if (caldav_put_begin(c))
        return; /* CALDAV:supported-calendar-data */
    if (caldav_parse_itip(&obj, c->body, c->body_len) != ICAL_OK) {
        dav_respond_precondition(c, 400, "C", "valid-calendar-data");
        return;
    }
    fb = obj.kind == ICAL_VFREEBUSY ? obj.master : NULL;
    method = ical_find_prop(obj.root, "METHOD");
    start = fb ? ical_find_prop(fb, "DTSTART") : NULL;
    end = fb ? ical_find_prop(fb, "DTEND") : NULL;
    organizer = fb ? ical_find_prop(fb, "ORGANIZER") : NULL;
    if (!method || !ical_str_eq_nocase(method->value, "REQUEST") || !start || !end || !organizer ||
        !ical_find_prop(fb, "ATTENDEE") || !ical_prop_time(start, &ts) || !ical_prop_time(end, &te) ||
        (q->range_start = ical_time_to_utc(&obj, &ts, 0)) >= (q->range_end = ical_time_to_utc(&obj, &te, 0))) {
        dav_respond_precondition(c, 400, "C", "valid-scheduling-message");
        return;
    }
    /* the organizer asks: the outbox's owner, who alone may POST to it */
    if (!address_user(c, organizer->value, organizer_user) || strcmp(organizer_user, c->user) != 0) {
        dav_respond_precondition(c, 403, "C", "organizer-allowed");
        return;
    }
    q->in_xml = true;
    c->phase = S_OPEN;
    dav_respond_stream(c, 200, "application/xml; charset=utf-8", outbox_render);
}

#endif
