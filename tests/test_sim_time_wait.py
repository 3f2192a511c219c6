"""The TIME-WAIT population stays bounded (issues 8 and 9; firmware/app/tcp_time_wait.h).

A client that sends "Connection: close" (urllib, ab without -k) gets its answer and the server's
FIN: the server closes first, so the connection holds its PCB in TIME-WAIT for 2 MSL (2 minutes
of lwIP time). lwIP walks its whole TIME-WAIT list for every SYN and in its slow timer, so
without a bound the list grew with every connection (to the LiteX build's 4,200 PCBs) and so
did the cost of each new one. The status page states the bound (tcp_time_wait_max) and counts
the connections recycled beyond it, oldest first.

More connections than the bound (16 more), one after the other: afterwards the page shows TIME-WAIT at
the bound, not at their number (2 MSL has not passed), and the rest recycled. Without the bound
(the firmware before tcp_time_wait.c) every one of them was still in TIME-WAIT.
"""
import urllib.request

from http_checks import TASK_ICS
from litedav.bench.idle_conns import read_status

MORE_THAN_THE_BOUND = 16


def fetch_and_close(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/static/task.ics", timeout=300) as r:
        assert r.headers["Connection"] == "close"  # urllib asks for it: the server closes first
        return r.status, r.read()


def test_time_wait_bounded_oldest_recycled(appliance):
    port = appliance.port
    before = read_status(port)
    bound = before.get("tcp_time_wait_max", 0)
    assert bound > 0, f"the status page states no TIME-WAIT bound: {before}"
    count = bound + MORE_THAN_THE_BOUND
    for i in range(count):
        assert fetch_and_close(port) == (200, TASK_ICS), f"request {i}"
    after = read_status(port)
    assert after["tcp_time_wait"] <= bound, after
    # every connection closed is still in TIME-WAIT, recycled, or reopened by a SYN from the same
    # port (syn_queue.h): none left the list otherwise, 2 MSL has not passed
    recycled = after["tcp_time_wait_recycled"] - before["tcp_time_wait_recycled"]
    reopened = after["syn_time_wait_reopened"] - before["syn_time_wait_reopened"]
    assert after["tcp_time_wait"] + recycled + reopened >= before["tcp_time_wait"] + count, (before, after)
    # and the newest keep theirs: the population is at the bound, not emptied
    assert after["tcp_time_wait"] >= bound - 2, after
