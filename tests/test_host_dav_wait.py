"""/dav/ requests beyond the request contexts wait for one, on litedav-host (the whole firmware,
ASan/UBSan; the same app code as the LiteX SoC, which has the same DAV_CTX_MAX).

Before, a request that found all DAV_CTX_MAX contexts taken was answered 503 at once: 20 CalDAV
clients over a lossy link got `503 All request contexts are busy` (issue 8). Now it waits, its
connection reading nothing meanwhile (httpd.h HTTPD_BEGIN_WAIT), oldest first, and takes the next
free context (firmware/app/dav/dav_context.c: dav_ctx_acquire, dav_poll). The wait is bounded:
503 with Retry-After when DAV_CTX_WAIT_MAX requests already wait, or after dav_ctx_wait_ms
(--dav-wait-ms here).

Contexts are held deterministically: a PUT told "100 Continue" keeps its context until its body
comes. About 15 s.
"""
import http.client
import os
import re
import subprocess
import socket
import struct
import threading
import time
import xml.etree.ElementTree as ET

import pytest

from caldav_checks import APP_CONFIG, Dav, calendar, ics_of_size, put
from caldav_report_checks import dav_head, read_response
from http_checks import Target, status
from test_host_server import (HOST_CYCLES_HZ, PORT_DIR, SANITIZER_REPORT, TIMEOUT, TOP,  # noqa: F401
                              host_build, start_server)
from litedav.sim.run import free_port


def config_value(name):
    with open(APP_CONFIG) as f:
        m = re.search(rf"^#define {name} (\d+)u?\b", f.read(), re.M)
    assert m, f"{name} not in {APP_CONFIG}"
    return int(m.group(1))


CTX_MAX = config_value("DAV_CTX_MAX")
WAIT_MAX = config_value("DAV_CTX_WAIT_MAX")
SHORT_WAIT_MS = 1500


def start(*args, server=None):
    srv = start_server(*args, server=server)
    return srv


def stop(srv):
    srv.stop()
    console = "\n".join(srv.console)
    assert not SANITIZER_REPORT.search(console), console[-4000:]


@pytest.fixture(scope="module")
def target(host_build):
    srv = start()
    yield Target(port=srv.port, cycles_hz=HOST_CYCLES_HZ, timeout=TIMEOUT)
    stop(srv)


@pytest.fixture(scope="module")
def short_wait_target(host_build):
    srv = start("--dav-wait-ms", str(SHORT_WAIT_MS))
    yield Target(port=srv.port, cycles_hz=HOST_CYCLES_HZ, timeout=TIMEOUT)
    stop(srv)


class Holders:
    """CTX_MAX PUTs that each hold a context: head sent, 100 Continue received, body not yet."""

    def __init__(self, target, cal, label="held"):
        self.target, self.sockets = target, []
        self.paths = [f"{cal}{label}-{i}.ics" for i in range(CTX_MAX)]
        self.bodies = [ics_of_size(f"{label}-{i}", 300 + 7 * i) for i in range(CTX_MAX)]
        for path, body in zip(self.paths, self.bodies):
            s = socket.create_connection(("127.0.0.1", target.port), timeout=target.timeout)
            self.sockets.append(s)
            s.sendall(dav_head("PUT", path, len(body), "Content-Type: text/calendar\r\n"
                                                       "Expect: 100-continue\r\n"))
            assert read_response(s)[0] == "HTTP/1.1 100 Continue"

    def release(self):
        for s, body in zip(self.sockets, self.bodies):
            s.sendall(body.encode())
        for s in self.sockets:
            line, headers, _ = read_response(s)
            assert line == "HTTP/1.1 201 Created", (line, headers)

    def close(self):
        for s in self.sockets:
            s.close()


def wait_for(target, field, value, seconds=10):
    deadline = time.monotonic() + seconds
    while True:
        page = status(target)
        if page[field] == value:
            return page
        assert time.monotonic() < deadline, f"{field} is {page[field]}, not {value}: {page}"
        time.sleep(0.05)


def request_thread(target, method, path, body, headers, results, key):
    def run():
        conn = http.client.HTTPConnection("127.0.0.1", target.port, timeout=target.timeout)
        try:
            conn.request(method, path, body=body.encode() if body else None,
                         headers={"Authorization": Dav(target).auth, **headers})
            r = conn.getresponse()
            results[key] = (r.status, dict(r.getheaders()), r.read())
        except Exception as e:  # checked by the main thread
            results[key] = e
        finally:
            conn.close()
    t = threading.Thread(target=run)
    t.start()
    return t


