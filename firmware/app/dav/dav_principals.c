/* WebDAV ACL (RFC 3744) principal search: DAV:principal-collection-set
 * (section 5.8) and the principal-search-property-set (section 9.5) and
 * principal-property-search (section 9.4) REPORTs, registered on /dav/ like
 * a layer above's (dav_principals_extension).
 *
 * The principals are the homes, /dav/<user>/, members of /dav/. A user sees
 * their own tree only (dav_paths.c answers 403 for another's), and no one is
 * granted anything on another's (no ACL method, no sharing): a search finds
 * the user's own principal or nothing, so it tells no one which other
 * accounts exist. */
#include "dav/dav_private.h"

#include <stdio.h>
#include <string.h>

/* RFC 3744 section 5.8: of every resource */
static bool p_principal_collection_set(struct dav_ctx *c, const struct dav_resource *r,
                                       struct xml_writer *w)
{
    if (w) {
        xml_write_start(w, "D", "principal-collection-set");
        dav_write_href(w, DAV_ROOT_PATH, sizeof(DAV_ROOT_PATH) - 1);
        xml_write_end(w);
    }
    return true;
}

/* Section 9.5: is n among the properties the extensions let a search match? */
static bool searchable(const struct xml_node *n)
{
    const struct dav_extension *ext;
    unsigned e, i;
    for (e = 0; (ext = dav_extensions[e]) != NULL; e++)
        for (i = 0; i < ext->n_searchable; i++)
            if (xml_is(n, ext->searchable[i].ns, ext->searchable[i].name))
                return true;
    return false;
}

static char fold_case(char ch) { return ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch; }

/* Does s[0..n) contain needle, ASCII letters folded (an empty one: yes)? */
static bool contains_caseless(const char *s, size_t n, struct xml_str needle)
{
    size_t i, k;
    for (i = 0; i + needle.len <= n; i++) {
        for (k = 0; k < needle.len && fold_case(s[i + k]) == fold_case(needle.ptr[k]); k++)
            ;
        if (k == needle.len)
            return true;
    }
    return false;
}

/* Section 9.4: does r's value of property n contain the match string? Its
 * value as a response carries it, each element tag a NUL (no match spans
 * two values); matched caselessly, which the section leaves to the server.
 * The searchable values (a user name, hrefs) need no character references. */
static bool value_matches(struct dav_ctx *c, const struct dav_resource *r, const struct xml_node *n,
                          struct xml_str needle)
{
    size_t cap, i, o = 0;
    char *buf = dav_work_buffer(&cap);
    struct xml_writer w;
    xml_writer_init(&w, buf, cap);
    if (!dav_prop_get_named(c, r, n, &w) || w.status != XMLW_OK)
        return false;
    for (i = 0; i < w.len; i++) {
        if (buf[i] == '<') {
            while (i < w.len && buf[i] != '>')
                i++;
            buf[o++] = '\0';
        } else {
            buf[o++] = buf[i];
        }
    }
    return contains_caseless(buf, o, needle);
}

static const char depth_zero[] = "This REPORT takes Depth: 0.";

/* Section 9.4. The search covers the principal collections with
 * DAV:apply-to-principal-collection-set, else the Request-URI and its
 * members: the user's principal is among them from /dav/, the server's
 * root or the home itself. Every property-search must match, or one with
 * test="anyof"; none lists every principal. Without a DAV:prop, the
 * principal's allprop properties are returned (RFC 4918 section 9.1). */
