/* Waiting for the host-side peer before simulated time goes on (peer_wait.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "peer_wait.h"

#define MAX_DEPTH 8   /* descendants followed: the benchmark, ab, a shell in between */
#define YIELD_SPINS 64 /* re-checks after sched_yield before sleeping between them */
#define SLEEP_NS 20000
#define CONFIRM_NS 50000 /* between the two looks that find the peer blocked */

enum { BLOCKED, BUSY, GONE };

double peer_wait_wall_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The /proc files of the peer's processes and threads stay open between
 * checks (a check then costs a getdents per process and a pread per file),
 * keyed by pid and tid; an entry a complete walk did not see is closed. */
struct proc_entry {
    pid_t pid;
    DIR *tasks;
    unsigned seen;
    int simulator; /* another simulator (same command name as this one's) */
};

struct task_entry {
    pid_t pid, tid;
    int stat_fd, children_fd, schedstat_fd;
    unsigned seen;
};

struct proc_cache {
    struct proc_entry procs[PEER_MAX_PROCS];
    struct task_entry tasks[PEER_MAX_TASKS];
    unsigned walk; /* number of the walk in progress */
    unsigned long long runs; /* times the walk's threads have run on a CPU (schedstat), summed */
    char comm[32]; /* this simulator's command name (/proc/self/comm) */
};

/* the command name of pid, without its newline; "" when unreadable */
static void read_comm(pid_t pid, char *comm, size_t size)
{
    char path[64];
    ssize_t n = -1;
    int fd;

    if (pid)
        snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
    else
        snprintf(path, sizeof(path), "/proc/self/comm");
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        n = read(fd, comm, size - 1);
        close(fd);
    }
    if (n < 0)
        n = 0;
    comm[n] = 0;
    comm[strcspn(comm, "\n")] = 0;
}

/* Another simulator among the peer's descendants (the session's long-lived
 * appliance beside this one in a test run, say) runs its own clock and never
 * blocks on this one's sockets: waiting for it would wait max_wait_ms for nothing. */
static int is_simulator(const struct proc_cache *c, pid_t pid)
{
    char comm[32];
    read_comm(pid, comm, sizeof(comm));
    return comm[0] && strcmp(comm, c->comm) == 0;
}

static int open_task_file(pid_t pid, pid_t tid, const char *name)
{
    char path[96];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)pid, (int)tid, name);
    return open(path, O_RDONLY | O_CLOEXEC);
}

static void close_task(struct task_entry *t)
{
    if (t->stat_fd >= 0)
        close(t->stat_fd);
    if (t->children_fd >= 0)
        close(t->children_fd);
    if (t->schedstat_fd >= 0)
        close(t->schedstat_fd);
    memset(t, 0, sizeof(*t));
    t->stat_fd = t->children_fd = t->schedstat_fd = -1;
}

static struct task_entry *find_task(struct proc_cache *c, pid_t pid, pid_t tid)
{
    struct task_entry *t, *free_slot = NULL;
    int i;

    for (i = 0; i < PEER_MAX_TASKS; i++) {
        t = &c->tasks[i];
        if (t->pid == pid && t->tid == tid)
            return t;
        if (!t->pid && !free_slot)
            free_slot = t;
    }
    if (!free_slot)
        return NULL;
    free_slot->stat_fd = open_task_file(pid, tid, "stat");
    if (free_slot->stat_fd < 0)
        return NULL;
    free_slot->children_fd = open_task_file(pid, tid, "children");
    free_slot->schedstat_fd = open_task_file(pid, tid, "schedstat");
    free_slot->pid = pid;
    free_slot->tid = tid;
    return free_slot;
}

static DIR *find_proc(struct proc_cache *c, pid_t pid, int *simulator)
{
    struct proc_entry *p, *free_slot = NULL;
    char path[64];
    int i;

    for (i = 0; i < PEER_MAX_PROCS; i++) {
        p = &c->procs[i];
        if (p->pid == pid) {
            p->seen = c->walk;
            *simulator = p->simulator;
            rewinddir(p->tasks); /* procfs lists the threads afresh */
            return p->tasks;
        }
        if (!p->pid && !free_slot)
            free_slot = p;
    }
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    *simulator = is_simulator(c, pid);
    if (!free_slot)
        return opendir(path); /* more processes than slots: the caller closes it */
    free_slot->tasks = opendir(path);
    if (!free_slot->tasks)
        return NULL;
    free_slot->pid = pid;
    free_slot->seen = c->walk;
    free_slot->simulator = *simulator;
    return free_slot->tasks;
}

static int cached_dir(const struct proc_cache *c, const DIR *d)
{
    int i;
    for (i = 0; i < PEER_MAX_PROCS; i++)
        if (c->procs[i].tasks == d)
            return 1;
    return 0;
}

/* a cached file's contents, NUL-terminated; -1 when the task has gone */
static ssize_t read_again(int fd, char *buf, size_t size)
{
    ssize_t n;

    if (fd < 0)
        return -1;
    n = pread(fd, buf, size - 1, 0);
    if (n < 0)
        return -1;
    buf[n] = 0;
    return n;
}

/* R (running or waiting for a CPU) and D (uninterruptible, e.g. disk I/O) are busy */
static int stat_busy(const char *stat)
{
    const char *end = strrchr(stat, ')'); /* the command name in parentheses may hold anything */
    return end && end[1] == ' ' && (end[2] == 'R' || end[2] == 'D');
}

