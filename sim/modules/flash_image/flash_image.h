/*
 * What the sim's two flash chip modules share (flash_file: the memory-mapped
 * NOR flash; spi_nor_flash: the SPI NOR chip on LiteSPI's pads): reading an
 * integer module argument, and keeping the chip's contents in a host file so
 * that they outlive the simulator (power cuts, reboots, the host's checks).
 * Header only: LiteX builds each module from its own folder (rules.mak), and
 * this folder is not a module. Include after "modules.h" (RC_* codes).
 */
#ifndef SIM_FLASH_IMAGE_H
#define SIM_FLASH_IMAGE_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

static inline long long module_arg_int(json_object *args, const char *key, long long def)
{
    json_object *v;
    if (args && json_object_object_get_ex(args, key, &v))
        return json_object_get_int64(v);
    return def;
}

/* Power cuts (tests/test_sim_powerfail.py): every FLASH_POWER_CUT_POLL cycles a
 * module with a power_cut_file looks for it; once it holds a number N, the file
 * is removed and the cut is armed N cycles (at least 1) after `cycle`. Returns
 * the armed cycle, 0 while there is no file or it holds no number. */
#define FLASH_POWER_CUT_POLL 65536u

static inline uint64_t flash_power_cut_poll(const char *tag, const char *path, uint64_t cycle)
{
    FILE *f = fopen(path, "r");
    unsigned long long delay;
    uint64_t at = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%llu", &delay) == 1) {
        at = cycle + (delay ? delay : 1);
        printf("[%s] power cut armed for cycle %llu\n", tag, (unsigned long long)at);
        fflush(stdout);
    }
    fclose(f);
    remove(path);
    return at;
}

/* The image file every flash module is given ("path"), or NULL after saying
 * it is missing. */
static inline char *flash_image_path_arg(const char *tag, json_object *args)
{
    json_object *v;
    if (!args || !json_object_object_get_ex(args, "path", &v) || !*json_object_get_string(v)) {
        fprintf(stderr, "[%s] needs a \"path\" argument (the flash image file)\n", tag);
        return NULL;
    }
    return strdup(json_object_get_string(v));
}

/* Map `path` (size bytes) shared, creating it erased (0xFF) when new or
 * empty; an existing file of another size is refused rather than resized, as
 * it is some other chip's image. *fresh says whether it was just created.
 * Errors are printed with the module's tag. */
static inline int flash_image_map(const char *tag, const char *path, uint32_t size, uint8_t **mem,
                                  int *fresh)
{
    struct stat st;
    void *m;
    int fd = open(path, O_RDWR | O_CREAT, 0644);

    if (fd < 0) {
        fprintf(stderr, "[%s] cannot open %s: %s\n", tag, path, strerror(errno));
        return RC_ERROR;
    }
    if (fstat(fd, &st) < 0) {
        fprintf(stderr, "[%s] cannot stat %s: %s\n", tag, path, strerror(errno));
        close(fd);
        return RC_ERROR;
    }
    *fresh = st.st_size == 0;
    if (!*fresh && st.st_size != (off_t)size) {
        fprintf(stderr, "[%s] %s holds %lld bytes, the chip is %u: refusing to resize an image "
                        "(delete it, or give its size)\n",
                tag, path, (long long)st.st_size, (unsigned)size);
        close(fd);
        return RC_INVARG;
    }
    if (*fresh && ftruncate(fd, size) < 0) {
        fprintf(stderr, "[%s] cannot size %s: %s\n", tag, path, strerror(errno));
        close(fd);
        return RC_ERROR;
    }
    m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        fprintf(stderr, "[%s] cannot map %s: %s\n", tag, path, strerror(errno));
        return RC_ERROR;
    }
    *mem = m;
    if (*fresh)
        memset(*mem, 0xFF, size);
    return RC_OK;
}

#endif