MULTIGET = ('<C:calendar-multiget xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop>'
            '<D:getetag/><C:calendar-data/></D:prop><D:href>{href}</D:href></C:calendar-multiget>')


def test_twenty_clients_beyond_the_contexts_all_served(target):
    """CTX_MAX clients hold every context; 12 more send whole requests (PUT, GET, REPORT,
    DELETE): all 12 wait (the status page counts them, none is answered), and once the holders'
    bodies come, every one of the 20 is answered with its right result, none with 503, and the
    contexts and the queue are back to empty."""
    owner = Dav(target)
    with calendar(owner, "wait") as cal:
        seeded = {}
        for i in range(6):
            body = ics_of_size(f"seed-{i}", 400 + 50 * i)
            r = put(owner, f"{cal}seed-{i}.ics", body)
            assert r.status == 201, r.status
            seeded[f"{cal}seed-{i}.ics"] = (body, r.getheader("ETag"))
        owner.close()
        before = status(target)
        holders = Holders(target, cal)
        results, threads, expect = {}, [], {}
        try:
            assert status(target)["dav_ctx_used"] == CTX_MAX
            new_bodies = {}
            for i in range(12):
                kind = ("PUT", "GET", "REPORT", "DELETE")[i % 4]
                seed_path = f"{cal}seed-{i // 4 + (i % 4 == 3) * 3}.ics"
                if kind == "PUT":
                    path = f"{cal}late-{i}.ics"
                    new_bodies[path] = ics_of_size(f"late-{i}", 350 + 11 * i)
                    args = ("PUT", path, new_bodies[path], {"Content-Type": "text/calendar"})
                elif kind == "GET":
                    args = ("GET", seed_path, None, {})
                elif kind == "REPORT":
                    args = ("REPORT", cal, MULTIGET.format(href=seed_path),
                            {"Depth": "1", "Content-Type": "application/xml"})
                else:
                    args = ("DELETE", seed_path, None, {"If-Match": seeded[seed_path][1]})
                expect[i] = (kind, seed_path if kind == "REPORT" else args[1])
                threads.append(request_thread(target, *args, results, i))
            page = wait_for(target, "dav_waiting", 12)
            assert page["dav_waited"] == before["dav_waited"] + 12, (before, page)
            time.sleep(0.5)
            assert not results, f"answered while every context was held: {results}"
            holders.release()
            for t in threads:
                t.join(target.timeout)
        finally:
            holders.close()
        for i, (kind, path) in expect.items():
            got = results.get(i)
            assert isinstance(got, tuple), (kind, path, got)
            code, headers, data = got
            if kind == "PUT":
                assert code == 201, (kind, path, code, data)
            elif kind == "GET":
                assert code == 200 and data == seeded[path][0].encode(), (kind, path, code)
            elif kind == "REPORT":
                assert code == 207, (kind, path, code)
                text = ET.fromstring(data).find(".//{urn:ietf:params:xml:ns:caldav}calendar-data").text
                assert text.replace("\r\n", "\n") == seeded[path][0].replace("\r\n", "\n")
            else:
                assert code == 204, (kind, path, code, data)
        after = wait_for(target, "dav_ctx_used", 0)
        assert after["dav_waiting"] == 0 and after["dav_refused"] == before["dav_refused"], after
        assert after["responses_5xx"] == before["responses_5xx"], (before, after)
        check = Dav(target)
        for path, body in list(new_bodies.items()) + list(zip(holders.paths, holders.bodies)):
            r = check("GET", path)
            assert r.status == 200 and r.data == body.encode(), (path, r.status)
        check.close()


def test_a_waiting_client_that_resets_leaves_the_queue(target):
    """A waiting client that resets its connection leaves the queue (httpd calls abort()): the
    others are still served in turn and no context stays taken."""
    dav = Dav(target)
    with calendar(dav, "leave") as cal:
        holders = Holders(target, cal)
        waiters = []
        try:
            for i in range(3):
                s = socket.create_connection(("127.0.0.1", target.port), timeout=target.timeout)
                s.sendall(dav_head("GET", f"{cal}{'held-0' if i != 1 else 'nothing'}.ics", 0))
                waiters.append(s)
                wait_for(target, "dav_waiting", i + 1)
            waiters[1].setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            waiters[1].close()  # RST
            wait_for(target, "dav_waiting", 2)
            holders.release()
            for s in (waiters[0], waiters[2]):
                line, _, body = read_response(s)
                assert line == "HTTP/1.1 200 OK" and body == holders.bodies[0].encode(), line
        finally:
            holders.close()
            for s in waiters:
                s.close()
        page = wait_for(target, "dav_ctx_used", 0)
        assert page["dav_waiting"] == 0, page
        for path in holders.paths:
            assert dav("DELETE", path).status == 204


