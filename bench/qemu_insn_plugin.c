/* A QEMU TCG plugin that counts the guest instructions QEMU executes, split by
 * code region, for bench/lm3s_instructions.py.
 *
 *   qemu-system-arm ... -plugin insn_plugin.so,regions=FILE,socket=PATH
 *
 * FILE has one entry a line (addresses in hex):
 *   region NAME START END   instructions in [START, END) count towards NAME
 *   mark NAME ADDR          executions of the instruction at ADDR count as NAME
 * Instructions outside every region count as "unmapped". Each connection to the
 * unix socket PATH gets the counters as "name value" lines ("total" first) and
 * is closed: the bench reads them before and after a batch of requests.
 *
 * Counting is inline (TCG adds to a counter before each instruction, no
 * helper call), so an instruction is counted when it starts executing; an
 * interrupt is taken between instructions and its handler counts on its own.
 *
 * Written against the plugin API version 1 of QEMU 7.x (Debian 12 ships QEMU
 * 7.2 built with plugin support but without the API header): the few entry
 * points used are declared here. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*udata_cb_t)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn,
                                                enum qemu_plugin_op op, void *ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb_t cb, void *userdata);
void qemu_plugin_outs(const char *string);

EXPORT int qemu_plugin_version = 1;

#define MAX_COUNTERS 4096
#define MAX_RANGES 8192
#define NAME_MAX_LEN 64

struct counter {
    char name[NAME_MAX_LEN];
    uint64_t value;
};

struct range {
    uint64_t start, end;
    struct counter *counter;
};

/* counters[0] is "total", counters[1] is "unmapped"; the rest come from FILE */
static struct counter counters[MAX_COUNTERS];
static unsigned n_counters;
static struct range regions[MAX_RANGES], marks[MAX_RANGES];
static unsigned n_regions, n_marks;
static char socket_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static int listen_fd = -1;

static struct counter *counter_named(const char *name)
{
    unsigned i;
    for (i = 0; i < n_counters; i++)
        if (!strcmp(counters[i].name, name))
            return &counters[i];
    if (n_counters == MAX_COUNTERS || strlen(name) >= NAME_MAX_LEN)
        return NULL;
    strcpy(counters[n_counters].name, name);
    return &counters[n_counters++];
}

static int by_start(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The range holding addr, or NULL; ranges sorted by start, not overlapping. */
static struct counter *lookup(const struct range *ranges, unsigned n, uint64_t addr)
{
    unsigned lo = 0, hi = n;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (addr < ranges[mid].start)
            hi = mid;
        else if (addr >= ranges[mid].end)
            lo = mid + 1;
        else
            return ranges[mid].counter;
    }
    return NULL;
}

static int load_ranges(const char *path)
{
    char line[256], kind[16], name[NAME_MAX_LEN];
    unsigned long long start, end;
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        struct range *r;
        if (sscanf(line, "region %63s %llx %llx", name, &start, &end) == 3 && start < end) {
            if (n_regions == MAX_RANGES)
                goto bad;
            r = &regions[n_regions++];
        } else if (sscanf(line, "mark %63s %llx", name, &start) == 2) {
            if (n_marks == MAX_RANGES)
                goto bad;
            r = &marks[n_marks++];
            end = start + 1;
        } else if (sscanf(line, "%15s", kind) != 1) {
            continue;   /* blank line */
        } else {
            goto bad;
        }
        r->start = start;
        r->end = end;
        r->counter = counter_named(name);
        if (!r->counter)
            goto bad;
    }
    fclose(f);
    qsort(regions, n_regions, sizeof(regions[0]), by_start);
    qsort(marks, n_marks, sizeof(marks[0]), by_start);
    return 0;
bad:
    fclose(f);
    return -1;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    size_t i, n = qemu_plugin_tb_n_insns(tb);
    for (i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint64_t pc = qemu_plugin_insn_vaddr(insn);
        struct counter *region = lookup(regions, n_regions, pc);
        struct counter *mark = lookup(marks, n_marks, pc);
        qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
                                                   &counters[0].value, 1);
        qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
                                                   region ? &region->value : &counters[1].value, 1);
        if (mark)
            qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
                                                       &mark->value, 1);
    }
}

static uint64_t load(unsigned i)
{
    return __atomic_load_n(&counters[i].value, __ATOMIC_RELAXED);
}

/* Copies the counters into snap so that they agree with each other. The
 * vCPU thread adds to them meanwhile (an aligned 64-bit load is atomic on the
 * 64-bit hosts this runs on, so no value is torn), and every instruction adds
 * to "total": a copy during which total did not move holds no instruction
 * that total has and the others lack. Copies are tried again until one is
 * stable (the guest is mostly asleep in WFI when the bench asks); the last
 * one is kept if none is. */
static void snapshot(uint64_t *snap)
{
    unsigned i, tries;
    for (tries = 0; tries < 10000; tries++) {
        uint64_t before = load(0);
        for (i = 0; i < n_counters; i++)
            snap[i] = load(i);
        if (load(0) == before && snap[0] == before)
            return;
    }
}

/* Answers each connection with a snapshot. */
static void *serve(void *unused)
{
    static char out[MAX_COUNTERS * (NAME_MAX_LEN + 24)];
    static uint64_t snap[MAX_COUNTERS];
    for (;;) {
        size_t len = 0, sent = 0;
        unsigned i;
        int fd = accept(listen_fd, NULL, NULL);
        if (fd < 0)
            continue;
        snapshot(snap);
        for (i = 0; i < n_counters; i++)
            len += (size_t)snprintf(out + len, sizeof(out) - len, "%s %llu\n", counters[i].name,
                                    (unsigned long long)snap[i]);
        while (sent < len) {
            ssize_t n = write(fd, out + sent, len - sent);
            if (n <= 0) {
                qemu_plugin_outs("insn_plugin: cannot answer a query\n");
                break;
            }
            sent += (size_t)n;
        }
        close(fd);
    }
    return NULL;
}

static void on_exit_cb(qemu_plugin_id_t id, void *userdata)
{
    unlink(socket_path);
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const void *info, int argc, char **argv)
{
    const char *regions_file = NULL;
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    pthread_t thread;
    int i;

    for (i = 0; i < argc; i++) {
        if (!strncmp(argv[i], "regions=", 8))
            regions_file = argv[i] + 8;
        else if (!strncmp(argv[i], "socket=", 7) && strlen(argv[i] + 7) < sizeof(socket_path))
            strcpy(socket_path, argv[i] + 7);
        else {
            fprintf(stderr, "insn_plugin: unknown argument %s (want regions=FILE socket=PATH)\n", argv[i]);
            return -1;
        }
    }
    counter_named("total");
    counter_named("unmapped");
    if (regions_file && load_ranges(regions_file) != 0) {
        fprintf(stderr, "insn_plugin: cannot read %s (region NAME START END / mark NAME ADDR lines, "
                "at most %d names and %d of each)\n", regions_file, MAX_COUNTERS, MAX_RANGES);
        return -1;
    }
    if (!socket_path[0]) {
        fprintf(stderr, "insn_plugin: socket=PATH is required\n");
        return -1;
    }
    strcpy(addr.sun_path, socket_path);
    unlink(socket_path);
    listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
        listen(listen_fd, 4) != 0 || pthread_create(&thread, NULL, serve, NULL) != 0) {
        perror("insn_plugin: socket");
        return -1;
    }
    pthread_detach(thread);
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
    return 0;
}
