"""End-to-end: real HTTP clients against litedav-host, the whole firmware (app +
lwIP, NO_SYS) built natively under ASan/UBSan with an in-process libslirp netif.

Runs the same checks as the simulated SoC (http_checks.py), then load that the
simulator is too slow for (ApacheBench, 2000 new connections at 50 concurrent
and 5000 keep-alive requests), then a clean SIGINT shutdown with no sanitizer
report. About 20 s, most of it the first build.
"""
import os
import re
import signal
import socket
import subprocess
import time

import pytest

from caldav_checks import app_limits
from http_checks import TOP, Target, apachebench, status
from http_suite import *  # noqa: F401,F403  (the shared checks, run against this target)
from bulk_checks import (  # noqa: F401  (1 MiB through /bulk, byte for byte)
    test_bulk_round_trip_1mib,
    test_bulk_refuses_without_credentials_or_too_large,
)
from console_process import ConsoleProcess
from litedav.sim.run import die_with_parent, free_port

PORT_DIR = os.path.join(TOP, "firmware", "ports", "host")
OUT = os.path.join(TOP, "build", "host")
SERVER = os.path.join(OUT, "litedav-host")
READY = re.compile(r"^\[litedav-host\] LiteDAV is serving at http://127\.0\.0\.1:(\d+)/")
HOST_CYCLES_HZ = 1_000_000_000  # port_cycles() counts CLOCK_MONOTONIC nanoseconds
TIMEOUT = 30
SANITIZER_REPORT = re.compile(r"AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:")


class HostServer(ConsoleProcess):
    """One litedav-host process."""

    def __init__(self, port, *args, server=None):
        self.port = port
        super().__init__([server or SERVER, "--port", str(port), *args], READY, "litedav-host")

    def stop(self, sig=signal.SIGINT, timeout=10):
        """Signal it and wait; returns the exit code (None if it had to be killed)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                return None
        return self.proc.returncode

    def output(self):
        """The whole console, once it has exited."""
        self.proc.wait()
        self.reader.join(timeout=5)
        return "\n".join(self.console)


def start_server(*args, server=None):
    """A litedav-host on a free port, run with args, once it serves."""
    srv = HostServer(free_port(), *args, server=server)
    srv.wait_ready(timeout=TIMEOUT)
    return srv


def dav_target(srv):
    """The Target of a running litedav-host, with the CalDAV limits its build has (app_config.h)."""
    return Target(port=srv.port, cycles_hz=HOST_CYCLES_HZ, timeout=TIMEOUT, **app_limits())


@pytest.fixture(scope="module")
def host_build():
    proc = subprocess.run(["make", "-C", PORT_DIR, "OUT=" + OUT, f"-j{os.cpu_count() or 2}", "server"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    assert proc.returncode == 0, "litedav-host build failed:\n" + proc.stdout[-6000:]
    return SERVER


@pytest.fixture(scope="module")
def server(host_build, tmp_path_factory):
    store = tmp_path_factory.mktemp("host") / "store.img"
    srv = HostServer(free_port(), "--store", str(store))
    try:
        srv.wait_ready(timeout=TIMEOUT)
        yield srv
    finally:
        srv.stop()
        print("\n--- litedav-host console (last lines) ---\n" + "\n".join(srv.console[-15:]))


@pytest.fixture(scope="module")
def target(server):
    return Target(port=server.port, cycles_hz=HOST_CYCLES_HZ, timeout=TIMEOUT)


def test_console_lines(server):
    """The firmware's own line, as on the SoC, then the host's ready line."""
    listening = server.console.index("listening on http://10.0.2.15:80/")
    ready = READY.match(server.console[listening + 1])
    assert ready and int(ready.group(1)) == server.port, server.console


def test_cycle_counter_is_monotonic_nanoseconds(target):
    first = status(target)
    t0 = time.monotonic()
    time.sleep(0.2)
    second = status(target)
    elapsed_ns = (time.monotonic() - t0) * 1e9
    delta = second["uptime_cycles"] - first["uptime_cycles"]
    assert 0.2e9 <= delta <= elapsed_ns + 0.1e9, (delta, elapsed_ns)
    assert second["idle_cycles"] <= second["uptime_cycles"]


def test_apachebench_2000_requests_50_concurrent(target):
    before = status(target)
    apachebench(target, requests=2000, concurrency=50)
    after = status(target)
    assert after["requests"] - before["requests"] >= 2000
    assert after["conns_total"] - before["conns_total"] >= 2000
    for counter in ("conns_refused", "responses_4xx", "responses_5xx"):
        assert after[counter] == before[counter], counter


def test_apachebench_keepalive_5000_requests_10_concurrent(target):
    out = apachebench(target, requests=5000, concurrency=10, keepalive=True)
    assert re.search(r"^Keep-Alive requests:\s+5000$", out, re.M), out


def test_status_after_load(target):
    """Nothing leaked or got stuck: only this request's connection is open."""
    s = status(target)
    assert s["conns_open"] == 1
    assert s["busy_cycles"] > 0 and s["idle_cycles"] > 0


def test_clean_shutdown(server):
    """SIGINT: exit 0 after its stop line, no sanitizer report (leaks included)."""
    code = server.stop(signal.SIGINT)
    out = server.output()
    assert code == 0, f"litedav-host exited {code}:\n{out[-6000:]}"
    assert re.search(r"^\[litedav-host\] stopping \(SIGINT\)", out, re.M), out[-2000:]
    assert not SANITIZER_REPORT.search(out), out[-6000:]


def test_sigterm_stops_it_cleanly(host_build):
    srv = HostServer(free_port())
    try:
        srv.wait_ready(timeout=TIMEOUT)
        code = srv.stop(signal.SIGTERM)
    finally:
        srv.stop(signal.SIGKILL)
    out = srv.output()
    assert code == 0, f"litedav-host exited {code}:\n{out[-6000:]}"
    assert re.search(r"^\[litedav-host\] stopping \(SIGTERM\)", out, re.M), out[-2000:]
    assert not SANITIZER_REPORT.search(out), out[-6000:]


@pytest.mark.parametrize("args, message", [
    ([], "--port is required"),
    (["--port", "0"], "--port wants a number from 1 to 65535"),
    (["--port", "70000"], "--port wants a number from 1 to 65535"),
    (["--port", "80x"], "--port wants a number from 1 to 65535"),
    (["--port", "8080", "extra"], "unexpected argument"),
    (["--bogus"], "usage:"),
])
def test_bad_arguments_exit_2(host_build, args, message):
    proc = subprocess.run([host_build, *args], capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 2, proc
    assert message in proc.stderr, proc.stderr


def test_port_in_use_exits_1(host_build):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = subprocess.run([host_build, "--port", str(port)], capture_output=True, text=True,
                              timeout=TIMEOUT, preexec_fn=die_with_parent)
    assert proc.returncode == 1, proc
    assert f"cannot listen on 127.0.0.1:{port}" in proc.stderr, proc.stderr
    assert not SANITIZER_REPORT.search(proc.stdout + proc.stderr), proc.stderr
