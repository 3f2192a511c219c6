#include "caldav/sync.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "caldav/caldav.h"

#define TOKEN_PREFIX "urn:litedav:sync:"

/* What the REPORT keeps in c->ext across the pieces of its response. */
struct sync_report {
    uint32_t sync_to;           /* the collection's sequence when the REPORT began */
    uint32_t limit, reported;   /* DAV:limit's nresults (0: none), and changes reported */
    uint32_t last_reported;     /* the sequence of the last change reported */
    bool truncated;             /* stopped at the limit */
    bool want_data;             /* CALDAV:calendar-data requested */
};
typedef char sync_report_fits[sizeof(struct sync_report) <= DAV_EXT_STATE ? 1 : -1];

static struct sync_report *sync_report_of(struct dav_ctx *c)
{
    return (struct sync_report *)c->ext.bytes;
}

void sync_token_format(uint32_t coll, uint32_t seq, char *out, size_t size)
{
    snprintf(out, size, TOKEN_PREFIX "%" PRIu32 ":%" PRIu32, coll, seq);
}

static int parse_u32(const char *s, size_t len, uint32_t *v)
{
    uint64_t acc = 0;
    size_t i;
    if (!len || len > 10)
        return -1;
    for (i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        acc = acc * 10 + (uint64_t)(s[i] - '0');
    }
    if (acc > UINT32_MAX)
        return -1;
    *v = (uint32_t)acc;
    return 0;
}

int sync_token_parse(const char *token, size_t len, uint32_t coll, uint32_t *seq)
{
    size_t plen = sizeof(TOKEN_PREFIX) - 1;
    const char *colon;
    uint32_t id;
    if (len <= plen || memcmp(token, TOKEN_PREFIX, plen) != 0)
        return -1;
    token += plen;
    len -= plen;
    colon = memchr(token, ':', len);
    if (!colon || parse_u32(token, (size_t)(colon - token), &id) || id != coll)
        return -1;
    return parse_u32(colon + 1, len - (size_t)(colon + 1 - token), seq);
}

static int stop_at_first(void *ctx, const struct store_entry *e)
{
    (void)ctx;
    (void)e;
    return 1;
}

enum { SYNC_OPEN, SYNC_CHANGES, SYNC_OBJECT, SYNC_TRUNCATED, SYNC_CLOSE };

/* RFC 6578 section 3.2: changed members as responses with their properties,
 * removed ones as 404 responses, then the new token. Changes come in sync
 * sequence order, so a truncated answer (section 3.6) ends with the token of
 * the last change it reports. Changes made while this response streams have
 * a higher sequence than sync_to and wait for the next sync. */
static int sync_render(struct dav_ctx *c)
{
    struct sync_report *report = sync_report_of(c);
    struct xml_writer w;
    char token[64];
    int rc;

    switch (c->phase) {
    case SYNC_OPEN:
        dav_multistatus_open(c);
        dav_enum_start(c, DAV_SRC_CHANGES);
        c->phase = SYNC_CHANGES;
        return 0;
    case SYNC_CHANGES:
        rc = dav_enum_next(c, c->target.coll);
        if (rc < 0)
            return -1;
        if (rc == 0 || c->member.sync_seq > report->sync_to) {
            c->phase = SYNC_CLOSE;
            return 0;
        }
        if (report->limit && report->reported == report->limit) {
            report->truncated = true;
            c->phase = SYNC_TRUNCATED;
            return 0;
        }
        report->reported++;
        report->last_reported = c->member.sync_seq;
        caldav_object_from_member(c);
        c->phase = SYNC_OBJECT;
        /* fall through */
    case SYNC_OBJECT:
        if (caldav_send_object_ref(c, report->want_data) || caldav_render_object(c, report->want_data))
            c->phase = SYNC_CHANGES;
        return 0;
    case SYNC_TRUNCATED:
        /* section 3.6: the request-URI with 507 and number-of-matches-within-limits */
        dav_writer(c, &w);
        xml_write_start(&w, "D", "response");
        dav_write_href(&w, c->target.path, c->target.path_len);
        dav_write_status(&w, 507);
        xml_write_start(&w, "D", "error");
        xml_write_start(&w, "D", "number-of-matches-within-limits");
        xml_write_end(&w);
        xml_write_end(&w);
        xml_write_end(&w);
        dav_writer_done(c, &w);
        c->phase = SYNC_CLOSE;
        return 0;
    default:
        sync_token_format(c->target.coll, report->truncated ? report->last_reported : report->sync_to,
                          token, sizeof(token));
        dav_writer(c, &w);
        xml_write_text_element(&w, "D", "sync-token", token, strlen(token));
        dav_writer_done(c, &w);
        dav_multistatus_close(c);
        c->done = true;
        return 0;
    }
}

