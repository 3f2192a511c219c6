"""HTTP checks shared by every target that runs the LiteDAV app: the simulated
SoC (test_sim_http.py) and the native host server (test_host_server.py).

A test module imports the checks it wants by name (pytest collects them there)
and provides a `target` fixture returning a Target.
"""
import http.client
import os
import re
import shutil
import socket
import subprocess
import threading
from dataclasses import dataclass

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASK_ICS = open(os.path.join(TOP, "firmware", "static", "task.ics"), "rb").read()


@dataclass
class Target:
    """A running LiteDAV reachable on 127.0.0.1:port."""
    port: int
    cycles_hz: int  # what its status page reports as sys_clk_hz
    timeout: float  # wall seconds allowed for one exchange
    parallel_clients: int = 20  # keep-alive clients it can hold at once (its TCP connection limit)
    # What its CalDAV app was built with (app_config.h; caldav_checks.py reads these):
    max_resource_size: int = 65536  # DAV_MAX_RESOURCE_SIZE, the CALDAV:max-resource-size
    xml_body_max: int = 16384  # DAV_XML_MAX: longer XML request bodies get 413
    dav_requests_max: int = 8  # DAV_CTX_MAX: /dav/ requests at once; more wait for one
    scheduling: bool = True  # CALDAV_SCHEDULING: RFC 6638's mailboxes and free-busy POST
    quick: bool = False  # a slow target (the simulator): fewer rounds in the long checks

    def connection(self):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)


def status(target):
    conn = target.connection()
    conn.request("GET", "/")
    resp = conn.getresponse()
    body = resp.read().decode()
    conn.close()
    assert resp.status == 200
    return {k: int(v) for k, v in re.findall(r"^(\w+): (\d+)$", body, re.M)}


def raw_exchange(target, data):
    """Send raw bytes, return everything the server sends until it closes."""
    with socket.create_connection(("127.0.0.1", target.port), timeout=target.timeout) as s:
        s.sendall(data)
        chunks = []
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)


def apachebench(target, requests, concurrency, keepalive=False, path="/static/task.ics"):
    """Run ab; every request must complete with a 200 and the expected length."""
    assert shutil.which("ab"), "ApacheBench missing: `make deps` installs apache2-utils"
    cmd = ["ab", *(["-k"] if keepalive else []), "-n", str(requests), "-c", str(concurrency),
           "-s", str(int(target.timeout)), f"http://127.0.0.1:{target.port}{path}"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    print(" ".join(cmd) + "\n" + out.stdout)
    assert out.returncode == 0, out.stderr
    assert re.search(rf"^Complete requests:\s+{requests}$", out.stdout, re.M), out.stdout
    assert re.search(r"^Failed requests:\s+0$", out.stdout, re.M), out.stdout
    assert "Non-2xx" not in out.stdout
    if path == "/static/task.ics":
        assert re.search(rf"^Document Length:\s+{len(TASK_ICS)} bytes$", out.stdout, re.M)
    return out.stdout


def test_status_page(target):
    conn = target.connection()
    conn.request("GET", "/")
    resp = conn.getresponse()
    body = resp.read().decode()
    assert resp.status == 200
    assert resp.getheader("Content-Type").startswith("text/plain")
    for field in ("uptime_cycles", "sys_clk_hz", "idle_cycles", "busy_cycles", "frames_in",
                  "frames_out", "bytes_in", "bytes_out", "conns_open", "requests"):
        assert re.search(rf"^{field}: \d+$", body, re.M), f"status page lacks {field}"
    first = status(target)
    second = status(target)
    assert second["uptime_cycles"] > first["uptime_cycles"]
    assert second["frames_in"] > first["frames_in"]
    assert second["requests"] >= first["requests"] + 1
    assert first["sys_clk_hz"] == target.cycles_hz


def test_static_file_and_head(target):
    conn = target.connection()
    conn.request("GET", "/static/task.ics")
    resp = conn.getresponse()
    assert resp.status == 200
    assert resp.read() == TASK_ICS
    assert resp.getheader("Content-Type").startswith("text/calendar")
    conn.request("HEAD", "/static/task.ics")
    resp = conn.getresponse()
    assert resp.status == 200 and resp.read() == b""
    assert int(resp.getheader("Content-Length")) == len(TASK_ICS)
    conn.request("GET", "/no/such/file")
    resp = conn.getresponse()
    assert resp.status == 404 and resp.read()
    conn.request("DELETE", "/static/task.ics")
    resp = conn.getresponse()
    resp.read()
    allowed = {m.strip() for m in (resp.getheader("Allow") or "").split(",")}
    assert resp.status == 405 and {"GET", "HEAD"} <= allowed and "DELETE" not in allowed, allowed
    conn.close()


def test_parallel_keepalive_clients(target):
    """Clients in parallel (20, or as many connections as the target holds), each 10 keep-alive
    requests on one connection."""
    errors = []

    def client(n):
        try:
            conn = target.connection()
            sock_id = None
            for i in range(10):
                conn.request("GET", "/static/task.ics")
                resp = conn.getresponse()
                body = resp.read()
                if resp.status != 200 or body != TASK_ICS:
                    errors.append(f"client {n} request {i}: {resp.status}, {len(body)} bytes")
                if sock_id is None:
                    sock_id = id(conn.sock)
                elif id(conn.sock) != sock_id:
                    errors.append(f"client {n}: connection was not kept alive")
            conn.close()
        except Exception as e:  # reported below with the client number
            errors.append(f"client {n}: {e!r}")

    threads = [threading.Thread(target=client, args=(n,)) for n in range(target.parallel_clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, "\n".join(errors)


def test_pipelined_requests(target):
    reqs = b"".join(b"GET /static/task.ics HTTP/1.1\r\nHost: x\r\n\r\n" for _ in range(3))
    reply = raw_exchange(target, reqs + b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert reply.count(b"HTTP/1.1 200 OK\r\n") == 4
    assert reply.count(TASK_ICS) == 3


@pytest.mark.parametrize("request_bytes, expected", [
    (b"GARBAGE\r\n\r\n", 400),
    (b"GET /\r\n\r\n", 400),
    (b"GET / HTTP/2.0\r\n\r\n", 505),
    (b"GET  / HTTP/1.1\r\n\r\n", 400),
    (b"GET / HTTP/1.1\r\nBad Header\r\n\r\n", 400),
    (b"GET / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n", 400),
    (b"\x00\xff\x10binary\r\n\r\n", 400),
    (b"GET /" + b"a" * 5000 + b" HTTP/1.1\r\n\r\n", 431),
])
def test_malformed_request_gets_error_and_server_keeps_serving(target, request_bytes, expected):
    reply = raw_exchange(target, request_bytes)
    assert reply.startswith(f"HTTP/1.1 {expected} ".encode()), reply[:200]
    assert b"Connection: close" in reply
    conn = target.connection()
    conn.request("GET", "/static/task.ics")
    resp = conn.getresponse()
    assert resp.status == 200 and resp.read() == TASK_ICS
