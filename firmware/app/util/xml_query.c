/* Queries on the tree xml_parse() builds (xml.h). */
#include "util/xml.h"

#include <string.h>

bool xml_str_eq(struct xml_str s, const char *lit)
{
    /* byte by byte: most calls (a name against a table of them) differ at
     * once, and the literal's length is never needed */
    size_t i;
    for (i = 0; i < s.len; i++)
        if (s.ptr[i] != lit[i] || !lit[i])
            return false;
    return lit[s.len] == '\0';
}

bool xml_is(const struct xml_node *node, const char *ns, const char *name)
{
    /* the local name first: it tells most candidates apart, and namespaces are long */
    return node && (!name || xml_str_eq(node->name, name)) && (!ns || xml_str_eq(node->ns, ns));
}

struct xml_node *xml_child(const struct xml_node *parent, const char *ns, const char *name)
{
    for (struct xml_node *c = parent ? parent->first_child : NULL; c; c = c->next_sibling)
        if (xml_is(c, ns, name))
            return c;
    return NULL;
}

struct xml_node *xml_next(const struct xml_node *node, const char *ns, const char *name)
{
    for (struct xml_node *c = node ? node->next_sibling : NULL; c; c = c->next_sibling)
        if (xml_is(c, ns, name))
            return c;
    return NULL;
}

size_t xml_count(const struct xml_node *parent, const char *ns, const char *name)
{
    size_t n = 0;
    for (struct xml_node *c = xml_child(parent, ns, name); c; c = xml_next(c, ns, name))
        n++;
    return n;
}

const struct xml_attr *xml_attr_find(const struct xml_node *node, const char *ns, const char *name)
{
    for (const struct xml_attr *a = node ? node->attrs : NULL; a; a = a->next)
        if (xml_str_eq(a->ns, ns ? ns : "") && xml_str_eq(a->name, name))
            return a;
    return NULL;
}

struct xml_str xml_text_trimmed(const struct xml_node *node)
{
    struct xml_str s = node->text;
    while (s.len && xml_is_space((unsigned char)s.ptr[0])) {
        s.ptr++;
        s.len--;
    }
    while (s.len && xml_is_space((unsigned char)s.ptr[s.len - 1]))
        s.len--;
    return s;
}