/* BUSY as soon as one thread of pid or of its descendants is; GONE: pid is no more */
static int tree_state(struct peer_wait *w, pid_t pid, int depth)
{
    struct proc_cache *c = w->cache;
    struct dirent *e;
    int simulator = 0;
    DIR *d = find_proc(c, pid, &simulator);
    int state = BLOCKED;

    if (!d)
        return GONE;
    while (state == BLOCKED && !(depth > 0 && simulator) && (e = readdir(d))) {
        char buf[4096], *p, *next;
        struct task_entry *t;
        pid_t tid;

        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        tid = (pid_t)atoi(e->d_name);
        t = find_task(c, pid, tid);
        if (!t)
            continue; /* ended since the listing, or no slot left */
        if (read_again(t->stat_fd, buf, sizeof(buf)) <= 0) {
            close_task(t); /* ended: its entry may belong to a new task of the same ids next time */
            continue;
        }
        t->seen = c->walk;
        if (stat_busy(buf)) {
            state = BUSY;
            break;
        }
        if (read_again(t->schedstat_fd, buf, sizeof(buf)) > 0) {
            char *runs = strrchr(buf, ' '); /* on-CPU ns, waiting ns, times run */
            if (runs)
                c->runs += strtoull(runs + 1, NULL, 10);
        }
        if (depth >= MAX_DEPTH || read_again(t->children_fd, buf, sizeof(buf)) <= 0)
            continue;
        for (p = buf; *p; p = next) {
            long child = strtol(p, &next, 10);
            if (next == p)
                break;
            if (child > 0 && child != w->self && tree_state(w, (pid_t)child, depth + 1) == BUSY) {
                state = BUSY;
                break;
            }
        }
    }
    if (!cached_dir(c, d))
        closedir(d);
    return state;
}

/* one check of the peer's tree; after a complete walk, entries it did not see are closed */
static int check_peer(struct peer_wait *w)
{
    struct proc_cache *c = w->cache;
    int i, state;

    c->walk++;
    c->runs = 0;
    state = tree_state(w, w->peer, 0);
    if (state != BLOCKED)
        return state;
    for (i = 0; i < PEER_MAX_TASKS; i++)
        if (c->tasks[i].pid && c->tasks[i].seen != c->walk)
            close_task(&c->tasks[i]);
    for (i = 0; i < PEER_MAX_PROCS; i++) {
        struct proc_entry *p = &c->procs[i];
        if (p->pid && p->seen != c->walk) {
            closedir(p->tasks);
            memset(p, 0, sizeof(*p));
        }
    }
    return state;
}

int peer_wait_init(struct peer_wait *w, pid_t peer, unsigned max_wait_ms)
{
    char path[64];
    struct proc_cache *c;
    int i;

    memset(w, 0, sizeof(*w));
    w->peer = peer;
    w->self = getpid();
    w->due = 1;
    w->max_wait_ms = max_wait_ms ? max_wait_ms : 1;
    if (!peer)
        return 0;
    snprintf(path, sizeof(path), "/proc/%d/task", (int)peer);
    c = calloc(1, sizeof(*c));
    if (!c || access(path, R_OK) != 0) {
        free(c);
        w->peer = 0;
        return -1;
    }
    for (i = 0; i < PEER_MAX_TASKS; i++)
        c->tasks[i].stat_fd = c->tasks[i].children_fd = c->tasks[i].schedstat_fd = -1;
    read_comm(0, c->comm, sizeof(c->comm));
    w->cache = c;
    return 0;
}

static void peer_gone(struct peer_wait *w, const char *prefix)
{
    w->gone = 1;
    printf("%s peer process %d has ended: simulated time no longer waits for it\n", prefix, (int)w->peer);
    fflush(stdout);
}

void peer_wait_settle(struct peer_wait *w, const char *prefix)
{
    struct timespec pause = {0, SLEEP_NS}, confirm = {0, CONFIRM_NS};
    struct proc_cache *c = w->cache;
    unsigned long long runs = 0;
    double t0 = 0;
    int state, spins = 0, blocked_once = 0;

    if (!w->peer || w->gone || !w->due)
        return;
    w->checks++;
    for (;;) {
        state = check_peer(w);
        if (state == GONE) {
            peer_gone(w, prefix);
            break;
        }
        if (state == BLOCKED) {
            /* Blocked twice in a row without running in between: a thread seen
             * between two steps of its work (asleep for a moment inside a
             * connect, say) has run or is runnable again by the second look. */
            if (blocked_once && c->runs == runs) {
                w->unsynced = w->due = 0;
                break;
            }
            blocked_once = 1;
            runs = c->runs;
            nanosleep(&confirm, NULL);
            continue;
        }
        blocked_once = 0;
        if (w->unsynced) {
            w->unsynced_checks++;
            break;
        }
        if (!t0) {
            w->waits++;
            t0 = peer_wait_wall_s();
        }
        if ((peer_wait_wall_s() - t0) * 1000.0 >= w->max_wait_ms) {
            w->unsynced = 1;
            w->unsynced_checks++;
            if (w->overruns++ == 0) {
                printf("%s peer process %d stayed runnable for %u ms: simulated time goes on without it "
                       "until it blocks (figures now depend on the host's speed)\n", prefix, (int)w->peer,
                       w->max_wait_ms);
                fflush(stdout);
            }
            break;
        }
        if (spins++ < YIELD_SPINS)
            sched_yield();
        else
            nanosleep(&pause, NULL);
    }
    if (t0)
        w->waited_s += peer_wait_wall_s() - t0;
}

void peer_wait_report(const struct peer_wait *w, const char *prefix)
{
    if (!w->peer)
        return;
    fprintf(stderr, "%s peer process %d: checked %llu times, waited %llu times (%.1f s of wall time), "
            "%llu checks unsynchronized (%llu overruns of %u ms)\n", prefix, (int)w->peer,
            (unsigned long long)w->checks, (unsigned long long)w->waits, w->waited_s,
            (unsigned long long)w->unsynced_checks, (unsigned long long)w->overruns, w->max_wait_ms);
}
