"""Bulk transfers through /bulk (firmware/app/appliance/bulk.c), shared by the targets that have it: the
simulated SoC with either NIC and the host build. A test module imports these by name and
provides a `target` fixture (http_checks.Target).

1 MiB of seeded random bytes goes in by PUT and must come back byte for byte by GET: on the
offload NIC that is zero-copy RX into pbufs and TSO chains out of the bulk buffer, on plain
LiteEth CPU copies through the MAC's SRAM slots with software checksums.
"""
import base64
import os
import random

from http_checks import raw_exchange, status

BULK_SIZE = 1024 * 1024
AUTH = {"Authorization": "Basic " + base64.b64encode(b"demo:demo").decode()}
SEED = int(os.environ.get("LITEDAV_SEED", "12345"))


def test_bulk_round_trip_1mib(target):
    payload = random.Random(SEED).randbytes(BULK_SIZE)
    before = status(target)

    conn = target.connection()
    conn.request("PUT", "/bulk", body=payload,
                 headers={**AUTH, "Content-Type": "application/octet-stream"})
    resp = conn.getresponse()
    assert resp.read() == b""
    assert resp.status == 204
    assert resp.getheader("X-Bulk-Length") == str(BULK_SIZE)

    conn.request("GET", "/bulk")
    resp = conn.getresponse()
    body = resp.read()
    assert resp.status == 200
    assert resp.getheader("Content-Length") == str(BULK_SIZE)
    assert len(body) == BULK_SIZE
    assert body == payload, f"first difference at byte {next(i for i, (a, b) in enumerate(zip(body, payload)) if a != b)}"

    conn.request("HEAD", "/bulk")
    resp = conn.getresponse()
    assert resp.status == 200 and resp.read() == b""
    assert resp.getheader("Content-Length") == str(BULK_SIZE)
    conn.close()

    after = status(target)
    busy = after["busy_cycles"] - before["busy_cycles"]
    print(f"\n1 MiB PUT + GET: {busy / (2 * BULK_SIZE):.2f} busy cycles per byte "
          f"(sys_clk {after['sys_clk_hz']} Hz), rx_dropped +{after['rx_dropped'] - before['rx_dropped']}, "
          f"tx_dropped +{after['tx_dropped'] - before['tx_dropped']}")


def test_bulk_refuses_without_credentials_or_too_large(target):
    conn = target.connection()
    conn.request("PUT", "/bulk", body=b"x" * 100)
    resp = conn.getresponse()
    resp.read()
    assert resp.status == 401
    assert resp.getheader("WWW-Authenticate", "").startswith("Basic")
    conn.close()

    # refused from the head alone; the body is never sent and the connection closes
    head = (f"PUT /bulk HTTP/1.1\r\nHost: x\r\nAuthorization: {AUTH['Authorization']}\r\n"
            f"Content-Length: {BULK_SIZE + 1}\r\n\r\n").encode()
    answer = raw_exchange(target, head)
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]

    conn = target.connection()
    conn.request("DELETE", "/bulk")
    resp = conn.getresponse()
    resp.read()
    assert resp.status == 405
    assert "PUT" in resp.getheader("Allow", "")
    conn.close()
