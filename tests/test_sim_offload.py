"""End-to-end on the SoC with the offload NIC (docs/nic.md): the same firmware, with the
offload_netif driver (zero-copy DMA rings, checksums in the NIC), serves the shared HTTP checks,
and a 60 KiB calendar object goes in by PUT and comes back byte for byte by GET, so frames of
many segments cross both rings (RX: pbufs filled by DMA; TX: one descriptor per pbuf).

The SoC is a second Verilator build (build/sim-offload), booted once for this module.

Objects of random sizes make round trips too: 2 of at most 8 KiB in the fast mode; LITEDAV_FUZZ=1
runs LITEDAV_FUZZ_COUNT of them (default 20) of up to 60 KiB (seed LITEDAV_SEED, default 12345).
"""
import base64
import http.client
import os
import random

import pytest

from http_checks import Target, status
from sim_boot import booted
from http_checks import (  # noqa: F401  (collected here, in this order)
    test_status_page,
    test_static_file_and_head,
    test_parallel_keepalive_clients,
    test_pipelined_requests,
    test_malformed_request_gets_error_and_server_keeps_serving,
)
from bulk_checks import (  # noqa: F401  (1 MiB through /bulk: zero-copy RX, TSO out)
    test_bulk_round_trip_1mib,
    test_bulk_refuses_without_credentials_or_too_large,
)

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT = 120  # wall seconds: the simulator runs far slower than real time
SIM_CLOCK_HZ = 125_000_000
AUTH = {"Authorization": "Basic " + base64.b64encode(b"demo:demo").decode()}
SEED = int(os.environ.get("LITEDAV_SEED", "12345"))
FUZZ = os.environ.get("LITEDAV_FUZZ", "") not in ("", "0")
ROUND_TRIPS = int(os.environ.get("LITEDAV_FUZZ_COUNT", "20")) if FUZZ else 2
ROUND_TRIP_MAX_SIZE = 60 * 1024 if FUZZ else 8 * 1024  # PUTs cost flash programming time


@pytest.fixture(scope="module")
def offload_appliance():
    """The simulated SoC with the offload NIC, built in build/sim-offload and booted."""
    from litedav.sim.run import build, default_build_dir
    build_dir = build(default_build_dir("offload"), nic="offload")
    with open(os.path.join(build_dir, "software", "include", "generated", "soc.h")) as f:
        assert "LITEDAV_NIC_OFFLOAD" in f.read(), "build/sim-offload is not the offload SoC"
    yield from booted(build_dir, "offload simulator", fresh_flash=True)


@pytest.fixture(scope="module")
def target(offload_appliance):
    return Target(port=offload_appliance.port, cycles_hz=SIM_CLOCK_HZ, timeout=TIMEOUT)


def folded(name, value):
    """An iCalendar content line folded at 75 octets (RFC 5545 3.1)."""
    line = f"{name}:{value}"
    parts = [line[:75]] + [" " + line[i:i + 74] for i in range(75, len(line), 74)]
    return "\r\n".join(parts) + "\r\n"


