/*
 * Simulated time that does not depend on the host's speed: the simulator waits
 * for its host-side peer before it lets simulated time go on.
 *
 * The appliance's peers are host processes (a benchmark in Python, ab, curl)
 * talking to libslirp's host sockets in wall time. Without a rule, how much a
 * client has written or read by a given simulated cycle depends on how fast
 * the simulator runs beside it: a faster simulator makes the appliance look
 * slower, a loaded host faster. With a peer process named (argument
 * `peer_pid`), the module waits before slirp may read or write the host
 * sockets (at each poll of them, and before each frame from the SoC reaches
 * slirp, which may write its data to a socket at once) until every thread of
 * the peer and of its descendants (ab started by the benchmark, say) is
 * blocked, i.e. neither running nor waiting for a CPU (state R) nor in
 * uninterruptible sleep (D). A blocked peer has done everything it can with
 * what the appliance sent so far, so what slirp finds in its sockets is a function of
 * simulated history alone: a client's own computing takes no simulated time,
 * however long the host takes to schedule it. The simulator's own process
 * (a descendant of the peer when the peer started it) is left out, and so are
 * other simulators (processes of the same command name) with their descendants:
 * they keep their own clocks and never block on this one.
 *
 * The peer counts as blocked when two looks CONFIRM_NS apart find every thread
 * blocked and none has run on a CPU in between (schedstat), so a thread caught
 * asleep for a moment between two steps of its work does not count.
 *
 * Only slirp's own socket operations wake a blocked client, so a check is due
 * only after slirp may have read, written, accepted or closed a host socket
 * (peer_wait_touch()); the /proc reads are not free (tens to hundreds of
 * microseconds on a loaded host).
 *
 * A peer that sleeps on a timer (time.sleep) is blocked too: simulated time
 * goes on meanwhile, which is what such a client asks for. A peer that stays
 * runnable for `max_wait_ms` of wall time (a busy loop, or work that has
 * nothing to do with the appliance) lets simulated time go on unsynchronized
 * until it is next seen blocked; those checks are counted and reported, so a
 * benchmark can tell that its figures depended on the host.
 *
 * Linux only (/proc/PID/task/TID/stat and .../children).
 */
#ifndef PEER_WAIT_H
#define PEER_WAIT_H

#include <stdint.h>
#include <sys/types.h>

#define PEER_MAX_PROCS 16  /* processes and threads whose /proc files stay open */
#define PEER_MAX_TASKS 256

struct peer_wait {
    pid_t peer;              /* 0: waiting is off */
    pid_t self;              /* this simulator's process, never waited for */
    unsigned max_wait_ms;
    int unsynced;            /* the peer overran max_wait_ms and has not blocked since */
    int due;                 /* slirp used a host socket since the peer was last seen blocked */
    int gone;                /* the peer process ended: waiting stopped */
    uint64_t checks;         /* settles that looked at the peer */
    uint64_t waits;          /* ... of them found it busy and waited */
    uint64_t unsynced_checks; /* ... found it busy and went on without it (overrun) */
    uint64_t overruns;       /* times it overran max_wait_ms */
    double waited_s;         /* wall time spent waiting */
    void *cache;             /* open /proc files (peer_wait.c) */
};

/* peer 0: off. Prints nothing; 0 or -1 with errno when /proc cannot show the peer. */
int peer_wait_init(struct peer_wait *w, pid_t peer, unsigned max_wait_ms);

/* slirp may have read, written, accepted or closed a host socket: the next settle checks */
static inline void peer_wait_touch(struct peer_wait *w) { w->due = 1; }

/* Return once the peer is blocked (or has overrun); call before slirp may use a host socket. */
void peer_wait_settle(struct peer_wait *w, const char *prefix);

/* one line of counters for the exit report */
void peer_wait_report(const struct peer_wait *w, const char *prefix);

/* the host's monotonic clock in seconds (wall time, for waits and speed reports) */
double peer_wait_wall_s(void);

#endif