static void sync_collection(struct dav_ctx *c)
{
    struct sync_report *report = sync_report_of(c);
    const struct xml_node *root = c->doc.root, *n;
    struct xml_str token = {"", 0};
    uint32_t from = 0;
    int rc;

    if (c->target.kind != DAV_RES_COLL || !c->target.exists) {
        dav_respond_status(c, c->target.exists ? 403 : 404, "sync-collection works on collections.");
        return;
    }
    /* section 3.2 wants Depth: 0, the level being in the body; clients that
     * send Depth: 1 (python caldav) are let through: the header adds nothing */
    if ((n = xml_child(root, XML_NS_DAV, "sync-level")) != NULL) {
        struct xml_str level = xml_text_trimmed(n);
        /* "infinite" is as "1": members of calendars are never collections */
        if (!xml_str_eq(level, "1") && !xml_str_eq(level, "infinite")) {
            dav_respond_status(c, 400, "sync-level is 1 or infinite.");
            return;
        }
    }
    if ((n = xml_child(root, XML_NS_DAV, "sync-token")) != NULL)
        token = xml_text_trimmed(n);
    if (token.len && sync_token_parse(token.ptr, token.len, c->target.coll, &from) != 0) {
        dav_respond_precondition(c, 403, "D", "valid-sync-token");
        return;
    }
    /* the store knows how far back its history goes (docs/store.md) */
    rc = store_changes_since(c->store, c->target.coll, from, stop_at_first, NULL);
    if (rc == STORE_ERR_SYNC_TOKEN) {
        dav_respond_precondition(c, 403, "D", "valid-sync-token");
        return;
    }
    if (rc != STORE_OK) {
        dav_respond_store_error(c, rc);
        return;
    }
    report->limit = 0;
    if ((n = xml_child(root, XML_NS_DAV, "limit")) != NULL) {
        const struct xml_node *nr = xml_child(n, XML_NS_DAV, "nresults");
        struct xml_str v = nr ? xml_text_trimmed(nr) : (struct xml_str){"", 0};
        uint32_t limit;
        if (!v.len) {
            dav_respond_status(c, 400, "limit needs nresults.");
            return;
        }
        if (parse_u32(v.ptr, v.len, &limit) != 0 || limit == 0) {
            dav_respond_status(c, 400, "nresults is a positive number.");
            return;
        }
        report->limit = limit;
    }
    c->mode = DAV_PROP;
    c->props = xml_child(root, XML_NS_DAV, "prop");
    report->want_data = dav_prop_requested(c, XML_NS_CALDAV, "calendar-data");
    c->sync_from = from;
    report->sync_to = c->target.info.sync_seq;
    report->reported = 0;
    report->truncated = false;
    c->phase = SYNC_OPEN;
    dav_respond_multistatus(c, sync_render);
}

/* Section 4: DAV:sync-token on every collection */
static bool p_sync_token(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    char token[64];
    (void)c;
    if (r->kind != DAV_RES_COLL)
        return false;
    if (w) {
        sync_token_format(r->coll, r->info.sync_seq, token, sizeof(token));
        xml_write_text_element(w, "D", "sync-token", token, strlen(token));
    }
    return true;
}

static const struct dav_prop props[] = {
    {XML_NS_DAV, "D", "sync-token", p_sync_token, 0, DAV_PROP_OF_CONTENT, NULL}, /* objects have none */
};

static const struct dav_report reports[] = {
    {XML_NS_DAV, "D", "sync-collection", sync_collection, NULL},
};

const struct dav_extension sync_extension = {
    props, 1, reports, 1, NULL, 0, NULL, NULL, NULL, NULL, 0, NULL, 0,
};
