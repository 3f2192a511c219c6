#ifndef LITEDAV_STATIC_FILES_H
#define LITEDAV_STATIC_FILES_H

#include <stddef.h>
#include <stdint.h>

struct static_file {
    const char *path;
    const char *content_type;
    const uint8_t *data;
    uint32_t len;
};

/* The table is generated from firmware/static/ at build time. */
extern const struct static_file static_files[];
extern const unsigned static_files_count;

const struct static_file *static_file_find(const char *path, size_t path_len);

#endif
