/* What the layers above registered on the WebDAV layer (dav_register), and
 * lookups in it: properties, REPORTs, methods, collection types. */
#include "dav/dav_private.h"

const struct dav_extension *dav_extensions[DAV_EXTENSIONS_MAX + 1];

int dav_register(const struct dav_extension *ext)
{
    unsigned i;
    for (i = 0; dav_extensions[i]; i++)
        if (dav_extensions[i] == ext)
            return 0;
    if (i == DAV_EXTENSIONS_MAX)
        return -1;
    dav_extensions[i] = ext;
    return 0;
}

const struct dav_report *dav_report_find(const struct xml_node *root)
{
    unsigned i, k;
    for (i = 0; dav_extensions[i]; i++)
        for (k = 0; k < dav_extensions[i]->n_reports; k++)
            if (xml_is(root, dav_extensions[i]->reports[k].ns, dav_extensions[i]->reports[k].name))
                return &dav_extensions[i]->reports[k];
    return NULL;
}

const struct dav_method *dav_method_find(enum http_method method)
{
    unsigned i, k;
    for (i = 0; dav_extensions[i]; i++)
        for (k = 0; k < dav_extensions[i]->n_methods; k++)
            if (dav_extensions[i]->methods[k].method == method)
                return &dav_extensions[i]->methods[k];
    return NULL;
}

const struct dav_coll_type *dav_coll_type_of(char key)
{
    unsigned i;
    for (i = 0; dav_extensions[i]; i++)
        if (dav_extensions[i]->coll_type && dav_extensions[i]->coll_type->key == key)
            return dav_extensions[i]->coll_type;
    return NULL;
}

const struct dav_coll_type *dav_fixed_type_at(unsigned i)
{
    const struct dav_extension *ext;
    unsigned e;
    for (e = 0; (ext = dav_extensions[e]) != NULL; e++) {
        if (i < ext->n_fixed)
            return &ext->fixed[i];
        i -= ext->n_fixed;
    }
    return NULL;
}
