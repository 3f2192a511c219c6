"""Connections in TIME-WAIT cost lwIP's walks nothing (issues 8 and 9; firmware/app/net/tcp_time_wait.h).

A client that sends "Connection: close" (urllib, ab without -k) gets its answer and the server's
FIN: the server closes first, so the connection holds its PCB in TIME-WAIT for 2 MSL (2 minutes
of lwIP time). lwIP walks its whole TIME-WAIT list for every SYN and in its slow timer: with
every closed connection on it, each new connection cost more than the one before (on the
offload SoC, ab -c 100: 85,401 cycles a request with 0..400 in TIME-WAIT, 179,126 at
1,541..1,926). The firmware keeps them in a hash table instead, off lwIP's list, each for its
whole 2 MSL (the status page: tcp_time_wait in all, tcp_time_wait_listed on lwIP's list).

After CONNECTIONS closes one after the other, every one is still in TIME-WAIT (2 MSL has not
passed, and no PCB was wanted) and lwIP's list holds at most the last. Before (lwIP's list
only) it held every one of them.
"""
import urllib.request

from http_checks import TASK_ICS
from litedav.bench.idle_conns import read_status

CONNECTIONS = 80


def fetch_and_close(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/static/task.ics", timeout=300) as r:
        assert r.headers["Connection"] == "close"  # urllib asks for it: the server closes first
        return r.status, r.read()


def test_time_wait_held_off_lwips_list(appliance):
    port = appliance.port
    before = read_status(port)
    for i in range(CONNECTIONS):
        assert fetch_and_close(port) == (200, TASK_ICS), f"request {i}"
    after = read_status(port)
    assert "tcp_time_wait_listed" in after, f"the status page does not say where TIME-WAIT is: {after}"
    assert after["tcp_time_wait_listed"] <= 1, after
    # every connection closed (the first status read's too) is in TIME-WAIT, or was reopened by
    # a SYN from the same port (syn_queue.h)
    reopened = after["syn_time_wait_reopened"] - before["syn_time_wait_reopened"]
    assert after["tcp_time_wait"] + reopened >= before["tcp_time_wait"] + CONNECTIONS, (before, after)
    assert after["tcp_time_wait_expired"] == before["tcp_time_wait_expired"], after
    assert after["tcp_time_wait_recycled"] == before["tcp_time_wait_recycled"], after