def variant_target(folder, defs):
    """litedav-host built with SERVER_DEFS=defs in build/<folder> (its own, so the default
    build is untouched), started; a generator for module fixtures to yield from."""
    out = os.path.join(TOP, "build", folder)
    proc = subprocess.run(["make", "-C", PORT_DIR, "OUT=" + out, "SERVER_DEFS=" + defs,
                           f"-j{min(os.cpu_count() or 2, 2)}", "server"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    assert proc.returncode == 0, "litedav-host build failed:\n" + proc.stdout[-6000:]
    srv = start(server=os.path.join(out, "litedav-host"))
    yield Target(port=srv.port, cycles_hz=HOST_CYCLES_HZ, timeout=TIMEOUT)
    stop(srv)


SMALL_SCRATCH = 1024  # below one TCP segment's payload: any body piece is larger than the stash


@pytest.fixture(scope="module")
def small_scratch_target(host_build):
    """litedav-host built with HTTPD_SCRATCH_MAX = SMALL_SCRATCH, in a folder of its own."""
    yield from variant_target(f"host-scratch{SMALL_SCRATCH}", f"-DHTTPD_SCRATCH_MAX={SMALL_SCRATCH}")


def test_a_body_piece_larger_than_the_stash_waits_for_the_writer(small_scratch_target):
    """A PUT that meets a busy store writer keeps the piece it got in the scratch buffer
    (HTTPD_SCRATCH_MAX) and waits; httpd must never hand it a larger piece. On the SoC a waiting
    connection's bytes are one heap copy of up to HTTPD_WAIT_RX_MAX, above the scratch when lwIP
    delivers reordered segments together: the lossy-link soak's PUTs answered 503 with
    dav_refused 0. Here the scratch is smaller than one segment, so every piece shows it: the
    late PUT must wait for the writer and be stored (201), not be answered 503."""
    target = small_scratch_target
    dav = Dav(target)
    with calendar(dav, "bigpiece") as cal:
        before = status(target)
        holder_path, holder_body = f"{cal}holder.ics", ics_of_size("holder", 600).encode()
        late_path, late_body = f"{cal}late.ics", ics_of_size("late", 3 * SMALL_SCRATCH)
        holder = socket.create_connection(("127.0.0.1", target.port), timeout=target.timeout)
        late = None
        try:
            holder.sendall(dav_head("PUT", holder_path, len(holder_body), "Content-Type: text/calendar\r\n"
                                                                         "Expect: 100-continue\r\n"))
            assert read_response(holder)[0] == "HTTP/1.1 100 Continue"
            holder.sendall(holder_body[:100])  # takes the store's writer and keeps it
            wait_for(target, "dav_ctx_used", 1)
            late = socket.create_connection(("127.0.0.1", target.port), timeout=target.timeout)
            late.sendall(dav_head("PUT", late_path, len(late_body), "Content-Type: text/calendar\r\n")
                         + late_body.encode())
            wait_for(target, "dav_ctx_used", 2)
            time.sleep(0.3)  # its body has met the busy writer
            holder.sendall(holder_body[100:])
            line, _, body = read_response(holder)
            assert line == "HTTP/1.1 201 Created", (line, body)
            line, _, body = read_response(late)
            assert line == "HTTP/1.1 201 Created", (line, body)
        finally:
            holder.close()
            if late:
                late.close()
        r = dav("GET", late_path)
        assert r.status == 200 and r.data == late_body.encode(), r.status
        for path in (late_path, holder_path):
            assert dav("DELETE", path).status == 204
        assert status(target)["responses_5xx"] == before["responses_5xx"]


SHORT_IDLE_MS = 2000  # httpd's idle timeout (HTTPD_IDLE_TIMEOUT_MS, 60 s on the appliance)


@pytest.fixture(scope="module")
def short_idle_target(host_build):
    """litedav-host built with HTTPD_IDLE_TIMEOUT_MS = SHORT_IDLE_MS, in a folder of its own."""
    yield from variant_target(f"host-idle{SHORT_IDLE_MS}", f"-DHTTPD_IDLE_TIMEOUT_MS={SHORT_IDLE_MS}")


def test_requests_waiting_for_the_writer_are_not_timed_out(short_idle_target):
    """A connection whose whole request the server holds while the store's writer is busy (a
    PUT's body piece stashed, its window shut; a DELETE's end deferred) is waiting for the
    server, not idle: it must be answered once the writer is free, however long that took, not
    reset by httpd's idle timeout. Before, it was reset after HTTPD_IDLE_TIMEOUT_MS; in the
    lossy-link soak (writer waits behind retransmissions) a PUT went unanswered for 900 s
    when that reset was lost. Here a holder keeps the writer for three idle timeouts, sending
    a byte of its body now and then (it is not idle itself)."""
    target = short_idle_target
    dav = Dav(target)
    with calendar(dav, "idlewait") as cal:
        doomed_path = f"{cal}doomed.ics"
        assert put(dav, doomed_path, ics_of_size("doomed", 400)).status == 201
        dav.close()  # its idle keep-alive connection would time out meanwhile (rightly; reopened below)
        before = status(target)
        holder_path, holder_body = f"{cal}holder.ics", ics_of_size("holder", 600).encode()
        late_path, late_body = f"{cal}late.ics", ics_of_size("late", 500)
        holder = socket.create_connection(("127.0.0.1", target.port), timeout=target.timeout)
        late = deleter = None
        try:
            holder.sendall(dav_head("PUT", holder_path, len(holder_body), "Content-Type: text/calendar\r\n"
                                                                         "Expect: 100-continue\r\n"))
            assert read_response(holder)[0] == "HTTP/1.1 100 Continue"
            sent = 100
            holder.sendall(holder_body[:sent])  # takes the store's writer and keeps it
            wait_for(target, "dav_ctx_used", 1)
            late = socket.create_connection(("127.0.0.1", target.port), timeout=target.timeout)
            late.sendall(dav_head("PUT", late_path, len(late_body), "Content-Type: text/calendar\r\n")
                         + late_body.encode())
            deleter = socket.create_connection(("127.0.0.1", target.port), timeout=target.timeout)
            deleter.sendall(dav_head("DELETE", doomed_path, 0))
            wait_for(target, "dav_ctx_used", 3)
            deadline = time.monotonic() + 3 * SHORT_IDLE_MS / 1000
            while time.monotonic() < deadline:
                time.sleep(0.25)
                holder.sendall(holder_body[sent:sent + 1])
                sent += 1
            assert status(target)["conns_timed_out"] == before["conns_timed_out"], "a waiting connection timed out"
            holder.sendall(holder_body[sent:])
            line, _, body = read_response(holder)
            assert line == "HTTP/1.1 201 Created", (line, body)
            line, _, body = read_response(late)
            assert line == "HTTP/1.1 201 Created", (line, body)
            line, _, body = read_response(deleter)
            assert line == "HTTP/1.1 204 No Content", (line, body)
        finally:
            for s in (holder, late, deleter):
                if s:
                    s.close()
        r = dav("GET", late_path)
        assert r.status == 200 and r.data == late_body.encode(), r.status
        assert dav("GET", doomed_path).status == 404
        for path in (late_path, holder_path):
            assert dav("DELETE", path).status == 204


WAIT_RX_SMALL = 512  # HTTPD_WAIT_RX_MAX: below one segment of the request below


@pytest.fixture(scope="module")
def small_wait_rx_target(host_build):
    """litedav-host with a pool of connection states that every connection waits for (as on the
    SoC between requests, HTTPD_CONNS_MAX) and a waiting record's copy limit below one segment,
    in a folder of its own."""
    yield from variant_target(f"host-waitrx{WAIT_RX_SMALL}",
                              f"-DHTTPD_CONNS_MAX=4 -DHTTPD_CONNS_RESERVE=4 -DHTTPD_WAIT_RX_MAX={WAIT_RX_SMALL}")


def test_a_first_piece_beyond_the_waiting_copy_limit_is_served(small_wait_rx_target):
    """A connection without a state waits as a record that copies what arrives, up to
    HTTPD_WAIT_RX_MAX; beyond, lwIP keeps the data to offer it again to the real connection.
    When the first piece a waiting connection gets is already beyond the limit (on the SoC: the
    offload NIC's merged frames, or segments lwIP releases together after a reordering), the
    record must still queue for a state; before, it did not, the refused data was offered to
    the same record for ever, and the client, its request acknowledged, waited 900 s (the
    malformed-traffic soak on the offload SoC)."""
    target = small_wait_rx_target
    dav = Dav(target)
    with calendar(dav, "bigfirst") as cal:
        dav.close()
        path, body = f"{cal}big.ics", ics_of_size("big", 3 * WAIT_RX_SMALL)
        s = socket.create_connection(("127.0.0.1", target.port), timeout=10)
        try:
            s.sendall(dav_head("PUT", path, len(body), "Content-Type: text/calendar\r\n") + body.encode())
            line, _, answer = read_response(s)
            assert line == "HTTP/1.1 201 Created", (line, answer)
        finally:
            s.close()
        r = dav("GET", path)
        assert r.status == 200 and r.data == body.encode(), r.status
        assert dav("DELETE", path).status == 204


SMALL_CONNS = 2  # HTTPD_CONNS_MAX of the LM3S9B95 port's QEMU build (4 on the chip)


@pytest.fixture(scope="module")
def small_build_target(host_build):
    """litedav-host built like the LM3S9B95 port (app_port_config.h): SMALL_CONNS connection
    states that every connection waits for between requests, one /dav/ request context,
    DAV_CTX_WAIT_MAX 4; with the idle timeout at SHORT_IDLE_MS; in a folder of its own."""
    yield from variant_target(f"host-conns{SMALL_CONNS}-idle{SHORT_IDLE_MS}",
                              f"-DHTTPD_CONNS_MAX={SMALL_CONNS} -DHTTPD_CONNS_RESERVE={SMALL_CONNS} "
                              f"-DDAV_CTX_MAX=1 -DDAV_CTX_WAIT_MAX=4 -DHTTPD_IDLE_TIMEOUT_MS={SHORT_IDLE_MS}")


def test_requests_waiting_for_a_connection_state_are_not_timed_out(small_build_target):
    """On a small build (HTTPD_CONNS_MAX states) a connection whose request arrives while every
    state is taken waits as a small record (conn_admission.c struct waiting) until one is free. Its
    client has sent its whole request and waits for the server: like a request the server holds
    (675c9bc), it must be answered once a state frees, however long that takes, not reset by
    httpd's idle timeout (before, waiting_on_poll counted its wait toward the timeout). Here a
    PUT holds the request context and the store's writer for three idle timeouts (sending a
    byte of its body now and then: not idle itself), a second PUT holds the other state while
    it waits for the context, and a DELETE arrives with no state left."""
    target = small_build_target
    dav = Dav(target)
    with calendar(dav, "statewait") as cal:
        doomed_path = f"{cal}doomed.ics"
        assert put(dav, doomed_path, ics_of_size("doomed", 400)).status == 201
        dav.close()
        before = status(target)
        holder_path, holder_body = f"{cal}holder.ics", ics_of_size("holder", 600).encode()
        late_path, late_body = f"{cal}late.ics", ics_of_size("late", 500)
        holder = late = deleter = None
        try:
            holder = socket.create_connection(("127.0.0.1", target.port), timeout=target.timeout)
            holder.sendall(dav_head("PUT", holder_path, len(holder_body), "Content-Type: text/calendar\r\n"
                                                                         "Expect: 100-continue\r\n"))
            assert read_response(holder)[0] == "HTTP/1.1 100 Continue"
            sent = 100
            holder.sendall(holder_body[:sent])  # takes the context and the store's writer
            wait_for(target, "dav_ctx_used", 1)
            # from here no status request can be served (it would need a state) until the end
            late = socket.create_connection(("127.0.0.1", target.port), timeout=target.timeout)
            late.sendall(dav_head("PUT", late_path, len(late_body), "Content-Type: text/calendar\r\n")
                         + late_body.encode())
            time.sleep(0.3)  # it has the second state and waits for the context
            deleter = socket.create_connection(("127.0.0.1", target.port), timeout=target.timeout)
            deleter.sendall(dav_head("DELETE", doomed_path, 0))
            deadline = time.monotonic() + 3 * SHORT_IDLE_MS / 1000
            while time.monotonic() < deadline:
                time.sleep(0.25)
                holder.sendall(holder_body[sent:sent + 1])
                sent += 1
            holder.sendall(holder_body[sent:])
            line, _, body = read_response(holder)
            assert line == "HTTP/1.1 201 Created", (line, body)
            line, _, body = read_response(late)
            assert line == "HTTP/1.1 201 Created", (line, body)
            try:
                line, _, body = read_response(deleter)
            except (OSError, AssertionError) as e:  # reset, or closed without an answer
                line, body = f"no answer: {e}", b""
            assert line == "HTTP/1.1 204 No Content", (
                f"the DELETE that waited for a connection state: {line} {body[:200]!r}")
        finally:
            for s in (holder, late, deleter):
                if s:
                    s.close()
        page = status(target)
        assert page["conns_timed_out"] == before["conns_timed_out"], "a waiting connection timed out"
        assert page["dav_refused"] == before["dav_refused"], page
        r = dav("GET", late_path)
        assert r.status == 200 and r.data == late_body.encode(), r.status
        assert dav("GET", doomed_path).status == 404
        for path in (late_path, holder_path):
            assert dav("DELETE", path).status == 204


def test_full_wait_queue_answers_503_at_once(target):
    """With every context held and DAV_CTX_WAIT_MAX requests waiting, the next one is answered
    503 with Retry-After at once; the waiting ones are all served afterwards."""
    dav = Dav(target)
    with calendar(dav, "full") as cal:
        # the waiters read an object that exists before the holders: a waiter may be handed the
        # context of any holder that finishes, before another holder's PUT has stored its object
        ready = ics_of_size("ready", 500)
        assert put(dav, f"{cal}ready.ics", ready).status == 201
        before = status(target)
        holders = Holders(target, cal)
        waiters = []
        try:
            for i in range(WAIT_MAX):
                s = socket.create_connection(("127.0.0.1", target.port), timeout=target.timeout)
                s.sendall(dav_head("GET", f"{cal}ready.ics", 0))
                waiters.append(s)
            wait_for(target, "dav_waiting", WAIT_MAX)
            extra = socket.create_connection(("127.0.0.1", target.port), timeout=5)
            extra.sendall(dav_head("GET", f"{cal}held-0.ics", 0))
            line, headers, body = read_response(extra)
            extra.close()
            assert line.startswith("HTTP/1.1 503"), (line, body)
            assert headers.get("retry-after", "").isdigit(), headers
            assert b"wait queue is full" in body, body
            holders.release()
            for i, s in enumerate(waiters):
                line, _, body = read_response(s)
                assert line == "HTTP/1.1 200 OK" and body == ready.encode(), (i, line)
        finally:
            holders.close()
            for s in waiters:
                s.close()
        page = wait_for(target, "dav_ctx_used", 0)
        assert page["dav_waiting"] == 0 and page["dav_refused"] == before["dav_refused"] + 1, page
        for path in holders.paths + [f"{cal}ready.ics"]:
            assert dav("DELETE", path).status == 204


def test_the_wait_is_bounded(short_wait_target):
    """With every context held longer than --dav-wait-ms, a waiting request is answered 503
    with Retry-After after that wait, not before; the holders still complete."""
    target = short_wait_target
    dav = Dav(target)
    with calendar(dav, "bound") as cal:
        before = status(target)
        holders = Holders(target, cal)
        try:
            s = socket.create_connection(("127.0.0.1", target.port), timeout=target.timeout)
            started = time.monotonic()
            s.sendall(dav_head("GET", f"{cal}held-0.ics", 0))
            line, headers, body = read_response(s)
            waited = time.monotonic() - started
            s.close()
            assert line.startswith("HTTP/1.1 503"), (line, body)
            assert headers.get("retry-after", "").isdigit(), headers
            assert b"longest wait" in body, body
            assert SHORT_WAIT_MS / 1000 <= waited + 0.05 < SHORT_WAIT_MS / 1000 + 5, waited
            holders.release()
        finally:
            holders.close()
        page = wait_for(target, "dav_ctx_used", 0)
        assert page["dav_waiting"] == 0 and page["dav_refused"] == before["dav_refused"] + 1, page
        for path in holders.paths:
            assert dav("DELETE", path).status == 204


def test_dav_wait_ms_option_is_checked(host_build):
    import subprocess
    for bad in ("0", "-5", "x", "600001"):
        proc = subprocess.run([host_build, "--port", str(free_port()), "--dav-wait-ms", bad],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=10)
        assert proc.returncode == 2 and "--dav-wait-ms wants a number" in proc.stdout, (bad, proc.stdout)