static void principal_property_search(struct dav_ctx *c)
{
    struct xml_node *root = c->doc.root, *prop = xml_child(root, XML_NS_DAV, "prop");
    const struct xml_attr *test = xml_attr_find(root, NULL, "test");
    bool any_of = test && xml_str_eq(test->value, "anyof");
    bool in_scope = xml_child(root, XML_NS_DAV, "apply-to-principal-collection-set") ||
                    c->target.kind == DAV_RES_ROOT || c->target.kind == DAV_RES_HOME;
    unsigned searches = 0, matched = 0;
    struct dav_resource *r = &c->target;

    if (!c->target.exists) {
        dav_respond_status(c, 404, NULL);
        return;
    }
    if (c->depth != 0 || (test && !any_of && !xml_str_eq(test->value, "allof"))) {
        dav_respond_status(c, 400, c->depth ? depth_zero : "test is anyof or allof.");
        return;
    }
    /* the principal: the home, the target from here on */
    memset(r, 0, sizeof(*r));
    r->kind = DAV_RES_HOME;
    r->path = c->path;
    r->path_len = (size_t)snprintf(c->path, sizeof(c->path), DAV_ROOT_PATH "%s/", c->user);
    XML_FOR_EACH_CHILD(ps, root) {
        const struct xml_node *props = xml_child(ps, XML_NS_DAV, "prop");
        const struct xml_node *match = xml_child(ps, XML_NS_DAV, "match");
        bool all = true;
        if (!xml_is(ps, XML_NS_DAV, "property-search"))
            continue;
        if (!props || !props->first_child || !match) {
            dav_respond_status(c, 400, "A property-search has a prop and a match.");
            return;
        }
        /* the properties of one property-search: a logical AND too */
        XML_FOR_EACH_CHILD(n, props) {
            if (!searchable(n)) {
                dav_respond_status(c, 400, "Not a searchable property.");
                return;
            }
            all = all && value_matches(c, r, n, xml_text_trimmed(match));
        }
        searches++;
        matched += all;
    }
    /* python-caldav names the properties to return beside an empty DAV:prop:
     * taken as DAV:prop's (section 9.4 gives the element no other children) */
    if (prop && !prop->first_child && prop->next_sibling &&
        !xml_is(prop->next_sibling, XML_NS_DAV, "apply-to-principal-collection-set")) {
        struct xml_node *n;
        prop->first_child = prop->next_sibling;
        for (n = prop->first_child; n->next_sibling; n = n->next_sibling)
            if (xml_is(n->next_sibling, XML_NS_DAV, "apply-to-principal-collection-set")) {
                n->next_sibling = NULL;
                break;
            }
    }
    c->mode = prop ? DAV_PROP : DAV_ALLPROP;
    c->props = prop;
    r->exists = in_scope && (any_of ? matched > 0 || searches == 0 : matched == searches);
    c->phase = 0;
    dav_respond_multistatus(c, dav_propfind_render);
}

/* Section 9.5: the searchable properties, each with a description. */
static int search_property_set_render(struct dav_ctx *c)
{
    const struct dav_extension *ext;
    struct xml_writer w;
    unsigned e, i;
    dav_body_open(c, "D:principal-search-property-set");
    dav_writer(c, &w);
    for (e = 0; (ext = dav_extensions[e]) != NULL; e++) {
        for (i = 0; i < ext->n_searchable; i++) {
            const struct dav_search_prop *p = &ext->searchable[i];
            xml_write_start(&w, "D", "principal-search-property");
            xml_write_start(&w, "D", "prop");
            xml_write_start(&w, p->prefix, p->name);
            xml_write_end(&w);
            xml_write_end(&w);
            xml_write_text_element(&w, "D", "description", p->description, strlen(p->description));
            xml_write_end(&w);
        }
    }
    xml_write_raw(&w, "</D:principal-search-property-set>", 34);
    dav_writer_done(c, &w);
    c->done = true;
    return 0;
}

static void principal_search_property_set(struct dav_ctx *c)
{
    if (!c->target.exists)
        dav_respond_status(c, 404, NULL);
    else if (c->depth != 0 || c->doc.root->first_child)
        dav_respond_status(c, 400, depth_zero);
    else
        dav_respond_stream(c, 200, "application/xml; charset=utf-8", search_property_set_render);
}

static const struct dav_prop props[] = {
    {XML_NS_DAV, "D", "principal-collection-set", p_principal_collection_set, 0, 0, NULL},
};

static const struct dav_report reports[] = {
    {XML_NS_DAV, "D", "principal-property-search", principal_property_search, NULL},
    {XML_NS_DAV, "D", "principal-search-property-set", principal_search_property_set, NULL},
};

static const struct dav_search_prop search_props[] = {
    {XML_NS_DAV, "D", "displayname", "The user's name"},
};

const struct dav_extension dav_principals_extension = {
    props, sizeof(props) / sizeof(props[0]),
    reports, sizeof(reports) / sizeof(reports[0]),
    NULL, 0,
    NULL,
    NULL, NULL,
    NULL, 0,
    search_props, sizeof(search_props) / sizeof(search_props[0]),
};
