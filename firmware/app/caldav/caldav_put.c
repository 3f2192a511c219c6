/* PUT of calendar object resources (RFC 4791 section 5.3.2): the
 * preconditions of section 5.3.2.1 checked on the head and on the whole body. */
#include "caldav/caldav_private.h"

#include <string.h>

int caldav_put_begin(struct dav_ctx *c)
{
    size_t len;
    const char *type = http_header(c->x->req, "Content-Type", &len);
    /* section 5.3.2.1 CALDAV:supported-calendar-data */
    if (type && !(len >= 13 && http_token_equals(type, 13, "text/calendar"))) {
        dav_respond_precondition(c, 403, "C", "supported-calendar-data");
        return 403;
    }
    return 0;
}

/* XML 1.0 characters in UTF-8: what calendar-data can carry in a REPORT. */
static bool xml_safe_utf8(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char ch = s[i];
        size_t extra, k;
        if (ch < 0x80) {
            if (ch < 0x20 && ch != '\t' && ch != '\r' && ch != '\n')
                return false;
            i++;
            continue;
        }
        if (ch >= 0xC2 && ch <= 0xDF)
            extra = 1;
        else if (ch >= 0xE0 && ch <= 0xEF)
            extra = 2;
        else if (ch >= 0xF0 && ch <= 0xF4)
            extra = 3;
        else
            return false;
        if (i + extra >= n + 0 && i + extra > n - 1)
            return false;
        for (k = 1; k <= extra; k++)
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
        i += extra + 1;
    }
    return true;
}

/* The value of the first UID line of a stored object, unfolded into out. */
static size_t find_uid(const char *obj, size_t len, char *out, size_t cap)
{
    size_t i, n = 0;
    for (i = 0; i + 4 < len; i++) {
        if ((i == 0 || obj[i - 1] == '\n') && memcmp(obj + i, "UID", 3) == 0 &&
            (obj[i + 3] == ':' || obj[i + 3] == ';')) {
            const char *colon = memchr(obj + i, ':', len - i);
            if (!colon)
                return 0;
            for (i = (size_t)(colon - obj) + 1; i < len && n < cap; i++) {
                if (obj[i] == '\r')
                    continue;
                if (obj[i] == '\n') {
                    /* RFC 5545 section 3.1: a folded line goes on after CRLF + space */
                    if (i + 1 < len && (obj[i + 1] == ' ' || obj[i + 1] == '\t')) {
                        i++;
                        continue;
                    }
                    break;
                }
                out[n++] = obj[i];
            }
            return n;
        }
    }
    return 0;
}

/* no-uid-conflict (section 5.3.2.1): no other resource of the collection has
 * this UID. The store keeps a digest of each object's UID in RAM once it is
 * known (store_tag_next): only objects whose digest matches, or is not known
 * yet (after a put or a remount), are read and their UID line compared;
 * those read teach the store their digest. So a PUT reads about one object
 * (the one put before it), not all of them. */
static bool uid_conflict(struct dav_ctx *c, const char *uid, size_t uid_len)
{
    char other[256], name[STORE_NAME_MAX + 1];
    uint32_t pos = STORE_TAG_START;
    size_t name_len;
    int known;
    while (store_tag_next(c->store, c->target.coll, store_name_hash(uid, uid_len), &pos, name,
                          sizeof(name), &name_len, &known) == 1) {
        const char *text;
        long len;
        size_t other_len;
        if (name_len == c->name_len && memcmp(name, c->path + c->name_off, c->name_len) == 0)
            continue;
        len = dav_read_object(c, c->target.coll, name, name_len, &text);
        if (len <= 0)
            continue;
        other_len = find_uid(text, (size_t)len, other, sizeof(other));
        if (!known)
            store_tag_set(c->store, c->target.coll, name, name_len, store_name_hash(other, other_len));
        if (other_len == uid_len && memcmp(other, uid, uid_len) == 0)
            return true;
    }
    return false;
}

int caldav_put_check(struct dav_ctx *c, const char *body, size_t len)
{
    struct ical_object obj;
    char uid[256];
    size_t uid_len;

    /* section 5.3.2.1 CALDAV:valid-calendar-data */
    if (!xml_safe_utf8((const unsigned char *)body, len) ||
        caldav_parse(&obj, body, len) != ICAL_OK) {
        dav_respond_precondition(c, 403, "C", "valid-calendar-data");
        return 403;
    }
    /* CALDAV:supported-calendar-component: of this server, and of this
     * calendar's supported-calendar-component-set (section 5.2.3) */
    if (!(caldav_component_bit(obj.kind) & caldav_components(c, c->target.coll))) {
        dav_respond_precondition(c, 403, "C", "supported-calendar-component");
        return 403;
    }
    uid_len = obj.uid.len < sizeof(uid) ? obj.uid.len : sizeof(uid);
    memcpy(uid, obj.uid.ptr, uid_len);
    if (uid_conflict(c, uid, uid_len)) {
        dav_respond_precondition(c, 403, "C", "no-uid-conflict");
        return 403;
    }
    return 0;
}
