"""End-to-end on the SoC with the offload NIC (docs/nic.md): the same firmware, with the
offload_netif driver (zero-copy DMA rings, checksums in the NIC), serves the shared HTTP checks,
and a 60 KiB calendar object goes in by PUT and comes back byte for byte by GET, so frames of
many segments cross both rings (RX: pbufs filled by DMA; TX: one descriptor per pbuf).

The SoC is a second Verilator build (build/sim-offload), booted once for this module.
"""
import base64
import http.client
import os
import random

import pytest

from http_checks import Target, apachebench, status
from http_checks import (  # noqa: F401  (collected here, in this order)
    test_status_page,
    test_static_file_and_head,
    test_parallel_keepalive_clients,
    test_pipelined_requests,
    test_malformed_request_gets_error_and_server_keeps_serving,
)

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT = 120  # wall seconds: the simulator runs far slower than real time
SIM_CLOCK_HZ = 100_000_000
AUTH = {"Authorization": "Basic " + base64.b64encode(b"demo:demo").decode()}
SEED = int(os.environ.get("LITEDAV_SEED", "12345"))


@pytest.fixture(scope="module")
def offload_appliance():
    """The simulated SoC with the offload NIC, built in build/sim-offload and booted."""
    from litedav.sim.run import Simulator, build, default_build_dir, free_port
    build_dir = build(default_build_dir("offload"), nic="offload")
    with open(os.path.join(build_dir, "software", "include", "generated", "soc.h")) as f:
        assert "LITEDAV_NIC_OFFLOAD" in f.read(), "build/sim-offload is not the offload SoC"
    sim = Simulator(build_dir, port=free_port(), echo=False, fresh_flash=True)
    sim.start()
    try:
        sim.wait_ready(timeout=300)
        yield sim
    finally:
        sim.stop()
        print("\n--- offload simulator console (last lines) ---\n" + "\n".join(sim.console[-15:]))


@pytest.fixture(scope="module")
def target(offload_appliance):
    return Target(port=offload_appliance.port, cycles_hz=SIM_CLOCK_HZ, timeout=TIMEOUT)


def folded(name, value):
    """An iCalendar content line folded at 75 octets (RFC 5545 3.1)."""
    line = f"{name}:{value}"
    parts = [line[:75]] + [" " + line[i:i + 74] for i in range(75, len(line), 74)]
    return "\r\n".join(parts) + "\r\n"


def large_event(size):
    """A VEVENT of about `size` bytes: many seeded COMMENT properties (RFC 5545 3.8.1.4 allows
    any number), so no two segments of the object carry the same bytes."""
    rng = random.Random(SEED)
    head = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//offload//EN\r\nBEGIN:VEVENT\r\n"
            "UID:offload-large@example\r\nDTSTAMP:20261122T090000Z\r\nDTSTART:20261123T090000Z\r\n"
            "DTEND:20261123T100000Z\r\nSUMMARY:Large\r\n")
    tail = "END:VEVENT\r\nEND:VCALENDAR\r\n"
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    comments = []
    budget = size - len(head) - len(tail)
    while True:
        text = " ".join("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(150))
        comment = folded("COMMENT", text)
        if sum(map(len, comments)) + len(comment) > budget:
            break
        comments.append(comment)
    return (head + "".join(comments) + tail).encode()


def dav(target, method, path, body=None, headers=None):
    conn = target.connection()
    try:
        conn.request(method, path, body=body, headers={**AUTH, **(headers or {})})
        r = conn.getresponse()
        r.data = r.read()
        return r
    finally:
        conn.close()


def test_large_object_put_get_byte_exact(target):
    body = large_event(60 * 1024)
    assert 58 * 1024 < len(body) <= 60 * 1024
    before = status(target)
    assert dav(target, "MKCALENDAR", "/dav/demo/offload/").status == 201
    r = dav(target, "PUT", "/dav/demo/offload/large.ics", body, {"Content-Type": "text/calendar"})
    assert r.status == 201, r.data
    etag = r.getheader("ETag")
    for _ in range(2):  # twice: the second GET reuses the TX ring's reclaimed descriptors
        r = dav(target, "GET", "/dav/demo/offload/large.ics")
        assert r.status == 200 and r.getheader("ETag") == etag
        assert r.data == body
    after = status(target)
    # two 60 KiB responses and one 60 KiB request: dozens of full frames each way
    assert after["bytes_out"] - before["bytes_out"] > 2 * len(body)
    assert after["bytes_in"] - before["bytes_in"] > len(body)
    assert after["frames_in"] - before["frames_in"] > len(body) // 1460
    assert after["rx_dropped"] == before["rx_dropped"] and after["tx_dropped"] == before["tx_dropped"]


def test_apachebench_100_requests_10_concurrent(target):
    apachebench(target, requests=100, concurrency=10)
