#include "caldav/sync.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOKEN_PREFIX "urn:litedav:sync:"

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
        if (rc == 0 || c->member.sync_seq > c->sync_to) {
            c->phase = SYNC_CLOSE;
            return 0;
        }
        if (c->limit && c->reported == c->limit) {
            c->truncated = true;
            c->phase = SYNC_TRUNCATED;
            return 0;
        }
        c->reported++;
        c->sync_from_reported = c->member.sync_seq;
        dav_object_resource(c, &c->member, c->obj_path, &c->obj);
        c->obj_name_off = c->target.path_len;
        c->obj_phase = 0;
        c->phase = SYNC_OBJECT;
        /* fall through */
    case SYNC_OBJECT:
        if (dav_render_object(c))
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
        sync_token_format(c->target.coll, c->truncated ? c->sync_from_reported : c->sync_to, token,
                          sizeof(token));
        dav_writer(c, &w);
        xml_write_text_element(&w, "D", "sync-token", token, strlen(token));
        dav_writer_done(c, &w);
        dav_multistatus_close(c);
        c->done = true;
        return 0;
    }
}

void sync_report(struct dav_ctx *c)
{
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
    rc = store_changes_since(&dav_store, c->target.coll, from, stop_at_first, NULL);
    if (rc == STORE_ERR_SYNC_TOKEN) {
        dav_respond_precondition(c, 403, "D", "valid-sync-token");
        return;
    }
    if (rc != STORE_OK) {
        dav_respond_status(c, dav_store_http_status(rc), store_strerror(rc));
        return;
    }
    c->limit = 0;
    if ((n = xml_child(root, XML_NS_DAV, "limit")) != NULL) {
        const struct xml_node *nr = xml_child(n, XML_NS_DAV, "nresults");
        struct xml_str v = nr ? xml_text_trimmed(nr) : (struct xml_str){"", 0};
        char digits[12];
        char *end;
        unsigned long limit;
        if (!v.len || v.len >= sizeof(digits)) {
            dav_respond_status(c, 400, "limit needs nresults.");
            return;
        }
        memcpy(digits, v.ptr, v.len);
        digits[v.len] = '\0';
        limit = strtoul(digits, &end, 10);
        if (*end || limit == 0) {
            dav_respond_status(c, 400, "nresults is a positive number.");
            return;
        }
        c->limit = (uint32_t)limit;
    }
    c->mode = DAV_PROP;
    c->props = xml_child(root, XML_NS_DAV, "prop");
    c->want_data = dav_prop_requested(c, XML_NS_CALDAV, "calendar-data");
    c->sync_from = from;
    c->sync_to = c->target.info.sync_seq;
    c->reported = 0;
    c->truncated = false;
    c->phase = SYNC_OPEN;
    dav_respond_multistatus(c, sync_render);
}
