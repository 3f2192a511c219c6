"""firmware/tools/store_image.py, the host-side reader of store images, against the firmware:
litedav-host writes a store file (collections, puts, rewrites, a delete, a collection delete),
and the reader must find exactly what the server answers; damage to a record must show. About 5 s.
"""
import base64
import http.client
import os
import struct
import subprocess
import sys
import zlib

import pytest

from test_host_server import TIMEOUT, HostServer, host_build  # noqa: F401
from http_checks import TOP
from litedav.sim.run import free_port

sys.path.insert(0, os.path.join(TOP, "firmware", "tools"))
import store_image  # noqa: E402

TOOL = os.path.join(TOP, "firmware", "tools", "store_image.py")
BLOCK = 4096  # firmware/ports/host/main.c FLASH_BLOCK
AUTH = {"Authorization": "Basic " + base64.b64encode(b"demo:demo").decode()}


def body(uid, text):
    return ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//LiteDAV//image test//EN\r\nBEGIN:VTODO\r\n"
            f"UID:{uid}\r\nDTSTAMP:20260101T000000Z\r\nSUMMARY:{text}\r\nEND:VTODO\r\nEND:VCALENDAR\r\n").encode()


@pytest.fixture(scope="module")
def written(host_build, tmp_path_factory):
    """The store file after a session, and what the server held at its end."""
    path = str(tmp_path_factory.mktemp("image") / "store.flash")
    srv = HostServer(free_port(), "--store", path)
    srv.wait_ready(timeout=TIMEOUT)
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=TIMEOUT)

    def call(method, url, data=None):
        conn.request(method, url, body=data, headers=AUTH)
        r = conn.getresponse()
        return r.status, r.read(), r.getheader("ETag")

    expected, etags = {}, {}
    assert call("MKCALENDAR", "/dav/demo/a/")[0] == 201
    assert call("MKCALENDAR", "/dav/demo/gone/")[0] == 201
    assert call("PUT", "/dav/demo/gone/x.ics", body("x", "in a deleted calendar"))[0] == 201
    for i in range(6):
        text = body(f"t{i}", "first " + "x" * (i * 700))
        assert call("PUT", f"/dav/demo/a/t{i}.ics", text)[0] == 201
        expected[f"t{i}.ics"] = text
    for i in (1, 4):
        text = body(f"t{i}", f"rewritten {i}")
        assert call("PUT", f"/dav/demo/a/t{i}.ics", text)[0] == 204
        expected[f"t{i}.ics"] = text
    assert call("DELETE", "/dav/demo/a/t2.ics")[0] == 204
    del expected["t2.ics"]
    assert call("DELETE", "/dav/demo/gone/")[0] == 204
    for name in expected:
        etags[name] = call("GET", "/dav/demo/a/" + name)[2]
    conn.close()
    assert srv.stop() == 0
    return path, expected, etags


def test_reader_finds_what_the_server_holds(written):
    path, expected, etags = written
    with open(path, "rb") as f:
        image = store_image.read_image(f.read(), BLOCK)
    assert image["problems"] == []
    assert image["users"] == ["demo"]
    calendars = {p: c for p, c in image["collections"].items() if p.endswith("/dav/demo/a/")}
    assert len(calendars) == 1 and not any(p.endswith("/gone/") for p in image["collections"])
    calendar = next(iter(calendars.values()))
    assert calendar["objects"] == expected
    assert {name: f'"{etag:08x}"' for name, etag in calendar["etags"].items()} == etags
    assert calendar["tombstones"] == ["t2.ics"]


def test_command_line_and_damage(written, tmp_path):
    path = written[0]
    proc = subprocess.run([sys.executable, TOOL, path], capture_output=True, text=True)
    assert proc.returncode == 0 and "store image: ok" in proc.stdout, proc.stdout + proc.stderr
    # a valid CRC over a malformed payload: a USER record whose name length runs past its end
    with open(path, "rb") as f:
        data = bytearray(f.read())
    image = store_image.read_image(bytes(data), BLOCK)
    assert image["log"]["records"] > 10
    damaged = tmp_path / "damaged.flash"
    payload = b"\xf0demo"  # name_len 240, 4 bytes of name
    head = struct.pack("<HBBII", store_image.RECORD_MAGIC, store_image.USER, 1, len(payload), 0x7FFFFFF0)
    record = head + struct.pack("<I", zlib.crc32(payload, zlib.crc32(head))) + payload
    # where the log's writing would continue: the first blank bytes after the last record
    at = image["log"]["end_address"]
    assert at is not None and data[at:at + len(record)] == b"\xff" * len(record)
    data[at:at + len(record)] = record
    damaged.write_bytes(bytes(data))
    proc = subprocess.run([sys.executable, TOOL, str(damaged)], capture_output=True, text=True)
    assert proc.returncode == 1 and "malformed user record" in proc.stdout, proc.stdout + proc.stderr
    proc = subprocess.run([sys.executable, TOOL, str(damaged), "--block-size", "1000"], capture_output=True, text=True)
    assert proc.returncode == 2 and "not a whole number" in proc.stderr, proc.stderr


def test_sealed_blocks(written, tmp_path):
    """The blocks the firmware has written past are sealed (docs/store.md: replay then trusts their
    record headers); a record of a sealed block that fails its CRC is a problem the reader names."""
    with open(written[0], "rb") as f:
        data = bytearray(f.read())
    image = store_image.read_image(bytes(data), BLOCK)
    assert 1 <= image["log"]["sealed_blocks"] < image["log"]["blocks"], image["log"]
    headers = [store_image.block_header(data, b, BLOCK) for b in range(len(data) // BLOCK)]
    sealed = next(h for h in headers if h["sealed"] and h["first"] != store_image.FIRST_NONE)
    at = sealed["block"] * BLOCK + store_image.BLOCK_HEADER + sealed["first"] + store_image.RECORD_HEADER
    data[at] ^= 0x01  # one bit of the first payload byte of a record that starts in it
    image = store_image.read_image(bytes(data), BLOCK)
    assert any("sealed block" in p for p in image["problems"]), image["problems"]
