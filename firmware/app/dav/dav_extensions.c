/* What the layers above registered on the WebDAV layer (dav_register), and
 * lookups in it: properties, REPORTs, methods, collection types. */
#include "dav/dav_private.h"

static const struct dav_extension *extensions[DAV_EXTENSIONS_MAX];
static unsigned extension_count;

int dav_register(const struct dav_extension *ext)
{
    unsigned i;
    for (i = 0; i < extension_count; i++)
        if (extensions[i] == ext)
            return 0;
    if (extension_count == DAV_EXTENSIONS_MAX)
        return -1;
    extensions[extension_count++] = ext;
    return 0;
}

const struct dav_extension *dav_extension(unsigned i)
{
    return i < extension_count ? extensions[i] : NULL;
}

const struct dav_report *dav_report_find(const struct xml_node *root)
{
    unsigned i, k;
    for (i = 0; i < extension_count; i++)
        for (k = 0; k < extensions[i]->n_reports; k++)
            if (xml_is(root, extensions[i]->reports[k].ns, extensions[i]->reports[k].name))
                return &extensions[i]->reports[k];
    return NULL;
}

const struct dav_method *dav_method_find(enum http_method method)
{
    unsigned i, k;
    for (i = 0; i < extension_count; i++)
        for (k = 0; k < extensions[i]->n_methods; k++)
            if (extensions[i]->methods[k].method == method)
                return &extensions[i]->methods[k];
    return NULL;
}

const struct dav_coll_type *dav_coll_type_of(char key)
{
    unsigned i;
    for (i = 0; i < extension_count; i++)
        if (extensions[i]->coll_type && extensions[i]->coll_type->key == key)
            return extensions[i]->coll_type;
    return NULL;
}
