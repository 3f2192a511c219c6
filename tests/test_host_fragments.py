"""Responses kept rendered and sent by reference (firmware/app/dav/dav_fragments.c), on litedav-host.

- Every REPORT that lists objects, and PROPFIND Depth 1, answers the same bytes (status, fields,
  body) with the cache as through the copying path (`--fragment-cache 0`, what the LM3S9B95 port
  always takes), on office data: calendar-multiget, calendar-query, sync-collection and PROPFIND,
  with property lists that are kept and ones that are not, asked twice (rendered, then from the
  cache).
- Objects deleted, overwritten and compacted away while responses that reference them are in
  flight on a lossy link, with a cache small enough that its memory is wanted again while TCP
  still holds it: every object in every response is, byte for byte, a version of it the server
  acknowledged (the ETag it reported with that version's data), or 404.
About a minute.
"""
import base64
import http.client
import random
import re
import shutil
import socket
import threading
import time
import xml.etree.ElementTree as ET

import pytest

from test_host_server import TIMEOUT, HostServer, host_build, start_server  # noqa: F401
from litedav.bench.office_data import user_items
from litedav.sim.run import free_port

USER, PASSWORD = "demo", "demo"
AUTH = {"Authorization": "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()}
CAL = f"/dav/{USER}/office/"
OTHER = f"/dav/{USER}/other/"
NS = 'xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"'
ITEMS = user_items("user000")[:120]
STATUS_LINE = re.compile(r"^(\w+): (\d+)$", re.M)


def request(port, method, path, body=None, headers=None, timeout=TIMEOUT):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        h = dict(AUTH)
        h.update(headers or {})
        conn.request(method, path, body=body.encode() if isinstance(body, str) else body, headers=h)
        r = conn.getresponse()
        return r.status, r.getheaders(), r.read()
    finally:
        conn.close()


def status(port):
    return {k: int(v) for k, v in STATUS_LINE.findall(request(port, "GET", "/")[2].decode())}


def put(port, path, text):
    st, headers, body = request(port, "PUT", path, text, {"Content-Type": "text/calendar"})
    assert st in (201, 204), (path, st, body)
    return dict(headers)["ETag"]


def multiget(props, hrefs):
    return (f'<C:calendar-multiget {NS}><D:prop>{props}</D:prop>'
            + "".join(f"<D:href>{h}</D:href>" for h in hrefs) + "</C:calendar-multiget>")


def query(props, comp):
    return (f'<C:calendar-query {NS}><D:prop>{props}</D:prop><C:filter><C:comp-filter name="VCALENDAR">'
            f'<C:comp-filter name="{comp}"/></C:comp-filter></C:filter></C:calendar-query>')


def sync_collection(props):
    return f'<D:sync-collection {NS}><D:sync-token/><D:sync-level>1</D:sync-level><D:prop>{props}</D:prop></D:sync-collection>'


HREFS = [CAL + name for name, _, _ in ITEMS]
# (REPORT body, kept): kept ones name only properties of an object's content
REPORTS = [
    (multiget("<D:getetag/><C:calendar-data/>", HREFS), True),
    (multiget("<C:calendar-data/><D:getetag/>", HREFS[::3]), True),
    (multiget("<D:getetag/><D:getcontenttype/><D:getcontentlength/><D:resourcetype/>", HREFS), True),
    (multiget("<D:getetag/><C:calendar-data/>",
              HREFS[:5] + [CAL + "missing.ics", "/dav/someone/office/x.ics", CAL + "a%20b.ics", OTHER + "o.ics"]), True),
    (multiget("<D:getetag/><D:displayname/><C:calendar-data/>", HREFS[:20]), False),
    (multiget('<D:getetag/><C:calendar-data><C:comp name="VCALENDAR"/></C:calendar-data>', HREFS[:20]), False),
    (multiget("<D:getetag/><X:unknown xmlns:X=\"urn:x-test\"/><C:calendar-data/>", HREFS[:20]), False),
    (f'<C:calendar-multiget {NS}><D:allprop/>' + "".join(f"<D:href>{h}</D:href>" for h in HREFS[:10])
     + "</C:calendar-multiget>", False),
    (query("<D:getetag/><C:calendar-data/>", "VEVENT"), True),
    (query("<D:getetag/>", "VTODO"), True),
    (sync_collection("<D:getetag/><C:calendar-data/>"), True),
    (sync_collection("<D:getetag/>"), True),
]
# PROPFIND Depth 1 of the calendar: (body, kept); a member's response is kept, and copied
PROPFINDS = [
    (f'<D:propfind {NS}><D:prop><D:getetag/><D:sync-token/></D:prop></D:propfind>', True),
    (f'<D:propfind {NS}><D:prop><D:resourcetype/><D:getcontenttype/><D:getetag/></D:prop></D:propfind>', True),
    (f'<D:propfind {NS}><D:prop><D:getetag/><D:displayname/></D:prop></D:propfind>', False),
    (f'<D:propfind {NS}><D:allprop/></D:propfind>', False),
]


def make_store(path, *args):
    """A store with the office's items of one user and a second calendar."""
    srv = HostServer(free_port(), "--store", path, *args)
    try:
        srv.wait_ready(timeout=TIMEOUT)
        for coll in (CAL, OTHER):
            assert request(srv.port, "MKCALENDAR", coll)[0] == 201
        for name, _, text in ITEMS:
            put(srv.port, CAL + name, text)
        put(srv.port, OTHER + "o.ics", ITEMS[0][2].replace("UID:", "UID:other-"))
    finally:
        assert srv.stop() == 0
    return path


@pytest.fixture(scope="module")
def store_image(host_build, tmp_path_factory):
    return make_store(str(tmp_path_factory.mktemp("fragments") / "store.img"))


@pytest.fixture(scope="module")
def small_store_image(host_build, tmp_path_factory):
    """The same in a 1 MiB store: a few rounds of overwrites wrap its log and compact it."""
    return make_store(str(tmp_path_factory.mktemp("fragments") / "small.img"), "--store-size", "1")


def serve(image, tmp_path, name, *args):
    copy = str(tmp_path / name)
    shutil.copy(image, copy)
    srv = start_server("--store", copy, *args)
    return srv


def test_kept_responses_are_the_copying_paths_bytes(store_image, tmp_path):
    kept = serve(store_image, tmp_path, "kept.img")
    copying = serve(store_image, tmp_path, "copying.img", "--fragment-cache", "0")
    try:
        assert "fragments_capacity" not in status(copying.port)
        for method, body, is_kept in [("REPORT", *r) for r in REPORTS] + [("PROPFIND", *p) for p in PROPFINDS]:
            depth = {"Depth": "1"} if "multiget" not in body else {}
            want = request(copying.port, method, CAL, body, {"Content-Type": "application/xml", **depth})
            assert want[0] == 207, want
            before = status(kept.port)
            for round_ in ("rendered", "from the cache"):
                got = request(kept.port, method, CAL, body, {"Content-Type": "application/xml", **depth})
                assert got == want, (round_, body[:120])
            after = status(kept.port)
            if is_kept:
                assert after["fragments_hits"] > before["fragments_hits"], body[:120]
            else:
                assert after["fragments_rendered"] == before["fragments_rendered"], body[:120]
                assert after["fragments_hits"] == before["fragments_hits"], body[:120]
        # a changed object is rendered again, and the responses still agree
        for srv in (kept, copying):
            put(srv.port, HREFS[1], ITEMS[1][2].replace("SUMMARY:", "SUMMARY:changed "))
            assert request(srv.port, "DELETE", HREFS[2])[0] == 204
        body = REPORTS[0][0]
        assert request(kept.port, "REPORT", CAL, body) == request(copying.port, "REPORT", CAL, body)
        body, depth = PROPFINDS[0][0], {"Depth": "1"}
        assert request(kept.port, "PROPFIND", CAL, body, depth) == request(copying.port, "PROPFIND", CAL, body, depth)
    finally:
        assert kept.stop() == 0
        assert copying.stop() == 0


def parse_objects(body):
    """href -> (status, etag, calendar-data) of each DAV:response."""
    out = {}
    for resp in ET.fromstring(body).findall("{DAV:}response"):
        href = resp.findtext("{DAV:}href")
        etag = resp.findtext(".//{DAV:}getetag")
        data = resp.findtext(".//{urn:ietf:params:xml:ns:caldav}calendar-data")
        st = resp.findtext("{DAV:}status") or resp.findtext(".//{DAV:}status")
        out[href] = (st, etag, data)
    return out


def slow_report(port, body, pause, result):
    """A REPORT whose response the client leaves unread for a while (a small receive buffer, so
    the server's TCP keeps most of it queued), then reads whole."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(TIMEOUT)
    s.connect(("127.0.0.1", port))
    data = body.encode()
    s.sendall((f"REPORT {CAL} HTTP/1.1\r\nHost: x\r\nAuthorization: {AUTH['Authorization']}\r\n"
               f"Content-Type: application/xml\r\nContent-Length: {len(data)}\r\n\r\n").encode() + data)
    first = s.recv(2048)
    time.sleep(pause)
    chunks = [first]
    while True:
        b = s.recv(65536)
        if not b:
            break
        chunks.append(b)
        raw = b"".join(chunks)
        if raw.endswith(b"\r\n0\r\n\r\n"):
            break
    s.close()
    result.append(b"".join(chunks))


def dechunk(raw):
    head, _, rest = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 207"), head[:200]
    body = b""
    while True:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return body
        body += rest[:size]
        assert rest[size:size + 2] == b"\r\n"
        rest = rest[size + 2:]


def test_changes_while_responses_are_in_flight_on_a_lossy_link(small_store_image, tmp_path):
    """A 64 KiB cache against ~180 KB responses: its memory is wanted again while
    responses referencing it are queued, unacknowledged or being retransmitted."""
    srv = serve(small_store_image, tmp_path, "lossy.img", "--fragment-cache", "64", "--drop-every", "11",
                "--store-size", "1")
    rng = random.Random(28)
    # every version the server acknowledged: etag -> text
    versions = {}
    for name, _, text in ITEMS:
        st, headers, body = request(srv.port, "GET", CAL + name)
        assert st == 200
        versions[dict(headers)["ETag"]] = body.decode()
    # the log nearly full, so that the overwrites below compact it
    for n in range(10):
        for name, _, text in ITEMS:
            new = text.replace("SUMMARY:", f"SUMMARY:fill{n} ")
            versions[put(srv.port, CAL + name, new)] = new
    body = multiget("<D:getetag/><C:calendar-data/>", HREFS)
    compactions = status(srv.port)["store_compactions"]
    try:
        for round_ in range(3):
            results, readers = [], []
            for i in range(3):
                t = threading.Thread(target=slow_report, args=(srv.port, body, 1.0 + i * 0.3, results))
                t.start()
                readers.append(t)
            time.sleep(0.3)
            # meanwhile: overwrites (the log wraps and compacts), deletes, objects put back, and
            # another client's REPORT that churns the cache
            for n in range(2):
                for name, _, text in ITEMS:
                    new = text.replace("SUMMARY:", f"SUMMARY:r{round_}.{n} ")
                    versions[put(srv.port, CAL + name, new)] = new
            deleted = rng.sample(ITEMS, 10)
            for name, _, _ in deleted:
                assert request(srv.port, "DELETE", CAL + name)[0] == 204
            assert request(srv.port, "REPORT", CAL, REPORTS[1][0])[0] == 207
            for name, _, text in deleted:
                versions[put(srv.port, CAL + name, text)] = text
            for t in readers:
                t.join(TIMEOUT)
            assert len(results) == 3
            for raw in results:
                objects = parse_objects(dechunk(raw))
                assert sorted(objects) == sorted(HREFS)
                for href, (st, etag, data) in objects.items():
                    if st and " 404 " in st:
                        continue
                    assert etag in versions, (href, etag)
                    assert data == versions[etag], (href, etag)
        counters = status(srv.port)
        assert counters["store_compactions"] > compactions, counters
        assert counters["fragments_evicted"] > 0 and counters["fragments_hits"] > 0, counters
        assert counters["fragments_in_flight_refusals"] > 0, counters
    finally:
        assert srv.stop() == 0
