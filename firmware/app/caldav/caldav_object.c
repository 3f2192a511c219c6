/* Calendar object resources: CalDAV's iCalendar arena, members read and
 * parsed, and a member's response in a REPORT with its calendar-data. */
#include "caldav/caldav_private.h"

#include <string.h>

/* One parsed object at a time, inside one callback (validation, filters). */
static unsigned char ical_arena[CALDAV_ICAL_ARENA] LITEDAV_NOINIT;

enum ical_status caldav_parse(struct ical_object *obj, const char *text, size_t len)
{
    return ical_parse(obj, text, len, ical_arena, sizeof(ical_arena), NULL, NULL);
}

enum ical_status caldav_parse_itip(struct ical_object *obj, const char *text, size_t len)
{
    static const struct ical_limits itip = {.itip = true};
    return ical_parse(obj, text, len, ical_arena, sizeof(ical_arena), &itip, NULL);
}

bool caldav_read_member(struct dav_ctx *c, struct ical_object *obj)
{
    const char *text;
    long len = dav_read_object(c, c->target.coll, c->member.name, c->member.len, &text);
    return len > 0 && caldav_parse(obj, text, (size_t)len) == ICAL_OK;
}

void caldav_object_from_member(struct dav_ctx *c)
{
    dav_object_resource(c, &c->member, c->obj_path, &c->obj);
    c->obj_name_off = c->target.path_len;
    c->obj_phase = 0;
}

/* CALDAV:calendar-data, as a name: caldav_render_object writes it after the
 * other properties. */
static const struct dav_prop caldav_calendar_data = {XML_NS_CALDAV, "C", "calendar-data", NULL, 0,
                                                      DAV_PROP_OF_CONTENT, NULL};

/* Of its own (not inlined: external) so that its buffer is not on the
 * stack under caldav_render_data's expander, which caldav_render_object
 * calls too. */
bool caldav_stream_data(struct dav_ctx *c)
{
    const struct dav_resource *r = &c->obj;
    char buf[1024];
    uint32_t got = 0;
    struct store_object_info info;
    if (store_get_object(c->store, r->coll, r->path + c->obj_name_off, r->path_len - c->obj_name_off,
                         c->offset, buf, sizeof(buf), &got, &info) != STORE_OK || got == 0 ||
        info.etag != r->obj.etag) {
        /* gone or replaced meanwhile: what was sent stands, the rest is cut */
        c->obj_cut = true;
        dav_out_raw(c, "</C:calendar-data>");
        c->obj_phase = 2;
        return false;
    }
    c->offset += dav_out_escaped(c, buf, got); /* the rest, if any, in the next piece */
    if (c->offset >= info.size) {
        dav_out_raw(c, "</C:calendar-data>");
        c->obj_phase = 2;
    }
    return true;
}

/* Section 9.6: calendar-data is streamed from the store in pieces, so an
 * object needs no buffer of its own size here. An object whose escaped data
 * and closing tags fit in what is left of c->out is written whole in one
 * call: no other request runs between its ETag and its data, so a PUT or a
 * DELETE cannot cut it (only a larger object, streamed over several calls,
 * can be: what was sent of it stands and the rest is left out). */
int caldav_render_object(struct dav_ctx *c, int data)
{
    bool with_data = data != CALDAV_DATA_NONE;
    struct xml_writer w;
    const struct dav_resource *r = &c->obj;
    bool whole = false;

    for (;;) {
        switch (c->obj_phase) {
        case 0:
            dav_writer(c, &w);
            xml_write_start(&w, "D", "response");
            dav_write_href(&w, r->path, r->path_len);
            if (!r->exists) {
                dav_write_status(&w, 404);
                xml_write_end(&w);
                dav_writer_done(c, &w);
                return 1;
            }
            dav_write_propstats(c, &w, r, &caldav_calendar_data);
            dav_writer_done(c, &w);
            c->offset = 0;
            c->obj_phase = 2;
            if (with_data && r->type == &caldav_calendar) {
                dav_out_raw(c, "<C:calendar-data>");
                c->obj_phase = data == CALDAV_DATA_WHOLE ? 1 : 3;
                if (c->obj_phase == 3)
                    continue;
            }
            /* escaping makes a byte at most 5 ("&#13;"); the closing tags take the rest */
            whole = (size_t)r->obj.size * 5u + 1024u <= c->out_cap - c->out_len;
            if (!whole)
                return 0;
            continue;
        case 1:
            if (!caldav_stream_data(c) || !whole)
                return 0;
            continue;
        case 3:
            /* re-rendered (caldav_expand.c): the tail in a piece of its own */
            if (caldav_render_data(c, data))
                c->obj_phase = 2;
            return 0;
        default:
            dav_writer(c, &w);
            dav_write_propstats_tail(c, &w, r, &caldav_calendar_data);
            xml_write_raw(&w, "</D:response>", 13);
            dav_writer_done(c, &w);
            c->obj_phase = 0;
            return 1;
        }
    }
}

static int render_with_data(struct dav_ctx *c) { return caldav_render_object(c, true); }
static int render_without_data(struct dav_ctx *c) { return caldav_render_object(c, false); }

bool caldav_send_object_ref(struct dav_ctx *c, int data)
{
    bool with_data = data == CALDAV_DATA_WHOLE;
    /* An expanded or limited calendar-data depends on the request's range:
     * never kept, nor answered from what was kept. The variant of such a
     * request is 0 already (calendar-data with children), this says it here. */
    if (c->obj_phase != 0 || data > CALDAV_DATA_WHOLE || !dav_fragments_enabled())
        return false;
    return dav_send_object_fragment(c, with_data ? render_with_data : render_without_data,
                                    dav_request_variant(c, &caldav_calendar_data));
}

bool caldav_find_kept_object(struct dav_ctx *c, size_t name_off)
{
    return dav_fragments_enabled() &&
           dav_find_current_kept(c, c->obj.coll, name_off, dav_request_variant(c, &caldav_calendar_data));
}

bool caldav_find_kept_href(struct dav_ctx *c, struct xml_str href, struct dav_kept *k)
{
    uint32_t variant;
    if (!dav_fragments_enabled() || href.len >= sizeof(c->obj_path) ||
        !(variant = dav_request_variant(c, &caldav_calendar_data)))
        return false;
    return dav_fragment_find(variant, href.ptr, href.len, k) && k->plain;
}