def large_event(size, seed=SEED):
    """A VEVENT of about `size` bytes: many seeded COMMENT properties (RFC 5545 3.8.1.4 allows
    any number), so no two segments of the object carry the same bytes."""
    rng = random.Random(seed)
    head = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//offload//EN\r\nBEGIN:VEVENT\r\n"
            f"UID:offload-{seed}@example\r\nDTSTAMP:20261122T090000Z\r\nDTSTART:20261123T090000Z\r\n"
            "DTEND:20261123T100000Z\r\nSUMMARY:Large\r\n")
    tail = "END:VEVENT\r\nEND:VCALENDAR\r\n"
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    comments = []
    budget = size - len(head) - len(tail)
    while True:
        text = " ".join("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(rng.randint(5, 150)))
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


def test_random_size_objects_round_trip(target):
    """Objects of seeded random sizes (frame boundaries fall everywhere), each PUT then GET."""
    rng = random.Random(SEED + 1)
    assert dav(target, "MKCALENDAR", "/dav/demo/sizes/").status == 201
    for n in range(ROUND_TRIPS):
        body = large_event(rng.randint(400, ROUND_TRIP_MAX_SIZE), seed=rng.randrange(1 << 30))
        path = f"/dav/demo/sizes/{n}.ics"
        r = dav(target, "PUT", path, body, {"Content-Type": "text/calendar"})
        assert r.status == 201, (n, len(body), r.data)
        r = dav(target, "GET", path)
        assert r.status == 200 and r.data == body, (n, len(body))
    print(f"{ROUND_TRIPS} round trips (seed {SEED})")


BURST_CLIENTS = int(os.environ.get("LITEDAV_BURST_CLIENTS", "100"))
BURST_BODY_PAD = 15 * 1024
BURST_TIMEOUT = 900


def test_request_bodies_beyond_the_receive_pool_keep_flowing(target):
    """100 clients send a 16 KB calendar-multiget at once. Eight run (DAV_CTX_MAX); the others
    wait with their bodies held in receive pbufs, more than PBUF_POOL keeps beside the RX ring.
    Before offload_netif.c copied frames out of the ring when the pool ran dry, the ring emptied,
    every frame was dropped (the ACKs the running responses needed among them) and the server
    stopped for good, as in the 100-client office run. Every request must be answered, some frames
    must have taken the copy path (else this test does not reach the pool's end), none lost."""
    import threading
    assert dav(target, "MKCALENDAR", "/dav/demo/burst/").status == 201
    event = large_event(600, seed=7)
    assert dav(target, "PUT", "/dav/demo/burst/a.ics", event, {"Content-Type": "text/calendar"}).status == 201
    # an XML comment pads the body: many frames to hold, little for the server to render
    body = ('<?xml version="1.0"?><!--' + "x" * BURST_BODY_PAD + '--><C:calendar-multiget xmlns:D="DAV:" '
            'xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop><D:getetag/><C:calendar-data/></D:prop>'
            '<D:href>/dav/demo/burst/a.ics</D:href><D:href>/dav/demo/burst/none.ics</D:href>'
            '</C:calendar-multiget>').encode()
    assert len(body) < target.xml_body_max
    before = status(target)
    # wall seconds: the last of 100 waits for 92 before it, refused data retransmitted by the
    # host's TCP (slirp) with its backoff
    conns = [http.client.HTTPConnection("127.0.0.1", target.port, timeout=BURST_TIMEOUT)
             for _ in range(BURST_CLIENTS)]
    for c in conns:
        c.connect()
    start = threading.Barrier(BURST_CLIENTS)
    results = [None] * BURST_CLIENTS

    def client(i):
        try:
            start.wait()
            conns[i].request("REPORT", "/dav/demo/burst/", body=body,
                             headers={**AUTH, "Depth": "1", "Content-Type": "application/xml"})
            r = conns[i].getresponse()
            results[i] = (r.status, r.read())
        except Exception as e:  # noqa: BLE001 - reported below
            results[i] = (None, repr(e).encode())
        finally:
            conns[i].close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(BURST_CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    failed = [(i, r) for i, r in enumerate(results) if r[0] != 207 or event.split(b"\r\n")[4] not in r[1]]
    assert not failed, f"{len(failed)} of {BURST_CLIENTS} unanswered, e.g. {failed[0][0]}: {failed[0][1][:200]!r}"
    after = status(target)
    copied = after["rx_copied_pool_empty"] - before["rx_copied_pool_empty"]
    print(f"\n{BURST_CLIENTS} multigets of {len(body)} bytes at once: all answered; frames copied out of "
          f"the ring with PBUF_POOL empty: {copied}, dropped for want of any buffer: "
          f"{after['rx_dropped_pool_empty'] - before['rx_dropped_pool_empty']}, ring refills short: "
          f"{after['rx_refill_short'] - before['rx_refill_short']}")
    assert copied > 0, "the burst never emptied PBUF_POOL: the test no longer reaches what it tests"
