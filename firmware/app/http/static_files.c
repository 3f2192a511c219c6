#include "http/static_files.h"

#include <string.h>

const struct static_file *static_file_find(const char *path, size_t path_len)
{
    unsigned i;
    for (i = 0; i < static_files_count; i++) {
        if (strlen(static_files[i].path) == path_len &&
            memcmp(static_files[i].path, path, path_len) == 0)
            return &static_files[i];
    }
    return NULL;
}
