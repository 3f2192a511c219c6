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

enum { BLOCKED, BUSY, GONE };

static double wall_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* the contents of a small /proc file, NUL-terminated; -1 when it cannot be read */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n;

    if (fd < 0)
        return -1;
    n = read(fd, buf, size - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = 0;
    return n;
}

/* R (running or waiting for a CPU) and D (uninterruptible, e.g. disk I/O) are busy */
static int task_busy(pid_t pid, const char *tid)
{
    char path[320], buf[512], *end;

    snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, tid);
    if (read_small(path, buf, sizeof(buf)) < 0)
        return 0; /* the thread has just ended */
    end = strrchr(buf, ')'); /* the command name in parentheses may hold anything */
    if (!end || end[1] != ' ')
        return 0;
    return end[2] == 'R' || end[2] == 'D';
}

static int tree_state(const struct peer_wait *w, pid_t pid, int depth);

/* the children of one thread */
static int children_state(const struct peer_wait *w, pid_t pid, const char *tid, int depth)
{
    char path[320], buf[4096], *p, *next;

    snprintf(path, sizeof(path), "/proc/%d/task/%s/children", (int)pid, tid);
    if (read_small(path, buf, sizeof(buf)) <= 0)
        return BLOCKED;
    for (p = buf; *p; p = next) {
        long child = strtol(p, &next, 10);
        if (next == p)
            break;
        if (child > 0 && child != w->self && tree_state(w, (pid_t)child, depth + 1) == BUSY)
            return BUSY;
    }
    return BLOCKED;
}

/* BUSY as soon as one thread of pid or of its descendants is; GONE: pid is no more */
static int tree_state(const struct peer_wait *w, pid_t pid, int depth)
{
    char path[64];
    DIR *d;
    struct dirent *e;
    int state = BLOCKED;

    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    d = opendir(path);
    if (!d)
        return GONE;
    while (state == BLOCKED && (e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        if (task_busy(pid, e->d_name))
            state = BUSY;
        else if (depth < MAX_DEPTH)
            state = children_state(w, pid, e->d_name, depth);
    }
    closedir(d);
    return state;
}

int peer_wait_init(struct peer_wait *w, pid_t peer, unsigned max_wait_ms)
{
    char path[64];

    memset(w, 0, sizeof(*w));
    w->peer = peer;
    w->self = getpid();
    w->max_wait_ms = max_wait_ms ? max_wait_ms : 1;
    if (!peer)
        return 0;
    snprintf(path, sizeof(path), "/proc/%d/task", (int)peer);
    if (access(path, R_OK) != 0) {
        w->peer = 0;
        return -1;
    }
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
    struct timespec pause = {0, SLEEP_NS};
    double t0;
    int state, spins = 0;

    if (!w->peer || w->gone)
        return;
    w->checks++;
    state = tree_state(w, w->peer, 0);
    if (state == GONE) {
        peer_gone(w, prefix);
        return;
    }
    if (state == BLOCKED) {
        w->unsynced = 0;
        return;
    }
    if (w->unsynced) {
        w->unsynced_polls++;
        return;
    }
    w->waits++;
    t0 = wall_s();
    for (;;) {
        double waited;
        if (spins++ < YIELD_SPINS)
            sched_yield();
        else
            nanosleep(&pause, NULL);
        state = tree_state(w, w->peer, 0);
        waited = wall_s() - t0;
        if (state == GONE) {
            peer_gone(w, prefix);
            break;
        }
        if (state == BLOCKED)
            break;
        if (waited * 1000.0 >= w->max_wait_ms) {
            w->unsynced = 1;
            w->unsynced_polls++;
            if (w->overruns++ == 0) {
                printf("%s peer process %d stayed runnable for %u ms: simulated time goes on without it "
                       "until it blocks (figures now depend on the host's speed)\n", prefix, (int)w->peer,
                       w->max_wait_ms);
                fflush(stdout);
            }
            break;
        }
    }
    w->waited_s += wall_s() - t0;
}

void peer_wait_report(const struct peer_wait *w, const char *prefix)
{
    if (!w->peer)
        return;
    fprintf(stderr, "%s peer process %d: checked at %llu polls, waited at %llu (%.1f s of wall time), "
            "%llu polls unsynchronized (%llu overruns of %u ms)\n", prefix, (int)w->peer,
            (unsigned long long)w->checks, (unsigned long long)w->waits, w->waited_s,
            (unsigned long long)w->unsynced_polls, (unsigned long long)w->overruns, w->max_wait_ms);
}
